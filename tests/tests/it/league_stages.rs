//! Multi-stage events over real websockets and HTTP (SQLite, and PostgreSQL when
//! `CHUHE_TEST_DATABASE_URL` is set): `examples/league-two-stages.toml` — a single round robin
//! of 4 teams, then its first two in a final — created, published and played live to the
//! final's result, every game ended by its players over the websocket.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;

use anyhow::{Context, Result, bail, ensure};
use chuhe_e2e::*;
use chuhe_proto::Encoding;
use chuhe_proto::v1::{self as w, client_message, game_event};
use chuhe_server::Config;
use serde_json::{Value, json};
use tokio::task::JoinSet;

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The committed example, its rounds moved an hour ahead (the test brings each one to "now"
/// when it is ready for it) and its lineups due 30 minutes before each start.
fn example() -> Result<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/league-two-stages.toml"
    );
    let text = std::fs::read_to_string(path)?;
    let mut v: Value = toml::from_str(&text)?;
    v["schedule"] = json!({"first_round": (now_ms() + 3_600_000).to_string(), "every": "1h"});
    v["lineup"]["deadline_before"] = json!("30m");
    Ok(v)
}

/// Its player's connection to a game, subscribed with its token.
async fn join(addr: SocketAddr, token: &str, game: &str) -> Result<Client> {
    let mut c = Client::connect(addr, Some(token), Encoding::Json).await?;
    c.subscribe(game, 0).await?;
    c.expect(snapshot).await?;
    Ok(c)
}

/// Both players join; once the clocks run, `loser` resigns; both see the end.
async fn play(addr: SocketAddr, game: String, players: [String; 2], loser: usize) -> Result<()> {
    let r: Result<()> = async {
        let mut red = join(addr, &players[0], &game).await?;
        let mut black = join(addr, &players[1], &game).await?;
        red.event(|e| matches!(e.kind, Some(game_event::Kind::Started(_))).then_some(()))
            .await?;
        let p = if loser == 0 { &mut red } else { &mut black };
        let req = p
            .send(client_message::Kind::Resign(w::Resign {
                game_id: game.clone(),
            }))
            .await?;
        p.reply(req).await?;
        let (result, reason) = red.event(ended).await?;
        let want = if loser == 0 {
            w::Result::BlackWins
        } else {
            w::Result::RedWins
        };
        ensure!(
            (result, reason.as_str()) == (want, "resign"),
            "{result:?} by {reason}"
        );
        red.close().await;
        black.close().await;
        Ok(())
    }
    .await;
    r.with_context(|| format!("game {game}"))
}

/// What the league's stream said so far.
#[derive(Default)]
struct Events {
    /// Each round's matches, [first, second].
    tables: BTreeMap<u32, Vec<[usize; 2]>>,
    stage_started: Option<Value>,
    /// Each game set up: (round, table, board), its start, its first team's colour.
    games: Vec<((u32, u32, u32), u64, String)>,
}

/// Brings `round` to now (the lineups close at once: the registered order plays; the clocks
/// start 1.5 s later) and plays every game the league sets up for it — `first_wins(first,
/// second)` says on every board whose player wins (the other resigns) — until the round is
/// complete.
#[allow(clippy::too_many_arguments)]
async fn play_round(
    addr: SocketAddr,
    fan: &mut Client,
    league: &str,
    org: &str,
    tokens: &HashMap<i64, String>,
    round: u32,
    ev: &mut Events,
    first_wins: impl Fn(usize, usize) -> bool,
) -> Result<()> {
    let now = now_ms();
    let body =
        json!({"start": (now + 1_500).to_string(), "lineup_deadline": (now + 200).to_string()});
    let (s, v) = http_json(
        addr,
        "POST",
        &format!("{league}/rounds/{round}/reschedule"),
        Some(org),
        Some(&body),
    )
    .await?;
    ensure!(s == 200, "reschedule round {round}: {s} {v}");
    let mut games = JoinSet::new();
    loop {
        let (_, kind, v) = fan.league_next().await?;
        match kind.as_str() {
            "round_paired" => {
                let r = v["round"].as_u64().context("round")? as u32;
                ev.tables
                    .insert(r, serde_json::from_value(v["tables"].clone())?);
            }
            "stage_started" => ev.stage_started = Some(v.clone()),
            "game_created" => {
                let at = &v["at"];
                ensure!(at["round"] == round, "a game of another round: {v}");
                let t = at["table"].as_u64().context("table")? as u32;
                let b = at["board"].as_u64().context("board")? as u32;
                let [first, second] = ev.tables[&round][t as usize - 1];
                let colour = v["first_colour"].as_str().context("first_colour")?;
                ev.games.push((
                    (round, t, b),
                    v["start_ms"].as_u64().context("start_ms")?,
                    colour.to_string(),
                ));
                // The loser's colour: 0 red, 1 black.
                let loser = usize::from(first_wins(first, second) == (colour == "red"));
                let red = tokens[&v["red"].as_i64().context("red")?].clone();
                let black = tokens[&v["black"].as_i64().context("black")?].clone();
                let game = v["game"].as_i64().context("game")?.to_string();
                games.spawn(play(addr, game, [red, black], loser));
            }
            "round_completed" if v["round"] == round => break,
            "round_completed" => bail!("round {} completed during round {round}", v["round"]),
            _ => {}
        }
    }
    while let Some(r) = games.join_next().await {
        r??;
    }
    Ok(())
}

/// The server on a fresh database with a league made from `spec`, published: its path, its
/// players' tokens (by account id), and a spectator following its stream.
async fn league_of(
    backend: &str,
    spec: &Value,
) -> Result<(TestDb, Server, Cast, String, HashMap<i64, String>, Client)> {
    let (db, server, cast) = start_seeded(backend, Config::default()).await?;
    let addr = server.addr;
    let org = cast.organizer.as_str();
    let (id, issued) = published_league(addr, org, spec).await?;
    let path = format!("/api/v1/leagues/{id}");
    let mut tokens = HashMap::new();
    for t in &issued {
        if t["role"] == "player" {
            let pid: i64 = t["principalId"].as_str().context("principalId")?.parse()?;
            tokens.insert(pid, t["token"].as_str().context("token")?.to_string());
        }
    }
    let mut fan = Client::connect(addr, None, Encoding::Json).await?;
    fan.league_subscribe(&id, 0).await?;
    Ok((db, server, cast, path, tokens, fan))
}

#[tokio::test]
async fn a_two_stage_event_runs_live_to_its_final() -> Result<()> {
    for b in backends() {
        two_stages(b).await.with_context(|| format!("on {b}"))?;
    }
    Ok(())
}

async fn two_stages(backend: &str) -> Result<()> {
    let (db, server, cast, league, tokens, mut fan) = league_of(backend, &example()?).await?;
    let (addr, org) = (server.addr, cast.organizer.as_str());
    let path = |rest: &str| format!("{league}{rest}");

    // Published: the group's three rounds, all of stage 1; the final waits for them.
    let (_, sum) = http_json(addr, "GET", &path(""), None, None).await?;
    assert_eq!(sum["system"], "stages", "{sum}");
    assert_eq!(sum["rounds"].as_array().map(Vec::len), Some(3), "{sum}");
    assert!(
        sum["rounds"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["stage"] == 1)
    );
    assert_eq!(sum["stages"][1]["name"], "决赛");
    assert_eq!(sum["stages"][1]["teams"], Value::Null, "not begun");
    let (s, v) = http_json(
        addr,
        "POST",
        &path("/commands"),
        Some(org),
        Some(&json!({"command": "start_next_stage"})),
    )
    .await?;
    assert_eq!(
        (s, v["code"].as_str()),
        (409, Some("stage_not_complete")),
        "{v}"
    );

    // Each round: on every board the team listed earlier in the file wins — except in the
    // final, which the second seed wins.
    let mut ev = Events::default();
    for round in 1..=4u32 {
        let first_wins =
            |first: usize, second: usize| if round == 4 { false } else { first < second };
        play_round(
            addr, &mut fan, &league, org, &tokens, round, &mut ev, first_wins,
        )
        .await?;
        if round == 3 {
            // The group is complete: its first two go on, seeded by its standings.
            let (_, kind, v) = fan.league_next().await?;
            ensure!(kind == "stage_started", "{kind} {v}");
            ev.stage_started = Some(v);
        }
    }
    let (stage_started, tables) = (ev.stage_started, ev.tables);
    let started = stage_started.context("no stage_started")?;
    assert_eq!(started["stage"], 2);
    assert_eq!(
        started["teams"],
        json!([0, 1]),
        "东城 and 西城, in the group's order"
    );
    assert_eq!(tables[&4], vec![[0, 1]], "the final: seed 1 listed first");

    // The final's result, the stages, and the group's standings.
    let (_, sum) = http_json(addr, "GET", &path(""), None, None).await?;
    let rounds = sum["rounds"].as_array().context("rounds")?;
    assert_eq!(rounds.len(), 4);
    assert_eq!(rounds[3]["stage"], 2);
    assert_eq!(rounds[3]["tables"][0]["stage"], 2);
    assert_eq!(
        rounds[3]["tables"][0]["matchPoints"],
        json!(["0", "2"]),
        "{}",
        rounds[3]
    );
    assert!(rounds.iter().all(|r| r["completed"] == true));
    assert_eq!(sum["stages"][0]["complete"], true);
    assert_eq!(sum["stages"][1]["complete"], true);
    assert_eq!(sum["stages"][1]["winner"], 1, "西城 won the final");
    assert_eq!(sum["stages"][1]["rounds"], json!([4]));
    assert_eq!(sum["currentStage"], 2);
    let (s, st) = http_json(addr, "GET", &path("/standings"), None, None).await?;
    assert_eq!(s, 200, "{st}");
    assert_eq!(st["stage"], 1);
    let order: Vec<&str> = st["rows"]
        .as_array()
        .context("rows")?
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(order, ["东城", "西城", "南城", "北城"]);
    assert_eq!(st["rows"][0]["matchPoints"], "6", "{st}");
    let (s, v) = http_json(addr, "GET", &path("/standings?stage=2"), None, None).await?;
    assert_eq!((s, v["code"].as_str()), (409, Some("no_standings")), "{v}");
    // The final as its own results file: two teams, one round.
    let (s, ex) = http_json(addr, "GET", &path("/export?stage=2"), None, None).await?;
    assert_eq!(s, 200, "{ex}");
    assert_eq!(ex["system"], "knockout");
    assert_eq!(ex["teams"].as_array().map(Vec::len), Some(2));
    assert_eq!(ex["matches"][0]["round"], 1);
    assert_eq!(
        ex["result_chain"]["stages"].as_array().map(Vec::len),
        Some(3)
    );
    fan.close().await;
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn an_all_play_all_match_runs_live_sub_round_by_sub_round() -> Result<()> {
    for b in backends() {
        all_play_all(b).await.with_context(|| format!("on {b}"))?;
    }
    Ok(())
}

/// 12.4: two teams of the example, one match of 2 × 2 players: the second sub-round's games are
/// set up once the first's have ended, each pair meets once, and the match is won on the 局分
/// of all four games.
async fn all_play_all(backend: &str) -> Result<()> {
    let mut spec = example()?;
    let o = spec.as_object_mut().context("object")?;
    o.remove("stages");
    o.insert("system".into(), json!("round_robin"));
    o.insert("legs".into(), json!(1));
    o.insert("break_between_games".into(), json!("1s"));
    spec["lineup"]["system"] = json!("all_play_all");
    spec["teams"].as_array_mut().context("teams")?.truncate(2);
    let (db, server, cast, league, tokens, mut fan) = league_of(backend, &spec).await?;
    let (addr, org) = (server.addr, cast.organizer.as_str());
    let mut ev = Events::default();
    // The first-listed team wins every game but the last one.
    let played = std::sync::atomic::AtomicU32::new(0);
    let first_wins =
        |_: usize, _: usize| played.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 3;
    play_round(
        addr, &mut fan, &league, org, &tokens, 1, &mut ev, first_wins,
    )
    .await?;
    let boards: Vec<u32> = ev.games.iter().map(|g| g.0.2).collect();
    assert_eq!(boards, [1, 2, 3, 4], "sub-round 1, then sub-round 2");
    let colours: Vec<&str> = ev.games.iter().map(|g| g.2.as_str()).collect();
    assert_eq!(
        colours,
        ["red", "black", "red", "black"],
        "13.2 by game number"
    );
    assert!(
        ev.games[2].1 > ev.games[1].1 && ev.games[3].1 > ev.games[0].1,
        "sub-round 2 starts after sub-round 1: {:?}",
        ev.games
    );
    let (s, m) = http_json(
        addr,
        "GET",
        &format!("{league}/rounds/1/tables/1"),
        None,
        None,
    )
    .await?;
    assert_eq!(s, 200, "{m}");
    let bs = m["boards"].as_array().context("boards")?;
    assert_eq!(bs.len(), 4);
    let mut pairs = std::collections::BTreeSet::new();
    for b in bs {
        let g = &b["games"][0];
        pairs.insert(format!(
            "{} {} {}",
            g["redId"], g["blackId"], g["firstColour"]
        ));
    }
    assert_eq!(pairs.len(), 4, "four different games: {m}");
    // 3 games won and 1 lost, 2-1-0: 局分 6–2; the match 2–0.
    assert_eq!(m["gamePoints"], json!(["6", "2"]), "{m}");
    assert_eq!(m["matchPoints"], json!(["2", "0"]), "{m}");
    fan.close().await;
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

#[tokio::test]
async fn a_total_score_event_ranks_its_teams_by_rank_sums() -> Result<()> {
    for b in backends() {
        total_score(b).await.with_context(|| format!("on {b}"))?;
    }
    Ok(())
}

/// 12.5: two teams of two entrants play their match; the first-listed team's players win both
/// games, so they rank 1–2 individually (rank sum 3) and the others 3–4 (7).
async fn total_score(backend: &str) -> Result<()> {
    let mut spec = example()?;
    let o = spec.as_object_mut().context("object")?;
    o.remove("stages");
    o.insert("system".into(), json!("round_robin"));
    o.insert("legs".into(), json!(1));
    spec["lineup"]["system"] = json!("total_score");
    let teams = spec["teams"].as_array_mut().context("teams")?;
    teams.truncate(2);
    for t in teams {
        t["players"].as_array_mut().context("players")?.truncate(2);
    }
    let (db, server, cast, league, tokens, mut fan) = league_of(backend, &spec).await?;
    let (addr, org) = (server.addr, cast.organizer.as_str());
    let mut ev = Events::default();
    play_round(addr, &mut fan, &league, org, &tokens, 1, &mut ev, |a, b| {
        a < b
    })
    .await?;
    let (s, st) = http_json(addr, "GET", &format!("{league}/standings"), None, None).await?;
    assert_eq!(s, 200, "{st}");
    assert_eq!(st["lineupSystem"], "total_score");
    let rows: Vec<(Value, Value)> = st["rows"]
        .as_array()
        .context("rows")?
        .iter()
        .map(|r| (r["name"].clone(), r["rankSum"].clone()))
        .collect();
    assert_eq!(
        rows,
        [(json!("东城"), json!(3)), (json!("西城"), json!(7))],
        "{st}"
    );
    assert_eq!(st["rows"][1]["decidedBy"], "rank_sum");
    assert_eq!(st["players"].as_array().map(Vec::len), Some(4));
    let (s, text) = http(
        addr,
        "GET",
        &format!("{league}/standings?format=text"),
        None,
        None,
    )
    .await?;
    assert_eq!(s, 200, "{text}");
    assert!(
        text.contains("队员总分制") && text.contains("甲一"),
        "{text}"
    );
    fan.close().await;
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}
