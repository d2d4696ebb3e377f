//! Bad input gets typed errors with stable codes and changes nothing; floods
//! are closed with 4029; a spectator behind a broadcast delay never sees a
//! move early; health, metrics and graceful shutdown.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use anyhow::Result;
use chuhe_e2e::*;
use chuhe_proto::v1::{self as w, client_message, game_event, server_message};
use chuhe_proto::{Encoding, Message as _};
use chuhe_server::Config;
use tokio_tungstenite::tungstenite::Message;

async fn setup(backend: &str, config: Config) -> Result<(TestDb, Server, Cast)> {
    start_seeded(backend, config).await
}

/// The code of the next Error (any request id).
async fn next_error(c: &mut Client) -> Result<String> {
    next_error_code(c).await
}

#[tokio::test]
async fn every_bad_input_gets_its_code() -> Result<()> {
    for b in backends() {
        let (db, server, cast) = setup(b, Config::default()).await?;
        let game = create_game(server.addr, &cast, "10m", "", "").await?;
        let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
        let mut black = Client::connect(server.addr, Some(&cast.black), Encoding::Proto).await?;
        let mut fan = Client::connect(server.addr, None, Encoding::Json).await?;

        red.send_raw(Message::Text("{not json".into())).await?;
        assert_eq!(next_error(&mut red).await?, "malformed_frame");
        red.send_raw(Message::Text(r#"{"requestId":5,"frobnicate":{}}"#.into()))
            .await?;
        assert_eq!(red.error_code(5).await?, "unknown_message");
        red.send_raw(Message::Text(
            format!(r#"{{"ping":{{}},"pad":"{}"}}"#, "x".repeat(5000)).into(),
        ))
        .await?;
        assert_eq!(next_error(&mut red).await?, "frame_too_large");
        red.send_raw(Message::Binary(vec![1, 2, 3].into())).await?;
        assert_eq!(next_error(&mut red).await?, "wrong_frame_type");
        black
            .send_raw(Message::Binary(vec![0xff, 0xff, 0xff].into()))
            .await?;
        assert_eq!(next_error(&mut black).await?, "malformed_frame");
        let r = black.send_move(&game, 1, "h9g7").await?;
        assert_eq!(black.error_code(r).await?, "not_your_turn");
        let r = red.send_move(&game, 1, "a0a5").await?;
        assert_eq!(red.error_code(r).await?, "illegal_move");
        let r = red.send_move(&game, 1, "nonsense").await?;
        assert_eq!(red.error_code(r).await?, "illegal_move");
        let r = fan.send_move(&game, 1, "h2e2").await?;
        assert_eq!(fan.error_code(r).await?, "not_a_player");
        let r = red.send_move("999999", 1, "h2e2").await?;
        assert_eq!(red.error_code(r).await?, "game_not_found");
        let r = red
            .send(client_message::Kind::Arbiter(w::ArbiterCommand {
                game_id: game.clone(),
                reason: "I want more time".into(),
                action: Some(w::arbiter_command::Action::AddTime(w::AddTime {
                    side: w::Side::Red as i32,
                    delta_ms: 60_000,
                })),
            }))
            .await?;
        assert_eq!(red.error_code(r).await?, "permission_denied");
        let r = red
            .send(client_message::Kind::AnswerDraw(w::AnswerDraw {
                game_id: game.clone(),
                accept: true,
            }))
            .await?;
        assert_eq!(red.error_code(r).await?, "no_draw_offer");
        // Nothing changed, and every connection still works.
        for c in [&mut red, &mut fan] {
            c.subscribe(&game, 0).await?;
            let snap = c.expect(snapshot).await?;
            assert!(snap.moves.is_empty());
            assert_eq!(snap.seq, 1);
        }
        red.play(&game, 1, "h2e2").await?;
        // Resign, then a command on the finished game.
        let r = black
            .send(client_message::Kind::Resign(w::Resign {
                game_id: game.clone(),
            }))
            .await?;
        black.reply(r).await?;
        let r = black.send_move(&game, 2, "h9g7").await?;
        assert_eq!(black.error_code(r).await?, "game_finished");
        // Bad tokens and subprotocols are refused at the upgrade.
        assert!(
            Client::connect(server.addr, Some("nope"), Encoding::Json)
                .await
                .is_err()
        );
        let (status, body) = http(server.addr, "GET", "/ws", None, None).await?;
        assert!(status >= 400, "{status} {body}");
        server.stop().await?;
        db.drop_db().await;
    }
    Ok(())
}

#[tokio::test]
async fn floods_are_rate_limited_then_closed_with_4029() -> Result<()> {
    let config = Config {
        rate_per_sec: 5,
        flood_limit: 5,
        ..Config::default()
    };
    let (db, server, _cast) = setup("sqlite", config).await?;
    let mut c = Client::connect(server.addr, None, Encoding::Proto).await?;
    let ping = w::ClientMessage {
        request_id: 1,
        kind: Some(client_message::Kind::Ping(w::Ping { client_time_ms: 1 })),
    };
    for _ in 0..40 {
        if c.send_raw(Message::Binary(ping.encode_to_vec().into()))
            .await
            .is_err()
        {
            break;
        }
    }
    let code = c.wait_closed().await?;
    assert_eq!(code, 4029);
    assert!(c.seen.iter().any(
        |m| matches!(&m.kind, Some(server_message::Kind::Error(e)) if e.code == "rate_limited")
    ));
    assert!(c.seen.iter().any(
        |m| matches!(&m.kind, Some(server_message::Kind::Goodbye(g)) if g.code == "rate_limited")
    ));
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn spectator_behind_a_ply_delay_never_sees_a_move_early() -> Result<()> {
    for b in backends() {
        let (db, server, cast) = setup(b, Config::default()).await?;
        let game = create_game(server.addr, &cast, "10m", "", r#","delay":{"plies":2}"#).await?;
        let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
        let mut black = Client::connect(server.addr, Some(&cast.black), Encoding::Json).await?;
        let mut fan = Client::connect(server.addr, None, Encoding::Proto).await?;
        fan.subscribe(&game, 0).await?;
        // `sent` = the highest ply the players have sent; the spectator may see
        // ply k only once ply k + 2 was sent.
        let sent = Arc::new(AtomicU32::new(0));
        let watcher = {
            let sent = sent.clone();
            tokio::spawn(async move {
                let mut seen = Vec::new();
                loop {
                    let e = fan.event(|e| Some(e.clone())).await?;
                    if let Some(game_event::Kind::Move(m)) = &e.kind {
                        let ply = m.r#move.as_ref().map(|m| m.ply).unwrap_or(0);
                        assert!(
                            sent.load(Ordering::SeqCst) >= ply + 2,
                            "ply {ply} seen early"
                        );
                        seen.push(e);
                    } else {
                        let end = ended(&e).is_some();
                        seen.push(e);
                        if end {
                            return anyhow::Ok((fan, seen));
                        }
                    }
                }
            })
        };
        let moves = ["h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7"];
        for (i, m) in moves.iter().enumerate() {
            let ply = i as u32 + 1;
            sent.store(ply, Ordering::SeqCst);
            let c = if ply % 2 == 1 { &mut red } else { &mut black };
            c.play(&game, ply, m).await?;
        }
        // A late spectator's snapshot is delayed too.
        let mut late = Client::connect(server.addr, None, Encoding::Json).await?;
        late.subscribe(&game, 0).await?;
        let snap = late.expect(snapshot).await?;
        assert!(snap.delayed);
        assert_eq!(snap.moves.len(), 4);
        // Players see live.
        red.subscribe(&game, 0).await?;
        assert_eq!(red.expect(snapshot).await?.moves.len(), 6);
        // At the end the ply delay releases everything.
        sent.store(u32::MAX / 2, Ordering::SeqCst);
        let r = red
            .send(client_message::Kind::Resign(w::Resign {
                game_id: game.clone(),
            }))
            .await?;
        red.reply(r).await?;
        let (_fan, seen) = watcher.await??;
        let plies: Vec<u32> = seen
            .iter()
            .filter_map(|e| match &e.kind {
                Some(game_event::Kind::Move(m)) => m.r#move.as_ref().map(|m| m.ply),
                _ => None,
            })
            .collect();
        assert_eq!(plies, [1, 2, 3, 4, 5, 6]);
        server.stop().await?;
        db.drop_db().await;
    }
    Ok(())
}

#[tokio::test]
async fn health_metrics_and_graceful_shutdown() -> Result<()> {
    let (db, server, cast) = setup("sqlite", Config::default()).await?;
    let (status, body) = http(server.addr, "GET", "/healthz", None, None).await?;
    assert_eq!((status, body.trim()), (200, "ok"));
    let game = create_game(server.addr, &cast, "10m", "", "").await?;
    let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
    red.play(&game, 1, "h2e2").await?;
    let (status, text) = http(server.addr, "GET", "/metrics", Some(&cast.organizer), None).await?;
    assert_eq!(status, 200);
    assert!(text.contains("chuhe_moves_total 1"), "{text}");
    assert!(
        text.contains("chuhe_connections{role=\"player\"} 1"),
        "{text}"
    );
    assert!(text.contains("chuhe_live_games 1"), "{text}");
    assert!(text.contains("chuhe_store_commit_seconds_count"), "{text}");
    // The store's group-commit totals: the game's creation and the move, two events.
    assert!(text.contains("chuhe_store_events_total 2\n"), "{text}");
    assert!(text.contains("chuhe_store_failed_total 0\n"), "{text}");
    // Shutdown: the client gets a Goodbye and close 1001.
    let addr = server.addr;
    let stopper = tokio::spawn(server.stop());
    let code = red.wait_closed().await?;
    assert_eq!(code, 1001);
    assert!(red.seen.iter().any(
        |m| matches!(&m.kind, Some(server_message::Kind::Goodbye(g)) if g.code == "shutdown")
    ));
    stopper.await??;
    // The game is recoverable: a new server on the same database has it.
    let p = db.persist().await?;
    let server = Server::start(p, Config::default()).await?;
    assert_ne!(server.addr, addr);
    let mut fan = Client::connect(server.addr, None, Encoding::Json).await?;
    fan.subscribe(&game, 0).await?;
    assert_eq!(fan.expect(snapshot).await?.moves.len(), 1);
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn organizer_api_players_tokens_and_permissions() -> Result<()> {
    let (db, server, cast) = setup("sqlite", Config::default()).await?;
    let addr = server.addr;
    // Only organizers may use the API.
    let (status, body) = http(
        addr,
        "POST",
        "/api/v1/players",
        Some(&cast.red),
        Some(r#"{"displayName":"Eve"}"#),
    )
    .await?;
    assert_eq!(status, 403, "{body}");
    let (status, _) = http(
        addr,
        "POST",
        "/api/v1/players",
        None,
        Some(r#"{"displayName":"Eve"}"#),
    )
    .await?;
    assert_eq!(status, 403);
    let (status, body) = http(
        addr,
        "POST",
        "/api/v1/players",
        Some(&cast.organizer),
        Some("{oops"),
    )
    .await?;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("malformed_body"));
    let (status, body) = http(
        addr,
        "POST",
        "/api/v1/players",
        Some(&cast.organizer),
        Some(r#"{"displayName":"Eve"}"#),
    )
    .await?;
    assert_eq!(status, 201, "{body}");
    let player: serde_json::Value = serde_json::from_str(&body)?;
    assert_eq!(player["role"], "ROLE_PLAYER");
    let id = player["id"].as_str().unwrap().to_string();
    let (status, body) = http(
        addr,
        "POST",
        "/api/v1/tokens",
        Some(&cast.organizer),
        Some(&format!(r#"{{"playerId":"{id}","label":"laptop"}}"#)),
    )
    .await?;
    assert_eq!(status, 201, "{body}");
    let tok: serde_json::Value = serde_json::from_str(&body)?;
    let token = tok["token"].as_str().unwrap().to_string();
    let c = Client::connect(addr, Some(&token), Encoding::Json).await?;
    assert_eq!(c.welcome.principal_id, id);
    assert_eq!(c.welcome.display_name, "Eve");
    // Revoked tokens no longer open connections.
    let body = format!(r#"{{"tokenId":"{}"}}"#, tok["tokenId"].as_str().unwrap());
    let (status, _) = http(
        addr,
        "POST",
        "/api/v1/tokens/revoke",
        Some(&cast.organizer),
        Some(&body),
    )
    .await?;
    assert_eq!(status, 204);
    assert!(
        Client::connect(addr, Some(&token), Encoding::Json)
            .await
            .is_err()
    );
    // Game creation validates its input.
    for (bad, why) in [
        (
            format!(r#"{{"redId":"{id}","blackId":"{id}"}}"#),
            "same player",
        ),
        (
            format!(
                r#"{{"redId":"{id}","blackId":"{}","timeControl":"soon"}}"#,
                cast.black_id
            ),
            "time control",
        ),
        (
            format!(
                r#"{{"redId":"{id}","blackId":"{}","ruleset":"fide"}}"#,
                cast.black_id
            ),
            "ruleset",
        ),
        (
            format!(
                r#"{{"redId":"{id}","blackId":"{}","initialFen":"9/9 w"}}"#,
                cast.black_id
            ),
            "fen",
        ),
    ] {
        let (status, body) = http(
            addr,
            "POST",
            "/api/v1/games",
            Some(&cast.organizer),
            Some(&bad),
        )
        .await?;
        assert_eq!(status, 400, "{why}: {body}");
        assert!(body.contains("invalid_argument"), "{why}: {body}");
    }
    let (status, body) = http(
        addr,
        "POST",
        "/api/v1/games",
        Some(&cast.organizer),
        Some(r#"{"redId":"999","blackId":"998"}"#),
    )
    .await?;
    assert_eq!(status, 404, "{body}");
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn a_spectator_too_slow_to_read_is_dropped_with_4008() -> Result<()> {
    let config = Config {
        write_queue: 8,
        rate_per_sec: 100_000,
        flood_limit: 100_000,
        ..Config::default()
    };
    let (db, server, cast) = setup("sqlite", config).await?;
    let game = create_game(server.addr, &cast, "10m", "", "").await?;
    let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
    let mut black = Client::connect(server.addr, Some(&cast.black), Encoding::Json).await?;
    let line = [
        "h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7", "b0c2", "a9b9", "a0b0", "b7b3",
    ];
    for (i, m) in line.iter().enumerate() {
        let c = if i % 2 == 0 { &mut red } else { &mut black };
        c.play(&game, i as u32 + 1, m).await?;
    }
    // The slow spectator asks for far more snapshots than the socket and its
    // queue can hold, without reading. Its receive window is small: frames for a connection
    // that waits go straight to its socket, so only a full socket makes them queue.
    let mut slow = Client::connect_small_window(server.addr, None, Encoding::Json, 4096).await?;
    for _ in 0..3000 {
        let sent = slow
            .send(client_message::Kind::Subscribe(w::Subscribe {
                game_id: game.clone(),
                last_seq: 0,
            }))
            .await;
        if sent.is_err() {
            break; // already closed by the server
        }
    }
    // Everyone else is unaffected.
    red.play(&game, 11, "c3c4").await?;
    // When it finally reads, it finds it was dropped: Goodbye "too_slow", close 4008.
    let code = slow.wait_closed().await?;
    assert_eq!(code, 4008);
    assert!(slow.seen.iter().any(
        |m| matches!(&m.kind, Some(server_message::Kind::Goodbye(g)) if g.code == "too_slow")
    ));
    let (_, text) = http(server.addr, "GET", "/metrics", Some(&cast.organizer), None).await?;
    assert!(
        text.contains("chuhe_dropped_slow_connections_total 1"),
        "{text}"
    );
    black.play(&game, 12, "c6c5").await?;
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

/// The server pings every connection once at the start and then every ping interval, idle or
/// not, and the connection keeps answering in between.
#[tokio::test]
async fn idle_and_busy_connections_are_pinged_every_interval() -> Result<()> {
    let config = Config {
        ping_interval: std::time::Duration::from_millis(100),
        ..Config::default()
    };
    let (db, server, cast) = setup("sqlite", config).await?;
    let game = create_game(server.addr, &cast, "10m", "", "").await?;
    let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Proto).await?;
    red.wait_pings(3).await?;
    red.play(&game, 1, "h2e2").await?;
    red.wait_pings(5).await?;
    assert!(red.closed.is_none());
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

/// At shutdown every request a game still holds is answered before the goodbye: a move whose
/// commit is in flight gets its acknowledgement (it is committed), one waiting behind it gets
/// `shutting_down` (it is not). Before, the connection said goodbye at once and the committed
/// move was never acknowledged.
#[tokio::test]
async fn shutdown_answers_every_request_in_flight() -> Result<()> {
    let persist = Arc::new(chuhe_server::persist::MemoryPersist::default());
    let cast = seed(persist.as_ref()).await?;
    let mut server = Server::start(persist.clone(), Config::default()).await?;
    let game = create_game(server.addr, &cast, "10m", "", "").await?;
    let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
    red.subscribe(&game, 0).await?;
    persist.hold(true);
    let first = red.send_move(&game, 1, "h2e2").await?;
    let second = red.send_move(&game, 3, "h0g2").await?;
    // The connection answers a broken frame itself, after routing the two moves before it;
    // a record read through the game's shard then comes after both in its mailbox.
    red.send_raw(Message::Text("{".into())).await?;
    assert_eq!(next_error(&mut red).await?, "malformed_frame");
    let (status, _) = http(
        server.addr,
        "GET",
        &format!("/api/v1/games/{game}"),
        None,
        None,
    )
    .await?;
    assert_eq!(status, 200);
    server.begin_stop();
    persist.hold(false);
    let mut answers = Vec::new();
    while answers.len() < 2 {
        let m = red.recv().await?;
        match m.kind {
            Some(server_message::Kind::Reply(r))
                if r.request_id == first || r.request_id == second =>
            {
                answers.push((r.request_id, format!("seq {}", r.seq)));
            }
            Some(server_message::Kind::Error(e))
                if e.request_id == first || e.request_id == second =>
            {
                answers.push((e.request_id, e.code));
            }
            Some(server_message::Kind::Goodbye(_)) => {
                panic!("goodbye before the answers: {answers:?}")
            }
            _ => {}
        }
    }
    answers.sort();
    assert_eq!(
        answers,
        [
            (first, "seq 2".to_string()),
            (second, "shutting_down".to_string())
        ]
    );
    red.expect(|m| {
        matches!(&m.kind, Some(server_message::Kind::Goodbye(g)) if g.code == "shutdown")
            .then_some(())
    })
    .await?;
    assert_eq!(red.wait_closed().await?, 1001);
    server.stop().await?;
    let stored = chuhe_server::Persist::events(persist.as_ref(), game.parse()?).await?;
    assert_eq!(stored.len(), 2, "created + the acknowledged move");
    Ok(())
}
