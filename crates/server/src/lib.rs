//! chuhe game server: authoritative Xiangqi games over websockets.
//!
//! [`serve`] runs the server on a bound listener until `shutdown` resolves:
//! HTTP (`/healthz`, `/metrics`, the organiser API, game records, the demo
//! page) and the websocket protocol at `/ws` (see `docs/protocol.md`). A game
//! is a pure state machine ([`game`]: `decide` and `fold`) that a shard task
//! drives ([`shard`], [`live`]); storage is reached only through the
//! [`persist::Persist`] port.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tracing::{info, warn};

pub mod admin;
pub mod auth;
pub mod board;
pub mod calls;
pub mod challenge;
pub mod cluster;
pub mod conn;
#[cfg(test)]
mod decode_props;
pub mod demo;
pub mod embed_http;
pub mod error;
pub mod feed_http;
pub mod frame_kinds;
pub mod game;
pub mod handle;
pub mod http;
pub mod league;
pub mod listen;
pub mod live;
pub mod load;
pub mod metrics;
pub mod node;
pub mod outbox;
pub mod persist;
pub mod phrase;
pub mod record;
pub mod records_http;
pub mod redis_cluster;
pub mod registry;
pub mod request;
pub mod shard;
#[cfg(test)]
mod shard_tests;
pub mod side;
pub mod snapshot;
pub mod store_adapter;
pub mod time;
pub mod token_cache;
pub mod view;
pub mod web;

pub use error::ClientError;

/// The maps keyed by game id (the shard looks its games up several times per move).
pub(crate) use chuhe_store::IdMap;
pub use persist::{Persist, PersistError};

/// Binds a listener with a deep accept backlog (4,096 instead of the default 128), so a league
/// round connecting every board at once is not met with SYN drops and one-second retries.
pub fn bind_listener(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(4096)
}

/// Server limits and timings. `Default` gives the documented values.
#[derive(Debug, Clone)]
pub struct Config {
    /// Largest client frame answered normally; bigger ones get `frame_too_large`.
    pub max_frame_bytes: usize,
    /// Frames above this close the socket with 1009.
    pub hard_frame_bytes: usize,
    /// Sustained client messages per second per connection (burst = 2x).
    pub rate_per_sec: u32,
    /// Refused (rate-limited) messages in a row before the close 4029.
    pub flood_limit: u32,
    /// Per-connection write queue, in frames, besides room for one resume's replay
    /// (`replay_events` + its reply); overflow closes with 4008.
    pub write_queue: usize,
    /// Per-game mailbox; a full one answers `busy`.
    pub game_mailbox: usize,
    /// Events kept per game for exact replay on reconnect; older → snapshot.
    pub replay_events: usize,
    /// Websocket ping interval (round-trip measurement for lag compensation).
    pub ping_interval: Duration,
    /// A websocket connection from which nothing has arrived (not even a pong) for this long
    /// (counted in ping intervals) is closed with 4002: a peer gone without a FIN (half-open)
    /// would otherwise hold its socket until TCP gives up.
    pub peer_timeout: Duration,
    /// A socket write taking longer than this drops the connection as too slow (`goodbye
    /// too_slow`, close 4008, counted in `chuhe_dropped_slow_connections_total`).
    pub write_timeout: Duration,
    /// How long a finished game stays loaded.
    pub finished_linger: Duration,
    /// Longest wait for games and connections at shutdown.
    pub shutdown_grace: Duration,
    /// Default natural move limit in plies (120 = 60 moves each).
    pub move_limit_plies: u32,
    /// Game shards (tasks that each run many games); 0 = one per CPU the process may use.
    pub shards: usize,
    /// Commands a shard's mailbox holds; a full one answers `busy`.
    pub shard_mailbox: usize,
    /// The longest a login (the token check at a websocket upgrade or HTTP request), an
    /// organizer request or the readiness probe waits for the store before it is answered
    /// `store_unavailable` (503): during an outage they fail fast instead of hanging.
    pub store_timeout: Duration,
    /// The operator's token for `/metrics` (a Prometheus scraper's bearer token); organizer
    /// tokens are accepted too. `/metrics` refuses anonymous readers either way.
    pub metrics_token: Option<String>,
    /// `--demo`: bots playing casual games and a demo league (see [`demo`]).
    pub demo: Option<demo::Demo>,
    /// Games created just before this start for it (the demo's, on its first start): loaded
    /// and started with the unfinished ones, but not logged as recovered.
    pub new_games: Vec<i64>,
    /// A connection must send a whole request head (an HTTP request or a websocket upgrade)
    /// within this, on a fresh connection and between keep-alive requests; a silent or
    /// half-sent one is closed (`chuhe_handshake_timeouts_total`).
    pub handshake_timeout: Duration,
    /// Connections (HTTP and websocket) open at once; more are answered 503
    /// `too_many_connections` at once. 0 = the process's open-file limit less 512.
    pub max_connections: usize,
    /// Connections open at once from one client address (except `unlimited_addresses`).
    pub max_connections_per_address: usize,
    /// Addresses with no per-address cap: a reverse proxy or a load generator on this host
    /// (all its clients share its address). Loopback by default.
    pub unlimited_addresses: Vec<std::net::IpAddr>,
    /// Several nodes: how long a request relayed to a game's owner node waits for its answer
    /// before it is answered `unavailable` (retryable). Longer than a lease's TTL plus a
    /// sweep: a request to an owner that died waits for the game's new owner (it is sent
    /// there as soon as the game moves) instead of failing first.
    pub remote_timeout: Duration,
    /// Several nodes: how often a node looks for games nobody owns (a dead node's) and for
    /// remote games that moved. With leases of 3 s, a dead owner's games continue within
    /// about 3 s plus this.
    pub cluster_sweep: Duration,
    /// The embeddable board pages' (`/embed/…`) `Content-Security-Policy: frame-ancestors`
    /// sources: which sites may put them in an iframe (`*` any, `'none'` none, or a list of
    /// origins such as `https://news.example https://*.example.org`).
    pub embed_ancestors: String,
    /// How long a token the store accepted is taken without asking the store again (logins
    /// of websockets and HTTP requests): a token revoked on another node, or in the database
    /// directly, stops working here within this; one revoked through this node at once.
    /// Zero asks the store at every login.
    pub token_cache: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_frame_bytes: 4096,
            hard_frame_bytes: 64 * 1024,
            rate_per_sec: 20,
            flood_limit: 20,
            write_queue: 256,
            game_mailbox: 256,
            replay_events: 256,
            ping_interval: Duration::from_secs(5),
            peer_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(10),
            finished_linger: Duration::from_secs(300),
            shutdown_grace: Duration::from_secs(10),
            move_limit_plies: 120,
            shards: 0,
            shard_mailbox: 65_536,
            store_timeout: Duration::from_secs(2),
            metrics_token: None,
            demo: None,
            new_games: Vec::new(),
            handshake_timeout: Duration::from_secs(10),
            max_connections: 0,
            max_connections_per_address: 1000,
            unlimited_addresses: vec![
                std::net::IpAddr::from([127, 0, 0, 1]),
                std::net::IpAddr::from(std::net::Ipv6Addr::LOCALHOST),
            ],
            remote_timeout: Duration::from_secs(5),
            cluster_sweep: Duration::from_millis(500),
            embed_ancestors: "*".to_string(),
            token_cache: Duration::from_secs(10),
        }
    }
}

/// Tokens the token cache holds at most (about 100 bytes each).
const TOKEN_CACHE_MAX: usize = 100_000;

/// What the server is given.
pub struct Deps {
    pub persist: Arc<dyn Persist>,
    pub config: Config,
    /// The other nodes (several nodes on one database, `--redis-url`); None: one node.
    pub cluster: Option<Arc<dyn cluster::Cluster>>,
}

/// Shared by every task of the server.
#[derive(Clone)]
pub struct Env {
    pub persist: Arc<dyn Persist>,
    /// The other nodes, when this is one of several (`--redis-url`); None: one node.
    pub cluster: Option<Arc<dyn cluster::Cluster>>,
    /// This node's link to the others (routing, fan-out, failover) when `cluster` is set.
    pub node: Option<Arc<node::Link>>,
    pub config: Arc<Config>,
    pub metrics: Arc<metrics::Metrics>,
    pub registry: Arc<registry::Registry>,
    /// Every league running on this server.
    pub leagues: Arc<league::runner::Leagues>,
    /// Open casual-game challenges taken by this node (in memory).
    pub challenges: Arc<challenge::Challenges>,
    /// The arbiters following each league's calls.
    pub desks: Arc<calls::Desks>,
    /// Tokens the store accepted recently ([`token_cache`]).
    pub tokens: Arc<token_cache::TokenCache>,
    pub shards: Arc<shard::Shards>,
    pub time: time::TimeBase,
    pub shutdown: watch::Receiver<bool>,
    /// Turns true once every shard has stopped at shutdown: every commit in flight settled and
    /// answered, every waiting request answered `shutting_down`. Connections wait for it
    /// (bounded by the grace period) before they say goodbye, so no request goes unanswered.
    pub settled: watch::Receiver<bool>,
    /// Held by every shard and connection task; serve waits for all to be dropped.
    pub tasks_done: mpsc::Sender<()>,
}

impl Env {
    /// The shared state of a server, with its game shards running (they stop when
    /// `shutdown` turns true).
    pub fn start(
        persist: Arc<dyn Persist>,
        config: Config,
        shutdown: watch::Receiver<bool>,
        tasks_done: mpsc::Sender<()>,
    ) -> Env {
        Env::start_with(persist, None, config, shutdown, tasks_done)
    }

    /// As [`Env::start`], for one node of several when `cluster` is given.
    pub fn start_with(
        persist: Arc<dyn Persist>,
        cluster: Option<Arc<dyn cluster::Cluster>>,
        config: Config,
        shutdown: watch::Receiver<bool>,
        tasks_done: mpsc::Sender<()>,
    ) -> Env {
        let count = match config.shards {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let (shards, queues) = shard::Shards::new(count, config.shard_mailbox);
        let (settled_tx, settled) = watch::channel(false);
        let tokens = Arc::new(token_cache::TokenCache::new(
            u64::try_from(config.token_cache.as_millis()).unwrap_or(u64::MAX),
            TOKEN_CACHE_MAX,
        ));
        let env = Env {
            persist,
            node: cluster.clone().map(node::Link::new),
            cluster,
            config: Arc::new(config),
            metrics: Arc::new(metrics::Metrics::default()),
            registry: Arc::new(registry::Registry::default()),
            leagues: Arc::new(league::runner::Leagues::default()),
            challenges: Arc::new(challenge::Challenges::default()),
            desks: Arc::new(calls::Desks::default()),
            tokens,
            shards: Arc::new(shards),
            time: time::TimeBase::new(),
            shutdown,
            settled,
            tasks_done,
        };
        shard::Shards::start(&env, queues, settled_tx);
        env
    }
}

/// Runs the server until `shutdown` resolves, then shuts down in stages:
/// stop accepting; every game finishes the command in hand (its commit
/// included) and stops; every socket gets a `Goodbye` and close 1001.
/// Unfinished games are recovered at the next start.
pub async fn serve(
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    deps: Deps,
) -> std::io::Result<()> {
    let (sd_tx, sd_rx) = watch::channel(false);
    let (done_tx, mut done_rx) = mpsc::channel::<()>(1);
    let env = Env::start_with(deps.persist, deps.cluster, deps.config, sd_rx, done_tx);
    match env.node.clone() {
        // Several nodes: this node takes the unfinished games nobody runs (a sweep), and
        // keeps sweeping.
        Some(link) => {
            node::start(&env);
            node::sweep(&env, &link, false).await;
        }
        None => recover_all(&env).await,
    }
    if let Some(d) = &env.config.demo {
        // Before the leagues' drivers: a demo season whose rounds fell due while the server
        // was down is moved, not started all at once.
        demo::prepare(&env, d).await;
    }
    league::runner::start_all(&env).await;
    if let Some(d) = env.config.demo.clone() {
        demo::start(&env, d).await;
    }
    let app = http::router(env.clone());
    info!(addr = ?listener.local_addr().ok(), "listening");
    let grace = env.config.shutdown_grace;
    listen::run(listener, app, env, async move {
        shutdown.await;
        info!("shutting down: no new connections");
        let _ = sd_tx.send(true);
    })
    .await;
    // Games finish their in-flight commits; sockets close with 1001.
    if tokio::time::timeout(grace, done_rx.recv()).await.is_err() {
        warn!("shutdown grace period over with tasks still running");
    }
    info!("shut down");
    Ok(())
}

/// Loads every unfinished game (clocks resume with no time lost to the outage).
async fn recover_all(env: &Env) {
    let ids = match env.persist.unfinished_games().await {
        Ok(ids) => ids,
        Err(e) => {
            warn!(error = %e, "cannot list unfinished games");
            return;
        }
    };
    let (mut recovered, mut started) = (0, 0);
    for id in ids {
        let new = env.config.new_games.contains(&id);
        match env.registry.get_or_load(env, id).await {
            Ok(_) if new => started += 1,
            Ok(_) => recovered += 1,
            Err(e) if new => warn!(game = id, code = e.code(), "new game not started"),
            Err(e) => warn!(game = id, code = e.code(), "game not recovered"),
        }
    }
    if recovered > 0 {
        info!(games = recovered, "unfinished games recovered");
    }
    if started > 0 {
        info!(games = started, "new games started");
    }
}
