//! Test support (feature `test-support`): a throwaway `redis-server` a test starts on a free
//! port of 127.0.0.1, kills and restarts (same port, empty: `--save "" --appendonly no`), so
//! tests never touch the machine's own Redis.
//!
//! ```no_run
//! # fn demo() -> std::io::Result<()> {
//! use chuhe_cluster::testing::ThrowawayRedis;
//! let Some(mut redis) = ThrowawayRedis::start_or_skip("my_test")? else {
//!     return Ok(()); // no redis-server installed: one line on stderr said so
//! };
//! let url = redis.url();
//! redis.kill()?; // SIGKILL, then waits for the process
//! redis.start()?; // the same port, empty
//! # Ok(()) }
//! ```

use std::io;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` of the test's own; killed when dropped.
#[derive(Debug)]
pub struct ThrowawayRedis {
    port: u16,
    child: Option<Child>,
}

impl ThrowawayRedis {
    /// Whether `redis-server` can be run.
    pub fn installed() -> bool {
        Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Starts one on a free port, or prints one stderr line naming `test` and returns `None`
    /// when `redis-server` is not installed.
    pub fn start_or_skip(test: &str) -> io::Result<Option<ThrowawayRedis>> {
        if !Self::installed() {
            use std::io::Write as _;
            let _ = writeln!(
                io::stderr(),
                "skipped: {test} (redis-server is not installed)"
            );
            return Ok(None);
        }
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
            .local_addr()?
            .port();
        let mut redis = ThrowawayRedis { port, child: None };
        redis.start()?;
        Ok(Some(redis))
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Starts the server (again) on its port, empty, and waits (up to 10 s) until it accepts
    /// connections.
    pub fn start(&mut self) -> io::Result<()> {
        if self.child.is_some() {
            return Ok(());
        }
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if TcpStream::connect((Ipv4Addr::LOCALHOST, self.port)).is_ok() {
                return Ok(());
            }
            if let Some(child) = &mut self.child
                && let Some(status) = child.try_wait()?
            {
                self.child = None;
                return Err(io::Error::other(format!(
                    "redis-server on port {} exited: {status}",
                    self.port
                )));
            }
            if Instant::now() > deadline {
                return Err(io::Error::other("redis-server did not start in 10 s"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Freezes the server (SIGSTOP): connections stay open and nothing answers, as with a
    /// hung Redis or a partition. [`ThrowawayRedis::thaw`] resumes it.
    pub fn freeze(&self) -> io::Result<()> {
        self.signal("-STOP")
    }

    /// Resumes a frozen server (SIGCONT).
    pub fn thaw(&self) -> io::Result<()> {
        self.signal("-CONT")
    }

    fn signal(&self, sig: &str) -> io::Result<()> {
        let Some(child) = &self.child else {
            return Err(io::Error::other("redis-server is not running"));
        };
        let status = Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!("kill {sig} failed: {status}")))
        }
    }

    /// Kills the server (SIGKILL: no shutdown, nothing kept) and waits for it to end.
    pub fn kill(&mut self) -> io::Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill()?;
            child.wait()?;
        }
        Ok(())
    }
}

impl Drop for ThrowawayRedis {
    fn drop(&mut self) {
        // A frozen process dies of SIGKILL too.
        let _ = self.kill();
    }
}
