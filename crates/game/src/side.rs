//! The one place that converts a side between the crates that each have their own: the game's
//! [`Side`], the clock's `chuhe_clock::Side` and the rules' `chuhe_rules::Color` (the wire's is
//! converted by the server).

use crate::types::{GameResult, Side};
use chuhe_rules::Color;

/// Red or Black as the clock names it.
pub fn to_clock(s: Side) -> chuhe_clock::Side {
    match s {
        Side::Red => chuhe_clock::Side::Red,
        Side::Black => chuhe_clock::Side::Black,
    }
}

/// The clock's side as the game names it.
pub fn from_clock(s: chuhe_clock::Side) -> Side {
    match s {
        chuhe_clock::Side::Red => Side::Red,
        chuhe_clock::Side::Black => Side::Black,
    }
}

/// The rules' colour as the game names it.
pub fn from_color(c: Color) -> Side {
    match c {
        Color::Red => Side::Red,
        Color::Black => Side::Black,
    }
}

/// The opponent.
pub fn other(s: Side) -> Side {
    if s == Side::Red {
        Side::Black
    } else {
        Side::Red
    }
}

/// 0 for Red, 1 for Black: the index of per-side arrays.
pub fn index(s: Side) -> usize {
    if s == Side::Black { 1 } else { 0 }
}

/// The result when `s` wins.
pub fn win_for(s: Side) -> GameResult {
    match s {
        Side::Red => GameResult::RedWins,
        Side::Black => GameResult::BlackWins,
    }
}

/// "Red" or "Black", for explanations.
pub fn name(s: Side) -> &'static str {
    if s == Side::Black { "Black" } else { "Red" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_agree_both_ways() {
        for s in [Side::Red, Side::Black] {
            assert_eq!(from_clock(to_clock(s)), s);
            assert_eq!(other(other(s)), s);
            assert_ne!(index(s), index(other(s)));
        }
        assert_eq!(from_color(Color::Black), Side::Black);
        assert_eq!(win_for(Side::Black), GameResult::BlackWins);
        assert_eq!(name(Side::Red), "Red");
    }
}
