//! Issue 21, item 1: the database stopped abruptly (`pg_ctl stop -m immediate`, again and
//! again) while games are played. A commit cut off by an outage may have happened although its
//! connection died; the server must find out before it answers. No acknowledged move may be
//! lost, and no game may be left a ply behind (before, a move committed during an outage was
//! answered `store_unavailable`, and every retry of it failed until a restart).
//!
//! The PostgreSQL is a throwaway one the test starts itself (never the machine's own).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use anyhow::{Result, bail};
use chuhe_e2e::*;
use chuhe_proto::Encoding;
use chuhe_proto::v1::server_message;
use chuhe_server::Config;
use chuhe_store::testing::ThrowawayPg;

const GAMES: usize = 24;
const PLIES: usize = 60;
const OUTAGES: u32 = 30;
/// An outage starts once this many moves are acknowledged after the last restart…
const AFTER: u32 = 8;
/// …and about this many at most between two outages (up to `GAMES - 1` more slip through the
/// gate, so `AFTER + GAMES - 1 < WINDOW`; the games' moves in all are checked to be more than
/// `(OUTAGES + 1) * WINDOW`, so every outage happens while games are in play).
const WINDOW: u32 = 40;

/// A legal game of `PLIES` plies (or fewer if it ends), from a seed.
fn line(seed: u64) -> Vec<String> {
    let mut pos = chuhe_rules::Position::new();
    let mut s = seed | 1;
    let mut out = Vec::new();
    for _ in 0..PLIES {
        let legal: Vec<chuhe_rules::Move> = pos.legal_moves().iter().copied().collect();
        // Keep clear of anything that ends the game (mate, 困毙): the test is about commits.
        let quiet: Vec<chuhe_rules::Move> = legal
            .into_iter()
            .filter(|m| {
                pos.piece_at(m.to()).is_none() && pos.play(*m).is_ok_and(|p| p.outcome().is_none())
            })
            .collect();
        if quiet.is_empty() {
            break;
        }
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let m = quiet[(s >> 11) as usize % quiet.len()];
        out.push(m.to_iccs());
        pos.play_mut(m).unwrap();
    }
    out
}

/// Sends a move until the server answers anything but a passing outage; the answer's code
/// (or "ok" with the seq).
async fn play_through(c: &mut Client, game: &str, ply: u32, mv: &str) -> Result<String> {
    for _ in 0..400 {
        let req = c.send_move(game, ply, mv).await?;
        let answer = c
            .expect(|m| match &m.kind {
                Some(server_message::Kind::Reply(r)) if r.request_id == req => Some(Ok(r.seq)),
                Some(server_message::Kind::Error(e)) if e.request_id == req => {
                    Some(Err(e.code.clone()))
                }
                _ => None,
            })
            .await?;
        match answer {
            Ok(seq) => return Ok(format!("ok {seq}")),
            Err(code) if code == "store_unavailable" || code == "busy" => {
                // The database is down: try again shortly (a retry pace, not a wait for a
                // condition — the answer itself says when it is back).
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(code) => return Ok(code),
        }
    }
    bail!("game {game} ply {ply}: the database never came back")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abrupt_database_stops_lose_no_move_and_leave_no_game_behind() -> Result<()> {
    let Some(pg) = tokio::task::spawn_blocking(|| {
        ThrowawayPg::start_or_skip(
            "outage::abrupt_database_stops_lose_no_move_and_leave_no_game_behind",
        )
    })
    .await??
    else {
        return Ok(());
    };
    let pg = Arc::new(pg);
    let store = chuhe_store::open(&pg.url(), &chuhe_store::StoreOptions::default()).await?;
    let persist: Arc<dyn chuhe_server::Persist> = Arc::new(
        chuhe_server::store_adapter::StoreAdapter::new(Arc::new(store)),
    );
    let cast = seed(persist.as_ref()).await?;
    let server = Server::start(persist.clone(), Config::default()).await?;
    let mut games = Vec::new();
    for _ in 0..GAMES {
        games.push(create_game(server.addr, &cast, "60m", "", "").await?);
    }
    // Outages are set off by progress: once a few moves are acknowledged after a restart, a
    // stop and a start. The players are paced by the outages in turn — at most `WINDOW`
    // acknowledgements between two of them — so all `OUTAGES` happen while games are in
    // play, however fast this machine plays moves or restarts PostgreSQL (CI once waited
    // forever for acknowledgements after every game had ended).
    let acked = Arc::new((AtomicU32::new(0), tokio::sync::Notify::new()));
    let progress: Arc<Vec<AtomicU32>> = Arc::new((0..GAMES).map(|_| AtomicU32::new(0)).collect());
    let (outage_tx, outage_rx) = tokio::sync::watch::channel(0u32);
    let outages = {
        let (pg, acked) = (pg.clone(), acked.clone());
        tokio::spawn(async move {
            let mut done = 0;
            let mut next = AFTER;
            while done < OUTAGES {
                if acked.0.load(Ordering::SeqCst) < next {
                    acked.1.notified().await;
                    continue;
                }
                let pg = pg.clone();
                tokio::task::spawn_blocking(move || {
                    pg.kill()?;
                    pg.start()
                })
                .await??;
                done += 1;
                outage_tx.send_replace(done);
                next = acked.0.load(Ordering::SeqCst) + AFTER;
            }
            Ok::<_, anyhow::Error>(done)
        })
    };
    let lines: Vec<Vec<String>> = (0..GAMES).map(|i| line(0x9e37_79b9 + i as u64)).collect();
    let total: usize = lines.iter().map(Vec::len).sum();
    assert!(
        total as u32 > (OUTAGES + 1) * WINDOW && AFTER + GAMES as u32 - 1 < WINDOW,
        "the pacing needs more moves ({total}) than the outages' windows"
    );
    let mut players = Vec::new();
    for (i, game) in games.iter().enumerate() {
        let (game, cast, addr, acked) = (game.clone(), cast.clone(), server.addr, acked.clone());
        let (progress, mut outage_rx) = (progress.clone(), outage_rx.clone());
        let moves = lines[i].clone();
        players.push(tokio::spawn(async move {
            let mut red = Client::connect(addr, Some(&cast.red), Encoding::Proto).await?;
            let mut black = Client::connect(addr, Some(&cast.black), Encoding::Proto).await?;
            red.subscribe(&game, 0).await?;
            black.subscribe(&game, 0).await?;
            let mut answers = Vec::new();
            for (k, mv) in moves.iter().enumerate() {
                // Wait for the next outage when this window's moves are all played.
                loop {
                    let done = *outage_rx.borrow_and_update();
                    if done >= OUTAGES || acked.0.load(Ordering::SeqCst) < (done + 1) * WINDOW {
                        break;
                    }
                    outage_rx.changed().await?;
                }
                let mover = if k % 2 == 0 { &mut red } else { &mut black };
                let a = play_through(mover, &game, k as u32 + 1, mv).await?;
                if !a.starts_with("ok") {
                    bail!(
                        "game {game} ply {}: {a} (the game fell behind its log)",
                        k + 1
                    );
                }
                answers.push(a);
                progress[i].store(k as u32 + 1, Ordering::SeqCst);
                acked.0.fetch_add(1, Ordering::SeqCst);
                acked.1.notify_one();
            }
            Ok::<_, anyhow::Error>((game, moves, answers))
        }));
    }
    // Bounded: a game that stops answering fails the test with where every game stood,
    // instead of hanging CI.
    let finished = tokio::time::timeout(Duration::from_secs(300), async {
        let mut results = Vec::new();
        for p in players {
            results.push(p.await??);
        }
        let stopped = outages.await??;
        Ok::<_, anyhow::Error>((results, stopped))
    })
    .await;
    let Ok(finished) = finished else {
        let stood: Vec<u32> = progress.iter().map(|p| p.load(Ordering::SeqCst)).collect();
        bail!(
            "not done after 300 s; plies acknowledged per game: {stood:?}, outages: {}",
            *outage_rx.borrow()
        );
    };
    let (results, stopped) = finished?;
    assert_eq!(stopped, OUTAGES);
    // Every acknowledged move is in the log, in order, each once; and the server's record
    // agrees with the log.
    for (game, moves, answers) in results {
        let id: i64 = game.parse()?;
        let log = persist.events(id).await?;
        assert_eq!(
            log.len(),
            1 + moves.len(),
            "game {game}: created + every move once"
        );
        for (k, a) in answers.iter().enumerate() {
            assert_eq!(*a, format!("ok {}", k + 2), "game {game} ply {}", k + 1);
        }
        let (status, body) = http(
            server.addr,
            "GET",
            &format!("/api/v1/games/{game}"),
            Some(&cast.arbiter),
            None,
        )
        .await?;
        assert_eq!(status, 200);
        let v: serde_json::Value = serde_json::from_str(&body)?;
        let played: Vec<String> = v["moves"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|m| m["iccs"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(played, moves, "game {game}");
    }
    server.stop().await?;
    Ok(())
}
