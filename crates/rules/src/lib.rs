//! Xiangqi rules: board, legal moves, FEN, notation, hashing and perft.
//!
//! Pure logic: no IO, no async, no system clock.
pub mod rulings;
