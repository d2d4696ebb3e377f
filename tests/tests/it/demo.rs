//! `--demo` (issue 17 item 4, issue 19 item 8): the demo run twice on one SQLite file reuses
//! its accounts, games and league; the games listed at `/` have moves being made; the demo
//! league's first round runs (a board game gets moves) and its standings read.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use anyhow::{Context, Result};
use chuhe_e2e::*;
use chuhe_proto::Encoding;
use chuhe_proto::v1::{self as w, client_message, server_message};
use chuhe_server::Config;
use chuhe_server::demo::{self, Demo, Pace, Started};

/// A quick demo league: round 1 two seconds after the start, bots that think 50–150 ms.
fn pace() -> Pace {
    Pace {
        lead_ms: 2_000,
        every_ms: 600_000,
        deadline_before_ms: 1_000,
        open_before_ms: 1_000,
        break_ms: 500,
        choose_within_ms: 2_000,
        think_ms: (50, 150),
        casual_think_ms: (50, 150),
        ..Pace::default()
    }
}

/// Seeds the demo and starts the server with it; also the games unfinished just after the
/// seeding (before the server could set up any league game).
async fn start(db: &TestDb) -> Result<(Server, demo::DemoCast, Started, BTreeSet<i64>)> {
    start_with(db, pace()).await
}

async fn start_with(
    db: &TestDb,
    pace: Pace,
) -> Result<(Server, demo::DemoCast, Started, BTreeSet<i64>)> {
    let p = db.persist().await?;
    let cast = demo::seed(p.as_ref()).await?;
    let unfinished = p.unfinished_games().await?.into_iter().collect();
    let (tx, mut rx) = tokio::sync::mpsc::channel(1);
    let config = Config {
        demo: Some(Demo {
            organizer: cast.organizer.id,
            bot_pairs: cast.bot_games.iter().map(|g| (g.1, g.2)).collect(),
            pace,
            started: Some(tx),
        }),
        ..Config::default()
    };
    let server = Server::start(p, config).await?;
    let started = tokio::time::timeout(TIMEOUT, rx.recv())
        .await
        .context("the demo league did not start")?
        .context("the demo stopped")?;
    Ok((server, cast, started, unfinished))
}

async fn get(server: &Server, path: &str) -> Result<serde_json::Value> {
    let (status, body) = http(server.addr, "GET", path, None, None).await?;
    anyhow::ensure!(status == 200, "GET {path}: {status} {body}");
    Ok(serde_json::from_str(&body)?)
}

/// Waits for a move in `game`, seen by a spectator.
async fn sees_a_move(server: &Server, game: &str) -> Result<String> {
    let mut c = Client::connect(server.addr, None, Encoding::Proto).await?;
    c.subscribe(game, 0).await?;
    c.event(moved)
        .await
        .with_context(|| format!("no move in game {game}"))
}

/// The demo leagues the server lists.
async fn demo_leagues(server: &Server) -> Result<Vec<serde_json::Value>> {
    let v = get(server, "/api/v1/leagues").await?;
    Ok(v["leagues"]
        .as_array()
        .context("no leagues")?
        .iter()
        .filter(|l| demo::is_demo_league(l["name"].as_str().unwrap_or("")))
        .cloned()
        .collect())
}

#[tokio::test]
async fn the_demo_runs_twice_on_one_database_and_its_games_and_league_are_alive() -> Result<()> {
    let db = TestDb::new("sqlite").await?;
    let (server, first, started, _) = start(&db).await?;

    // Every game listed at `/`, but the humans' (its clocks wait for them), has moves being
    // made: the bots' casual games at once, the league's from round 1's start.
    let listed = get(&server, "/api/v1/games").await?;
    let ids: Vec<String> = listed["games"]
        .as_array()
        .context("no games")?
        .iter()
        .map(|g| g["gameId"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        ids.contains(&first.game_for_players.to_string()),
        "{listed}"
    );
    for (game, _, _) in &first.bot_games {
        assert!(ids.contains(&game.to_string()), "{listed}");
    }
    for id in ids
        .iter()
        .filter(|id| **id != first.game_for_players.to_string())
    {
        sees_a_move(&server, id).await?;
    }

    // The league: one, published, with its captains' tokens; round 1 is played.
    let leagues = demo_leagues(&server).await?;
    assert_eq!(leagues.len(), 1, "{leagues:?}");
    assert_eq!(leagues[0]["id"], started.league.to_string());
    assert_eq!(leagues[0]["published"], true);
    assert_eq!(leagues[0]["demo"], true);
    assert_eq!(leagues[0]["teams"], 4);
    assert_eq!(leagues[0]["rounds"], 6);
    assert_eq!(started.captains.len(), 4);
    let league = started.league.to_string();
    let mut fan = Client::connect(server.addr, None, Encoding::Proto).await?;
    let r = fan
        .send(client_message::Kind::LeagueSubscribe(w::LeagueSubscribe {
            league_id: league.clone(),
            last_seq: 0,
            feed: false,
        }))
        .await?;
    fan.reply(r).await?;
    // Round 1's board games are set up once both (bot) lineups are revealed.
    fan.expect(|m| match &m.kind {
        Some(server_message::Kind::League(u)) if u.kind == "game_created" => Some(()),
        _ => None,
    })
    .await?;
    let table = get(
        &server,
        &format!("/api/v1/leagues/{league}/rounds/1/tables/1"),
    )
    .await?;
    for (side, how) in [(0, "submitted"), (1, "submitted")] {
        assert_eq!(table["lineups"][side]["how"], how, "{table}");
    }
    let game = table["boards"][0]["games"][0]["gameId"]
        .as_str()
        .context("board 1 has no game")?
        .to_string();
    sees_a_move(&server, &game).await?;
    let standings = get(&server, &format!("/api/v1/leagues/{league}/standings")).await?;
    assert_eq!(
        standings["rows"].as_array().map(Vec::len),
        Some(4),
        "{standings}"
    );
    server.stop().await?;

    let before: BTreeSet<i64> = db
        .persist()
        .await?
        .unfinished_games()
        .await?
        .into_iter()
        .collect();

    // Again, on the same database.
    let (server, second, again, now) = start(&db).await?;
    for (a, b) in [
        (&first.red, &second.red),
        (&first.black, &second.black),
        (&first.arbiter, &second.arbiter),
        (&first.organizer, &second.organizer),
    ] {
        assert_eq!((a.id, &a.name), (b.id, &b.name));
    }
    assert_eq!(first.game_for_players, second.game_for_players);
    let p = db.persist().await?;
    for (a, b) in first.bot_games.iter().zip(&second.bot_games) {
        // The same game, or (when the bots finished it meanwhile) the next one.
        if a.0 != b.0 {
            let old = p.game(a.0).await?.context("the old game")?;
            assert!(old.is_finished(), "game {} left unfinished", a.0);
        }
    }
    // No new game beside an unfinished one: every game unfinished after the second seeding
    // was unfinished before it, or replaces a bot game that has finished.
    let replacing: BTreeSet<i64> = first
        .bot_games
        .iter()
        .zip(&second.bot_games)
        .filter(|(a, b)| a.0 != b.0)
        .map(|(_, b)| b.0)
        .collect();
    for g in &now {
        assert!(
            before.contains(g) || replacing.contains(g),
            "game {g} is new beside {before:?}"
        );
    }
    // The same league carries on; still only one.
    assert_eq!(again.league, started.league);
    assert_eq!(demo_leagues(&server).await?.len(), 1);
    sees_a_move(&server, &second.bot_games[0].0.to_string()).await?;
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

/// A demo season whose next round comes too soon at a restart (here: before its lineups
/// could be submitted and its games set up; after a long stop: all its rounds in the past) has
/// its unstarted rounds moved, as its organizer would, before the league's driver starts —
/// instead of every overdue round starting at once.
#[tokio::test]
async fn a_demo_round_due_while_the_server_was_stopped_is_moved_not_started_at_once() -> Result<()>
{
    let db = TestDb::new("sqlite").await?;
    let slow = Pace {
        lead_ms: 20_000,
        ..pace()
    };
    let (server, cast, started, _) = start_with(&db, slow.clone()).await?;
    server.stop().await?;
    let p = db.persist().await?;
    let before = p.competition_events(started.league, 0).await?.len();

    // Restarted with a lead of a minute: round 1 (due in under 20 s) is too soon.
    let restart = Pace {
        lead_ms: 60_000,
        ..slow
    };
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis() as u64;
    let (server, _, again, _) = start_with(&db, restart.clone()).await?;
    assert_eq!(again.league, started.league);
    let log = p.competition_events(started.league, before as u64).await?;
    let moved: Vec<serde_json::Value> = log
        .iter()
        .filter(|e| e.kind == "round_rescheduled")
        .map(|e| serde_json::from_str(&e.payload).unwrap())
        .collect();
    assert_eq!(moved.len(), 6, "every unstarted round is moved: {log:?}");
    for (k, m) in moved.iter().enumerate() {
        assert_eq!(m["round"], k as u64 + 1);
        let start = m["start_ms"].as_u64().unwrap();
        assert!(start >= at + restart.lead_ms, "{m}");
        assert!(
            start <= at + restart.lead_ms + 60_000 + k as u64 * restart.every_ms,
            "{m}"
        );
        assert_eq!(
            m["deadline_ms"].as_u64().unwrap(),
            start - restart.deadline_before_ms
        );
    }
    for e in log.iter().filter(|e| e.kind == "round_rescheduled") {
        assert_eq!(
            e.actor.map(|a| a.0),
            Some(cast.organizer.id),
            "as its organizer"
        );
    }
    // No game of the league exists yet: nothing started at once.
    assert!(log.iter().all(|e| e.kind != "game_created"), "{log:?}");
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}

/// The demo league's chain runs to its armageddon: a drawn slow and fast game on a board, the
/// chooser's bot picks a colour itself (not the default at the deadline), and the armageddon is
/// set up. Random play draws most slow games (dead position, move limit); with bots that move
/// in 5–15 ms the first armageddon choice came after ~13 s here. Bounded at 180 s.
#[tokio::test]
async fn the_demo_leagues_bot_chooses_the_armageddon_colour() -> Result<()> {
    let db = TestDb::new("sqlite").await?;
    let quick = Pace {
        think_ms: (5, 15),
        break_ms: 200,
        ..pace()
    };
    let (server, _, started, _) = start_with(&db, quick).await?;
    let mut fan = Client::connect(server.addr, None, Encoding::Proto).await?;
    let r = fan
        .send(client_message::Kind::LeagueSubscribe(w::LeagueSubscribe {
            league_id: started.league.to_string(),
            last_seq: 0,
            feed: false,
        }))
        .await?;
    fan.reply(r).await?;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(180);
    let mut chosen: Option<serde_json::Value> = None;
    loop {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "no armageddon within 180 s (chosen: {chosen:?})"
        );
        let Some(server_message::Kind::League(u)) = fan.recv().await?.kind else {
            continue;
        };
        let v: serde_json::Value = serde_json::from_str(&u.json)?;
        match u.kind.as_str() {
            "colour_chosen" if chosen.is_none() => {
                assert_eq!(v["by_default"], false, "the bot chose: {v}");
                chosen = Some(v);
            }
            "game_created" if v["stage"] == 2 => {
                let c = chosen.as_ref().context("an armageddon before any choice")?;
                if v["at"] == c["at"] {
                    break;
                }
            }
            _ => {}
        }
    }
    server.stop().await?;
    db.drop_db().await;
    Ok(())
}
