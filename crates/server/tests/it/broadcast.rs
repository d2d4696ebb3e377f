//! Records and broadcasts on a real server: a board played elsewhere imported as played games
//! (checked, all or nothing, refused on a board that has a result), the public event feed on
//! the websocket (`leagueSubscribe` with `feed`) and over SSE with `round_started`, and the
//! embed pages' frame-ancestors from the event's `broadcast.embed_ancestors` within the
//! operator's.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use chuhe_proto::v1::{self as w, client_message, server_message};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::harness::{Client, Cluster, Result, TIMEOUT, config, http};

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// An event of two boards a match, created and published by the organizer; its id.
async fn event(c: &Cluster, extra: Value, schedule: Value) -> Result<String> {
    let mut spec = json!({
        "name": "records it", "system": "round_robin", "legs": 1, "boards": 2,
        "result_chain": {"preset": "single", "time_control": "10m+5s"},
        "arbiters": ["裁判 甲"],
        "teams": [
            {"name": "东城", "players": ["赵一", "赵二"]},
            {"name": "西城", "players": ["钱一", "钱二"]},
        ],
        "schedule": schedule,
    });
    for (k, v) in extra.as_object().ok_or("extra")? {
        spec[k] = v.clone();
    }
    let addr = c.nodes[0].addr;
    let org = c.cast.organizer.as_str();
    let (status, body) = http(
        addr,
        "POST",
        "/api/v1/leagues",
        Some(org),
        Some(&spec.to_string()),
    )
    .await?;
    assert_eq!(status, 201, "{body}");
    let id = serde_json::from_str::<Value>(&body)?["id"]
        .as_str()
        .ok_or("no id")?
        .to_string();
    let (status, body) = http(
        addr,
        "POST",
        &format!("/api/v1/leagues/{id}/publish"),
        Some(org),
        None,
    )
    .await?;
    assert_eq!(status, 200, "{body}");
    Ok(id)
}

/// A GET's status and head (the headers, lower-cased names).
async fn head(addr: std::net::SocketAddr, path: &str) -> Result<(u16, String)> {
    let mut s = TcpStream::connect(addr).await?;
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await?;
    let mut buf = Vec::new();
    tokio::time::timeout(TIMEOUT, s.read_to_end(&mut buf)).await??;
    let text = String::from_utf8_lossy(&buf).to_string();
    let head = text
        .split("\r\n\r\n")
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let status = head.split_whitespace().nth(1).ok_or("no status")?.parse()?;
    Ok((status, head))
}

fn pgn(red_team: &str, black_team: &str, red: &str, black: &str, body: &str) -> String {
    format!(
        "[Game \"Chinese Chess\"]\n[RedTeam \"{red_team}\"]\n[BlackTeam \"{black_team}\"]\n[Red \"{red}\"]\n[Black \"{black}\"]\n{body}\n"
    )
}

async fn import(
    c: &Cluster,
    id: &str,
    board: u32,
    token: &str,
    file: &str,
) -> Result<(u16, Value)> {
    let (status, body) = http(
        c.nodes[0].addr,
        "POST",
        &format!("/api/v1/leagues/{id}/rounds/1/tables/1/boards/{board}/import?format=pgn&reason=scoresheet"),
        Some(token),
        Some(file),
    )
    .await?;
    Ok((status, serde_json::from_str(&body).unwrap_or(Value::Null)))
}

/// The next update of `kind` on a league stream, with its arrival time.
async fn next_of(client: &mut Client, kind: &str) -> Result<(w::LeagueUpdate, u64)> {
    let u = client
        .expect(|m| match &m.kind {
            Some(server_message::Kind::League(u)) if u.kind == kind => Some(u.clone()),
            _ => None,
        })
        .await?;
    Ok((u, now_ms()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_board_is_a_played_game_and_the_websocket_feed_reports_it() -> Result<()> {
    let mut cfg = config();
    cfg.embed_ancestors = "https://*.example".into();
    let mut c = Cluster::start_with(1, cfg).await?;
    let addr = c.nodes[0].addr;
    let org = c.cast.organizer.clone();

    // A bad embed source is the event file's refusal, naming the key.
    let (status, body) = http(
        addr,
        "POST",
        "/api/v1/leagues",
        Some(&org),
        Some(
            &json!({
                "name": "x", "system": "round_robin", "boards": 1,
                "broadcast": {"embed_ancestors": ["https://news.example/page"]},
                "teams": [{"name": "A", "players": ["a"]}, {"name": "B", "players": ["b"]}],
                "schedule": {"first_round": "2030-01-01T10:00:00Z", "every": "1d"},
            })
            .to_string(),
        ),
    )
    .await?;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body)?["field"],
        "broadcast.embed_ancestors"
    );

    let id = event(
        &c,
        json!({
            "broadcast_delay": {"seconds": 1},
            "broadcast": {"embed_ancestors": ["https://news.example", "https://evil.test"]},
        }),
        json!({"first_round": "2030-01-01T10:00:00Z", "every": "1d"}),
    )
    .await?;

    // Anybody follows the feed on the websocket: no token.
    let mut fan = Client::connect(addr, None).await?;
    let req = fan
        .send(client_message::Kind::LeagueSubscribe(w::LeagueSubscribe {
            league_id: id.clone(),
            last_seq: 0,
            feed: true,
        }))
        .await?;
    fan.answer(req)
        .await?
        .map_err(|e| format!("subscribe: {e}"))?;

    let board1 = pgn(
        "东城",
        "西城",
        "赵一",
        "钱一",
        "[Result \"1-0\"]\n\n1. 炮二平五 马８进７ 2. 马二进三 车９平８ 1-0",
    );
    // Only the event's officials import.
    let (status, v) = import(&c, &id, 1, &c.cast.red, &board1).await?;
    assert_eq!(
        (status, v["code"].as_str()),
        (403, Some("permission_denied"))
    );

    // A file whose second game has an illegal move: named, and nothing stored.
    let bad = format!(
        "{board1}\n{}",
        pgn(
            "西城",
            "东城",
            "钱一",
            "赵一",
            "[Result \"0-1\"]\n[Format \"ICCS\"]\n\n1. h2e2 h9g7 2. h0g2 a9a1 0-1"
        )
    );
    let (status, v) = import(&c, &id, 1, &org, &bad).await?;
    assert_eq!(status, 422, "{v}");
    assert_eq!(
        (v["code"].as_str(), v["game"].as_u64(), v["move"].as_u64()),
        (Some("illegal_move"), Some(2), Some(2)),
        "{v}"
    );
    // Mated by its last move, yet called a draw: the rules' result wins, the file is refused.
    let mate = "[FEN \"4k4/R8/9/9/9/9/9/9/9/3K4R w - - 0 1\"]\n[Format \"ICCS\"]\n";
    let (status, v) = import(
        &c,
        &id,
        2,
        &org,
        &pgn(
            "西城",
            "东城",
            "钱二",
            "赵二",
            &format!("[Result \"1/2-1/2\"]\n{mate}\n1. i0i9 1/2-1/2"),
        ),
    )
    .await?;
    assert_eq!(
        (status, v["code"].as_str(), v["game"].as_u64()),
        (422, Some("result_mismatch"), Some(1)),
        "{v}"
    );
    // A player the rosters do not know.
    let (status, v) = import(&c, &id, 1, &org, &board1.replace("赵一", "无名")).await?;
    assert_eq!(
        (status, v["code"].as_str()),
        (422, Some("player_unknown")),
        "{v}"
    );

    // Board 1 as played: stored with its moves, its result the arbiter's from the file.
    let (status, v) = import(&c, &id, 1, &org, &board1).await?;
    assert_eq!(status, 200, "{v}");
    let game = v["games"][0].as_str().ok_or("no game")?.to_string();
    assert_eq!(
        c.stored_moves(&game).await?,
        ["h2e2", "h9g7", "h0g2", "i9h9"]
    );
    let (status, body) = http(
        addr,
        "GET",
        &format!("/api/v1/games/{game}/record?format=pgn-iccs"),
        Some(&org),
        None,
    )
    .await?;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("[Result \"1-0\"]") && body.contains("H2-E2"),
        "{body}"
    );
    // Again: the board has its result.
    let (status, v) = import(&c, &id, 1, &org, &board1).await?;
    assert_eq!(
        (status, v["code"].as_str()),
        (409, Some("board_not_empty")),
        "{v}"
    );

    // Board 2 (the second team Red, 13.2): mated on the board, the rules' end.
    let (status, v) = import(
        &c,
        &id,
        2,
        &org,
        &pgn(
            "西城",
            "东城",
            "钱二",
            "赵二",
            &format!("[Result \"1-0\"]\n{mate}\n1. i0i9 1-0"),
        ),
    )
    .await?;
    assert_eq!(status, 200, "{v}");

    // The feed: both boards' games, the match's result and the standings, each no earlier
    // than the event's delay after it happened.
    let (u, seen) = next_of(&mut fan, "game_finished").await?;
    assert!(
        seen >= u.at_ms + 1000,
        "released {} ms after",
        seen - u.at_ms
    );
    let (u, _) = next_of(&mut fan, "game_finished").await?;
    let finished: Value = serde_json::from_str(&u.json)?;
    assert_eq!(
        (finished["reason"].as_str(), finished["outcome"].as_str()),
        (Some("checkmate"), Some("second"))
    );
    let (m, _) = next_of(&mut fan, "match_result").await?;
    let m: Value = serde_json::from_str(&m.json)?;
    assert_eq!(
        (m["round"].as_u64(), m["table"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(m["gamePoints"], json!(["2", "2"]), "{m}");
    let (s, _) = next_of(&mut fan, "standings").await?;
    assert!(serde_json::from_str::<Value>(&s.json)?["rows"].is_array());

    // The embed pages: the event's sources the operator's allow.
    for path in [
        format!("/embed/league/{id}/match/1/1"),
        format!("/embed/game/{game}"),
    ] {
        let (status, head) = head(addr, &path).await?;
        assert_eq!(status, 200);
        assert!(
            head.contains("content-security-policy: frame-ancestors https://news.example\r\n"),
            "{path}: {head}"
        );
    }
    // A game of no event: the operator's.
    let other = c.create_game(0, "").await?;
    let (_, head) = head(addr, &format!("/embed/game/{other}")).await?;
    assert!(
        head.contains("content-security-policy: frame-ancestors https://*.example\r\n"),
        "{head}"
    );
    c.nodes[0].stop().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_started_on_the_websocket_feed_and_over_sse() -> Result<()> {
    let mut c = Cluster::start(1).await?;
    let addr = c.nodes[0].addr;
    let start = now_ms() + 1500;
    let id = event(&c, json!({}), json!({"rounds_at": [start.to_string()]})).await?;
    let mut fan = Client::connect(addr, None).await?;
    let req = fan
        .send(client_message::Kind::LeagueSubscribe(w::LeagueSubscribe {
            league_id: id.clone(),
            last_seq: 0,
            feed: true,
        }))
        .await?;
    fan.answer(req)
        .await?
        .map_err(|e| format!("subscribe: {e}"))?;
    let (u, seen) = next_of(&mut fan, "round_started").await?;
    assert!(u.at_ms >= start && seen >= start, "{u:?}");
    assert_eq!(serde_json::from_str::<Value>(&u.json)?["round"], 1);
    // The SSE feed from the beginning has it too, under its seq.
    let mut s = TcpStream::connect(addr).await?;
    s.write_all(
        format!(
            "GET /api/v1/leagues/{id}/feed HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    )
    .await?;
    let mut lines = BufReader::new(s).lines();
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    let mut last_id = String::new();
    loop {
        let line = tokio::time::timeout_at(deadline, lines.next_line())
            .await??
            .ok_or("the feed ended")?;
        if let Some(v) = line.strip_prefix("id: ") {
            last_id = v.to_string();
        }
        if line == "event: round_started" {
            break;
        }
    }
    assert_eq!(last_id, u.seq.to_string());
    let _ = Duration::ZERO;
    c.nodes[0].stop().await?;
    Ok(())
}
