//! Lateness (art. 21 and 4.1.5): who forfeits for not turning up, and what a late player is
//! charged when both were late.
//!
//! The clock itself implements 21.1 by [`crate::Clock::start_at`]: Red's clock runs from the
//! scheduled time, Black's from Red's first move, whoever is present. This module adds the
//! parts that depend on presence, which only the server knows ("arrival" online = the player's
//! first connection to the game after the scheduled time, or any sign of presence the server
//! chooses):
//!
//! * 4.1.5 / 21.1: a player still absent when the lateness limit expires loses; 21.3: both
//!   absent, both lose ([`Lateness::verdict`]).
//! * 21.3: when both were late, each is charged its own lateness — for a late Black that is more
//!   than its clock ran (which started only at Red's first move); [`Lateness::late_charge`]
//!   gives the difference to pass to [`crate::Clock::charge_time`].
//!
//! Instants are on the caller's time line like everything else; a server that restarts should
//! re-derive `scheduled` on its new time line from the game's wall-clock schedule.

use crate::{Millis, Side, dur, ms_of};
use std::time::Duration;

/// The lateness rule of one game: scheduled start and lateness limit (迟到判负时限).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Lateness {
    /// Scheduled start.
    pub scheduled: Millis,
    /// How late a player may arrive; absent at `scheduled + limit` loses.
    pub limit: Duration,
}

/// The lateness decision at some instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum LatenessVerdict {
    /// Someone is absent but the limit has not expired: decide again at `deadline` (or when
    /// they arrive).
    Pending {
        /// When the limit expires.
        deadline: Millis,
    },
    /// Both arrived within the limit: nothing more to decide.
    Settled,
    /// This side was absent when the limit expired and loses (4.1.5, 21.1).
    Forfeit(Side),
    /// Both absent when the limit expired: both lose (21.3).
    BothForfeit,
}

impl Lateness {
    /// When the lateness limit expires.
    #[must_use]
    pub fn deadline(&self) -> Millis {
        self.scheduled + self.limit
    }

    /// The verdict at `now`, given each side's arrival (None = not yet). An arrival at or after
    /// the deadline is too late.
    #[must_use]
    pub fn verdict(
        &self,
        red_arrived: Option<Millis>,
        black_arrived: Option<Millis>,
        now: Millis,
    ) -> LatenessVerdict {
        let deadline = self.deadline();
        let in_time = |a: Option<Millis>| a.is_some_and(|t| t < deadline);
        match (in_time(red_arrived), in_time(black_arrived)) {
            (true, true) => LatenessVerdict::Settled,
            _ if now < deadline => LatenessVerdict::Pending { deadline },
            (true, false) => LatenessVerdict::Forfeit(Side::Black),
            (false, true) => LatenessVerdict::Forfeit(Side::Red),
            (false, false) => LatenessVerdict::BothForfeit,
        }
    }

    /// Art. 21.3: the extra time to charge `side` when it arrives at `arrived`, if the other
    /// side was also absent at the scheduled time (`other_arrived` None or later than
    /// `scheduled`): its lateness minus the time its clock already ran (`time_on_clock`, see
    /// [`crate::Clock::time_on_clock`]). Zero when only this side was late (21.1: its clock
    /// alone measures it) or when it was not late.
    #[must_use]
    pub fn late_charge(
        &self,
        arrived: Millis,
        other_arrived: Option<Millis>,
        time_on_clock: Duration,
    ) -> Duration {
        let other_was_late = other_arrived.is_none_or(|t| t > self.scheduled);
        if !other_was_late || arrived <= self.scheduled {
            return Duration::ZERO;
        }
        let lateness = ms_of(arrived.saturating_since(self.scheduled));
        dur(lateness.saturating_sub(ms_of(time_on_clock)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: u64 = 60_000;

    fn rule() -> Lateness {
        Lateness {
            scheduled: Millis(10 * MIN),
            limit: Duration::from_millis(15 * MIN),
        }
    }

    #[test]
    fn verdicts() {
        let r = rule();
        let d = Millis(25 * MIN);
        assert_eq!(r.deadline(), d);
        assert_eq!(
            r.verdict(None, None, Millis(MIN)),
            LatenessVerdict::Pending { deadline: d }
        );
        assert_eq!(
            r.verdict(Some(Millis(0)), Some(Millis(12 * MIN)), Millis(12 * MIN)),
            LatenessVerdict::Settled
        );
        assert_eq!(
            r.verdict(Some(Millis(0)), None, Millis(25 * MIN - 1)),
            LatenessVerdict::Pending { deadline: d }
        );
        assert_eq!(
            r.verdict(Some(Millis(0)), None, d),
            LatenessVerdict::Forfeit(Side::Black)
        );
        assert_eq!(
            r.verdict(None, Some(Millis(0)), d),
            LatenessVerdict::Forfeit(Side::Red)
        );
        assert_eq!(r.verdict(None, None, d), LatenessVerdict::BothForfeit);
        // Arriving exactly at the deadline is too late.
        assert_eq!(
            r.verdict(Some(d), Some(Millis(0)), d),
            LatenessVerdict::Forfeit(Side::Red)
        );
    }

    #[test]
    fn charges_only_when_both_late() {
        let r = rule();
        // Black alone late by 7 min: its clock (from Red's first move) is the measure.
        assert_eq!(
            r.late_charge(
                Millis(17 * MIN),
                Some(Millis(9 * MIN)),
                Duration::from_millis(6 * MIN)
            ),
            Duration::ZERO
        );
        // Both late: Red arrived at +3 and moved at +4; Black arrives at +7, its clock ran 3 min,
        // so 4 more minutes are charged: 7 in all (21.3).
        assert_eq!(
            r.late_charge(
                Millis(17 * MIN),
                Some(Millis(13 * MIN)),
                Duration::from_millis(3 * MIN)
            ),
            Duration::from_millis(4 * MIN)
        );
        // Black first, Red still absent: charge the whole 2 minutes.
        assert_eq!(
            r.late_charge(Millis(12 * MIN), None, Duration::ZERO),
            Duration::from_millis(2 * MIN)
        );
        // Red late: its clock ran since the start, nothing extra.
        assert_eq!(
            r.late_charge(Millis(12 * MIN), None, Duration::from_millis(2 * MIN)),
            Duration::ZERO
        );
        // On time.
        assert_eq!(
            r.late_charge(Millis(10 * MIN), None, Duration::ZERO),
            Duration::ZERO
        );
    }
}
