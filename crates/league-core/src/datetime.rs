//! Instants as people write them in an event file: RFC 3339 (`2026-12-03T14:00:00+08:00`,
//! `2026-12-03 14:00Z`) or Unix milliseconds, and durations (`90s`, `15m`, `12h`, `2d`,
//! `1h30m`). Pure; the civil-date arithmetic is the proleptic Gregorian calendar (days from
//! 1970-01-01 by the usual era/day-of-era decomposition).

/// Why a text is not an instant or a duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not {what}: {why}")]
pub struct TimeError {
    pub text: String,
    pub what: &'static str,
    pub why: &'static str,
}

fn err(text: &str, what: &'static str, why: &'static str) -> TimeError {
    TimeError {
        text: text.to_string(),
        what,
        why,
    }
}

/// Days from 1970-01-01 to the civil date `y-m-d`.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of day `z` after 1970-01-01.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// An instant in Unix milliseconds from RFC 3339 text (the `T` may be a space, seconds and
/// fractions are optional, the offset is `Z` or `±HH:MM`), or from a plain number of Unix
/// milliseconds.
pub fn parse_instant(text: &str) -> Result<u64, TimeError> {
    const WHAT: &str = "an instant (RFC 3339 like 2026-12-03T14:00:00+08:00, or Unix ms)";
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().map_err(|_| err(text, WHAT, "too large"));
    }
    let bad = |why| err(text, WHAT, why);
    let (date, rest) = t
        .split_once(['T', 't', ' '])
        .ok_or_else(|| bad("no time of day"))?;
    let mut dp = date.split('-');
    let (y, m, d) = match (dp.next(), dp.next(), dp.next(), dp.next()) {
        (Some(y), Some(m), Some(d), None) => (
            digits(y, 4).ok_or_else(|| bad("the year must be 4 digits"))?,
            digits(m, 2).ok_or_else(|| bad("the month must be 2 digits"))?,
            digits(d, 2).ok_or_else(|| bad("the day must be 2 digits"))?,
        ),
        _ => return Err(bad("the date must be YYYY-MM-DD")),
    };
    let y = i64::from(y);
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return Err(bad("no such date"));
    }
    let (clock, offset_min) = if let Some(c) = rest.strip_suffix(['Z', 'z']) {
        (c, 0i64)
    } else {
        let i = rest
            .rfind(['+', '-'])
            .ok_or_else(|| bad("no offset (Z or ±HH:MM)"))?;
        let (c, off) = rest.split_at(i);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let (hh, mm) = off[1..]
            .split_once(':')
            .ok_or_else(|| bad("the offset must be ±HH:MM"))?;
        let hh = digits(hh, 2).ok_or_else(|| bad("the offset must be ±HH:MM"))?;
        let mm = digits(mm, 2).ok_or_else(|| bad("the offset must be ±HH:MM"))?;
        if hh > 23 || mm > 59 {
            return Err(bad("no such offset"));
        }
        (c, sign * i64::from(hh * 60 + mm))
    };
    let mut cp = clock.split(':');
    let hh = cp
        .next()
        .and_then(|h| digits(h, 2))
        .ok_or_else(|| bad("the time must be HH:MM[:SS]"))?;
    let mm = cp
        .next()
        .and_then(|m| digits(m, 2))
        .ok_or_else(|| bad("the time must be HH:MM[:SS]"))?;
    let (ss, ms) = match cp.next() {
        None => (0, 0),
        Some(s) => {
            let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
            let ss = digits(whole, 2).ok_or_else(|| bad("the seconds must be 2 digits"))?;
            if !frac.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 9 {
                return Err(bad("bad fraction of a second"));
            }
            let mut ms_text: String = frac.chars().take(3).collect();
            while ms_text.len() < 3 {
                ms_text.push('0');
            }
            (ss, ms_text.parse::<u32>().unwrap_or(0))
        }
    };
    if cp.next().is_some() || hh > 23 || mm > 59 || ss > 59 {
        return Err(bad("no such time of day"));
    }
    let days = days_from_civil(y, m, d);
    let secs = days * 86_400 + i64::from(hh * 3600 + mm * 60 + ss) - offset_min * 60;
    let total = secs * 1000 + i64::from(ms);
    u64::try_from(total).map_err(|_| bad("before 1970"))
}

/// RFC 3339 in UTC with milliseconds only when there are some: `2026-12-03T06:00:00Z`.
pub fn format_instant(ms: u64) -> String {
    let secs = (ms / 1000) as i64;
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    let (hh, mm, ss) = (sod / 3600, sod % 3600 / 60, sod % 60);
    match ms % 1000 {
        0 => format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z"),
        f => format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{f:03}Z"),
    }
}

/// A duration in milliseconds from `90s`, `15m`, `12h`, `2d`, `500ms`, combinations like
/// `1h30m`, or a plain number of milliseconds.
pub fn parse_duration(text: &str) -> Result<u64, TimeError> {
    const WHAT: &str = "a duration (like 90s, 15m, 12h, 1h30m, or ms)";
    let t = text.trim();
    if t.is_empty() {
        return Err(err(text, WHAT, "empty"));
    }
    if t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse().map_err(|_| err(text, WHAT, "too large"));
    }
    let mut total: u64 = 0;
    let mut rest = t;
    while !rest.is_empty() {
        let n_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .ok_or_else(|| err(text, WHAT, "a number without a unit"))?;
        if n_end == 0 {
            return Err(err(text, WHAT, "a unit without a number"));
        }
        let n: u64 = rest[..n_end]
            .parse()
            .map_err(|_| err(text, WHAT, "too large"))?;
        rest = &rest[n_end..];
        let (unit, len) = if rest.starts_with("ms") {
            (1, 2)
        } else {
            match rest.chars().next() {
                Some('s') => (1_000, 1),
                Some('m') => (60_000, 1),
                Some('h') => (3_600_000, 1),
                Some('d') => (86_400_000, 1),
                _ => return Err(err(text, WHAT, "units are ms, s, m, h, d")),
            }
        };
        rest = &rest[len..];
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| err(text, WHAT, "too large"))?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn instants() {
        // 2026-12-03T06:00:00Z = 1796277600 s (checked against `date -u -d`).
        let utc = 1_796_277_600_000;
        assert_eq!(parse_instant("2026-12-03T06:00:00Z").unwrap(), utc);
        assert_eq!(parse_instant("2026-12-03T14:00:00+08:00").unwrap(), utc);
        assert_eq!(parse_instant("2026-12-03 14:00+08:00").unwrap(), utc);
        assert_eq!(parse_instant("2026-12-02T22:00:00-08:00").unwrap(), utc);
        assert_eq!(parse_instant("2026-12-03T06:00:00.25Z").unwrap(), utc + 250);
        assert_eq!(parse_instant("1796277600000").unwrap(), utc);
        assert_eq!(parse_instant("1970-01-01T00:00:00Z").unwrap(), 0);
        assert_eq!(format_instant(utc), "2026-12-03T06:00:00Z");
        assert_eq!(format_instant(utc + 5), "2026-12-03T06:00:00.005Z");
        assert_eq!(
            parse_instant("2024-02-29T00:00:00Z").unwrap(),
            1_709_164_800_000
        );
        for bad in [
            "",
            "tomorrow",
            "2026-12-03",
            "2026-13-01T00:00Z",
            "2026-02-29T00:00Z",
            "2026-12-03T24:00Z",
            "2026-12-03T14:00",
            "2026-12-03T14:00+8",
            "1969-12-31T23:59:59Z",
            "2026-1-03T14:00Z",
        ] {
            assert!(parse_instant(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s").unwrap(), 90_000);
        assert_eq!(parse_duration("15m").unwrap(), 900_000);
        assert_eq!(parse_duration("1h30m").unwrap(), 5_400_000);
        assert_eq!(parse_duration("2d").unwrap(), 172_800_000);
        assert_eq!(parse_duration("250ms").unwrap(), 250);
        assert_eq!(parse_duration("1500").unwrap(), 1500);
        for bad in ["", "m", "15x", "1.5h", "-3m", "3m15"] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn formatting_and_parsing_agree(ms in 0u64..8_000_000_000_000) {
            prop_assert_eq!(parse_instant(&format_instant(ms)).unwrap(), ms);
        }

        #[test]
        fn arbitrary_text_never_panics(s in ".{0,40}") {
            let _ = parse_instant(&s);
            let _ = parse_duration(&s);
        }
    }
}
