//! Exact scores counted in half points: `1½` is `Points::from_halves(3)`, never a float.

use std::fmt;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Mul, Neg, Sub};
use std::str::FromStr;

/// A score in half points (so ½ is exact). Used for game points, 局分, 场分 and all tie-break sums.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Points(i32);

impl Points {
    /// Zero points.
    pub const ZERO: Points = Points(0);
    /// Half a point.
    pub const HALF: Points = Points(1);

    /// `n` whole points.
    pub const fn whole(n: i32) -> Self {
        Points(n * 2)
    }

    /// `h` half points (`from_halves(3)` is 1½).
    pub const fn from_halves(h: i32) -> Self {
        Points(h)
    }

    /// The score in half points.
    pub const fn halves(self) -> i32 {
        self.0
    }

    /// Decimal text: `1.5`, `2`, `-0.5`. Used for CSV and JSON.
    pub fn to_decimal(self) -> String {
        let sign = if self.0 < 0 { "-" } else { "" };
        let a = self.0.unsigned_abs();
        if a % 2 == 0 {
            format!("{sign}{}", a / 2)
        } else {
            format!("{sign}{}.5", a / 2)
        }
    }

    /// The value as an `f64` (exact: every half point is representable). For display and JSON only.
    pub fn as_f64(self) -> f64 {
        f64::from(self.0) / 2.0
    }
}

impl fmt::Display for Points {
    /// Chinese score-sheet style: `1½`, `½`, `2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let a = self.0.unsigned_abs();
        match (a / 2, a % 2) {
            (w, 0) => write!(f, "{sign}{w}"),
            (0, _) => write!(f, "{sign}½"),
            (w, _) => write!(f, "{sign}{w}½"),
        }
    }
}

/// Why a text is not a score.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a score in half points: {0:?} (expected e.g. 2, 1.5, 1½ or ½)")]
pub struct PointsParseError(pub String);

impl FromStr for Points {
    type Err = PointsParseError;

    /// Accepts `2`, `1.5`, `1½`, `½`, `-1`, `0.0`, `2.50`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || PointsParseError(s.to_string());
        let t = s.trim();
        let (neg, t) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        let (int_part, half) = if let Some(w) = t.strip_suffix('½') {
            (w, true)
        } else if let Some((w, frac)) = t.split_once('.') {
            let frac = frac.trim_end_matches('0');
            match frac {
                "" => (w, false),
                "5" => (w, true),
                _ => return Err(err()),
            }
        } else {
            (t, false)
        };
        if int_part.is_empty() && !half {
            return Err(err());
        }
        let whole: i32 = if int_part.is_empty() {
            0
        } else {
            if !int_part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err());
            }
            int_part.parse().map_err(|_| err())?
        };
        let h = whole
            .checked_mul(2)
            .and_then(|v| v.checked_add(i32::from(half)))
            .ok_or_else(err)?;
        Ok(Points(if neg { -h } else { h }))
    }
}

impl Add for Points {
    type Output = Points;
    fn add(self, rhs: Points) -> Points {
        Points(self.0 + rhs.0)
    }
}

impl AddAssign for Points {
    fn add_assign(&mut self, rhs: Points) {
        self.0 += rhs.0;
    }
}

impl Sub for Points {
    type Output = Points;
    fn sub(self, rhs: Points) -> Points {
        Points(self.0 - rhs.0)
    }
}

impl Neg for Points {
    type Output = Points;
    fn neg(self) -> Points {
        Points(-self.0)
    }
}

impl Mul<i32> for Points {
    type Output = Points;
    fn mul(self, rhs: i32) -> Points {
        Points(self.0 * rhs)
    }
}

impl Sum for Points {
    fn sum<I: Iterator<Item = Points>>(iter: I) -> Points {
        iter.fold(Points::ZERO, Add::add)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn display_and_decimal() {
        assert_eq!(Points::from_halves(3).to_string(), "1½");
        assert_eq!(Points::HALF.to_string(), "½");
        assert_eq!(Points::whole(2).to_string(), "2");
        assert_eq!(Points::from_halves(-3).to_string(), "-1½");
        assert_eq!(Points::from_halves(5).to_decimal(), "2.5");
        assert_eq!(Points::whole(7).to_decimal(), "7");
    }

    #[test]
    fn parse_forms() {
        assert_eq!("1½".parse::<Points>().unwrap(), Points::from_halves(3));
        assert_eq!("½".parse::<Points>().unwrap(), Points::HALF);
        assert_eq!("2.50".parse::<Points>().unwrap(), Points::from_halves(5));
        assert_eq!("3.0".parse::<Points>().unwrap(), Points::whole(3));
        assert!("1.25".parse::<Points>().is_err());
        assert!("".parse::<Points>().is_err());
        assert!("x".parse::<Points>().is_err());
        assert!("1e3".parse::<Points>().is_err());
    }

    proptest! {
        #[test]
        fn decimal_roundtrip(h in -100_000i32..100_000) {
            let p = Points::from_halves(h);
            prop_assert_eq!(p.to_decimal().parse::<Points>().unwrap(), p);
            prop_assert_eq!(p.to_string().parse::<Points>().unwrap(), p);
        }
    }
}
