//! What a run measures: latency histograms, counters, errors by code, per-game send times.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::Serialize;

/// Highest latency a histogram records exactly (60 s, in µs); larger values saturate.
const HIST_MAX_US: u64 = 60_000_000;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A shared latency histogram in microseconds (1 µs to 60 s, 3 significant figures). The
/// samples recorded with [`Hist::record_span`] also keep when they began and ended (the first
/// [`SPAN_CAP`] of them), so a run can tell afterwards which ones a disk stall overlapped
/// (`--disk-probe`).
pub struct Hist(Mutex<Samples>);

struct Samples {
    hist: Histogram<u64>,
    /// (start, end) of each sample recorded with a span, up to `span_cap` of them.
    spans: Vec<Span>,
    span_cap: usize,
}

/// When a sample began and ended, ns since the run's epoch.
pub type Span = (u64, u64);

/// Spans kept per histogram at most: 4 Mi samples (64 MiB), an hour of a realistic load.
pub const SPAN_CAP: usize = 4 << 20;

impl Default for Hist {
    fn default() -> Self {
        Self::with_span_cap(SPAN_CAP)
    }
}

impl Hist {
    fn with_span_cap(span_cap: usize) -> Self {
        // Constant bounds that hdrhistogram always accepts (low >= 1, high >= 2 * low, sigfig <= 5);
        // the unit test `percentiles` exercises this constructor.
        #[allow(clippy::expect_used)]
        let hist =
            Histogram::new_with_bounds(1, HIST_MAX_US, 3).expect("constant histogram bounds");
        Self(Mutex::new(Samples {
            hist,
            spans: Vec::new(),
            span_cap,
        }))
    }

    pub fn record(&self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1);
        lock(&self.0).hist.saturating_record(us);
    }

    pub fn record_us(&self, us: u64) {
        lock(&self.0).hist.saturating_record(us.max(1));
    }

    /// Records the latency `end_ns - start_ns` and, while under the cap, the span itself.
    pub fn record_span(&self, start_ns: u64, end_ns: u64) {
        let us = end_ns.saturating_sub(start_ns) / 1000;
        let mut s = lock(&self.0);
        s.hist.saturating_record(us.max(1));
        if s.spans.len() < s.span_cap {
            s.spans.push((start_ns, end_ns));
        }
    }

    /// Takes the spans kept so far, in the order they were recorded.
    pub fn take_spans(&self) -> Vec<Span> {
        std::mem::take(&mut lock(&self.0).spans)
    }

    pub fn summary(&self) -> LatencySummary {
        LatencySummary::of(&lock(&self.0).hist)
    }
}

/// Percentiles of one histogram, in milliseconds (µs resolution).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
}

impl LatencySummary {
    fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        Self {
            count: h.len(),
            p50_ms: ms(h.value_at_quantile(0.50)),
            p90_ms: ms(h.value_at_quantile(0.90)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            p999_ms: ms(h.value_at_quantile(0.999)),
            max_ms: ms(h.max()),
            mean_ms: h.mean() / 1000.0,
        }
    }
}

/// Monotonic nanoseconds since the start of the run; 0 means "never".
#[derive(Clone, Copy, Debug)]
pub struct Epoch(Instant);

impl Epoch {
    pub fn new() -> Self {
        Self(Instant::now())
    }

    /// Nanoseconds since the epoch, at least 1.
    pub fn now_ns(&self) -> u64 {
        u64::try_from(self.0.elapsed().as_nanos())
            .unwrap_or(u64::MAX)
            .max(1)
    }

    pub fn instant(&self) -> Instant {
        self.0
    }
}

impl Default for Epoch {
    fn default() -> Self {
        Self::new()
    }
}

/// Per game: when each ply was sent, and (for the fan-out figure) when its last spectator got it.
pub struct Timeline {
    sent: Vec<AtomicU64>,
    highest: std::sync::atomic::AtomicU32,
    spectator_last: Vec<AtomicU64>,
    spectator_count: Vec<AtomicU64>,
    /// The first acknowledgement after the scenario's fault (ns since the epoch; 0: none).
    resumed: AtomicU64,
}

impl Timeline {
    pub fn new(plies: usize) -> Self {
        let v = || (0..=plies).map(|_| AtomicU64::new(0)).collect();
        Self {
            sent: v(),
            highest: std::sync::atomic::AtomicU32::new(0),
            spectator_last: v(),
            spectator_count: v(),
            resumed: AtomicU64::new(0),
        }
    }

    /// A move acknowledged at `at_ns`, after the fault: the first one is when the game was
    /// playing again.
    pub fn mark_resumed(&self, at_ns: u64) {
        let _ = self
            .resumed
            .compare_exchange(0, at_ns, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// When the game first had a move acknowledged after the fault, if it did.
    pub fn resumed_at(&self) -> Option<u64> {
        let r = self.resumed.load(Ordering::Relaxed);
        (r != 0).then_some(r)
    }

    /// Whether the game's last ply had been sent by `at_ns` (it was over before then).
    pub fn over_by(&self, at_ns: u64) -> bool {
        let last = self.sent.len().saturating_sub(1);
        self.sent
            .get(last)
            .map(|s| s.load(Ordering::Relaxed))
            .is_some_and(|s| s != 0 && s <= at_ns)
    }

    /// Records the first send of `ply` (a resend keeps the first time).
    pub fn mark_sent(&self, ply: u32, at_ns: u64) {
        if let Some(a) = self.sent.get(ply as usize) {
            let _ = a.compare_exchange(0, at_ns, Ordering::Relaxed, Ordering::Relaxed);
            self.highest.fetch_max(ply, Ordering::Relaxed);
        }
    }

    /// The highest ply sent so far.
    pub fn highest_sent(&self) -> u32 {
        self.highest.load(Ordering::Relaxed)
    }

    /// When `ply` was first sent (ns since the run's epoch), if it was sent by this run.
    pub fn sent_at(&self, ply: u32) -> Option<u64> {
        let sent = self.sent.get(ply as usize)?.load(Ordering::Relaxed);
        (sent != 0).then_some(sent)
    }

    pub fn spectator_got(&self, ply: u32, at_ns: u64) {
        if let (Some(last), Some(n)) = (
            self.spectator_last.get(ply as usize),
            self.spectator_count.get(ply as usize),
        ) {
            last.fetch_max(at_ns, Ordering::Relaxed);
            n.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// For each ply that was sent and reached `spectators` spectators: send to last delivery.
    pub fn full_fanout(&self, spectators: u64) -> Vec<Duration> {
        (1..self.sent.len())
            .filter_map(|i| {
                let sent = self.sent[i].load(Ordering::Relaxed);
                let last = self.spectator_last[i].load(Ordering::Relaxed);
                let n = self.spectator_count[i].load(Ordering::Relaxed);
                (sent != 0 && n >= spectators && spectators > 0)
                    .then(|| Duration::from_nanos(last.saturating_sub(sent)))
            })
            .collect()
    }
}

/// Everything the simulated clients of one run count.
#[derive(Default)]
pub struct Metrics {
    /// Player's own move: send to acknowledgement (recorded with spans).
    pub ack: Hist,
    /// Player's move: send to the opponent's receipt (recorded with spans).
    pub opponent: Hist,
    /// Player's move: send to a spectator's receipt.
    pub spectator: Hist,
    /// TCP connect + websocket upgrade + join.
    pub connect: Hist,
    /// Reconnect: drop to joined again.
    pub reconnect: Hist,
    /// Fan-out: a move's send to its receipt by the last spectator.
    pub fanout_all: Hist,
    /// The scenario's fault to each game's first acknowledged move after it (games under
    /// way at the fault).
    pub failover: Hist,
    /// The same, for the games with a player connected to the faulted node.
    pub failover_node: Hist,
    /// Games under way at the fault that never had a move acknowledged after it.
    pub failover_not_resumed: AtomicU64,
    pub moves_sent: AtomicU64,
    pub moves_acked: AtomicU64,
    pub deliveries: AtomicU64,
    pub connected: AtomicU64,
    pub connect_failed: AtomicU64,
    pub disconnected: AtomicU64,
    pub reconnects: AtomicU64,
    /// Plies a client never got while it was connected (gaps and the end of the game).
    pub missing: AtomicU64,
    /// Plies lost around a deliberate reconnect that the target did not replay.
    pub missing_after_reconnect: AtomicU64,
    /// Sequence numbers skipped in a client's event stream.
    pub seq_gaps: AtomicU64,
    pub duplicates: AtomicU64,
    pub games_started: AtomicU64,
    pub games_completed: AtomicU64,
    pub errors: Mutex<BTreeMap<String, u64>>,
}

impl Metrics {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn error(&self, code: &str) {
        *lock(&self.errors).entry(code.to_owned()).or_default() += 1;
    }

    pub fn errors(&self) -> BTreeMap<String, u64> {
        lock(&self.errors).clone()
    }

    pub fn error_total(&self) -> u64 {
        lock(&self.errors).values().sum()
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles() {
        let h = Hist::default();
        for us in 1..=1000 {
            h.record_us(us * 10);
        }
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert!((s.p50_ms - 5.0).abs() < 0.01, "{s:?}");
        assert!((s.p99_ms - 9.9).abs() < 0.01, "{s:?}");
        assert!((s.max_ms - 10.0).abs() < 0.01, "{s:?}");
        h.record(Duration::from_secs(3600));
        assert!(h.summary().max_ms >= 59_000.0);
        assert_eq!(Hist::default().summary(), LatencySummary::default());
    }

    #[test]
    fn spans_are_kept_up_to_the_cap_and_recorded_as_latency() {
        let h = Hist::with_span_cap(2);
        h.record_span(1_000_000, 3_000_000);
        h.record(Duration::from_millis(4));
        h.record_span(5_000_000, 6_000_000);
        h.record_span(7_000_000, 17_000_000);
        assert_eq!(
            h.take_spans(),
            vec![(1_000_000, 3_000_000), (5_000_000, 6_000_000)]
        );
        assert!(h.take_spans().is_empty());
        let s = h.summary();
        assert_eq!(s.count, 4);
        assert!((s.max_ms - 10.0).abs() < 0.01, "{s:?}");
        assert!((s.p50_ms - 2.0).abs() < 0.01, "{s:?}");
        let full = Hist::with_span_cap(0);
        full.record_span(0, 1_000);
        assert!(full.take_spans().is_empty());
        assert_eq!(full.summary().count, 1);
    }

    #[test]
    fn timeline_keeps_first_send_and_full_fanout() {
        let t = Timeline::new(3);
        t.mark_sent(1, 1_000);
        t.mark_sent(1, 5_000);
        assert_eq!(t.sent_at(1), Some(1_000));
        assert_eq!(t.sent_at(2), None);
        assert_eq!(t.highest_sent(), 1);
        assert_eq!(t.sent_at(99), None);
        t.spectator_got(1, 4_000);
        t.spectator_got(1, 2_000);
        assert_eq!(t.full_fanout(3), vec![]);
        assert_eq!(t.full_fanout(2), vec![Duration::from_nanos(3_000)]);
    }

    #[test]
    fn errors_by_code() {
        let m = Metrics::default();
        m.error("illegal_move");
        m.error("illegal_move");
        m.error("io");
        assert_eq!(m.error_total(), 3);
        assert_eq!(m.errors().get("illegal_move"), Some(&2));
    }
}
