//! `chuhe serve`: the game server. Options come from flags, `CHUHE_*`
//! environment variables and an optional TOML file, in that order of
//! precedence.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use chuhe_server::persist::Persist;
use chuhe_server::redis_cluster::{self, RedisClusterAdapter, RedisClusterOptions};
use chuhe_server::store_adapter::StoreAdapter;
use chuhe_server::{Config, Deps};
use chuhe_store::{SqliteSync, StoreOptions};

/// Default database: an SQLite file in the working directory.
pub const DEFAULT_DATABASE: &str = "sqlite://chuhe.db";

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long, env = "CHUHE_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Database URL: sqlite://FILE or postgres://USER@HOST:PORT/NAME [default:
    /// sqlite://chuhe.db]. A missing SQLite file or PostgreSQL database is created.
    #[arg(long, env = "CHUHE_DATABASE_URL")]
    pub database_url: Option<String>,
    /// Redis URL (`redis://HOST:PORT`): run as one node of several sharing the PostgreSQL
    /// database, coordinated through this Redis (leases, routing, fan-out). Needs a
    /// PostgreSQL `--database-url`. Without it: one node.
    #[arg(long, env = "CHUHE_REDIS_URL")]
    pub redis_url: Option<String>,
    /// With --redis-url: this node's id, unique among the running nodes (1 to 64 letters,
    /// digits, `.`, `-`, `_`) [default: the host name and 8 random hex digits].
    #[arg(long, env = "CHUHE_NODE_ID")]
    pub node_id: Option<String>,
    /// With --redis-url: how long a node's lease on a game lives without renewal, i.e. how
    /// soon another node takes over the games of a node that died: `3s`, `2500ms`
    /// (300ms..=60s) [default: 3s].
    #[arg(long, env = "CHUHE_LEASE_TTL")]
    pub lease_ttl: Option<String>,
    /// With --redis-url: prefix of every Redis key and channel, one per cluster sharing a
    /// Redis [default: chuhe].
    #[arg(long, env = "CHUHE_REDIS_PREFIX")]
    pub redis_prefix: Option<String>,
    /// TOML file with any of these options (keys as the long flags, with `_`).
    #[arg(long, env = "CHUHE_CONFIG")]
    pub config: Option<PathBuf>,
    /// SQLite durability: `full` (fsync every group commit) or `normal` (survives kill -9,
    /// not power loss) [default: full].
    #[arg(long, env = "CHUHE_SQLITE_SYNC")]
    pub sqlite_sync: Option<String>,
    /// PostgreSQL: group-commit writers, each with its own connection, 1..=16 [default: 2].
    #[arg(long, env = "CHUHE_PG_WRITERS")]
    pub pg_writers: Option<usize>,
    /// Tokio scheduler: `auto` (single-threaded when the process may use one CPU, else one
    /// worker per CPU), `single` or `multi` [default: auto].
    #[arg(long, env = "CHUHE_SCHEDULER")]
    pub scheduler: Option<String>,
    /// Largest client frame in bytes answered normally [default: 4096].
    #[arg(long, env = "CHUHE_MAX_FRAME_BYTES")]
    pub max_frame_bytes: Option<usize>,
    /// Client messages per second per connection (burst twice that) [default: 20].
    #[arg(long, env = "CHUHE_RATE_PER_SEC")]
    pub rate_per_sec: Option<u32>,
    /// Per-connection write queue in frames [default: 256].
    #[arg(long, env = "CHUHE_WRITE_QUEUE")]
    pub write_queue: Option<usize>,
    /// Connections (HTTP and websocket) open at once; more are answered 503
    /// `too_many_connections` at once. 0 = the open-file limit less 512 [default: 0].
    #[arg(long, env = "CHUHE_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// Connections open at once from one client address (loopback is exempt). 0 = no cap: for
    /// a reverse proxy that is not on loopback, whose clients all have its address
    /// [default: 1000].
    #[arg(long, env = "CHUHE_MAX_CONNECTIONS_PER_ADDRESS")]
    pub max_connections_per_address: Option<usize>,
    /// Which sites may put the embeddable boards (`/embed/…`) in an iframe: the
    /// `frame-ancestors` sources of their Content-Security-Policy, e.g.
    /// `"https://news.example https://*.example.org"`, `'none'`, or `*` (any) [default: *]. The
    /// default of every event, and the upper bound of an event file's
    /// `broadcast.embed_ancestors`.
    #[arg(long, env = "CHUHE_EMBED_ANCESTORS")]
    pub embed_ancestors: Option<String>,
    /// The operator's bearer token for /metrics (give it to the Prometheus scraper), at least
    /// 16 characters; organizer tokens are accepted too. Prefer the variable or the file: a
    /// flag shows in `ps`. Empty = none.
    #[arg(long, env = "CHUHE_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<String>,
    /// A fresh connection must send a whole request head (HTTP request or websocket upgrade)
    /// within this, and a kept-alive one between requests, or it is closed: `10s`, `2500ms`
    /// (1s..=300s) [default: 10s].
    #[arg(long, env = "CHUHE_HANDSHAKE_TIMEOUT")]
    pub handshake_timeout: Option<String>,
    /// The longest a login, an organizer request or /readyz waits for the database before it
    /// is answered `store_unavailable` (503) (100ms..=60s) [default: 2s].
    #[arg(long, env = "CHUHE_STORE_TIMEOUT")]
    pub store_timeout: Option<String>,
    /// A websocket from which nothing (not even a pong) has arrived for this long is closed
    /// with 4002 (10s..=600s; pings go every 5 s) [default: 30s].
    #[arg(long, env = "CHUHE_PEER_TIMEOUT")]
    pub peer_timeout: Option<String>,
    /// How long a token the database accepted is taken without asking it again at the next
    /// login: a token revoked on another node or in the database directly stops working here
    /// within this (one revoked through this node's API at once); `0s` asks at every login
    /// (0s..=300s) [default: 10s].
    #[arg(long, env = "CHUHE_TOKEN_CACHE")]
    pub token_cache: Option<String>,
    /// Demo: accounts (tokens printed), random-mover bots in live games, and a demo league
    /// (4 teams x 3 boards, a round every 6 minutes) with bot captains and players. A second
    /// run on the same database carries on with the same accounts, games and league.
    #[arg(long, env = "CHUHE_DEMO")]
    pub demo: bool,
    /// Log filter (tracing env-filter syntax, e.g. `warn` or `info,chuhe_server=debug`)
    /// [default: info]. Logs go to stderr; stdout has only the startup lines (address, demo
    /// tokens).
    #[arg(long, env = "CHUHE_LOG")]
    pub log: Option<String>,
    /// Log line format: `text` (coloured only when stderr is a terminal and NO_COLOR is unset)
    /// or `json` (one JSON object per line, for log collectors) [default: text].
    #[arg(long, env = "CHUHE_LOG_FORMAT")]
    pub log_format: Option<String>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    listen: Option<SocketAddr>,
    database_url: Option<String>,
    redis_url: Option<String>,
    node_id: Option<String>,
    lease_ttl: Option<String>,
    redis_prefix: Option<String>,
    sqlite_sync: Option<String>,
    pg_writers: Option<usize>,
    scheduler: Option<String>,
    max_frame_bytes: Option<usize>,
    rate_per_sec: Option<u32>,
    write_queue: Option<usize>,
    max_connections: Option<usize>,
    max_connections_per_address: Option<usize>,
    metrics_token: Option<String>,
    handshake_timeout: Option<String>,
    store_timeout: Option<String>,
    peer_timeout: Option<String>,
    token_cache: Option<String>,
    demo: Option<bool>,
    log: Option<String>,
    log_format: Option<String>,
}

/// How log lines look (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines; ANSI colours only on a terminal.
    Text,
    /// One JSON object per line (timestamp, level, target, fields).
    Json,
}

/// Which tokio scheduler runs the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    /// Everything on the thread that started the server.
    Single,
    /// Work-stealing, one worker per CPU.
    Multi,
}

impl Scheduler {
    /// On one CPU (a one-core machine, or a server pinned to one core) the single-threaded
    /// scheduler: the work-stealing one costs every task wake-up atomics, a run-queue hand-off
    /// and parking through the shared driver for workers that are not there (measured: 10–25 %
    /// more CPU per move, docs/benchmarks.md). On more CPUs, work-stealing.
    fn auto(cpus: usize) -> Scheduler {
        if cpus <= 1 {
            Scheduler::Single
        } else {
            Scheduler::Multi
        }
    }

    fn runtime(self) -> std::io::Result<tokio::runtime::Runtime> {
        match self {
            Scheduler::Single => tokio::runtime::Builder::new_current_thread(),
            Scheduler::Multi => tokio::runtime::Builder::new_multi_thread(),
        }
        .enable_all()
        .build()
    }
}

/// The merged settings.
#[derive(Debug)]
pub struct Settings {
    pub listen: SocketAddr,
    pub database_url: String,
    pub sqlite_sync: SqliteSync,
    pub pg_writers: usize,
    pub scheduler: Scheduler,
    pub config: Config,
    pub demo: bool,
    pub log: String,
    pub log_format: LogFormat,
    /// With `--redis-url`: this node's place in a cluster; None: one node.
    pub cluster: Option<RedisClusterOptions>,
}

/// Parses a lease TTL: `3s`, `2500ms`, or seconds without a unit (`3`, `1.5`).
fn parse_duration(s: &str) -> Option<std::time::Duration> {
    let s = s.trim();
    if let Some(ms) = s.strip_suffix("ms") {
        return ms
            .trim()
            .parse::<u64>()
            .ok()
            .map(std::time::Duration::from_millis);
    }
    let secs = s.strip_suffix('s').unwrap_or(s).trim();
    secs.parse::<f64>()
        .ok()
        .and_then(|v| std::time::Duration::try_from_secs_f64(v).ok())
}

pub fn settings(args: &ServeArgs) -> Result<Settings> {
    let file: FileConfig = match &args.config {
        Some(p) => {
            let text = std::fs::read_to_string(p).map_err(|e| {
                crate::tip(
                    anyhow::Error::new(e).context(format!("reading config file {}", p.display())),
                    "`--config` (or CHUHE_CONFIG) names a TOML file of these options; without \
                     it, flags and CHUHE_* variables alone configure the server",
                )
            })?;
            toml::from_str(&text).with_context(|| format!("parsing config file {}", p.display()))?
        }
        None => FileConfig::default(),
    };
    let sync = match args
        .sqlite_sync
        .clone()
        .or(file.sqlite_sync)
        .as_deref()
        .unwrap_or("full")
    {
        "full" => SqliteSync::Full,
        "normal" => SqliteSync::Normal,
        other => anyhow::bail!("sqlite_sync must be full or normal, not {other:?}"),
    };
    let pg_writers = args
        .pg_writers
        .or(file.pg_writers)
        .unwrap_or(StoreOptions::default().pg_writers);
    anyhow::ensure!(
        (1..=16).contains(&pg_writers),
        "pg_writers must be 1..=16, not {pg_writers}"
    );
    let scheduler = match args
        .scheduler
        .clone()
        .or(file.scheduler)
        .as_deref()
        .unwrap_or("auto")
    {
        "auto" => Scheduler::auto(std::thread::available_parallelism().map_or(1, |n| n.get())),
        "single" => Scheduler::Single,
        "multi" => Scheduler::Multi,
        other => anyhow::bail!("scheduler must be auto, single or multi, not {other:?}"),
    };
    let mut config = Config::default();
    if let Some(v) = args.max_frame_bytes.or(file.max_frame_bytes) {
        anyhow::ensure!(
            (64..=65536).contains(&v),
            "max_frame_bytes must be 64..=65536"
        );
        config.max_frame_bytes = v;
    }
    if let Some(v) = args.rate_per_sec.or(file.rate_per_sec) {
        anyhow::ensure!(v >= 1, "rate_per_sec must be at least 1");
        config.rate_per_sec = v;
    }
    if let Some(v) = args.write_queue.or(file.write_queue) {
        anyhow::ensure!(v >= 8, "write_queue must be at least 8");
        config.write_queue = v;
    }
    if let Some(v) = args.max_connections.or(file.max_connections) {
        config.max_connections = v;
    }
    if let Some(v) = &args.embed_ancestors {
        anyhow::ensure!(
            !v.trim().is_empty() && !v.contains([';', ',', '\n', '\r']),
            "--embed-ancestors: frame-ancestors sources separated by spaces (no ';' or ',')"
        );
        config.embed_ancestors = v.trim().to_string();
    }
    if let Some(v) = args
        .max_connections_per_address
        .or(file.max_connections_per_address)
    {
        config.max_connections_per_address = if v == 0 { usize::MAX } else { v };
    }
    config.metrics_token = args
        .metrics_token
        .clone()
        .or(file.metrics_token)
        .filter(|t| !t.is_empty());
    if let Some(t) = &config.metrics_token {
        anyhow::ensure!(
            t.chars().count() >= 16,
            "metrics_token must be at least 16 characters"
        );
    }
    use std::time::Duration as D;
    let timeouts = [
        (
            "handshake_timeout",
            args.handshake_timeout.clone().or(file.handshake_timeout),
            D::from_secs(1)..=D::from_secs(300),
            &mut config.handshake_timeout,
        ),
        (
            "store_timeout",
            args.store_timeout.clone().or(file.store_timeout),
            D::from_millis(100)..=D::from_secs(60),
            &mut config.store_timeout,
        ),
        (
            "peer_timeout",
            args.peer_timeout.clone().or(file.peer_timeout),
            D::from_secs(10)..=D::from_secs(600),
            &mut config.peer_timeout,
        ),
        (
            "token_cache",
            args.token_cache.clone().or(file.token_cache),
            D::ZERO..=D::from_secs(300),
            &mut config.token_cache,
        ),
    ];
    for (name, given, range, slot) in timeouts {
        if let Some(t) = given {
            *slot = parse_duration(&t)
                .filter(|d| range.contains(d))
                .with_context(|| {
                    format!(
                        "{name} must be {:?}..={:?}, like 10s or 2500ms, not {t:?}",
                        range.start(),
                        range.end()
                    )
                })?;
        }
    }
    let log_format = match args
        .log_format
        .clone()
        .or(file.log_format)
        .as_deref()
        .unwrap_or("text")
    {
        "text" => LogFormat::Text,
        "json" => LogFormat::Json,
        other => anyhow::bail!("log_format must be text or json, not {other:?}"),
    };
    let database_url = args
        .database_url
        .clone()
        .or(file.database_url)
        .unwrap_or_else(|| DEFAULT_DATABASE.to_string());
    let node_id = args.node_id.clone().or(file.node_id);
    let lease_ttl = args.lease_ttl.clone().or(file.lease_ttl);
    let redis_prefix = args.redis_prefix.clone().or(file.redis_prefix);
    let cluster = match args.redis_url.clone().or(file.redis_url) {
        None => {
            anyhow::ensure!(
                node_id.is_none() && lease_ttl.is_none() && redis_prefix.is_none(),
                "node_id, lease_ttl and redis_prefix need redis_url (several nodes)"
            );
            None
        }
        Some(url) => {
            anyhow::ensure!(
                database_url.starts_with("postgres://")
                    || database_url.starts_with("postgresql://"),
                "redis_url is set but the database is {database_url}: several nodes need \
                 PostgreSQL (they share its database); use a postgres:// database_url, or \
                 no redis_url for one node"
            );
            anyhow::ensure!(
                url.starts_with("redis://"),
                "redis_url must be redis://HOST:PORT, not {url:?}"
            );
            let node_id = node_id.unwrap_or_else(redis_cluster::default_node_id);
            anyhow::ensure!(
                redis_cluster::valid_node_id(&node_id),
                "node_id must be 1 to 64 letters, digits, '.', '-' or '_', not {node_id:?}"
            );
            let lease_ttl = match lease_ttl {
                None => std::time::Duration::from_secs(3),
                Some(t) => parse_duration(&t)
                    .filter(|d| {
                        (std::time::Duration::from_millis(300)..=std::time::Duration::from_secs(60))
                            .contains(d)
                    })
                    .with_context(|| {
                        format!("lease_ttl must be 300ms..=60s, like 3s or 2500ms, not {t:?}")
                    })?,
            };
            let prefix = redis_prefix.unwrap_or_else(|| "chuhe".into());
            anyhow::ensure!(
                !prefix.is_empty() && !prefix.chars().any(|c| c.is_whitespace()),
                "redis_prefix must be a non-empty word, not {prefix:?}"
            );
            Some(RedisClusterOptions {
                url,
                node_id,
                prefix,
                lease_ttl,
            })
        }
    };
    Ok(Settings {
        listen: args
            .listen
            .or(file.listen)
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080))),
        database_url,
        sqlite_sync: sync,
        pg_writers,
        scheduler,
        config,
        demo: args.demo || file.demo.unwrap_or(false),
        log: args
            .log
            .clone()
            .or(file.log)
            .unwrap_or_else(|| "info".into()),
        log_format,
        cluster,
    })
}

/// Logs to stderr (stdout is the program's output), in `format`, filtered by `filter`. Text
/// lines carry ANSI colours only when stderr is a terminal and `NO_COLOR` is unset or empty.
fn init_logging(filter: &str, format: LogFormat) -> Result<()> {
    use std::io::IsTerminal as _;
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .with_context(|| format!("invalid log filter {filter:?}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let installed = match format {
        LogFormat::Text => {
            let colour = std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            builder.with_ansi(colour).try_init()
        }
        LogFormat::Json => builder.json().with_ansi(false).try_init(),
    };
    installed.map_err(|e| anyhow::anyhow!("installing the logger: {e}"))
}

/// `binding ADDR: …`, with a tip for the mistakes a newcomer makes: a port in use (a server
/// started before), a privileged port, an address that is not this machine's.
fn bind_error(e: std::io::Error, addr: SocketAddr) -> anyhow::Error {
    use std::io::ErrorKind as K;
    let port = addr.port();
    let tip = match e.kind() {
        K::AddrInUse => Some(format!(
            "another program (a `chuhe serve` started before?) listens on {addr}: stop it, or \
             listen elsewhere with `--listen 127.0.0.1:{}` (or CHUHE_LISTEN)",
            port.checked_add(1).unwrap_or(8081)
        )),
        K::PermissionDenied => Some(
            "ports below 1024 need privileges: pick a higher one, e.g. `--listen \
             127.0.0.1:8080` (or CHUHE_LISTEN)"
                .to_string(),
        ),
        K::AddrNotAvailable => Some(format!(
            "{} is not an address of this machine: use `--listen 127.0.0.1:{port}` (this \
             machine only) or `--listen 0.0.0.0:{port}` (every interface)",
            addr.ip()
        )),
        _ => None,
    };
    let err = anyhow::Error::new(e).context(format!("binding {addr}"));
    match tip {
        Some(t) => crate::tip(err, t),
        None => err,
    }
}

/// Opens the database (creating a missing PostgreSQL database; SQLite creates its file itself)
/// with its migrations run. A failure a newcomer can cause (a URL of neither kind, an SQLite
/// file that cannot be created or is not a database, no PostgreSQL there) carries a tip.
pub async fn open_persist(url: &str, options: &StoreOptions) -> Result<Arc<dyn Persist>> {
    let opened = async {
        chuhe_store::provision::create_postgres_database_if_missing(url).await?;
        chuhe_store::open(url, options).await
    }
    .await;
    match opened {
        Ok(store) => Ok(Arc::new(StoreAdapter::new(Arc::new(store)))),
        Err(e) => {
            let err = anyhow::Error::new(e).context(format!("opening database {url}"));
            Err(match database_tip(url, &err) {
                Some(t) => crate::tip(err, t),
                None => err,
            })
        }
    }
}

/// The tip for a database that did not open (see [`open_persist`]).
fn database_tip(url: &str, err: &anyhow::Error) -> Option<String> {
    let text = crate::error_chain(err);
    let refused = err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::ConnectionRefused)
    }) || text.contains("Connection refused");
    let flag = "`--database-url` (or CHUHE_DATABASE_URL)";
    if text.contains("unsupported database URL") {
        return Some(format!(
            "{flag} is `sqlite://FILE` (a file, created if missing; the default is \
             sqlite://chuhe.db) or `postgres://USER@HOST:PORT/NAME`"
        ));
    }
    if url.starts_with("sqlite:") {
        let file = url.trim_start_matches("sqlite:").trim_start_matches("//");
        let file = file.split('?').next().unwrap_or(file);
        if text.contains("unable to open database file") || text.contains("readonly database") {
            return Some(format!(
                "SQLite cannot create or write {file}: its directory must exist and be \
                 writable by you; choose another file with {flag}, e.g. sqlite://chuhe.db"
            ));
        }
        if text.contains("file is not a database") {
            return Some(format!(
                "{file} is not an SQLite database: point {flag} at chuhe's database file or \
                 at a new one"
            ));
        }
    } else if refused {
        return Some(format!(
            "nothing answers at {url}: start PostgreSQL there, correct {flag}, or leave it out \
             to use the SQLite file chuhe.db in the current directory"
        ));
    }
    None
}

pub fn run(args: ServeArgs) -> Result<std::process::ExitCode> {
    let s = settings(&args)?;
    init_logging(&s.log, s.log_format)?;
    let rt = s.scheduler.runtime()?;
    rt.block_on(async move {
        let options = StoreOptions {
            sqlite_sync: s.sqlite_sync,
            pg_writers: s.pg_writers,
            ..StoreOptions::default()
        };
        // Redis first: a node that cannot reach it must not start (fail fast, exit non-zero).
        let redis = match &s.cluster {
            None => None,
            Some(c) => Some(Arc::new(
                RedisClusterAdapter::connect(c.clone())
                    .await
                    .with_context(|| format!("connecting to Redis at {} (redis_url)", c.url))?,
            )),
        };
        let cluster = redis
            .clone()
            .map(|r| r as Arc<dyn chuhe_server::cluster::Cluster>);
        let persist = open_persist(&s.database_url, &options).await?;
        let served = async {
            // Before anything is printed: Ctrl-C from here on is a clean stop.
            let shutdown = shutdown_signal()?;
            let listener =
                chuhe_server::bind_listener(s.listen).map_err(|e| bind_error(e, s.listen))?;
            let addr = listener.local_addr()?;
            let (mut demo, mut new_games) = (None, Vec::new());
            if s.demo {
                let (d, created) = demo_start(persist.as_ref(), addr).await?;
                demo = Some(d);
                new_games = created;
            }
            match &s.cluster {
                None => println!(
                    "chuhe serving on http://{addr} (database {})",
                    s.database_url
                ),
                Some(c) => println!(
                    "chuhe serving on http://{addr} (database {}, node {} of the cluster on {}, \
                     prefix {})",
                    s.database_url, c.node_id, c.url, c.prefix
                ),
            }
            chuhe_server::serve(
                listener,
                shutdown,
                Deps {
                    persist: persist.clone(),
                    config: Config {
                        demo,
                        new_games,
                        ..s.config
                    },
                    cluster,
                },
            )
            .await?;
            anyhow::Ok(())
        }
        .await;
        // Everything committed (or nothing started): close the database (SQLite: the WAL
        // checkpointed and removed, only the database file left).
        persist.close().await;
        served?;
        // The server has stopped and committed everything: give up whatever leases remain at
        // once, so other nodes need not wait for them to expire.
        if let Some(r) = redis {
            r.client().release_all_and_close().await;
        }
        Ok(std::process::ExitCode::SUCCESS)
    })
}

/// Seeds the demo (accounts found again by name, games by key), logs whether it created it or
/// found it, prints who can do what, and prints the demo league's addresses once the server has
/// it running. Also returns the games the seeding created (started now, not recovered).
async fn demo_start(
    persist: &dyn Persist,
    addr: SocketAddr,
) -> Result<(chuhe_server::demo::Demo, Vec<i64>)> {
    let first = persist
        .account_named("Demo Organizer", chuhe_server::persist::Role::Organizer)
        .await?
        .is_none();
    let before = persist.unfinished_games().await?;
    let cast = chuhe_server::demo::seed(persist).await?;
    let games = std::iter::once(cast.game_for_players).chain(cast.bot_games.iter().map(|g| g.0));
    let new_games: Vec<i64> = games.filter(|g| !before.contains(g)).collect();
    if first {
        tracing::info!(
            accounts = 4 + 2 * cast.bot_games.len(),
            games = new_games.len(),
            "demo created: the demo accounts (players, arbiter, organizer, bots) and their \
             casual games; the demo league follows once the server runs"
        );
    } else {
        tracing::info!(
            new_games = new_games.len(),
            "demo found in the database: the same accounts, unfinished games and league carry on"
        );
    }
    let watch = cast
        .bot_games
        .first()
        .map_or(cast.game_for_players, |g| g.0);
    println!("chuhe demo: open http://{addr}/game/{watch} to watch a game being played");
    println!("  (every live game is listed at http://{addr}/)");
    for (role, p) in [
        ("red player  ", &cast.red),
        ("black player", &cast.black),
        ("arbiter     ", &cast.arbiter),
        ("organizer   ", &cast.organizer),
    ] {
        println!("  {role}  {} (id {}) token: {}", p.name, p.id, p.token);
    }
    println!(
        "  a game for the two players: http://{addr}/game/{} (its clocks start when both have joined)",
        cast.game_for_players
    );
    let (tx, mut rx) = tokio::sync::mpsc::channel(1);
    tokio::spawn(async move {
        if let Some(started) = rx.recv().await {
            print_league(addr, &started);
        }
    });
    let demo = chuhe_server::demo::Demo {
        organizer: cast.organizer.id,
        bot_pairs: cast.bot_games.iter().map(|g| (g.1, g.2)).collect(),
        pace: chuhe_server::demo::Pace::default(),
        started: Some(tx),
    };
    Ok((demo, new_games))
}

fn print_league(addr: SocketAddr, s: &chuhe_server::demo::Started) {
    let id = s.league;
    println!(
        "chuhe demo league (4 teams x 3 boards, a round every 6 minutes, bot players; one captain is yours):"
    );
    println!("  event, standings  http://{addr}/league/{id}");
    println!("  round 1           http://{addr}/league/{id}/round/1");
    println!("  round 1 match 1   http://{addr}/league/{id}/match/1/1");
    for (k, (team, name, token)) in s.captains.iter().enumerate() {
        if k == s.human_team {
            println!(
                "  you captain {team} ({name}): submit its lineup before each round's deadline at"
            );
            println!("    http://{addr}/signin#token={token}&next=/league/{id}/lineup");
            println!(
                "    (token: {token}; a bot submits for you only if you have not by the deadline)"
            );
        } else {
            println!("  captain of {team} ({name}, a bot) token: {token}");
        }
    }
}

/// Ctrl-C (SIGINT) or SIGTERM. The handlers are installed here, at once, not when the returned
/// future is first polled: a signal that arrives once the address is printed (before the server
/// polls its shutdown future) stops the server cleanly instead of killing the process.
#[cfg(unix)]
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut int = signal(SignalKind::interrupt()).context("installing the Ctrl-C handler")?;
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
    })
}

#[cfg(not(unix))]
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()> + Send + 'static> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: ServeArgs,
    }

    #[test]
    fn timeouts_from_flags_with_their_ranges() {
        let s = settings(&T::parse_from(["t"]).a).unwrap();
        let d = Config::default();
        assert_eq!(
            (
                s.config.handshake_timeout,
                s.config.store_timeout,
                s.config.peer_timeout
            ),
            (d.handshake_timeout, d.store_timeout, d.peer_timeout)
        );
        let s = settings(
            &T::parse_from([
                "t",
                "--handshake-timeout",
                "3s",
                "--store-timeout",
                "750ms",
                "--peer-timeout",
                "90",
            ])
            .a,
        )
        .unwrap();
        assert_eq!(
            s.config.handshake_timeout,
            std::time::Duration::from_secs(3)
        );
        assert_eq!(
            s.config.store_timeout,
            std::time::Duration::from_millis(750)
        );
        assert_eq!(s.config.peer_timeout, std::time::Duration::from_secs(90));
        assert_eq!(d.token_cache, std::time::Duration::from_secs(10));
        for (given, ttl) in [("0s", 0), ("2500ms", 2500)] {
            let s = settings(&T::parse_from(["t", "--token-cache", given]).a).unwrap();
            assert_eq!(s.config.token_cache, std::time::Duration::from_millis(ttl));
        }
        for (flag, value, says) in [
            (
                "--handshake-timeout",
                "0s",
                "handshake_timeout must be 1s..=300s",
            ),
            (
                "--store-timeout",
                "soon",
                "store_timeout must be 100ms..=60s",
            ),
            ("--peer-timeout", "5s", "peer_timeout must be 10s..=600s"),
            ("--peer-timeout", "1e300", "peer_timeout must be"),
            ("--token-cache", "301s", "token_cache must be"),
        ] {
            let e = settings(&T::parse_from(["t", flag, value]).a).unwrap_err();
            assert!(format!("{e:#}").contains(says), "{flag} {value}: {e:#}");
        }
    }

    #[test]
    fn connection_caps_and_the_metrics_token() {
        let s = settings(&T::parse_from(["t"]).a).unwrap();
        assert_eq!(s.config.max_connections, 0);
        assert_eq!(s.config.max_connections_per_address, 1000);
        assert_eq!(s.config.metrics_token, None);
        let t = T::parse_from([
            "t",
            "--max-connections",
            "30000",
            "--max-connections-per-address",
            "0",
            "--metrics-token",
            "0123456789abcdef",
        ]);
        let s = settings(&t.a).unwrap();
        assert_eq!(s.config.max_connections, 30000);
        assert_eq!(s.config.max_connections_per_address, usize::MAX);
        assert_eq!(s.config.metrics_token.as_deref(), Some("0123456789abcdef"));
        let t = T::parse_from(["t", "--max-connections-per-address", "50"]);
        assert_eq!(
            settings(&t.a).unwrap().config.max_connections_per_address,
            50
        );
        let t = T::parse_from(["t", "--metrics-token", ""]);
        assert_eq!(settings(&t.a).unwrap().config.metrics_token, None);
        let t = T::parse_from(["t", "--metrics-token", "short"]);
        let e = settings(&t.a).unwrap_err().to_string();
        assert!(e.contains("at least 16 characters"), "{e}");
    }

    #[test]
    fn flags_beat_file_and_defaults_apply() {
        let dir = std::env::temp_dir().join(format!("chuhe-serve-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("c.toml");
        std::fs::write(
            &f,
            "listen = \"127.0.0.1:9000\"\nrate_per_sec = 7\ndatabase_url = \"sqlite://x.db\"\n",
        )
        .unwrap();
        let t = T::parse_from(["t", "--config", f.to_str().unwrap(), "--rate-per-sec", "9"]);
        let s = settings(&t.a).unwrap();
        assert_eq!(s.listen.port(), 9000);
        assert_eq!(s.config.rate_per_sec, 9);
        assert_eq!(s.database_url, "sqlite://x.db");
        let t = T::parse_from(["t"]);
        let s = settings(&t.a).unwrap();
        assert_eq!(s.database_url, DEFAULT_DATABASE);
        assert_eq!(s.pg_writers, 2);
        let t = T::parse_from(["t", "--pg-writers", "1"]);
        assert_eq!(settings(&t.a).unwrap().pg_writers, 1);
        for bad in ["0", "17"] {
            let t = T::parse_from(["t", "--pg-writers", bad]);
            let e = settings(&t.a).unwrap_err().to_string();
            assert!(e.contains("pg_writers must be 1..=16"), "{e}");
        }
        let t = T::parse_from(["t", "--scheduler", "single"]);
        assert_eq!(settings(&t.a).unwrap().scheduler, Scheduler::Single);
        let t = T::parse_from(["t", "--scheduler", "multi"]);
        assert_eq!(settings(&t.a).unwrap().scheduler, Scheduler::Multi);
        assert_eq!(
            settings(&T::parse_from(["t"]).a).unwrap().log_format,
            LogFormat::Text
        );
        let t = T::parse_from(["t", "--log-format", "json"]);
        assert_eq!(settings(&t.a).unwrap().log_format, LogFormat::Json);
        let t = T::parse_from(["t", "--log-format", "xml"]);
        let e = settings(&t.a).unwrap_err().to_string();
        assert!(e.contains("log_format must be text or json"), "{e}");
        let t = T::parse_from(["t", "--scheduler", "fast"]);
        let e = settings(&t.a).unwrap_err().to_string();
        assert!(e.contains("auto, single or multi"), "{e}");
        assert_eq!(Scheduler::auto(1), Scheduler::Single);
        assert_eq!(Scheduler::auto(2), Scheduler::Multi);
        std::fs::write(&f, "bogus = 1\n").unwrap();
        let t = T::parse_from(["t", "--config", f.to_str().unwrap()]);
        assert!(settings(&t.a).is_err());
    }

    #[test]
    fn several_nodes_need_postgresql_and_take_their_flags() {
        let pg = "postgres://u@h/db";
        // PostgreSQL and Redis given, and then `more` flags.
        let both = |more: &[&str]| {
            let base = ["t", "--redis-url", "redis://r:6379", "--database-url", pg];
            T::parse_from(base.iter().chain(more))
        };
        assert!(settings(&T::parse_from(["t"]).a).unwrap().cluster.is_none());
        let t = T::parse_from(["t", "--redis-url", "redis://127.0.0.1:6379"]);
        let e = settings(&t.a).unwrap_err().to_string();
        assert!(e.contains("several nodes need PostgreSQL"), "{e}");
        let t = T::parse_from([
            "t",
            "--redis-url",
            "redis://127.0.0.1:6379",
            "--database-url",
            "sqlite://x.db",
        ]);
        assert!(settings(&t.a).is_err());
        let c = settings(&both(&[]).a).unwrap().cluster.unwrap();
        assert_eq!(c.url, "redis://r:6379");
        assert_eq!(c.lease_ttl, std::time::Duration::from_secs(3));
        assert_eq!(c.prefix, "chuhe");
        assert!(redis_cluster::valid_node_id(&c.node_id), "{}", c.node_id);
        let t = both(&[
            "--node-id",
            "web-1",
            "--lease-ttl",
            "2500ms",
            "--redis-prefix",
            "league",
        ]);
        let c = settings(&t.a).unwrap().cluster.unwrap();
        assert_eq!(
            (c.node_id.as_str(), c.lease_ttl, c.prefix.as_str()),
            ("web-1", std::time::Duration::from_millis(2500), "league")
        );
        for (flag, bad, says) in [
            ("--lease-ttl", "100ms", "lease_ttl must be 300ms..=60s"),
            ("--lease-ttl", "2m", "lease_ttl must be"),
            ("--lease-ttl", "61s", "lease_ttl must be"),
            ("--node-id", "a b", "node_id must be"),
            ("--redis-prefix", "", "redis_prefix must be"),
        ] {
            let e = settings(&both(&[flag, bad]).a).unwrap_err().to_string();
            assert!(e.contains(says), "{flag} {bad}: {e}");
        }
        assert_eq!(
            parse_duration("1.5"),
            Some(std::time::Duration::from_millis(1500))
        );
        assert_eq!(
            parse_duration("3s"),
            Some(std::time::Duration::from_secs(3))
        );
        let t = T::parse_from(["t", "--redis-url", "http://r", "--database-url", pg]);
        assert!(settings(&t.a).is_err());
        let t = T::parse_from(["t", "--node-id", "web-1"]);
        let e = settings(&t.a).unwrap_err().to_string();
        assert!(e.contains("need redis_url"), "{e}");
        // The config file's keys.
        let dir = std::env::temp_dir().join(format!("chuhe-serve-cluster-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("c.toml");
        std::fs::write(
            &f,
            format!(
                "database_url = \"{pg}\"\nredis_url = \"redis://r:1\"\nnode_id = \"n-2\"\n\
                 lease_ttl = \"5s\"\nredis_prefix = \"p\"\n"
            ),
        )
        .unwrap();
        let t = T::parse_from(["t", "--config", f.to_str().unwrap()]);
        let c = settings(&t.a).unwrap().cluster.unwrap();
        assert_eq!(
            (c.node_id.as_str(), c.lease_ttl, c.prefix.as_str()),
            ("n-2", std::time::Duration::from_secs(5), "p")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
