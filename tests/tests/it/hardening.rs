//! Issue 21's server defects, each shown by a test that failed before its fix: the HTTP API's
//! errors and ids (item 7), readiness (item 8), who may read `/metrics` (item 6), slow readers
//! and resumes at the replay limit (item 3), invalid UTF-8 (item 4), idle and half-open
//! connections and connection caps (item 2).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use anyhow::Result;
use chuhe_e2e::*;
use chuhe_proto::Encoding;
use chuhe_proto::v1::{self as w, client_message, server_message};
use chuhe_server::Config;

/// `{code, message}` of a JSON error body, or a failure naming the body.
fn api_code(status: u16, body: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(body)
        .unwrap_or_else(|e| panic!("status {status}: body is not JSON ({e}): {body:?}"));
    assert!(
        v["message"].as_str().is_some_and(|m| !m.is_empty()),
        "status {status}: no message in {body}"
    );
    v["code"].as_str().unwrap_or_default().to_string()
}

/// Item 7: every refusal under /api is the documented JSON `{code, message}`, also those the
/// router and extractors produce (before: plain text, or an empty body).
#[tokio::test]
async fn every_api_error_is_json_with_a_code() -> Result<()> {
    let (db, server, cast) = start_seeded("sqlite", Config::default()).await?;
    let addr = server.addr;
    let cases: [(&str, &str, u16, &str); 5] = [
        ("GET", "/api/v1/games/%ff%fe", 400, "invalid_argument"),
        (
            "GET",
            "/api/v1/games/1?token=a&token=b",
            400,
            "invalid_argument",
        ),
        ("GET", "/api/v1/no-such-route", 404, "not_found"),
        ("DELETE", "/api/v1/games", 405, "method_not_allowed"),
        (
            "GET",
            "/api/v1/games/1/pgn?notation=x&notation=y",
            400,
            "invalid_argument",
        ),
    ];
    for (method, path, want_status, want_code) in cases {
        let (status, body) = http(addr, method, path, Some(&cast.organizer), None).await?;
        assert_eq!(status, want_status, "{method} {path}: {body}");
        assert_eq!(
            api_code(status, &body),
            want_code,
            "{method} {path}: {body}"
        );
    }
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

/// Item 7: a duplicate display name is the caller's mistake, 409 `name_taken` (before: 503
/// `store_unavailable`, which tells clients to retry).
#[tokio::test]
async fn a_duplicate_player_name_is_409_name_taken() -> Result<()> {
    let (db, server, cast) = start_seeded("sqlite", Config::default()).await?;
    let body = r#"{"displayName":"Twin"}"#;
    let (status, text) = http(
        server.addr,
        "POST",
        "/api/v1/players",
        Some(&cast.organizer),
        Some(body),
    )
    .await?;
    assert_eq!(status, 201, "{text}");
    let (status, text) = http(
        server.addr,
        "POST",
        "/api/v1/players",
        Some(&cast.organizer),
        Some(body),
    )
    .await?;
    assert_eq!(status, 409, "{text}");
    assert_eq!(api_code(status, &text), "name_taken");
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

/// Item 8: `/readyz` reflects the store, `/healthz` stays liveness, and while the store does
/// not answer, a login (a websocket upgrade or record with a token) and the organizer API are
/// answered 503 `store_unavailable` within the store deadline. Before: no `/readyz` (404), and a
/// login waited as long as the store (here for ever: the test's 20 s guard failed it).
#[tokio::test]
async fn readiness_follows_the_store_and_logins_fail_fast_in_an_outage() -> Result<()> {
    let persist = std::sync::Arc::new(chuhe_server::persist::MemoryPersist::default());
    let cast = seed(persist.as_ref()).await?;
    let config = Config {
        store_timeout: std::time::Duration::from_millis(200),
        ..Config::default()
    };
    let server = Server::start(persist.clone(), config).await?;
    let addr = server.addr;
    let (status, body) = http(addr, "GET", "/readyz", None, None).await?;
    assert_eq!(status, 200, "{body}");
    persist.stall(true);
    let (status, body) = http(addr, "GET", "/readyz", None, None).await?;
    assert_eq!(status, 503, "{body}");
    assert_eq!(api_code(status, &body), "store_unavailable");
    let (status, body) = http(addr, "GET", "/healthz", None, None).await?;
    assert_eq!(status, 200, "liveness does not depend on the store: {body}");
    let (status, body) = http(addr, "GET", "/api/v1/games", Some(&cast.organizer), None).await?;
    assert_eq!(status, 200, "the game list needs no store: {body}");
    for (method, path, body) in [
        ("POST", "/api/v1/players", Some(r#"{"displayName":"Late"}"#)),
        ("GET", "/api/v1/games/1", None),
    ] {
        let (status, text) = http(addr, method, path, Some(&cast.organizer), body).await?;
        assert_eq!(status, 503, "{method} {path}: {text}");
        assert_eq!(
            api_code(status, &text),
            "store_unavailable",
            "{method} {path}"
        );
    }
    let (status, text) = raw_http(addr, &ws_upgrade_request(Some(&cast.red))).await?;
    assert_eq!(status, 503, "websocket login: {text}");
    assert_eq!(api_code(status, &text), "store_unavailable");
    persist.stall(false);
    let (status, body) = http(addr, "GET", "/readyz", None, None).await?;
    assert_eq!(status, 200, "{body}");
    let (status, body) = http(
        addr,
        "POST",
        "/api/v1/players",
        Some(&cast.organizer),
        Some(r#"{"displayName":"Late"}"#),
    )
    .await?;
    assert_eq!(status, 201, "{body}");
    server.stop().await?;
    Ok(())
}

/// Item 6: `/metrics` counts every move at once, so it is for operators only: anonymous
/// readers get 401 and players 403 (before: anyone read it, and `chuhe_moves_total` told the
/// timing of a game still behind its broadcast delay); the operator token and organizer
/// tokens read it.
#[tokio::test]
async fn metrics_are_for_operators_only() -> Result<()> {
    let config = Config {
        metrics_token: Some("scrape-secret".into()),
        ..Config::default()
    };
    let (db, server, cast) = start_seeded("sqlite", config).await?;
    let game = create_game(server.addr, &cast, "10m", "", r#","delay":{"plies":2}"#).await?;
    let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
    red.play(&game, 1, "h2e2").await?;
    let (status, body) = http(server.addr, "GET", "/metrics", None, None).await?;
    assert_eq!(status, 401, "{body}");
    assert_eq!(api_code(status, &body), "unauthenticated");
    assert!(!body.contains("chuhe_moves_total"));
    let (status, body) = http(server.addr, "GET", "/metrics", Some(&cast.red), None).await?;
    assert_eq!(status, 403, "{body}");
    assert_eq!(api_code(status, &body), "permission_denied");
    let (status, body) = http(server.addr, "GET", "/metrics", Some("wrong-secret"), None).await?;
    assert_eq!(status, 401, "{body}");
    for token in ["scrape-secret", cast.organizer.as_str()] {
        let (status, body) = http(server.addr, "GET", "/metrics", Some(token), None).await?;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("chuhe_moves_total 1\n"), "{body}");
    }
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

/// Plays `n` plies of a fixed opening cycle-free line on `game` (red and black alternate).
async fn play_line(red: &mut Client, black: &mut Client, game: &str, n: usize) -> Result<()> {
    let line = [
        "h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7", "b0c2", "a9b9", "a0b0", "b7b3",
    ];
    for (i, m) in line.iter().take(n).enumerate() {
        let c = if i % 2 == 0 { &mut *red } else { &mut *black };
        c.play(game, i as u32 + 1, m).await?;
    }
    Ok(())
}

/// Item 3: a client that stops reading while its queue still has room is cut when a write
/// waits longer than the write timeout — and, like one whose queue overflowed, it is told:
/// `goodbye too_slow`, close 4008, counted in `chuhe_dropped_slow_connections_total`.
/// Before: the socket was dropped (a reset for the client), no goodbye, and the counter
/// stayed 0 (this test failed waiting for it).
#[tokio::test]
async fn a_reader_slower_than_the_write_timeout_gets_goodbye_and_4008() -> Result<()> {
    let config = Config {
        // The queue never overflows: only the write timeout can catch this client.
        write_queue: 1_000_000,
        write_timeout: std::time::Duration::from_millis(300),
        rate_per_sec: 1_000_000,
        flood_limit: 1_000_000,
        ..Config::default()
    };
    let (db, server, cast) = start_seeded("sqlite", config).await?;
    let game = create_game(server.addr, &cast, "10m", "", "").await?;
    let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
    let mut black = Client::connect(server.addr, Some(&cast.black), Encoding::Json).await?;
    play_line(&mut red, &mut black, &game, 10).await?;
    let mut slow = Client::connect_small_window(server.addr, None, Encoding::Json, 4096).await?;
    // Snapshots asked for and not read, until the server's writes to it must wait (its sends
    // stop being taken once the server no longer reads either).
    for _ in 0..20_000 {
        let sub = slow.send(client_message::Kind::Subscribe(w::Subscribe {
            game_id: game.clone(),
            last_seq: 0,
        }));
        if tokio::time::timeout(std::time::Duration::from_secs(2), sub)
            .await
            .is_err()
        {
            break;
        }
    }
    wait_metric(
        server.addr,
        &cast.organizer,
        "chuhe_dropped_slow_connections_total",
        1,
    )
    .await?;
    // Reading now, it finds what was on its way, then the goodbye and the close.
    assert_eq!(slow.wait_closed().await?, 4008);
    assert!(slow.seen.iter().any(
        |m| matches!(&m.kind, Some(server_message::Kind::Goodbye(g)) if g.code == "too_slow")
    ));
    red.play(&game, 11, "c3c4").await?;
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

/// Item 3: a resume exactly at the replay limit (256 missed events) gets the 256 events and
/// its reply. Before: the write queue (256 frames) could not hold the replay and the reply,
/// and the client was closed with 4008 — reconnecting with its last seq, as advised, looped.
#[tokio::test]
async fn a_resume_exactly_at_the_replay_limit_gets_the_events() -> Result<()> {
    let config = Config {
        rate_per_sec: 100_000,
        flood_limit: 100_000,
        ..Config::default()
    };
    let limit = config.replay_events as u64;
    let (db, server, cast) = start_seeded("sqlite", config).await?;
    let game = create_game(server.addr, &cast, "10m", "", "").await?;
    let mut fan = Client::connect(server.addr, None, Encoding::Json).await?;
    fan.subscribe(&game, 0).await?;
    let seen = fan.expect(snapshot).await?.seq;
    fan.close().await;
    let mut arbiter = Client::connect(server.addr, Some(&cast.arbiter), Encoding::Json).await?;
    let mut last = seen;
    while last < seen + limit {
        let req = arbiter
            .send(client_message::Kind::Arbiter(w::ArbiterCommand {
                game_id: game.clone(),
                reason: "test: events for a resume".into(),
                action: Some(w::arbiter_command::Action::AddTime(w::AddTime {
                    side: w::Side::Red as i32,
                    delta_ms: 1000,
                })),
            }))
            .await?;
        last = arbiter.reply(req).await?.seq;
    }
    assert_eq!(last, seen + limit, "one event per AddTime");
    let mut back = Client::connect(server.addr, None, Encoding::Json).await?;
    let req = back
        .send(client_message::Kind::Subscribe(w::Subscribe {
            game_id: game.clone(),
            last_seq: seen,
        }))
        .await?;
    back.reply(req).await?;
    let mut got = Vec::new();
    while got.len() < limit as usize {
        let m = back.recv().await?;
        match m.kind {
            Some(server_message::Kind::Event(e)) => got.push(e.seq),
            Some(server_message::Kind::Snapshot(_)) => panic!("a snapshot instead of the events"),
            _ => {}
        }
    }
    assert_eq!(got, (seen + 1..=seen + limit).collect::<Vec<_>>());
    assert!(back.closed.is_none());
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

/// Item 2: thousands of idle connections — silent TCP connections and websocket upgrades sent
/// half-way — do not keep the server from answering, and each is closed once the handshake
/// timeout passes (counted in `chuhe_handshake_timeouts_total`). Before: they stayed open for
/// ever (seen after 180 s; this test failed waiting for the first to close).
#[tokio::test]
async fn idle_and_half_sent_connections_are_closed_after_the_handshake_timeout() -> Result<()> {
    use tokio::io::AsyncWriteExt;
    const IDLE: usize = 3000;
    let config = Config {
        handshake_timeout: std::time::Duration::from_secs(1),
        max_connections_per_address: IDLE,
        ..Config::default()
    };
    let (db, server, cast) = start_seeded("sqlite", config).await?;
    let mut idle = Vec::with_capacity(IDLE);
    for i in 0..IDLE {
        let mut s = connect_from(server.addr, [127, 0, 0, 2]).await?;
        if i % 2 == 1 {
            s.write_all(b"GET /ws HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\n")
                .await?;
        }
        idle.push(s);
    }
    let (status, body) = http(server.addr, "GET", "/healthz", None, None).await?;
    assert_eq!((status, body.trim()), (200, "ok"));
    for s in &mut idle {
        wait_server_closed(s).await?;
    }
    wait_metric(
        server.addr,
        &cast.organizer,
        "chuhe_handshake_timeouts_total",
        IDLE as u64,
    )
    .await?;
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

/// Item 2: over the connection caps — in all, and per client address — a connection is
/// answered at once with 503 `too_many_connections` (counted by cap in
/// `chuhe_refused_connections_total`) instead of being left waiting; closing connections
/// makes room again. Before: there was no cap, and past the file limit every new connection
/// and `/healthz` hung.
#[tokio::test]
async fn connections_over_the_caps_are_refused_at_once_with_503() -> Result<()> {
    let config = Config {
        max_connections: 300,
        max_connections_per_address: 200,
        handshake_timeout: std::time::Duration::from_secs(60),
        ..Config::default()
    };
    let (db, server, cast) = start_seeded("sqlite", config).await?;
    let mut first = Vec::new();
    for _ in 0..200 {
        first.push(connect_from(server.addr, [127, 0, 0, 2]).await?);
    }
    let mut extra = connect_from(server.addr, [127, 0, 0, 2]).await?;
    let (status, body) = get_on(&mut extra, "/healthz").await?;
    assert_eq!(status, 503, "{body}");
    assert_eq!(api_code(status, &body), "too_many_connections");
    let mut second = Vec::new();
    for _ in 0..100 {
        second.push(connect_from(server.addr, [127, 0, 0, 3]).await?);
    }
    // Loopback (127.0.0.1) has no per-address cap, but the total cap holds for it too.
    let (status, body) = http(server.addr, "GET", "/healthz", None, None).await?;
    assert_eq!(status, 503, "{body}");
    assert_eq!(api_code(status, &body), "too_many_connections");
    drop(second);
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let (status, _) = http(server.addr, "GET", "/healthz", None, None).await?;
        if status == 200 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no room after closing 100"
        );
        // The server sees the closes on its own time; poll the health route.
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let (status, text) = http(server.addr, "GET", "/metrics", Some(&cast.organizer), None).await?;
    assert_eq!(status, 200, "{text}");
    assert!(
        text.contains("chuhe_refused_connections_total{reason=\"per_address\"} 1\n"),
        "{text}"
    );
    assert!(
        !text.contains("chuhe_refused_connections_total{reason=\"total\"} 0\n"),
        "{text}"
    );
    drop(first);
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

/// Item 4: a text frame that is not UTF-8 — whole, or in fragments — is answered
/// `malformed_frame` and the connection stays usable; frame types are still checked. Before:
/// the socket closed with no status (the client saw 1005).
#[tokio::test]
async fn invalid_utf8_in_a_text_frame_is_malformed_frame_on_a_usable_connection() -> Result<()> {
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    let (db, server, cast) = start_seeded("sqlite", Config::default()).await?;
    let game = create_game(server.addr, &cast, "10m", "", "").await?;
    let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
    let text = |payload: &[u8], fin: bool| {
        Message::Frame(Frame::message(
            payload.to_vec(),
            OpCode::Data(Data::Text),
            fin,
        ))
    };
    red.send_raw(text(&[0xff, 0xfe, b'{'], true)).await?;
    assert_eq!(next_error_code(&mut red).await?, "malformed_frame");
    red.send_raw(text(&[b'{', 0xc3], false)).await?;
    red.send_raw(Message::Frame(Frame::message(
        b"(}".to_vec(),
        OpCode::Data(Data::Continue),
        true,
    )))
    .await?;
    assert_eq!(next_error_code(&mut red).await?, "malformed_frame");
    // Still usable: a move is played, and a binary frame is still the wrong type here.
    red.play(&game, 1, "h2e2").await?;
    red.send_raw(Message::Binary(vec![1, 2, 3].into())).await?;
    assert_eq!(next_error_code(&mut red).await?, "wrong_frame_type");
    // A protobuf connection still refuses text frames, valid or not.
    let mut black = Client::connect(server.addr, Some(&cast.black), Encoding::Proto).await?;
    black.send_raw(text(b"{}", true)).await?;
    assert_eq!(next_error_code(&mut black).await?, "wrong_frame_type");
    black.send_raw(text(&[0xff], true)).await?;
    assert_eq!(next_error_code(&mut black).await?, "wrong_frame_type");
    black.play(&game, 2, "h9g7").await?;
    assert!(red.closed.is_none() && black.closed.is_none());
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

/// The code of the next Error (any request id).
async fn next_error_code(c: &mut Client) -> Result<String> {
    c.expect(|m| match &m.kind {
        Some(server_message::Kind::Error(e)) => Some(e.code.clone()),
        _ => None,
    })
    .await
}
