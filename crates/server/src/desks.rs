//! Who is connected (the presence lobby) and the arbiters following each league's desk: the
//! state a game's driver pushes desk events to and the call routes ([`crate::calls`]) read.

use std::collections::HashMap;
use std::sync::Mutex;

use chuhe_proto::v1::{self as w, server_message};

use crate::outbox::Outbox;

/// The connections of the arbiters following each league's desk, and who is connected (the
/// presence lobby).
#[derive(Default)]
pub struct Desks {
    pub(crate) by_league: Mutex<HashMap<i64, Vec<Outbox>>>,
    online: Mutex<HashMap<i64, Seen>>,
    /// The connections following each league's presence lobby (`lobbySubscribe`), with the
    /// teams whose matches each may see (None: every match, an official).
    pub(crate) lobbies: Mutex<HashMap<i64, Vec<LobbyFollower>>>,
    /// Every signed-in account's open connections (an arbiter's messages reach them).
    pub(crate) by_account: Mutex<HashMap<i64, Vec<Outbox>>>,
}

/// A connection following a lobby, with the teams whose matches it may see (None: every
/// match).
type LobbyFollower = (Outbox, Option<Vec<usize>>);

/// An account's connections now, and when its last one closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Seen {
    pub conns: u32,
    pub left_at_ms: Option<u64>,
}

impl Desks {
    /// A connection of account `id` opened.
    pub(crate) fn connected(&self, id: Option<i64>) {
        if let (Some(id), Ok(mut m)) = (id, self.online.lock()) {
            m.entry(id).or_default().conns += 1;
        }
    }

    /// Connection `out` of account `id` is open: messages for the account reach it.
    pub(crate) fn attach(&self, id: Option<i64>, out: &Outbox) {
        if let (Some(id), Ok(mut m)) = (id, self.by_account.lock()) {
            m.entry(id).or_default().push(out.clone());
        }
    }

    /// Connection `conn_id` of account `id` closed.
    pub(crate) fn detach(&self, id: Option<i64>, conn_id: u64) {
        if let (Some(id), Ok(mut m)) = (id, self.by_account.lock()) {
            if let Some(v) = m.get_mut(&id) {
                v.retain(|o| o.conn_id != conn_id);
                if v.is_empty() {
                    m.remove(&id);
                }
            }
        }
    }

    /// A connection of account `id` closed.
    pub(crate) fn left(&self, id: Option<i64>, now: u64) {
        if let (Some(id), Ok(mut m)) = (id, self.online.lock()) {
            let s = m.entry(id).or_default();
            s.conns = s.conns.saturating_sub(1);
            if s.conns == 0 {
                s.left_at_ms = Some(now);
            }
        }
    }

    pub(crate) fn seen(&self, id: i64) -> Seen {
        self.online
            .lock()
            .ok()
            .and_then(|m| m.get(&id).copied())
            .unwrap_or_default()
    }

    pub(crate) fn add(&self, league: i64, out: Outbox) {
        if let Ok(mut m) = self.by_league.lock() {
            let v = m.entry(league).or_default();
            v.retain(|o| o.conn_id != out.conn_id && !o.is_closed());
            v.push(out);
        }
    }

    pub(crate) fn add_lobby(&self, league: i64, out: Outbox, teams: Option<Vec<usize>>) {
        if let Ok(mut m) = self.lobbies.lock() {
            let v = m.entry(league).or_default();
            v.retain(|(o, _)| o.conn_id != out.conn_id && !o.is_closed());
            v.push((out, teams));
        }
    }

    /// Sends an arbiter-channel event of a league game to the league's desk.
    pub(crate) fn push(&self, board: &w::LeagueBoard, ev: &w::GameEvent) {
        let Ok(league) = board.league_id.parse::<i64>() else {
            return;
        };
        let Ok(mut m) = self.by_league.lock() else {
            return;
        };
        let Some(v) = m.get_mut(&league) else {
            return;
        };
        let msg = desk_message(board, ev);
        v.retain(|o| o.send_msg(msg.clone()));
    }
}

pub(crate) fn desk_message(board: &w::LeagueBoard, ev: &w::GameEvent) -> w::ServerMessage {
    w::ServerMessage {
        kind: Some(server_message::Kind::Desk(w::ArbiterDesk {
            league_id: board.league_id.clone(),
            board: Some(board.clone()),
            event: Some(ev.clone()),
        })),
    }
}

/// The recipients of an arbiter's message (`team`: its captains; None: every captain, player
/// and arbiter of the league).
pub(crate) fn recipients(l: &crate::league::core::League, team: Option<usize>) -> Vec<i64> {
    let mut ids: Vec<i64> = match team {
        Some(t) => l
            .teams
            .get(t)
            .map(|t| t.accounts.captains.clone())
            .unwrap_or_default(),
        None => l
            .teams
            .iter()
            .flat_map(|t| t.accounts.captains.iter().chain(&t.accounts.players))
            .chain(&l.arbiters)
            .copied()
            .collect(),
    };
    ids.sort_unstable();
    ids.dedup();
    ids
}

pub(crate) fn message_of(
    l: &crate::league::core::League,
    seq: u64,
    at_ms: u64,
    from: Option<i64>,
    from_name: String,
    team: Option<usize>,
    text: &str,
) -> w::LeagueMessage {
    w::LeagueMessage {
        league_id: l.id.to_string(),
        seq,
        at_ms,
        from_id: from.map(|a| a.to_string()).unwrap_or_default(),
        from_name,
        whole_event: team.is_none(),
        team: team.unwrap_or(0) as u32,
        team_name: team
            .and_then(|t| l.teams.get(t))
            .map(|t| t.name.clone())
            .unwrap_or_default(),
        text: text.to_string(),
    }
}

/// An arbiter's message was recorded in league `l`'s log: it goes to its recipients'
/// connections and to the league's desks (a `leagueMessage`).
pub(crate) fn deliver_message(
    persist: &std::sync::Arc<dyn crate::persist::Persist>,
    desks: &std::sync::Arc<Desks>,
    l: &crate::league::core::League,
    e: &crate::league::core::Entry,
) {
    let crate::league::core::LeagueEvent::ArbiterMessage { team, text } = &e.event else {
        return;
    };
    let (persist, desks, ids) = (persist.clone(), desks.clone(), recipients(l, *team));
    let (seq, at, from, team, text) = (e.seq, e.at_ms, e.actor, *team, text.clone());
    let league = l.clone();
    tokio::spawn(async move {
        let name = match from {
            Some(a) => persist
                .account(a)
                .await
                .ok()
                .flatten()
                .map(|a| a.name)
                .unwrap_or_default(),
            None => String::new(),
        };
        let msg = w::ServerMessage {
            kind: Some(server_message::Kind::LeagueMessage(message_of(
                &league, seq, at, from, name, team, &text,
            ))),
        };
        let mut sent = std::collections::HashSet::new();
        if let Ok(m) = desks.by_account.lock() {
            for id in &ids {
                for o in m.get(id).into_iter().flatten() {
                    if sent.insert(o.conn_id) {
                        o.send_msg(msg.clone());
                    }
                }
            }
        }
        if let Ok(mut m) = desks.by_league.lock() {
            if let Some(v) = m.get_mut(&league.id) {
                v.retain(|o| sent.contains(&o.conn_id) || o.send_msg(msg.clone()));
            }
        }
    });
}
