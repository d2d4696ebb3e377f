//! The official repetition rulings (棋例, art. 24–29 and the 棋例细则 of the 1999 rules), the
//! natural move limit (4.2.4, 23.3) and dead positions (4.2.1).

pub(crate) mod arena;
pub mod classify;
pub mod judge;
pub mod referee;
pub mod casefile;
#[cfg(test)]
mod suite_tests;
