//! The server's settings: its limits and timings ([`Config`]) and the demo's ([`Demo`]).

use std::time::Duration;

use tokio::sync::mpsc;

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
    /// The liveness rule's beat (docs/protocol.md, "Liveness"): a connection to which nothing
    /// was written for this long gets a `Heartbeat`; announced in `Welcome.heartbeat_ms`, and
    /// clients that hear nothing for three of these reconnect. Zero: no heartbeats.
    pub heartbeat_interval: Duration,
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
    /// `--demo`: bots playing casual games and a demo league (see [`crate::demo`]).
    pub demo: Option<Demo>,
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
            heartbeat_interval: Duration::from_secs(1),
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

/// The demo as the server runs it (`Config::demo`).
#[derive(Debug, Clone)]
pub struct Demo {
    /// The organizer who creates and publishes the demo league.
    pub organizer: i64,
    /// Bot pairs (red, black) that play casual games forever.
    pub bot_pairs: Vec<(i64, i64)>,
    pub pace: Pace,
    /// Told the demo league's id (and its captains' tokens) once it runs.
    pub started: Option<mpsc::Sender<Started>>,
}

/// The demo league is running.
#[derive(Debug, Clone)]
pub struct Started {
    pub league: i64,
    /// (team, captain's name, a token for the captain) — a newcomer may submit a lineup
    /// before the bot captain's is revealed.
    pub captains: Vec<(String, String, String)>,
    /// The index in `captains` of the team whose captain is a person ([`HUMAN_TEAM`]): its bot
    /// submits a lineup only at the last moment when the person has not.
    pub human_team: usize,
}

/// The demo league's timings and its bots' speed.
#[derive(Debug, Clone)]
pub struct Pace {
    /// From the start to the first round (and, for a season whose schedule passed while the
    /// server was down, to its next round).
    pub lead_ms: u64,
    /// Between rounds' starts.
    pub every_ms: u64,
    pub deadline_before_ms: u64,
    pub open_before_ms: u64,
    pub break_ms: u64,
    pub choose_within_ms: u64,
    /// Slow, fast and armageddon time controls.
    pub time_controls: [String; 3],
    /// A bot's think time per move, ms: uniform in this range.
    pub think_ms: (u64, u64),
    /// The casual bot games' think time, ms.
    pub casual_think_ms: (u64, u64),
    /// How long after a season's end the next one is created.
    pub next_season_after_ms: u64,
}

impl Default for Pace {
    /// A round every 6 minutes (the first 90 s after the start, so that a person has a minute
    /// to submit the human captain's lineup): slow 2m+1s, fast 1m+1s, armageddon 1m for Red
    /// against 45s for Black; bots think 0.2–0.8 s a move in league games.
    fn default() -> Self {
        Pace {
            lead_ms: 90_000,
            every_ms: 360_000,
            deadline_before_ms: 25_000,
            open_before_ms: 15_000,
            break_ms: 10_000,
            choose_within_ms: 20_000,
            time_controls: ["2m+1s".into(), "1m+1s".into(), "red:1m;black:45s".into()],
            think_ms: (200, 800),
            casual_think_ms: (400, 2000),
            next_season_after_ms: 60_000,
        }
    }
}
