//! Every scenario at a tiny size against a real chuhe server started in-process on 127.0.0.1:0
//! on a temporary SQLite database, in both encodings, so the chuhe driver never rots. Games are created through the organizer API
//! exactly as a benchmark run does. No sleeps wait for anything; every run is capped.

use std::sync::Arc;
use std::time::Duration;

use chuhe_load::moves::MoveSource;
use chuhe_load::report::Report;
use chuhe_load::scenario::{self, RunOptions, Scenario};
use chuhe_load::target::{ChuheSetup, Target};
use chuhe_load::think::ThinkTime;
use chuhe_proto::Encoding;
use chuhe_server::persist::{Persist, Role};
use chuhe_server::store_adapter::StoreAdapter;
use chuhe_server::{Config, Deps};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

type TestResult = Result<(), Box<dyn std::error::Error>>;

struct Server {
    _dir: tempfile::TempDir,
    url: String,
    organizer_token: String,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start_server() -> Result<Server, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let db = format!("sqlite://{}", dir.path().join("chuhe.db").display());
    let store = chuhe_store::open(&db, &chuhe_store::StoreOptions::default()).await?;
    let persist: Arc<dyn Persist> = Arc::new(StoreAdapter::new(Arc::new(store)));
    let org = persist
        .create_account("load organizer", Role::Organizer)
        .await?;
    let (organizer_token, _) = persist.issue_token(org.id, None).await?;
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("ws://{}/ws", listener.local_addr()?);
    let (stop, stopped) = oneshot::channel::<()>();
    let config = Config {
        // Players answer at once (think time 0): allow it.
        rate_per_sec: 10_000,
        ..Config::default()
    };
    let task = tokio::spawn(chuhe_server::serve(
        listener,
        async move {
            let _ = stopped.await;
        },
        Deps {
            persist,
            config,
            cluster: None,
        },
    ));
    Ok(Server {
        _dir: dir,
        url,
        organizer_token,
        stop: Some(stop),
        task,
    })
}

impl Server {
    fn target(&self, encoding: Encoding) -> Result<Target, Box<dyn std::error::Error>> {
        Ok(Target::chuhe(
            &self.url,
            encoding,
            ChuheSetup {
                organizer_token: self.organizer_token.clone(),
                time_control: "3h".into(),
                setup_concurrency: 2,
            },
        )?)
    }

    async fn stop(mut self) -> TestResult {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        tokio::time::timeout(Duration::from_secs(30), self.task).await???;
        Ok(())
    }
}

fn opts() -> RunOptions {
    RunOptions {
        connect_concurrency: 16,
        max_duration_ms: 20_000,
        server_pid: Some(std::process::id()),
        sample_every_ms: 20,
        ..RunOptions::default()
    }
}

async fn run(s: Scenario, encoding: Encoding) -> Result<Report, Box<dyn std::error::Error>> {
    let server = start_server().await?;
    let moves = MoveSource::generate(3, s.plies(), 11)?;
    let report = scenario::run(&s, &server.target(encoding)?, &moves, &opts()).await?;
    server.stop().await?;
    Ok(report)
}

fn assert_clean(r: &Report) {
    assert!(r.clean(), "{}", r.human());
    assert_eq!(r.counts.seq_gaps, 0, "{}", r.human());
    assert_eq!(r.counts.missing_after_reconnect, 0, "{}", r.human());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_in_both_encodings() -> TestResult {
    for enc in [Encoding::Json, Encoding::Proto] {
        let r = run(
            Scenario::Games {
                games: 3,
                spectators: 1,
                plies: 16,
                think: ThinkTime::default(),
            },
            enc,
        )
        .await?;
        assert_clean(&r);
        eprintln!("{}", r.human());
        let c = &r.counts;
        assert_eq!(c.connected, 9, "{enc:?}");
        assert_eq!(c.moves_acked, 3 * 16, "{}", r.human());
        assert_eq!(c.deliveries, 3 * 16 * 2, "{}", r.human());
        assert_eq!(c.games_completed, 3);
        assert_eq!(r.latency.move_ack.count, 48);
        assert_eq!(r.latency.opponent_delivery.count, 48);
        assert_eq!(r.latency.spectator_delivery.count, 48);
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fanout() -> TestResult {
    let r = run(
        Scenario::Fanout {
            spectators: 20,
            plies: 8,
            think: ThinkTime::Fixed(Duration::from_millis(1)),
        },
        Encoding::Proto,
    )
    .await?;
    assert_clean(&r);
    assert_eq!(r.counts.deliveries, 8 * 21, "{}", r.human());
    assert_eq!(r.latency.fanout_all.count, 8);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_start() -> TestResult {
    let r = run(
        Scenario::RoundStart {
            boards: 4,
            spectators: 2,
            plies: 10,
            think: ThinkTime::default(),
            window_ms: 100,
        },
        Encoding::Proto,
    )
    .await?;
    assert_clean(&r);
    assert_eq!(r.counts.connected, 16);
    assert_eq!(r.counts.moves_acked, 40, "{}", r.human());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_storm_misses_nothing() -> TestResult {
    let r = run(
        Scenario::ReconnectStorm {
            games: 3,
            spectators: 2,
            plies: 30,
            think: ThinkTime::Fixed(Duration::from_millis(5)),
            fraction: 0.5,
            storm_after_ms: 30,
        },
        Encoding::Json,
    )
    .await?;
    // chuhe replays what a reconnecting client missed: nothing may be lost.
    assert_clean(&r);
    assert_eq!(r.counts.reconnects, 6);
    assert_eq!(r.counts.moves_acked, 90, "{}", r.human());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak() -> TestResult {
    let r = run(
        Scenario::Soak {
            games: 2,
            spectators: 1,
            plies: 6,
            think: ThinkTime::default(),
            duration_ms: 60_000,
            max_games: 4,
        },
        Encoding::Proto,
    )
    .await?;
    assert_clean(&r);
    assert_eq!(r.counts.games_started, 4);
    assert_eq!(r.counts.moves_acked, 24, "{}", r.human());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_organizer_token_is_a_setup_error() -> TestResult {
    let server = start_server().await?;
    let target = Target::chuhe(
        &server.url,
        Encoding::Proto,
        ChuheSetup {
            organizer_token: "not-a-token".into(),
            time_control: "3h".into(),
            setup_concurrency: 1,
        },
    )?;
    let moves = MoveSource::generate(1, 4, 1)?;
    let err = scenario::run(
        &Scenario::Games {
            games: 1,
            spectators: 0,
            plies: 4,
            think: ThinkTime::default(),
        },
        &target,
        &moves,
        &opts(),
    )
    .await
    .err()
    .ok_or("a bad token was accepted")?;
    assert!(err.to_string().contains("401"), "{err}");
    server.stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle() -> TestResult {
    let r = run(
        Scenario::Idle {
            games: 4,
            spectators: 1,
            hold_ms: 50,
        },
        Encoding::Proto,
    )
    .await?;
    assert_clean(&r);
    assert_eq!(r.counts.connected, 12);
    assert_eq!(r.counts.moves_sent, 0);
    Ok(())
}

/// A stand-in for one node of several: a TCP forwarder in front of the one server, counting
/// the connections it took (so a run over "nodes" shows where its clients went).
async fn forwarder(
    to: std::net::SocketAddr,
) -> Result<(String, Arc<std::sync::atomic::AtomicUsize>), Box<dyn std::error::Error>> {
    let l = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("ws://{}/ws", l.local_addr()?);
    let taken = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = Arc::clone(&taken);
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = l.accept().await {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tokio::spawn(async move {
                if let Ok(mut out) = tokio::net::TcpStream::connect(to).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut out).await;
                }
            });
        }
    });
    Ok((url, taken))
}

/// `--chuhe-url` given for three "nodes" (forwarders to one server): the games, their players
/// and the spectators of one board spread over all three; the run is as clean as on one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_spread_over_several_nodes() -> TestResult {
    let server = start_server().await?;
    let addr = chuhe_load::target::loopback_addr(&server.url)?;
    let mut urls = Vec::new();
    let mut counts = Vec::new();
    for _ in 0..3 {
        let (u, c) = forwarder(addr).await?;
        urls.push(u);
        counts.push(c);
    }
    // A target per run: its players' names are the run's own.
    let target = || {
        Target::chuhe_nodes(
            &urls,
            Encoding::Proto,
            ChuheSetup {
                organizer_token: server.organizer_token.clone(),
                time_control: "3h".into(),
                setup_concurrency: 3,
            },
        )
    };
    assert_eq!(target()?.addrs().len(), 3);
    let moves = MoveSource::generate(3, 8, 11)?;
    let fan = Scenario::Fanout {
        spectators: 30,
        plies: 8,
        think: ThinkTime::Fixed(Duration::from_millis(1)),
    };
    let r = scenario::run(&fan, &target()?, &moves, &opts()).await?;
    assert_clean(&r);
    assert_eq!(r.counts.deliveries, 8 * 31, "{}", r.human());
    let per: Vec<usize> = counts
        .iter()
        .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    // 30 spectators, 10 a node, plus the two players (nodes 0 and 1) and the organizer API
    // connections (one per setup worker, on the nodes in turn).
    for (i, n) in per.iter().enumerate() {
        assert!(*n >= 10, "node {i} took {n} connections: {per:?}");
    }
    let games = Scenario::Games {
        games: 3,
        spectators: 2,
        plies: 8,
        think: ThinkTime::default(),
    };
    let r = scenario::run(&games, &target()?, &moves, &opts()).await?;
    assert_clean(&r);
    assert_eq!(r.counts.moves_acked, 3 * 8, "{}", r.human());
    assert_eq!(r.counts.games_completed, 3);
    server.stop().await?;
    Ok(())
}
