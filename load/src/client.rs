//! Simulated players and spectators. One tokio task per client; everything they see goes into
//! [`Metrics`]. They speak only through a [`Protocol`], so the same client runs against chuhe and
//! against the bare relay.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use tokio::sync::{Barrier, mpsc, watch};
use tokio::time::sleep_until;
use tokio_tungstenite::tungstenite::Message;

use crate::driver::{Event, Participant, Protocol, Role, Seat};
use crate::metrics::{Epoch, Metrics, Timeline};
use crate::net::{Connector, Ws};
use crate::think::ThinkTime;

/// What every client of a run shares.
pub struct Ctx {
    pub protocol: Arc<dyn Protocol>,
    pub connector: Arc<Connector>,
    pub metrics: Arc<Metrics>,
    pub epoch: Epoch,
    /// Every client stops by then, whatever happens.
    pub deadline: Instant,
    /// Longest wait for the server to confirm a join.
    pub join_timeout: Duration,
    /// Latest acknowledgement, ns since the epoch (for moves/s).
    pub last_ack_ns: AtomicU64,
    /// Timelines of fan-out boards (for "time to reach every spectator").
    pub fanout: std::sync::Mutex<Vec<Arc<Timeline>>>,
    /// The liveness rule (chuhe, docs/protocol.md "Liveness"): a connection on which nothing
    /// at all arrived for this long is dead (a frozen or unreachable node).
    pub dead_after: Option<Duration>,
    /// A lost connection (dead, closed by the server, broken) is replaced by one to the next
    /// node, resuming by seq, instead of ending the client (chuhe).
    pub recover: bool,
    /// How many nodes the clients spread over.
    pub nodes: usize,
    /// When the scenario's fault struck, ns since the epoch (0: none yet).
    pub fault_ns: AtomicU64,
}

/// How one client behaves.
pub struct ClientPlan {
    pub who: Participant,
    pub timeline: Arc<Timeline>,
    pub arrived: Arc<Barrier>,
    /// `fanout`: every client of the board waits here (at most [`LINGER`]) once its game is
    /// over before it closes, so a spectator's close handshake does not hold up the last
    /// move's delivery to the others that the figure is timing.
    pub finished: Option<Arc<Barrier>>,
    pub think: ThinkTime,
    pub seed: u64,
    /// Red resigns after the last move of the line (chuhe's games must end).
    pub resign_at_end: bool,
    /// Wait until then before connecting (round-start spreads connects over a window).
    pub connect_at: Option<Instant>,
    /// Flips to `true` once: the scenario's "go".
    pub start: watch::Receiver<bool>,
    /// Joined (`true`) or failed (`false`), once per client.
    pub ready: mpsc::Sender<bool>,
    /// When it flips to `true`, drop the connection abruptly and reconnect (reconnect-storm).
    pub storm: Option<watch::Receiver<bool>>,
    /// When set, stay connected (reading, answering pings) after the game's moves until it
    /// flips to `true` (the idle scenario).
    pub release: Option<watch::Receiver<bool>>,
}

/// How long a fan-out board's client waits for the others before closing anyway.
const LINGER: Duration = Duration::from_secs(5);

/// Why a client stopped early.
#[derive(Debug, thiserror::Error)]
enum Stop {
    #[error("deadline")]
    Deadline,
    #[error("{0}")]
    Failed(&'static str),
}

/// What a client knows about the game's progress.
#[derive(Debug, Default)]
struct Seen {
    last_ply: u32,
    /// Highest of this player's own plies acknowledged.
    acked: u32,
    last_seq: Option<u64>,
    /// A deliberate reconnect happened and no move arrived since.
    after_reconnect: bool,
    ended: bool,
}

enum Fresh {
    New,
    Duplicate,
}

impl Seen {
    fn seq(&mut self, seq: u64, m: &Metrics) {
        match self.last_seq {
            Some(l) if seq > l + 1 => Metrics::add(&m.seq_gaps, seq - l - 1),
            _ => {}
        }
        self.last_seq = Some(self.last_seq.map_or(seq, |l| l.max(seq)));
    }

    fn ply(&mut self, ply: u32, m: &Metrics) -> Fresh {
        if ply <= self.last_ply {
            Metrics::add(&m.duplicates, 1);
            return Fresh::Duplicate;
        }
        let gap = u64::from(ply - self.last_ply - 1);
        if gap > 0 {
            if self.after_reconnect {
                Metrics::add(&m.missing_after_reconnect, gap);
            } else {
                Metrics::add(&m.missing, gap);
            }
        }
        self.after_reconnect = false;
        self.last_ply = ply;
        Fresh::New
    }

    /// A snapshot says `plies` were played: those are covered, not missing.
    fn snapshot(&mut self, plies: Option<u32>, seq: Option<u64>) {
        if let Some(p) = plies {
            self.last_ply = self.last_ply.max(p);
        }
        if let Some(s) = seq {
            self.last_seq = Some(self.last_seq.map_or(s, |l| l.max(s)));
        }
    }
}

/// A confirmed join.
struct Joined {
    ws: Ws,
    hello: Event,
    /// Events that arrived before the confirmation.
    early: Vec<Event>,
    /// TCP connect + upgrade + join, from the moment a connect permit was had.
    took: Duration,
}

/// Connects, sends the hello frames and waits for the server's "joined". Events that arrive
/// before it are returned for the caller to handle.
async fn join(ctx: &Ctx, who: &Participant, limit: Duration) -> Result<Joined, &'static str> {
    let request = ctx.protocol.request(who).map_err(|_| "bad_request")?;
    let connect = ctx.connector.connect(request);
    let (mut ws, started) = tokio::time::timeout(limit, connect)
        .await
        .map_err(|_| "join_timeout")?
        .map_err(|e| e.code())?;
    for m in ctx.protocol.hello(who) {
        ws.send(m).await.map_err(|_| "hello_send")?;
    }
    // At most the join timeout in all, and at most `limit` without a frame (a node that
    // answers nothing; one that is alive beats while the join waits, e.g. for a failover).
    let hard = (Instant::now() + ctx.join_timeout.max(limit)).min(ctx.deadline);
    let mut until = (Instant::now() + limit).min(hard);
    let mut early = Vec::new();
    let mut out = Vec::new();
    loop {
        let frame = tokio::select! {
            f = ws.next() => f,
            () = sleep_until(until.into()) => return Err("join_timeout"),
        };
        until = (Instant::now() + limit).min(hard);
        let msg = match frame {
            Some(Ok(m)) => m,
            Some(Err(_)) | None => return Err("join_closed"),
        };
        if matches!(msg, Message::Close(_)) {
            return Err("join_closed");
        }
        out.clear();
        ctx.protocol
            .decode(who, msg, &mut out)
            .map_err(|_| "decode")?;
        for e in out.drain(..) {
            match e {
                Event::Joined { .. } => {
                    return Ok(Joined {
                        ws,
                        hello: e,
                        early,
                        took: started.elapsed(),
                    });
                }
                Event::Error { .. } => return Err("join_refused"),
                other => early.push(other),
            }
        }
    }
}

/// Runs one simulated client to the end of its game, the deadline or a fatal error.
pub async fn run(ctx: Arc<Ctx>, plan: ClientPlan) {
    let m = Arc::clone(&ctx.metrics);
    let mut c = Client {
        rng: SmallRng::seed_from_u64(plan.seed),
        seen: Seen::default(),
        sent: None,
        next_move_at: None,
        catch_up: None,
        out: Vec::new(),
        ctx,
        plan,
    };
    if let Some(at) = c.plan.connect_at {
        sleep_until(at.min(c.ctx.deadline).into()).await;
    }
    let joined = join(&c.ctx, &c.plan.who, c.ctx.join_timeout).await;
    let _ = c.plan.ready.send(joined.is_ok()).await;
    c.plan.arrived.wait().await;
    let Joined {
        ws,
        hello,
        early,
        took,
    } = match joined {
        Ok(j) => j,
        Err(code) => {
            Metrics::add(&m.connect_failed, 1);
            m.error(code);
            return;
        }
    };
    m.connect.record(took);
    Metrics::add(&m.connected, 1);
    let result = c.play(ws, hello, early).await;
    if let Some(b) = &c.plan.finished {
        let _ = tokio::time::timeout(LINGER, b.wait()).await;
    }
    match result {
        Ok(mut ws) => {
            let _ = tokio::time::timeout(Duration::from_secs(2), ws.close(None)).await;
        }
        Err(Stop::Deadline) => {}
        Err(Stop::Failed(code)) => {
            Metrics::add(&m.disconnected, 1);
            m.error(code);
        }
    }
    c.account_missing();
}

struct Client {
    ctx: Arc<Ctx>,
    plan: ClientPlan,
    rng: SmallRng,
    seen: Seen,
    /// The ply this player sent and has not seen acknowledged.
    sent: Option<u32>,
    next_move_at: Option<Instant>,
    /// After a reconnect to a server that replays: resend an unconfirmed move only once the
    /// stream has reached this sequence number.
    catch_up: Option<u64>,
    out: Vec<Event>,
}

impl Client {
    fn seat(&self) -> Option<Seat> {
        match self.plan.who.role {
            Role::Player(s) => Some(s),
            Role::Spectator => None,
        }
    }

    fn total(&self) -> u32 {
        u32::try_from(self.plan.who.game.moves.len()).unwrap_or(u32::MAX)
    }

    fn done(&self) -> bool {
        self.seen.ended || self.seen.last_ply >= self.total()
    }

    /// Schedules this player's next move if it is its turn.
    fn schedule(&mut self) {
        let next = self.seen.last_ply + 1;
        self.next_move_at = match self.seat() {
            Some(s) if s.plays(next) && next <= self.total() && self.sent.is_none() => {
                Some(Instant::now() + self.plan.think.sample(&mut self.rng))
            }
            _ => None,
        };
    }

    async fn play(&mut self, mut ws: Ws, hello: Event, early: Vec<Event>) -> Result<Ws, Stop> {
        let deadline = self.ctx.deadline;
        if let Event::Joined { plies, seq, .. } = hello {
            self.seen.snapshot(plies, seq);
        }
        for e in early {
            self.handle(&mut ws, e).await?;
        }
        // Wait for the scenario's go.
        if self.seat().is_some() {
            let mut start = self.plan.start.clone();
            tokio::select! {
                r = start.wait_for(|go| *go) => { r.map_err(|_| Stop::Failed("start_dropped"))?; }
                () = sleep_until(deadline.into()) => return Err(Stop::Deadline),
            }
        }
        self.schedule();
        let mut storm = self.plan.storm.clone();
        let mut release = self.plan.release.clone();
        let dead_after = self.ctx.dead_after;
        let mut heard = Instant::now();
        // One timer for the deadline, armed once (not one made and dropped for every frame).
        let end = sleep_until(deadline.into());
        tokio::pin!(end);
        while !self.done() || release.is_some() {
            let move_at = self.next_move_at;
            let dead_at = heard + dead_after.unwrap_or(Duration::ZERO);
            tokio::select! {
                () = sleep_until(dead_at.into()), if dead_after.is_some() => {
                    ws = self.recover(ws, "dead_connection").await?;
                    heard = Instant::now();
                }
                _ = wait_flag(&mut release) => release = None,
                () = &mut end => return Err(Stop::Deadline),
                () = sleep_until(move_at.unwrap_or(deadline).into()), if move_at.is_some() => {
                    self.next_move_at = None;
                    let ply = self.seen.last_ply + 1;
                    self.send_move(&mut ws, ply).await?;
                }
                r = wait_flag(&mut storm) => {
                    storm = None;
                    if r {
                        ws = self.reconnect(ws).await?;
                    }
                }
                frame = ws.next() => {
                    heard = Instant::now();
                    let lost = match frame {
                        Some(Ok(Message::Close(_))) | None => Some("closed_by_server"),
                        Some(Err(_)) => Some("connection_lost"),
                        Some(Ok(_)) => None,
                    };
                    if let Some(why) = lost {
                        if !self.ctx.recover {
                            return Err(Stop::Failed(why));
                        }
                        ws = self.recover(ws, why).await?;
                        heard = Instant::now();
                        continue;
                    }
                    let Some(Ok(msg)) = frame else { continue };
                    self.decode(msg);
                    let events: Vec<Event> = self.out.drain(..).collect();
                    for e in events {
                        self.handle(&mut ws, e).await?;
                    }
                    if self.catch_up.is_some_and(|h| self.seen.last_seq.is_some_and(|l| l >= h)) {
                        self.catch_up = None;
                        self.resend(&mut ws, false).await?;
                    }
                }
            }
        }
        // Red ends the game on chuhe (also an idle one), so no game is left running on it.
        if self.plan.resign_at_end
            && self.seat() == Some(Seat::Red)
            && !self.seen.ended
            && let Some(msg) = self
                .ctx
                .protocol
                .encode_resign(&self.plan.who, self.seen.last_ply + 1)
        {
            ws.send(msg)
                .await
                .map_err(|_| Stop::Failed("send_failed"))?;
        }
        if self.seat().is_some() && self.total() > 0 {
            Metrics::add(&self.ctx.metrics.games_completed, 1);
        }
        Ok(ws)
    }

    fn decode(&mut self, msg: Message) {
        self.out.clear();
        if self
            .ctx
            .protocol
            .decode(&self.plan.who, msg, &mut self.out)
            .is_err()
        {
            self.ctx.metrics.error("undecodable_frame");
        }
    }

    async fn send_move(&mut self, ws: &mut Ws, ply: u32) -> Result<(), Stop> {
        let Some(mv) = self.plan.who.game.moves.get(ply as usize - 1) else {
            return Ok(());
        };
        let msg = self.ctx.protocol.encode_move(&self.plan.who, ply, mv);
        self.plan.timeline.mark_sent(ply, self.ctx.epoch.now_ns());
        if ply == 1 {
            Metrics::add(&self.ctx.metrics.games_started, 1);
        }
        ws.send(msg)
            .await
            .map_err(|_| Stop::Failed("send_failed"))?;
        Metrics::add(&self.ctx.metrics.moves_sent, 1);
        self.sent = Some(ply);
        Ok(())
    }

    /// Sends again this player's move that the server has not confirmed (after a reconnect), or
    /// with `include_confirmed` its last move whatever its state (when the relay says the
    /// opponent reconnected: the relay keeps no history). Receivers ignore a ply they have; chuhe
    /// acknowledges a resent ply again but refuses one the game has moved past, which is why a
    /// reconnect to chuhe first catches up with the replay.
    async fn resend(&mut self, ws: &mut Ws, include_confirmed: bool) -> Result<(), Stop> {
        let Some(seat) = self.seat() else {
            return Ok(());
        };
        let last = self.seen.last_ply;
        let ply = match self.sent {
            Some(p) if p > last => p,
            _ if include_confirmed && last > 0 && seat.plays(last) => last,
            _ => return Ok(()),
        };
        if let Some(mv) = self.plan.who.game.moves.get(ply as usize - 1) {
            let msg = self.ctx.protocol.encode_move(&self.plan.who, ply, mv);
            ws.send(msg)
                .await
                .map_err(|_| Stop::Failed("send_failed"))?;
        }
        Ok(())
    }

    async fn reconnect(&mut self, ws: Ws) -> Result<Ws, Stop> {
        // Abrupt: no close frame, the socket just goes away.
        drop(ws);
        let t0 = Instant::now();
        let mut who = self.plan.who.clone();
        who.resume_after = self.seen.last_seq;
        let joined = join(&self.ctx, &who, self.ctx.join_timeout)
            .await
            .map_err(Stop::Failed)?;
        self.rejoined(joined, t0).await
    }

    /// The connection is lost (`why`, counted as an error): it is replaced by one to the next
    /// node that takes the join, resuming by seq — a few rounds over every node at most, each
    /// join bounded by the liveness limit (a frozen node accepts connections but never
    /// answers them).
    async fn recover(&mut self, ws: Ws, why: &'static str) -> Result<Ws, Stop> {
        let m = Arc::clone(&self.ctx.metrics);
        m.error(why);
        drop(ws);
        let t0 = Instant::now();
        let limit = self
            .ctx
            .dead_after
            .unwrap_or(self.ctx.join_timeout)
            .min(self.ctx.join_timeout);
        for attempt in 0..3 * self.ctx.nodes.max(1) {
            if Instant::now() >= self.ctx.deadline {
                return Err(Stop::Deadline);
            }
            if attempt > 0 {
                // Every node refused: a retry pace, not a wait for an event.
                tokio::time::sleep(Duration::from_millis(100 * attempt as u64)).await;
            }
            self.plan.who.node_shift += 1;
            let mut who = self.plan.who.clone();
            who.resume_after = self.seen.last_seq;
            match join(&self.ctx, &who, limit).await {
                Ok(joined) => return self.rejoined(joined, t0).await,
                Err(code) => m.error(code),
            }
        }
        Err(Stop::Failed("reconnect_failed"))
    }

    /// Joined again after a drop at `t0`: counted, caught up, the unconfirmed move resent.
    async fn rejoined(&mut self, joined: Joined, t0: Instant) -> Result<Ws, Stop> {
        let m = Arc::clone(&self.ctx.metrics);
        let Joined {
            mut ws,
            hello,
            early,
            ..
        } = joined;
        // Drop to joined again, the permit queue included: that is what a user waits.
        m.reconnect.record(t0.elapsed());
        Metrics::add(&m.reconnects, 1);
        self.seen.after_reconnect = true;
        let mut head = None;
        if let Event::Joined {
            plies,
            seq,
            head: h,
        } = hello
        {
            self.seen.snapshot(plies, seq);
            head = h;
        }
        for e in early {
            self.handle(&mut ws, e).await?;
        }
        // Where the server says how far the game has got, resend only once the replay has
        // caught up with it; otherwise (the relay) at once.
        match head {
            Some(h) if self.seen.last_seq.is_none_or(|l| l < h) => self.catch_up = Some(h),
            _ => self.resend(&mut ws, false).await?,
        }
        if self.sent.is_none() && self.next_move_at.is_none() {
            self.schedule();
        }
        Ok(ws)
    }

    async fn handle(&mut self, ws: &mut Ws, e: Event) -> Result<(), Stop> {
        let m = Arc::clone(&self.ctx.metrics);
        match e {
            Event::Ack { ply, seq } => {
                if let Some(seq) = seq {
                    self.seen.seq(seq, &m);
                }
                if ply <= self.seen.acked {
                    return Ok(());
                }
                self.ack(ply);
                // On the relay the acknowledgement is the only copy of our own move.
                self.seen.last_ply = self.seen.last_ply.max(ply);
            }
            Event::Move { seq, ply } => {
                self.seen.seq(seq, &m);
                let own = self.seat().is_some_and(|s| s.plays(ply));
                if own {
                    // chuhe also broadcasts our own move to us: not a delivery, not a duplicate.
                    // Normally its Reply came first; if the Reply was lost with a dropped
                    // connection, the replayed event is the confirmation.
                    if ply > self.seen.acked && self.sent.is_some_and(|p| p == ply) {
                        self.ack(ply);
                    }
                    self.seen.last_ply = self.seen.last_ply.max(ply);
                    return Ok(());
                }
                let now = self.ctx.epoch.now_ns();
                if let Fresh::Duplicate = self.seen.ply(ply, &m) {
                    return Ok(());
                }
                let sent = self.plan.timeline.sent_at(ply);
                Metrics::add(&m.deliveries, 1);
                if self.seat().is_some() {
                    if let Some(sent) = sent {
                        m.opponent.record_span(sent, now);
                    }
                    // The opponent's move also settles anything of ours before it.
                    if self.sent.is_some_and(|p| p < ply) {
                        self.sent = None;
                    }
                    self.schedule();
                } else {
                    if let Some(sent) = sent {
                        m.spectator
                            .record(Duration::from_nanos(now.saturating_sub(sent)));
                    }
                    self.plan.timeline.spectator_got(ply, now);
                }
            }
            Event::Sequenced { seq } => self.seen.seq(seq, &m),
            Event::Ended { seq } => {
                if let Some(s) = seq {
                    self.seen.seq(s, &m);
                }
                self.seen.ended = true;
            }
            Event::PeerJoined => self.resend(ws, true).await?,
            Event::Error { code } => m.error(&code),
            Event::Joined { plies, seq, .. } => {
                // A snapshot may arrive after the join was confirmed (chuhe sends the Reply
                // first) and may cover moves this client never saw, including the opponent's
                // last one: it may now be this player's turn.
                let before = self.seen.last_ply;
                self.seen.snapshot(plies, seq);
                if self.seen.last_ply > before {
                    if self.sent.is_some_and(|p| p <= self.seen.last_ply) {
                        self.sent = None;
                    }
                    if self.sent.is_none() && self.next_move_at.is_none() {
                        self.schedule();
                    }
                }
            }
            Event::Ignored => {}
        }
        Ok(())
    }

    /// This player's move `ply` is confirmed.
    fn ack(&mut self, ply: u32) {
        let m = &self.ctx.metrics;
        self.seen.acked = ply;
        let now = self.ctx.epoch.now_ns();
        if let Some(sent) = self.plan.timeline.sent_at(ply) {
            m.ack.record_span(sent, now);
        }
        Metrics::add(&m.moves_acked, 1);
        self.ctx.last_ack_ns.fetch_max(now, Ordering::Relaxed);
        let fault = self.ctx.fault_ns.load(Ordering::Relaxed);
        if fault != 0 && now > fault {
            self.plan.timeline.mark_resumed(now);
        }
        if self.sent.is_some_and(|p| p <= ply) {
            self.sent = None;
        }
    }

    /// At the end: plies the game played that this client never saw.
    fn account_missing(&self) {
        if self.seen.ended {
            return;
        }
        let played = self.plan.timeline.highest_sent();
        if played > self.seen.last_ply {
            let gap = u64::from(played - self.seen.last_ply);
            let m = &self.ctx.metrics;
            if self.seen.after_reconnect {
                Metrics::add(&m.missing_after_reconnect, gap);
            } else {
                Metrics::add(&m.missing, gap);
            }
        }
    }
}

/// Resolves to `true` when the flag is raised (`false` if its sender is gone); never resolves
/// without a flag.
async fn wait_flag(flag: &mut Option<watch::Receiver<bool>>) -> bool {
    match flag {
        Some(rx) => rx.wait_for(|hit| *hit).await.is_ok(),
        None => std::future::pending().await,
    }
}
