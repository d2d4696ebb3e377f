//! The one place that converts a side between the crates that each have their own: the wire's
//! `chuhe_proto::v1::Side` (which the server's game state uses), the clock's
//! `chuhe_clock::Side` and the rules' `chuhe_rules::Color`.

use chuhe_proto::v1::{Result as WResult, Side};
use chuhe_rules::Color;

/// Red or Black as the clock names it. `Unspecified` is read as Red: callers pass a side they
/// have already checked ([`playing`]).
pub fn to_clock(s: Side) -> chuhe_clock::Side {
    if s == Side::Black {
        chuhe_clock::Side::Black
    } else {
        chuhe_clock::Side::Red
    }
}

/// The clock's side on the wire.
pub fn from_clock(s: chuhe_clock::Side) -> Side {
    match s {
        chuhe_clock::Side::Red => Side::Red,
        chuhe_clock::Side::Black => Side::Black,
    }
}

/// The rules' colour on the wire.
pub fn from_color(c: Color) -> Side {
    match c {
        Color::Red => Side::Red,
        Color::Black => Side::Black,
    }
}

/// A wire side number that names Red or Black (None for unspecified or unknown numbers).
pub fn playing(n: i32) -> Option<Side> {
    match Side::try_from(n) {
        Ok(Side::Red) => Some(Side::Red),
        Ok(Side::Black) => Some(Side::Black),
        _ => None,
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
pub fn win_for(s: Side) -> WResult {
    if s == Side::Red {
        WResult::RedWins
    } else {
        WResult::BlackWins
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
            assert_eq!(playing(s as i32), Some(s));
        }
        assert_eq!(from_color(Color::Black), Side::Black);
        assert_eq!(playing(Side::Unspecified as i32), None);
        assert_eq!(playing(99), None);
        assert_eq!(win_for(Side::Black), WResult::BlackWins);
        assert_eq!(name(Side::Red), "Red");
    }
}
