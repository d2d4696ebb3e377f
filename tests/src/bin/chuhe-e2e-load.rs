//! A small load driver for the first benchmark (the load-generator issue
//! builds the full one): G concurrent games, each with two player
//! connections, moves as fast as acknowledgements come back.
//!
//! `chuhe-e2e-load --db sqlite|postgres [--games 1000] [--plies 40]`
//! starts the server as a child process on a fresh database, seeds players,
//! creates the games through the organiser API, plays, and prints moves/s,
//! p50/p99/max acknowledgement latency and the server's RSS.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chuhe_e2e::*;
use chuhe_proto::Encoding;
use chuhe_rules::Position;
use chuhe_rules::rulings::{Game, RulesConfig};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A random legal game of `plies` plies that does not end early.
fn random_game(seed: u64, plies: usize) -> Vec<String> {
    let mut rng = Rng(seed | 1);
    'again: loop {
        let mut g = Game::new(Position::new(), RulesConfig::default());
        let mut out = Vec::with_capacity(plies);
        for _ in 0..plies {
            let moves: Vec<_> = g.position().legal_moves().iter().copied().collect();
            if moves.is_empty() {
                continue 'again;
            }
            let m = moves[(rng.next() % moves.len() as u64) as usize];
            match g.play(m) {
                Ok(p) if p.end.is_none() && p.warning.is_none() => out.push(m.to_iccs()),
                _ => continue 'again,
            }
        }
        return out;
    }
}

fn rss_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let get = |k: &str| {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let backend = get("--db").unwrap_or_else(|| "sqlite".into());
    let games: usize = get("--games")
        .map(|v| v.parse())
        .transpose()?
        .unwrap_or(1000);
    let plies: usize = get("--plies").map(|v| v.parse()).transpose()?.unwrap_or(40);
    let exe = get("--server").unwrap_or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|p| {
                p.parent()
                    .map(|d| d.join("chuhe-e2e-server").display().to_string())
            })
            .unwrap_or_default()
    });
    if backend == "postgres" && std::env::var("CHUHE_TEST_DATABASE_URL").is_err() {
        bail!("set CHUHE_TEST_DATABASE_URL for --db postgres");
    }
    let db = TestDb::new(&backend).await?;
    let cast = {
        let p = db.persist().await?;
        seed(p.as_ref()).await?
    };
    let server = ChildServer::start(&exe, &db.url)
        .await
        .context("starting the server")?;
    let pid = server.child.id().unwrap_or(0);
    let addr = server.addr;
    eprintln!("server pid {pid} at {addr}; creating {games} games");
    let mut ids = Vec::with_capacity(games);
    for _ in 0..games {
        ids.push(create_game(addr, &cast, "90m+30s", "", "").await?);
    }
    let lines: Vec<Vec<String>> = (0..games)
        .map(|i| random_game(i as u64 * 7919 + 1, plies))
        .collect();
    // Connect every player socket first (2 per game).
    let mut pairs = Vec::with_capacity(games);
    for _ in 0..games {
        let r = Client::connect(addr, Some(&cast.red), Encoding::Proto).await?;
        let b = Client::connect(addr, Some(&cast.black), Encoding::Proto).await?;
        pairs.push((r, b));
    }
    let idle_rss = rss_kib(pid, "VmRSS:");
    eprintln!(
        "{} sockets connected; server RSS {} KiB",
        games * 2,
        idle_rss
    );
    let start = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for ((mut red, mut black), (id, line)) in pairs.into_iter().zip(ids.into_iter().zip(lines)) {
        tasks.spawn(async move {
            let mut lat = Vec::with_capacity(line.len());
            for (i, m) in line.iter().enumerate() {
                let c = if i % 2 == 0 { &mut red } else { &mut black };
                let t = Instant::now();
                c.play(&id, i as u32 + 1, m).await?;
                lat.push(t.elapsed());
                c.seen.clear();
            }
            anyhow::Ok(lat)
        });
    }
    let mut all: Vec<Duration> = Vec::new();
    while let Some(r) = tasks.join_next().await {
        all.extend(r??);
    }
    let elapsed = start.elapsed();
    let peak = rss_kib(pid, "VmHWM:");
    let rss = rss_kib(pid, "VmRSS:");
    all.sort();
    let pct = |p: f64| all[((all.len() as f64 - 1.0) * p) as usize];
    println!(
        "backend={backend} games={games} plies/game={plies} moves={} elapsed={:.2}s moves/s={:.0} ack p50={:.2}ms p99={:.2}ms max={:.2}ms server_rss_idle={}KiB server_rss_end={}KiB server_rss_peak={}KiB",
        all.len(),
        elapsed.as_secs_f64(),
        all.len() as f64 / elapsed.as_secs_f64(),
        pct(0.5).as_secs_f64() * 1e3,
        pct(0.99).as_secs_f64() * 1e3,
        all.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        idle_rss,
        rss,
        peak,
    );
    server.kill9().await?;
    db.drop_db().await;
    Ok(())
}
