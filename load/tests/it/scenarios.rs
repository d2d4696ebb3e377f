//! Every scenario at a tiny size against an in-process relay on 127.0.0.1:0, so the load generator
//! never rots. No sleeps wait for anything: each run ends when its clients are done, and every run
//! is capped by `max_duration_ms`.

use std::sync::Arc;

use chuhe_load::moves::MoveSource;
use chuhe_load::relay::{self, RelayConfig, RelayStats};
use chuhe_load::report::Report;
use chuhe_load::scenario::{self, RunOptions, Scenario};
use chuhe_load::target::Target;
use chuhe_load::think::ThinkTime;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

type TestResult = Result<(), Box<dyn std::error::Error>>;

struct Relay {
    url: String,
    stats: Arc<RelayStats>,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start_relay(cfg: RelayConfig) -> Result<Relay, std::io::Error> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("ws://{}", listener.local_addr()?);
    let stats = Arc::new(RelayStats::default());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(relay::serve(
        listener,
        async move {
            let _ = stopped.await;
        },
        cfg,
        Arc::clone(&stats),
    ));
    Ok(Relay {
        url,
        stats,
        stop: Some(stop),
        task,
    })
}

impl Relay {
    async fn stop(mut self) -> TestResult {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.task.await??;
        assert_eq!(self.stats.snapshot().open, 0, "every connection closed");
        Ok(())
    }
}

fn opts() -> RunOptions {
    RunOptions {
        connect_concurrency: 16,
        max_duration_ms: 60_000,
        join_timeout_ms: 10_000,
        connect_timeout_ms: 10_000,
        server_pid: Some(std::process::id()),
        sample_every_ms: 20,
        ..RunOptions::default()
    }
}

async fn run(s: Scenario, moves: &MoveSource) -> Result<Report, Box<dyn std::error::Error>> {
    let relay = start_relay(RelayConfig::default()).await?;
    let target = Target::relay(&relay.url)?;
    let report = scenario::run(&s, &target, moves, &opts()).await?;
    let frames = relay.stats.snapshot();
    relay.stop().await?;
    assert!(frames.frames_in >= report.counts.moves_sent, "{frames:?}");
    // The JSON form is part of the interface.
    let json = serde_json::to_value(&report)?;
    assert!(json["latency"]["move_ack"]["p999_ms"].is_number());
    assert_eq!(json["scenario"]["scenario"], s.name());
    Ok(report)
}

fn assert_clean(r: &Report) {
    assert!(r.clean(), "{}", r.human());
    assert_eq!(r.counts.seq_gaps, 0, "{}", r.human());
    assert_eq!(r.counts.missing_after_reconnect, 0, "{}", r.human());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games() -> TestResult {
    let moves = MoveSource::generate(3, 24, 1)?;
    let r = run(
        Scenario::Games {
            games: 4,
            spectators: 2,
            plies: 24,
            think: ThinkTime::default(),
        },
        &moves,
    )
    .await?;
    assert_clean(&r);
    let c = &r.counts;
    assert_eq!(c.clients, 16);
    assert_eq!(c.connected, 16);
    assert_eq!(c.games_started, 4);
    assert_eq!(c.games_completed, 4);
    assert_eq!(c.moves_sent, 4 * 24);
    assert_eq!(c.moves_acked, 4 * 24);
    // Each move reaches the opponent and 2 spectators.
    assert_eq!(c.deliveries, 4 * 24 * 3);
    assert_eq!(c.duplicates, 0);
    assert_eq!(r.latency.move_ack.count, 96);
    assert_eq!(r.latency.opponent_delivery.count, 96);
    assert_eq!(r.latency.spectator_delivery.count, 192);
    assert!(r.moves_per_s > 0.0);
    let server = r.server.as_ref().ok_or("server sampled")?;
    assert!(server.rss_peak_kib > 0 && server.samples >= 2);
    assert!(r.human().contains("moves/s"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fanout() -> TestResult {
    let moves = MoveSource::generate(1, 10, 2)?;
    let r = run(
        Scenario::Fanout {
            spectators: 30,
            plies: 10,
            think: ThinkTime::Fixed(std::time::Duration::from_millis(1)),
        },
        &moves,
    )
    .await?;
    assert_clean(&r);
    assert_eq!(r.counts.deliveries, 10 * 31);
    assert_eq!(r.latency.spectator_delivery.count, 300);
    // Every move reached all 30 spectators, so each has a full fan-out time.
    assert_eq!(r.latency.fanout_all.count, 10);
    assert!(r.latency.fanout_all.max_ms >= r.latency.spectator_delivery.p50_ms);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_start() -> TestResult {
    let moves = MoveSource::generate(4, 12, 3)?;
    let r = run(
        Scenario::RoundStart {
            boards: 6,
            spectators: 2,
            plies: 12,
            think: ThinkTime::default(),
            window_ms: 100,
        },
        &moves,
    )
    .await?;
    assert_clean(&r);
    assert_eq!(r.counts.connected, 24);
    assert_eq!(r.counts.games_completed, 6);
    assert_eq!(r.counts.moves_acked, 72);
    // Spectators joined before their board's first move: they saw every move.
    assert_eq!(r.latency.spectator_delivery.count, 6 * 12 * 2);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_storm() -> TestResult {
    let moves = MoveSource::generate(2, 40, 4)?;
    let r = run(
        Scenario::ReconnectStorm {
            games: 4,
            spectators: 2,
            plies: 40,
            think: ThinkTime::Fixed(std::time::Duration::from_millis(5)),
            fraction: 0.5,
            storm_after_ms: 30,
        },
        &moves,
    )
    .await?;
    // The relay keeps no history, so a spectator may miss a move while it is away; players
    // resend, so every game still completes.
    assert!(r.clean(), "{}", r.human());
    assert_eq!(r.counts.reconnects, 8, "half of 16 clients");
    assert_eq!(r.latency.reconnect.count, 8);
    assert_eq!(r.counts.games_completed, 4);
    assert_eq!(r.counts.moves_acked, 160);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_stops_at_its_game_cap() -> TestResult {
    let moves = MoveSource::generate(2, 8, 5)?;
    let r = run(
        Scenario::Soak {
            games: 2,
            spectators: 1,
            plies: 8,
            think: ThinkTime::default(),
            duration_ms: 60_000,
            max_games: 5,
        },
        &moves,
    )
    .await?;
    assert_clean(&r);
    assert_eq!(r.counts.games_started, 5);
    assert_eq!(r.counts.games_completed, 5);
    assert_eq!(r.counts.clients, 15);
    assert_eq!(r.counts.moves_acked, 40);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_stops_at_its_duration() -> TestResult {
    let moves = MoveSource::generate(1, 8, 6)?;
    let r = run(
        Scenario::Soak {
            games: 1,
            spectators: 0,
            plies: 8,
            think: ThinkTime::Fixed(std::time::Duration::from_millis(2)),
            duration_ms: 0,
            max_games: 1_000_000,
        },
        &moves,
    )
    .await?;
    assert_eq!(r.counts.games_started, 0, "{}", r.human());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_target_is_reported_not_hung() -> TestResult {
    // Bind then drop: nothing listens on that port any more.
    let port = TcpListener::bind("127.0.0.1:0").await?.local_addr()?.port();
    let target = Target::relay(&format!("ws://127.0.0.1:{port}"))?;
    let moves = MoveSource::generate(1, 4, 7)?;
    let r = scenario::run(
        &Scenario::Games {
            games: 2,
            spectators: 1,
            plies: 4,
            think: ThinkTime::default(),
        },
        &target,
        &moves,
        &opts(),
    )
    .await?;
    assert!(!r.clean());
    assert_eq!(r.counts.connect_failed, 6);
    assert_eq!(r.errors.get("connect_tcp"), Some(&6));
    assert_eq!(r.counts.moves_sent, 0);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_held_then_closed() -> TestResult {
    let moves = MoveSource::generate(1, 0, 8)?;
    let r = run(
        Scenario::Idle {
            games: 5,
            spectators: 1,
            hold_ms: 50,
        },
        &moves,
    )
    .await?;
    assert_clean(&r);
    assert_eq!(r.counts.connected, 15);
    assert_eq!(r.counts.moves_sent, 0);
    assert_eq!(r.counts.games_completed, 0);
    let server = r.server.as_ref().ok_or("server sampled")?;
    assert!(server.rss_connected_kib > 0, "{server:?}");
    assert!(r.wall_s >= 0.05, "held for the hold time");
    Ok(())
}
