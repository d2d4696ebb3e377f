//! The relay: this node's side of every remote game and league — requests sent to their
//! owner and its answers delivered, channel frames fanned out to local subscribers, catch-ups
//! — and the owner's side of requests from other nodes.

use super::*;
use crate::env::Env;

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
    tokio::spawn(publish::publisher(
        link.cluster.clone(),
        publish_rx,
        env.settled.clone(),
    ));
    let relay = Relay::new(env.clone(), link.clone());
    tokio::spawn(relay.run(relay_rx, ctl_rx, messages, lost));
    tokio::spawn(super::sweep::sweeper(env.clone()));
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

/// Whether this node is one of several and cut off from the coordination service now (it
/// cannot reach the owners of the games it does not run).
pub(crate) fn cut_off(env: &Env) -> bool {
    env.node
        .as_ref()
        .is_some_and(|link| !*link.cluster.connected().borrow())
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
    /// The last seq it was sent: nothing at or below it is sent again (a catch-up that
    /// overlaps another, or the channel, never doubles a frame).
    last: u64,
    /// The seq its last catch-up's reply gave (a snapshot brings it there).
    target: u64,
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
    /// A relayed subscription: the last seq it asked from.
    from: u64,
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

/// Where the frames of a relayed subscription's catch-up belong: (league?, id, until when
/// its frames may still come).
type CatchUp = (bool, i64, Instant);

pub(super) struct Relay {
    /// Relayed subscriptions' calls, kept a while after their reply: their catch-up frames
    /// follow it and are filtered by the subscriber's last seq.
    catch_ups: HashMap<u64, CatchUp>,
    env: Env,
    link: Arc<Link>,
    games: chuhe_store::IdMap<i64, RemoteGame>,
    /// Leagues other nodes run that local connections follow (their subscribers).
    leagues: chuhe_store::IdMap<i64, RemoteGame>,
    pending: HashMap<u64, Call>,
    /// The queues of local connections that sent requests to other nodes, by connection id.
    conns: HashMap<u64, Outbox>,
    next_call: u64,
    /// Connected to the coordination service (owners on other nodes reachable).
    up: bool,
}

fn owner_of(g: &RemoteGame) -> String {
    g.owner.lock().map(|o| o.clone()).unwrap_or_default()
}

impl Relay {
    pub(super) fn new(env: Env, link: Arc<Link>) -> Relay {
        Relay {
            catch_ups: HashMap::new(),
            env,
            link,
            games: chuhe_store::IdMap::default(),
            leagues: chuhe_store::IdMap::default(),
            pending: HashMap::new(),
            conns: HashMap::new(),
            next_call: 0,
            up: true,
        }
    }

    pub(super) async fn run(
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
        self.up = *connected.borrow_and_update();
        loop {
            tokio::select! {
                biased;
                _ = async { let _ = settled.wait_for(|s| *s).await; } => break,
                Ok(()) = connected.changed() => {
                    self.up = *connected.borrow_and_update();
                    if !self.up {
                        self.cut_off();
                    }
                    // Back from an outage of the coordination service: messages published
                    // meanwhile are lost; every relayed subscriber catches up by seq.
                    if self.up {
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

    /// The coordination service is unreachable: the clients waiting here for another node's
    /// answer are told to reconnect (`owner_unreachable`) rather than left to time out, so a
    /// player who can reach the game's owner directly goes on playing there.
    fn cut_off(&mut self) {
        let calls: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, c)| !c.internal && !c.league)
            .map(|(k, _)| *k)
            .collect();
        let mut told = 0;
        for k in calls {
            let Some(c) = self.pending.remove(&k) else {
                continue;
            };
            let owner = self.games.get(&c.game).map(owner_of);
            if let Some(out) = self.conns.get(&c.conn) {
                redirect(out, owner.as_deref());
                told += 1;
            }
        }
        if told > 0 {
            warn!(
                clients = told,
                "coordination service unreachable; clients waiting for other nodes told to reconnect"
            );
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
                for ch in game_channels(id) {
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
                for ch in game_channels(id) {
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
            Ctl::LeagueLeft { id, subs, last } => self.league_left(id, subs, last).await,
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
                        match env.registry.get_or_load(id).await {
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
                    self.link.send_to(node, &msg);
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
            if owner.is_empty() {
                continue;
            }
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
                    feed: false,
                })),
            };
            self.send_league(id, &owner, out, who, message, true, true);
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
                if !self.up {
                    // The owner cannot be reached from here: the client goes where it can be.
                    redirect(&r.out, Some(&owner));
                    return;
                }
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
                    if let Some(v) = record_from_store(&env, game, public, arbiter).await {
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
            kind: r.body.to_kind(id.to_string()),
        };
        let internal = matches!(&r.body, Body::Subscribe { relay: Some(_), .. });
        let to = Target {
            id,
            league: false,
            owner,
        };
        self.send_message(to, r.out, r.who, message, r.lag, relay, internal);
    }

    /// Sends a league request to the node running the league (no lag to report).
    #[allow(clippy::too_many_arguments)]
    fn send_league(
        &mut self,
        id: i64,
        owner: &str,
        out: Outbox,
        who: Arc<Principal>,
        message: ClientMessage,
        relay: bool,
        internal: bool,
    ) {
        let to = Target {
            id,
            league: true,
            owner,
        };
        self.send_message(to, out, who, message, Duration::ZERO, relay, internal);
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
        if !self.link.send_to(to.owner, &msg) {
            error_to(&out, req, to.id, &ClientError::Busy);
            return;
        }
        if !internal {
            self.link.count(|m| &m.cluster_relayed_total);
        }
        let from = match &message.kind {
            Some(client_message::Kind::Subscribe(s)) => s.last_seq,
            Some(client_message::Kind::LeagueSubscribe(s)) => s.last_seq,
            _ => 0,
        };
        if relay {
            let until = Instant::now() + 2 * self.env.config.remote_timeout;
            self.catch_ups.insert(call, (to.league, to.id, until));
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
                from,
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

    /// Follows a league another node runs (its public channel), unless already followed.
    async fn follow_league(&mut self, id: i64, owner: String) {
        if self.leagues.contains_key(&id) {
            return;
        }
        let ch = super::league_channel(id);
        let limit = self.env.config.remote_timeout;
        match tokio::time::timeout(limit, self.link.cluster.subscribe(&ch)).await {
            Ok(Ok(())) => {}
            _ => warn!(league = id, "cannot subscribe to a league's channel"),
        }
        self.leagues.insert(
            id,
            RemoteGame {
                owner: Arc::new(Mutex::new(owner)),
                alive: Arc::new(AtomicBool::new(true)),
                subs: Vec::new(),
            },
        );
    }

    /// A league's runner stopped here: its subscribers become relayed ones (from `last`),
    /// caught up by the league's next node once one holds its lease.
    async fn league_left(&mut self, id: i64, subs: Vec<Outbox>, last: u64) {
        self.follow_league(id, String::new()).await;
        if let Some(l) = self.leagues.get_mut(&id) {
            if let Ok(mut o) = l.owner.lock() {
                // Unknown until a node holds the lease (the catch-up waits for it).
                o.clear();
            }
            for out in subs {
                l.subs.retain(|s| s.out.conn_id != out.conn_id);
                l.subs.push(RemoteSub {
                    out,
                    who: Arc::new(Principal { account: None }),
                    live: false,
                    last,
                    target: last,
                    catching_up: false,
                    stale: true,
                });
            }
        }
        // The next holder of the lease, whoever it is (this node too, after a sweep).
        let link = self.link.clone();
        let every = self.env.config.cluster_sweep;
        let until = Instant::now() + 4 * self.env.config.remote_timeout;
        tokio::spawn(async move {
            while Instant::now() < until {
                if let Ok(Some(owner)) = link.cluster.holder(&league_key(id)).await {
                    link.ctl(Ctl::LeagueOwner { id, owner });
                    return;
                }
                tokio::time::sleep(every).await;
            }
            warn!(
                league = id,
                "no node took the league; its followers here wait"
            );
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
        self.follow_league(id, owner.clone()).await;
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
        self.send_league(id, &owner, out, who, message, relay, false);
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
        self.catch_ups.retain(|_, (_, _, until)| *until > now);
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
                tokio::spawn(super::http::serve_http(self.link.clone(), r));
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
                let end = crate::league::hooks::GameEnd {
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
                        (Some(who), Some(seq)) => self.subscribed(
                            call.league,
                            call.game,
                            f.conn_id,
                            who,
                            f.live,
                            call.from,
                            seq,
                        ),
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
        // A catch-up's frames: each event once, past what the subscriber already has.
        if let Some(&(league, id, _)) = self.catch_ups.get(&f.call) {
            let seq = match &msg.kind {
                Some(server_message::Kind::Event(e)) => Some(e.seq),
                Some(server_message::Kind::League(u)) => Some(u.seq),
                _ => None,
            };
            let snapshot = matches!(msg.kind, Some(server_message::Kind::Snapshot(_)));
            if let Some(sub) = self
                .subs_of(league, id)
                .and_then(|subs| subs.iter_mut().find(|s| s.out.conn_id == f.conn_id))
            {
                match seq {
                    Some(seq) if seq <= sub.last => return,
                    Some(seq) => sub.last = seq,
                    None if snapshot => sub.last = sub.last.max(sub.target),
                    None => {}
                }
            }
        }
        let Some(out) = self.conns.get(&f.conn_id) else {
            return;
        };
        out.send(Out::Shared(Arc::new(SharedFrame::with_proto(
            0, msg, f.message,
        ))));
    }

    /// A relayed subscription's reply: the connection is a subscriber, `from` the seq it
    /// asked from (its catch-up brings it to `seq`).
    #[allow(clippy::too_many_arguments)]
    fn subscribed(
        &mut self,
        league: bool,
        id: i64,
        conn: u64,
        who: Arc<Principal>,
        live: bool,
        from: u64,
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
                if s.live != live {
                    // Another stream: its seqs start again from what was asked.
                    s.last = from;
                }
                s.live = live;
                s.target = seq;
                s.catching_up = false;
                s.stale = false;
            }
            None => subs.push(RemoteSub {
                out,
                who,
                live,
                last: from,
                target: seq,
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
            // Not loaded here: being taken up right now (this node just took its lease), or
            // never here. Loaded if this node can take it; otherwise `unavailable`, and the
            // client's node looks the owner up again.
            None => {
                let env = self.env.clone();
                let (game, req) = (nr.game, cm.request_id);
                tokio::spawn(async move {
                    match env.registry.get_or_load(game).await {
                        Ok(h) if !h.is_remote() => {
                            if let Err(e) = h.send(r) {
                                error_to(&out, req, game, &e);
                            }
                        }
                        _ => error_to(&out, req, game, &ClientError::Unavailable),
                    }
                });
            }
        }
    }
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

/// A remote game's record read from the store: the live view, or the public one as the
/// broadcast delay releases it now (nothing early) — as the owner's
/// [`GameHandle::record_for`]: public for `public` readers and for an `arbiter` that does not
/// rule on the game (another league's), live for its arbiters.
async fn record_from_store(
    env: &Env,
    id: i64,
    public: bool,
    arbiter: Option<i64>,
) -> Option<RecordView> {
    let stored = env.persist.events(id).await.ok()?;
    let mut live = crate::view::View::new(&id.to_string(), false);
    let mut events = Vec::with_capacity(stored.len());
    for (seq, payload) in stored {
        let (event, _) = crate::adopt::decode_stored(id, seq, &payload).ok()?;
        live.apply(&event);
        events.push((event, live.moves.len() as u32));
    }
    let public = match arbiter {
        Some(a) if !public => !rules_on(env, id, &live, a).await,
        _ => public,
    };
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

/// Whether arbiter `a` rules on a remote game (as the owner's `Live::rules_on`): any game
/// but another league's. A league running elsewhere has its arbiters read from its log.
async fn rules_on(env: &Env, id: i64, live: &crate::view::View, a: i64) -> bool {
    let Some(board) = &live.info.league else {
        return true;
    };
    if let Ok(Some(row)) = env.persist.game(id).await {
        env.leagues.learn_arbiters(row.key.as_deref()).await;
    }
    env.leagues.arbiter_of(&board.league_id, a)
}
