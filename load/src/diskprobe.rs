//! The disk's own flush latency during a run (`--disk-probe DIR`): the yardstick for durable
//! commits, as the relay is for the network. chuhe acknowledges a move only after its commit
//! is on disk (an `fdatasync` of SQLite's or PostgreSQL's log), so a stall of the disk shows up
//! in chuhe's move acknowledgements whatever chuhe does; the probe measures those stalls beside
//! the run, outside chuhe.
//!
//! A thread of its own writes 8 KiB at the next 4 KiB-aligned offset of a preallocated 1 MiB
//! file in DIR and `fdatasync`s it, once per interval, like a database's write-ahead log (a
//! preallocated file, so a flush needs no metadata). The file is removed when the probe ends.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::metrics::{Hist, LatencySummary, Span};

const FILE_BYTES: u64 = 1 << 20;
const WRITE_BYTES: usize = 8 << 10;
const STEP: u64 = 4 << 10;
/// A flush slower than this is counted as a stall.
const STALL: Duration = Duration::from_millis(10);

/// What the probe saw: the latency of one 8 KiB write and its `fdatasync`.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct DiskFlush {
    /// The directory probed (its file system and device are what is measured).
    pub dir: String,
    /// The interval between two probes, in milliseconds.
    pub every_ms: u64,
    pub flush: LatencySummary,
    /// Flushes slower than 10 ms.
    pub above_10ms: u64,
    /// Time spent in those flushes beyond their first 10 ms, in milliseconds: a commit that
    /// starts during a stalled flush waits for the rest of it, so this (not a percentile of the
    /// probes, which take one sample per stall) is how long in the run a commit starting then
    /// could not finish within 10 ms.
    pub stalled_ms: f64,
    /// `stalled_ms` as a fraction of the time probed.
    pub stalled_fraction: f64,
    /// Write or flush errors (the probe goes on after one).
    pub errors: u64,
    /// The run's move latencies without the moves a stall overlapped ([`DiskFlush::outside_stalls`]),
    /// filled in when the run is over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outside_stalls: Option<OutsideStalls>,
    /// The stalls seen, in the order they happened: from one probe interval before a flush
    /// slower than 10 ms began (the disk may have stalled up to one interval before the probe
    /// started its flush) to the flush's end.
    #[serde(skip)]
    pub stalls: Vec<(Instant, Instant)>,
}

/// The move latencies of a run once the moves that a disk stall overlapped are left out: what
/// the server and the network gave while the disk was not stalled. A move counts as overlapped
/// when its span (sent to acknowledged, or sent to the opponent's receipt) meets a stall;
/// moves delayed by the backlog a stall left behind are kept.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct OutsideStalls {
    /// Stalls (see [`DiskFlush::stalls`]) after merging those that overlap.
    pub stalls: u64,
    /// Their total length, in milliseconds.
    pub stalls_ms: f64,
    /// Acknowledged moves whose span met a stall (left out of `move_ack`).
    pub move_ack_overlapping: u64,
    pub move_ack: LatencySummary,
    /// Opponent deliveries whose span met a stall (left out of `opponent_delivery`).
    pub opponent_delivery_overlapping: u64,
    pub opponent_delivery: LatencySummary,
    /// Samples recorded beyond what the run kept spans of (`chuhe_load::metrics::SPAN_CAP`),
    /// not in the figures above.
    pub not_kept: u64,
}

impl DiskFlush {
    /// Splits a run's move samples by the stalls this probe saw. `epoch` is the run's epoch
    /// (the spans are ns since it); `recorded` the numbers of acknowledgements and opponent
    /// deliveries recorded (more than the spans when the run outgrew the cap).
    pub fn outside_stalls(
        &self,
        epoch: Instant,
        ack: &[Span],
        opponent: &[Span],
        recorded: u64,
    ) -> OutsideStalls {
        let ns = |t: Instant| {
            u64::try_from(t.saturating_duration_since(epoch).as_nanos()).unwrap_or(u64::MAX)
        };
        let stalls = merge(self.stalls.iter().map(|&(a, b)| (ns(a), ns(b))));
        let (move_ack_overlapping, move_ack) = split(&stalls, ack);
        let (opponent_delivery_overlapping, opponent_delivery) = split(&stalls, opponent);
        OutsideStalls {
            stalls: stalls.len() as u64,
            stalls_ms: stalls.iter().map(|(a, b)| b - a).sum::<u64>() as f64 / 1e6,
            move_ack_overlapping,
            move_ack,
            opponent_delivery_overlapping,
            opponent_delivery,
            not_kept: recorded.saturating_sub((ack.len() + opponent.len()) as u64),
        }
    }
}

/// Sorted, non-overlapping intervals from intervals sorted by their start.
fn merge(intervals: impl Iterator<Item = Span>) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    for (a, b) in intervals {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// How many of `spans` meet one of `stalls` (sorted, non-overlapping), and the latencies of
/// the others.
fn split(stalls: &[Span], spans: &[Span]) -> (u64, LatencySummary) {
    let clear = Hist::default();
    let mut overlapping = 0;
    for &(start, end) in spans {
        // The first stall that ends at or after the span starts; the span meets it if it
        // starts by the span's end.
        let i = stalls.partition_point(|s| s.1 < start);
        if stalls.get(i).is_some_and(|s| s.0 <= end) {
            overlapping += 1;
        } else {
            clear.record_us(end.saturating_sub(start) / 1000);
        }
    }
    (overlapping, clear.summary())
}

/// A running probe; [`DiskProbe::finish`] stops it and reports.
pub struct DiskProbe {
    /// Dropped to stop the probe: its thread waits on the other end between two probes.
    stop: mpsc::Sender<()>,
    thread: JoinHandle<DiskFlush>,
}

/// Why the probe could not start.
#[derive(Debug, thiserror::Error)]
#[error("disk probe in {dir}: {what}")]
pub struct ProbeError {
    dir: String,
    what: &'static str,
    source: std::io::Error,
}

impl DiskProbe {
    /// Creates the probe's file in `dir` and starts probing every `every` (the first probe at
    /// once; [`finish`] waits for it, so a report always holds a figure).
    ///
    /// [`finish`]: DiskProbe::finish
    pub fn start(dir: &Path, every: Duration) -> Result<Self, ProbeError> {
        let err = |what| {
            let dir = dir.display().to_string();
            move |source| ProbeError { dir, what, source }
        };
        let path: PathBuf = dir.join(format!(".chuhe-load-disk-probe-{}", std::process::id()));
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(err("creating the probe file"))?;
        let prepared = file
            .write_all_at(&vec![0; FILE_BYTES as usize], 0)
            .and_then(|()| file.sync_all());
        if let Err(e) = prepared {
            let _ = std::fs::remove_file(&path);
            return Err(err("preallocating the probe file")(e));
        }
        let (stop, stopped) = mpsc::channel();
        let report = DiskFlush {
            dir: dir.display().to_string(),
            every_ms: u64::try_from(every.as_millis()).unwrap_or(u64::MAX),
            ..DiskFlush::default()
        };
        let thread = std::thread::Builder::new()
            .name("disk-probe".into())
            .spawn(move || probe(file, path, every, &stopped, report))
            .map_err(err("starting the probe thread"))?;
        Ok(Self { stop, thread })
    }

    /// Stops the probe (after at least one flush) and reports what it measured.
    pub fn finish(self) -> DiskFlush {
        drop(self.stop);
        self.thread.join().unwrap_or_default()
    }
}

fn probe(
    file: File,
    path: PathBuf,
    every: Duration,
    stopped: &mpsc::Receiver<()>,
    mut report: DiskFlush,
) -> DiskFlush {
    let hist = Hist::default();
    let block = vec![0x5a; WRITE_BYTES];
    let mut offset = 0;
    let probing = Instant::now();
    loop {
        let started = Instant::now();
        match file
            .write_all_at(&block, offset)
            .and_then(|()| file.sync_data())
        {
            Ok(()) => {
                let ended = Instant::now();
                let took = ended - started;
                hist.record(took);
                if took > STALL {
                    report.above_10ms += 1;
                    report.stalled_ms += (took - STALL).as_secs_f64() * 1000.0;
                    let from = started.checked_sub(every).unwrap_or(started);
                    report.stalls.push((from, ended));
                }
            }
            Err(_) => report.errors += 1,
        }
        offset = (offset + STEP) % (FILE_BYTES - WRITE_BYTES as u64);
        // The next probe is due after `every`, unless the probe is stopped first.
        match stopped.recv_timeout(every.saturating_sub(started.elapsed())) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    drop(file);
    let _ = std::fs::remove_file(&path);
    report.flush = hist.summary();
    let probed_ms = probing.elapsed().as_secs_f64() * 1000.0;
    if probed_ms > 0.0 {
        report.stalled_fraction = report.stalled_ms / probed_ms;
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn a_probe_reports_at_least_one_flush_and_removes_its_file() -> TestResult {
        let dir = tempfile::tempdir()?;
        let probe = DiskProbe::start(dir.path(), Duration::from_millis(1))?;
        let report = probe.finish();
        assert!(report.flush.count >= 1, "{report:?}");
        assert_eq!(report.errors, 0);
        assert!((0.0..=1.0).contains(&report.stalled_fraction), "{report:?}");
        assert_eq!(report.every_ms, 1);
        assert_eq!(report.dir, dir.path().display().to_string());
        assert_eq!(std::fs::read_dir(dir.path())?.count(), 0);
        Ok(())
    }

    #[test]
    fn overlapping_stalls_merge() {
        let m = merge([(0, 10), (5, 20), (20, 30), (40, 50), (45, 48)].into_iter());
        assert_eq!(m, vec![(0, 30), (40, 50)]);
        assert!(merge(std::iter::empty()).is_empty());
    }

    #[test]
    fn spans_meeting_a_stall_are_left_out() {
        const MS: u64 = 1_000_000;
        let stalls = [(100 * MS, 200 * MS), (500 * MS, 600 * MS)];
        let spans = [
            (10 * MS, 12 * MS),   // before: kept, 2 ms
            (95 * MS, 150 * MS),  // runs into the first stall
            (150 * MS, 160 * MS), // inside it
            (199 * MS, 230 * MS), // starts in it
            (200 * MS, 203 * MS), // starts at its very end: meets it
            (201 * MS, 204 * MS), // just after: kept, 3 ms
            (300 * MS, 700 * MS), // spans the second stall whole
            (700 * MS, 704 * MS), // after both: kept, 4 ms
        ];
        let (overlapping, clear) = split(&stalls, &spans);
        assert_eq!(overlapping, 5);
        assert_eq!(clear.count, 3);
        assert!((clear.max_ms - 4.0).abs() < 0.01, "{clear:?}");
        let (none, all) = split(&[], &spans);
        assert_eq!((none, all.count), (0, 8));
    }

    #[test]
    fn stalls_are_placed_on_the_runs_clock() {
        let epoch = Instant::now();
        let at = |ms: u64| epoch + Duration::from_millis(ms);
        let flush = DiskFlush {
            stalls: vec![(at(100), at(150)), (at(140), at(160)), (at(400), at(420))],
            ..DiskFlush::default()
        };
        const MS: u64 = 1_000_000;
        let ack = [
            (10 * MS, 11 * MS),
            (155 * MS, 170 * MS),
            (300 * MS, 302 * MS),
        ];
        let opponent = [(410 * MS, 412 * MS)];
        let o = flush.outside_stalls(epoch, &ack, &opponent, 6);
        assert_eq!(o.stalls, 2);
        assert!((o.stalls_ms - 80.0).abs() < 1e-6, "{o:?}");
        assert_eq!((o.move_ack_overlapping, o.move_ack.count), (1, 2));
        assert!((o.move_ack.max_ms - 2.0).abs() < 0.01, "{o:?}");
        assert_eq!(
            (o.opponent_delivery_overlapping, o.opponent_delivery.count),
            (1, 0)
        );
        assert_eq!(o.not_kept, 2);
        // A stall before the run's epoch starts at its epoch.
        let early = DiskFlush {
            stalls: vec![(epoch, at(20))],
            ..DiskFlush::default()
        };
        let later = epoch + Duration::from_millis(5);
        let o = early.outside_stalls(later, &[(0, MS)], &[], 1);
        assert!((o.stalls_ms - 15.0).abs() < 1e-6, "{o:?}");
        assert_eq!(o.move_ack_overlapping, 1);
    }

    #[test]
    fn a_missing_directory_is_refused_with_the_reason() -> TestResult {
        let dir = tempfile::tempdir()?;
        let missing = dir.path().join("nope");
        let Err(e) = DiskProbe::start(&missing, Duration::from_millis(10)) else {
            return Err("started in a missing directory".into());
        };
        let text = e.to_string();
        assert!(text.contains("creating the probe file"), "{text}");
        assert!(text.contains("nope"), "{text}");
        Ok(())
    }
}
