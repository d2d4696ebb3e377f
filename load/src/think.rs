//! Think time: how long a simulated player waits before answering a move.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use rand::RngExt;
use rand::rngs::SmallRng;

/// A think-time distribution, written `0`, `250ms`, `2s` (fixed), `exp:2s` (exponential with
/// that mean, capped at 10× the mean) or `uniform:500ms-3s`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ThinkTime {
    Fixed(Duration),
    Exponential(Duration),
    Uniform(Duration, Duration),
}

impl Default for ThinkTime {
    fn default() -> Self {
        Self::Fixed(Duration::ZERO)
    }
}

impl ThinkTime {
    pub fn sample(&self, rng: &mut SmallRng) -> Duration {
        match *self {
            Self::Fixed(d) => d,
            Self::Exponential(mean) => {
                let u: f64 = rng.random();
                // -ln(1-u) with u in [0,1) is an Exp(1) variate; the cap keeps one unlucky draw
                // from stalling a bounded run.
                let x = (-(1.0 - u).ln()).min(10.0);
                mean.mul_f64(x)
            }
            Self::Uniform(lo, hi) => {
                if hi <= lo {
                    lo
                } else {
                    let span = u64::try_from((hi - lo).as_micros()).unwrap_or(u64::MAX);
                    lo + Duration::from_micros(rng.random_range(0..=span))
                }
            }
        }
    }

    /// The mean think time.
    pub fn mean(&self) -> Duration {
        match *self {
            Self::Fixed(d) | Self::Exponential(d) => d,
            Self::Uniform(lo, hi) => (lo + hi) / 2,
        }
    }
}

/// Parses `0`, `1500` (ms), `250ms`, `2s`, `1.5s`, `1m`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "ms"),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("bad duration {s:?}: use e.g. 250ms, 2s, 1.5s, 10m, 1h"))?;
    let scale = match unit {
        "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("bad duration unit in {s:?}: use us, ms, s, m or h")),
    };
    if !n.is_finite() || n < 0.0 || n * scale > 1e9 {
        return Err(format!("duration {s:?} out of range"));
    }
    Ok(Duration::from_secs_f64(n * scale))
}

impl FromStr for ThinkTime {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(rest) = s.strip_prefix("exp:") {
            return Ok(Self::Exponential(parse_duration(rest)?));
        }
        if let Some(rest) = s.strip_prefix("uniform:") {
            let (a, b) = rest
                .split_once('-')
                .ok_or_else(|| format!("bad think time {s:?}: use uniform:MIN-MAX"))?;
            let (a, b) = (parse_duration(a)?, parse_duration(b)?);
            if b < a {
                return Err(format!("bad think time {s:?}: MIN is above MAX"));
            }
            return Ok(Self::Uniform(a, b));
        }
        Ok(Self::Fixed(parse_duration(s)?))
    }
}

impl fmt::Display for ThinkTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fixed(d) => write!(f, "{}ms", d.as_millis()),
            Self::Exponential(d) => write!(f, "exp:{}ms", d.as_millis()),
            Self::Uniform(a, b) => write!(f, "uniform:{}ms-{}ms", a.as_millis(), b.as_millis()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn parse() {
        assert_eq!("0".parse(), Ok(ThinkTime::Fixed(Duration::ZERO)));
        assert_eq!(
            "1500".parse(),
            Ok(ThinkTime::Fixed(Duration::from_millis(1500)))
        );
        assert_eq!(
            "exp:2s".parse(),
            Ok(ThinkTime::Exponential(Duration::from_secs(2)))
        );
        assert_eq!(
            "uniform:500ms-1.5s".parse(),
            Ok(ThinkTime::Uniform(
                Duration::from_millis(500),
                Duration::from_millis(1500)
            ))
        );
        assert!("uniform:2s-1s".parse::<ThinkTime>().is_err());
        assert!("exp:".parse::<ThinkTime>().is_err());
        assert!("-1s".parse::<ThinkTime>().is_err());
        assert!("3 fortnights".parse::<ThinkTime>().is_err());
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        for t in ["250ms", "exp:2000ms", "uniform:1ms-2ms"] {
            let parsed: ThinkTime = t.parse().unwrap_or_default();
            assert_eq!(parsed.to_string(), t);
        }
    }

    #[test]
    fn samples_stay_in_range_and_average_out() {
        let mut rng = SmallRng::seed_from_u64(7);
        let u = ThinkTime::Uniform(Duration::from_millis(10), Duration::from_millis(20));
        let e = ThinkTime::Exponential(Duration::from_millis(100));
        let mut total = Duration::ZERO;
        for _ in 0..10_000 {
            let d = u.sample(&mut rng);
            assert!(d >= Duration::from_millis(10) && d <= Duration::from_millis(20));
            let x = e.sample(&mut rng);
            assert!(x <= Duration::from_secs(1));
            total += x;
        }
        let mean = total / 10_000;
        assert!(
            mean > Duration::from_millis(90) && mean < Duration::from_millis(110),
            "{mean:?}"
        );
    }
}
