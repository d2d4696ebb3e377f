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

fn presence_of(m: &w::ServerMessage) -> Option<Value> {
    match &m.kind {
        Some(server_message::Kind::Presence(p)) => serde_json::from_str(&p.json).ok(),
        _ => None,
    }
}

fn league_message(m: &w::ServerMessage) -> Option<w::LeagueMessage> {
    match &m.kind {
        Some(server_message::Kind::LeagueMessage(x)) => Some(x.clone()),
        _ => None,
    }
}

/// The presence of account `pid` in a presence body.
fn presence_word(v: &Value, pid: i64) -> Option<String> {
    v["tables"].as_array()?.iter().find_map(|t| {
        t["players"].as_array()?.iter().find_map(|p| {
            (p["playerId"] == json!(pid.to_string()))
                .then(|| p["presence"].as_str().unwrap_or("").to_string())
        })
    })
}

/// Before the round: a captain follows the presence lobby and sees a lined-up player of the
/// match arrive (players and spectators may not follow it); an arbiter's messages reach the
/// captains of a team or everyone of the event, live and over HTTP, never a spectator; a game
/// outside any league created with call settings takes calls, one without does not.
#[tokio::test]
async fn the_lobby_reaches_captains_and_arbiters_message_captains_and_the_event() -> Result<()> {
    let (db, server, cast) = start_seeded("sqlite", chuhe_server::Config::default()).await?;
    let addr = server.addr;
    let org = &cast.organizer;
    let (id, tokens) = published_league(addr, org, &spec()).await?;
    let tok = |role: &str, team: i64, n: usize| -> Result<(i64, String)> {
        let t = tokens
            .iter()
            .filter(|t| t["role"] == json!(role) && (role == "arbiter" || t["team"] == json!(team)))
            .nth(n)
            .context("token")?;
        Ok((
            t["principalId"].as_str().context("id")?.parse()?,
            t["token"].as_str().context("token")?.to_string(),
        ))
    };
    let (_, captain0) = tok("captain", 0, 0)?;
    let (_, captain1) = tok("captain", 1, 0)?;
    let (p0, player0) = tok("player", 0, 0)?;
    let (_, player1) = tok("player", 1, 0)?;
    let (_, arb) = tok("arbiter", 0, 0)?;
    let (_, arb2) = tok("arbiter", 0, 1)?;

    // The lineups are due now (the registered order), the round an hour ahead: the lobby
    // (30 minutes by default) is not open yet — then the round moves to 20 minutes ahead.
    let mut fan = Client::connect(addr, None, Encoding::Json).await?;
    fan.league_subscribe(&id, 0).await?;
    let now = now_ms();
    let body = json!({"start": (now + 1_200_000).to_string(), "lineup_deadline": now.to_string()});
    let (s, v) = http_json(
        addr,
        "POST",
        &format!("/api/v1/leagues/{id}/rounds/1/reschedule"),
        Some(org),
        Some(&body),
    )
    .await?;
    ensure!(s == 200, "reschedule: {s} {v}");
    loop {
        let (_, kind, _) = fan.league_next().await?;
        if kind == "lineups_revealed" {
            break;
        }
    }

    // Who may follow the lobby.
    for (token, enc) in [(Some(&player1), Encoding::Json), (None, Encoding::Proto)] {
        let mut c = Client::connect(addr, token.map(|t| t.as_str()), enc).await?;
        let r = c
            .send(C::LobbySubscribe(w::LobbySubscribe {
                league_id: id.clone(),
            }))
            .await?;
        ensure!(c.error_code(r).await? == "permission_denied");
    }
    let mut cap = Client::connect(addr, Some(&captain0), Encoding::Json).await?;
    let r = cap
        .send(C::LobbySubscribe(w::LobbySubscribe {
            league_id: id.clone(),
        }))
        .await?;
    cap.reply(r).await?;
    let first = cap.expect(presence_of).await?;
    ensure!(
        presence_word(&first, p0).as_deref() == Some("not_yet"),
        "{first}"
    );
    // Board 1 of the captain's team connects: the captain hears of it.
    let mut p = Client::connect(addr, Some(&player0), Encoding::Json).await?;
    let now_here = cap
        .expect(|m| presence_of(m).filter(|v| presence_word(v, p0).as_deref() == Some("connected")))
        .await?;
    ensure!(now_here["round"] == json!(1));

    // An arbiter's message to the captains of team 0: the captain gets it, the other team's
    // captain and the player do not.
    let mut cap1 = Client::connect(addr, Some(&captain1), Encoding::Json).await?;
    let cmd = |team: Option<usize>, text: &str| {
        let mut b = json!({"command": "message", "text": text});
        if let Some(t) = team {
            b["team"] = json!(t);
        }
        b
    };
    let path = format!("/api/v1/leagues/{id}/commands");
    let (s, v) = http_json(
        addr,
        "POST",
        &path,
        Some(&arb),
        Some(&cmd(Some(0), "请甲队领队到裁判席")),
    )
    .await?;
    ensure!(s == 200, "message: {s} {v}");
    let m = cap.expect(league_message).await?;
    ensure!(
        !m.whole_event && m.team == 0 && m.text == "请甲队领队到裁判席" && m.from_name == "裁判长",
        "{m:?}"
    );
    // Too soon for the same arbiter; a player may not send one.
    let (s, v) = http_json(addr, "POST", &path, Some(&arb), Some(&cmd(None, "again"))).await?;
    ensure!(
        s == 429 && v["code"] == json!("message_rate_limited"),
        "{s} {v}"
    );
    let (s, v) = http_json(addr, "POST", &path, Some(&player0), Some(&cmd(None, "hi"))).await?;
    ensure!(
        s == 403 && v["code"] == json!("permission_denied"),
        "{s} {v}"
    );
    // The other arbiter to everyone: the player and both captains get it.
    let (s, v) = http_json(
        addr,
        "POST",
        &path,
        Some(&arb2),
        Some(&cmd(None, "第一轮推迟十分钟")),
    )
    .await?;
    ensure!(s == 200, "message: {s} {v}");
    for c in [&mut p, &mut cap1, &mut cap] {
        let m = c.expect(league_message).await?;
        ensure!(m.whole_event && m.text == "第一轮推迟十分钟", "{m:?}");
    }
    for c in [&mut p, &mut cap1] {
        ensure!(
            !c.seen
                .iter()
                .filter_map(league_message)
                .any(|m| !m.whole_event),
            "a team's message reached someone else"
        );
    }
    ensure!(
        fan.until_pong()
            .await?
            .iter()
            .all(|m| league_message(m).is_none())
    );
    // Afterwards over HTTP: the arbiters all, a captain the event's and its team's, the other
    // team's captain only the event's, a spectator nothing.
    let read = |token: Option<String>| {
        let path = format!("/api/v1/leagues/{id}/messages");
        async move { http_json(addr, "GET", &path, token.as_deref(), None).await }
    };
    let texts = |v: &Value| -> Vec<String> {
        v["messages"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|m| m["text"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let (s, v) = read(Some(arb.clone())).await?;
    ensure!(
        s == 200 && texts(&v) == ["请甲队领队到裁判席", "第一轮推迟十分钟"],
        "{s} {v}"
    );
    let (_, v) = read(Some(captain0.clone())).await?;
    ensure!(texts(&v).len() == 2, "{v}");
    let (_, v) = read(Some(captain1.clone())).await?;
    ensure!(texts(&v) == ["第一轮推迟十分钟"], "{v}");
    let (s, _) = read(None).await?;
    ensure!(s == 401, "a spectator: {s}");
    // The log keeps them, with who sent them.
    let (_, log) = http_json(
        addr,
        "GET",
        &format!("/api/v1/leagues/{id}/log"),
        Some(org),
        None,
    )
    .await?;
    let kinds: Vec<&str> = log["entries"]
        .as_array()
        .context("entries")?
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .filter(|k| *k == "arbiter_message")
        .collect();
    ensure!(kinds.len() == 2, "{log}");

    // A game outside any league: with call settings its player calls; without, refused.
    let with = create_game(addr, &cast, "10m+5s", "", r#","calls":{}"#).await?;
    let without = create_game(addr, &cast, "10m+5s", "", "").await?;
    let mut red = Client::connect(addr, Some(&cast.red), Encoding::Json).await?;
    red.subscribe(&with, 0).await?;
    let call = |game: &str| {
        C::CallArbiter(w::CallArbiter {
            game_id: game.into(),
            reason: "clock fault".into(),
        })
    };
    let r = red.send(call(&with)).await?;
    red.reply(r).await?;
    let r = red.send(call(&without)).await?;
    ensure!(red.error_code(r).await? == "calls_not_allowed");
    let mut a = Client::connect(addr, Some(&cast.arbiter), Encoding::Json).await?;
    a.subscribe(&with, 0).await?;
    let r = a
        .send(C::TakeCall(w::TakeCall {
            game_id: with.clone(),
        }))
        .await?;
    a.reply(r).await?;

    server.stop().await?;
    db.drop_db().await;
    Ok(())
}
