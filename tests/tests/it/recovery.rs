//! Durability: `kill -9` of the server (a child process) mid-game; after a
//! restart the game resumes with every acknowledged move and the clocks as
//! they were at the last committed event (no time lost to the outage).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use anyhow::Result;
use chuhe_e2e::*;
use chuhe_proto::Encoding;
use chuhe_proto::v1::{self as w, game_event};

const EXE: &str = env!("CARGO_BIN_EXE_chuhe-e2e-server");

fn clock_of(e: &w::GameEvent) -> Option<w::ClockState> {
    match &e.kind {
        Some(game_event::Kind::Move(m)) => m.clock,
        _ => None,
    }
}

#[tokio::test]
async fn kill_9_mid_game_then_resume() -> Result<()> {
    for b in backends() {
        let (db, server, cast) = start_child_seeded(b, EXE).await?;
        let game = create_game(server.addr, &cast, "10m+5s", "", "").await?;
        let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
        let mut black = Client::connect(server.addr, Some(&cast.black), Encoding::Proto).await?;
        red.subscribe(&game, 0).await?;
        let moves = ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0"];
        let mut last_seq = 0;
        for (i, m) in moves.iter().enumerate() {
            let c = if i % 2 == 0 { &mut red } else { &mut black };
            last_seq = c.play(&game, i as u32 + 1, m).await?.seq;
        }
        // Red sees its last move's event: the clocks as committed.
        let clock = red
            .event(|e| (e.seq == last_seq).then(|| clock_of(e)).flatten())
            .await?;
        server.kill9().await?;

        // The restarted server runs on the single-threaded scheduler (`chuhe serve` on one
        // CPU): recovery, subscriptions and moves must work on it too.
        let server = ChildServer::start_on(EXE, &db.url, "single").await?;
        // Every acknowledged move is there.
        let mut fan = Client::connect(server.addr, None, Encoding::Json).await?;
        fan.subscribe(&game, 0).await?;
        let snap = fan.expect(snapshot).await?;
        let iccs: Vec<&str> = snap.moves.iter().map(|m| m.iccs.as_str()).collect();
        assert_eq!(iccs, moves);
        assert!(!snap.finished);
        // Red reconnects with the last seq it saw: it gets the restart event,
        // whose clocks equal the committed ones: the outage cost nobody time.
        let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
        red.subscribe(&game, last_seq).await?;
        let restarted = red
            .event(|e| match &e.kind {
                Some(game_event::Kind::ServerRestarted(r)) => Some((e.seq, *r)),
                _ => None,
            })
            .await?;
        assert_eq!(restarted.0, last_seq + 1);
        let rc = restarted.1.clock.unwrap();
        assert_eq!(
            rc.red.unwrap().remaining_ms,
            clock.red.unwrap().remaining_ms
        );
        assert_eq!(
            rc.black.unwrap().remaining_ms,
            clock.black.unwrap().remaining_ms
        );
        assert_eq!(rc.running, w::Side::Black as i32);
        // The game goes on.
        let mut black = Client::connect(server.addr, Some(&cast.black), Encoding::Proto).await?;
        let ack = black.play(&game, 6, "a9a8").await?;
        assert_eq!(ack.seq, last_seq + 2);
        server.kill9().await?;
        db.drop_db().await;
    }
    Ok(())
}
