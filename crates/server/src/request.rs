//! A client's request as it travels from its connection to the game's shard: who sent it,
//! where the answer goes, and what it asks.

use std::sync::Arc;
use std::time::Duration;

use chuhe_proto::v1::{self as w, arbiter_command::Action};
use tokio::time::Instant;

use crate::game::{Actor, Command};
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
                action: *action,
            },
        })
    }
}

/// A game's record as seen by some audience.
#[derive(Debug, Clone)]
pub struct RecordView {
    pub view: View,
}
