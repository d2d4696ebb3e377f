//! Time controls and their compact text form.
//!
//! Grammar (ASCII; whitespace is ignored; units are case-sensitive):
//!
//! ```text
//! controls  := control                                  both sides alike
//!            | "red:" control ";" "black:" control      per side (either order), e.g. armageddon;
//!                                                       `r:`/`b:` are accepted as well
//! control   := stage ("," stage)* ["+" duration] ["|" byoyomi]
//! stage     := [moves "/"] duration                     "40/90m": 40 moves in 90 minutes
//! byoyomi   := [periods "x"] duration                   "3x30s"; "60s" means "1x60s"
//! duration  := "0" | (number unit)+                     units strictly decreasing: 1h30m, 1m30s
//! unit      := "h" | "m" | "s" | "ms"
//! ```
//!
//! All stages but the last must have a move count; a last stage with a count repeats until the
//! end of the game (art. 6.1–6.4), a last stage without one is sudden death (6.5). The increment
//! (Fischer) applies to every move made in time, from the first. 读秒 (byo-yomi) follows the last
//! stage, which must then be sudden death.

use crate::{Side, dur, ms_of};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// Longest single duration accepted (48 hours): longer is surely a typo.
pub const MAX_DURATION: Duration = Duration::from_secs(48 * 3600);
/// Largest move count of a stage and largest number of byo-yomi periods.
pub const MAX_COUNT: u32 = 1000;
/// Most stages in one control.
pub const MAX_STAGES: usize = 16;

/// One stage of a time control: `moves` moves in `time` (or sudden death if `moves` is `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Stage {
    /// Moves to make within this stage, `None` for sudden death.
    pub moves: Option<u32>,
    /// Time added when the stage begins (the first stage's time is the base time).
    pub time: Duration,
}

/// 读秒 / byo-yomi: after the main time, `periods` periods of `period` each. A move made within
/// a period keeps it (the period starts afresh on the next move); running past a period uses it
/// up; running past the last one loses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Byoyomi {
    /// Number of periods (at least 1).
    pub periods: u32,
    /// Length of each period.
    pub period: Duration,
}

/// One side's time control, validated. Build with [`TimeControl::new`], the shorthand
/// constructors, or by parsing the text form.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TimeControl {
    /// Shared, so a clock's copy (a copy is stepped for every move) does not copy them.
    stages: Arc<[Stage]>,
    increment: Duration,
    byoyomi: Option<Byoyomi>,
}

/// Why a time control is invalid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimeControlError {
    /// No stage at all.
    #[error("a time control needs at least one stage")]
    NoStages,
    /// More than [`MAX_STAGES`] stages.
    #[error("at most {MAX_STAGES} stages are allowed, got {0}")]
    TooManyStages(usize),
    /// A stage without a move count that is not the last (nothing could follow sudden death).
    #[error("stage {0} is sudden death (no move count) but is not the last stage")]
    StageAfterSuddenDeath(usize),
    /// A move count of zero or above [`MAX_COUNT`].
    #[error("stage {stage}: move count must be between 1 and {MAX_COUNT}, got {moves}")]
    BadMoveCount {
        /// 1-based stage number.
        stage: usize,
        /// The count given.
        moves: u32,
    },
    /// A stage with no time (only the last stage may be empty, and only before byo-yomi).
    #[error("stage {0} has no time (only a last sudden-death stage followed by byo-yomi may)")]
    ZeroStageTime(usize),
    /// Byo-yomi after a repeating move-count stage: it would never be reached.
    #[error("byo-yomi needs a last stage without a move count (e.g. `40/90m,30m|60s`)")]
    ByoyomiNeedsSuddenDeath,
    /// Byo-yomi with zero periods or too many.
    #[error("byo-yomi periods must be between 1 and {MAX_COUNT}, got {0}")]
    BadPeriods(u32),
    /// Byo-yomi period of zero length.
    #[error("a byo-yomi period must be longer than zero")]
    ZeroPeriod,
    /// A duration above [`MAX_DURATION`].
    #[error("{0:?} is longer than the 48-hour maximum")]
    TooLong(Duration),
    /// A duration that is not a whole number of milliseconds.
    #[error("{0:?} is not a whole number of milliseconds")]
    SubMillisecond(Duration),
}

fn check_duration(d: Duration) -> Result<(), TimeControlError> {
    if d > MAX_DURATION {
        return Err(TimeControlError::TooLong(d));
    }
    if d.subsec_nanos() % 1_000_000 != 0 {
        return Err(TimeControlError::SubMillisecond(d));
    }
    Ok(())
}

impl TimeControl {
    /// A validated time control.
    pub fn new(
        stages: Vec<Stage>,
        increment: Duration,
        byoyomi: Option<Byoyomi>,
    ) -> Result<TimeControl, TimeControlError> {
        if stages.is_empty() {
            return Err(TimeControlError::NoStages);
        }
        if stages.len() > MAX_STAGES {
            return Err(TimeControlError::TooManyStages(stages.len()));
        }
        let last = stages.len() - 1;
        for (i, s) in stages.iter().enumerate() {
            check_duration(s.time)?;
            match s.moves {
                None if i != last => return Err(TimeControlError::StageAfterSuddenDeath(i + 1)),
                Some(m) if m == 0 || m > MAX_COUNT => {
                    return Err(TimeControlError::BadMoveCount {
                        stage: i + 1,
                        moves: m,
                    });
                }
                _ => {}
            }
            let may_be_empty = i == last && s.moves.is_none() && byoyomi.is_some();
            if s.time.is_zero() && !may_be_empty {
                return Err(TimeControlError::ZeroStageTime(i + 1));
            }
        }
        check_duration(increment)?;
        if let Some(b) = byoyomi {
            if stages[last].moves.is_some() {
                return Err(TimeControlError::ByoyomiNeedsSuddenDeath);
            }
            if b.periods == 0 || b.periods > MAX_COUNT {
                return Err(TimeControlError::BadPeriods(b.periods));
            }
            if b.period.is_zero() {
                return Err(TimeControlError::ZeroPeriod);
            }
            check_duration(b.period)?;
        }
        Ok(TimeControl {
            stages: stages.into(),
            increment,
            byoyomi,
        })
    }

    /// Sudden death: `base` for the whole game (art. 6.5).
    pub fn sudden_death(base: Duration) -> Result<TimeControl, TimeControlError> {
        TimeControl::new(
            vec![Stage {
                moves: None,
                time: base,
            }],
            Duration::ZERO,
            None,
        )
    }

    /// `base` plus a Fischer `increment` per move made in time.
    pub fn fischer(base: Duration, increment: Duration) -> Result<TimeControl, TimeControlError> {
        TimeControl::new(
            vec![Stage {
                moves: None,
                time: base,
            }],
            increment,
            None,
        )
    }

    /// `base` then 读秒: `periods` periods of `period`.
    pub fn byoyomi(
        base: Duration,
        periods: u32,
        period: Duration,
    ) -> Result<TimeControl, TimeControlError> {
        TimeControl::new(
            vec![Stage {
                moves: None,
                time: base,
            }],
            Duration::ZERO,
            Some(Byoyomi { periods, period }),
        )
    }

    /// The stages, first to last.
    #[must_use]
    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// The Fischer increment (zero if none).
    #[must_use]
    pub fn increment(&self) -> Duration {
        self.increment
    }

    /// The byo-yomi, if any.
    #[must_use]
    pub fn byoyomi_periods(&self) -> Option<Byoyomi> {
        self.byoyomi
    }

    /// The base time (the first stage's time).
    #[must_use]
    pub fn base(&self) -> Duration {
        self.stages[0].time
    }

    pub(crate) fn stage_ms(&self, i: usize) -> u64 {
        ms_of(self.stages[i.min(self.stages.len() - 1)].time)
    }

    pub(crate) fn stage_moves(&self, i: usize) -> Option<u32> {
        self.stages[i.min(self.stages.len() - 1)].moves
    }

    pub(crate) fn last_stage(&self) -> usize {
        self.stages.len() - 1
    }

    pub(crate) fn increment_ms(&self) -> u64 {
        ms_of(self.increment)
    }

    /// Byo-yomi (periods, period ms) when it applies at stage `i`.
    pub(crate) fn byo_at(&self, i: usize) -> Option<(u32, u64)> {
        let b = self.byoyomi?;
        (i >= self.last_stage()).then_some((b.periods, ms_of(b.period)))
    }

    /// Estimated game length used to scale lag compensation: base + `moves` × (increment +
    /// byo-yomi period), in milliseconds (lichess: base + 40 × increment).
    pub(crate) fn estimated_ms(&self, moves: u64) -> u64 {
        let per_move = self.increment_ms() + self.byoyomi.map_or(0, |b| ms_of(b.period));
        self.stage_ms(0)
            .saturating_add(moves.saturating_mul(per_move))
    }
}

/// Both sides' time controls. Equal for a normal game; different for armageddon.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Controls {
    /// Red's control.
    pub red: TimeControl,
    /// Black's control.
    pub black: TimeControl,
}

impl Controls {
    /// The same control for both sides.
    #[must_use]
    pub fn same(tc: TimeControl) -> Controls {
        Controls {
            red: tc.clone(),
            black: tc,
        }
    }

    /// One side's control.
    #[must_use]
    pub fn side(&self, side: Side) -> &TimeControl {
        match side {
            Side::Red => &self.red,
            Side::Black => &self.black,
        }
    }
}

/// Why a text time control did not parse. Each variant names the offending fragment.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Nothing to parse.
    #[error("empty time control")]
    Empty,
    /// A duration with a number but no unit (`90` — minutes or seconds?).
    #[error("`{0}`: missing unit after the number (use h, m, s or ms, e.g. `90m`)")]
    MissingUnit(String),
    /// A unit that is not h, m, s or ms.
    #[error("`{0}`: unknown unit (use h, m, s or ms)")]
    UnknownUnit(String),
    /// Units repeated or out of order (`30s1m`).
    #[error("`{0}`: units must go from larger to smaller, each at most once (e.g. `1h30m`)")]
    UnitOrder(String),
    /// Expected a number.
    #[error("`{0}`: expected a number")]
    ExpectedNumber(String),
    /// A number too large to be meaningful.
    #[error("`{0}`: number too large")]
    NumberTooLarge(String),
    /// Something after the control that does not belong there (e.g. two `|`).
    #[error("`{0}`: unexpected text")]
    Unexpected(String),
    /// Per-side form: a part without `red:` or `black:`.
    #[error("`{0}`: per-side controls are written `red:<control>;black:<control>`")]
    BadSidePart(String),
    /// Per-side form with a side missing or given twice.
    #[error("per-side controls need exactly one `red:` and one `black:` part")]
    SidesIncomplete,
    /// Well-formed text describing an invalid control.
    #[error("{0}")]
    Invalid(#[from] TimeControlError),
}

fn parse_number(s: &str) -> Result<u64, ParseError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ParseError::ExpectedNumber(s.to_owned()));
    }
    s.parse::<u64>()
        .ok()
        .filter(|&n| n <= 1_000_000_000)
        .ok_or_else(|| ParseError::NumberTooLarge(s.to_owned()))
}

fn parse_count(s: &str) -> Result<u32, ParseError> {
    let n = parse_number(s)?;
    u32::try_from(n).map_err(|_| ParseError::NumberTooLarge(s.to_owned()))
}

fn parse_duration(s: &str) -> Result<Duration, ParseError> {
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(ParseError::ExpectedNumber(s.to_owned()));
    }
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut total: u64 = 0;
    let mut last_rank = u8::MAX;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return Err(ParseError::ExpectedNumber(s.to_owned()));
        }
        let n = parse_number(&s[start..i]).map_err(|_| ParseError::NumberTooLarge(s.to_owned()))?;
        let ustart = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        let (rank, factor) = match &s[ustart..i] {
            "" => return Err(ParseError::MissingUnit(s.to_owned())),
            "h" => (3, 3_600_000),
            "m" => (2, 60_000),
            "s" => (1, 1_000),
            "ms" => (0, 1),
            _ => return Err(ParseError::UnknownUnit(s.to_owned())),
        };
        if rank >= last_rank {
            return Err(ParseError::UnitOrder(s.to_owned()));
        }
        last_rank = rank;
        total = n
            .checked_mul(factor)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| ParseError::NumberTooLarge(s.to_owned()))?;
    }
    let d = dur(total);
    if d > MAX_DURATION {
        return Err(TimeControlError::TooLong(d).into());
    }
    Ok(d)
}

fn write_duration(f: &mut fmt::Formatter<'_>, d: Duration) -> fmt::Result {
    let ms = ms_of(d);
    if ms == 0 {
        return f.write_str("0");
    }
    // Under two minutes in seconds (`60s`, `90s`), otherwise minutes (`90m`, `5m30s`).
    let (m, rest) = if ms < 120_000 {
        (0, ms)
    } else {
        (ms / 60_000, ms % 60_000)
    };
    let (s, milli) = (rest / 1000, rest % 1000);
    if m > 0 {
        write!(f, "{m}m")?;
    }
    if s > 0 {
        write!(f, "{s}s")?;
    }
    if milli > 0 {
        write!(f, "{milli}ms")?;
    }
    Ok(())
}

impl FromStr for TimeControl {
    type Err = ParseError;

    fn from_str(input: &str) -> Result<TimeControl, ParseError> {
        let s: String = input.chars().filter(|c| !c.is_whitespace()).collect();
        if s.is_empty() {
            return Err(ParseError::Empty);
        }
        let (main, byo) = match s.split_once('|') {
            Some((m, b)) => (m, Some(b)),
            None => (s.as_str(), None),
        };
        let (stages_text, inc) = match main.split_once('+') {
            Some((st, inc)) => (st, Some(inc)),
            None => (main, None),
        };
        let mut stages = Vec::new();
        for part in stages_text.split(',') {
            if part.is_empty() {
                return Err(ParseError::ExpectedNumber(stages_text.to_owned()));
            }
            let stage = match part.split_once('/') {
                Some((n, t)) => Stage {
                    moves: Some(parse_count(n)?),
                    time: parse_duration(t)?,
                },
                None => Stage {
                    moves: None,
                    time: parse_duration(part)?,
                },
            };
            stages.push(stage);
            if stages.len() > MAX_STAGES {
                return Err(TimeControlError::TooManyStages(stages_text.split(',').count()).into());
            }
        }
        let increment = match inc {
            Some(t) if t.contains('+') => return Err(ParseError::Unexpected(t.to_owned())),
            Some(t) => parse_duration(t)?,
            None => Duration::ZERO,
        };
        let byoyomi = match byo {
            None => None,
            Some(b) if b.contains(['|', '+', ',', '/']) => {
                return Err(ParseError::Unexpected(b.to_owned()));
            }
            Some(b) => Some(match b.split_once('x') {
                Some((n, t)) => Byoyomi {
                    periods: parse_count(n)?,
                    period: parse_duration(t)?,
                },
                None => Byoyomi {
                    periods: 1,
                    period: parse_duration(b)?,
                },
            }),
        };
        Ok(TimeControl::new(stages, increment, byoyomi)?)
    }
}

impl fmt::Display for TimeControl {
    /// The canonical text form (minutes and seconds; `parse(format(tc)) == tc`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.stages.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if let Some(m) = s.moves {
                write!(f, "{m}/")?;
            }
            write_duration(f, s.time)?;
        }
        if !self.increment.is_zero() {
            f.write_str("+")?;
            write_duration(f, self.increment)?;
        }
        if let Some(b) = self.byoyomi {
            f.write_str("|")?;
            if b.periods != 1 {
                write!(f, "{}x", b.periods)?;
            }
            write_duration(f, b.period)?;
        }
        Ok(())
    }
}

impl FromStr for Controls {
    type Err = ParseError;

    fn from_str(input: &str) -> Result<Controls, ParseError> {
        let s: String = input.chars().filter(|c| !c.is_whitespace()).collect();
        if !s.contains(':') && !s.contains(';') {
            return Ok(Controls::same(s.parse()?));
        }
        let (mut red, mut black) = (None, None);
        let mut parts = 0;
        for part in s.split(';') {
            parts += 1;
            let (name, tc) = part
                .split_once(':')
                .ok_or_else(|| ParseError::BadSidePart(part.to_owned()))?;
            let slot = match name.to_ascii_lowercase().as_str() {
                "red" | "r" => &mut red,
                "black" | "b" => &mut black,
                _ => return Err(ParseError::BadSidePart(part.to_owned())),
            };
            if slot.is_some() {
                return Err(ParseError::SidesIncomplete);
            }
            *slot = Some(tc.parse::<TimeControl>()?);
        }
        match (red, black) {
            (Some(red), Some(black)) if parts == 2 => Ok(Controls { red, black }),
            _ => Err(ParseError::SidesIncomplete),
        }
    }
}

impl fmt::Display for Controls {
    /// One control if both sides are alike, else `red:…;black:…`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.red == self.black {
            write!(f, "{}", self.red)
        } else {
            write!(f, "red:{};black:{}", self.red, self.black)
        }
    }
}

#[cfg(feature = "serde")]
mod serde_impls {
    use super::{Controls, TimeControl};
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    impl Serialize for TimeControl {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(self)
        }
    }
    impl<'de> Deserialize<'de> for TimeControl {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let text = String::deserialize(d)?;
            text.parse().map_err(D::Error::custom)
        }
    }
    impl Serialize for Controls {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(self)
        }
    }
    impl<'de> Deserialize<'de> for Controls {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let text = String::deserialize(d)?;
            text.parse().map_err(D::Error::custom)
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tc(s: &str) -> TimeControl {
        s.parse().unwrap()
    }

    fn min(m: u64) -> Duration {
        Duration::from_secs(60 * m)
    }

    #[test]
    fn parses_the_issue_examples() {
        assert_eq!(
            tc("90m+30s"),
            TimeControl::fischer(min(90), Duration::from_secs(30)).unwrap()
        );
        let p = tc("40/90m,10/15m");
        assert_eq!(
            p.stages(),
            &[
                Stage {
                    moves: Some(40),
                    time: min(90)
                },
                Stage {
                    moves: Some(10),
                    time: min(15)
                }
            ]
        );
        assert_eq!(
            tc("30m|60s"),
            TimeControl::byoyomi(min(30), 1, Duration::from_secs(60)).unwrap()
        );
        assert_eq!(
            tc("30m|3x30s"),
            TimeControl::byoyomi(min(30), 3, Duration::from_secs(30)).unwrap()
        );
        assert_eq!(tc("5m"), TimeControl::sudden_death(min(5)).unwrap());
        assert_eq!(
            tc("30/5m").stages(),
            &[Stage {
                moves: Some(30),
                time: min(5)
            }]
        );
        assert_eq!(tc("1h30m"), tc("90m"));
        assert_eq!(tc(" 40/90m , 30m | 60s "), tc("40/90m,30m|60s"));
        assert_eq!(tc("0|60s").base(), Duration::ZERO);
    }

    #[test]
    fn formats_canonically() {
        for (input, out) in [
            ("90m+30s", "90m+30s"),
            ("1h30m", "90m"),
            ("40/90m,10/15m", "40/90m,10/15m"),
            ("30m|1x60s", "30m|60s"),
            ("30m|3x30s", "30m|3x30s"),
            ("1m30s500ms+2s", "90s500ms+2s"),
            ("0|60s", "0|60s"),
            ("1m", "60s"),
            ("1m30s", "90s"),
            ("2m", "2m"),
            ("5m30s", "5m30s"),
        ] {
            assert_eq!(tc(input).to_string(), out);
        }
    }

    #[test]
    fn controls_per_side() {
        let c: Controls = "red:5m;black:4m".parse().unwrap();
        assert_eq!(c.red, tc("5m"));
        assert_eq!(c.black, tc("4m"));
        assert_eq!(c.to_string(), "red:5m;black:4m");
        let c2: Controls = "black:4m; red:5m".parse().unwrap();
        assert_eq!(c, c2);
        let same: Controls = "90m+30s".parse().unwrap();
        assert_eq!(same.to_string(), "90m+30s");
        assert_eq!(
            "red:5m;black:5m".parse::<Controls>().unwrap().to_string(),
            "5m"
        );
    }

    #[test]
    fn clear_errors() {
        let e = |s: &str| s.parse::<TimeControl>().unwrap_err();
        assert_eq!(e(""), ParseError::Empty);
        assert_eq!(e("90"), ParseError::MissingUnit("90".into()));
        assert_eq!(e("90x"), ParseError::UnknownUnit("90x".into()));
        assert_eq!(e("30s1m"), ParseError::UnitOrder("30s1m".into()));
        assert_eq!(e("m"), ParseError::ExpectedNumber("m".into()));
        assert_eq!(
            e("0/90m"),
            ParseError::Invalid(TimeControlError::BadMoveCount { stage: 1, moves: 0 })
        );
        assert_eq!(
            e("90m,40/30m"),
            ParseError::Invalid(TimeControlError::StageAfterSuddenDeath(1))
        );
        assert_eq!(
            e("40/90m|30s"),
            ParseError::Invalid(TimeControlError::ByoyomiNeedsSuddenDeath)
        );
        assert_eq!(
            e("30m|0x30s"),
            ParseError::Invalid(TimeControlError::BadPeriods(0))
        );
        assert_eq!(
            e("30m|0"),
            ParseError::Invalid(TimeControlError::ZeroPeriod)
        );
        assert_eq!(
            e("0"),
            ParseError::Invalid(TimeControlError::ZeroStageTime(1))
        );
        assert_eq!(
            e("0+5s"),
            ParseError::Invalid(TimeControlError::ZeroStageTime(1))
        );
        assert_eq!(
            e("49h"),
            ParseError::Invalid(TimeControlError::TooLong(Duration::from_secs(49 * 3600)))
        );
        assert_eq!(
            e("99999999999999h"),
            ParseError::NumberTooLarge("99999999999999h".into())
        );
        assert_eq!(e("5m+1s+1s"), ParseError::Unexpected("1s+1s".into()));
        assert_eq!(e("5m|30s|30s"), ParseError::Unexpected("30s|30s".into()));
        assert_eq!(e("5m,,5m"), ParseError::ExpectedNumber("5m,,5m".into()));
        let ce = |s: &str| s.parse::<Controls>().unwrap_err();
        assert_eq!(ce("red:5m"), ParseError::SidesIncomplete);
        assert_eq!(ce("red:5m;red:4m"), ParseError::SidesIncomplete);
        assert_eq!(
            ce("white:5m;black:4m"),
            ParseError::BadSidePart("white:5m".into())
        );
        assert_eq!(ce("red:5m;black:4m;red:3m"), ParseError::SidesIncomplete);
        assert_eq!(ce("red:5m;black:x"), ParseError::ExpectedNumber("x".into()));
    }

    #[test]
    fn error_messages_are_sentences() {
        let e = "90".parse::<TimeControl>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "`90`: missing unit after the number (use h, m, s or ms, e.g. `90m`)"
        );
    }

    #[test]
    fn constructor_rejects_sub_millisecond() {
        assert_eq!(
            TimeControl::sudden_death(Duration::from_micros(1500)),
            Err(TimeControlError::SubMillisecond(Duration::from_micros(
                1500
            )))
        );
    }
}
