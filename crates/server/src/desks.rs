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
