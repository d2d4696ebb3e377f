//! A client's request as it travels from its connection to the game's shard: who sent it,
//! where the answer goes, and what it asks.

use std::sync::Arc;
use std::time::Duration;

use chuhe_proto::v1::{self as w, arbiter_command::Action};
use tokio::time::Instant;

use chuhe_game::{Actor, Command};
use crate::outbox::Outbox;
use crate::persist::{Account, Role};
use crate::view::View;

/// Who sent a request.
#[derive(Debug, Clone)]
pub struct Principal {
    /// None: anonymous spectator.
    pub account: Option<Account>,
}

impl Principal {
    pub fn id(&self) -> Option<i64> {
        self.account.as_ref().map(|a| a.id)
    }
    pub fn role(&self) -> Option<Role> {
        self.account.as_ref().map(|a| a.role)
    }
    /// Arbiters and organisers see every game live (players see their own).
    pub fn sees_live(&self) -> bool {
        matches!(self.role(), Some(Role::Arbiter | Role::Organizer))
    }
    pub fn wire_role(&self) -> w::Role {
        match self.role() {
            None => w::Role::Spectator,
            Some(Role::Player) => w::Role::Player,
            Some(Role::Arbiter) => w::Role::Arbiter,
            Some(Role::Organizer) => w::Role::Organizer,
        }
    }
    /// The principal as the game core knows it.
    pub fn actor(&self) -> Actor {
        Actor {
            id: self.id(),
            role: self.role(),
        }
    }
}

/// A client request routed to a game.
#[derive(Debug)]
pub struct Request {
    pub req: u32,
    pub who: Arc<Principal>,
    pub out: Outbox,
    /// The connection's round-trip estimate (lag compensation bound).
    pub lag: Duration,
    pub received: Instant,
    pub body: Body,
}

#[derive(Debug)]
pub enum Body {
    Subscribe {
        last_seq: u64,
        /// Set when another node relays the subscription (several nodes): the game answers
        /// the catch-up, records here whether the subscriber follows the live stream (true)
        /// or the delayed one, and does not add it to its own subscribers — the client's node
        /// forwards the game's channel to it.
        relay: Option<Arc<std::sync::atomic::AtomicBool>>,
    },
    Unsubscribe,
    Move {
        ply: u32,
        mv: String,
        offer_draw: bool,
        think_ms: Option<u32>,
    },
    OfferDraw,
    AnswerDraw {
        accept: bool,
    },
    Resign,
    ClaimMoveLimit,
    RequestRuling,
    Arbiter {
        reason: String,
        action: Action,
    },
    CallArbiter {
        reason: String,
    },
    TakeCall,
    CloseCall {
        decision: String,
    },
    Message {
        to: i32,
        text: String,
    },
}

impl Body {
    /// The game command this body asks for (None: a subscription, which the driver handles
    /// itself). `lag`: the connection's round-trip estimate.
    pub fn command(&self, lag: Duration) -> Option<Command> {
        Some(match self {
            Body::Subscribe { .. } | Body::Unsubscribe => return None,
            Body::Move {
                ply,
                mv,
                offer_draw,
                think_ms,
            } => Command::Move {
                ply: *ply,
                mv: mv.clone(),
                offer_draw: *offer_draw,
                think_ms: *think_ms,
                lag,
            },
            Body::OfferDraw => Command::OfferDraw,
            Body::AnswerDraw { accept } => Command::AnswerDraw { accept: *accept },
            Body::Resign => Command::Resign,
            Body::ClaimMoveLimit => Command::ClaimMoveLimit,
            Body::RequestRuling => Command::RequestRuling,
            Body::Arbiter { reason, action } => Command::Arbiter {
                reason: reason.clone(),
                action: crate::game_wire::arbiter_action(action),
            },
            Body::CallArbiter { reason } => Command::CallArbiter {
                reason: reason.clone(),
            },
            Body::TakeCall => Command::TakeCall,
            Body::CloseCall { decision } => Command::CloseCall {
                decision: decision.clone(),
            },
            Body::Message { to, text } => Command::Message {
                to: crate::game_wire::side_of(*to),
                text: text.clone(),
            },
        })
    }
}

/// A game's record as seen by some audience.
#[derive(Debug, Clone)]
pub struct RecordView {
    pub view: View,
}

/// A game request's body from the client message that asks it, with the game's id; `None`
/// for a message that is not a game request. `Err`: a game request that cannot be asked
/// (answered with the error, for that game id).
pub fn game_request(
    kind: w::client_message::Kind,
) -> Option<Result<(String, Body), (String, crate::ClientError)>> {
    use w::client_message::Kind as K;
    Some(Ok(match kind {
        K::Subscribe(s) => (
            s.game_id,
            Body::Subscribe {
                last_seq: s.last_seq,
                relay: None,
            },
        ),
        K::Unsubscribe(u) => (u.game_id, Body::Unsubscribe),
        K::Move(m) => (
            m.game_id,
            Body::Move {
                ply: m.ply,
                mv: m.r#move,
                offer_draw: m.offer_draw,
                think_ms: (m.think_ms > 0).then_some(m.think_ms),
            },
        ),
        K::OfferDraw(o) => (o.game_id, Body::OfferDraw),
        K::AnswerDraw(a) => (a.game_id, Body::AnswerDraw { accept: a.accept }),
        K::Resign(r) => (r.game_id, Body::Resign),
        K::ClaimMoveLimit(c) => (c.game_id, Body::ClaimMoveLimit),
        K::RequestRuling(r) => (r.game_id, Body::RequestRuling),
        K::Arbiter(a) => {
            let Some(action) = a.action else {
                return Some(Err((
                    a.game_id,
                    crate::ClientError::InvalidArgument("the arbiter command has no action".into()),
                )));
            };
            (
                a.game_id,
                Body::Arbiter {
                    reason: a.reason,
                    action,
                },
            )
        }
        K::CallArbiter(c) => (c.game_id, Body::CallArbiter { reason: c.reason }),
        K::TakeCall(t) => (t.game_id, Body::TakeCall),
        K::CloseCall(c) => (
            c.game_id,
            Body::CloseCall {
                decision: c.decision,
            },
        ),
        K::SendMessage(m) => (
            m.game_id,
            Body::Message {
                to: m.to,
                text: m.text,
            },
        ),
        _ => return None,
    }))
}

impl Body {
    /// The client message kind that asks this of `game_id` (the inverse of
    /// [`game_request`]): how a request crosses to the game's owner node.
    pub fn to_kind(&self, game_id: String) -> w::client_message::Kind {
        use w::client_message::Kind as K;
        match self {
            Body::Subscribe { last_seq, .. } => K::Subscribe(w::Subscribe {
                game_id,
                last_seq: *last_seq,
            }),
            Body::Unsubscribe => K::Unsubscribe(w::Unsubscribe { game_id }),
            Body::Move {
                ply,
                mv,
                offer_draw,
                think_ms,
            } => K::Move(w::MakeMove {
                game_id,
                ply: *ply,
                r#move: mv.clone(),
                offer_draw: *offer_draw,
                think_ms: think_ms.unwrap_or(0),
            }),
            Body::OfferDraw => K::OfferDraw(w::OfferDraw { game_id }),
            Body::AnswerDraw { accept } => K::AnswerDraw(w::AnswerDraw {
                game_id,
                accept: *accept,
            }),
            Body::Resign => K::Resign(w::Resign { game_id }),
            Body::ClaimMoveLimit => K::ClaimMoveLimit(w::ClaimMoveLimit { game_id }),
            Body::RequestRuling => K::RequestRuling(w::RequestRuling { game_id }),
            Body::Arbiter { reason, action } => K::Arbiter(w::ArbiterCommand {
                game_id,
                reason: reason.clone(),
                action: Some(*action),
            }),
            Body::CallArbiter { reason } => K::CallArbiter(w::CallArbiter {
                game_id,
                reason: reason.clone(),
            }),
            Body::TakeCall => K::TakeCall(w::TakeCall { game_id }),
            Body::CloseCall { decision } => K::CloseCall(w::CloseCall {
                game_id,
                decision: decision.clone(),
            }),
            Body::Message { to, text } => K::SendMessage(w::SendMessage {
                game_id,
                to: *to,
                text: text.clone(),
            }),
        }
    }
}
