//! Prometheus text metrics, hand-rolled on atomics (no registry crate needed
//! for a handful of counters and two histograms).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use crate::persist::CommitStats;

/// Latency histogram with fixed buckets (seconds). Each observation adds to one bucket (the
/// cumulative Prometheus buckets are summed when rendered), so observing costs two atomic adds
/// however many buckets there are.
#[derive(Debug)]
pub struct Histogram {
    bounds: &'static [f64],
    /// Per bucket, not cumulative: `counts[i]` holds observations in (bounds[i-1], bounds[i]];
    /// the last entry those above every bound.
    counts: Vec<AtomicU64>,
    sum_micros: AtomicU64,
}

const LATENCY_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

impl Histogram {
    fn new() -> Histogram {
        Histogram {
            bounds: LATENCY_BUCKETS,
            counts: (0..=LATENCY_BUCKETS.len())
                .map(|_| AtomicU64::new(0))
                .collect(),
            sum_micros: AtomicU64::new(0),
        }
    }

    pub fn observe(&self, d: Duration) {
        self.observe_n(d, 1);
    }

    /// `n` observations of the same duration (the games of one group commit).
    pub fn observe_n(&self, d: Duration, n: u64) {
        if n == 0 {
            return;
        }
        let s = d.as_secs_f64();
        let i = self
            .bounds
            .iter()
            .position(|b| s <= *b)
            .unwrap_or(self.bounds.len());
        if let Some(c) = self.counts.get(i) {
            c.fetch_add(n, Ordering::Relaxed);
        }
        self.sum_micros
            .fetch_add((d.as_micros() as u64).saturating_mul(n), Ordering::Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (b, c) in self.bounds.iter().zip(&self.counts) {
            cumulative += c.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{b}\"}} {cumulative}");
        }
        let n = cumulative + self.counts.last().map_or(0, |c| c.load(Ordering::Relaxed));
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {n}");
        let _ = writeln!(
            out,
            "{name}_sum {}",
            self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6
        );
        let _ = writeln!(out, "{name}_count {n}");
    }
}

/// All server metrics.
#[derive(Debug)]
pub struct Metrics {
    pub conns_spectator: AtomicI64,
    pub conns_player: AtomicI64,
    pub conns_arbiter: AtomicI64,
    pub conns_organizer: AtomicI64,
    pub live_games: AtomicI64,
    pub moves_total: AtomicU64,
    pub events_total: AtomicU64,
    pub client_errors_total: AtomicU64,
    pub dropped_slow_total: AtomicU64,
    pub rate_limited_closes_total: AtomicU64,
    pub store_errors_total: AtomicU64,
    /// Several nodes: requests relayed to the game's owner node.
    pub cluster_relayed_total: AtomicU64,
    /// Several nodes: relayed requests answered `unavailable` (no answer in time).
    pub cluster_remote_timeouts_total: AtomicU64,
    /// Several nodes: games unloaded here because their lease was lost or a commit fenced.
    pub cluster_games_left_total: AtomicU64,
    pub cluster_fenced_commits_total: AtomicU64,
    /// Several nodes: messages dropped because the publish queue was full.
    pub cluster_publish_dropped_total: AtomicU64,
    /// TCP connections open (HTTP and websocket), counted by the listener's caps.
    pub tcp_connections: AtomicI64,
    /// Connections refused because `max_connections` were open.
    pub refused_total_cap: AtomicU64,
    /// Connections refused because `max_connections_per_address` were open from the address.
    pub refused_per_address: AtomicU64,
    /// Connections closed for sending no whole request head within `handshake_timeout`.
    pub handshake_timeouts_total: AtomicU64,
    pub move_latency: Histogram,
    pub commit_latency: Histogram,
    /// Time to hand one event to every live subscriber of a game with at least
    /// [`FANOUT_OBSERVED`] of them (written to their sockets, or queued).
    pub fanout_latency: Histogram,
}

/// Subscribers a game needs for its events' fan-out to be timed (`fanout_latency`).
pub const FANOUT_OBSERVED: usize = 100;

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            conns_spectator: AtomicI64::new(0),
            conns_player: AtomicI64::new(0),
            conns_arbiter: AtomicI64::new(0),
            conns_organizer: AtomicI64::new(0),
            live_games: AtomicI64::new(0),
            moves_total: AtomicU64::new(0),
            events_total: AtomicU64::new(0),
            client_errors_total: AtomicU64::new(0),
            dropped_slow_total: AtomicU64::new(0),
            rate_limited_closes_total: AtomicU64::new(0),
            store_errors_total: AtomicU64::new(0),
            cluster_relayed_total: AtomicU64::new(0),
            cluster_remote_timeouts_total: AtomicU64::new(0),
            cluster_games_left_total: AtomicU64::new(0),
            cluster_fenced_commits_total: AtomicU64::new(0),
            cluster_publish_dropped_total: AtomicU64::new(0),
            tcp_connections: AtomicI64::new(0),
            refused_total_cap: AtomicU64::new(0),
            refused_per_address: AtomicU64::new(0),
            handshake_timeouts_total: AtomicU64::new(0),
            move_latency: Histogram::new(),
            commit_latency: Histogram::new(),
            fanout_latency: Histogram::new(),
        }
    }
}

impl Metrics {
    /// The Prometheus text of every metric, with the store's group-commit totals when given.
    pub fn render(&self, store: Option<CommitStats>) -> String {
        let mut o = String::with_capacity(4096);
        let _ = writeln!(
            o,
            "# HELP chuhe_connections Open websocket connections by role.\n# TYPE chuhe_connections gauge"
        );
        for (role, v) in [
            ("spectator", &self.conns_spectator),
            ("player", &self.conns_player),
            ("arbiter", &self.conns_arbiter),
            ("organizer", &self.conns_organizer),
        ] {
            let _ = writeln!(
                o,
                "chuhe_connections{{role=\"{role}\"}} {}",
                v.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            o,
            "# HELP chuhe_live_games Games loaded and unfinished.\n# TYPE chuhe_live_games gauge\nchuhe_live_games {}",
            self.live_games.load(Ordering::Relaxed)
        );
        for (name, help, v) in [
            (
                "chuhe_moves_total",
                "Moves played (rate() gives moves/s).",
                &self.moves_total,
            ),
            (
                "chuhe_game_events_total",
                "Game events committed.",
                &self.events_total,
            ),
            (
                "chuhe_client_errors_total",
                "Client requests refused with an error code.",
                &self.client_errors_total,
            ),
            (
                "chuhe_dropped_slow_connections_total",
                "Connections closed as too slow (write queue overflowed, or a write took longer than the write timeout).",
                &self.dropped_slow_total,
            ),
            (
                "chuhe_rate_limited_closes_total",
                "Connections closed for flooding.",
                &self.rate_limited_closes_total,
            ),
            (
                "chuhe_store_errors_total",
                "Failed store commits.",
                &self.store_errors_total,
            ),
            (
                "chuhe_cluster_relayed_total",
                "Several nodes: client requests relayed to the game's owner node.",
                &self.cluster_relayed_total,
            ),
            (
                "chuhe_cluster_remote_timeouts_total",
                "Several nodes: relayed requests answered unavailable (the owner did not answer in time).",
                &self.cluster_remote_timeouts_total,
            ),
            (
                "chuhe_cluster_games_left_total",
                "Several nodes: games unloaded here because their lease was lost or a commit was fenced.",
                &self.cluster_games_left_total,
            ),
            (
                "chuhe_cluster_fenced_commits_total",
                "Several nodes: commits the database refused because another node had claimed the game or league (a stale fencing token).",
                &self.cluster_fenced_commits_total,
            ),
            (
                "chuhe_cluster_publish_dropped_total",
                "Several nodes: messages to other nodes dropped because the publish queue was full.",
                &self.cluster_publish_dropped_total,
            ),
        ] {
            let _ = writeln!(
                o,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}",
                v.load(Ordering::Relaxed)
            );
        }
        let _ = writeln!(
            o,
            "# HELP chuhe_tcp_connections Open TCP connections (HTTP and websocket) under the connection caps.\n# TYPE chuhe_tcp_connections gauge\nchuhe_tcp_connections {}",
            self.tcp_connections.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            o,
            "# HELP chuhe_refused_connections_total Connections refused (503 too_many_connections) by the cap that refused them.\n# TYPE chuhe_refused_connections_total counter\nchuhe_refused_connections_total{{reason=\"total\"}} {}\nchuhe_refused_connections_total{{reason=\"per_address\"}} {}",
            self.refused_total_cap.load(Ordering::Relaxed),
            self.refused_per_address.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            o,
            "# HELP chuhe_handshake_timeouts_total Connections closed for sending no whole request head within the handshake timeout.\n# TYPE chuhe_handshake_timeouts_total counter\nchuhe_handshake_timeouts_total {}",
            self.handshake_timeouts_total.load(Ordering::Relaxed)
        );
        self.move_latency.render(
            &mut o,
            "chuhe_move_processing_seconds",
            "Time from a move's arrival at its game to its acknowledgement (commit included).",
        );
        self.commit_latency.render(
            &mut o,
            "chuhe_store_commit_seconds",
            "Time to durably commit a game's events.",
        );
        self.fanout_latency.render(
            &mut o,
            "chuhe_fanout_seconds",
            "Time to hand one event to every live subscriber of a game with at least 100 (written to their sockets or queued).",
        );
        if let Some(s) = store {
            for (name, help, v) in [
                (
                    "chuhe_store_batches_total",
                    "Group-commit transactions (events_total / batches_total is the mean batch).",
                    s.batches,
                ),
                (
                    "chuhe_store_appends_total",
                    "Appends acknowledged by the group-commit writers.",
                    s.appends,
                ),
                (
                    "chuhe_store_events_total",
                    "Events stored by the group-commit writers.",
                    s.events,
                ),
                (
                    "chuhe_store_refused_total",
                    "Appends refused by the store (seq mismatch, finished or unknown game).",
                    s.refused,
                ),
                (
                    "chuhe_store_failed_total",
                    "Appends whose transaction failed.",
                    s.failed,
                ),
            ] {
                let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}");
            }
            let _ = writeln!(
                o,
                "# HELP chuhe_store_transaction_seconds_total Time inside group-commit transactions.\n# TYPE chuhe_store_transaction_seconds_total counter\nchuhe_store_transaction_seconds_total {}",
                s.commit_micros as f64 / 1e6
            );
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_prometheus_text() {
        let m = Metrics::default();
        m.moves_total.fetch_add(3, Ordering::Relaxed);
        m.move_latency.observe(Duration::from_micros(300));
        let t = m.render(None);
        assert!(t.contains("chuhe_moves_total 3"));
        assert!(!t.contains("chuhe_store_batches_total"));
        let t = m.render(Some(CommitStats {
            batches: 2,
            events: 7,
            commit_micros: 1_500_000,
            ..CommitStats::default()
        }));
        assert!(t.contains("chuhe_store_batches_total 2\n"));
        assert!(t.contains("chuhe_store_events_total 7\n"));
        assert!(t.contains("chuhe_store_transaction_seconds_total 1.5\n"));
        assert!(t.contains("chuhe_move_processing_seconds_bucket{le=\"0.0005\"} 1"));
        assert!(t.contains("chuhe_move_processing_seconds_bucket{le=\"0.00025\"} 0"));
        assert!(t.contains("chuhe_move_processing_seconds_count 1"));
        assert!(t.contains("chuhe_connections{role=\"player\"} 0"));
    }

    #[test]
    fn buckets_are_cumulative_and_count_everything() {
        let h = Histogram::new();
        h.observe(Duration::from_micros(50)); // first bucket
        h.observe_n(Duration::from_millis(3), 4); // (0.0025, 0.005]
        h.observe(Duration::from_secs(9)); // above every bound
        let mut t = String::new();
        h.render(&mut t, "x", "help");
        for (le, n) in [
            ("0.0001", 1),
            ("0.0025", 1),
            ("0.005", 5),
            ("2.5", 5),
            ("+Inf", 6),
        ] {
            assert!(
                t.contains(&format!("x_bucket{{le=\"{le}\"}} {n}\n")),
                "{le}: {t}"
            );
        }
        assert!(t.contains("x_count 6\n"), "{t}");
        assert!(t.contains("x_sum 9.01205\n"), "{t}");
    }
}
