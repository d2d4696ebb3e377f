//! Several nodes on one database (issue 23): this node's side of the cluster. Without a
//! cluster (`Env::node` is `None`) nothing here runs and no game pays for it.
//!
//! - **Ownership**: a game runs on the node holding its lease (`game:<id>`), which claimed it
//!   in the store (fencing token) before loading it (see [`crate::registry`]).
//! - **Routing**: a game owned elsewhere gets a *remote* [`GameHandle`] whose mailbox is this
//!   node's relay. The relay sends each request as one [`NodeRequest`] to the owner's channel
//!   (`node:<owner>`); the owner runs it against an [`Outbox::remote`] whose frames come back
//!   on `node:<origin>` addressed to the connection, after the owner's commit — exactly what a
//!   local client would get. A request with no answer within `remote_timeout` is answered
//!   `unavailable` (retryable: a move is idempotent by ply).
//! - **Fan-out**: the owner publishes each event once on `game:<id>:live` and, when the
//!   broadcast delay releases it, on `game:<id>:public`. A relay subscribes to both for every
//!   remote game it knows and fans each frame out to its local subscribers. A subscription
//!   asks the owner for the catch-up (reply and replay or snapshot, as a local subscription
//!   gets) with `relay` set; the relay then forwards channel frames past the seq the reply
//!   gave. A gap in a subscriber's seqs (a message lost) asks for the catch-up again.
//! - **Failover**: the sweeper takes every unfinished game nobody holds (first come wins the
//!   lease) and re-routes remote games whose owner changed; their subscribers ask the new
//!   owner for what they missed. A lease found lost, or a commit the store refused as fenced,
//!   unloads the game here ([`crate::shard`]) and its requests and subscribers follow it.
//!
//! One publisher task sends everything in order (so a remote client's answer and the event
//! it caused leave in the order the owner made them).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use chuhe_proto::v1::{
    self as w, ChannelFrame, ClientMessage, NodeFrame, NodeFrames, NodeMessage, NodePrincipal,
    NodeRequest, ServerMessage, client_message, node_message, server_message,
};
use prost::Message as _;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::Env;
use crate::cluster::{Cluster, ClusterMessage};
use crate::error::ClientError;
use crate::handle::{GameHandle, ShardCmd};
use crate::outbox::{Out, Outbox, SharedFrame};
use crate::persist::{Account, Role};
use crate::request::{Body, Principal, RecordView, Request};

/// How many messages wait for the publisher at most; beyond, a publish is dropped (counted,
/// logged) as a message the coordination service lost would be: subscribers notice the gap.
const PUBLISH_QUEUE: usize = 65_536;
/// The relay's mailbox (remote games' requests).
const RELAY_MAILBOX: usize = 65_536;
/// Every node publishes the games it runs this often (the cluster-wide game list)…
const GAME_LIST_EVERY: Duration = Duration::from_secs(1);
/// …and a list older than this is dropped (its node is gone).
const GAME_LIST_TTL: Duration = Duration::from_secs(3);
/// The channel of the nodes' game lists.
const GAMES_CHANNEL: &str = "games";

/// The lease key of a game.
pub fn game_key(id: i64) -> String {
    format!("game:{id}")
}

/// The lease key of a league (its runner).
pub fn league_key(id: i64) -> String {
    format!("league:{id}")
}

/// The lease every node holds on itself while it runs: a sweep asks once per owner node
/// whether it is alive instead of once per remote game.
fn alive_key(node: &str) -> String {
    format!("alive:{node}")
}

fn node_channel(node: &str) -> String {
    format!("node:{node}")
}

/// What the publisher sends.
enum Publish {
    /// A frame for a client on `node` (coalesced with the next ones for the same node).
    Frame(String, NodeFrame),
    /// A message, as it is, on a channel.
    Raw(String, Bytes),
}

/// Messages to the relay from elsewhere in this node.
pub(crate) enum Ctl {
    /// The registry made a remote handle: relay its requests to its owner.
    Track {
        id: i64,
        owner: Arc<Mutex<String>>,
        alive: Arc<AtomicBool>,
    },
    /// The sweeper found the game's lease holder: `Some(node)` another node (re-route there),
    /// `None` this node (the game now runs here).
    Owner { id: i64, owner: Option<String> },
    /// A request for a game that has just left this node's shard (lost lease, fenced commit):
    /// it goes wherever the game is now.
    Reroute(i64, Box<Request>),
    /// A league websocket message for a league `owner` runs.
    League {
        id: i64,
        owner: String,
        req: u32,
        who: Arc<Principal>,
        out: Outbox,
        kind: Box<client_message::Kind>,
    },
    /// A league's node as its lease says now: its relayed subscribers catch up there.
    LeagueOwner { id: i64, owner: String },
}

/// This node's link to the others (in [`Env::node`]).
pub struct Link {
    pub cluster: Arc<dyn Cluster>,
    pub id: String,
    relay_tx: mpsc::Sender<ShardCmd>,
    /// The node's metrics (set once the node's `Env` exists).
    metrics: std::sync::OnceLock<Arc<crate::metrics::Metrics>>,
    ctl_tx: mpsc::UnboundedSender<Ctl>,
    publish_tx: mpsc::Sender<Publish>,
    #[allow(clippy::type_complexity)]
    receivers: Mutex<
        Option<(
            mpsc::Receiver<ShardCmd>,
            mpsc::UnboundedReceiver<Ctl>,
            mpsc::Receiver<Publish>,
        )>,
    >,
    /// Games whose lease this node took (released at shutdown).
    owned: Mutex<std::collections::HashSet<i64>>,
    /// Leagues whose lease this node took (released at shutdown).
    leagues: Mutex<std::collections::HashSet<i64>>,
    /// League API requests forwarded to the league's node, waiting for its answer.
    http_calls: Mutex<HashMap<u64, tokio::sync::oneshot::Sender<w::NodeHttpResponse>>>,
    next_http_call: std::sync::atomic::AtomicU64,
    /// The other nodes' game lists as they last published them, with when they came.
    lists: Mutex<HashMap<String, (Instant, Vec<w::GameSummary>)>>,
    /// Remote games whose owner answered `unavailable` or did not answer: the next sweep
    /// looks their lease holder up even though their owner node is alive.
    suspects: Mutex<std::collections::HashSet<i64>>,
}

impl Link {
    pub fn new(cluster: Arc<dyn Cluster>) -> Arc<Link> {
        let (relay_tx, relay_rx) = mpsc::channel(RELAY_MAILBOX);
        let (ctl_tx, ctl_rx) = mpsc::unbounded_channel();
        let (publish_tx, publish_rx) = mpsc::channel(PUBLISH_QUEUE);
        Arc::new(Link {
            id: cluster.node_id().to_string(),
            cluster,
            relay_tx,
            metrics: std::sync::OnceLock::new(),
            ctl_tx,
            publish_tx,
            receivers: Mutex::new(Some((relay_rx, ctl_rx, publish_rx))),
            owned: Mutex::default(),
            leagues: Mutex::default(),
            http_calls: Mutex::default(),
            next_http_call: std::sync::atomic::AtomicU64::new(1),
            suspects: Mutex::default(),
            lists: Mutex::default(),
        })
    }

    fn owned(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<i64>> {
        self.owned.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// This node holds `game`'s lease and runs it.
    pub(crate) fn took(&self, game: i64) {
        self.owned().insert(game);
    }

    /// This node runs the league `id` (holds its lease).
    pub(crate) fn took_league(&self, id: i64) {
        if let Ok(mut l) = self.leagues.lock() {
            l.insert(id);
        }
    }

    /// A league game ended here but its league runs on another node: tell that node.
    pub(crate) fn tell_league(self: &Arc<Self>, league: i64, end: crate::league::runner::GameEnd) {
        let link = self.clone();
        tokio::spawn(async move {
            let holder = match link.cluster.holder(&league_key(league)).await {
                Ok(Some(h)) => h,
                Ok(None) => {
                    // Nobody runs it right now: its next runner reconciles its games' ends.
                    debug!(
                        league,
                        "league not running anywhere; its next runner catches up"
                    );
                    return;
                }
                Err(e) => {
                    warn!(league, error = %e, "cannot tell the league a game ended");
                    return;
                }
            };
            let msg = NodeMessage {
                kind: Some(node_message::Kind::LeagueGameEnded(w::LeagueGameEnded {
                    league,
                    game: end.game,
                    result: end.result,
                    reason: end.reason,
                    red_fouls: end.fouls[0],
                    black_fouls: end.fouls[1],
                })),
            };
            link.publish(Publish::Raw(
                node_channel(&holder),
                Bytes::from(msg.encode_to_vec()),
            ));
        });
    }

    /// This node gave `game` up (or lost it).
    pub(crate) fn gave_up(&self, game: i64) {
        self.owned().remove(&game);
    }

    /// A handle to a game `owner` runs: its requests go to this node's relay.
    pub(crate) fn remote_handle(&self, id: i64, owner: String) -> GameHandle {
        let owner = Arc::new(Mutex::new(owner));
        let alive = Arc::new(AtomicBool::new(true));
        let _ = self.ctl_tx.send(Ctl::Track {
            id,
            owner: owner.clone(),
            alive: alive.clone(),
        });
        GameHandle {
            id,
            tx: self.relay_tx.clone(),
            summary: Default::default(),
            alive,
            remote: Some(owner),
        }
    }

    fn count(&self, which: impl Fn(&crate::metrics::Metrics) -> &std::sync::atomic::AtomicU64) {
        if let Some(m) = self.metrics.get() {
            which(m).fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A game left this node (lease lost, commit fenced).
    pub(crate) fn game_left(&self) {
        self.count(|m| &m.cluster_games_left_total);
    }

    /// The unfinished games the other nodes run (as they said within the last 3 s).
    pub(crate) fn others_games(&self) -> Vec<w::GameSummary> {
        self.lists_by_node()
            .into_iter()
            .flat_map(|(_, g)| g)
            .collect()
    }

    /// The other nodes' game lists (said within the last 3 s), by node.
    fn lists_by_node(&self) -> Vec<(String, Vec<w::GameSummary>)> {
        let now = Instant::now();
        let Ok(mut lists) = self.lists.lock() else {
            return Vec::new();
        };
        lists.retain(|_, (at, _)| now.duration_since(*at) < GAME_LIST_TTL);
        lists
            .iter()
            .map(|(n, (_, g))| (n.clone(), g.clone()))
            .collect()
    }

    /// Whether `node` runs (holds its own alive lease), asked once per sweep.
    async fn is_alive(
        &self,
        node: &str,
        cache: &mut HashMap<String, bool>,
    ) -> Result<bool, crate::cluster::ClusterError> {
        if let Some(up) = cache.get(node) {
            return Ok(*up);
        }
        let up = self.cluster.holder(&alive_key(node)).await?.as_deref() == Some(node);
        cache.insert(node.to_string(), up);
        Ok(up)
    }

    fn suspect(&self, game: i64) {
        if let Ok(mut s) = self.suspects.lock() {
            s.insert(game);
        }
    }

    pub(crate) fn ctl(&self, c: Ctl) {
        let _ = self.ctl_tx.send(c);
    }

    fn publish(&self, p: Publish) -> bool {
        match self.publish_tx.try_send(p) {
            Ok(()) => true,
            Err(_) => {
                warn!("cluster publish queue full; a message is dropped");
                self.count(|m| &m.cluster_publish_dropped_total);
                false
            }
        }
    }
}

/// Where a game's owner publishes its streams for the other nodes.
pub(crate) struct GameChannels {
    live: String,
    public: String,
    link: Arc<Link>,
}

impl GameChannels {
    /// The channels of game `id` when this node is one of several.
    pub(crate) fn of(env: &Env, id: i64) -> Option<Arc<GameChannels>> {
        let link = env.node.clone()?;
        Some(Arc::new(GameChannels {
            live: format!("game:{id}:live"),
            public: format!("game:{id}:public"),
            link,
        }))
    }

    /// Publishes one event frame of the live (true) or the delayed public stream.
    pub(crate) fn publish(&self, live: bool, frame: &SharedFrame) {
        let msg = ChannelFrame {
            seq: frame.seq,
            message: frame.proto_bytes().to_vec(),
        };
        let channel = if live { &self.live } else { &self.public };
        self.link.publish(Publish::Raw(
            channel.clone(),
            Bytes::from(msg.encode_to_vec()),
        ));
    }
}

/// A channel a league's runner publishes its public stream on.
pub(crate) struct Channel {
    name: String,
    link: Arc<Link>,
}

impl Channel {
    pub(crate) fn of(env: &Env, name: String) -> Option<Channel> {
        Some(Channel {
            name,
            link: env.node.clone()?,
        })
    }

    pub(crate) fn publish(&self, frame: &SharedFrame) {
        let msg = ChannelFrame {
            seq: frame.seq,
            message: frame.proto_bytes().to_vec(),
        };
        self.link.publish(Publish::Raw(
            self.name.clone(),
            Bytes::from(msg.encode_to_vec()),
        ));
    }
}

/// A league websocket message for a league that does not run here: relayed to the node
/// that runs it. `Some(kind)`: no other node runs it (answer it here).
pub(crate) async fn relay_league(
    env: &Env,
    who: &Principal,
    out: &Outbox,
    req: u32,
    id: i64,
    kind: client_message::Kind,
) -> Option<client_message::Kind> {
    let link = env.node.clone()?;
    let owner = match link.cluster.holder(&league_key(id)).await {
        Ok(Some(owner)) if owner != link.id => owner,
        _ => return Some(kind),
    };
    link.ctl(Ctl::League {
        id,
        owner,
        req,
        who: Arc::new(who.clone()),
        out: out.clone(),
        kind: Box::new(kind),
    });
    None
}

/// Starts this node's cluster tasks (the publisher, the relay, the sweeper) when it is one
/// of several; they stop at shutdown, the relay once the shards have settled (it releases
/// this node's leases then, so the others take its games at once).
pub fn start(env: &Env) {
    let Some(link) = env.node.clone() else {
        return;
    };
    let Some((relay_rx, ctl_rx, publish_rx)) =
        link.receivers.lock().ok().and_then(|mut r| r.take())
    else {
        return;
    };
    let Some(messages) = link.cluster.messages() else {
        warn!("cluster messages already taken; this node cannot relay");
        return;
    };
    let lost = link.cluster.lost();
    let _ = link.metrics.set(env.metrics.clone());
    tokio::spawn(publisher(
        link.cluster.clone(),
        publish_rx,
        env.settled.clone(),
    ));
    let relay = Relay {
        env: env.clone(),
        link: link.clone(),
        games: crate::IdMap::default(),
        leagues: crate::IdMap::default(),
        pending: HashMap::new(),
        conns: HashMap::new(),
        next_call: 0,
    };
    tokio::spawn(relay.run(relay_rx, ctl_rx, messages, lost));
    tokio::spawn(sweeper(env.clone()));
    let me = link.clone();
    tokio::spawn(async move {
        match me.cluster.acquire(&alive_key(&me.id)).await {
            Ok(None) => {}
            Ok(Some(other)) => {
                warn!(node = %me.id, holder = %other, "another process holds this node's id")
            }
            Err(e) => warn!(error = %e, "cannot announce this node"),
        }
    });
}

/// Sends what the node publishes, in order; consecutive frames for one node go as one message.
async fn publisher(
    cluster: Arc<dyn Cluster>,
    mut rx: mpsc::Receiver<Publish>,
    mut settled: tokio::sync::watch::Receiver<bool>,
) {
    let mut batch = Vec::with_capacity(256);
    loop {
        tokio::select! {
            n = rx.recv_many(&mut batch, 256) => {
                if n == 0 {
                    return;
                }
            }
            _ = async { let _ = settled.wait_for(|s| *s).await; } => {
                // Shutdown: what is queued still goes, then the task ends.
                while let Ok(p) = rx.try_recv() {
                    batch.push(p);
                }
                send_batch(cluster.as_ref(), &mut batch).await;
                return;
            }
        }
        send_batch(cluster.as_ref(), &mut batch).await;
    }
}

async fn send_batch(cluster: &dyn Cluster, batch: &mut Vec<Publish>) {
    let mut frames: Option<(String, Vec<NodeFrame>)> = None;
    for p in batch.drain(..) {
        match p {
            Publish::Frame(node, f) => match &mut frames {
                Some((n, v)) if *n == node => v.push(f),
                _ => {
                    if let Some((n, v)) = frames.take() {
                        send_frames(cluster, &n, v).await;
                    }
                    frames = Some((node, vec![f]));
                }
            },
            Publish::Raw(channel, bytes) => {
                if let Some((n, v)) = frames.take() {
                    send_frames(cluster, &n, v).await;
                }
                if let Err(e) = cluster.publish(&channel, bytes).await {
                    debug!(channel, error = %e, "publish failed");
                }
            }
        }
    }
    if let Some((n, v)) = frames.take() {
        send_frames(cluster, &n, v).await;
    }
}

async fn send_frames(cluster: &dyn Cluster, node: &str, frames: Vec<NodeFrame>) {
    let msg = NodeMessage {
        kind: Some(node_message::Kind::Frames(NodeFrames { frames })),
    };
    if let Err(e) = cluster
        .publish(&node_channel(node), Bytes::from(msg.encode_to_vec()))
        .await
    {
        debug!(node, error = %e, "frames not sent");
    }
}

/// A remote game as this node's relay knows it.
struct RemoteGame {
    owner: Arc<Mutex<String>>,
    alive: Arc<AtomicBool>,
    subs: Vec<RemoteSub>,
}

/// A local subscriber of a remote game.
struct RemoteSub {
    out: Outbox,
    who: Arc<Principal>,
    live: bool,
    /// The last seq it was sent.
    last: u64,
    /// Waiting for a catch-up (channel frames are skipped meanwhile: the catch-up has them).
    catching_up: bool,
    /// Needs a catch-up (a gap, a new owner, a catch-up that failed): asked at the next tick.
    stale: bool,
}

/// A request sent to an owner, waiting for its answer.
struct Call {
    conn: u64,
    req: u32,
    /// The game's id, or the league's.
    game: i64,
    league: bool,
    deadline: Instant,
    /// A relayed subscription: who subscribes (the reply puts it among the game's subscribers).
    sub: Option<Arc<Principal>>,
    /// Asked by the relay itself (a re-subscription): its reply is not the client's.
    internal: bool,
    /// The request as sent (to send it again to a game's new owner).
    request: NodeRequest,
}

/// Where a relayed message goes.
struct Target<'a> {
    id: i64,
    league: bool,
    owner: &'a str,
}

struct Relay {
    env: Env,
    link: Arc<Link>,
    games: crate::IdMap<i64, RemoteGame>,
    /// Leagues other nodes run that local connections follow (their subscribers).
    leagues: crate::IdMap<i64, RemoteGame>,
    pending: HashMap<u64, Call>,
    /// The queues of local connections that sent requests to other nodes, by connection id.
    conns: HashMap<u64, Outbox>,
    next_call: u64,
}

fn owner_of(g: &RemoteGame) -> String {
    g.owner.lock().map(|o| o.clone()).unwrap_or_default()
}

impl Relay {
    async fn run(
        mut self,
        mut cmds: mpsc::Receiver<ShardCmd>,
        mut ctl: mpsc::UnboundedReceiver<Ctl>,
        mut messages: mpsc::Receiver<ClusterMessage>,
        lost: Option<mpsc::UnboundedReceiver<String>>,
    ) {
        if let Err(e) = self
            .link
            .cluster
            .subscribe(&node_channel(&self.link.id))
            .await
        {
            warn!(error = %e, "cannot subscribe to this node's channel");
        }
        if let Err(e) = self.link.cluster.subscribe(GAMES_CHANNEL).await {
            warn!(error = %e, "cannot subscribe to the nodes' game lists");
        }
        let mut lost = lost;
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        let mut settled = self.env.settled.clone();
        let mut connected = self.link.cluster.connected();
        loop {
            tokio::select! {
                biased;
                _ = async { let _ = settled.wait_for(|s| *s).await; } => break,
                Ok(()) = connected.changed() => {
                    // Back from an outage of the coordination service: messages published
                    // meanwhile are lost; every relayed subscriber catches up by seq.
                    if *connected.borrow_and_update() {
                        info!("coordination service reachable again; subscribers catch up");
                        let ids: Vec<i64> = self.games.keys().copied().collect();
                        for id in ids {
                            self.resubscribe_all(id);
                        }
                        for l in self.leagues.values_mut() {
                            for s in &mut l.subs {
                                s.stale = true;
                                s.catching_up = false;
                            }
                        }
                    }
                }
                Some(c) = ctl.recv() => self.on_ctl(c).await,
                Some(key) = async { match lost.as_mut() { Some(l) => l.recv().await, None => None } } => {
                    self.on_lost(&key);
                }
                Some(m) = messages.recv() => self.on_message(m),
                Some(cmd) = cmds.recv() => {
                    // A handle made just now announced its game on `ctl` first.
                    while let Ok(c) = ctl.try_recv() {
                        self.on_ctl(c).await;
                    }
                    self.on_cmd(cmd);
                }
                _ = tick.tick() => {
                    self.expire(Instant::now());
                    self.catch_up();
                }
            }
        }
        // Shutdown: the shards have settled; the games this node ran are free for the others.
        let owned: Vec<i64> = self.link.owned().drain().collect();
        for id in owned {
            let _ = self.link.cluster.release(&game_key(id)).await;
            self.env.persist.unclaim(Some(id), None);
        }
        let leagues: Vec<i64> = match self.link.leagues.lock() {
            Ok(mut l) => l.drain().collect(),
            Err(_) => Vec::new(),
        };
        for id in leagues {
            let _ = self.link.cluster.release(&league_key(id)).await;
            self.env.persist.unclaim(None, Some(id));
        }
        let _ = self.link.cluster.release(&alive_key(&self.link.id)).await;
        for (_, call) in self.pending.drain() {
            if let Some(out) = self.conns.get(&call.conn) {
                error_to(out, call.req, call.game, &ClientError::ShuttingDown);
            }
        }
    }

    fn on_lost(&mut self, key: &str) {
        if let Some(id) = key
            .strip_prefix("league:")
            .and_then(|s| s.parse::<i64>().ok())
        {
            warn!(league = id, "league lease lost; its runner stops here");
            if let Ok(mut l) = self.link.leagues.lock() {
                l.remove(&id);
            }
            self.env.leagues.forget(id);
            self.env.persist.unclaim(None, Some(id));
            return;
        }
        let Some(id) = key
            .strip_prefix("game:")
            .and_then(|s| s.parse::<i64>().ok())
        else {
            return;
        };
        warn!(game = id, "lease lost; unloading the game here");
        self.link.gave_up(id);
        let _ = self
            .env
            .shards
            .sender_for(id)
            .try_send(ShardCmd::Unload(id));
    }

    async fn on_ctl(&mut self, c: Ctl) {
        match c {
            Ctl::Track { id, owner, alive } => {
                if let Some(g) = self.games.get_mut(&id) {
                    // A new handle for a game known already (its old one died).
                    g.alive.store(false, Ordering::Release);
                    g.owner = owner;
                    g.alive = alive;
                    return;
                }
                for ch in [format!("game:{id}:live"), format!("game:{id}:public")] {
                    // Bounded: an unreachable coordination service must not stall the relay
                    // (its subscribers catch up when it is back).
                    let limit = self.env.config.remote_timeout;
                    match tokio::time::timeout(limit, self.link.cluster.subscribe(&ch)).await {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => {
                            warn!(game = id, error = %e, "cannot subscribe to a game's channel")
                        }
                        Err(_) => warn!(game = id, "subscribing to a game's channel timed out"),
                    }
                }
                self.games.insert(
                    id,
                    RemoteGame {
                        owner,
                        alive,
                        subs: Vec::new(),
                    },
                );
            }
            Ctl::Owner {
                id,
                owner: Some(node),
            } => {
                let Some(g) = self.games.get_mut(&id) else {
                    return;
                };
                if let Ok(mut o) = g.owner.lock() {
                    if *o == node {
                        return;
                    }
                    info!(game = id, from = %*o, to = %node, "game moved; re-routing");
                    *o = node.clone();
                }
                self.resend_pending(id, Some(&node));
                self.resubscribe_all(id);
            }
            Ctl::Owner { id, owner: None } => {
                // The game runs here now: its subscribers subscribe to it here.
                let Some(g) = self.games.remove(&id) else {
                    return;
                };
                g.alive.store(false, Ordering::Release);
                for ch in [format!("game:{id}:live"), format!("game:{id}:public")] {
                    let _ = self.link.cluster.unsubscribe(&ch).await;
                }
                self.resend_pending(id, None);
                match self.env.registry.get(id).filter(|h| !h.is_remote()) {
                    Some(h) => {
                        for s in g.subs {
                            let _ = h.send(Request {
                                req: 0,
                                who: s.who,
                                out: s.out,
                                lag: Duration::ZERO,
                                received: Instant::now(),
                                body: Body::Subscribe {
                                    last_seq: s.last,
                                    relay: None,
                                },
                            });
                        }
                    }
                    None => warn!(game = id, "game taken over but not found here"),
                }
            }
            Ctl::League {
                id,
                owner,
                req,
                who,
                out,
                kind,
            } => self.on_league(id, owner, req, who, out, *kind).await,
            Ctl::LeagueOwner { id, owner } => {
                if let Some(l) = self.leagues.get_mut(&id) {
                    let changed = l.owner.lock().map(|mut o| {
                        let changed = *o != owner;
                        *o = owner;
                        changed
                    });
                    if changed.unwrap_or(false) {
                        for s in &mut l.subs {
                            s.stale = true;
                            s.catching_up = false;
                        }
                    }
                }
            }
            Ctl::Reroute(id, r) => {
                if self.games.contains_key(&id) {
                    self.on_cmd(ShardCmd::Client(id, r));
                } else {
                    let env = self.env.clone();
                    tokio::spawn(async move {
                        match env.registry.get_or_load(&env, id).await {
                            Ok(h) => {
                                let out = r.out.clone();
                                let req = r.req;
                                if let Err(e) = h.send(*r) {
                                    error_to(&out, req, id, &e);
                                }
                            }
                            Err(e) => error_to(&r.out, r.req, id, &e),
                        }
                    });
                }
            }
        }
    }

    /// The requests of a game still waiting for its old owner's answer go to its new owner
    /// (`None`: this node) at once rather than time out: a move is idempotent by ply, so one
    /// the old owner committed before it vanished is answered again, not played twice.
    fn resend_pending(&mut self, id: i64, owner: Option<&str>) {
        let calls: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, c)| !c.league && c.game == id)
            .map(|(k, _)| *k)
            .collect();
        let deadline = Instant::now() + self.env.config.remote_timeout;
        for k in calls {
            match owner {
                Some(node) => {
                    let Some(c) = self.pending.get_mut(&k) else {
                        continue;
                    };
                    c.deadline = deadline;
                    let msg = NodeMessage {
                        kind: Some(node_message::Kind::Request(c.request.clone())),
                    };
                    self.link.publish(Publish::Raw(
                        node_channel(node),
                        Bytes::from(msg.encode_to_vec()),
                    ));
                }
                None => {
                    // Runs here now: the request goes to the local game (subscriptions as
                    // plain local ones), answering the connection directly.
                    let Some(c) = self.pending.remove(&k) else {
                        continue;
                    };
                    if c.internal {
                        continue;
                    }
                    let Some(out) = self.conns.get(&c.conn).cloned() else {
                        continue;
                    };
                    let Ok(cm) = ClientMessage::decode(&c.request.message[..]) else {
                        continue;
                    };
                    let Some(Ok((_, body))) = cm.kind.and_then(crate::request::game_request) else {
                        continue;
                    };
                    let r = Request {
                        req: c.req,
                        who: principal_of(c.request.principal),
                        out,
                        lag: Duration::from_millis(u64::from(c.request.lag_ms)),
                        received: Instant::now(),
                        body,
                    };
                    self.link.ctl(Ctl::Reroute(id, Box::new(r)));
                }
            }
        }
    }

    /// Every local subscriber of `id` asks the game's (new) owner for what it missed.
    fn resubscribe_all(&mut self, id: i64) {
        if let Some(g) = self.games.get_mut(&id) {
            for s in &mut g.subs {
                s.stale = true;
                s.catching_up = false;
            }
        }
        self.catch_up();
    }

    /// Asks the owner for the catch-up of every stale subscriber (one call each).
    fn catch_up(&mut self) {
        let mut asks = Vec::new();
        for (id, g) in self.games.iter_mut() {
            let owner = owner_of(g);
            g.subs.retain(|s| !s.out.is_closed());
            for s in g.subs.iter_mut().filter(|s| s.stale && !s.catching_up) {
                s.stale = false;
                s.catching_up = true;
                asks.push((*id, owner.clone(), s.out.clone(), s.who.clone(), s.last));
            }
        }
        for (id, owner, out, who, last) in asks {
            self.send_call(id, &owner, internal_subscribe(out, who, last), true);
        }
        let mut asks = Vec::new();
        for (id, l) in self.leagues.iter_mut() {
            let owner = owner_of(l);
            l.subs.retain(|s| !s.out.is_closed());
            for s in l.subs.iter_mut().filter(|s| s.stale && !s.catching_up) {
                s.stale = false;
                s.catching_up = true;
                asks.push((*id, owner.clone(), s.out.clone(), s.who.clone(), s.last));
            }
        }
        for (id, owner, out, who, last) in asks {
            let message = ClientMessage {
                request_id: 0,
                kind: Some(client_message::Kind::LeagueSubscribe(w::LeagueSubscribe {
                    league_id: id.to_string(),
                    last_seq: last,
                })),
            };
            let to = Target {
                id,
                league: true,
                owner: &owner,
            };
            self.send_message(to, out, who, message, Duration::ZERO, true, true);
        }
    }

    fn on_cmd(&mut self, cmd: ShardCmd) {
        match cmd {
            ShardCmd::Client(id, r) => {
                let Some(g) = self.games.get_mut(&id) else {
                    // The handle died (the game moved here, or was never tracked): look again.
                    self.link.ctl(Ctl::Reroute(id, r));
                    return;
                };
                if matches!(r.body, Body::Unsubscribe) {
                    g.subs.retain(|s| s.out.conn_id != r.out.conn_id);
                    r.out.send_msg(ServerMessage {
                        kind: Some(server_message::Kind::Reply(w::Reply {
                            request_id: r.req,
                            game_id: id.to_string(),
                            seq: 0,
                        })),
                    });
                    return;
                }
                let owner = owner_of(g);
                let relay = matches!(r.body, Body::Subscribe { .. });
                self.send_call(id, &owner, *r, relay);
            }
            ShardCmd::Detach(id, conn) => {
                if let Some(g) = self.games.get_mut(&id) {
                    g.subs.retain(|s| s.out.conn_id != conn);
                }
            }
            ShardCmd::Record {
                game,
                public,
                arbiter,
                reply,
            } => {
                let env = self.env.clone();
                tokio::spawn(async move {
                    if let Some(v) =
                        record_from_store(&env, game, public || arbiter.is_some()).await
                    {
                        let _ = reply.send(v);
                    }
                });
            }
            ShardCmd::Adopt(_) | ShardCmd::Unload(_) => {}
        }
    }

    /// Sends a request to the game's owner and waits for its answer (until the deadline).
    fn send_call(&mut self, id: i64, owner: &str, r: Request, relay: bool) {
        let message = ClientMessage {
            request_id: r.req,
            kind: Some(r.body.to_kind(id.to_string())),
        };
        let internal = matches!(&r.body, Body::Subscribe { relay: Some(_), .. });
        let to = Target {
            id,
            league: false,
            owner,
        };
        self.send_message(to, r.out, r.who, message, r.lag, relay, internal);
    }

    /// Sends a client message to the node running a game or league; its answer comes back
    /// to `out` (a relayed subscription's reply makes it a subscriber here).
    #[allow(clippy::too_many_arguments)]
    fn send_message(
        &mut self,
        to: Target<'_>,
        out: Outbox,
        who: Arc<Principal>,
        message: ClientMessage,
        lag: Duration,
        relay: bool,
        internal: bool,
    ) {
        self.next_call += 1;
        let call = self.next_call;
        let req = message.request_id;
        let principal = who.account.as_ref().map(|a| NodePrincipal {
            account_id: a.id,
            name: a.name.clone(),
            role: a.role.as_str().to_string(),
        });
        let nr = NodeRequest {
            origin: self.link.id.clone(),
            conn_id: out.conn_id,
            call,
            game: to.id,
            principal,
            message: message.encode_to_vec(),
            lag_ms: u32::try_from(lag.as_millis()).unwrap_or(u32::MAX),
            relay,
            league: to.league,
        };
        let msg = NodeMessage {
            kind: Some(node_message::Kind::Request(nr.clone())),
        };
        if !self.link.publish(Publish::Raw(
            node_channel(to.owner),
            Bytes::from(msg.encode_to_vec()),
        )) {
            error_to(&out, req, to.id, &ClientError::Busy);
            return;
        }
        if !internal {
            self.link.count(|m| &m.cluster_relayed_total);
        }
        self.pending.insert(
            call,
            Call {
                conn: out.conn_id,
                req,
                game: to.id,
                league: to.league,
                deadline: Instant::now() + self.env.config.remote_timeout,
                sub: relay.then(|| who.clone()),
                internal,
                request: nr,
            },
        );
        self.conns.insert(out.conn_id, out);
    }

    /// The subscribers of a remote game or league.
    fn subs_of(&mut self, league: bool, id: i64) -> Option<&mut Vec<RemoteSub>> {
        let map = if league {
            &mut self.leagues
        } else {
            &mut self.games
        };
        map.get_mut(&id).map(|g| &mut g.subs)
    }

    /// Marks a subscriber of a remote game or league for a new catch-up.
    fn restale(&mut self, league: bool, id: i64, conn: u64) {
        if let Some(subs) = self.subs_of(league, id) {
            for s in subs.iter_mut().filter(|s| s.out.conn_id == conn) {
                s.catching_up = false;
                s.stale = true;
            }
        }
    }

    /// A league's node may have changed: looks its lease holder up (in the background).
    fn look_up_league(&self, id: i64) {
        let link = self.link.clone();
        tokio::spawn(async move {
            if let Ok(Some(owner)) = link.cluster.holder(&league_key(id)).await {
                link.ctl(Ctl::LeagueOwner { id, owner });
            }
        });
    }

    /// A league message for a league another node runs.
    async fn on_league(
        &mut self,
        id: i64,
        owner: String,
        req: u32,
        who: Arc<Principal>,
        out: Outbox,
        kind: client_message::Kind,
    ) {
        if !self.leagues.contains_key(&id) {
            let ch = format!("league:{id}:public");
            let limit = self.env.config.remote_timeout;
            match tokio::time::timeout(limit, self.link.cluster.subscribe(&ch)).await {
                Ok(Ok(())) => {}
                _ => warn!(league = id, "cannot subscribe to a league's channel"),
            }
            self.leagues.insert(
                id,
                RemoteGame {
                    owner: Arc::new(Mutex::new(owner.clone())),
                    alive: Arc::new(AtomicBool::new(true)),
                    subs: Vec::new(),
                },
            );
        }
        if let Some(l) = self.leagues.get_mut(&id) {
            if let Ok(mut o) = l.owner.lock() {
                *o = owner.clone();
            }
            if let client_message::Kind::LeagueUnsubscribe(_) = &kind {
                l.subs.retain(|s| s.out.conn_id != out.conn_id);
                out.send_msg(ServerMessage {
                    kind: Some(server_message::Kind::Reply(w::Reply {
                        request_id: req,
                        game_id: String::new(),
                        seq: 0,
                    })),
                });
                return;
            }
        }
        let relay = matches!(kind, client_message::Kind::LeagueSubscribe(_));
        let message = ClientMessage {
            request_id: req,
            kind: Some(kind),
        };
        let to = Target {
            id,
            league: true,
            owner: &owner,
        };
        self.send_message(to, out, who, message, Duration::ZERO, relay, false);
    }

    /// Answers `unavailable` to requests whose owner did not answer in time.
    fn expire(&mut self, now: Instant) {
        let late: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, c)| c.deadline <= now)
            .map(|(k, _)| *k)
            .collect();
        for k in late {
            let Some(c) = self.pending.remove(&k) else {
                continue;
            };
            if c.league {
                self.look_up_league(c.game);
            } else {
                self.link.suspect(c.game);
            }
            // A subscriber whose catch-up did not come: asked again at the next tick.
            if c.sub.is_some() {
                self.restale(c.league, c.game, c.conn);
            }
            if c.internal {
                continue;
            }
            self.link.count(|m| &m.cluster_remote_timeouts_total);
            if let Some(out) = self.conns.get(&c.conn) {
                error_to(out, c.req, c.game, &ClientError::Unavailable);
            }
        }
        self.conns.retain(|_, o| !o.is_closed());
    }

    fn on_message(&mut self, m: ClusterMessage) {
        for (prefix, league) in [("game:", false), ("league:", true)] {
            if let Some(rest) = m.channel.strip_prefix(prefix) {
                let mut parts = rest.splitn(2, ':');
                let (Some(id), Some(stream)) = (parts.next(), parts.next()) else {
                    return;
                };
                let Ok(id) = id.parse::<i64>() else {
                    return;
                };
                self.on_channel(league, id, stream == "live", &m.payload);
                return;
            }
        }
        let Ok(msg) = NodeMessage::decode(&m.payload[..]) else {
            warn!(channel = m.channel, "undecodable node message");
            return;
        };
        match msg.kind {
            Some(node_message::Kind::Request(r)) => self.serve_remote(r),
            Some(node_message::Kind::Frames(f)) => {
                for frame in f.frames {
                    self.on_frame(frame);
                }
            }
            Some(node_message::Kind::Games(g)) if g.node != self.link.id => {
                if let Ok(mut lists) = self.link.lists.lock() {
                    lists.insert(g.node, (Instant::now(), g.games));
                }
            }
            Some(node_message::Kind::Games(_)) => {}
            Some(node_message::Kind::HttpRequest(r)) => {
                tokio::spawn(serve_http(self.env.clone(), self.link.clone(), r));
            }
            Some(node_message::Kind::HttpResponse(r)) => {
                let waiting = self
                    .link
                    .http_calls
                    .lock()
                    .ok()
                    .and_then(|mut c| c.remove(&r.call));
                if let Some(tx) = waiting {
                    let _ = tx.send(r);
                }
            }
            Some(node_message::Kind::LeagueGameEnded(e)) => {
                let end = crate::league::runner::GameEnd {
                    game: e.game,
                    result: e.result,
                    reason: e.reason,
                    fouls: [e.red_fouls, e.black_fouls],
                };
                if !self.env.leagues.game_ended_here(e.league, end) {
                    debug!(
                        league = e.league,
                        "a game end for a league not running here"
                    );
                }
            }
            None => {}
        }
    }

    /// A frame of a remote game's stream: to every local subscriber of that stream that has
    /// not had it (a subscriber that missed one asks for the catch-up instead).
    fn on_channel(&mut self, league: bool, id: i64, live: bool, payload: &[u8]) {
        let Some(subs) = self.subs_of(league, id) else {
            return;
        };
        let Ok(cf) = ChannelFrame::decode(payload) else {
            return;
        };
        let Ok(msg) = ServerMessage::decode(&cf.message[..]) else {
            return;
        };
        let frame = Arc::new(SharedFrame::with_proto(cf.seq, msg, cf.message));
        let mut gap = false;
        subs.retain_mut(|s| {
            // A league has one stream (its public one).
            let other_stream = !league && s.live != live;
            if other_stream || s.catching_up || s.stale || frame.seq <= s.last {
                return true;
            }
            if frame.seq > s.last + 1 {
                debug!(
                    game = id,
                    last = s.last,
                    "a gap in a relayed stream; catching up"
                );
                s.stale = true;
                gap = true;
                return true;
            }
            s.last = frame.seq;
            s.out.send(Out::Shared(frame.clone()))
        });
        if gap {
            self.catch_up();
        }
    }

    /// A frame from a game's owner for a local connection: an answer (which completes its
    /// call), or part of a catch-up.
    fn on_frame(&mut self, f: NodeFrame) {
        let Ok(msg) = ServerMessage::decode(&f.message[..]) else {
            return;
        };
        let mut deliver = true;
        if let Some(call) = self.pending.get(&f.call) {
            let (answers, reply_seq) = match &msg.kind {
                Some(server_message::Kind::Reply(r)) => (r.request_id == call.req, Some(r.seq)),
                Some(server_message::Kind::Error(e)) => {
                    if call.league && e.code == "not_found" {
                        // The league's node changed: look again.
                        self.look_up_league(call.game);
                    } else if e.code == ClientError::Unavailable.code()
                        || e.code == ClientError::ShuttingDown.code()
                    {
                        // The owner does not run the game (any more), or is stopping: look
                        // again. A client's request waits (nothing was done with it) and goes
                        // to the game's next owner as soon as it moves, or is answered
                        // `unavailable` at its deadline.
                        self.link.suspect(call.game);
                        if !call.league && !call.internal && e.request_id == call.req {
                            return;
                        }
                    }
                    (e.request_id == call.req, None)
                }
                _ => (false, None),
            };
            if answers {
                if let Some(call) = self.pending.remove(&f.call) {
                    deliver = !call.internal;
                    match (call.sub, reply_seq) {
                        (Some(who), Some(seq)) => {
                            self.subscribed(call.league, call.game, f.conn_id, who, f.live, seq)
                        }
                        // A catch-up refused (the owner is not ready yet): asked again.
                        (Some(_), None) => self.restale(call.league, call.game, f.conn_id),
                        _ => {}
                    }
                }
            }
        }
        if !deliver {
            return;
        }
        let Some(out) = self.conns.get(&f.conn_id) else {
            return;
        };
        out.send(Out::Shared(Arc::new(SharedFrame::with_proto(
            0, msg, f.message,
        ))));
    }

    fn subscribed(
        &mut self,
        league: bool,
        id: i64,
        conn: u64,
        who: Arc<Principal>,
        live: bool,
        seq: u64,
    ) {
        let Some(out) = self.conns.get(&conn).cloned() else {
            return;
        };
        let Some(subs) = self.subs_of(league, id) else {
            return;
        };
        match subs.iter_mut().find(|s| s.out.conn_id == conn) {
            Some(s) => {
                s.live = live;
                s.last = seq;
                s.catching_up = false;
                s.stale = false;
            }
            None => subs.push(RemoteSub {
                out,
                who,
                live,
                last: seq,
                catching_up: false,
                stale: false,
            }),
        }
    }

    /// A request from a client on another node for a game this node runs.
    fn serve_remote(&mut self, nr: NodeRequest) {
        let origin = nr.origin.clone();
        let Ok(cm) = ClientMessage::decode(&nr.message[..]) else {
            return;
        };
        if nr.league {
            let out = Outbox::remote(
                nr.conn_id,
                sink(self.link.clone(), origin, nr.conn_id, nr.call, None),
            );
            let who = principal_of(nr.principal);
            let (env, req, relay) = (self.env.clone(), cm.request_id, nr.relay);
            if let Some(kind) = cm.kind {
                tokio::spawn(async move {
                    crate::league::ws::on_message_relayed(&env, &who, &out, req, kind, relay).await;
                });
            }
            return;
        }
        let relay_flag = nr.relay.then(|| Arc::new(AtomicBool::new(true)));
        let out = Outbox::remote(
            nr.conn_id,
            sink(
                self.link.clone(),
                origin,
                nr.conn_id,
                nr.call,
                relay_flag.clone(),
            ),
        );
        let Some(Ok((_, mut body))) = cm.kind.and_then(crate::request::game_request) else {
            error_to(&out, cm.request_id, nr.game, &ClientError::UnknownMessage);
            return;
        };
        if let Body::Subscribe { relay, .. } = &mut body {
            *relay = relay_flag;
        }
        let who = principal_of(nr.principal);
        let r = Request {
            req: cm.request_id,
            who,
            out: out.clone(),
            lag: Duration::from_millis(u64::from(nr.lag_ms)),
            received: Instant::now(),
            body,
        };
        match self.env.registry.get(nr.game).filter(|h| !h.is_remote()) {
            Some(h) => {
                if let Err(e) = h.send(r) {
                    error_to(&out, cm.request_id, nr.game, &e);
                }
            }
            // Not (or no longer) here: the client's node re-routes at its next sweep.
            None => error_to(&out, cm.request_id, nr.game, &ClientError::Unavailable),
        }
    }
}

/// Who sent a relayed request, as its node authenticated it.
fn principal_of(p: Option<NodePrincipal>) -> Arc<Principal> {
    Arc::new(Principal {
        account: p.map(|p| Account {
            id: p.account_id,
            name: p.name,
            role: Role::parse(&p.role).unwrap_or(Role::Player),
        }),
    })
}

/// A re-subscription the relay asks for a local subscriber (its reply is not the client's).
fn internal_subscribe(out: Outbox, who: Arc<Principal>, last: u64) -> Request {
    Request {
        req: 0,
        who,
        out,
        lag: Duration::ZERO,
        received: Instant::now(),
        body: Body::Subscribe {
            last_seq: last,
            // Marks the call internal; the owner gets its own flag.
            relay: Some(Arc::new(AtomicBool::new(false))),
        },
    }
}

/// Where the frames of a remote client's request go: to its node, addressed to its
/// connection and call, in the order the game makes them.
fn sink(
    link: Arc<Link>,
    origin: String,
    conn_id: u64,
    call: u64,
    live: Option<Arc<AtomicBool>>,
) -> crate::outbox::Sink {
    Box::new(move |out: Out| {
        let message = match out {
            Out::Shared(f) => f.proto_bytes().to_vec(),
            Out::Own(m) => m.encode_to_vec(),
        };
        link.publish(Publish::Frame(
            origin.clone(),
            NodeFrame {
                conn_id,
                call,
                message,
                live: live.as_ref().is_none_or(|l| l.load(Ordering::Acquire)),
            },
        ))
    })
}

fn error_to(out: &Outbox, req: u32, game: i64, e: &ClientError) {
    out.send_msg(ServerMessage {
        kind: Some(server_message::Kind::Error(
            e.to_wire(req, &game.to_string()),
        )),
    });
}

/// A remote game's record read from the store: the live view, or the public one as the
/// broadcast delay releases it now (nothing early).
async fn record_from_store(env: &Env, id: i64, public: bool) -> Option<RecordView> {
    let stored = env.persist.events(id).await.ok()?;
    let mut live = crate::view::View::new(&id.to_string(), false);
    let mut events = Vec::with_capacity(stored.len());
    for (seq, payload) in stored {
        let e = crate::load::decode(id, seq, &payload).ok()?;
        live.apply(&e.event);
        events.push((e.event, live.moves.len() as u32));
    }
    let delay = live.info.delay.unwrap_or_default();
    if !public || (delay.plies == 0 && delay.seconds == 0) {
        return Some(RecordView { view: live });
    }
    let now = env.time.now_ms();
    let plies = live.moves.len() as u32;
    let over = live.finished;
    let mut view = crate::view::View::new(&id.to_string(), true);
    for (ev, plies_then) in events {
        let created = matches!(ev.kind, Some(w::game_event::Kind::Created(_)));
        let release = if created {
            ev.at_ms
        } else {
            ev.at_ms + u64::from(delay.seconds) * 1000
        };
        let min_plies = if created { 0 } else { plies_then + delay.plies };
        if release > now || (!over && min_plies > plies) {
            break;
        }
        view.apply(&ev);
    }
    Some(RecordView { view })
}

/// Every `cluster_sweep`: takes the unfinished games nobody holds, and re-routes remote games
/// whose owner changed or vanished.
async fn sweeper(env: Env) {
    let Some(link) = env.node.clone() else {
        return;
    };
    let mut every = tokio::time::interval(env.config.cluster_sweep);
    let mut lists = tokio::time::interval(GAME_LIST_EVERY);
    let mut shutdown = env.shutdown.clone();
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = lists.tick() => {
                let msg = NodeMessage {
                    kind: Some(node_message::Kind::Games(w::NodeGames {
                        node: link.id.clone(),
                        games: env.registry.local_games(),
                    })),
                };
                link.publish(Publish::Raw(GAMES_CHANNEL.into(), Bytes::from(msg.encode_to_vec())));
                continue;
            }
            _ = shutdown.changed() => return,
        }
        if *env.shutdown.borrow() {
            return;
        }
        sweep(&env, &link, true).await;
    }
}

/// One sweep (also run at start, in place of recovering every unfinished game; the leagues
/// are started after it then, see `serve`). `leagues`: also start the leagues nobody runs.
pub(crate) async fn sweep(env: &Env, link: &Arc<Link>, leagues: bool) {
    // Remote games first: a vanished owner's game is taken, a moved one re-routed. Only the
    // games of owner nodes that are gone, and suspects, are looked up one by one.
    let suspects: std::collections::HashSet<i64> = link
        .suspects
        .lock()
        .map(|mut s| std::mem::take(&mut *s))
        .unwrap_or_default();
    let mut alive: HashMap<String, bool> = HashMap::new();
    for h in env.registry.remote_handles() {
        let owner = h
            .remote
            .as_ref()
            .and_then(|o| o.lock().ok().map(|o| o.clone()))
            .unwrap_or_default();
        if !suspects.contains(&h.id) {
            match link.is_alive(&owner, &mut alive).await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(_) => return,
            }
        }
        let key = game_key(h.id);
        match link.cluster.holder(&key).await {
            Ok(Some(node)) if node != link.id => {
                let known = h
                    .remote
                    .as_ref()
                    .and_then(|o| o.lock().ok().map(|o| o.clone()));
                if known.as_deref() != Some(node.as_str()) {
                    link.ctl(Ctl::Owner {
                        id: h.id,
                        owner: Some(node),
                    });
                }
            }
            Ok(_) => {
                if let Err(e) = env.registry.take_over(env, &h).await {
                    debug!(game = h.id, code = e.code(), "game not taken over");
                }
            }
            Err(e) => {
                debug!(error = %e, "cluster unreachable; sweep skipped");
                return;
            }
        }
    }
    let ids = match env.persist.unfinished_games().await {
        Ok(ids) => ids,
        Err(e) => {
            debug!(error = %e, "cannot list unfinished games");
            return;
        }
    };
    // Leagues nobody runs (a dead node's): the first node to take the lease runs them.
    if let Ok(list) = env.persist.competitions().await {
        for c in list.into_iter().filter(|_| leagues) {
            crate::league::runner::start_owned(env, c.id.0).await;
        }
    }
    // Games a live node lists as its own are not looked up one by one.
    let mut listed = std::collections::HashSet::new();
    for (node, games) in link.lists_by_node() {
        if let Ok(true) = link.is_alive(&node, &mut alive).await {
            listed.extend(games.iter().filter_map(|g| g.game_id.parse::<i64>().ok()));
        }
    }
    for id in ids {
        if env.registry.get(id).is_some() || listed.contains(&id) {
            continue;
        }
        match link.cluster.holder(&game_key(id)).await {
            Ok(None) => {
                if let Err(e) = env.registry.get_or_load(env, id).await {
                    debug!(game = id, code = e.code(), "game not taken");
                }
            }
            Ok(Some(_)) => {}
            Err(_) => return,
        }
    }
}

/// Marks a league API request forwarded from another node (it is never forwarded again).
const FORWARDED: &str = "x-chuhe-forwarded";

/// The league id of a league API path (`/api/v1/leagues/<id>…`).
fn league_in_path(path: &str) -> Option<i64> {
    path.strip_prefix("/api/v1/leagues/")?
        .split('/')
        .next()?
        .parse()
        .ok()
}

/// Several nodes: a league API request for a league another node runs is answered by that
/// node (forwarded over its channel; `unavailable` 503 when it does not answer in time).
pub async fn forward_league(
    axum::extract::State(env): axum::extract::State<Env>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let Some(link) = env.node.clone() else {
        return next.run(req).await;
    };
    let Some(id) = league_in_path(req.uri().path()) else {
        return next.run(req).await;
    };
    if env.leagues.get(id).is_some() || req.headers().contains_key(FORWARDED) {
        return next.run(req).await;
    }
    let holder = match link.cluster.holder(&league_key(id)).await {
        Ok(Some(h)) if h != link.id => h,
        _ => return next.run(req).await,
    };
    let (parts, body) = req.into_parts();
    let Ok(body) = axum::body::to_bytes(body, 1 << 20).await else {
        return crate::auth::api_error(
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_argument",
            "the body is too large",
        );
    };
    let header = |name: axum::http::HeaderName| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let call = link
        .next_http_call
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (tx, rx) = tokio::sync::oneshot::channel();
    if let Ok(mut calls) = link.http_calls.lock() {
        calls.insert(call, tx);
    }
    let msg = NodeMessage {
        kind: Some(node_message::Kind::HttpRequest(w::NodeHttpRequest {
            origin: link.id.clone(),
            call,
            method: parts.method.to_string(),
            path: parts
                .uri
                .path_and_query()
                .map(|p| p.to_string())
                .unwrap_or_default(),
            authorization: header(axum::http::header::AUTHORIZATION),
            content_type: header(axum::http::header::CONTENT_TYPE),
            body: body.to_vec(),
        })),
    };
    link.publish(Publish::Raw(
        node_channel(&holder),
        Bytes::from(msg.encode_to_vec()),
    ));
    let answer = tokio::time::timeout(env.config.remote_timeout, rx).await;
    if let Ok(mut calls) = link.http_calls.lock() {
        calls.remove(&call);
    }
    match answer {
        Ok(Ok(r)) => {
            let status = axum::http::StatusCode::from_u16(r.status as u16)
                .unwrap_or(axum::http::StatusCode::BAD_GATEWAY);
            let mut resp = axum::response::Response::new(axum::body::Body::from(r.body));
            *resp.status_mut() = status;
            if let Ok(v) = axum::http::HeaderValue::from_str(&r.content_type) {
                resp.headers_mut()
                    .insert(axum::http::header::CONTENT_TYPE, v);
            }
            resp
        }
        _ => crate::auth::api_error(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            ClientError::Unavailable.code(),
            &ClientError::Unavailable.to_string(),
        ),
    }
}

/// Answers a league API request another node forwarded, through this node's own routes.
async fn serve_http(env: Env, link: Arc<Link>, r: w::NodeHttpRequest) {
    let mut req = axum::http::Request::builder()
        .method(r.method.as_str())
        .uri(r.path.as_str())
        .header(FORWARDED, "1");
    if !r.authorization.is_empty() {
        req = req.header(axum::http::header::AUTHORIZATION, r.authorization.as_str());
    }
    if !r.content_type.is_empty() {
        req = req.header(axum::http::header::CONTENT_TYPE, r.content_type.as_str());
    }
    let (status, content_type, body) = match req.body(axum::body::Body::from(r.body)) {
        Ok(req) => {
            let mut router = crate::http::router(env);
            let resp = match tower_service::Service::call(&mut router, req).await {
                Ok(resp) => resp,
                Err(never) => match never {},
            };
            let status = resp.status().as_u16();
            let ct = resp
                .headers()
                .get(axum::http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let body = axum::body::to_bytes(resp.into_body(), 16 << 20)
                .await
                .map(|b| b.to_vec())
                .unwrap_or_default();
            (status, ct, body)
        }
        Err(_) => (400, String::new(), Vec::new()),
    };
    let msg = NodeMessage {
        kind: Some(node_message::Kind::HttpResponse(w::NodeHttpResponse {
            call: r.call,
            status: u32::from(status),
            content_type,
            body,
        })),
    };
    link.publish(Publish::Raw(
        node_channel(&r.origin),
        Bytes::from(msg.encode_to_vec()),
    ));
}
