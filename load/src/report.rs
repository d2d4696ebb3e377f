//! What a run reports: one JSON document and a human summary; and the chuhe/relay comparison.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use serde::Serialize;

use crate::client::Ctx;
use crate::diskprobe::{DiskFlush, OutsideStalls};
use crate::metrics::{Hist, LatencySummary, Metrics, Span};
use crate::procstat::ProcReport;
use crate::scenario::{Phase, RunOptions, Scenario};
use crate::target::{Target, TargetKind};

/// The machine a figure was taken on.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Machine {
    pub cpus: usize,
    pub cpu_model: String,
    pub kernel: String,
    pub mem_total_kib: u64,
    /// The loopback's packet steering when it is on (`rps_cpus` of its queue not all zero):
    /// it moves the receiving half of every frame to another core and changes what a run
    /// measures (`docs/bench/findings-perf.md`). `None` when it is off or unreadable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loopback_steering: Option<String>,
}

/// The loopback's packet steering as the summary names it, from the queue's `rps_cpus` (a hex
/// CPU mask, in comma-separated words) and `rps_sock_flow_entries`; `None` when the mask is
/// empty or all zero, or not a mask.
pub fn loopback_steering(rps_cpus: &str, flow_entries: &str) -> Option<String> {
    let mask = rps_cpus.trim();
    let on = !mask.is_empty()
        && mask
            .split(',')
            .all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_hexdigit()))
        && mask.chars().any(|c| c != ',' && c != '0');
    on.then(|| {
        let flows = flow_entries.trim();
        if flows.is_empty() || flows == "0" {
            format!("rps_cpus {mask}")
        } else {
            format!("rps_cpus {mask}, rps_sock_flow_entries {flows}")
        }
    })
}

/// Reads the machine description from `/proc` (empty fields where unreadable).
pub fn machine() -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_default();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_total_kib = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    Machine {
        cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
        cpu_model,
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_owned())
            .unwrap_or_default(),
        mem_total_kib,
        loopback_steering: std::fs::read_to_string("/sys/class/net/lo/queues/rx-0/rps_cpus")
            .ok()
            .and_then(|mask| {
                let flows = std::fs::read_to_string("/proc/sys/net/core/rps_sock_flow_entries")
                    .unwrap_or_default();
                loopback_steering(&mask, &flows)
            }),
    }
}

/// Counts of what the clients saw.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Counts {
    pub clients: u64,
    pub connected: u64,
    pub connect_failed: u64,
    pub disconnected: u64,
    pub reconnects: u64,
    pub games_started: u64,
    pub games_completed: u64,
    pub moves_sent: u64,
    pub moves_acked: u64,
    pub deliveries: u64,
    /// Moves a connected client never got: must be 0.
    pub missing: u64,
    /// Moves lost around a deliberate reconnect and not replayed (the relay keeps no history).
    pub missing_after_reconnect: u64,
    pub seq_gaps: u64,
    pub duplicates: u64,
    /// With a fault: games under way at it that never had a move acknowledged afterwards.
    pub failover_not_resumed: u64,
}

/// Latency figures.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Latencies {
    /// A player's move to its acknowledgement.
    pub move_ack: LatencySummary,
    /// A player's move to the opponent's receipt.
    pub opponent_delivery: LatencySummary,
    /// A move to one spectator's receipt (every spectator counts).
    pub spectator_delivery: LatencySummary,
    /// A move to its receipt by the last spectator of the board (fan-out).
    pub fanout_all: LatencySummary,
    pub connect: LatencySummary,
    pub reconnect: LatencySummary,
    /// With a fault (`--fault`): from it to each game's first acknowledged move after it, for
    /// every game under way at the fault…
    pub failover: LatencySummary,
    /// …and for those with a player connected to the faulted node.
    pub failover_faulted_node: LatencySummary,
}

/// One run's result.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub scenario: Scenario,
    pub target: TargetKind,
    pub url: String,
    pub options: RunOptions,
    pub started_unix: u64,
    pub wall_s: f64,
    /// Seconds until every client had joined or failed.
    pub all_connected_s: f64,
    /// From "go" to the last acknowledgement.
    pub move_phase_s: f64,
    pub moves_per_s: f64,
    pub deliveries_per_s: f64,
    pub latency: Latencies,
    pub counts: Counts,
    pub errors: BTreeMap<String, u64>,
    pub server: Option<ProcReport>,
    pub load: ProcReport,
    pub fd_limit: u64,
    pub machine: Machine,
    /// The disk's flush latency during the run (`--disk-probe`), when probed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_flush: Option<DiskFlush>,
    /// `fanout` only: each ply's time to reach every spectator, ms, in ply order (which move
    /// made the p99 — the first, or one the disk or the machine stalled).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fanout_each_ms: Vec<f64>,
    /// The move samples' spans, for [`Report::attach_disk_flush`]; not in the JSON.
    #[serde(skip)]
    pub spans: MoveSpans,
}

/// When each acknowledged move and each opponent delivery began and ended.
#[derive(Clone, Debug)]
pub struct MoveSpans {
    /// The run's epoch: the spans are ns since it.
    pub epoch: Instant,
    pub ack: Vec<Span>,
    pub opponent: Vec<Span>,
}

impl Report {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        scenario: &Scenario,
        target: &Target,
        options: &RunOptions,
        ctx: &Ctx,
        phase: Phase,
        clients: usize,
        started: Instant,
        started_unix: u64,
        fd_limit: u64,
        server: Option<ProcReport>,
        load: ProcReport,
        machine: Machine,
    ) -> Self {
        let m: &Metrics = &ctx.metrics;
        let fanout_all = Hist::default();
        let mut fanout_each_ms = Vec::new();
        if let Scenario::Fanout { spectators, .. } = scenario {
            for t in ctx.fanout.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                for d in t.full_fanout(*spectators as u64) {
                    fanout_all.record(d);
                    fanout_each_ms.push((d.as_secs_f64() * 1e4).round() / 10.0);
                }
            }
        }
        let move_phase_s = phase.end_ns.saturating_sub(phase.go_ns) as f64 / 1e9;
        let acked = Metrics::get(&m.moves_acked);
        let deliveries = Metrics::get(&m.deliveries);
        let rate = |n: u64| {
            if move_phase_s > 0.0 {
                n as f64 / move_phase_s
            } else {
                0.0
            }
        };
        Self {
            scenario: scenario.clone(),
            target: target.kind(),
            url: target.url().to_owned(),
            options: options.clone(),
            started_unix,
            wall_s: started.elapsed().as_secs_f64(),
            all_connected_s: phase.all_connected_s,
            move_phase_s,
            moves_per_s: rate(acked),
            deliveries_per_s: rate(deliveries),
            latency: Latencies {
                move_ack: m.ack.summary(),
                opponent_delivery: m.opponent.summary(),
                spectator_delivery: m.spectator.summary(),
                fanout_all: fanout_all.summary(),
                connect: m.connect.summary(),
                reconnect: m.reconnect.summary(),
                failover: m.failover.summary(),
                failover_faulted_node: m.failover_node.summary(),
            },
            counts: Counts {
                clients: clients as u64,
                connected: Metrics::get(&m.connected),
                connect_failed: Metrics::get(&m.connect_failed),
                disconnected: Metrics::get(&m.disconnected),
                reconnects: Metrics::get(&m.reconnects),
                games_started: Metrics::get(&m.games_started),
                games_completed: Metrics::get(&m.games_completed) / 2,
                moves_sent: Metrics::get(&m.moves_sent),
                moves_acked: acked,
                deliveries,
                missing: Metrics::get(&m.missing),
                missing_after_reconnect: Metrics::get(&m.missing_after_reconnect),
                seq_gaps: Metrics::get(&m.seq_gaps),
                duplicates: Metrics::get(&m.duplicates),
                failover_not_resumed: Metrics::get(&m.failover_not_resumed),
            },
            errors: m.errors(),
            server,
            load,
            fd_limit,
            machine,
            disk_flush: None,
            fanout_each_ms,
            spans: MoveSpans {
                epoch: ctx.epoch.instant(),
                ack: m.ack.take_spans(),
                opponent: m.opponent.take_spans(),
            },
        }
    }

    /// Adds what the disk probe saw beside this run, with the move latencies outside its
    /// stalls (the spans are used up).
    pub fn attach_disk_flush(&mut self, mut flush: DiskFlush) {
        let l = &self.latency;
        flush.outside_stalls = Some(flush.outside_stalls(
            self.spans.epoch,
            &std::mem::take(&mut self.spans.ack),
            &std::mem::take(&mut self.spans.opponent),
            l.move_ack.count + l.opponent_delivery.count,
        ));
        self.disk_flush = Some(flush);
    }

    /// True when nothing went wrong: every client joined, no errors, nothing missing.
    pub fn clean(&self) -> bool {
        self.errors.is_empty()
            && self.counts.connect_failed == 0
            && self.counts.disconnected == 0
            && self.counts.missing == 0
    }

    /// The human summary.
    pub fn human(&self) -> String {
        let mut s = String::new();
        let c = &self.counts;
        let _ = writeln!(
            s,
            "{} against {} ({}) — {:.1} s wall, clients {} joined {} failed {}",
            self.scenario_name(),
            target_name(self.target),
            self.url,
            self.wall_s,
            c.clients,
            c.connected,
            c.connect_failed
        );
        let _ = writeln!(
            s,
            "  moves: {} acked / {} sent in {:.2} s = {:.0} moves/s; deliveries {:.0}/s",
            c.moves_acked, c.moves_sent, self.move_phase_s, self.moves_per_s, self.deliveries_per_s
        );
        let _ = writeln!(
            s,
            "  games: {} started, {} completed; all clients in after {:.2} s",
            c.games_started, c.games_completed, self.all_connected_s
        );
        let _ = writeln!(
            s,
            "  latency ms         count      p50      p90      p99    p99.9      max"
        );
        let l = &self.latency;
        for (name, h) in [
            ("move ack", &l.move_ack),
            ("opponent delivery", &l.opponent_delivery),
            ("spectator delivery", &l.spectator_delivery),
            ("fan-out to all", &l.fanout_all),
            ("connect", &l.connect),
            ("reconnect", &l.reconnect),
            ("failover (games)", &l.failover),
            ("failover (on node)", &l.failover_faulted_node),
        ] {
            if h.count > 0 {
                let _ = writeln!(
                    s,
                    "  {name:<18} {:>6} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
                    h.count, h.p50_ms, h.p90_ms, h.p99_ms, h.p999_ms, h.max_ms
                );
            }
        }
        let _ = writeln!(
            s,
            "  missing {} (after reconnect {}), seq gaps {}, duplicates {}, disconnected {}, reconnects {}",
            c.missing,
            c.missing_after_reconnect,
            c.seq_gaps,
            c.duplicates,
            c.disconnected,
            c.reconnects
        );
        if self.options.fault.is_some() {
            let _ = writeln!(s, "  fault: games never resumed {}", c.failover_not_resumed);
        }
        if self.errors.is_empty() {
            let _ = writeln!(s, "  errors: none");
        } else {
            let list: Vec<String> = self
                .errors
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let _ = writeln!(s, "  errors: {}", list.join(" "));
        }
        for (who, p) in [("server", self.server.as_ref()), ("load", Some(&self.load))] {
            if let Some(p) = p {
                let _ = writeln!(
                    s,
                    "  {who} pid {}: cpu {:.2} s ({:.2} cores), rss start {} KiB peak {} KiB, {} B/connection",
                    p.pid,
                    p.cpu_s,
                    p.cpu_cores,
                    p.rss_start_kib,
                    p.rss_peak_kib,
                    p.rss_per_connection_bytes
                );
                if p.join_cpu_s > 0.0 {
                    let _ = writeln!(
                        s,
                        "  {who} while joining: cpu {:.2} s, {:.0} us/connection; {} B/connection \
                         from the first connect",
                        p.join_cpu_s, p.cpu_per_join_us, p.rss_per_joined_connection_bytes
                    );
                }
            }
        }
        if let Some(d) = &self.disk_flush {
            let f = &d.flush;
            let _ = writeln!(
                s,
                "  disk flush (8 KiB + fdatasync every {} ms in {}): {} flushes, p50 {:.3} p99 {:.3} \
                 p99.9 {:.3} max {:.3} ms, {} above 10 ms ({:.0} ms, {:.2} % of the run), {} errors",
                d.every_ms,
                d.dir,
                f.count,
                f.p50_ms,
                f.p99_ms,
                f.p999_ms,
                f.max_ms,
                d.above_10ms,
                d.stalled_ms,
                d.stalled_fraction * 100.0,
                d.errors
            );
            if let Some(line) = d.outside_stalls.as_ref().and_then(outside_stalls_line) {
                s.push_str(&line);
            }
        }
        let _ = write!(
            s,
            "  machine: {} cpus, {}, kernel {}; fd limit {}",
            self.machine.cpus, self.machine.cpu_model, self.machine.kernel, self.fd_limit
        );
        if let Some(steering) = &self.machine.loopback_steering {
            let _ = write!(s, "; loopback packet steering on ({steering})");
        }
        s.push('\n');
        s
    }

    fn scenario_name(&self) -> &'static str {
        self.scenario.name()
    }
}

/// The summary's line for the move latencies outside the disk's stalls; none when the run
/// acknowledged no move (nothing to split).
fn outside_stalls_line(o: &OutsideStalls) -> Option<String> {
    let acks = o.move_ack.count + o.move_ack_overlapping;
    (acks > 0).then(|| {
        format!(
            "  outside the disk's stalls ({} stalls, {:.0} ms): move ack p99 {:.3} p99.9 {:.3} \
             max {:.3} ms ({} of {acks} acks left out); opponent p99 {:.3} ms ({} left out)\n",
            o.stalls,
            o.stalls_ms,
            o.move_ack.p99_ms,
            o.move_ack.p999_ms,
            o.move_ack.max_ms,
            o.move_ack_overlapping,
            o.opponent_delivery.p99_ms,
            o.opponent_delivery_overlapping
        )
    })
}

fn target_name(t: TargetKind) -> &'static str {
    match t {
        TargetKind::Relay => "relay",
        TargetKind::Chuhe => "chuhe",
    }
}

/// chuhe's figures next to the relay's from the same invocation.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub relay: Report,
    pub chuhe: Report,
    /// chuhe / relay: higher is better for throughput.
    pub moves_per_s_ratio: Option<f64>,
    /// chuhe / relay: lower is better for latencies.
    pub move_ack_p99_ratio: Option<f64>,
    pub opponent_p99_ratio: Option<f64>,
    pub spectator_p99_ratio: Option<f64>,
    pub fanout_all_p99_ratio: Option<f64>,
    pub fanout_all_max_ratio: Option<f64>,
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0 && a.is_finite()).then(|| a / b)
}

impl Comparison {
    pub fn new(chuhe: Report, relay: Report) -> Self {
        let (c, r) = (&chuhe.latency, &relay.latency);
        Self {
            moves_per_s_ratio: ratio(chuhe.moves_per_s, relay.moves_per_s),
            move_ack_p99_ratio: ratio(c.move_ack.p99_ms, r.move_ack.p99_ms),
            opponent_p99_ratio: ratio(c.opponent_delivery.p99_ms, r.opponent_delivery.p99_ms),
            spectator_p99_ratio: ratio(c.spectator_delivery.p99_ms, r.spectator_delivery.p99_ms),
            fanout_all_p99_ratio: ratio(c.fanout_all.p99_ms, r.fanout_all.p99_ms),
            fanout_all_max_ratio: ratio(c.fanout_all.max_ms, r.fanout_all.max_ms),
            relay,
            chuhe,
        }
    }

    pub fn human(&self) -> String {
        let mut s = self.relay.human();
        s.push_str(&self.chuhe.human());
        let f = |x: Option<f64>| x.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.2}"));
        let _ = writeln!(
            s,
            "chuhe / relay: moves/s {}, move ack p99 {}, opponent p99 {}, spectator p99 {}, \
             fan-out-to-all p99 {} max {}",
            f(self.moves_per_s_ratio),
            f(self.move_ack_p99_ratio),
            f(self.opponent_p99_ratio),
            f(self.spectator_p99_ratio),
            f(self.fanout_all_p99_ratio),
            f(self.fanout_all_max_ratio)
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios() {
        assert_eq!(ratio(50.0, 100.0), Some(0.5));
        assert_eq!(ratio(50.0, 0.0), None);
        assert_eq!(ratio(f64::NAN, 1.0), None);
    }

    #[test]
    fn loopback_steering_is_named_only_when_a_cpu_is_in_the_mask() {
        assert_eq!(loopback_steering("0\n", "0\n"), None);
        assert_eq!(loopback_steering("00000000,00000000\n", "32768\n"), None);
        assert_eq!(loopback_steering("", ""), None);
        assert_eq!(loopback_steering("zz", "0"), None);
        assert_eq!(loopback_steering("3,", "0"), None);
        assert_eq!(
            loopback_steering("2\n", "0\n").as_deref(),
            Some("rps_cpus 2")
        );
        assert_eq!(
            loopback_steering("00000000,00000003\n", "32768\n").as_deref(),
            Some("rps_cpus 00000000,00000003, rps_sock_flow_entries 32768")
        );
    }

    #[test]
    fn the_outside_stalls_line_needs_acknowledged_moves() {
        assert_eq!(outside_stalls_line(&OutsideStalls::default()), None);
        let o = OutsideStalls {
            stalls: 2,
            stalls_ms: 40.0,
            move_ack_overlapping: 3,
            move_ack: LatencySummary {
                count: 97,
                p99_ms: 4.5,
                ..LatencySummary::default()
            },
            ..OutsideStalls::default()
        };
        let line = outside_stalls_line(&o).unwrap_or_default();
        assert!(line.contains("(2 stalls, 40 ms)"), "{line}");
        assert!(line.contains("move ack p99 4.500"), "{line}");
        assert!(line.contains("(3 of 100 acks left out)"), "{line}");
        // Only spans that met a stall (all moves overlapped one) still make a line.
        let all_in_stalls = OutsideStalls {
            move_ack_overlapping: 5,
            ..OutsideStalls::default()
        };
        assert!(outside_stalls_line(&all_in_stalls).is_some());
    }

    #[test]
    fn machine_is_described() {
        let m = machine();
        assert!(m.cpus >= 1);
        assert!(m.mem_total_kib > 0);
    }
}
