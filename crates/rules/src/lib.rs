//! Xiangqi (象棋) rules: board, legal moves, check, checkmate and 困毙, FEN, notation (ICCS,
//! WXF, Chinese), incremental Zobrist hashing and perft.
//!
//! Pure logic: no IO, no async, no system clock.
//!
//! ```
//! use chuhe_rules::{Position, perft};
//!
//! let pos = Position::new(); // or Position::from_fen(fen)?
//! let m = pos.parse_move("炮二平五")?; // ICCS, WXF or Chinese
//! assert_eq!(m.to_string(), "h2e2");
//! assert_eq!(pos.to_wxf(m)?, "C2=5");
//! let next = pos.play(m)?; // checked; `pos` is untouched
//! assert_eq!(next.to_chinese(next.parse_iccs("h9g7")?)?, "马8进7");
//! assert_eq!(perft(&pos, 3), 79_666);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ```
//! use chuhe_rules::{Position, Move, Square};
//!
//! let pos = Position::new();
//! assert_eq!(pos.legal_moves().len(), 44);
//! let m = Move::new(Square::from_iccs("h2").unwrap(), Square::from_iccs("e2").unwrap());
//! let pos = pos.play(m).unwrap();
//! assert_eq!(pos.to_fen(), "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b - - 1 1");
//! ```
//!
//! Coordinates are ICCS: files `a`–`i` from Red's left, ranks `0`–`9` from Red's back rank.
//! An unvalidated [`Setup`] (what a FEN says) becomes a legal [`Position`] through
//! [`Position::from_setup`] / [`Position::from_fen`], whose error lists every reason.
//! Moves are played with [`Position::play`] (checked; the position is unchanged on error) or
//! [`Position::play_unchecked`] (the fast path for moves taken from [`Position::legal_moves`]).

mod bitboard;
mod movelist;
mod notation;
mod perft;
mod position;
pub mod rulings;
mod setup;
mod tables;
mod types;

pub use bitboard::Bitboard;
pub use movelist::{MAX_MOVES, MoveList};
pub use notation::NotationError;
pub use perft::{perft, perft_divide};
pub use position::{
    EndReason, FenError, IllegalReason, InvalidReason, Outcome, PlayError, Position, PositionError,
};
pub use setup::{ParseFenError, START_FEN, Setup};
pub use types::{Color, Move, Piece, PieceKind, Square};
