//! Calling the arbiter in a league game, over real websockets and HTTP, with the server killed
//! (`kill -9`) in the middle of an open call: a player calls, the clock stops, two arbiters see
//! the call on their desks, one takes it (the other is told it is taken), messages go both
//! ways, the arbiter adds time and resumes; the game's log holds call, messages and decision
//! in order; a spectator sees none of it; a player cannot message the opponent or anyone else.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::net::SocketAddr;

use anyhow::{Context, Result, bail, ensure};
use chuhe_e2e::*;
use chuhe_proto::Encoding;
use chuhe_proto::v1::{self as w, client_message::Kind as C, game_event::Kind, server_message};
use serde_json::{Value, json};

const EXE: &str = env!("CARGO_BIN_EXE_chuhe-e2e-server");

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Two teams of two, one board, two arbiters; the one round far ahead until rescheduled.
fn spec() -> Value {
    json!({
        "name": "请裁判 e2e",
        "system": "round_robin",
        "legs": 1,
        "boards": 1,
        "result_chain": {"preset": "single", "time_control": "10m+5s"},
        "lateness": "0",
        "teams": [
            {"name": "甲队", "players": ["甲1", "甲2"]},
            {"name": "乙队", "players": ["乙1", "乙2"]},
        ],
        "arbiters": ["裁判长", "副裁判"],
        "schedule": {"rounds_at": [(now_ms() + 3_600_000).to_string()]},
    })
}

struct Setup {
    id: String,
    arbiters: Vec<String>,
    /// principal id → token
    players: HashMap<i64, String>,
}

async fn setup(addr: SocketAddr, org: &str) -> Result<Setup> {
    let (id, tokens) = published_league(addr, org, &spec()).await?;
    let mut arbiters = Vec::new();
    let mut players = HashMap::new();
    for t in &tokens {
        let token = t["token"].as_str().context("token")?.to_string();
        let pid: i64 = t["principalId"].as_str().context("principalId")?.parse()?;
        match t["role"].as_str() {
            Some("arbiter") => arbiters.push(token),
            Some("player") => {
                players.insert(pid, token);
            }
            _ => {}
        }
    }
    ensure!(arbiters.len() == 2, "two arbiters: {arbiters:?}");
    // The round now (no lineups: the registered order plays).
    let now = now_ms();
    let body =
        json!({"start": (now + 2_500).to_string(), "lineup_deadline": (now + 1_000).to_string()});
    let (s, v) = http_json(
        addr,
        "POST",
        &format!("/api/v1/leagues/{id}/rounds/1/reschedule"),
        Some(org),
        Some(&body),
    )
    .await?;
    ensure!(s == 200, "reschedule: {s} {v}");
    Ok(Setup {
        id,
        arbiters,
        players,
    })
}

fn desk(m: &w::ServerMessage) -> Option<w::GameEvent> {
    match &m.kind {
        Some(server_message::Kind::Desk(d)) => d.event.clone(),
        _ => None,
    }
}

fn say(game: &str, to: w::Side, text: &str) -> C {
    C::SendMessage(w::SendMessage {
        game_id: game.into(),
        to: to as i32,
        text: text.into(),
    })
}

fn label(e: &Value) -> String {
    e.as_object()
        .and_then(|o| {
            o.keys()
                .find(|k| !["gameId", "seq", "atMs"].contains(&k.as_str()))
                .cloned()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_call_to_the_arbiter_survives_a_kill_and_reaches_only_its_people() -> Result<()> {
    for b in backends() {
        run(b).await.with_context(|| format!("on {b}"))?;
    }
    Ok(())
}

async fn run(backend: &str) -> Result<()> {
    let (db, server, cast) = start_child_seeded(backend, EXE).await?;
    let addr = server.addr;
    let l = setup(addr, &cast.organizer).await?;

    // The league sets the game up; its players come.
    let mut fan = Client::connect(addr, None, Encoding::Json).await?;
    fan.league_subscribe(&l.id, 0).await?;
    let (game, red, black) = loop {
        let (_, kind, v) = fan.league_next().await?;
        if kind == "game_created" {
            break (
                v["game"].as_i64().context("game")?.to_string(),
                v["red"].as_i64().context("red")?,
                v["black"].as_i64().context("black")?,
            );
        }
    };
    // The presence lobby: nobody yet; then Red arrives.
    let lobby = format!("/api/v1/leagues/{}/rounds/1/presence", l.id);
    let presence = |v: &Value, pid: i64| -> Option<String> {
        v["tables"][0]["players"]
            .as_array()?
            .iter()
            .find(|p| p["playerId"] == json!(pid.to_string()))
            .and_then(|p| p["presence"].as_str().map(String::from))
    };
    let (s, v) = http_json(addr, "GET", &lobby, Some(&l.arbiters[0]), None).await?;
    ensure!(s == 200 && v["open"] == json!(true), "presence: {s} {v}");
    assert_eq!(presence(&v, red).as_deref(), Some("not_yet"), "{v}");
    assert_eq!(presence(&v, black).as_deref(), Some("not_yet"), "{v}");
    let (s, _) = http_json(addr, "GET", &lobby, Some(&l.players[&red]), None).await?;
    assert_eq!(s, 403, "a player does not read the lobby");
    // An arbiter's desk gets the lobby pushed when a lined-up player arrives.
    let mut watcher = Client::connect(addr, Some(&l.arbiters[0]), Encoding::Json).await?;
    let req = watcher
        .send(C::ArbiterDeskSubscribe(w::ArbiterDeskSubscribe {
            league_id: l.id.clone(),
        }))
        .await?;
    watcher.reply(req).await?;
    let mut r = Client::connect(addr, Some(&l.players[&red]), Encoding::Json).await?;
    let pushed = watcher
        .expect(|m| match &m.kind {
            Some(server_message::Kind::Presence(p)) => serde_json::from_str::<Value>(&p.json).ok(),
            _ => None,
        })
        .await?;
    assert_eq!(
        presence(&pushed, red).as_deref(),
        Some("connected"),
        "{pushed}"
    );
    watcher.close().await;
    let (_, v) = http_json(addr, "GET", &lobby, Some(&l.arbiters[1]), None).await?;
    assert_eq!(presence(&v, red).as_deref(), Some("connected"), "{v}");
    assert_eq!(presence(&v, black).as_deref(), Some("not_yet"), "{v}");
    let mut b = Client::connect(addr, Some(&l.players[&black]), Encoding::Proto).await?;
    r.subscribe(&game, 0).await?;
    b.subscribe(&game, 0).await?;
    r.event(|e| matches!(e.kind, Some(Kind::Started(_))).then_some(()))
        .await?;
    r.play(&game, 1, "h2e2").await?;
    b.event(moved).await?;
    // A spectator follows the game; two arbiters follow the desk.
    let mut spec = Client::connect(addr, None, Encoding::Json).await?;
    spec.subscribe(&game, 0).await?;
    let mut a1 = Client::connect(addr, Some(&l.arbiters[0]), Encoding::Json).await?;
    let mut a2 = Client::connect(addr, Some(&l.arbiters[1]), Encoding::Proto).await?;
    for a in [&mut a1, &mut a2] {
        let req = a
            .send(C::ArbiterDeskSubscribe(w::ArbiterDeskSubscribe {
                league_id: l.id.clone(),
            }))
            .await?;
        a.reply(req).await?;
    }
    // Nobody else follows the desk.
    let req = spec
        .send(C::ArbiterDeskSubscribe(w::ArbiterDeskSubscribe {
            league_id: l.id.clone(),
        }))
        .await?;
    assert_eq!(spec.error_code(req).await?, "permission_denied");

    // Black calls: the clock stops.
    let req = b
        .send(C::CallArbiter(w::CallArbiter {
            game_id: game.clone(),
            reason: "对方疑似用软件".into(),
        }))
        .await?;
    let call_seq = b.reply(req).await?.seq;
    let called = b
        .event(|e| match &e.kind {
            Some(Kind::ArbiterCalled(c)) => Some(c.clone()),
            _ => None,
        })
        .await?;
    ensure!(
        called.clock_stopped && called.clock.is_some_and(|c| c.paused),
        "{called:?}"
    );
    // The opponent learns of the call, not its words.
    let seen_by_red = r
        .event(|e| match &e.kind {
            Some(Kind::ArbiterCalled(c)) => Some(c.clone()),
            _ => None,
        })
        .await?;
    assert_eq!(seen_by_red.reason, "");
    // Both arbiters see it on their desks, with its words.
    for a in [&mut a1, &mut a2] {
        let ev = a.expect(desk).await?;
        let Some(Kind::ArbiterCalled(c)) = &ev.kind else {
            bail!("{ev:?}")
        };
        assert_eq!((ev.seq, c.reason.as_str()), (call_seq, "对方疑似用软件"));
    }
    // One takes it; the other is told it is taken.
    let req = a1
        .send(C::TakeCall(w::TakeCall {
            game_id: game.clone(),
        }))
        .await?;
    a1.reply(req).await?;
    let req = a2
        .send(C::TakeCall(w::TakeCall {
            game_id: game.clone(),
        }))
        .await?;
    assert_eq!(a2.error_code(req).await?, "call_taken");
    a2.until_pong().await?;
    ensure!(
        a2.seen
            .iter()
            .any(|m| desk(m).is_some_and(|e| matches!(e.kind, Some(Kind::CallTaken(_))))),
        "the other arbiter sees the call taken"
    );

    // Messages both ways.
    let req = a1.send(say(&game, w::Side::Black, "请说明情况")).await?;
    a1.reply(req).await?;
    let got = b
        .event(|e| match &e.kind {
            Some(Kind::Message(m)) => Some(m.text.clone()),
            _ => None,
        })
        .await?;
    assert_eq!(got, "请说明情况");
    let req = b
        .send(say(&game, w::Side::Unspecified, "他每步都用时一样"))
        .await?;
    b.reply(req).await?;
    let got = a2
        .expect(|m| match desk(m)?.kind {
            Some(Kind::Message(m)) if m.from_role == w::Role::Player as i32 => Some(m.text),
            _ => None,
        })
        .await?;
    assert_eq!(got, "他每步都用时一样");
    // No channel between the players, nor to anyone else.
    let req = b.send(say(&game, w::Side::Red, "和棋吧")).await?;
    assert_eq!(b.error_code(req).await?, "messaging_not_allowed");
    let req = r.send(say(&game, w::Side::Black, "好")).await?;
    assert_eq!(r.error_code(req).await?, "messaging_not_allowed");
    let req = spec.send(say(&game, w::Side::Unspecified, "hello")).await?;
    assert_eq!(spec.error_code(req).await?, "messaging_not_allowed");
    // The opponent saw neither the caller's message nor the arbiter's to the caller.
    let before_kill: Vec<_> = r.until_pong().await?;
    for m in before_kill.iter().chain(spec.until_pong().await?.iter()) {
        if let Some(server_message::Kind::Event(e)) = &m.kind {
            ensure!(
                !matches!(e.kind, Some(Kind::Message(_))),
                "a message leaked: {e:?}"
            );
        }
    }
    // The spectator saw stand-ins with contiguous seqs.
    let seqs: Vec<u64> = spec
        .seen
        .iter()
        .filter_map(|m| match &m.kind {
            Some(server_message::Kind::Event(e)) => Some(e.seq),
            _ => None,
        })
        .collect();
    ensure!(seqs.windows(2).all(|p| p[1] == p[0] + 1), "{seqs:?}");
    ensure!(
        spec.seen.iter().all(|m| match &m.kind {
            Some(server_message::Kind::Event(e)) => !matches!(
                e.kind,
                Some(Kind::ArbiterCalled(_) | Kind::CallTaken(_) | Kind::Message(_))
            ),
            _ => true,
        }),
        "the spectator saw the arbiter channel"
    );

    // kill -9 with the call open.
    for c in [r, b, spec, a1, a2, fan] {
        c.close().await;
    }
    server.kill9().await?;
    let server = ChildServer::start(EXE, &db.url).await?;
    let addr = server.addr;

    // The arbiters' queue: the call open, taken, its messages kept.
    let arb = l.arbiters[1].as_str();
    let (s, v) = http_json(
        addr,
        "GET",
        &format!("/api/v1/leagues/{}/calls", l.id),
        Some(arb),
        None,
    )
    .await?;
    ensure!(s == 200, "calls: {s} {v}");
    let calls = v["calls"].as_array().context("calls")?;
    ensure!(calls.len() == 1, "{v}");
    let c = &calls[0];
    assert_eq!(c["gameId"], json!(game));
    assert_eq!(
        (c["round"].clone(), c["board"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(c["side"], json!("black"));
    assert_eq!(c["playerId"], json!(black.to_string()));
    assert_eq!(c["open"], json!(true));
    ensure!(c["takenBy"].is_string(), "{c}");
    ensure!(c["waitingMs"].as_u64().is_some(), "{c}");
    let texts: Vec<&str> = c["messages"]
        .as_array()
        .context("messages")?
        .iter()
        .filter_map(|m| m["text"].as_str())
        .collect();
    assert_eq!(texts, ["请说明情况", "他每步都用时一样"]);
    // Only officials read it.
    let (s, _) = http_json(
        addr,
        "GET",
        &format!("/api/v1/leagues/{}/calls", l.id),
        Some(&l.players[&black]),
        None,
    )
    .await?;
    assert_eq!(s, 403);

    // The clock is still stopped, the call still open.
    let mut b = Client::connect(addr, Some(&l.players[&black]), Encoding::Json).await?;
    b.subscribe(&game, 0).await?;
    let snap = b.expect(snapshot).await?;
    ensure!(snap.clock.is_some_and(|c| c.paused), "{snap:?}");
    assert_eq!(snap.open_call.as_ref().map(|o| o.call_seq), Some(call_seq));
    let mut spec = Client::connect(addr, None, Encoding::Json).await?;
    spec.subscribe(&game, 0).await?;
    let snap = spec.expect(snapshot).await?;
    ensure!(
        snap.open_call.is_none(),
        "a spectator's snapshot shows the call"
    );
    // A move is refused while the call stops the clock.
    let req = b.send_move(&game, 2, "h9g7").await?;
    assert_eq!(b.error_code(req).await?, "game_paused");

    // The arbiter who took it adds time, resumes and closes it.
    let mut a1 = Client::connect(addr, Some(&l.arbiters[0]), Encoding::Json).await?;
    let arbiter = |reason: &str, action: w::arbiter_command::Action| {
        C::Arbiter(w::ArbiterCommand {
            game_id: game.clone(),
            reason: reason.into(),
            action: Some(action),
        })
    };
    let add = w::arbiter_command::Action::AddTime(w::AddTime {
        side: w::Side::Black as i32,
        delta_ms: 60_000,
    });
    let req = a1.send(arbiter("补时", add)).await?;
    a1.reply(req).await?;
    let req = a1
        .send(arbiter(
            "继续",
            w::arbiter_command::Action::Resume(w::ResumeGame {}),
        ))
        .await?;
    a1.reply(req).await?;
    let req = a1
        .send(C::CloseCall(w::CloseCall {
            game_id: game.clone(),
            decision: "无证据，继续比赛".into(),
        }))
        .await?;
    a1.reply(req).await?;
    b.play(&game, 2, "h9g7").await?;

    // The log: call, messages and the decision, in order.
    let (s, v) = http_json(
        addr,
        "GET",
        &format!("/api/v1/games/{game}/events"),
        Some(arb),
        None,
    )
    .await?;
    ensure!(s == 200, "events: {s} {v}");
    let kinds: Vec<String> = v["events"]
        .as_array()
        .context("events")?
        .iter()
        .map(label)
        .collect();
    let from = kinds
        .iter()
        .position(|k| k == "arbiterCalled")
        .context("the call")?;
    assert_eq!(
        kinds[from..],
        [
            "arbiterCalled",
            "callTaken",
            "message",
            "message",
            "serverRestarted",
            "clockAdjusted",
            "resumed",
            "callClosed",
            "move"
        ]
    );
    let (_, v) = http_json(
        addr,
        "GET",
        &format!("/api/v1/leagues/{}/calls?all=true", l.id),
        Some(arb),
        None,
    )
    .await?;
    assert_eq!(v["calls"][0]["decision"], json!("无证据，继续比赛"));
    assert_eq!(v["calls"][0]["open"], json!(false));

    for c in [b, spec, a1] {
        c.close().await;
    }
    server.kill9().await?;
    db.drop_db().await;
    Ok(())
}
