//! The scenarios: how many games and spectators, when they connect, when they move, and what
//! happens to them. Each runs against any [`Target`] and always stops by itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::{Barrier, mpsc, watch};
use tokio::task::JoinSet;

use crate::client::{self, ClientPlan, Ctx};
use crate::driver::{Participant, Role, Seat};
use crate::metrics::{Epoch, Metrics, Timeline};
use crate::moves::MoveSource;
use crate::net::Connector;
use crate::procstat::{self, Sampler};
use crate::report::{Report, machine};
use crate::target::{Target, TargetKind};
use crate::think::ThinkTime;

/// What to run.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "scenario", rename_all = "kebab-case")]
pub enum Scenario {
    /// `games` games (2 players each, `spectators` spectators each) all connected first, then all
    /// started at once; each plays `plies` moves with `think` between them.
    Games {
        games: usize,
        spectators: usize,
        plies: usize,
        #[serde(serialize_with = "ser_think")]
        think: ThinkTime,
    },
    /// One board and `spectators` spectators, all connected before the first move.
    Fanout {
        spectators: usize,
        plies: usize,
        #[serde(serialize_with = "ser_think")]
        think: ThinkTime,
    },
    /// `boards` boards whose clients (2 players + `spectators` each) connect spread evenly over
    /// `window`; each board starts as soon as its own clients are in.
    RoundStart {
        boards: usize,
        spectators: usize,
        plies: usize,
        #[serde(serialize_with = "ser_think")]
        think: ThinkTime,
        window_ms: u64,
    },
    /// Like `games`; after `storm_after_ms` of play, `fraction` of all clients drop their
    /// connection at once (no close frame) and reconnect with the last sequence number they saw.
    ReconnectStorm {
        games: usize,
        spectators: usize,
        plies: usize,
        #[serde(serialize_with = "ser_think")]
        think: ThinkTime,
        fraction: f64,
        storm_after_ms: u64,
    },
    /// `games` games whose players (and `spectators` each) join and then stay idle for `hold_ms`
    /// (reading, answering pings): the server's memory per idle connection.
    Idle {
        games: usize,
        spectators: usize,
        hold_ms: u64,
    },
    /// `games` games at a time: each slot plays a game, then starts a new one, until
    /// `duration_ms` is over or `max_games` games were started.
    Soak {
        games: usize,
        spectators: usize,
        plies: usize,
        #[serde(serialize_with = "ser_think")]
        think: ThinkTime,
        duration_ms: u64,
        max_games: usize,
    },
}

fn ser_think<S: serde::Serializer>(t: &ThinkTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&t.to_string())
}

impl Scenario {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Games { .. } => "games",
            Self::Fanout { .. } => "fanout",
            Self::RoundStart { .. } => "round-start",
            Self::ReconnectStorm { .. } => "reconnect-storm",
            Self::Soak { .. } => "soak",
            Self::Idle { .. } => "idle",
        }
    }

    pub fn plies(&self) -> usize {
        match *self {
            Self::Games { plies, .. }
            | Self::Fanout { plies, .. }
            | Self::RoundStart { plies, .. }
            | Self::ReconnectStorm { plies, .. }
            | Self::Soak { plies, .. } => plies,
            Self::Idle { .. } => 0,
        }
    }

    fn think(&self) -> ThinkTime {
        match *self {
            Self::Games { think, .. }
            | Self::Fanout { think, .. }
            | Self::RoundStart { think, .. }
            | Self::ReconnectStorm { think, .. }
            | Self::Soak { think, .. } => think,
            Self::Idle { .. } => ThinkTime::default(),
        }
    }

    /// Spectators per game, games at once.
    fn shape(&self) -> (usize, usize) {
        match *self {
            Self::Games {
                games, spectators, ..
            }
            | Self::ReconnectStorm {
                games, spectators, ..
            }
            | Self::Soak {
                games, spectators, ..
            }
            | Self::Idle {
                games, spectators, ..
            } => (spectators, games),
            Self::Fanout { spectators, .. } => (spectators, 1),
            Self::RoundStart {
                boards, spectators, ..
            } => (spectators, boards),
        }
    }
}

/// How every scenario runs (the flags common to all).
#[derive(Clone, Debug, Serialize)]
pub struct RunOptions {
    /// Connects (TCP + upgrade) in flight at most.
    pub connect_concurrency: usize,
    /// Source addresses, round-robin (empty: the kernel picks).
    pub sources: Vec<std::net::IpAddr>,
    pub connect_timeout_ms: u64,
    pub join_timeout_ms: u64,
    /// Hard cap on the whole run.
    pub max_duration_ms: u64,
    /// Server process to sample (CPU, RSS).
    pub server_pid: Option<u32>,
    pub sample_every_ms: u64,
    pub seed: u64,
    /// A progress line on stderr this often (0: none).
    pub progress_every_ms: u64,
    /// chuhe: the liveness rule's limit — a connection silent this long is dead and replaced
    /// (0: clients never give a connection up for silence).
    pub dead_after_ms: u64,
    /// A fault struck at one node during the games (the failover measurements).
    pub fault: Option<Fault>,
}

/// What happens to one node during a run: `kill -9`, or a freeze (`SIGSTOP`, `SIGCONT` after
/// `for_ms`), `after_ms` after the go.
#[derive(Clone, Debug, Serialize)]
pub struct Fault {
    pub kind: FaultKind,
    /// The node's process.
    pub pid: u32,
    /// Which of the `--chuhe-url`s it serves (games with a player there are counted apart).
    pub node: usize,
    pub after_ms: u64,
    pub for_ms: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FaultKind {
    /// `kill -9`.
    Kill,
    /// `SIGSTOP`, then `SIGCONT` after the fault's duration.
    Stop,
}

/// Sends `signal` (`KILL`, `STOP`, `CONT`) to `pid` with `kill(1)`.
fn signal(pid: u32, signal: &str) -> bool {
    std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .is_ok_and(|s| s.success())
}

/// Strikes the fault at its time and records when (for the failover figures); a freeze is
/// lifted after its duration.
async fn strike(ctx: Arc<Ctx>, f: Fault) {
    let at = (Instant::now() + Duration::from_millis(f.after_ms)).min(ctx.deadline);
    tokio::time::sleep_until(at.into()).await;
    let name = match f.kind {
        FaultKind::Kill => "KILL",
        FaultKind::Stop => "STOP",
    };
    ctx.fault_ns.store(ctx.epoch.now_ns(), Ordering::Relaxed);
    if !signal(f.pid, name) {
        ctx.metrics.error("fault_signal_failed");
        return;
    }
    if f.kind == FaultKind::Stop {
        let until = (Instant::now() + Duration::from_millis(f.for_ms)).min(ctx.deadline);
        tokio::time::sleep_until(until.into()).await;
        signal(f.pid, "CONT");
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            connect_concurrency: 256,
            sources: Vec::new(),
            connect_timeout_ms: 10_000,
            join_timeout_ms: 10_000,
            max_duration_ms: 600_000,
            server_pid: None,
            sample_every_ms: 250,
            seed: 1,
            progress_every_ms: 0,
            dead_after_ms: 0,
            fault: None,
        }
    }
}

/// Why a scenario could not run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Addr(#[from] crate::net::AddrError),
    #[error(transparent)]
    Target(#[from] crate::target::TargetError),
    #[error(transparent)]
    Proc(#[from] procstat::ProcError),
}

fn check(s: &Scenario) -> Result<(), RunError> {
    let bad = |m: &str| Err(RunError::Invalid(m.to_owned()));
    let (spectators, games) = s.shape();
    if games == 0 {
        return bad("there must be at least one game");
    }
    if s.plies() < 2 && !matches!(s, Scenario::Idle { .. }) {
        return bad("games need at least 2 plies");
    }
    if games.saturating_mul(spectators + 2) > 1_000_000 {
        return bad("more than 1,000,000 clients in one process");
    }
    if let Scenario::ReconnectStorm { fraction, .. } = s
        && !(0.0..=1.0).contains(fraction)
    {
        return bad("the storm fraction must be between 0 and 1");
    }
    if let Scenario::Soak { max_games, .. } = s
        && *max_games == 0
    {
        return bad("soak needs --max-games of at least 1");
    }
    Ok(())
}

/// Runs `scenario` against `target` and reports.
pub async fn run(
    scenario: &Scenario,
    target: &Target,
    moves: &MoveSource,
    opts: &RunOptions,
) -> Result<Report, RunError> {
    check(scenario)?;
    if moves.is_empty() {
        return Err(RunError::Invalid(
            "no games to play: the corpus is empty".into(),
        ));
    }
    let started = Instant::now();
    let started_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let fd_limit = crate::net::raise_fd_limit().unwrap_or(0);
    let connector = Arc::new(Connector::nodes(
        target.addrs(),
        opts.sources.clone(),
        opts.connect_concurrency,
        Duration::from_millis(opts.connect_timeout_ms),
    )?);
    let every = Duration::from_millis(opts.sample_every_ms.max(10));
    let server = match opts.server_pid {
        Some(pid) => Some(Sampler::start(pid, every)?),
        None => None,
    };
    let load = Sampler::start(std::process::id(), every)?;
    let epoch = Epoch::new();
    let ctx = Arc::new(Ctx {
        protocol: target.protocol(),
        connector,
        metrics: Arc::new(Metrics::default()),
        epoch,
        deadline: started + Duration::from_millis(opts.max_duration_ms),
        join_timeout: Duration::from_millis(opts.join_timeout_ms),
        last_ack_ns: AtomicU64::new(0),
        fanout: std::sync::Mutex::new(Vec::new()),
        dead_after: (target.kind() == TargetKind::Chuhe && opts.dead_after_ms > 0)
            .then(|| Duration::from_millis(opts.dead_after_ms)),
        recover: target.kind() == TargetKind::Chuhe,
        nodes: target.addrs().len().max(1),
        fault_ns: AtomicU64::new(0),
    });
    let progress = (opts.progress_every_ms > 0).then(|| {
        let ctx = Arc::clone(&ctx);
        let every = Duration::from_millis(opts.progress_every_ms);
        let name = scenario.name();
        tokio::spawn(async move {
            let m = &ctx.metrics;
            let t0 = Instant::now();
            let mut tick = tokio::time::interval_at((t0 + every).into(), every);
            // Bounded by the run's deadline; aborted when the run ends.
            while Instant::now() < ctx.deadline {
                tick.tick().await;
                eprintln!(
                    "[{name} {:>6.0}s] connected {} failed {} | moves {} acked | deliveries {} | \
                     missing {} | errors {} | games {} done",
                    t0.elapsed().as_secs_f64(),
                    Metrics::get(&m.connected),
                    Metrics::get(&m.connect_failed),
                    Metrics::get(&m.moves_acked),
                    Metrics::get(&m.deliveries),
                    Metrics::get(&m.missing),
                    m.error_total(),
                    Metrics::get(&m.games_completed) / 2,
                );
            }
        })
    });

    let phase = match scenario {
        Scenario::Soak {
            games,
            spectators,
            plies,
            think,
            duration_ms,
            max_games,
        } => {
            let stop_at = (started + Duration::from_millis(*duration_ms)).min(ctx.deadline);
            soak(
                &ctx,
                target,
                moves,
                opts,
                SoakShape {
                    slots: *games,
                    spectators: *spectators,
                    plies: *plies,
                    think: *think,
                    stop_at,
                    max_games: *max_games,
                },
                server.as_ref(),
            )
            .await?
        }
        _ => wave(&ctx, scenario, target, moves, opts, server.as_ref()).await?,
    };

    if let Some(p) = progress {
        p.abort();
    }
    let server_report = match server {
        Some(s) => Some(s.finish().await),
        None => None,
    };
    let load_report = load.finish().await;
    let (spectators, games) = scenario.shape();
    let clients = match scenario {
        Scenario::Soak { .. } => phase.clients,
        _ => games * (spectators + 2),
    };
    Ok(Report::build(
        scenario,
        target,
        opts,
        &ctx,
        phase,
        clients,
        started,
        started_unix,
        fd_limit,
        server_report,
        load_report,
        machine(),
    ))
}

/// When the measured move phase ran, ns since the run's epoch.
#[derive(Clone, Copy, Debug, Default)]
pub struct Phase {
    pub go_ns: u64,
    pub end_ns: u64,
    pub clients: usize,
    pub all_connected_s: f64,
}

/// A whole set of games started together (games, fanout, round-start, reconnect-storm).
async fn wave(
    ctx: &Arc<Ctx>,
    scenario: &Scenario,
    target: &Target,
    moves: &MoveSource,
    opts: &RunOptions,
    server: Option<&Sampler>,
) -> Result<Phase, RunError> {
    let (spectators, games) = scenario.shape();
    let plies = scenario.plies();
    let clients = games * (spectators + 2);
    let specs = target.create_games(games, plies, moves, 0).await?;
    if let Some(s) = server {
        s.mark_joining();
    }
    let (go_tx, go_rx) = watch::channel(false);
    let (ready_tx, mut ready_rx) = mpsc::channel::<bool>(clients.max(1));
    let (storm_tx, storm_rx) = watch::channel(false);
    let (window, per_board_start) = match scenario {
        Scenario::RoundStart { window_ms, .. } => (Duration::from_millis(*window_ms), true),
        _ => (Duration::ZERO, false),
    };
    if per_board_start {
        // Every board starts when its own clients are in.
        let _ = go_tx.send(true);
    }
    let (release_tx, release_rx) = watch::channel(false);
    let idle_hold = match scenario {
        Scenario::Idle { hold_ms, .. } => Some(Duration::from_millis(*hold_ms)),
        _ => None,
    };
    let storm_fraction = match scenario {
        Scenario::ReconnectStorm { fraction, .. } => *fraction,
        _ => 0.0,
    };
    let t0 = Instant::now();
    let mut set = JoinSet::new();
    let mut n = 0usize;
    // A fault strikes chuhe's nodes only (never during a relay run).
    let fault_plan = opts.fault.as_ref().filter(|_| ctx.recover);
    // With a fault: every game's timeline, and whether one of its players is on the node.
    let mut watched: Vec<(Arc<Timeline>, bool)> = Vec::new();
    for spec in specs {
        let timeline = Arc::new(Timeline::new(plies));
        if let Some(f) = fault_plan {
            let on = [Seat::Red, Seat::Black].into_iter().any(|s| {
                crate::chuhe::node_for(Role::Player(s), spec.index, 0, ctx.nodes) == f.node
            });
            watched.push((Arc::clone(&timeline), on));
        }
        let arrived = Arc::new(Barrier::new(spectators + 2));
        let finished = matches!(scenario, Scenario::Fanout { .. })
            .then(|| Arc::new(Barrier::new(spectators + 2)));
        let roles = [Role::Player(Seat::Red), Role::Player(Seat::Black)]
            .into_iter()
            .chain(std::iter::repeat_n(Role::Spectator, spectators));
        for (k, role) in roles.enumerate() {
            let connect_at = per_board_start.then(|| {
                let frac = n as f64 / clients.max(1) as f64;
                t0 + window.mul_f64(frac)
            });
            // Spread the storm evenly: client n is hit when the running count crosses a whole.
            let hit = storm_fraction > 0.0
                && ((n + 1) as f64 * storm_fraction).floor() > (n as f64 * storm_fraction).floor();
            let plan = ClientPlan {
                who: Participant {
                    game: Arc::clone(&spec),
                    role,
                    resume_after: None,
                    node_shift: 0,
                },
                timeline: Arc::clone(&timeline),
                arrived: Arc::clone(&arrived),
                finished: finished.clone(),
                think: scenario.think(),
                seed: opts
                    .seed
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    .wrapping_add((spec.index as u64) << 20 | k as u64),
                resign_at_end: target.needs_legal_moves(),
                connect_at,
                start: go_rx.clone(),
                ready: ready_tx.clone(),
                storm: hit.then(|| storm_rx.clone()),
                release: idle_hold.map(|_| release_rx.clone()),
            };
            set.spawn(client::run(Arc::clone(ctx), plan));
            n += 1;
        }
        if let Scenario::Fanout { .. } = scenario {
            // Keep the timeline to compute the full fan-out time below.
            fanout_timeline(ctx, timeline);
        }
    }
    drop(ready_tx);

    // Wait until every client has joined or failed (bounded by the deadline).
    let mut reported = 0usize;
    let mut joined = 0usize;
    while reported < clients {
        let r = tokio::select! {
            r = ready_rx.recv() => r,
            () = tokio::time::sleep_until(ctx.deadline.into()) => None,
        };
        match r {
            Some(ok) => {
                reported += 1;
                joined += usize::from(ok);
            }
            None => break,
        }
    }
    let all_connected_s = t0.elapsed().as_secs_f64();
    if let Some(s) = server {
        s.mark_connected(joined as u64);
    }
    let go_ns = if per_board_start {
        0
    } else {
        let at = ctx.epoch.now_ns();
        let _ = go_tx.send(true);
        at
    };

    if let Some(hold) = idle_hold {
        let at = (Instant::now() + hold).min(ctx.deadline);
        tokio::time::sleep_until(at.into()).await;
        if let Some(s) = server {
            // A second reading after the hold: what idle connections cost once settled.
            s.mark_connected(joined as u64);
        }
        let _ = release_tx.send(true);
    }
    let fault = fault_plan
        .cloned()
        .map(|f| tokio::spawn(strike(Arc::clone(ctx), f)));
    if storm_fraction > 0.0
        && let Scenario::ReconnectStorm { storm_after_ms, .. } = scenario
    {
        let at = (Instant::now() + Duration::from_millis(*storm_after_ms)).min(ctx.deadline);
        tokio::select! {
            () = tokio::time::sleep_until(at.into()) => { let _ = storm_tx.send(true); }
            () = drain(&mut set) => {}
        }
    }
    drain(&mut set).await;
    if let Some(task) = fault {
        task.abort();
        if let Some(f) = fault_plan
            && f.kind == FaultKind::Stop
            && ctx.fault_ns.load(Ordering::Relaxed) != 0
        {
            // The games ended before the freeze's time was up: lift it now.
            signal(f.pid, "CONT");
        }
    }
    failover_figures(ctx, &watched);
    drop(storm_tx);
    drop(release_tx);
    Ok(Phase {
        go_ns,
        end_ns: ctx.last_ack_ns.load(Ordering::Relaxed),
        clients,
        all_connected_s,
    })
}

/// Each game under way at the fault: the fault to its first acknowledged move after it.
fn failover_figures(ctx: &Ctx, watched: &[(Arc<Timeline>, bool)]) {
    let at = ctx.fault_ns.load(Ordering::Relaxed);
    if at == 0 {
        return;
    }
    let m = &ctx.metrics;
    for (t, on_node) in watched {
        if t.over_by(at) {
            continue;
        }
        match t.resumed_at() {
            Some(r) => {
                let took = Duration::from_nanos(r.saturating_sub(at));
                m.failover.record(took);
                if *on_node {
                    m.failover_node.record(took);
                }
            }
            None => Metrics::add(&m.failover_not_resumed, 1),
        }
    }
}

async fn drain(set: &mut JoinSet<()>) {
    while set.join_next().await.is_some() {}
}

/// Registers the fan-out board's timeline so the report can compute "time to reach everyone".
fn fanout_timeline(ctx: &Ctx, t: Arc<Timeline>) {
    ctx.fanout.lock().unwrap_or_else(|e| e.into_inner()).push(t);
}

struct SoakShape {
    slots: usize,
    spectators: usize,
    plies: usize,
    think: ThinkTime,
    stop_at: Instant,
    max_games: usize,
}

/// `slots` games at a time, each slot starting a new game when its last one ends.
async fn soak(
    ctx: &Arc<Ctx>,
    target: &Target,
    moves: &MoveSource,
    opts: &RunOptions,
    shape: SoakShape,
    server: Option<&Sampler>,
) -> Result<Phase, RunError> {
    let started_games = Arc::new(AtomicUsize::new(0));
    let clients = Arc::new(AtomicUsize::new(0));
    let (go_tx, go_rx) = watch::channel(true);
    let go_ns = ctx.epoch.now_ns();
    let shape = Arc::new(shape);
    let mut slots = JoinSet::new();
    for _slot in 0..shape.slots {
        let ctx = Arc::clone(ctx);
        let target = target.clone();
        let moves = moves.clone();
        let started_games = Arc::clone(&started_games);
        let clients = Arc::clone(&clients);
        let shape = Arc::clone(&shape);
        let go_rx = go_rx.clone();
        let seed = opts.seed;
        slots.spawn(async move {
            // Bounded: at most max_games iterations over all slots, and never past stop_at.
            while Instant::now() < shape.stop_at {
                let index = started_games.fetch_add(1, Ordering::Relaxed);
                if index >= shape.max_games {
                    break;
                }
                let spec = match target.create_games(1, shape.plies, &moves, index).await {
                    Ok(mut v) => match v.pop() {
                        Some(s) => s,
                        None => break,
                    },
                    Err(e) => {
                        ctx.metrics.error(e.code());
                        break;
                    }
                };
                let timeline = Arc::new(Timeline::new(shape.plies));
                let arrived = Arc::new(Barrier::new(shape.spectators + 2));
                let (ready_tx, _ready_rx) = mpsc::channel(shape.spectators + 2);
                let mut set = JoinSet::new();
                let roles = [Role::Player(Seat::Red), Role::Player(Seat::Black)]
                    .into_iter()
                    .chain(std::iter::repeat_n(Role::Spectator, shape.spectators));
                for (k, role) in roles.enumerate() {
                    let plan = ClientPlan {
                        who: Participant {
                            game: Arc::clone(&spec),
                            role,
                            resume_after: None,
                            node_shift: 0,
                        },
                        timeline: Arc::clone(&timeline),
                        arrived: Arc::clone(&arrived),
                        finished: None,
                        think: shape.think,
                        seed: seed.wrapping_add((index as u64) << 20 | k as u64),
                        resign_at_end: target.needs_legal_moves(),
                        connect_at: None,
                        start: go_rx.clone(),
                        ready: ready_tx.clone(),
                        storm: None,
                        release: None,
                    };
                    clients.fetch_add(1, Ordering::Relaxed);
                    set.spawn(client::run(Arc::clone(&ctx), plan));
                }
                drop(ready_tx);
                drain(&mut set).await;
            }
        });
    }
    if let Some(s) = server {
        s.mark_connected((shape.slots * (shape.spectators + 2)) as u64);
    }
    while slots.join_next().await.is_some() {}
    drop(go_tx);
    Ok(Phase {
        go_ns,
        end_ns: ctx.last_ack_ns.load(Ordering::Relaxed),
        clients: clients.load(Ordering::Relaxed),
        all_connected_s: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_scenarios_are_refused() {
        let think = ThinkTime::default();
        let bad = [
            Scenario::Games {
                games: 0,
                spectators: 0,
                plies: 10,
                think,
            },
            Scenario::Fanout {
                spectators: 1,
                plies: 1,
                think,
            },
            Scenario::ReconnectStorm {
                games: 1,
                spectators: 0,
                plies: 10,
                think,
                fraction: 1.5,
                storm_after_ms: 0,
            },
            Scenario::Soak {
                games: 1,
                spectators: 0,
                plies: 10,
                think,
                duration_ms: 1,
                max_games: 0,
            },
            Scenario::RoundStart {
                boards: 1_000_000,
                spectators: 1,
                plies: 10,
                think,
                window_ms: 0,
            },
        ];
        for s in &bad {
            assert!(matches!(check(s), Err(RunError::Invalid(_))), "{s:?}");
        }
        assert!(
            check(&Scenario::Fanout {
                spectators: 0,
                plies: 2,
                think
            })
            .is_ok()
        );
    }
}
