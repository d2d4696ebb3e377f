//! Records in the forms the Xiangqi world uses, through the HTTP API: every game of a played
//! season exported as Chinese-program PGN (each notation), XQF and DhtmlXQ and read back with
//! `chuhe-records` gives the same moves and result as the game's JSON; a game from a FEN too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;

use anyhow::{Context, Result, ensure};
use chuhe_e2e::*;
use chuhe_proto::Encoding;
use chuhe_records::{Format, GameResult, Notation};
use chuhe_rules::Move;
use chuhe_server::Config;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// GET with the raw body bytes (XQF is binary): status, content type, body.
async fn get_bytes(
    addr: SocketAddr,
    path: &str,
    token: Option<&str>,
) -> Result<(u16, String, Vec<u8>)> {
    let mut s = tokio::net::TcpStream::connect(addr).await?;
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let req = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n{auth}\r\n");
    s.write_all(req.as_bytes()).await?;
    let mut buf = Vec::new();
    tokio::time::timeout(std::time::Duration::from_secs(30), s.read_to_end(&mut buf)).await??;
    let end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("no header end")?;
    let head = String::from_utf8_lossy(&buf[..end]).to_string();
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .context("no status")?
        .parse()?;
    ensure!(
        !head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "a chunked answer"
    );
    let ct = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-type:")
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_default();
    Ok((status, ct, buf[end + 4..].to_vec()))
}

/// Reads an SSE answer until every one of `wanted` has been seen; the text so far.
async fn sse_until(addr: SocketAddr, path: &str, wanted: &[&str]) -> Result<String> {
    let mut s = tokio::net::TcpStream::connect(addr).await?;
    let req = format!("GET {path} HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n\r\n");
    s.write_all(req.as_bytes()).await?;
    let mut text = String::new();
    let mut buf = vec![0u8; 65536];
    let mut raw = Vec::new();
    let read = async {
        loop {
            let n = s.read(&mut buf).await?;
            ensure!(n > 0, "the feed ended: {text}");
            raw.extend_from_slice(&buf[..n]);
            text = String::from_utf8_lossy(&raw).to_string();
            ensure!(text.starts_with("HTTP/1.1 200"), "{text}");
            if wanted.iter().all(|w| text.contains(w)) {
                return Ok(());
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), read).await??;
    ensure!(
        text.to_ascii_lowercase()
            .contains("content-type: text/event-stream"),
        "{text}"
    );
    Ok(text)
}

/// A game's moves (ICCS) and result from its JSON record.
async fn truth(addr: SocketAddr, id: &str, token: Option<&str>) -> Result<(Vec<Move>, GameResult)> {
    let (st, body) = http(addr, "GET", &format!("/api/v1/games/{id}"), token, None).await?;
    ensure!(st == 200, "{st} {body}");
    let v: serde_json::Value = serde_json::from_str(&body)?;
    let moves = v["moves"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| Move::from_iccs(m["iccs"].as_str().unwrap_or("")).unwrap())
                .collect()
        })
        .unwrap_or_default();
    let result = match v["result"].as_str().unwrap_or("") {
        "RESULT_RED_WINS" => GameResult::RedWins,
        "RESULT_BLACK_WINS" => GameResult::BlackWins,
        "RESULT_DRAW" => GameResult::Draw,
        "RESULT_BOTH_LOSE" => GameResult::BothLose,
        _ => GameResult::Unknown,
    };
    Ok((moves, result))
}

/// Every game of the league, exported whole (PGN in each notation) and one by one (XQF,
/// DhtmlXQ), read back: the same moves and result as the game's JSON. Returns the games seen.
pub async fn season_round_trip(addr: SocketAddr, league: &str, token: &str) -> Result<usize> {
    let mut ids = Vec::new();
    for n in ["chinese", "wxf", "iccs"] {
        let (st, ct, body) = get_bytes(
            addr,
            &format!("/api/v1/leagues/{league}/records?format=pgn&notation={n}"),
            Some(token),
        )
        .await?;
        ensure!(st == 200, "{st}: {}", String::from_utf8_lossy(&body));
        ensure!(ct.starts_with("text/plain"), "{ct}");
        let games = chuhe_records::import(Format::Pgn(Notation::Chinese), &body)?;
        ensure!(!games.is_empty());
        ids.clear();
        for g in &games {
            let id = g.header("GameId").context("no GameId header")?.to_string();
            let (moves, result) = truth(addr, &id, Some(token)).await?;
            ensure!(g.moves == moves, "{n}: game {id}: moves differ");
            ensure!(g.result == result, "{n}: game {id}: result differs");
            ensure!(
                !g.red_team.is_empty() && !g.black_team.is_empty(),
                "teams: {g:?}"
            );
            ids.push((id, moves, result));
        }
    }
    for (id, moves, result) in &ids {
        let (st, ct, body) = get_bytes(
            addr,
            &format!("/api/v1/games/{id}/record?format=xqf"),
            Some(token),
        )
        .await?;
        ensure!(st == 200 && ct == "application/octet-stream", "{st} {ct}");
        let g = chuhe_records::xqf::read(&body)?;
        ensure!(&g.moves == moves && g.result == *result, "xqf: game {id}");
        let (st, _, body) = get_bytes(
            addr,
            &format!("/api/v1/games/{id}/record?format=dhtmlxq"),
            Some(token),
        )
        .await?;
        ensure!(st == 200);
        let text = String::from_utf8(body)?;
        let list: String = moves
            .iter()
            .map(|m| {
                format!(
                    "{}{}{}{}",
                    m.from().file(),
                    9 - m.from().rank(),
                    m.to().file(),
                    9 - m.to().rank()
                )
            })
            .collect();
        ensure!(
            moves.is_empty()
                || text.contains(&format!("[DhtmlXQ_movelist]{list}[/DhtmlXQ_movelist]")),
            "dhtmlxq: game {id}: {text}"
        );
    }
    // One round as one file; XQF cannot hold several.
    let (st, _, body) = get_bytes(
        addr,
        &format!("/api/v1/leagues/{league}/records?format=pgn&round=1"),
        Some(token),
    )
    .await?;
    ensure!(st == 200);
    let round1 = chuhe_records::import(Format::Pgn(Notation::Chinese), &body)?;
    ensure!(round1.iter().all(|g| g.round.contains('1')), "round 1 only");
    ensure!(round1.len() < ids.len());
    let (st, _, body) = get_bytes(
        addr,
        &format!("/api/v1/leagues/{league}/records?format=xqf"),
        Some(token),
    )
    .await?;
    ensure!(st == 400, "{st}");
    ensure!(String::from_utf8_lossy(&body).contains("one_game_format"));
    // The public event feed over SSE: from the start, a board result and the standings after it.
    let seen = sse_until(
        addr,
        &format!("/api/v1/leagues/{league}/feed?lastSeq=0"),
        &[
            "event: game_finished",
            "event: match_result",
            "\"matchPoints\"",
            "event: standings",
            "\"rows\"",
        ],
    )
    .await?;
    ensure!(seen.contains("event: subscribed"), "{seen}");
    ensure!(seen.contains("id: 1\n"), "{seen}");
    Ok(ids.len())
}

/// Mate in two from a FEN: 1. b1b8 e9f9 2. a0a9#.
const MATE_FEN: &str = "4k4/9/9/9/9/9/9/9/1R7/R2K5 w - - 0 1";

#[tokio::test]
async fn a_game_from_a_fen_in_every_format() -> Result<()> {
    let (db, server, cast) = start_seeded("sqlite", Config::default()).await?;
    let game = create_game(server.addr, &cast, "10m+5s", MATE_FEN, "").await?;
    let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
    let mut black = Client::connect(server.addr, Some(&cast.black), Encoding::Json).await?;
    red.subscribe(&game, 0).await?;
    black.subscribe(&game, 0).await?;
    red.play(&game, 1, "b1b8").await?;
    black.play(&game, 2, "e9f9").await?;
    red.play(&game, 3, "a0a9").await?;
    red.event(ended).await?;
    let (moves, result) = truth(server.addr, &game, None).await?;
    assert_eq!(result, GameResult::RedWins);
    for f in ["pgn", "pgn-wxf", "pgn-iccs", "xqf"] {
        let (st, _, body) = get_bytes(
            server.addr,
            &format!("/api/v1/games/{game}/record?format={f}"),
            None,
        )
        .await?;
        assert_eq!(st, 200, "{f}");
        let g = chuhe_records::import(Format::parse(f).unwrap(), &body)?.remove(0);
        assert_eq!(g.moves, moves, "{f}");
        assert_eq!(g.result, result, "{f}");
        assert!(
            g.fen.starts_with("4k4/9/9/9/9/9/9/9/1R7/R2K5 w"),
            "{f}: {}",
            g.fen
        );
        if f == "pgn" {
            let text = String::from_utf8(body)?;
            assert!(text.contains(&format!("[FEN \"{MATE_FEN}\"]")), "{text}");
            assert!(text.contains("[Termination \"checkmate\"]"), "{text}");
        }
    }
    let (st, _, body) = get_bytes(
        server.addr,
        &format!("/api/v1/games/{game}/record?format=dhtmlxq"),
        None,
    )
    .await?;
    assert_eq!(st, 200);
    assert!(String::from_utf8(body)?.contains("[DhtmlXQ_binit]"));
    let (st, body) = http(
        server.addr,
        "GET",
        &format!("/api/v1/games/{game}/record?format=doc"),
        None,
        None,
    )
    .await?;
    assert_eq!(st, 400, "{body}");
    assert!(body.contains("invalid_argument"));
    let (st, _) = http(
        server.addr,
        "GET",
        "/api/v1/games/999999/record",
        None,
        None,
    )
    .await?;
    assert_eq!(st, 404);
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

/// The embed pages answer with the organiser's frame-ancestors policy; the loader script and
/// the page's module are served.
#[tokio::test]
async fn embed_pages_carry_the_frame_ancestors_policy() -> Result<()> {
    let config = Config {
        embed_ancestors: "https://news.example https://*.example.org".to_string(),
        ..Config::default()
    };
    let (db, server, _cast) = start_seeded("sqlite", config).await?;
    let mut s = tokio::net::TcpStream::connect(server.addr).await?;
    s.write_all(b"GET /embed/league/1/match/2/3?lang=zh HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        .await?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await?;
    let text = String::from_utf8_lossy(&buf).to_ascii_lowercase();
    assert!(text.starts_with("http/1.1 200"), "{text}");
    assert!(
        text.contains(
            "content-security-policy: frame-ancestors https://news.example https://*.example.org"
        ),
        "{text}"
    );
    assert!(text.contains("/embed/page.js"), "{text}");
    for path in ["/embed.js", "/embed/page.js"] {
        let (st, ct, body) = get_bytes(server.addr, path, None).await?;
        assert_eq!(st, 200, "{path}");
        assert!(ct.starts_with("text/javascript"), "{path}: {ct}");
        assert!(!body.is_empty());
    }
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}
