//! `chuhe-load`: load scenarios against chuhe or the bare relay, and the relay itself.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use chuhe_load::moves::MoveSource;
use chuhe_load::relay::{RelayConfig, RelayStats};
use chuhe_load::report::{Comparison, Report};
use chuhe_load::scenario::{self, RunOptions, Scenario};
use chuhe_load::target::{ChuheSetup, Target, loopback_addr};
use chuhe_load::think::{ThinkTime, parse_duration};
use clap::{Args, Parser, Subcommand, ValueEnum};
use tokio::io::AsyncBufReadExt;

/// Load generator for chuhe, with a bare websocket relay as the yardstick.
///
/// Every scenario runs against `--target relay`, `chuhe` or `both` (relay first, then chuhe,
/// then the chuhe/relay ratios). Traffic goes to loopback addresses only. Exit status: 0 when the
/// run was clean, 2 when it finished with errors, failed connections or missing events, 1 when it
/// could not run.
#[derive(Parser, Debug)]
#[command(name = "chuhe-load", version)]
struct Cli {
    /// Tokio worker threads of this process (default: one per CPU it may run on).
    #[arg(long, global = true, env = "CHUHE_LOAD_THREADS")]
    threads: Option<usize>,
    /// Tokio scheduler: `auto` (clients: single-threaded with one worker, as `chuhe serve`
    /// does on one CPU; the relay: work-stealing), `single` or `multi`. A relay started by a
    /// scenario inherits the environment variable, not the flag.
    #[arg(long, global = true, env = "CHUHE_LOAD_SCHEDULER", default_value = "auto",
          value_parser = ["auto", "single", "multi"])]
    scheduler: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the bare relay: pairs players into games and forwards frames unchanged.
    Relay(RelayArgs),
    /// Print a corpus of random legal games that never end early or repeat a position.
    Corpus {
        /// Games (one per line).
        #[arg(long, default_value_t = 100)]
        games: usize,
        /// Plies per game.
        #[arg(long, default_value_t = 200)]
        plies: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// G games, 2 players each (and optional spectators), all started at once.
    Games {
        /// Games at once.
        #[arg(long, default_value_t = 100)]
        games: usize,
        /// Spectators per game.
        #[arg(long, default_value_t = 0)]
        spectators: usize,
        #[command(flatten)]
        play: PlayArgs,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// One board watched by S spectators; reports the time for a move to reach all of them.
    Fanout {
        /// Spectators of the board.
        #[arg(long, default_value_t = 1000)]
        spectators: usize,
        #[command(flatten)]
        play: PlayArgs,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// N boards whose players and spectators connect within one window and start at once.
    RoundStart {
        /// Boards.
        #[arg(long, default_value_t = 500)]
        boards: usize,
        /// Spectators per board.
        #[arg(long, default_value_t = 4)]
        spectators: usize,
        /// Connects are spread evenly over this window.
        #[arg(long, default_value = "5s", value_parser = parse_duration)]
        window: Duration,
        #[command(flatten)]
        play: PlayArgs,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// A league round of B boards starting at one scheduled instant (chuhe only): how late
    /// each board's clock start is decided, and when a spectator of every board sees it.
    LeagueRound(LeagueRoundArgs),
    /// Games under way; then a fraction of all clients drop at once and reconnect.
    ReconnectStorm {
        #[arg(long, default_value_t = 100)]
        games: usize,
        /// Spectators per game.
        #[arg(long, default_value_t = 2)]
        spectators: usize,
        /// Fraction of clients dropped (0..=1).
        #[arg(long, default_value_t = 0.5)]
        fraction: f64,
        /// Play this long before the storm.
        #[arg(long, default_value = "2s", value_parser = parse_duration)]
        storm_after: Duration,
        #[command(flatten)]
        play: PlayArgs,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Players (and spectators) of G games join and stay idle: the server's memory per connection.
    Idle {
        /// Games (2 authenticated players each).
        #[arg(long, default_value_t = 1000)]
        games: usize,
        /// Spectators per game.
        #[arg(long, default_value_t = 0)]
        spectators: usize,
        /// How long every connection stays open once all have joined.
        #[arg(long, default_value = "10s", value_parser = parse_duration)]
        hold: Duration,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// A steady number of games for a long time: each finished game is replaced by a new one.
    Soak {
        /// Games at once.
        #[arg(long, default_value_t = 100)]
        games: usize,
        /// Spectators per game.
        #[arg(long, default_value_t = 0)]
        spectators: usize,
        /// Stop starting games after this long.
        #[arg(long, default_value = "1h", value_parser = parse_duration)]
        duration: Duration,
        /// Stop after this many games in all.
        #[arg(long, default_value_t = 100_000)]
        max_games: usize,
        #[command(flatten)]
        play: PlayArgs,
        #[command(flatten)]
        common: CommonArgs,
    },
}

#[derive(Args, Debug)]
struct LeagueRoundArgs {
    /// chuhe's websocket URL, e.g. ws://127.0.0.1:8080/ws.
    #[arg(long, env = "CHUHE_LOAD_CHUHE_URL")]
    chuhe_url: String,
    /// An organizer token of the chuhe server (the event is created with it).
    #[arg(long, env = "CHUHE_LOAD_ORGANIZER_TOKEN", hide_env_values = true)]
    organizer_token: String,
    /// Boards in the round (a multiple of --boards-per-match).
    #[arg(long, default_value_t = 500)]
    boards: usize,
    /// Boards per match (1 to 64); the event has 2 x boards / boards-per-match teams.
    #[arg(long, default_value_t = 50)]
    boards_per_match: usize,
    /// From the event's creation to the round's scheduled start.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    lead: Duration,
    /// How long before the start the server sets up the round's games (0: at the start).
    #[arg(long, default_value = "20s", value_parser = parse_duration)]
    open_before: Duration,
    /// Time control of the round's games.
    #[arg(long, default_value = "3h")]
    time_control: String,
    /// Spectator connects in flight at most.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Clients give up this long after the scheduled start.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    give_up_after: Duration,
    /// Write the JSON report here (`-` for stdout, instead of the human summary).
    #[arg(long)]
    json: Option<PathBuf>,
}

async fn league_round(a: LeagueRoundArgs) -> Result<bool> {
    let addr = loopback_addr(&a.chuhe_url)?;
    let options = chuhe_load::league_round::Options {
        boards: a.boards,
        boards_per_match: a.boards_per_match,
        lead_ms: ms(a.lead),
        open_before_ms: ms(a.open_before),
        time_control: a.time_control,
        connect_concurrency: a.concurrency,
        give_up_after_ms: ms(a.give_up_after),
    };
    let report =
        chuhe_load::league_round::run(&a.chuhe_url, addr, &a.organizer_token, options).await?;
    let json = serde_json::to_string_pretty(&report)?;
    match a.json.as_deref() {
        Some(p) if p.as_os_str() == "-" => println!("{json}"),
        Some(p) => {
            std::fs::write(p, json).with_context(|| format!("writing {}", p.display()))?;
            print!("{}", report.human());
        }
        None => print!("{}", report.human()),
    }
    Ok(report.clean())
}

#[derive(Args, Debug)]
struct RelayArgs {
    /// Address to listen on (loopback only).
    #[arg(
        long,
        default_value = "127.0.0.1:9001",
        env = "CHUHE_LOAD_RELAY_LISTEN"
    )]
    listen: SocketAddr,
    /// Frames queued per connection before it counts as too slow and is dropped.
    #[arg(long, default_value_t = 1024)]
    queue: usize,
    /// Largest accepted message, bytes.
    #[arg(long, default_value_t = 16 * 1024)]
    max_message: usize,
    /// Stop by itself after this long.
    #[arg(long, default_value = "6h", value_parser = parse_duration)]
    max_duration: Duration,
    /// Listen backlog (capped by net.core.somaxconn). The default 128 of a plain bind overflows
    /// in connect storms and costs a 1 s SYN retransmit per dropped connect.
    #[arg(long, default_value_t = 4096)]
    backlog: u32,
}

/// Binds with an explicit listen backlog.
fn listen(addr: SocketAddr, backlog: u32) -> std::io::Result<tokio::net::TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog)
}

#[derive(Args, Debug)]
struct PlayArgs {
    /// Plies per game (the corpus must have lines at least this long).
    #[arg(long, default_value_t = 120)]
    plies: usize,
    /// Think time before each move: 0, 500ms, 2s, exp:2s or uniform:1s-3s.
    #[arg(long, default_value = "0")]
    think: ThinkTime,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Wire {
    /// `chuhe.v1.proto`: binary protobuf frames.
    Proto,
    /// `chuhe.v1.json`: text frames of proto3 canonical JSON.
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TargetChoice {
    Relay,
    Chuhe,
    /// The relay, then chuhe, then the ratios.
    Both,
}

#[derive(Args, Debug)]
struct CommonArgs {
    /// Which server to load.
    #[arg(long, value_enum, default_value_t = TargetChoice::Relay, env = "CHUHE_LOAD_TARGET")]
    target: TargetChoice,
    /// A running relay, e.g. ws://127.0.0.1:9001. Without it a relay is started as a child process.
    #[arg(long, env = "CHUHE_LOAD_RELAY_URL")]
    relay_url: Option<String>,
    /// PID of the running relay, to sample its CPU and memory.
    #[arg(long)]
    relay_pid: Option<u32>,
    /// CPU list for the relay started here (`taskset -c`), e.g. 0.
    #[arg(long)]
    relay_cpus: Option<String>,
    /// Measure the disk's flush latency beside each run: an 8 KiB write and `fdatasync` of a
    /// file in this directory (put it on the database's file system) every
    /// --disk-probe-every. Reported as `disk_flush`.
    #[arg(long)]
    disk_probe: Option<PathBuf>,
    #[arg(long, default_value = "10ms", value_parser = parse_duration)]
    disk_probe_every: Duration,
    /// chuhe's websocket URL, e.g. ws://127.0.0.1:8080/ws. Several nodes of one cluster: the
    /// flag again or a comma list; games, players and the spectators of every board spread
    /// over them (red of game i on node i mod N, black on the next, spectators in turn).
    #[arg(long, env = "CHUHE_LOAD_CHUHE_URL", value_delimiter = ',')]
    chuhe_url: Vec<String>,
    /// PID of the chuhe server, to sample its CPU and memory (with several nodes: one of them).
    #[arg(long)]
    chuhe_pid: Option<u32>,
    /// An organizer token of the chuhe server (players, tokens and games are created with it).
    #[arg(long, env = "CHUHE_LOAD_ORGANIZER_TOKEN", hide_env_values = true)]
    organizer_token: Option<String>,
    /// Encoding of chuhe's protocol: binary protobuf or canonical JSON text frames.
    #[arg(long, value_enum, default_value_t = Wire::Proto)]
    encoding: Wire,
    /// Time control of the games created on chuhe (long enough that no flag falls).
    #[arg(long, default_value = "3h")]
    time_control: String,
    /// Organizer API connections used in parallel to create games before the run.
    #[arg(long, default_value_t = 8)]
    setup_concurrency: usize,
    /// Games to play: one game per line, coordinate moves (h2e2) separated by spaces (see
    /// `chuhe-load corpus`). Without it, --corpus-games games are generated at start.
    #[arg(long, env = "CHUHE_LOAD_CORPUS")]
    corpus: Option<PathBuf>,
    /// Distinct games generated when there is no --corpus (game i plays line i mod this).
    #[arg(long, default_value_t = 64)]
    corpus_games: usize,
    /// Connects (TCP + websocket upgrade) in flight at most.
    #[arg(long, default_value_t = 256)]
    concurrency: usize,
    /// Source addresses, e.g. 127.0.0.1-127.0.0.8 (about 28k connections per address).
    #[arg(long)]
    sources: Option<String>,
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    connect_timeout: Duration,
    /// Longest wait for the server to confirm a join.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    join_timeout: Duration,
    /// Every client stops by then, whatever happens.
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    max_duration: Duration,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A progress line on stderr this often (0 for none).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    progress: Duration,
    /// Write the JSON report here (`-` for stdout, instead of the human summary).
    #[arg(long)]
    json: Option<PathBuf>,
    /// chuhe's liveness rule (docs/protocol.md, "Liveness"): a connection on which nothing at
    /// all arrived for this long is dead; the client reconnects to the next node and resumes
    /// by seq (as after any lost connection). 0: never give a connection up for silence.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    dead_after: Duration,
    /// Strike one node during the games: `kill` (-9) or `stop` (SIGSTOP, SIGCONT after
    /// --fault-for). Needs --fault-pid; reports the failover time (the fault to each game's
    /// next acknowledged move).
    #[arg(long, value_enum, requires = "fault_pid")]
    fault: Option<chuhe_load::scenario::FaultKind>,
    /// The process of the node struck by --fault.
    #[arg(long)]
    fault_pid: Option<u32>,
    /// Which --chuhe-url the struck node serves (0-based): games with a player there are
    /// reported apart.
    #[arg(long, default_value_t = 0)]
    fault_node: usize,
    /// When the fault strikes, after the go.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    fault_after: Duration,
    /// How long a `stop` fault holds the node frozen.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    fault_for: Duration,
}

fn main() -> ExitCode {
    // Usage errors exit with 1 like every other failure to run (clap's own 2 means "finished
    // with errors" here); --help and --version exit 0.
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    // The clients: with one worker (asked for, or the only CPU this process may use) the
    // single-threaded scheduler, as `chuhe serve` uses on one CPU; with more, work-stealing.
    // The relay, the yardstick, keeps the work-stealing scheduler unless told otherwise: it
    // is what the figures were measured with, and it was the faster of the two for
    // the relay here (by 1–3 %, docs/benchmarks.md).
    let workers = cli.threads.map(|n| n.max(1)).unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let single = match cli.scheduler.as_str() {
        "single" => true,
        "multi" => false,
        _ => workers == 1 && !matches!(cli.command, Command::Relay(_)),
    };
    let mut rt = if single {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(workers);
        b
    };
    rt.enable_all();
    let outcome = rt
        .build()
        .context("starting the tokio runtime")
        .and_then(|rt| rt.block_on(run(cli.command)));
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(2),
        Err(e) => {
            eprintln!("chuhe-load: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> Result<bool> {
    let (scenario, common) = match command {
        Command::Relay(a) => {
            relay(a).await?;
            return Ok(true);
        }
        Command::LeagueRound(a) => return league_round(a).await,
        Command::Corpus { games, plies, seed } => {
            let src = MoveSource::generate(games, plies, seed)?;
            print!(
                "{}",
                src.to_text(&format!(
                    "Source: chuhe-load corpus --games {games} --plies {plies} --seed {seed}\n\
                     Random legal games (chuhe-rules): no game ends, no position repeats, \
                     at most {} plies without a capture.",
                    chuhe_load::moves::MAX_QUIET_PLIES
                ))
            );
            return Ok(true);
        }
        Command::Games {
            games,
            spectators,
            play,
            common,
        } => (
            Scenario::Games {
                games,
                spectators,
                plies: play.plies,
                think: play.think,
            },
            common,
        ),
        Command::Fanout {
            spectators,
            play,
            common,
        } => (
            Scenario::Fanout {
                spectators,
                plies: play.plies,
                think: play.think,
            },
            common,
        ),
        Command::RoundStart {
            boards,
            spectators,
            window,
            play,
            common,
        } => (
            Scenario::RoundStart {
                boards,
                spectators,
                plies: play.plies,
                think: play.think,
                window_ms: ms(window),
            },
            common,
        ),
        Command::ReconnectStorm {
            games,
            spectators,
            fraction,
            storm_after,
            play,
            common,
        } => (
            Scenario::ReconnectStorm {
                games,
                spectators,
                plies: play.plies,
                think: play.think,
                fraction,
                storm_after_ms: ms(storm_after),
            },
            common,
        ),
        Command::Idle {
            games,
            spectators,
            hold,
            common,
        } => (
            Scenario::Idle {
                games,
                spectators,
                hold_ms: ms(hold),
            },
            common,
        ),
        Command::Soak {
            games,
            spectators,
            duration,
            max_games,
            play,
            common,
        } => (
            Scenario::Soak {
                games,
                spectators,
                plies: play.plies,
                think: play.think,
                duration_ms: ms(duration),
                max_games,
            },
            common,
        ),
    };
    run_scenario(scenario, common).await
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

async fn relay(a: RelayArgs) -> Result<()> {
    if !a.listen.ip().is_loopback() {
        bail!("the relay listens on loopback only, not {}", a.listen.ip());
    }
    let fds = chuhe_load::net::raise_fd_limit().unwrap_or(0);
    let listener = listen(a.listen, a.backlog).with_context(|| format!("binding {}", a.listen))?;
    let addr = listener.local_addr()?;
    // The first stdout line is read by `--target relay` when it starts the relay itself.
    println!(
        "chuhe-load relay listening on ws://{addr} (pid {}, fd limit {fds})",
        std::process::id()
    );
    let stats = Arc::new(RelayStats::default());
    let cfg = RelayConfig {
        queue: a.queue,
        max_message: a.max_message,
    };
    let shutdown = async {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        let term = async {
            match term.as_mut() {
                Some(t) => {
                    t.recv().await;
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = term => {}
            () = tokio::time::sleep(a.max_duration) => eprintln!("relay: --max-duration reached"),
        }
    };
    chuhe_load::relay::serve(listener, shutdown, cfg, Arc::clone(&stats)).await?;
    eprintln!(
        "relay stopped: {}",
        serde_json::to_string(&stats.snapshot())?
    );
    Ok(())
}

/// A relay started by this process as a child; killed when dropped.
struct ChildRelay {
    child: tokio::process::Child,
    url: String,
    pid: u32,
}

async fn spawn_relay(cpus: Option<&str>) -> Result<ChildRelay> {
    let exe = std::env::current_exe().context("finding chuhe-load's own executable")?;
    let mut cmd = match cpus {
        Some(c) => {
            let mut t = tokio::process::Command::new("taskset");
            t.arg("-c").arg(c).arg(&exe);
            t
        }
        None => tokio::process::Command::new(&exe),
    };
    cmd.args(["relay", "--listen", "127.0.0.1:0", "--max-duration", "6h"])
        .stdout(std::process::Stdio::piped())
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let mut child = cmd.spawn().context("starting the relay")?;
    let pid = child.id().context("relay exited at once")?;
    let stdout = child.stdout.take().context("relay stdout")?;
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .context("relay did not say where it listens within 10 s")??
        .context("relay exited before listening")?;
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("ws://"))
        .context("unexpected relay banner")?
        .to_owned();
    Ok(ChildRelay { child, url, pid })
}

/// Runs a scenario with the disk probe beside it when --disk-probe asks for one.
async fn probed(
    common: &CommonArgs,
    run: impl std::future::Future<Output = Result<Report, scenario::RunError>>,
) -> Result<Report> {
    let Some(dir) = &common.disk_probe else {
        return Ok(run.await?);
    };
    if common.disk_probe_every.is_zero() {
        bail!("--disk-probe-every must be at least 1ms");
    }
    let probe = chuhe_load::diskprobe::DiskProbe::start(dir, common.disk_probe_every)?;
    let result = run.await;
    let flush = probe.finish();
    let mut report = result?;
    report.attach_disk_flush(flush);
    Ok(report)
}

async fn run_scenario(scenario: Scenario, common: CommonArgs) -> Result<bool> {
    let moves = match &common.corpus {
        Some(path) => MoveSource::load(path, scenario.plies())?,
        None => MoveSource::generate(common.corpus_games, scenario.plies(), common.seed)?,
    };
    let sources = match &common.sources {
        Some(s) => chuhe_load::net::parse_sources(s)?,
        None => Vec::new(),
    };
    let options = |pid: Option<u32>| RunOptions {
        connect_concurrency: common.concurrency,
        sources: sources.clone(),
        connect_timeout_ms: ms(common.connect_timeout),
        join_timeout_ms: ms(common.join_timeout),
        max_duration_ms: ms(common.max_duration),
        server_pid: pid,
        sample_every_ms: 250,
        seed: common.seed,
        progress_every_ms: ms(common.progress),
        dead_after_ms: ms(common.dead_after),
        fault: match (common.fault, common.fault_pid) {
            (Some(kind), Some(pid)) => Some(chuhe_load::scenario::Fault {
                kind,
                pid,
                node: common.fault_node,
                after_ms: ms(common.fault_after),
                for_ms: ms(common.fault_for),
            }),
            _ => None,
        },
    };

    let mut relay_report = None;
    let mut chuhe_report = None;
    if matches!(common.target, TargetChoice::Relay | TargetChoice::Both) {
        let mut child = None;
        let (url, pid) = match &common.relay_url {
            Some(u) => (u.clone(), common.relay_pid),
            None => {
                let c = spawn_relay(common.relay_cpus.as_deref()).await?;
                let r = (c.url.clone(), Some(c.pid));
                child = Some(c);
                r
            }
        };
        let target = Target::relay(&url)?;
        let opts = options(pid);
        let report = probed(&common, scenario::run(&scenario, &target, &moves, &opts)).await?;
        if let Some(mut c) = child {
            let _ = c.child.start_kill();
            let _ = c.child.wait().await;
        }
        relay_report = Some(report);
    }
    if matches!(common.target, TargetChoice::Chuhe | TargetChoice::Both) {
        if common.chuhe_url.is_empty() {
            bail!("--target chuhe needs --chuhe-url ws://127.0.0.1:PORT/ws");
        }
        for url in &common.chuhe_url {
            let _ = loopback_addr(url)?;
        }
        let encoding = match common.encoding {
            Wire::Proto => chuhe_proto::Encoding::Proto,
            Wire::Json => chuhe_proto::Encoding::Json,
        };
        let setup = ChuheSetup {
            organizer_token: common.organizer_token.clone().context(
                "--target chuhe needs --organizer-token (or CHUHE_LOAD_ORGANIZER_TOKEN)",
            )?,
            time_control: common.time_control.clone(),
            setup_concurrency: common.setup_concurrency,
        };
        let target = Target::chuhe_nodes(&common.chuhe_url, encoding, setup)?;
        let opts = options(common.chuhe_pid);
        let report = probed(&common, scenario::run(&scenario, &target, &moves, &opts)).await?;
        chuhe_report = Some(report);
    }

    let clean = [&relay_report, &chuhe_report]
        .into_iter()
        .flatten()
        .all(Report::clean);
    let (json, human) = match (relay_report, chuhe_report) {
        (Some(r), Some(c)) => {
            let cmp = Comparison::new(c, r);
            (serde_json::to_string_pretty(&cmp)?, cmp.human())
        }
        (Some(r), None) | (None, Some(r)) => (serde_json::to_string_pretty(&r)?, r.human()),
        (None, None) => bail!("nothing ran"),
    };
    match common.json.as_deref() {
        Some(p) if p.as_os_str() == "-" => println!("{json}"),
        Some(p) => {
            std::fs::write(p, json).with_context(|| format!("writing {}", p.display()))?;
            print!("{human}");
        }
        None => print!("{human}"),
    }
    Ok(clean)
}
