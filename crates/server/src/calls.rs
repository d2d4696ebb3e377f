//! The arbiters' side of calls to the arbiter in a league: the desk (a websocket feed of every
//! call, take, close and message of the league's games, for the event's arbiters) and the
//! queue over HTTP (`GET /api/v1/leagues/{id}/calls`). The calls themselves are events of the
//! games' logs, decided by the game core ([`chuhe_game::call`]).

use std::collections::HashMap;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chuhe_proto::v1::{self as w, game_event::Kind, server_message};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::{api_error, authenticate, bearer};
use crate::desks::{Seen, desk_message, recipients};
use crate::env::Env;
use crate::outbox::Outbox;
use crate::persist::Role;
use crate::request::Principal;

/// Whether `p` is one of the league's officials: an organizer, or one of its arbiters.
fn official(env: &Env, league: i64, p: &Principal) -> bool {
    match p.role() {
        Some(Role::Organizer) => true,
        Some(Role::Arbiter) => p
            .id()
            .is_some_and(|id| env.leagues.arbiter_of(&league.to_string(), id)),
        _ => false,
    }
}

/// The arbiter channel of every game of a league (`all`: finished games too; else only the
/// games still being played), with where each is played.
type Channel = (w::LeagueBoard, w::GameInfo, Vec<w::GameEvent>);

async fn channels(env: &Env, league: i64, all: bool) -> Option<Vec<Channel>> {
    let l = env.leagues.get(league)?.snapshot();
    let games: Vec<i64> = l
        .rounds
        .iter()
        .flat_map(|r| &r.tables)
        .flat_map(|t| &t.boards)
        .flat_map(|b| &b.games)
        .filter(|g| all || g.finished.is_none())
        .map(|g| g.game)
        .collect();
    let mut out = Vec::new();
    for game in games {
        let Ok(h) = env.registry.get_or_load(game).await else {
            continue;
        };
        let Some(rec) = h.record(false).await else {
            continue;
        };
        let v = rec.view;
        if v.channel.is_empty() {
            continue;
        }
        if let Some(board) = v.info.league.clone() {
            out.push((board, v.info, v.channel));
        }
    }
    Some(out)
}

/// The events of the open call of a channel (from its `ArbiterCalled` on), if one is open.
fn open_part(channel: &[w::GameEvent]) -> &[w::GameEvent] {
    let mut start = None;
    for (i, e) in channel.iter().enumerate() {
        match &e.kind {
            Some(Kind::ArbiterCalled(_)) => start = Some(i),
            Some(Kind::CallClosed(_)) => start = None,
            _ => {}
        }
    }
    start.map_or(&[], |i| &channel[i..])
}

/// Refuses the websocket request `req` on `out` with `code` and `message`.
fn refuse(out: &Outbox, req: u32, code: &str, message: &str) {
    out.send_msg(w::ServerMessage {
        kind: Some(server_message::Kind::Error(w::Error {
            request_id: req,
            code: code.into(),
            message: message.into(),
            game_id: String::new(),
        })),
    });
}

/// An arbiter follows a league's desk (the websocket message `arbiterDeskSubscribe`).
pub async fn subscribe_desk(env: &Env, who: &Principal, out: &Outbox, req: u32, league_id: &str) {
    let err = |code: &str, message: &str| refuse(out, req, code, message);
    let Some(league) = league_id
        .parse::<i64>()
        .ok()
        .filter(|id| env.leagues.get(*id).is_some())
    else {
        return err("not_found", &format!("no league with id {league_id:?}"));
    };
    if !official(env, league, who) {
        return err(
            "permission_denied",
            "the desk is for the organizer and the event's arbiters",
        );
    }
    // Registered first, so nothing committed while the open calls are gathered is missed
    // (an event may come twice: its seq tells).
    env.desks.add(league, out.clone());
    out.send_msg(w::ServerMessage {
        kind: Some(server_message::Kind::Reply(w::Reply {
            request_id: req,
            game_id: String::new(),
            seq: 0,
        })),
    });
    for (board, _, channel) in channels(env, league, false).await.unwrap_or_default() {
        for ev in open_part(&channel) {
            out.send_msg(desk_message(&board, ev));
        }
    }
}

/// `GET /api/v1/leagues/{id}/messages`: the arbiters' messages to captains and to the whole
/// event that the caller may read: an official every one, a captain those to the event and
/// to the captain's team, a player or arbiter of the league those to the event. Oldest first.
async fn messages(State(env): State<Env>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let h = match crate::league::api::league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let p = match authenticate(&env, bearer(&headers, None)).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let l = h.snapshot();
    let Some(me) = p.id() else {
        return api_error(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "the messages are for the event's people: this needs a token",
        );
    };
    let all = official(&env, l.id, &p);
    let in_event = recipients(&l, None).contains(&me);
    if !all && !in_event {
        return api_error(
            StatusCode::FORBIDDEN,
            "permission_denied",
            "the messages are for the captains, players and arbiters of the event",
        );
    }
    let events = match env.persist.competition_events(l.id, 0).await {
        Ok(e) => e,
        Err(e) => {
            return api_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "store_unavailable",
                &e.to_string(),
            );
        }
    };
    let mut out = Vec::new();
    for e in events.iter().filter(|e| e.kind == "arbiter_message") {
        let Ok(crate::league::core::LeagueEvent::ArbiterMessage { team, text }) =
            serde_json::from_str(&e.payload)
        else {
            continue;
        };
        let mine = team.is_none_or(|t| {
            l.teams
                .get(t)
                .is_some_and(|x| x.accounts.captains.contains(&me))
        });
        if !(all || mine) {
            continue;
        }
        out.push(json!({
            "seq": e.seq,
            "atMs": e.at_ms.max(0),
            "fromId": e.actor.map(|a| a.0.to_string()),
            "wholeEvent": team.is_none(),
            "team": team,
            "teamName": team.and_then(|t| l.teams.get(t)).map(|t| t.name.clone()),
            "text": text,
        }));
    }
    (StatusCode::OK, axum::Json(json!({ "messages": out }))).into_response()
}

pub fn router() -> Router<Env> {
    Router::new()
        .route("/api/v1/leagues/{id}/messages", get(messages))
        .route("/api/v1/leagues/{id}/calls", get(queue))
        .route(
            "/api/v1/leagues/{id}/rounds/{round}/presence",
            get(presence),
        )
}

/// A lined-up player's presence: `connected` now, `left` (was connected since the lobby
/// opened, is not now), or `not_yet`.
pub fn presence_word(seen: Seen, opens_at: u64) -> &'static str {
    if seen.conns > 0 {
        "connected"
    } else if seen.left_at_ms.is_some_and(|t| t >= opens_at) {
        "left"
    } else {
        "not_yet"
    }
}

/// Who reads a round's presence: every match (an official), or the matches of these teams.
#[derive(Clone, Copy)]
enum Reader<'a> {
    Official,
    Captain(&'a [usize]),
}

/// A round's presence lobby as `reader` sees it (see the route below).
fn presence_json(
    env: &Env,
    l: &crate::league::core::League,
    r: &crate::league::core::state::Round,
    reader: Reader<'_>,
) -> Value {
    let before = l.spec.presence_before_ms().unwrap_or(30 * 60_000);
    let opens_at = r.start_ms.saturating_sub(before);
    let now = env.time.now_ms();
    let lateness = l.rules.lateness_ms;
    let mut tables = Vec::new();
    if now >= opens_at {
        for (k, t) in r.tables.iter().enumerate() {
            if let Reader::Captain(teams) = reader {
                if !t.teams.iter().any(|x| teams.contains(x)) {
                    continue;
                }
            }
            let mut players = Vec::new();
            for (team_no, pid, board, name) in lined_up(l, t) {
                let word = presence_word(env.desks.seen(pid), opens_at);
                let left = (word != "connected" && lateness > 0)
                    .then(|| (r.start_ms + lateness).saturating_sub(now));
                players.push(json!({
                    "board": board,
                    "team": team_no,
                    "teamName": l.teams.get(team_no).map(|t| t.name.clone()),
                    "name": name,
                    "playerId": pid.to_string(),
                    "presence": word,
                    "latenessLeftMs": left,
                }));
            }
            tables.push(json!({
                "table": k + 1,
                "teams": t.teams,
                "revealed": t.revealed.is_some(),
                "players": players,
            }));
        }
    }
    json!({
        "leagueId": l.id.to_string(),
        "round": r.number,
        "startMs": r.start_ms,
        "opensAtMs": opens_at,
        "open": now >= opens_at,
        "latenessMs": lateness,
        "tables": tables,
    })
}

/// The revealed lined-up players of a match: (team, account, board, name).
fn lined_up(
    l: &crate::league::core::League,
    t: &crate::league::core::state::Table,
) -> Vec<(usize, i64, usize, String)> {
    use crate::league::core::Revealed;
    let mut out = Vec::new();
    let Some(revealed) = &t.revealed else {
        return out;
    };
    for (side, rev) in revealed.iter().enumerate() {
        let team_no = t.teams[side];
        let names = match rev {
            Revealed::Submitted { players } | Revealed::RegisteredOrder { players } => players,
            Revealed::Forfeit => continue,
        };
        let (Some(team), Some(spec)) = (l.teams.get(team_no), l.spec.teams.get(team_no)) else {
            continue;
        };
        for (b, name) in names.iter().enumerate() {
            if let Some(pid) = spec
                .players
                .iter()
                .position(|x| x.name() == name)
                .and_then(|i| team.accounts.players.get(i))
            {
                out.push((team_no, *pid, b + 1, name.clone()));
            }
        }
    }
    out
}

/// A connection of account `id` opened or closed: the desks and the lobby followers of the
/// leagues whose open lobby lines the account up get the round's presence (a `presence`
/// message, as each may read it). Costs nothing while nobody follows a desk or a lobby.
pub(crate) fn presence_changed(env: &Env, id: Option<i64>) {
    let Some(id) = id else { return };
    let mut leagues: Vec<i64> = match env.desks.by_league.lock() {
        Ok(m) => m
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(l, _)| *l)
            .collect(),
        Err(_) => return,
    };
    if let Ok(m) = env.desks.lobbies.lock() {
        leagues.extend(m.iter().filter(|(_, v)| !v.is_empty()).map(|(l, _)| *l));
    }
    leagues.sort_unstable();
    leagues.dedup();
    let now = env.time.now_ms();
    for league in leagues {
        let Some(h) = env.leagues.get(league) else {
            continue;
        };
        let l = h.snapshot();
        for r in open_rounds(&l, now) {
            if r.tables
                .iter()
                .any(|t| lined_up(&l, t).iter().any(|p| p.1 == id))
            {
                send_presence(env, &l, r, true);
            }
        }
    }
}

/// The rounds of a league whose presence lobby is open at `now` (not completed).
fn open_rounds(
    l: &crate::league::core::League,
    now: u64,
) -> impl Iterator<Item = &crate::league::core::state::Round> {
    let before = l.spec.presence_before_ms().unwrap_or(30 * 60_000);
    l.rounds
        .iter()
        .filter(move |r| !r.completed && now >= r.start_ms.saturating_sub(before))
}

fn presence_message(
    env: &Env,
    l: &crate::league::core::League,
    r: &crate::league::core::state::Round,
    reader: Reader<'_>,
) -> w::ServerMessage {
    w::ServerMessage {
        kind: Some(server_message::Kind::Presence(w::LeaguePresence {
            league_id: l.id.to_string(),
            round: r.number,
            json: presence_json(env, l, r, reader).to_string(),
        })),
    }
}

/// Sends round `r`'s presence to the league's lobby followers (each as it may read it) and,
/// with `desks`, to its desks.
fn send_presence(
    env: &Env,
    l: &crate::league::core::League,
    r: &crate::league::core::state::Round,
    desks: bool,
) {
    let official = presence_message(env, l, r, Reader::Official);
    if desks {
        if let Ok(mut m) = env.desks.by_league.lock() {
            if let Some(v) = m.get_mut(&l.id) {
                v.retain(|o| o.send_msg(official.clone()));
            }
        }
    }
    let Ok(mut m) = env.desks.lobbies.lock() else {
        return;
    };
    let Some(v) = m.get_mut(&l.id) else { return };
    v.retain(|(o, teams)| {
        let msg = match teams {
            None => official.clone(),
            Some(teams) => {
                // A captain hears of a round only when one of the captain's matches is in it.
                if !r
                    .tables
                    .iter()
                    .any(|t| t.teams.iter().any(|x| teams.contains(x)))
                {
                    return !o.is_closed();
                }
                presence_message(env, l, r, Reader::Captain(teams))
            }
        };
        o.send_msg(msg)
    });
}

/// The teams whose matches' presence `p` may see in league `l`: None for an official (every
/// match), the teams `p` captains, or Err when `p` may see no lobby.
fn lobby_reader(
    env: &Env,
    l: &crate::league::core::League,
    p: &Principal,
) -> Result<Option<Vec<usize>>, ()> {
    if official(env, l.id, p) {
        return Ok(None);
    }
    let captain_of: Vec<usize> = p
        .id()
        .map(|me| {
            l.teams
                .iter()
                .enumerate()
                .filter(|(_, t)| t.accounts.captains.contains(&me))
                .map(|(i, _)| i)
                .collect()
        })
        .unwrap_or_default();
    if captain_of.is_empty() {
        Err(())
    } else {
        Ok(Some(captain_of))
    }
}

/// A captain or an official follows a league's presence lobby (the websocket message
/// `lobbySubscribe`): a Reply, then the presence of every round whose lobby is open now, then
/// every change.
pub async fn subscribe_lobby(env: &Env, who: &Principal, out: &Outbox, req: u32, league_id: &str) {
    let err = |code: &str, message: &str| refuse(out, req, code, message);
    let Some(h) = league_id
        .parse::<i64>()
        .ok()
        .and_then(|id| env.leagues.get(id))
    else {
        return err("not_found", &format!("no league with id {league_id:?}"));
    };
    let l = h.snapshot();
    let Ok(teams) = lobby_reader(env, &l, who) else {
        return err(
            "permission_denied",
            "the presence lobby is for the captains of the match and the event's arbiters",
        );
    };
    env.desks.add_lobby(l.id, out.clone(), teams.clone());
    out.send_msg(w::ServerMessage {
        kind: Some(server_message::Kind::Reply(w::Reply {
            request_id: req,
            game_id: String::new(),
            seq: 0,
        })),
    });
    let now = env.time.now_ms();
    for r in open_rounds(&l, now) {
        let reader = match &teams {
            None => Reader::Official,
            Some(t) => Reader::Captain(t),
        };
        out.send_msg(presence_message(env, &l, r, reader));
    }
}

/// `GET /api/v1/leagues/{id}/rounds/{round}/presence`: from `presence_before` ahead of the
/// round's start, each lined-up player's presence, to the organizer and the event's arbiters
/// (every match) and the captains of a match (theirs); with the time left to the lateness
/// limit for absent players. Nothing before the lineups are revealed (they are sealed).
async fn presence(
    State(env): State<Env>,
    Path((id, round)): Path<(String, u32)>,
    headers: HeaderMap,
) -> Response {
    let h = match crate::league::api::league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let p = match authenticate(&env, bearer(&headers, None)).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let l = h.snapshot();
    let Some(r) = l.rounds.iter().find(|r| r.number == round) else {
        return api_error(
            StatusCode::NOT_FOUND,
            "not_found",
            &format!("no round {round} (yet)"),
        );
    };
    let teams = match lobby_reader(&env, &l, &p) {
        Ok(t) => t,
        Err(()) => {
            return api_error(
                StatusCode::FORBIDDEN,
                "permission_denied",
                "the presence lobby is for the captains of the match and the event's arbiters",
            );
        }
    };
    let reader = match &teams {
        None => Reader::Official,
        Some(t) => Reader::Captain(t),
    };
    (
        StatusCode::OK,
        axum::Json(presence_json(&env, &l, r, reader)),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presence_words() {
        let never = Seen::default();
        assert_eq!(presence_word(never, 100), "not_yet");
        let here = Seen {
            conns: 2,
            left_at_ms: Some(50),
        };
        assert_eq!(presence_word(here, 100), "connected");
        // Left before the lobby opened: as if not yet come.
        let gone_early = Seen {
            conns: 0,
            left_at_ms: Some(50),
        };
        assert_eq!(presence_word(gone_early, 100), "not_yet");
        let gone = Seen {
            conns: 0,
            left_at_ms: Some(150),
        };
        assert_eq!(presence_word(gone, 100), "left");
    }
}

#[derive(Deserialize)]
struct QueueQuery {
    #[serde(default)]
    all: bool,
}

fn text(n: &Option<w::ArbiterNote>) -> (Value, Value) {
    match n {
        Some(n) => (json!(n.arbiter_id), json!(n.reason)),
        None => (Value::Null, Value::Null),
    }
}

/// The calls of a channel as the queue shows them, and the messages sent outside any call.
fn calls_of(
    board: &w::LeagueBoard,
    game: &str,
    channel: &[w::GameEvent],
    info: &HashMap<i32, (String, String)>,
    now: u64,
) -> (Vec<Value>, Vec<Value>) {
    let mut calls: Vec<Value> = Vec::new();
    let mut loose = Vec::new();
    for e in channel {
        match &e.kind {
            Some(Kind::ArbiterCalled(c)) => {
                let (id, name) = info.get(&c.side).cloned().unwrap_or_default();
                calls.push(json!({
                    "gameId": game,
                    "round": board.round,
                    "table": board.table,
                    "board": board.board,
                    "stage": board.stage,
                    "callSeq": e.seq,
                    "side": side_name(c.side),
                    "playerId": id,
                    "playerName": name,
                    "reason": c.reason,
                    "atMs": e.at_ms,
                    "waitingMs": now.saturating_sub(e.at_ms),
                    "clockStopped": c.clock_stopped,
                    "count": c.count,
                    "open": true,
                    "takenBy": Value::Null,
                    "closedAtMs": Value::Null,
                    "closedBy": Value::Null,
                    "decision": Value::Null,
                    "messages": [],
                }));
            }
            Some(Kind::CallTaken(t)) => {
                if let Some(c) = calls.iter_mut().rev().find(|c| c["callSeq"] == t.call_seq) {
                    c["takenBy"] = text(&t.arbiter).0;
                }
            }
            Some(Kind::CallClosed(x)) => {
                if let Some(c) = calls.iter_mut().rev().find(|c| c["callSeq"] == x.call_seq) {
                    let (by, decision) = text(&x.arbiter);
                    c["open"] = json!(false);
                    c["waitingMs"] = json!(e.at_ms.saturating_sub(c["atMs"].as_u64().unwrap_or(0)));
                    c["closedAtMs"] = json!(e.at_ms);
                    c["closedBy"] = by;
                    c["decision"] = decision;
                }
            }
            Some(Kind::Message(m)) => {
                let msg = json!({
                    "seq": e.seq,
                    "atMs": e.at_ms,
                    "fromId": m.from_id,
                    "fromRole": if m.from_role == w::Role::Arbiter as i32 { "arbiter" } else { "player" },
                    "fromSide": side_name(m.from_side),
                    "to": side_name(m.to),
                    "text": m.text,
                });
                match calls.iter_mut().rev().find(|c| c["callSeq"] == m.call_seq) {
                    Some(c) if m.call_seq != 0 => {
                        if let Some(a) = c["messages"].as_array_mut() {
                            a.push(msg);
                        }
                    }
                    _ => {
                        let mut msg = msg;
                        msg["gameId"] = json!(game);
                        loose.push(msg);
                    }
                }
            }
            _ => {}
        }
    }
    (calls, loose)
}

fn side_name(s: i32) -> Value {
    match w::Side::try_from(s) {
        Ok(w::Side::Red) => json!("red"),
        Ok(w::Side::Black) => json!("black"),
        _ => Value::Null,
    }
}

/// `GET /api/v1/leagues/{id}/calls[?all=true]`: the open calls of the league's games (with
/// `all`: every call of every game, closed ones with their decision, and the arbiters'
/// messages sent outside calls), for the organizer and the event's arbiters.
async fn queue(
    State(env): State<Env>,
    Path(id): Path<String>,
    Query(q): Query<QueueQuery>,
    headers: HeaderMap,
) -> Response {
    let league = match crate::league::api::league(&env, &id) {
        Ok(h) => h.id,
        Err(r) => return r,
    };
    let p = match authenticate(&env, bearer(&headers, None)).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    if !official(&env, league, &p) {
        return api_error(
            StatusCode::FORBIDDEN,
            "permission_denied",
            "the calls are for the organizer and the event's arbiters",
        );
    }
    let Some(chans) = channels(&env, league, q.all).await else {
        return api_error(StatusCode::NOT_FOUND, "not_found", "the league is gone");
    };
    let now = env.time.now_ms();
    let mut calls = Vec::new();
    let mut messages = Vec::new();
    for (board, i, channel) in &chans {
        let names = HashMap::from([
            (w::Side::Red as i32, (i.red_id.clone(), i.red_name.clone())),
            (
                w::Side::Black as i32,
                (i.black_id.clone(), i.black_name.clone()),
            ),
        ]);
        let (c, m) = calls_of(board, &i.game_id, channel, &names, now);
        calls.extend(c.into_iter().filter(|c| q.all || c["open"] == json!(true)));
        if q.all {
            messages.extend(m);
        }
    }
    // Longest waiting first.
    calls.sort_by_key(|c| c["atMs"].as_u64().unwrap_or(0));
    (
        StatusCode::OK,
        axum::Json(json!({ "calls": calls, "messages": messages })),
    )
        .into_response()
}
