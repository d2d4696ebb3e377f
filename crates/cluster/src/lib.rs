//! # chuhe-cluster
//!
//! Coordination of several chuhe nodes sharing one PostgreSQL database, on Redis (issue 23):
//!
//! * **Leases** — one owner node per key (a game, a league): `SET key node NX PX ttl` (in a
//!   Lua script that also re-arms a lease this node holds already), renewed every `ttl / 3`
//!   for all held keys at once by one script (`if GET == node then PEXPIRE`), given up by
//!   another (`if GET == node then DEL`). Every held lease that a renewal finds gone or held
//!   by another node is reported on [`RedisCluster::take_lost`].
//! * **Pub/sub** — [`RedisCluster::publish`], and [`RedisCluster::subscribe`] /
//!   [`RedisCluster::unsubscribe`] on one dedicated pub/sub connection that reconnects with
//!   backoff when Redis goes away and subscribes every channel again; messages arrive on
//!   [`RedisCluster::take_messages`]; [`RedisCluster::connected`] says whether that connection
//!   is up.
//!
//! Every key and channel gets the configured prefix (`{prefix}:lease:{key}`,
//! `{prefix}:ch:{channel}`), so several clusters (or test runs) share one Redis.
//!
//! **While Redis is unreachable** leases cannot be renewed and nothing is reported: the node
//! keeps what it holds as far as it knows (a lease is only *reported* lost when a renewal
//! that reached Redis saw it gone or held by another node). If Redis comes back with the
//! leases still there (a network blip shorter than the TTL), renewal simply carries on. If
//! the outage outlasted the TTL, the leases have expired and the first renewal reports them
//! lost (another node may have taken them meanwhile). If Redis **restarted empty** (it keeps
//! nothing on disk), the first renewal notices — a marker key written once per Redis lifetime
//! is gone or new — and takes back with `SET NX` every lease this node still holds, so
//! ownership carries on without a gap; a lease another node took first is reported lost.
//! Messages published during an outage are lost (pub/sub is at most once); PostgreSQL is the
//! durable log, and whoever waits for an answer has a timeout. Safety never rests on the
//! lease alone: the store's fencing token refuses a stale owner's writes.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::StreamExt;
use redis::aio::{ConnectionManager, ConnectionManagerConfig, PubSubSink};
use redis::{AsyncCommands, Script};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

#[cfg(feature = "test-support")]
pub mod testing;

/// Redis failed, refused or did not answer in time.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid Redis URL {url:?}: {reason}")]
    Url { url: String, reason: String },
    #[error("Redis at {0} did not answer in time")]
    Timeout(String),
    #[error("Redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("unexpected reply from Redis: {0}")]
    Reply(String),
    #[error("the cluster client is closed")]
    Closed,
}

/// How to reach Redis and how leases behave.
#[derive(Debug, Clone)]
pub struct Config {
    /// `redis://host:port[/db]`.
    pub url: String,
    /// Prepended to every key and channel (`{prefix}:…`): one per cluster.
    pub prefix: String,
    /// This node's id, unique among the running nodes (the value of the leases it holds).
    pub node_id: String,
    /// How long a lease lives without renewal. Default 3 s.
    pub lease_ttl: Duration,
    /// How often held leases are renewed. Default `lease_ttl / 3`.
    pub renew_every: Duration,
    /// Whether a renewal also runs at once each time the pub/sub connection comes back
    /// (so leases are taken back right after Redis restarted empty). Default true.
    pub renew_on_reconnect: bool,
    /// How long a command or a connection attempt may take. Default 1 s.
    pub timeout: Duration,
    /// The pub/sub connection's first and longest wait between reconnection attempts
    /// (doubling in between), and of the renewals after a failed one. Default 50 ms and
    /// 500 ms.
    pub reconnect_min: Duration,
    pub reconnect_max: Duration,
    /// Messages received but not yet taken from [`RedisCluster::take_messages`] before the
    /// pub/sub connection stops reading (back-pressure). Default 4096.
    pub message_buffer: usize,
}

impl Config {
    /// The defaults, for `url` and `node_id`, with the prefix `chuhe`.
    pub fn new(url: impl Into<String>, node_id: impl Into<String>) -> Config {
        let lease_ttl = Duration::from_secs(3);
        Config {
            url: url.into(),
            prefix: "chuhe".into(),
            node_id: node_id.into(),
            lease_ttl,
            renew_every: lease_ttl / 3,
            renew_on_reconnect: true,
            timeout: Duration::from_secs(1),
            reconnect_min: Duration::from_millis(50),
            reconnect_max: Duration::from_millis(500),
            message_buffer: 4096,
        }
    }

    /// Sets the lease TTL and renews every third of it.
    pub fn with_lease_ttl(mut self, ttl: Duration) -> Config {
        self.lease_ttl = ttl;
        self.renew_every = ttl / 3;
        self
    }

    fn lease_key(&self, key: &str) -> String {
        format!("{}:lease:{key}", self.prefix)
    }

    fn channel(&self, channel: &str) -> String {
        format!("{}:ch:{channel}", self.prefix)
    }

    fn boot_key(&self) -> String {
        format!("{}:boot", self.prefix)
    }
}

/// A message that arrived on a subscribed channel (the channel without the prefix).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub channel: String,
    pub payload: Vec<u8>,
}

/// Takes the lease for ARGV[1] if nobody holds it (for ARGV[2] ms), re-arms it if ARGV[1]
/// holds it already; returns the holder afterwards.
const ACQUIRE: &str = r"
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return ARGV[1]
end
if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return v
";

/// Deletes each lease of KEYS that ARGV[1] holds; returns how many.
const RELEASE: &str = r"
local n = 0
for _, k in ipairs(KEYS) do
  if redis.call('GET', k) == ARGV[1] then n = n + redis.call('DEL', k) end
end
return n
";

/// Leases given up in one script call at most (one call runs atomically inside Redis).
const RELEASE_CHUNK: usize = 1000;

/// Renews ARGV[1]'s leases KEYS[2..] for ARGV[2] ms. KEYS[1] is the marker of this Redis's
/// lifetime: set to ARGV[4] when missing (Redis started empty); ARGV[3] is the marker the
/// node saw last ('' at first). When the marker changed, Redis restarted empty and the
/// node's leases it finds missing are taken back (`SET` here is as good as `SET NX`: the
/// script runs atomically and only when the key is missing). Returns the marker, then per
/// lease 1 (held) or 0 (lost: gone, or another node's).
const RENEW: &str = r"
local boot = redis.call('GET', KEYS[1])
if not boot then
  redis.call('SET', KEYS[1], ARGV[4])
  boot = ARGV[4]
end
local restarted = ARGV[3] ~= '' and boot ~= ARGV[3]
local out = {boot}
for i = 2, #KEYS do
  local v = redis.call('GET', KEYS[i])
  if v == ARGV[1] then
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
    out[i] = 1
  elseif (not v) and restarted then
    redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
";

/// What the pub/sub task is asked to do.
enum Ctl {
    Subscribe(String, oneshot::Sender<()>),
    Unsubscribe(String, oneshot::Sender<()>),
}

struct Shared {
    config: Config,
    commands: ConnectionManager,
    /// Held leases (key without prefix) and the generation of their acquisition, so a renewal
    /// that raced a release and a new acquire does not report the new lease lost.
    held: Mutex<HashMap<String, u64>>,
    generation: std::sync::atomic::AtomicU64,
    /// The Redis lifetime marker seen by the last renewal ('' before the first).
    boot: Mutex<String>,
    lost: mpsc::UnboundedSender<String>,
    /// Subscribed channels (without prefix): what a reconnect subscribes again.
    channels: Mutex<BTreeSet<String>>,
    acquire: Script,
    release: Script,
    renew: Script,
    /// Wakes the renewal task at once: the pub/sub connection is back, so Redis may have
    /// restarted empty and the node's leases should be taken back before another node takes
    /// them.
    renew_soon: tokio::sync::Notify,
}

/// A node's connection to the cluster's Redis; see the crate docs. Cheap to share behind an
/// `Arc`; dropping it stops its background tasks (leases then expire after their TTL).
pub struct RedisCluster {
    shared: Arc<Shared>,
    ctl: mpsc::UnboundedSender<Ctl>,
    connected: watch::Receiver<bool>,
    lost: Mutex<Option<mpsc::UnboundedReceiver<String>>>,
    messages: Mutex<Option<mpsc::Receiver<Message>>>,
    tasks: Vec<JoinHandle<()>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section is a single insert, remove or copy: consistent after a panic.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// 16 random hex digits.
pub fn random_suffix() -> String {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        // No OS randomness: the time and the process id still tell nodes apart.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        b = ((nanos as u64) ^ (u64::from(std::process::id()) << 32)).to_le_bytes();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl RedisCluster {
    /// Connects to Redis and starts the renewal and pub/sub tasks. Fails (fast, within
    /// `config.timeout`) when Redis is unreachable, so a node does not start without it.
    pub async fn connect(config: Config) -> Result<RedisCluster, Error> {
        let client = redis::Client::open(config.url.as_str()).map_err(|e| Error::Url {
            url: config.url.clone(),
            reason: e.to_string(),
        })?;
        // One attempt at first: a node must not start without its Redis.
        let mut probe =
            tokio::time::timeout(config.timeout, client.get_multiplexed_async_connection())
                .await
                .map_err(|_| Error::Timeout(config.url.clone()))??;
        let _: String =
            tokio::time::timeout(config.timeout, redis::cmd("PING").query_async(&mut probe))
                .await
                .map_err(|_| Error::Timeout(config.url.clone()))??;
        drop(probe);
        let manager = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(config.timeout))
            .set_response_timeout(Some(config.timeout))
            .set_min_delay(config.reconnect_min)
            .set_max_delay(config.reconnect_max)
            .set_number_of_retries(1);
        let commands = tokio::time::timeout(
            config.timeout,
            client.get_connection_manager_with_config(manager),
        )
        .await
        .map_err(|_| Error::Timeout(config.url.clone()))??;
        let (lost_tx, lost_rx) = mpsc::unbounded_channel();
        let (msg_tx, msg_rx) = mpsc::channel(config.message_buffer.max(1));
        let (ctl_tx, ctl_rx) = mpsc::unbounded_channel();
        let (connected_tx, connected_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            config,
            commands,
            held: Mutex::new(HashMap::new()),
            generation: std::sync::atomic::AtomicU64::new(0),
            boot: Mutex::new(String::new()),
            lost: lost_tx,
            channels: Mutex::new(BTreeSet::new()),
            acquire: Script::new(ACQUIRE),
            release: Script::new(RELEASE),
            renew: Script::new(RENEW),
            renew_soon: tokio::sync::Notify::new(),
        });
        // Learn this Redis's lifetime marker before anything is held.
        let _ = shared.renew_round().await;
        let tasks = vec![
            tokio::spawn(renew_task(Arc::clone(&shared))),
            tokio::spawn(pubsub_task(
                client,
                Arc::clone(&shared),
                ctl_rx,
                msg_tx,
                connected_tx,
            )),
        ];
        Ok(RedisCluster {
            shared,
            ctl: ctl_tx,
            connected: connected_rx,
            lost: Mutex::new(Some(lost_rx)),
            messages: Mutex::new(Some(msg_rx)),
            tasks,
        })
    }

    /// This node's id.
    pub fn node_id(&self) -> &str {
        &self.shared.config.node_id
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// Takes the lease on `key` if nobody holds it: `Ok(None)` when this node holds it now
    /// (it did already, or took it; renewed from then on), `Ok(Some(node))` when `node` does.
    pub async fn acquire(&self, key: &str) -> Result<Option<String>, Error> {
        let s = &self.shared;
        let mut conn = s.commands.clone();
        let holder: String = s
            .timed(
                s.acquire
                    .key(s.config.lease_key(key))
                    .arg(&s.config.node_id)
                    .arg(ttl_ms(s.config.lease_ttl))
                    .invoke_async(&mut conn),
            )
            .await?;
        if holder == s.config.node_id {
            let generation = s
                .generation
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            lock(&s.held).entry(key.to_owned()).or_insert(generation);
            Ok(None)
        } else {
            Ok(Some(holder))
        }
    }

    /// The node holding `key`'s lease, if any (as Redis says now).
    pub async fn holder(&self, key: &str) -> Result<Option<String>, Error> {
        let s = &self.shared;
        let mut conn = s.commands.clone();
        s.timed(conn.get(s.config.lease_key(key))).await
    }

    /// Gives up this node's lease on `key` (nothing if another node holds it). It is no
    /// longer renewed even if Redis cannot be reached now (it then expires).
    pub async fn release(&self, key: &str) -> Result<(), Error> {
        let s = &self.shared;
        lock(&s.held).remove(key);
        let mut conn = s.commands.clone();
        let _: i64 = s
            .timed(
                s.release
                    .key(s.config.lease_key(key))
                    .arg(&s.config.node_id)
                    .invoke_async(&mut conn),
            )
            .await?;
        Ok(())
    }

    /// The keys whose lease this node holds (as far as it knows), sorted.
    pub fn held(&self) -> Vec<String> {
        let mut keys: Vec<String> = lock(&self.shared.held).keys().cloned().collect();
        keys.sort();
        keys
    }

    /// Renews every held lease now (the renewal task does every `renew_every`); reports the
    /// lost ones. An error: Redis could not be reached (nothing reported).
    pub async fn renew_now(&self) -> Result<(), Error> {
        self.shared.renew_round().await
    }

    /// The keys of held leases found lost, as they are found. Taken once.
    pub fn take_lost(&self) -> Option<mpsc::UnboundedReceiver<String>> {
        lock(&self.lost).take()
    }

    /// Publishes `payload` on `channel` to the nodes subscribed to it now (at most once).
    pub async fn publish(&self, channel: &str, payload: &[u8]) -> Result<(), Error> {
        let s = &self.shared;
        let mut conn = s.commands.clone();
        let _: i64 = s
            .timed(conn.publish(s.config.channel(channel), payload))
            .await?;
        Ok(())
    }

    /// Publishes every `(channel, payload)` in order, pipelined: one round trip to Redis for
    /// all of them (a node's publisher sends each batch it has queued this way).
    pub async fn publish_many<P: AsRef<[u8]>>(
        &self,
        messages: &[(String, P)],
    ) -> Result<(), Error> {
        if messages.is_empty() {
            return Ok(());
        }
        let s = &self.shared;
        let mut pipe = redis::pipe();
        for (channel, payload) in messages {
            pipe.publish(s.config.channel(channel), payload.as_ref())
                .ignore();
        }
        let mut conn = s.commands.clone();
        let () = s.timed(pipe.query_async(&mut conn)).await?;
        Ok(())
    }

    /// Subscribes to `channel`. When connected, returns once Redis confirmed the
    /// subscription; when not, at once: the channel is subscribed as soon as the connection
    /// is back (every subscribed channel is, at every reconnect).
    pub async fn subscribe(&self, channel: &str) -> Result<(), Error> {
        if !lock(&self.shared.channels).insert(channel.to_owned()) {
            return Ok(());
        }
        self.ask(|done| Ctl::Subscribe(channel.to_owned(), done))
            .await
    }

    /// Unsubscribes from `channel` (at once when disconnected, as [`RedisCluster::subscribe`]).
    pub async fn unsubscribe(&self, channel: &str) -> Result<(), Error> {
        if !lock(&self.shared.channels).remove(channel) {
            return Ok(());
        }
        self.ask(|done| Ctl::Unsubscribe(channel.to_owned(), done))
            .await
    }

    async fn ask(&self, ctl: impl FnOnce(oneshot::Sender<()>) -> Ctl) -> Result<(), Error> {
        let (tx, rx) = oneshot::channel();
        self.ctl.send(ctl(tx)).map_err(|_| Error::Closed)?;
        // The task answers when Redis confirmed, or at once when it is not connected (the
        // channel set is what a reconnect subscribes). A dropped answer: the connection broke
        // meanwhile, and the reconnect takes the set as it is.
        match tokio::time::timeout(self.shared.config.timeout, rx).await {
            Ok(_) => Ok(()),
            Err(_) => Err(Error::Timeout(self.shared.config.url.clone())),
        }
    }

    /// The messages of every subscribed channel, in arrival order. Taken once.
    pub fn take_messages(&self) -> Option<mpsc::Receiver<Message>> {
        lock(&self.messages).take()
    }

    /// Whether the pub/sub connection to Redis is up now.
    pub fn connected(&self) -> watch::Receiver<bool> {
        self.connected.clone()
    }

    /// Stops the background tasks without releasing anything (the leases expire after their
    /// TTL, as if the node had died). Dropping the client does the same.
    pub fn close(&self) {
        for t in &self.tasks {
            t.abort();
        }
    }

    /// Gives up every lease this node holds (one script call per 1,000 leases, not a round
    /// trip each), then closes the connections. Bounded: when Redis does not answer within
    /// the command timeout it gives up at once (the leases then expire after their TTL) — a
    /// node stopping while Redis is down still stops.
    pub async fn release_all_and_close(&self) {
        let s = &self.shared;
        let keys: Vec<String> = lock(&s.held).drain().map(|(k, _)| k).collect();
        let connected = *self.connected.borrow();
        if connected {
            for chunk in keys.chunks(RELEASE_CHUNK) {
                let mut invocation = s.release.prepare_invoke();
                for key in chunk {
                    invocation.key(s.config.lease_key(key));
                }
                invocation.arg(&s.config.node_id);
                let mut conn = s.commands.clone();
                let released: Result<i64, Error> =
                    s.timed(invocation.invoke_async(&mut conn)).await;
                if released.is_err() {
                    break;
                }
            }
        }
        self.close();
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        self.close();
    }
}

fn ttl_ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl Shared {
    async fn timed<T>(
        &self,
        f: impl std::future::Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, Error> {
        match tokio::time::timeout(self.config.timeout, f).await {
            Ok(r) => Ok(r?),
            Err(_) => Err(Error::Timeout(self.config.url.clone())),
        }
    }

    /// One renewal of every held lease (see [`RENEW`]); reports the lost ones.
    async fn renew_round(&self) -> Result<(), Error> {
        let snapshot: Vec<(String, u64)> = lock(&self.held)
            .iter()
            .map(|(k, g)| (k.clone(), *g))
            .collect();
        let known_boot = lock(&self.boot).clone();
        let mut invocation = self.renew.key(self.config.boot_key());
        for (key, _) in &snapshot {
            invocation.key(self.config.lease_key(key));
        }
        invocation
            .arg(&self.config.node_id)
            .arg(ttl_ms(self.config.lease_ttl))
            .arg(&known_boot)
            .arg(random_suffix());
        let mut conn = self.commands.clone();
        let out: Vec<redis::Value> = self.timed(invocation.invoke_async(&mut conn)).await?;
        let mut out = out.into_iter();
        if let Some(boot) = out.next() {
            let boot: String =
                redis::from_redis_value(boot).map_err(|e| Error::Reply(e.to_string()))?;
            if !known_boot.is_empty() && boot != known_boot {
                tracing::warn!(
                    node = %self.config.node_id,
                    "Redis restarted empty: taking back the leases this node held"
                );
            }
            *lock(&self.boot) = boot;
        }
        let mut lost = Vec::new();
        for ((key, generation), status) in snapshot.into_iter().zip(out) {
            let status =
                redis::from_redis_value::<i64>(status).map_err(|e| Error::Reply(e.to_string()))?;
            if status == 1 {
                continue;
            }
            let mut held = lock(&self.held);
            if held.get(&key) == Some(&generation) {
                held.remove(&key);
                lost.push(key);
            }
        }
        for key in lost {
            tracing::info!(node = %self.config.node_id, %key, "lease lost");
            let _ = self.lost.send(key);
        }
        Ok(())
    }
}

async fn renew_task(shared: Arc<Shared>) {
    let mut every = tokio::time::interval(shared.config.renew_every.max(Duration::from_millis(1)));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    every.tick().await;
    // After a failed round, the next comes sooner (backing off like the pub/sub connection):
    // once Redis is back, the node takes back or renews its leases within a fraction of a
    // second rather than at the next regular round.
    let mut retry: Option<Duration> = None;
    loop {
        let again = tokio::time::sleep(retry.unwrap_or(shared.config.renew_every));
        tokio::select! {
            _ = every.tick() => {}
            _ = shared.renew_soon.notified() => every.reset(),
            _ = again, if retry.is_some() => every.reset(),
        }
        match shared.renew_round().await {
            Ok(()) => retry = None,
            Err(e) => {
                // Unreachable: nothing is reported; the next round tries again.
                tracing::debug!(node = %shared.config.node_id, "lease renewal failed: {e}");
                retry = Some(match retry {
                    None => shared.config.reconnect_min,
                    Some(r) => (r * 2).min(shared.config.reconnect_max),
                });
            }
        }
    }
}

/// The pub/sub connection: connects (with backoff), subscribes every channel of the set,
/// forwards messages, takes (un)subscriptions, pings Redis every second to notice one that
/// stopped answering, and starts over when the connection breaks.
async fn pubsub_task(
    client: redis::Client,
    shared: Arc<Shared>,
    mut ctl: mpsc::UnboundedReceiver<Ctl>,
    messages: mpsc::Sender<Message>,
    connected: watch::Sender<bool>,
) {
    let config = &shared.config;
    let prefix = config.channel("");
    let mut backoff = config.reconnect_min;
    loop {
        let pubsub = tokio::time::timeout(config.timeout, client.get_async_pubsub()).await;
        let Ok(Ok(pubsub)) = pubsub else {
            connected.send_if_modified(|c| std::mem::replace(c, false));
            if !wait_out(backoff, &mut ctl).await {
                return;
            }
            backoff = (backoff * 2).min(config.reconnect_max);
            continue;
        };
        let (mut sink, mut stream) = pubsub.split();
        let channels: Vec<String> = lock(&shared.channels)
            .iter()
            .map(|c| config.channel(c))
            .collect();
        // A Redis that takes the connection but refuses the subscription is waited out like
        // one that refuses the connection (not retried at once, in a loop).
        if !channels.is_empty() && !ok(config, sink.subscribe(&channels)).await {
            if !wait_out(backoff, &mut ctl).await {
                return;
            }
            backoff = (backoff * 2).min(config.reconnect_max);
            continue;
        }
        backoff = config.reconnect_min;
        connected.send_if_modified(|c| !std::mem::replace(c, true));
        if config.renew_on_reconnect {
            shared.renew_soon.notify_one();
        }
        tracing::info!(node = %config.node_id, channels = channels.len(), "pub/sub connected");
        let mut ping = tokio::time::interval(Duration::from_secs(1));
        ping.tick().await;
        loop {
            tokio::select! {
                m = stream.next() => match m {
                    Some(m) => {
                        let channel = m.get_channel_name();
                        let channel = channel.strip_prefix(&prefix).unwrap_or(channel).to_owned();
                        let payload = m.get_payload_bytes().to_vec();
                        // Nobody reading (the server took no receiver or dropped it): dropped.
                        let _ = messages.send(Message { channel, payload }).await;
                    }
                    None => break,
                },
                c = ctl.recv() => match c {
                    Some(c) => {
                        if !apply(config, &mut sink, c).await {
                            break;
                        }
                    }
                    None => return,
                },
                // Any answer will do: subscribed, Redis answers `["pong", ""]`, not `PONG`.
                _ = ping.tick() => {
                    if !ok(config, sink.ping::<redis::Value>()).await {
                        break;
                    }
                }
            }
        }
        connected.send_if_modified(|c| std::mem::replace(c, false));
        tracing::warn!(node = %config.node_id, "pub/sub connection to Redis lost; reconnecting");
    }
}

/// Waits `backoff` before the next connection; meanwhile (un)subscriptions only change the
/// set, which the next connection uses. False: the cluster was dropped (stop).
async fn wait_out(backoff: Duration, ctl: &mut mpsc::UnboundedReceiver<Ctl>) -> bool {
    let wait = tokio::time::sleep(backoff);
    tokio::pin!(wait);
    loop {
        tokio::select! {
            _ = &mut wait => return true,
            c = ctl.recv() => match c {
                Some(Ctl::Subscribe(_, done) | Ctl::Unsubscribe(_, done)) => {
                    let _ = done.send(());
                }
                None => return false,
            },
        }
    }
}

/// Whether a pub/sub command succeeded in time.
async fn ok<T>(
    config: &Config,
    f: impl std::future::Future<Output = redis::RedisResult<T>>,
) -> bool {
    matches!(tokio::time::timeout(config.timeout, f).await, Ok(Ok(_)))
}

/// Carries out an (un)subscription; false when the connection failed doing so.
async fn apply(config: &Config, sink: &mut PubSubSink, c: Ctl) -> bool {
    let (done, fine) = match c {
        Ctl::Subscribe(ch, done) => (done, ok(config, sink.subscribe(config.channel(&ch))).await),
        Ctl::Unsubscribe(ch, done) => (
            done,
            ok(config, sink.unsubscribe(config.channel(&ch))).await,
        ),
    };
    if fine {
        let _ = done.send(());
    }
    fine
}
