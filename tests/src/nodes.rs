//! Several nodes (issue 23): a throwaway Redis the test starts itself, a fresh PostgreSQL
//! database, and N real `chuhe serve` processes sharing both — each killable (`kill -9`),
//! freezable (`SIGSTOP`/`SIGCONT`) and restartable by its PID.
//!
//! The binary is the one cargo built for this workspace: `target/<profile>/chuhe` beside this
//! test's executable (`cargo test --workspace` builds it before any test runs; with `-p
//! chuhe-e2e` alone, `cargo build -p chuhe` first), or the file `CHUHE_BIN` names.
//!
//! Nothing here sleeps to wait: Redis is ready when it logs so, a node when its `/readyz`
//! answers 200 (polled, each read an event), and every wait has a deadline.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use chuhe_proto::Message as _;
use chuhe_proto::v1::{GameEvent, StoredEvent};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

use crate::{Cast, TIMEOUT, TestDb, http, seed};

/// A port nobody listens on now (bound to 127.0.0.1:0 and let go).
pub fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// Whether `program` is on `PATH`.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

/// Prints `skipped: <test> (<why>)` as one line on the process's stderr (see
/// [`crate::say_skipped`]).
pub fn say_skipped_because(why: &str) {
    use std::io::Write as _;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let _ = writeln!(std::io::stderr(), "skipped: {test} ({why})");
}

/// Sends SIGSTOP, SIGCONT, … to one process by its PID (`kill -<signal> <pid>`).
fn signal(pid: u32, signal: &str) -> Result<()> {
    let out = std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .output()?;
    if !out.status.success() {
        bail!(
            "kill -{signal} {pid}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

// ---- Redis ----

/// A Redis server of the test's own (`--save "" --appendonly no`: it keeps nothing), on a
/// fixed port so it can be killed and started again where the nodes expect it. Killed on drop.
pub struct Redis {
    pub port: u16,
    child: Option<Child>,
}

impl Redis {
    /// Starts one on a free port and waits for its "Ready to accept connections".
    pub async fn start() -> Result<Redis> {
        let mut r = Redis {
            port: free_port()?,
            child: None,
        };
        r.spawn().await?;
        Ok(r)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }

    async fn spawn(&mut self) -> Result<()> {
        let mut child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("starting redis-server")?;
        let stdout = child.stdout.take().context("redis-server: no stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let mut seen = Vec::new();
        let ready = tokio::time::timeout(TIMEOUT, async {
            while let Some(line) = lines.next_line().await? {
                let ready = line.contains("Ready to accept connections");
                seen.push(line);
                if ready {
                    return Ok::<bool, std::io::Error>(true);
                }
            }
            Ok(false)
        })
        .await;
        match ready {
            Ok(Ok(true)) => {}
            _ => bail!("redis-server on {} never got ready: {seen:?}", self.port),
        }
        // Keep draining its log so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        self.child = Some(child);
        Ok(())
    }

    /// SIGKILL (nothing kept: it saves nothing), and waits for it to be gone.
    pub async fn kill(&mut self) -> Result<()> {
        if let Some(mut c) = self.child.take() {
            c.kill().await?;
        }
        Ok(())
    }

    /// Kills it (if running) and starts a new, empty one on the same port.
    pub async fn restart(&mut self) -> Result<()> {
        self.kill().await?;
        self.spawn().await
    }

    /// One command over a fresh connection; its reply.
    pub async fn command(&self, args: &[&str]) -> Result<Resp> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).await?;
        let mut req = format!("*{}\r\n", args.len());
        for a in args {
            req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        s.write_all(req.as_bytes()).await?;
        let mut r = BufReader::new(s);
        tokio::time::timeout(TIMEOUT, read_resp(&mut r))
            .await
            .map_err(|_| anyhow!("redis: no reply to {args:?}"))?
    }

    /// Every key matching `pattern` with its string value (`SCAN` + `GET`; keys of other
    /// types are listed with `None`).
    pub async fn keys(&self, pattern: &str) -> Result<Vec<(String, Option<String>)>> {
        let Resp::Array(keys) = self.command(&["KEYS", pattern]).await? else {
            bail!("KEYS answered no array");
        };
        let mut out = Vec::new();
        for k in keys {
            let Resp::Bulk(Some(k)) = k else { continue };
            let v = match self.command(&["GET", &k]).await {
                Ok(Resp::Bulk(v)) => v,
                _ => None,
            };
            out.push((k, v));
        }
        Ok(out)
    }
}

/// A Redis reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resp {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<String>),
    Array(Vec<Resp>),
}

fn read_resp<'a>(
    r: &'a mut BufReader<TcpStream>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Resp>> + Send + 'a>> {
    Box::pin(async move {
        let mut line = String::new();
        if r.read_line(&mut line).await? == 0 {
            bail!("redis closed the connection");
        }
        let line = line.trim_end_matches(['\r', '\n']);
        let (kind, rest) = line.split_at(line.len().min(1));
        Ok(match kind {
            "+" => Resp::Simple(rest.into()),
            "-" => Resp::Error(rest.into()),
            ":" => Resp::Int(rest.parse()?),
            "$" => {
                let n: i64 = rest.parse()?;
                if n < 0 {
                    Resp::Bulk(None)
                } else {
                    let mut buf = vec![0u8; usize::try_from(n)? + 2];
                    r.read_exact(&mut buf).await?;
                    buf.truncate(buf.len() - 2);
                    Resp::Bulk(Some(String::from_utf8_lossy(&buf).into_owned()))
                }
            }
            "*" => {
                let n: i64 = rest.parse()?;
                let mut items = Vec::new();
                for _ in 0..n.max(0) {
                    items.push(read_resp(r).await?);
                }
                Resp::Array(items)
            }
            other => bail!("redis: unknown reply type {other:?}"),
        })
    })
}

// ---- nodes ----

/// The `chuhe` binary the nodes run (see the module's doc).
pub fn chuhe_bin() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("CHUHE_BIN") {
        return Ok(PathBuf::from(p));
    }
    // target/<profile>/deps/it-<hash> → target/<profile>/chuhe
    let exe = std::env::current_exe()?;
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .context("test executable has no target directory")?;
    let bin = profile.join("chuhe");
    if !bin.is_file() {
        bail!(
            "{} is missing: build it first (`cargo build -p chuhe`; `cargo test --workspace` does) or set CHUHE_BIN",
            bin.display()
        );
    }
    Ok(bin)
}

/// How the nodes are started.
#[derive(Debug, Clone)]
pub struct NodeOptions {
    /// `--lease-ttl`: how long an owner's lease lasts unrenewed.
    pub lease_ttl: Duration,
    /// More flags for every node.
    pub extra: Vec<String>,
}

impl Default for NodeOptions {
    fn default() -> Self {
        NodeOptions {
            lease_ttl: Duration::from_secs(2),
            extra: Vec::new(),
        }
    }
}

/// One `chuhe serve` child process. Its log (stderr) goes to a file in the cluster's temp
/// directory ([`Node::log`]).
pub struct Node {
    pub id: String,
    /// Fixed for the node's life: a restart listens on the same address.
    pub addr: SocketAddr,
    child: Option<Child>,
    args: Vec<String>,
    bin: PathBuf,
    log_path: PathBuf,
    starts: u32,
}

impl Node {
    async fn start(bin: &Path, id: &str, args: Vec<String>, log_dir: &Path) -> Result<Node> {
        let mut n = Node {
            id: id.to_string(),
            addr: SocketAddr::from(([127, 0, 0, 1], free_port()?)),
            child: None,
            args,
            bin: bin.to_path_buf(),
            log_path: log_dir.join(format!("{id}.log")),
            starts: 0,
        };
        n.spawn().await?;
        Ok(n)
    }

    async fn spawn(&mut self) -> Result<()> {
        self.starts += 1;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_path)?;
        let mut child = Command::new(&self.bin)
            .arg("serve")
            .args(["--listen", &self.addr.to_string()])
            .args(["--node-id", &self.id])
            .args(&self.args)
            .env_remove("CHUHE_CONFIG")
            .env("CHUHE_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", self.bin.display()))?;
        let stdout = child.stdout.take().context("no stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let first = tokio::time::timeout(TIMEOUT, lines.next_line()).await;
        let line = match first {
            Ok(Ok(Some(l))) => l,
            _ => {
                let _ = child.kill().await;
                bail!("node {} did not start; its log:\n{}", self.id, self.log());
            }
        };
        if !line.starts_with("chuhe serving on http://") {
            bail!("node {}: unexpected first line {line:?}", self.id);
        }
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        self.child = Some(child);
        self.wait_ready().await
    }

    /// Its PID while running.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }

    pub fn running(&self) -> bool {
        self.child.is_some()
    }

    /// `kill -9`: no shutdown code runs; waits until it is gone.
    pub async fn kill9(&mut self) -> Result<()> {
        if let Some(mut c) = self.child.take() {
            c.kill().await?;
        }
        Ok(())
    }

    /// `SIGTERM` (a graceful stop, as at a rolling upgrade) and waits until it has exited,
    /// bounded by [`TIMEOUT`]; its exit status.
    pub async fn terminate(&mut self) -> Result<std::process::ExitStatus> {
        let mut child = self.child.take().context("node not running")?;
        let pid = child.id().context("node already gone")?;
        signal(pid, "TERM")?;
        tokio::time::timeout(TIMEOUT, child.wait())
            .await
            .map_err(|_| anyhow!("node {} did not stop after SIGTERM", self.id))?
            .map_err(Into::into)
    }

    /// `SIGSTOP`: frozen, its sockets open, its timers not running.
    pub fn freeze(&self) -> Result<()> {
        signal(self.pid().context("node not running")?, "STOP")
    }

    /// `SIGCONT` after [`Node::freeze`].
    pub fn thaw(&self) -> Result<()> {
        signal(self.pid().context("node not running")?, "CONT")
    }

    /// Kills it if running and starts it again on the same address with the same id.
    pub async fn restart(&mut self) -> Result<()> {
        self.kill9().await?;
        self.spawn().await
    }

    /// Waits until `/readyz` answers 200, bounded by [`TIMEOUT`].
    pub async fn wait_ready(&self) -> Result<()> {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            if let Ok((200, _)) = http(self.addr, "GET", "/readyz", None, None).await {
                return Ok(());
            }
            if tokio::time::Instant::now() > deadline {
                bail!("node {} never got ready; its log:\n{}", self.id, self.log());
            }
            // A poll of the probe: nothing to wait on but the next answer.
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Its log so far (the last 8 KiB).
    pub fn log(&self) -> String {
        let text = std::fs::read_to_string(&self.log_path).unwrap_or_default();
        let cut = text.len().saturating_sub(8192);
        let cut = (cut..text.len())
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(text.len());
        text[cut..].to_string()
    }

    /// How often it was started.
    pub fn starts(&self) -> u32 {
        self.starts
    }
}

/// N nodes on one PostgreSQL database and one Redis of the test's own, and the seeded cast.
pub struct Cluster {
    pub redis: Redis,
    pub db: TestDb,
    pub cast: Cast,
    pub nodes: Vec<Node>,
    pub options: NodeOptions,
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// Starts `n` nodes (ids `n0`, `n1`, …), or `None` after one `skipped:` line on stderr
    /// when `CHUHE_TEST_DATABASE_URL` is unset or `redis-server` is not installed.
    pub async fn start(n: usize, options: NodeOptions) -> Result<Option<Cluster>> {
        if std::env::var("CHUHE_TEST_DATABASE_URL").is_err() {
            crate::say_skipped("on three nodes", "CHUHE_TEST_DATABASE_URL");
            return Ok(None);
        }
        if !on_path("redis-server") {
            say_skipped_because("redis-server is not installed; several nodes need Redis");
            return Ok(None);
        }
        let bin = chuhe_bin()?;
        let dir = tempfile::tempdir()?;
        let redis = Redis::start().await?;
        let db = TestDb::new("postgres").await?;
        let cast = match db.persist().await {
            Ok(p) => seed(p.as_ref()).await,
            Err(e) => Err(e),
        };
        let cast = match cast {
            Ok(c) => c,
            Err(e) => {
                db.drop_db().await;
                return Err(e);
            }
        };
        let mut args = vec![
            "--database-url".to_string(),
            db.url.clone(),
            "--redis-url".to_string(),
            redis.url(),
            "--lease-ttl".to_string(),
            format!("{}ms", options.lease_ttl.as_millis()),
            "--scheduler".to_string(),
            "single".to_string(),
            "--pg-writers".to_string(),
            "1".to_string(),
        ];
        args.extend(options.extra.iter().cloned());
        let mut cluster = Cluster {
            redis,
            db,
            cast,
            nodes: Vec::new(),
            options,
            _dir: dir,
        };
        // From here on a failure drops the database with the cluster.
        for i in 0..n {
            let id = format!("n{i}");
            let node = Node::start(&bin, &id, args.clone(), cluster._dir.path()).await?;
            cluster.nodes.push(node);
        }
        Ok(Some(cluster))
    }

    pub fn addr(&self, i: usize) -> SocketAddr {
        self.nodes[i].addr
    }

    /// The index of the node whose id is `id`.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    /// Every running node's log, for a failure message.
    pub fn logs(&self) -> String {
        self.nodes
            .iter()
            .map(|n| format!("---- {} ----\n{}", n.id, n.log()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The lease holders Redis has for `key` (e.g. `game:42`), whatever prefix the nodes put
    /// before it: (Redis key, holding node id). More than one entry would be two owners.
    pub async fn holders(&self, key: &str) -> Result<Vec<(String, String)>> {
        let found = self.redis.keys(&format!("*{key}")).await?;
        Ok(found
            .into_iter()
            .filter(|(k, _)| k.ends_with(&format!(":{key}")) || k == key)
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .collect())
    }

    /// The node index holding `key`'s lease, waiting until some node does (bounded by
    /// [`TIMEOUT`]); `not` excludes a node (wait for another one to take over).
    pub async fn owner(&self, key: &str, not: Option<usize>) -> Result<usize> {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            let h = self.holders(key).await.unwrap_or_default();
            if h.len() > 1 {
                bail!("two lease holders for {key}: {h:?}");
            }
            if let Some((_, id)) = h.first() {
                let i = self.index_of(id.trim()).or_else(|| {
                    // A value that carries more than the id (e.g. `n1:token`).
                    self.nodes.iter().position(|n| id.starts_with(&n.id))
                });
                if let Some(i) = i
                    && Some(i) != not
                {
                    return Ok(i);
                }
            }
            if tokio::time::Instant::now() > deadline {
                bail!(
                    "no node took {key}'s lease (holders {h:?}); logs:\n{}",
                    self.logs()
                );
            }
            // Polling Redis: the lease has no event to wait on from here.
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// The game's stored events (seq, event), decoded, from PostgreSQL.
    pub async fn stored_events(&self, game: &str) -> Result<Vec<(u64, GameEvent)>> {
        let id: i64 = game.parse().context("game id")?;
        let p = self.db.persist().await?;
        let log = p.events(id).await?;
        let mut out = Vec::new();
        for (seq, payload) in log {
            let s = StoredEvent::decode(payload.as_slice())?;
            out.push((seq, s.event.context("stored event without event")?));
        }
        Ok(out)
    }

    /// [`Cluster::finish`], and a test's outcome with every node's log added to its error (and
    /// printed for a passing test too when `CHUHE_E2E_NODE_LOGS` is set).
    pub async fn finish_with(self, outcome: Result<()>) -> Result<()> {
        if outcome.is_ok() && std::env::var_os("CHUHE_E2E_NODE_LOGS").is_some() {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "the nodes' logs:\n{}", self.logs());
        }
        let outcome = outcome.map_err(|e| anyhow!("{e:#}\nthe nodes' logs:\n{}", self.logs()));
        self.finish().await;
        outcome
    }

    /// Kills every node and Redis, and drops the database (as dropping it does).
    pub async fn finish(mut self) {
        for n in &mut self.nodes {
            let _ = n.kill9().await;
        }
        let _ = self.redis.kill().await;
    }
}

impl Drop for Cluster {
    /// Drops the test's database even when the test failed (on a thread of its own: a drop
    /// cannot await, and the test's runtime may be the current-thread one).
    fn drop(&mut self) {
        let Some((admin, name)) = self.db.pg.clone() else {
            return;
        };
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                use sqlx::Connection as _;
                if let Ok(mut c) = sqlx::PgConnection::connect(&admin).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .execute(&mut c)
                        .await;
                }
            });
        })
        .join();
    }
}
