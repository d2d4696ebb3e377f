//! The league's websocket messages: following a league's public stream, a captain's lineup,
//! the chooser's armageddon colour. Answers go on the connection like every other reply.

use chuhe_proto::v1::{self as w, client_message::Kind, server_message};

use super::core::{BoardKey, ColourName, LeagueCommand};
use super::runner::{LeagueHandle, RunError};
use crate::env::Env;
use crate::outbox::Outbox;
use crate::request::Principal;

fn reply(out: &Outbox, req: u32, seq: u64) {
    out.send_msg(w::ServerMessage {
        kind: Some(server_message::Kind::Reply(w::Reply {
            request_id: req,
            game_id: String::new(),
            seq,
        })),
    });
}

fn error(out: &Outbox, req: u32, code: &str, message: &str) {
    out.send_msg(w::ServerMessage {
        kind: Some(server_message::Kind::Error(w::Error {
            request_id: req,
            code: code.to_string(),
            message: message.to_string(),
            game_id: String::new(),
        })),
    });
}

fn league(env: &Env, out: &Outbox, req: u32, id: &str) -> Option<LeagueHandle> {
    let h = id.parse::<i64>().ok().and_then(|id| env.leagues.get(id));
    if h.is_none() {
        error(out, req, "not_found", &format!("no league with id {id:?}"));
    }
    h
}

/// Answers one league message of a connection (with several nodes, a league running on
/// another node answers through it).
pub async fn on_message(env: &Env, who: &Principal, out: &Outbox, req: u32, kind: Kind) {
    if let Kind::LeagueSubscribe(s) = kind {
        if s.feed {
            return subscribe_feed(env, who, out, req, s).await;
        }
        return Box::pin(on_league_message(
            env,
            who,
            out,
            req,
            Kind::LeagueSubscribe(s),
        ))
        .await;
    }
    Box::pin(on_league_message(env, who, out, req, kind)).await
}

async fn on_league_message(env: &Env, who: &Principal, out: &Outbox, req: u32, kind: Kind) {
    let id = match &kind {
        Kind::LeagueSubscribe(s) => s.league_id.parse::<i64>().ok(),
        Kind::LeagueUnsubscribe(u) => u.league_id.parse::<i64>().ok(),
        Kind::LeagueLineup(l) => l.league_id.parse::<i64>().ok(),
        Kind::LeagueChooseColour(c) => c.league_id.parse::<i64>().ok(),
        _ => None,
    };
    let kind = match id {
        Some(id) if env.node.is_some() && env.leagues.get(id).is_none() => {
            match crate::node::relay_league(env, who, out, req, id, kind).await {
                Some(kind) => kind,
                None => return,
            }
        }
        _ => kind,
    };
    on_message_here(env, who, out, req, kind).await
}

/// Answers one league message for a league running here (not found otherwise). `relay`:
/// a subscription another node relays (it gets the catch-up only).
pub(crate) async fn on_message_relayed(
    env: &Env,
    who: &Principal,
    out: &Outbox,
    req: u32,
    kind: Kind,
    relay: bool,
) {
    if let (true, Kind::LeagueSubscribe(s)) = (relay, &kind) {
        if let Some(h) = league(env, out, req, &s.league_id) {
            if !h.subscribe_relayed(out.clone(), s.last_seq, req) {
                error(out, req, "busy", "the league is busy; retry");
            }
        }
        return;
    }
    on_message_here(env, who, out, req, kind).await
}

async fn on_message_here(env: &Env, who: &Principal, out: &Outbox, req: u32, kind: Kind) {
    match kind {
        Kind::LeagueSubscribe(s) => {
            if let Some(h) = league(env, out, req, &s.league_id) {
                if !h.subscribe(out.clone(), s.last_seq, req) {
                    error(out, req, "busy", "the league is busy; retry");
                }
            }
        }
        Kind::LeagueUnsubscribe(u) => {
            if let Some(h) = league(env, out, req, &u.league_id) {
                h.detach(out.conn_id);
                end_feed(env, out.conn_id, &u.league_id);
                reply(out, req, 0);
            }
        }
        Kind::LeagueLineup(l) => {
            let Some(h) = league(env, out, req, &l.league_id) else {
                return;
            };
            let cmd = LeagueCommand::SubmitLineup {
                round: l.round,
                table: l.table,
                team: l.team as usize,
                players: l.players,
            };
            answer(out, req, h.command(cmd, who.actor(), None).await);
        }
        Kind::LeagueChooseColour(c) => {
            let Some(h) = league(env, out, req, &c.league_id) else {
                return;
            };
            let colour = match w::Side::try_from(c.colour) {
                Ok(w::Side::Red) => ColourName::Red,
                Ok(w::Side::Black) => ColourName::Black,
                _ => {
                    return error(
                        out,
                        req,
                        "invalid_argument",
                        "colour must be SIDE_RED or SIDE_BLACK",
                    );
                }
            };
            let cmd = LeagueCommand::ChooseColour {
                at: BoardKey {
                    round: c.round,
                    table: c.table,
                    board: c.board,
                },
                colour,
            };
            answer(out, req, h.command(cmd, who.actor(), None).await);
        }
        _ => error(out, req, "unknown_message", "not a league message"),
    }
}

/// The event feed's subscriptions of websocket connections: (connection, league) → the
/// feed's own subscriber id and its task.
type Feeds = std::collections::HashMap<(u64, String), (u64, tokio::task::AbortHandle)>;

fn feeds() -> std::sync::MutexGuard<'static, Feeds> {
    static FEEDS: std::sync::OnceLock<std::sync::Mutex<Feeds>> = std::sync::OnceLock::new();
    FEEDS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Ends a connection's feed subscription to a league, if it has one.
fn end_feed(env: &Env, conn: u64, league_id: &str) {
    let Some((inner, task)) = feeds().remove(&(conn, league_id.to_string())) else {
        return;
    };
    task.abort();
    if let Some(h) = league_id
        .parse::<i64>()
        .ok()
        .and_then(|id| env.leagues.get(id))
    {
        h.detach(inner);
    }
}

/// `leagueSubscribe` with `feed`: the league's public stream as a subscriber of its own (as the
/// SSE feed follows it, here or relayed from the league's node), passed on to the connection
/// with the feed's `match_result` and `standings` updates after the entries that call for them.
/// Ends with the connection (the next frame it cannot take), or `leagueUnsubscribe`.
async fn subscribe_feed(env: &Env, who: &Principal, out: &Outbox, req: u32, s: w::LeagueSubscribe) {
    use crate::outbox::Out;
    end_feed(env, out.conn_id, &s.league_id);
    let inner_id = NEXT_FEED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (inner, mut inbox, _kick) =
        Outbox::new(inner_id, out.encoding, crate::league::runner::REPLAY + 1024);
    let sub = Kind::LeagueSubscribe(w::LeagueSubscribe {
        feed: false,
        ..s.clone()
    });
    let task = {
        let (env, out, id) = (env.clone(), out.clone(), s.league_id.clone());
        tokio::spawn(async move {
            let mut derived = Derived::default();
            while let Some(item) = inbox.recv().await {
                let update = match &item {
                    Out::Shared(f) => match &f.message().kind {
                        Some(server_message::Kind::League(u)) => Some(u.clone()),
                        _ => None,
                    },
                    Out::Own(m) => match &m.kind {
                        Some(server_message::Kind::League(u)) => Some(u.clone()),
                        _ => None,
                    },
                };
                if !out.send(item) {
                    break;
                }
                let Some(u) = update else { continue };
                for (kind, json) in derived.after(&env, &id, &u) {
                    let m = w::ServerMessage {
                        kind: Some(server_message::Kind::League(w::LeagueUpdate {
                            league_id: u.league_id.clone(),
                            seq: u.seq,
                            at_ms: u.at_ms,
                            kind: kind.to_string(),
                            json,
                        })),
                    };
                    if !out.send_msg(m) {
                        break;
                    }
                }
            }
            let mut f = feeds();
            if f.get(&(out.conn_id, id.clone()))
                .is_some_and(|e| e.0 == inner_id)
            {
                f.remove(&(out.conn_id, id));
            }
        })
    };
    feeds().insert(
        (out.conn_id, s.league_id.clone()),
        (inner_id, task.abort_handle()),
    );
    Box::pin(on_league_message(env, who, &inner, req, sub)).await;
}

fn answer(out: &Outbox, req: u32, r: Result<Vec<super::core::Entry>, RunError>) {
    match r {
        // No seq: a league's log counts sealed lineups too, and a captain must not learn from
        // it whether the other side has submitted.
        Ok(_) => reply(out, req, 0),
        Err(e) => error(out, req, e.code(), &e.to_string()),
    }
}

/// Connection ids of feed subscribers: their own range, apart from the websockets' counter.
pub(crate) static NEXT_FEED: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(1 << 62);

/// Entries after which the standings may have changed.
const CHANGES_STANDINGS: [&str; 5] = [
    "game_finished",
    "board_set",
    "match_forfeited",
    "withdrawn",
    "colour_chosen",
];

/// What the feed adds after a public entry: a `match_result` when the entry decided its match
/// (once per match and subscriber) and the `standings` after every entry that can change them.
#[derive(Default)]
pub(crate) struct Derived {
    /// Matches whose result this subscriber has been sent.
    decided: std::collections::HashSet<(u32, u32)>,
}

impl Derived {
    /// The (kind, JSON) updates to send after the public entry `u`, in order.
    pub(crate) fn after(
        &mut self,
        env: &Env,
        id: &str,
        u: &chuhe_proto::v1::LeagueUpdate,
    ) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if !CHANGES_STANDINGS.contains(&u.kind.as_str()) {
            return out;
        }
        // As the public stream shows the event (the broadcast delay behind).
        let Some(h) = id.parse::<i64>().ok().and_then(|id| env.leagues.get(id)) else {
            return out;
        };
        if let Some((round, table)) = match_of(&u.json).filter(|k| !self.decided.contains(k)) {
            if let Some(m) = super::render::match_result_json(&h.public_snapshot(), round, table) {
                self.decided.insert((round, table));
                out.push(("match_result", m.to_string()));
            }
        }
        if let Some(s) = super::render::standings_json(&h.public_snapshot()) {
            out.push(("standings", s));
        }
        out
    }
}

/// The match (round, table) a public entry is about: `at` of a board's entries, or the
/// `round` and `table` of a forfeited match.
fn match_of(json: &str) -> Option<(u32, u32)> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let at = if v["at"].is_object() { &v["at"] } else { &v };
    let n = |k: &str| at[k].as_u64().and_then(|x| u32::try_from(x).ok());
    Some((n("round")?, n("table")?))
}
