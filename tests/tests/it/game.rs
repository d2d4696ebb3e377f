//! Games played over real websockets: checkmate and 困毙 in both encodings,
//! idempotent resends, reconnect replay, the spectator's delayed view.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use anyhow::Result;
use chuhe_e2e::*;
use chuhe_proto::Encoding;
use chuhe_proto::v1::{self as w, client_message, game_event, server_message};
use chuhe_server::Config;

/// Mate in two: 1. b1b8 (only reply e9f9) 2. a0a9#.
const MATE_FEN: &str = "4k4/9/9/9/9/9/9/9/1R7/R2K5 w - - 0 1";
/// 1. f7f8 leaves Black without a legal move, not in check: 困毙.
const STALEMATE_FEN: &str = "4k4/9/5P3/9/9/9/9/9/9/3K5 w - - 0 1";

async fn setup(backend: &str) -> Result<(TestDb, Server, Cast)> {
    start_seeded(backend, Config::default()).await
}

async fn checkmate(backend: &str, enc: Encoding) -> Result<()> {
    let (db, server, cast) = setup(backend).await?;
    let game = create_game(server.addr, &cast, "10m+5s", MATE_FEN, "").await?;
    let mut red = Client::connect(server.addr, Some(&cast.red), enc).await?;
    let mut black = Client::connect(server.addr, Some(&cast.black), enc).await?;
    let mut watcher = Client::connect(server.addr, None, enc).await?;
    assert_eq!(red.welcome.role, w::Role::Player as i32);
    assert_eq!(watcher.welcome.role, w::Role::Spectator as i32);
    red.subscribe(&game, 0).await?;
    black.subscribe(&game, 0).await?;
    watcher.subscribe(&game, 0).await?;
    let snap = watcher.expect(snapshot).await?;
    assert_eq!(snap.fen, MATE_FEN);
    assert_eq!(snap.seq, 1);

    let ack = red.play(&game, 1, "b1b8").await?;
    assert_eq!(ack.seq, 2);
    assert_eq!(black.event(moved).await?, "b1b8");
    black.play(&game, 2, "e9f9").await?;
    red.play(&game, 3, "a0a9").await?;
    for c in [&mut red, &mut black, &mut watcher] {
        let (result, reason) = c.event(ended).await?;
        assert_eq!(result, w::Result::RedWins);
        assert_eq!(reason, "checkmate");
    }
    // The spectator saw every move in order, with notation.
    let moves: Vec<w::MoveRecord> = watcher
        .seen
        .iter()
        .filter_map(|m| match &m.kind {
            Some(server_message::Kind::Event(e)) => match &e.kind {
                Some(game_event::Kind::Move(mv)) => mv.r#move.clone(),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let iccs: Vec<&str> = moves.iter().map(|m| m.iccs.as_str()).collect();
    assert_eq!(iccs, ["b1b8", "e9f9", "a0a9"]);
    assert_eq!(moves[0].chinese, "车八进七");
    assert!(moves[2].check);
    // Commands on a finished game are refused with a code.
    let r = black.send_move(&game, 4, "f9e9").await?;
    assert_eq!(black.error_code(r).await?, "game_finished");
    // Records.
    let (status, pgn) = http(
        server.addr,
        "GET",
        &format!("/api/v1/games/{game}/pgn"),
        None,
        None,
    )
    .await?;
    assert_eq!(status, 200);
    assert!(pgn.contains("[Result \"1-0\"]"), "{pgn}");
    assert!(pgn.contains("1. 车八进七 将5平6"), "{pgn}");
    let (_, wxf) = http(
        server.addr,
        "GET",
        &format!("/api/v1/games/{game}/pgn?notation=wxf"),
        None,
        None,
    )
    .await?;
    assert!(wxf.contains("1. R8+7"), "{wxf}");
    let (status, json) = http(
        server.addr,
        "GET",
        &format!("/api/v1/games/{game}"),
        None,
        None,
    )
    .await?;
    assert_eq!(status, 200);
    let v: serde_json::Value = serde_json::from_str(&json)?;
    assert_eq!(v["result"], "RESULT_RED_WINS");
    assert_eq!(v["endReason"], "checkmate");
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn full_game_to_checkmate_json() -> Result<()> {
    for b in backends() {
        checkmate(b, Encoding::Json).await?;
    }
    Ok(())
}

#[tokio::test]
async fn full_game_to_checkmate_proto() -> Result<()> {
    for b in backends() {
        checkmate(b, Encoding::Proto).await?;
    }
    Ok(())
}

#[tokio::test]
async fn stalemate_loses() -> Result<()> {
    for b in backends() {
        let (db, server, cast) = setup(b).await?;
        let game = create_game(server.addr, &cast, "5m", STALEMATE_FEN, "").await?;
        let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
        red.subscribe(&game, 0).await?;
        red.play(&game, 1, "f7f8").await?;
        let (result, reason) = red.event(ended).await?;
        assert_eq!((result, reason.as_str()), (w::Result::RedWins, "stalemate"));
        server.stop().await?;
        db.drop_db().await;
    }
    Ok(())
}

#[tokio::test]
async fn resent_move_is_idempotent_and_stale_ply_refused() -> Result<()> {
    for b in backends() {
        let (db, server, cast) = setup(b).await?;
        let game = create_game(server.addr, &cast, "10m", "", "").await?;
        let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Proto).await?;
        let mut black = Client::connect(server.addr, Some(&cast.black), Encoding::Json).await?;
        black.subscribe(&game, 0).await?;
        let first = red.play(&game, 1, "h2e2").await?;
        // Resent (e.g. after a lost ack): acknowledged again with the same seq, not replayed.
        let again = red.play(&game, 1, "h2e2").await?;
        assert_eq!(first.seq, again.seq);
        // Also in another notation of the same move.
        let again = red.play(&game, 1, "炮二平五").await?;
        assert_eq!(first.seq, again.seq);
        // A different move with an old ply is stale.
        let r = red.send_move(&game, 1, "b2e2").await?;
        assert_eq!(red.error_code(r).await?, "stale_ply");
        black.play(&game, 2, "h9g7").await?;
        let r = red.send_move(&game, 5, "b0c2").await?;
        assert_eq!(red.error_code(r).await?, "stale_ply");
        // The game has exactly two moves.
        let (_, json) = http(
            server.addr,
            "GET",
            &format!("/api/v1/games/{game}"),
            None,
            None,
        )
        .await?;
        let v: serde_json::Value = serde_json::from_str(&json)?;
        assert_eq!(v["moves"].as_array().map(|a| a.len()), Some(2), "{json}");
        server.stop().await?;
        db.drop_db().await;
    }
    Ok(())
}

#[tokio::test]
async fn reconnect_replays_missed_events() -> Result<()> {
    for b in backends() {
        let (db, server, cast) = setup(b).await?;
        let game = create_game(server.addr, &cast, "10m", "", "").await?;
        let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
        let mut black = Client::connect(server.addr, Some(&cast.black), Encoding::Json).await?;
        red.subscribe(&game, 0).await?;
        red.play(&game, 1, "h2e2").await?;
        let seen = red.event(|e| moved(e).map(|_| e.seq)).await?;
        red.close().await;
        // While Red is away, Black moves and offers a draw.
        let r = black
            .send(client_message::Kind::Move(w::MakeMove {
                game_id: game.clone(),
                ply: 2,
                r#move: "h9g7".into(),
                offer_draw: true,
                think_ms: 0,
            }))
            .await?;
        black.reply(r).await?;
        let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Proto).await?;
        let reply = red.subscribe(&game, seen).await?;
        assert_eq!(reply.seq, seen + 2);
        let next = red.event(|e| Some(e.clone())).await?;
        assert_eq!(next.seq, seen + 1);
        assert_eq!(moved(&next).as_deref(), Some("h9g7"));
        let next = red.event(|e| Some(e.clone())).await?;
        assert_eq!(next.seq, seen + 2);
        assert!(matches!(next.kind, Some(game_event::Kind::DrawOffered(_))));
        // No snapshot was needed.
        assert!(red.seen.iter().all(|m| snapshot(m).is_none()));
        server.stop().await?;
        db.drop_db().await;
    }
    Ok(())
}
