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
//!
//! Layers: this file is the [`Link`] the drivers (registry, shards, league runners) are given;
//! [`publish`] the publish queue, all a running game or a league runner gets of it. The relay,
//! the sweeper and the forwarded routes (`relay.rs`, `sweep.rs`, `http.rs`) are edges: they
//! take `Env` and call the drivers and `league/ws.rs`, and [`start`] runs them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use chuhe_proto::v1::{
    self as w, ChannelFrame, ClientMessage, NodeFrame, NodeMessage, NodePrincipal, NodeRequest,
    ServerMessage, client_message, node_message, server_message,
};
use prost::Message as _;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::cluster::{Cluster, ClusterMessage};
use crate::error::{ClientError, ErrorToWire};
use crate::handle::{GameHandle, ShardCmd};
use crate::outbox::{Out, Outbox, SharedFrame};
use crate::persist::{Account, Role};
use crate::request::{Body, Principal, RecordView, Request};

mod http;
pub(crate) mod publish;
mod relay;
mod sweep;

pub use http::{CHALLENGES_KEY, forward_challenges, forward_league};
pub(crate) use publish::{Channel, league_channel};
pub use publish::{Publisher, game_key, league_key};
pub use relay::start;
pub(crate) use relay::{cut_off, relay_league};
pub(crate) use sweep::sweep;

use publish::{Publish, alive_key, game_channels, node_channel};

/// The relay's mailbox (remote games' requests).
const RELAY_MAILBOX: usize = 65_536;
/// Every node publishes the games it runs this often (the cluster-wide game list)…
const GAME_LIST_EVERY: Duration = Duration::from_secs(1);
/// …and a list older than this is dropped (its node is gone).
const GAME_LIST_TTL: Duration = Duration::from_secs(3);
/// The channel of the nodes' game lists.
const GAMES_CHANNEL: &str = "games";

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
    /// A league's runner stopped here (lease lost, commit fenced): its local subscribers
    /// (sent everything up to `last`) follow the league to its next node.
    LeagueLeft {
        id: i64,
        subs: Vec<Outbox>,
        last: u64,
    },
}

/// This node's link to the others (in [`crate::env::Env::node`]).
pub struct Link {
    pub cluster: Arc<dyn Cluster>,
    pub id: String,
    relay_tx: mpsc::Sender<ShardCmd>,
    /// The node's metrics (set once the node's `Env` exists).
    metrics: Arc<std::sync::OnceLock<Arc<crate::metrics::Metrics>>>,
    /// This node's HTTP routes, which answer the league and challenge requests other nodes
    /// forward here (given by `serve` before the link starts, taken back once it has stopped
    /// listening: the routes hold the server's state, which holds the link).
    routes: Mutex<Option<axum::Router>>,
    ctl_tx: mpsc::UnboundedSender<Ctl>,
    publisher: Publisher,
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
    /// Games whose lease is being released (a finished game unloaded): nobody here takes it
    /// again before the release is done, or the release would drop the new lease.
    releasing: Mutex<std::collections::HashSet<i64>>,
    released: tokio::sync::Notify,
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
        let metrics = Arc::new(std::sync::OnceLock::new());
        let (publisher, publish_rx) = Publisher::new(metrics.clone());
        Arc::new(Link {
            id: cluster.node_id().to_string(),
            cluster,
            relay_tx,
            metrics,
            routes: Mutex::default(),
            ctl_tx,
            publisher,
            receivers: Mutex::new(Some((relay_rx, ctl_rx, publish_rx))),
            owned: Mutex::default(),
            leagues: Mutex::default(),
            http_calls: Mutex::default(),
            next_http_call: std::sync::atomic::AtomicU64::new(1),
            suspects: Mutex::default(),
            lists: Mutex::default(),
            releasing: Mutex::default(),
            released: tokio::sync::Notify::new(),
        })
    }

    /// Gives the link the routes that answer requests other nodes forward here (None: takes
    /// them back; such requests are then answered 503).
    pub fn serve_routes(&self, routes: Option<axum::Router>) {
        *self.routes.lock().unwrap_or_else(|e| e.into_inner()) = routes;
    }

    fn routes(&self) -> Option<axum::Router> {
        self.routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn owned(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<i64>> {
        self.owned.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// This node holds `game`'s lease and runs it.
    pub(crate) fn took(&self, game: i64) {
        self.owned().insert(game);
    }

    /// Gives a game's lease up (its game was unloaded here); [`Link::wait_released`] holds a
    /// new load of it back until that is done.
    pub(crate) fn release_game(self: &Arc<Self>, id: i64) {
        self.gave_up(id);
        if let Ok(mut r) = self.releasing.lock() {
            r.insert(id);
        }
        let link = self.clone();
        tokio::spawn(async move {
            let _ = link.cluster.release(&game_key(id)).await;
            if let Ok(mut r) = link.releasing.lock() {
                r.remove(&id);
            }
            link.released.notify_waiters();
        });
    }

    /// Waits until a release of `id`'s lease in progress is done.
    pub(crate) async fn wait_released(&self, id: i64) {
        loop {
            let done = self.released.notified();
            tokio::pin!(done);
            done.as_mut().enable();
            if !self.releasing.lock().is_ok_and(|r| r.contains(&id)) {
                return;
            }
            done.await;
        }
    }

    /// This node runs the league `id` (holds its lease).
    pub(crate) fn took_league(&self, id: i64) {
        if let Ok(mut l) = self.leagues.lock() {
            l.insert(id);
        }
    }

    /// This node no longer runs the league `id`.
    pub(crate) fn league_left(&self, id: i64) {
        if let Ok(mut l) = self.leagues.lock() {
            l.remove(&id);
        }
    }

    /// A league game ended here but its league runs on another node: tell that node.
    pub(crate) fn tell_league(self: &Arc<Self>, league: i64, end: crate::league::hooks::GameEnd) {
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
            link.send_to(&holder, &msg);
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

    /// Publishes `msg` on `node`'s channel; false when the publish queue is full.
    fn send_to(&self, node: &str, msg: &NodeMessage) -> bool {
        self.publish(Publish::Raw(
            node_channel(node),
            Bytes::from(msg.encode_to_vec()),
        ))
    }

    fn publish(&self, p: Publish) -> bool {
        self.publisher.publish(p)
    }

    /// The publish queue: all a game or a league runner needs of the link.
    pub(crate) fn publisher(&self) -> &Publisher {
        &self.publisher
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

/// How long a client told `owner_unreachable` is asked to wait before reconnecting.
const REDIRECT_AFTER_MS: u32 = 100;

/// Tells a local client that this node cannot reach the node running its game (the
/// coordination service is down): `goodbye` `owner_unreachable` naming the owner when known,
/// then close 4010. The client reconnects — to any node (a proxy's next pick), or to the
/// owner — and resumes by seq, instead of waiting on `unavailable` until the outage ends.
pub(crate) fn redirect(out: &Outbox, owner: Option<&str>) {
    if out.is_closed() {
        return;
    }
    let message = match owner {
        Some(o) if !o.is_empty() => format!(
            "this node cannot reach node {o}, which runs the game; reconnect (to any node, or to {o}) with the last seq you saw"
        ),
        _ => "this node cannot reach the node running the game; reconnect (to any node) with the last seq you saw".into(),
    };
    out.send_msg(ServerMessage {
        kind: Some(server_message::Kind::Goodbye(w::Goodbye {
            code: "owner_unreachable".into(),
            message,
            reconnect_after_ms: REDIRECT_AFTER_MS,
            owner_node: owner.unwrap_or_default().to_string(),
        })),
    });
    out.kick(crate::error::close::OWNER_UNREACHABLE);
}

fn error_to(out: &Outbox, req: u32, game: i64, e: &ClientError) {
    out.send_msg(ServerMessage {
        kind: Some(server_message::Kind::Error(
            e.to_wire(req, &game.to_string()),
        )),
    });
}
