//! Append throughput with group commit: G concurrent games, each appending one event (a move,
//! ~60 bytes of payload) at a time and awaiting its acknowledgement before the next — what the
//! game actors do with no think time.
//!
//! `cargo bench -p chuhe-store --bench append` runs SQLite (synchronous FULL and NORMAL) in a temp
//! dir, and PostgreSQL when `CHUHE_TEST_DATABASE_URL` is set (in a fresh `chuhe_bench_<random>`
//! database, dropped at the end). `CHUHE_BENCH_GAMES` / `CHUHE_BENCH_MOVES` change the size.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chuhe_store::{
    AnyStore, GameId, NewEvent, NewGame, NewPrincipal, Role, SqliteSync, Store, StoreError,
    StoreOptions,
};
use sqlx::Connection;

type BenchResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

fn env_num(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn setup(s: &AnyStore, games: usize) -> Result<Vec<GameId>, StoreError> {
    let mut ids = Vec::with_capacity(games);
    for g in 0..games {
        let mut p = Vec::new();
        for side in ["r", "b"] {
            p.push(
                s.create_principal(NewPrincipal {
                    role: Role::Player,
                    name: format!("{side}{g}"),
                    rating: Some(1500),
                    created_at_ms: 0,
                })
                .await?
                .id,
            );
        }
        let game = s
            .create_game(NewGame {
                red: p[0],
                black: p[1],
                time_control: "5m+3s".into(),
                ruleset: "cxa-2011".into(),
                start_fen: "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w".into(),
                broadcast_delay: Default::default(),
                event: None,
                round: None,
                board: None,
                scheduled_start_ms: None,
                created_at_ms: 0,
                start_mode: "now".into(),
                lateness_limit_ms: 0,
                key: None,
            })
            .await?;
        ids.push(game.id);
    }
    Ok(ids)
}

async fn run(
    label: &str,
    url: &str,
    options: StoreOptions,
    games: usize,
    moves: u64,
) -> BenchResult {
    let s = Arc::new(chuhe_store::open(url, &options).await?);
    let ids = setup(&s, games).await?;
    let start = Instant::now();
    let mut tasks = Vec::with_capacity(games);
    for g in ids {
        let s = Arc::clone(&s);
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::with_capacity(moves as usize);
            for seq in 1..=moves {
                let ev = NewEvent::new(seq, "move", vec![0x5a; 60], seq as i64);
                let t = Instant::now();
                s.append(g, vec![ev]).await?;
                lat.push(t.elapsed());
            }
            Ok::<_, StoreError>(lat)
        }));
    }
    let mut lat: Vec<Duration> = Vec::with_capacity(games * moves as usize);
    for t in tasks {
        lat.extend(t.await??);
    }
    let elapsed = start.elapsed();
    lat.sort_unstable();
    let pct = |p: f64| {
        let i = ((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1));
        lat.get(i).copied().unwrap_or_default()
    };
    let total = lat.len() as f64;
    println!(
        "{label:<28} games {games:>5} appends {total:>7} in {:>6.2}s = {:>8.0} appends/s  \
         p50 {:>7.2}ms  p99 {:>7.2}ms  max {:>7.2}ms",
        elapsed.as_secs_f64(),
        total / elapsed.as_secs_f64(),
        pct(0.50).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        lat.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
    // Sanity: everything acknowledged is there.
    let live = s.unfinished_games().await?;
    let stored: u64 = live.iter().map(|r| r.game.last_seq).sum();
    if stored != games as u64 * moves {
        return Err(format!("stored {stored} events, expected {}", games as u64 * moves).into());
    }
    s.close().await;
    Ok(())
}

fn main() -> BenchResult {
    let games = env_num("CHUHE_BENCH_GAMES", 1000);
    let moves = env_num("CHUHE_BENCH_MOVES", 50) as u64;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async {
        for (label, sync) in [
            ("sqlite synchronous=FULL", SqliteSync::Full),
            ("sqlite synchronous=NORMAL", SqliteSync::Normal),
        ] {
            let dir = tempfile::tempdir()?;
            let url = format!("sqlite://{}", dir.path().join("bench.db").display());
            let options = StoreOptions {
                sqlite_sync: sync,
                ..StoreOptions::default()
            };
            run(label, &url, options, games, moves).await?;
        }
        let Ok(base) = std::env::var("CHUHE_TEST_DATABASE_URL") else {
            eprintln!("skipped: postgres bench (CHUHE_TEST_DATABASE_URL is not set)");
            return Ok(());
        };
        let rnd = chuhe_store::generate_token()?.hash.0;
        let db = format!(
            "chuhe_bench_{}",
            rnd[..6]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
        let mut admin = sqlx::PgConnection::connect(&base).await?;
        sqlx::query(&format!("CREATE DATABASE {db}"))
            .execute(&mut admin)
            .await?;
        let url = match base.rfind('/') {
            Some(i) if i > base.find("://").map_or(0, |j| j + 2) => format!("{}/{db}", &base[..i]),
            _ => format!("{base}/{db}"),
        };
        let outcome: BenchResult = async {
            for writers in [1usize, 2, 4] {
                let options = StoreOptions {
                    pg_writers: writers,
                    ..StoreOptions::default()
                };
                // Fresh tables per configuration: drop what the previous one made.
                if writers > 1 {
                    let mut c = sqlx::PgConnection::connect(&url).await?;
                    sqlx::query("DROP SCHEMA public CASCADE")
                        .execute(&mut c)
                        .await?;
                    sqlx::query("CREATE SCHEMA public").execute(&mut c).await?;
                    c.close().await?;
                }
                run(
                    &format!("postgres writers={writers}"),
                    &url,
                    options,
                    games,
                    moves,
                )
                .await?;
            }
            Ok(())
        }
        .await;
        sqlx::query(&format!("DROP DATABASE {db} WITH (FORCE)"))
            .execute(&mut admin)
            .await?;
        outcome
    })
}
