//! A client's request as it travels from its connection to the game's shard: who sent it,
//! where the answer goes, and what it asks.

use std::sync::Arc;
use std::time::Duration;

use chuhe_proto::v1 as w;
use tokio::time::Instant;

use crate::outbox::Outbox;
use crate::persist::{Account, Role};
use crate::view::View;
use chuhe_game::{Actor, Command};

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

/// What a request asks.
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
    /// A command to the game, decoded straight into the core's command. A move's `lag` is
    /// the request's ([`Request::lag`]): the shard sets it ([`Body::command`]).
    Game(Command),
}

impl Body {
    /// The game command this body asks for (None: a subscription, which the driver handles
    /// itself), with a move's lag compensation bounded by `lag` (the connection's round trip).
    pub fn command(&self, lag: Duration) -> Option<Command> {
        let Body::Game(cmd) = self else {
            return None;
        };
        let mut cmd = cmd.clone();
        if let Command::Move { lag: l, .. } = &mut cmd {
            *l = lag;
        }
        Some(cmd)
    }

    /// A move (what tests and the demo's bots send).
    pub fn mv(ply: u32, mv: &str, offer_draw: bool) -> Body {
        Body::Game(Command::Move {
            ply,
            mv: mv.to_string(),
            offer_draw,
            think_ms: None,
            lag: Duration::ZERO,
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
) -> Option<Result<(String, Body), (String, crate::error::ClientError)>> {
    use w::client_message::Kind as K;
    let game = |id: String, cmd: Command| Some(Ok((id, Body::Game(cmd))));
    match kind {
        K::Subscribe(s) => Some(Ok((
            s.game_id,
            Body::Subscribe {
                last_seq: s.last_seq,
                relay: None,
            },
        ))),
        K::Unsubscribe(u) => Some(Ok((u.game_id, Body::Unsubscribe))),
        K::Move(m) => game(
            m.game_id,
            Command::Move {
                ply: m.ply,
                mv: m.r#move,
                offer_draw: m.offer_draw,
                think_ms: (m.think_ms > 0).then_some(m.think_ms),
                lag: Duration::ZERO,
            },
        ),
        K::OfferDraw(o) => game(o.game_id, Command::OfferDraw),
        K::AnswerDraw(a) => game(a.game_id, Command::AnswerDraw { accept: a.accept }),
        K::Resign(r) => game(r.game_id, Command::Resign),
        K::ClaimMoveLimit(c) => game(c.game_id, Command::ClaimMoveLimit),
        K::RequestRuling(r) => game(r.game_id, Command::RequestRuling),
        K::Arbiter(a) => {
            let Some(action) = a.action else {
                return Some(Err((
                    a.game_id,
                    crate::error::ClientError::InvalidArgument(
                        "the arbiter command has no action".into(),
                    ),
                )));
            };
            game(
                a.game_id,
                Command::Arbiter {
                    reason: a.reason,
                    action: crate::game_wire::arbiter_action(&action),
                },
            )
        }
        K::CallArbiter(c) => game(c.game_id, Command::CallArbiter { reason: c.reason }),
        K::TakeCall(t) => game(t.game_id, Command::TakeCall),
        K::CloseCall(c) => game(
            c.game_id,
            Command::CloseCall {
                decision: c.decision,
            },
        ),
        K::SendMessage(m) => game(
            m.game_id,
            Command::Message {
                to: crate::game_wire::side_of(m.to),
                text: m.text,
            },
        ),
        _ => None,
    }
}

impl Body {
    /// The client message kind that asks this of `game_id` (the inverse of
    /// [`game_request`]): how a request crosses to the game's owner node. None for the
    /// server's own commands (the timer, a join, a restart), which no client sends.
    pub fn to_kind(&self, game_id: String) -> Option<w::client_message::Kind> {
        use w::client_message::Kind as K;
        let cmd = match self {
            Body::Subscribe { last_seq, .. } => {
                return Some(K::Subscribe(w::Subscribe {
                    game_id,
                    last_seq: *last_seq,
                }));
            }
            Body::Unsubscribe => return Some(K::Unsubscribe(w::Unsubscribe { game_id })),
            Body::Game(cmd) => cmd,
        };
        Some(match cmd {
            Command::Move {
                ply,
                mv,
                offer_draw,
                think_ms,
                ..
            } => K::Move(w::MakeMove {
                game_id,
                ply: *ply,
                r#move: mv.clone(),
                offer_draw: *offer_draw,
                think_ms: think_ms.unwrap_or(0),
            }),
            Command::OfferDraw => K::OfferDraw(w::OfferDraw { game_id }),
            Command::AnswerDraw { accept } => K::AnswerDraw(w::AnswerDraw {
                game_id,
                accept: *accept,
            }),
            Command::Resign => K::Resign(w::Resign { game_id }),
            Command::ClaimMoveLimit => K::ClaimMoveLimit(w::ClaimMoveLimit { game_id }),
            Command::RequestRuling => K::RequestRuling(w::RequestRuling { game_id }),
            Command::Arbiter { reason, action } => K::Arbiter(w::ArbiterCommand {
                game_id,
                reason: reason.clone(),
                action: Some(crate::game_wire::arbiter_action_wire(action)),
            }),
            Command::CallArbiter { reason } => K::CallArbiter(w::CallArbiter {
                game_id,
                reason: reason.clone(),
            }),
            Command::TakeCall => K::TakeCall(w::TakeCall { game_id }),
            Command::CloseCall { decision } => K::CloseCall(w::CloseCall {
                game_id,
                decision: decision.clone(),
            }),
            Command::Message { to, text } => K::SendMessage(w::SendMessage {
                game_id,
                to: crate::game_wire::side_num(*to),
                text: text.clone(),
            }),
            Command::Tick | Command::Join | Command::Restart => return None,
        })
    }
}
