//! Test support (feature `test-support`): a throwaway PostgreSQL server that a test starts, stops
//! abruptly, freezes and starts again, for outage tests that must never touch the machine's own
//! server.
//!
//! ```no_run
//! # fn demo() -> std::io::Result<()> {
//! use chuhe_store::testing::ThrowawayPg;
//! let Some(pg) = ThrowawayPg::start_or_skip("my_outage_test")? else {
//!     return Ok(()); // no PostgreSQL binaries: one line on stderr said so
//! };
//! let url = pg.url(); // postgres://postgres@127.0.0.1:PORT/postgres
//! pg.kill()?; // pg_ctl stop -m immediate: every backend dies at once, no shutdown checkpoint
//! pg.start()?; // crash recovery, same port and data
//! # Ok(()) }
//! ```
//!
//! The server runs `initdb` + `pg_ctl` from the newest `/usr/lib/postgresql/*/bin` (or the
//! directory in `CHUHE_PG_BIN`), in a new directory under the system temp dir, on a free port
//! of 127.0.0.1, with trust authentication for the user `postgres`, and its Unix socket in its
//! own directory. When the test runs as root, the server runs as the `postgres` user (PostgreSQL
//! refuses to run as root). `fsync` is off: the tests stop processes, not the machine, and a
//! commit is in the operating system's cache before it is acknowledged either way. Dropping the
//! handle stops the server (immediately) and deletes its directory.
//!
//! The methods block (they run `pg_ctl` and wait for it): from async code call them inside
//! `tokio::task::spawn_blocking` or `block_in_place`.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A PostgreSQL server of the test's own; see the module docs.
#[derive(Debug)]
pub struct ThrowawayPg {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    /// uid and gid to run the server as (the `postgres` user when the test runs as root).
    run_as: Option<(u32, u32)>,
}

impl ThrowawayPg {
    /// The directory of the PostgreSQL server binaries: `CHUHE_PG_BIN`, or the newest
    /// `/usr/lib/postgresql/<version>/bin` with `initdb` and `pg_ctl`; `None` when there is none.
    pub fn find_binaries() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("CHUHE_PG_BIN") {
            let dir = PathBuf::from(dir);
            return has_binaries(&dir).then_some(dir);
        }
        let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let version = e.file_name().to_str()?.parse::<u32>().ok()?;
                let bin = e.path().join("bin");
                has_binaries(&bin).then_some((version, bin))
            })
            .collect();
        versions.sort();
        versions.pop().map(|(_, bin)| bin)
    }

    /// Creates and starts a server, or, when no PostgreSQL binaries are installed, prints one
    /// line to stderr (`skipped: <test> (<why>)`) and returns `None`.
    pub fn start_or_skip(test: &str) -> io::Result<Option<ThrowawayPg>> {
        let Some(bin) = Self::find_binaries() else {
            use std::io::Write as _;
            let _ = writeln!(
                io::stderr(),
                "skipped: {test} (no PostgreSQL server binaries, initdb and pg_ctl, under \
                 /usr/lib/postgresql/*/bin or CHUHE_PG_BIN)"
            );
            return Ok(None);
        };
        Self::start_with(bin).map(Some)
    }

    /// Creates a cluster with the binaries in `bin` and starts it on a free port.
    pub fn start_with(bin: PathBuf) -> io::Result<ThrowawayPg> {
        let dir = new_dir()?;
        let mut pg = ThrowawayPg {
            bin,
            dir,
            port: 0,
            run_as: None,
        };
        if running_as_root()? {
            let (uid, gid) = postgres_user()?;
            std::os::unix::fs::chown(&pg.dir, Some(uid), Some(gid))?;
            pg.run_as = Some((uid, gid));
        }
        let data = pg.data_dir();
        pg.run(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-U".as_ref(),
                "postgres".as_ref(),
                "--auth=trust".as_ref(),
                "--no-sync".as_ref(),
                "-E".as_ref(),
                "UTF8".as_ref(),
                "--locale=C".as_ref(),
            ],
        )?;
        // The port is free when we look; another process may take it before the server
        // binds it, so try a few.
        let mut last = None;
        for _ in 0..5 {
            pg.port = free_port()?;
            match pg.start() {
                Ok(()) => return Ok(pg),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("could not start PostgreSQL")))
    }

    /// `postgres://postgres@127.0.0.1:<port>/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The cluster's data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Starts the server (again) and waits until it accepts connections; after [`kill`]
    /// (Self::kill) it first recovers from its WAL, as after a crash.
    pub fn start(&self) -> io::Result<()> {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("server.log");
        let data = self.data_dir();
        self.run(
            "pg_ctl",
            &[
                "start".as_ref(),
                "-w".as_ref(),
                "-t".as_ref(),
                "120".as_ref(),
                "-D".as_ref(),
                data.as_os_str(),
                "-l".as_ref(),
                log.as_os_str(),
                "-o".as_ref(),
                options.as_ref(),
            ],
        )
        .map(|_| ())
    }

    /// Stops the server abruptly (`pg_ctl stop -m immediate`): the postmaster and every backend
    /// quit at once, without a shutdown checkpoint; clients see their connections drop.
    pub fn kill(&self) -> io::Result<()> {
        let data = self.data_dir();
        self.run(
            "pg_ctl",
            &[
                "stop".as_ref(),
                "-m".as_ref(),
                "immediate".as_ref(),
                "-w".as_ref(),
                "-D".as_ref(),
                data.as_os_str(),
            ],
        )
        .map(|_| ())
    }

    /// Freezes the whole server (SIGSTOP to the postmaster and every process it started):
    /// connections stay open and new ones are accepted by the kernel, but nothing answers — a
    /// database that hangs rather than refuses. Undo with [`thaw`](Self::thaw).
    pub fn freeze(&self) -> io::Result<()> {
        let postmaster = self.postmaster_pid()?;
        // The postmaster first, so it starts no process meanwhile.
        signal("-STOP", postmaster)?;
        for child in children_of(postmaster)? {
            // A process that has just ended is no failure.
            let _ = signal("-STOP", child);
        }
        Ok(())
    }

    /// Undoes [`freeze`](Self::freeze).
    pub fn thaw(&self) -> io::Result<()> {
        let postmaster = self.postmaster_pid()?;
        for child in children_of(postmaster)? {
            let _ = signal("-CONT", child);
        }
        signal("-CONT", postmaster)
    }

    /// The postmaster's pid, from `postmaster.pid`.
    pub fn postmaster_pid(&self) -> io::Result<u32> {
        let text = std::fs::read_to_string(self.data_dir().join("postmaster.pid"))?;
        text.lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .ok_or_else(|| io::Error::other("postmaster.pid has no pid"))
    }

    /// Runs one of the server binaries as the server's user and checks its exit status.
    fn run(&self, program: &str, args: &[&std::ffi::OsStr]) -> io::Result<Output> {
        let mut cmd = Command::new(self.bin.join(program));
        cmd.args(args).current_dir(&self.dir);
        if let Some((uid, gid)) = self.run_as {
            use std::os::unix::process::CommandExt as _;
            cmd.uid(uid).gid(gid);
        }
        check(cmd.output()?, program)
    }
}

impl Drop for ThrowawayPg {
    fn drop(&mut self) {
        let _ = self.thaw();
        let _ = self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Sends `signal` (`-STOP`, `-CONT`) to a process with `kill`.
fn signal(signal: &str, pid: u32) -> io::Result<()> {
    let out = Command::new("kill")
        .args([signal, &pid.to_string()])
        .output()?;
    check(out, "kill").map(|_| ())
}

/// The processes whose parent is `parent`, from `/proc/<pid>/stat` (PostgreSQL's backends are
/// leaders of process groups of their own, so a group signal would miss them).
fn children_of(parent: u32) -> io::Result<Vec<u32>> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: the name may hold spaces and parentheses, so read after
        // the last `)`.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(parent) {
            children.push(pid);
        }
    }
    Ok(children)
}

fn has_binaries(bin: &Path) -> bool {
    bin.join("initdb").is_file() && bin.join("pg_ctl").is_file()
}

fn check(out: Output, program: &str) -> io::Result<Output> {
    if out.status.success() {
        Ok(out)
    } else {
        Err(io::Error::other(format!(
            "{program} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )))
    }
}

/// A new directory `chuhe-pg-<random>` under the system temp dir.
fn new_dir() -> io::Result<PathBuf> {
    let rnd = crate::generate_token().map_err(io::Error::other)?.hash.0;
    let name: String = std::iter::once("chuhe-pg-".to_owned())
        .chain(rnd[..6].iter().map(|b| format!("{b:02x}")))
        .collect();
    let dir = std::env::temp_dir().join(name);
    std::fs::create_dir(&dir)?;
    Ok(dir)
}

fn free_port() -> io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Whether this process runs as root (the owner of `/proc/self` is the effective user).
fn running_as_root() -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt as _;
    Ok(std::fs::metadata("/proc/self")?.uid() == 0)
}

/// The uid and gid of the `postgres` user, from `/etc/passwd`.
fn postgres_user() -> io::Result<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd")?;
    passwd
        .lines()
        .find_map(|line| {
            let mut fields = line.split(':');
            if fields.next()? != "postgres" {
                return None;
            }
            let _password = fields.next()?;
            let uid = fields.next()?.parse().ok()?;
            let gid = fields.next()?.parse().ok()?;
            Some((uid, gid))
        })
        .ok_or_else(|| {
            io::Error::other("running as root, and there is no postgres user to run the server as")
        })
}
