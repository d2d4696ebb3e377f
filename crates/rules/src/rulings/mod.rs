//! The official repetition rulings (棋例, art. 24–29 and the 棋例细则 of the 1999 rules), the
//! natural move limit (4.2.4, 23.3) and dead positions (4.2.1).
//!
//! The game server keeps a [`Game`]: [`Game::play`] makes a move and reports a game end
//! ([`GameEnd`], with a [`Ruling`] for repetitions) or a new must-vary [`Warning`].

pub(crate) mod arena;
pub mod casefile;
pub mod classify;
mod game;
pub mod judge;
pub mod referee;
mod ruling;

pub use classify::MoveClass;
pub use game::{EndCause, Game, GameEnd, GameError, Played, RulesConfig, Warning};
pub use judge::{Pattern, Reason, Ruleset};
pub use referee::MoveLimit;
pub use ruling::{ChasedPiece, CycleMove, GameResult, Ruling, Verdict, chinese_piece_name};
