//! Competition clocks for Xiangqi. Pure: no IO, no async, and the system clock is never read —
//! every method that depends on time takes `now` from the caller, and the clock answers with the
//! next instant it needs attention ([`Clock::next_deadline`]), in the manner of `quinn-proto`.
//!
//! * [`TimeControl`]: one side's time control (base time, Fischer increment, move-count periods,
//!   读秒 / byo-yomi, sudden death, and combinations); [`Controls`]: both sides' (armageddon may
//!   give them different ones). Both parse from and print to a compact text form
//!   (`90m+30s`, `40/90m,10/15m`, `30m|60s`, `30m|3x30s`, `red:5m;black:4m`).
//! * [`Clock`]: the state machine (start, move, pause, resume, add/charge, flag, stop) with
//!   lichess-style lag compensation ([`LagConfig`]) and serialisable [`ClockSnapshot`]s that can
//!   be restored at a new `now` after a restart.
//!
//! Time: instants are [`Millis`] — milliseconds on a monotonic time line whose epoch the caller
//! chooses (e.g. `tokio::time::Instant` minus a process start instant). Durations are
//! [`std::time::Duration`], used at millisecond resolution (anything finer is truncated).
//! A snapshot stores no instants from the old epoch that restore depends on, so a
//! restarted process may use a different epoch.

mod clock;
mod control;
mod lag;
mod lateness;

pub use clock::{
    Clock, ClockError, ClockSnapshot, ClockView, Flag, FlagReason, MoveClockReport, RestoreError,
    SideSnapshot, SideView, SnapshotPhase,
};
pub use control::{Byoyomi, Controls, ParseError, Stage, TimeControl, TimeControlError};
pub use lag::{LagConfig, LagEstimator};
pub use lateness::{Lateness, LatenessVerdict};

use std::fmt;
use std::ops::Add;
use std::time::Duration;

/// A side of the board. The clock crate's own type; the server maps it to the rules crate's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Side {
    /// Red (红), moves first.
    Red,
    /// Black (黑).
    Black,
}

impl Side {
    /// Both sides, Red first.
    pub const ALL: [Side; 2] = [Side::Red, Side::Black];

    /// The other side.
    #[must_use]
    pub fn other(self) -> Side {
        match self {
            Side::Red => Side::Black,
            Side::Black => Side::Red,
        }
    }

    pub(crate) fn index(self) -> usize {
        match self {
            Side::Red => 0,
            Side::Black => 1,
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Red => "red",
            Side::Black => "black",
        })
    }
}

/// An instant: milliseconds since a monotonic epoch chosen by the caller.
///
/// The clock never compares a `Millis` with the system clock; it only subtracts instants the
/// caller gave it. Subtraction saturates at zero (an instant "before" the turn started counts as
/// no time at all), so a caller whose `now` goes backwards charges nobody.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct Millis(pub u64);

impl Millis {
    /// The instant `ms` milliseconds after the epoch.
    #[must_use]
    pub const fn from_ms(ms: u64) -> Millis {
        Millis(ms)
    }

    /// Milliseconds since the epoch.
    #[must_use]
    pub const fn as_ms(self) -> u64 {
        self.0
    }

    /// Time from `earlier` to `self`, zero if `earlier` is later.
    #[must_use]
    pub fn saturating_since(self, earlier: Millis) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }

    pub(crate) fn plus_ms(self, ms: u64) -> Millis {
        Millis(self.0.saturating_add(ms))
    }
}

impl Add<Duration> for Millis {
    type Output = Millis;
    fn add(self, d: Duration) -> Millis {
        self.plus_ms(ms_of(d))
    }
}

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.0)
    }
}

/// Whole milliseconds of a duration (truncating, saturating at `u64::MAX`).
pub(crate) fn ms_of(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

pub(crate) fn dur(ms: u64) -> Duration {
    Duration::from_millis(ms)
}
