//! CPU time and memory of a process (the server under test), read from `/proc/<pid>/stat` and
//! `/proc/<pid>/status` (Linux only; elsewhere sampling reports nothing).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::watch;

/// Kernel clock ticks per second for `utime`/`stime`. `USER_HZ` is fixed at 100 in the Linux
/// user-space ABI on every architecture this runs on (x86-64, arm64); reading it with
/// `sysconf(_SC_CLK_TCK)` would need `unsafe`, which this workspace forbids.
const TICKS_PER_SECOND: f64 = 100.0;

/// One reading of a process.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sample {
    /// User + system CPU time, seconds.
    pub cpu_s: f64,
    /// Resident set now, KiB.
    pub rss_kib: u64,
    /// Peak resident set over the process's life, KiB.
    pub hwm_kib: u64,
    pub threads: u64,
}

/// Why a process could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    #[error("cannot read /proc/{pid}: {source}")]
    Io {
        pid: u32,
        #[source]
        source: std::io::Error,
    },
    #[error("unexpected format of /proc/{pid}/{file}")]
    Format { pid: u32, file: &'static str },
}

/// Parses the `utime` and `stime` fields (14 and 15) of `/proc/<pid>/stat`, in ticks.
pub fn parse_stat(stat: &str) -> Option<(u64, u64)> {
    // The command name (field 2) is in parentheses and may contain spaces and ')'; the fields
    // after the last ')' start with field 3 (state).
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    let utime = f.nth(11)?.parse().ok()?;
    let stime = f.next()?.parse().ok()?;
    Some((utime, stime))
}

/// Reads `VmRSS`, `VmHWM` (KiB) and `Threads` from `/proc/<pid>/status`.
pub fn parse_status(status: &str) -> Option<(u64, u64, u64)> {
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line[name.len()..].split_whitespace().next()?.parse().ok()
    };
    Some((field("VmRSS:")?, field("VmHWM:")?, field("Threads:")?))
}

/// Reads one sample of `pid`.
pub fn sample(pid: u32) -> Result<Sample, ProcError> {
    let read = |file: &'static str| {
        std::fs::read_to_string(format!("/proc/{pid}/{file}"))
            .map_err(|source| ProcError::Io { pid, source })
    };
    let (utime, stime) =
        parse_stat(&read("stat")?).ok_or(ProcError::Format { pid, file: "stat" })?;
    let (rss_kib, hwm_kib, threads) = parse_status(&read("status")?).ok_or(ProcError::Format {
        pid,
        file: "status",
    })?;
    Ok(Sample {
        cpu_s: (utime + stime) as f64 / TICKS_PER_SECOND,
        rss_kib,
        hwm_kib,
        threads,
    })
}

/// What a run says about a process.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ProcReport {
    pub pid: u32,
    /// CPU seconds used during the measured window.
    pub cpu_s: f64,
    /// Average CPU use during the window, in cores (1.0 = one core busy).
    pub cpu_cores: f64,
    pub rss_start_kib: u64,
    /// Largest resident set seen during the window.
    pub rss_peak_kib: u64,
    /// Resident set when the scenario had all its connections open.
    pub rss_connected_kib: u64,
    /// (rss_connected - rss_start) / connections, bytes; 0 when unknown.
    pub rss_per_connection_bytes: u64,
    /// CPU seconds used from the first connect until every client had joined (connect,
    /// authentication, subscription and its snapshot); 0 when unknown.
    pub join_cpu_s: f64,
    /// `join_cpu_s` per joined connection, microseconds; 0 when unknown.
    pub cpu_per_join_us: f64,
    /// (rss_connected - the resident set when the clients began to connect) / connections,
    /// bytes: the sockets and subscriptions alone, without what setting up the accounts and
    /// games left resident; 0 when unknown.
    pub rss_per_joined_connection_bytes: u64,
    pub hwm_kib: u64,
    pub threads_peak: u64,
    pub samples: u64,
}

#[derive(Default)]
struct SamplerState {
    start: Option<(Instant, Sample)>,
    last: Option<(Instant, Sample)>,
    peak_rss: u64,
    peak_threads: u64,
    connected: Option<(Sample, u64)>,
    /// The reading when the clients began to connect.
    joining: Option<Sample>,
    /// CPU seconds from `joining` to the first "all connected", and the connections then.
    joined: Option<(f64, u64)>,
    samples: u64,
}

/// Samples a process in the background until stopped.
pub struct Sampler {
    pid: u32,
    state: Arc<Mutex<SamplerState>>,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Sampler {
    /// Starts sampling `pid` every `every`; fails at once if the process cannot be read.
    pub fn start(pid: u32, every: Duration) -> Result<Self, ProcError> {
        let first = sample(pid)?;
        let now = Instant::now();
        let state = Arc::new(Mutex::new(SamplerState {
            start: Some((now, first)),
            last: Some((now, first)),
            peak_rss: first.rss_kib,
            peak_threads: first.threads,
            connected: None,
            joining: None,
            joined: None,
            samples: 1,
        }));
        let (stop, mut stopped) = watch::channel(false);
        let st = Arc::clone(&state);
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = stopped.changed() => break,
                }
                // A process that exited stops the sampling; the report keeps what was seen.
                let Ok(s) = sample(pid) else { break };
                let mut g = lock(&st);
                g.peak_rss = g.peak_rss.max(s.rss_kib);
                g.peak_threads = g.peak_threads.max(s.threads);
                g.last = Some((Instant::now(), s));
                g.samples += 1;
            }
        });
        Ok(Self {
            pid,
            state,
            stop,
            task,
        })
    }

    /// Takes a reading now and remembers it as "the clients begin to connect".
    pub fn mark_joining(&self) {
        if let Ok(s) = sample(self.pid) {
            lock(&self.state).joining = Some(s);
        }
    }

    /// Takes a reading now and remembers it as "all `connections` open". The first call after
    /// [`mark_joining`](Self::mark_joining) also ends the join phase's CPU count.
    pub fn mark_connected(&self, connections: u64) {
        if let Ok(s) = sample(self.pid) {
            let mut g = lock(&self.state);
            g.peak_rss = g.peak_rss.max(s.rss_kib);
            g.connected = Some((s, connections));
            if g.joined.is_none()
                && let Some(j) = g.joining
            {
                g.joined = Some(((s.cpu_s - j.cpu_s).max(0.0), connections));
            }
        }
    }

    /// Stops sampling and reports.
    pub async fn finish(self) -> ProcReport {
        let _ = self.stop.send(true);
        let _ = self.task.await;
        if let Ok(s) = sample(self.pid) {
            let mut g = lock(&self.state);
            g.peak_rss = g.peak_rss.max(s.rss_kib);
            g.peak_threads = g.peak_threads.max(s.threads);
            g.last = Some((Instant::now(), s));
            g.samples += 1;
        }
        let g = lock(&self.state);
        let (Some((t0, s0)), Some((t1, s1))) = (g.start, g.last) else {
            return ProcReport::default();
        };
        let cpu_s = (s1.cpu_s - s0.cpu_s).max(0.0);
        let wall = t1.duration_since(t0).as_secs_f64();
        let (rss_connected_kib, per_conn) = match g.connected {
            Some((s, n)) if n > 0 => (s.rss_kib, s.rss_kib.saturating_sub(s0.rss_kib) * 1024 / n),
            Some((s, _)) => (s.rss_kib, 0),
            None => (0, 0),
        };
        let rss_per_joined_connection_bytes = match (g.joining, g.connected) {
            (Some(j), Some((s, n))) if n > 0 => s.rss_kib.saturating_sub(j.rss_kib) * 1024 / n,
            _ => 0,
        };
        let (join_cpu_s, cpu_per_join_us) = match g.joined {
            Some((cpu, n)) if n > 0 => (cpu, cpu * 1e6 / n as f64),
            Some((cpu, _)) => (cpu, 0.0),
            None => (0.0, 0.0),
        };
        ProcReport {
            pid: self.pid,
            cpu_s,
            cpu_cores: if wall > 0.0 { cpu_s / wall } else { 0.0 },
            rss_start_kib: s0.rss_kib,
            rss_peak_kib: g.peak_rss,
            rss_connected_kib,
            rss_per_connection_bytes: per_conn,
            join_cpu_s,
            cpu_per_join_us,
            rss_per_joined_connection_bytes,
            hwm_kib: s1.hwm_kib,
            threads_peak: g.peak_threads,
            samples: g.samples,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_a_tricky_command_name() {
        let stat = "4242 (we ird) (x)) S 1 4242 4242 0 -1 4194560 500 0 0 0 \
                    1234 567 0 0 20 0 3 0 100 1000000 250 18446744073709551615";
        assert_eq!(parse_stat(stat), Some((1234, 567)));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) S 1 2"), None);
    }

    #[test]
    fn status_fields() {
        let status = "Name:\tchuhe\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\nThreads:\t3\n";
        assert_eq!(parse_status(status), Some((10240, 20480, 3)));
        assert_eq!(parse_status("Name:\tx\n"), None);
    }

    #[test]
    fn reads_this_process() -> Result<(), ProcError> {
        let s = sample(std::process::id())?;
        assert!(
            s.rss_kib > 0 && s.hwm_kib >= s.rss_kib && s.threads >= 1,
            "{s:?}"
        );
        assert!(matches!(sample(u32::MAX), Err(ProcError::Io { .. })));
        Ok(())
    }
}
