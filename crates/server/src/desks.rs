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
}

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
