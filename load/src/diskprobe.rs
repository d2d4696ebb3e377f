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

use crate::metrics::{Hist, LatencySummary};

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
                let took = started.elapsed();
                hist.record(took);
                if took > STALL {
                    report.above_10ms += 1;
                    report.stalled_ms += (took - STALL).as_secs_f64() * 1000.0;
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
