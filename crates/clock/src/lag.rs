//! Lag compensation, modelled on lichess (scalachess `LagTracker`), re-derived from its
//! published formulas, in milliseconds.
//!
//! Per side, a quota (token bucket) of compensation:
//!
//! * `E` = base time + 40 × (increment + byo-yomi period)            (estimated game length)
//! * `max_gain` = min(`max_gain_cap`, `gain_base` + `gain_per_estimated_second` × E in seconds)
//! * quota starts at `initial_quota_moves` × `max_gain`, is capped at `quota_cap_moves` × `max_gain`
//! * each move: `gain` = min(`max_gain`, measured lag + `cpu_allowance`), where the measured lag is
//!   the server's own average of websocket ping round trips (see [`LagEstimator`]);
//!   `lag` = max(0, server elapsed − client-reported think time);
//!   `compensation` = min(`lag`, quota); quota = min(quota + `gain` − `compensation`, cap).
//! * a flag falls only after a grace of min(quota, `max_flag_grace`).
//!
//! The refill is bounded by what the *server* measured, so a client that lies about its think
//! time (reporting zero — lichess issue #10300) cannot gain more over a game than the starting
//! quota plus the sum of the per-move gains, whatever it reports.

use crate::{TimeControl, dur, ms_of};
use std::time::Duration;

/// Lag-compensation parameters (milliseconds). `Default` gives lichess's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct LagConfig {
    /// Compensate at all. When false, no compensation and no flag grace.
    pub enabled: bool,
    /// Upper bound of the per-move quota gain (lichess: 100 cs = 1000 ms).
    pub max_gain_cap_ms: u64,
    /// Constant part of the per-move gain bound (lichess: 15 cs = 150 ms).
    pub gain_base_ms: u64,
    /// Gain bound per second of estimated game length (lichess: 2/5 cs = 4 ms).
    pub gain_per_estimated_second_ms: u64,
    /// Moves used to estimate the game length from increment / byo-yomi (lichess: 40).
    pub estimate_moves: u32,
    /// Starting quota, in multiples of the max gain (lichess: 3).
    pub initial_quota_moves: u32,
    /// Quota cap, in multiples of the max gain (lichess: 7).
    pub quota_cap_moves: u32,
    /// Added to the measured lag when refilling, for server/client processing (lichess: 14 cs).
    pub cpu_allowance_ms: u64,
    /// Longest wait past zero before a flag falls (lichess: 200 cs = 2000 ms).
    pub max_flag_grace_ms: u64,
}

impl LagConfig {
    /// Whether these are the default parameters.
    pub fn is_default(&self) -> bool {
        *self == LagConfig::default()
    }
}

impl Default for LagConfig {
    fn default() -> LagConfig {
        LagConfig {
            enabled: true,
            max_gain_cap_ms: 1000,
            gain_base_ms: 150,
            gain_per_estimated_second_ms: 4,
            estimate_moves: 40,
            initial_quota_moves: 3,
            quota_cap_moves: 7,
            cpu_allowance_ms: 140,
            max_flag_grace_ms: 2000,
        }
    }
}

impl LagConfig {
    /// No compensation and no grace: the clock charges exactly what the server measured.
    #[must_use]
    pub fn disabled() -> LagConfig {
        LagConfig {
            enabled: false,
            ..LagConfig::default()
        }
    }

    /// The per-move gain bound for a time control.
    #[must_use]
    pub fn max_gain(&self, tc: &TimeControl) -> Duration {
        dur(self.max_gain_ms(tc))
    }

    /// The starting quota for a time control.
    #[must_use]
    pub fn initial_quota(&self, tc: &TimeControl) -> Duration {
        dur(self.initial_quota_ms(tc))
    }

    /// The quota cap for a time control.
    #[must_use]
    pub fn quota_cap(&self, tc: &TimeControl) -> Duration {
        dur(self.quota_cap_ms(tc))
    }

    pub(crate) fn max_gain_ms(&self, tc: &TimeControl) -> u64 {
        if !self.enabled {
            return 0;
        }
        let est_s = tc.estimated_ms(u64::from(self.estimate_moves)) / 1000;
        self.gain_base_ms
            .saturating_add(self.gain_per_estimated_second_ms.saturating_mul(est_s))
            .min(self.max_gain_cap_ms)
    }

    pub(crate) fn initial_quota_ms(&self, tc: &TimeControl) -> u64 {
        self.max_gain_ms(tc)
            .saturating_mul(u64::from(self.initial_quota_moves))
            .min(self.quota_cap_ms(tc))
    }

    pub(crate) fn quota_cap_ms(&self, tc: &TimeControl) -> u64 {
        self.max_gain_ms(tc)
            .saturating_mul(u64::from(self.quota_cap_moves))
    }

    pub(crate) fn grace_ms(&self, quota: u64) -> u64 {
        if self.enabled {
            quota.min(self.max_flag_grace_ms)
        } else {
            0
        }
    }
}

/// An exponentially weighted moving average of ping round-trip times, the server's own measure
/// of a connection's lag, to pass as `measured_lag` to [`crate::Clock::on_move`].
///
/// Each sample moves the estimate `1/weight` of the way towards it; samples are clamped to
/// `max_sample` so one stall cannot dominate. Before any sample the estimate is zero, so a
/// connection the server never measured earns only the CPU allowance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LagEstimator {
    estimate_ms: Option<u64>,
    weight: u64,
    max_sample_ms: u64,
}

impl Default for LagEstimator {
    /// Weight 4 (α = 0.25), samples clamped to 5 s.
    fn default() -> LagEstimator {
        LagEstimator::new(4, Duration::from_secs(5))
    }
}

impl LagEstimator {
    /// An estimator with the given weight (1 = only the last sample counts) and sample clamp.
    #[must_use]
    pub fn new(weight: u32, max_sample: Duration) -> LagEstimator {
        LagEstimator {
            estimate_ms: None,
            weight: u64::from(weight.max(1)),
            max_sample_ms: ms_of(max_sample),
        }
    }

    /// Record one ping round trip.
    pub fn record(&mut self, rtt: Duration) {
        let s = ms_of(rtt).min(self.max_sample_ms);
        self.estimate_ms = Some(match self.estimate_ms {
            None => s,
            Some(e) if s >= e => e + (s - e) / self.weight,
            Some(e) => e - (e - s) / self.weight,
        });
    }

    /// The current estimate (zero before any sample).
    #[must_use]
    pub fn estimate(&self) -> Duration {
        dur(self.estimate_ms.unwrap_or(0))
    }

    /// Whether any sample was recorded.
    #[must_use]
    pub fn has_samples(&self) -> bool {
        self.estimate_ms.is_some()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn lichess_gain_bounds() {
        let cfg = LagConfig::default();
        // 90m+30s: E = 5400 + 1200 s → capped at 1 s.
        let slow: TimeControl = "90m+30s".parse().unwrap();
        assert_eq!(cfg.max_gain_ms(&slow), 1000);
        assert_eq!(cfg.initial_quota_ms(&slow), 3000);
        assert_eq!(cfg.quota_cap_ms(&slow), 7000);
        // 1+0: E = 60 s → 4 × 60 + 150 = 390 ms (lichess: 2·60/5 + 15 = 39 cs).
        let bullet: TimeControl = "1m".parse().unwrap();
        assert_eq!(cfg.max_gain_ms(&bullet), 390);
        // 30s+0: 120 + 150 = 270 ms.
        let ultra: TimeControl = "30s".parse().unwrap();
        assert_eq!(cfg.max_gain_ms(&ultra), 270);
        assert_eq!(LagConfig::disabled().max_gain_ms(&ultra), 0);
        assert_eq!(LagConfig::disabled().grace_ms(5000), 0);
        assert_eq!(cfg.grace_ms(5000), 2000);
        assert_eq!(cfg.grace_ms(700), 700);
    }

    #[test]
    fn estimator_moves_towards_samples() {
        let mut e = LagEstimator::default();
        assert_eq!(e.estimate(), Duration::ZERO);
        assert!(!e.has_samples());
        e.record(Duration::from_millis(100));
        assert_eq!(e.estimate(), Duration::from_millis(100));
        e.record(Duration::from_millis(200));
        assert_eq!(e.estimate(), Duration::from_millis(125));
        e.record(Duration::from_millis(25));
        assert_eq!(e.estimate(), Duration::from_millis(100));
        e.record(Duration::from_secs(60)); // clamped to 5 s
        assert_eq!(e.estimate(), Duration::from_millis(100 + 4900 / 4));
    }
}
