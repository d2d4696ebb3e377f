//! The server's time line: Unix milliseconds derived from a monotonic
//! instant, so timers and clock arithmetic agree and never jump backwards.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

#[derive(Debug, Clone, Copy)]
pub struct TimeBase {
    instant: Instant,
    unix_ms: u64,
}

impl TimeBase {
    pub fn new() -> TimeBase {
        let unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        TimeBase {
            instant: Instant::now(),
            unix_ms,
        }
    }

    pub fn now_ms(&self) -> u64 {
        self.ms_at(Instant::now())
    }

    pub fn ms_at(&self, at: Instant) -> u64 {
        self.unix_ms + at.saturating_duration_since(self.instant).as_millis() as u64
    }

    pub fn instant_at(&self, ms: u64) -> Instant {
        self.instant + Duration::from_millis(ms.saturating_sub(self.unix_ms))
    }
}

impl Default for TimeBase {
    fn default() -> Self {
        TimeBase::new()
    }
}
