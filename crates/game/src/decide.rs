//! [`decide`]: a command to the function of its kind. The commands' own files ([`crate::moves`],
//! [`crate::draw`], [`crate::arbiter`], [`crate::call`], [`crate::start`]) draft their events on
//! [`crate::command::Batch`]; this file alone knows them all, so none of them depends on another
//! through it.

use crate::command::{Actor, Command, Decided};
use crate::error::ClientError;
use crate::state::State;

/// What `cmd` by `actor` at `now` (Unix ms) would change: Ok with the events to commit and the
/// answer, or the error to answer with (nothing changes). Pure: the state is not touched.
pub fn decide(st: &State, cmd: &Command, actor: &Actor, now: u64) -> Result<Decided, ClientError> {
    match cmd {
        Command::Move {
            ply,
            mv,
            offer_draw,
            think_ms,
            lag,
        } => crate::moves::play(st, actor, *ply, mv, *offer_draw, *think_ms, *lag, now),
        Command::OfferDraw => crate::draw::offer(st, actor, now),
        Command::AnswerDraw { accept } => crate::draw::answer(st, actor, *accept, now),
        Command::Resign => crate::draw::resign(st, actor, now),
        Command::ClaimMoveLimit => crate::draw::claim_move_limit(st, actor, now),
        Command::RequestRuling => crate::draw::request_ruling(st, actor, now),
        Command::Arbiter { reason, action } => crate::arbiter::act(st, actor, reason, action, now),
        Command::CallArbiter { reason } => crate::call::call(st, actor, reason, now),
        Command::TakeCall => crate::call::take(st, actor, now),
        Command::CloseCall { decision } => crate::call::close(st, actor, decision, now),
        Command::Message { to, text } => crate::call::message(st, actor, *to, text, now),
        Command::Tick => crate::start::tick(st, now),
        Command::Join => crate::start::join(st, actor, now),
        Command::Restart => crate::moves::restart(st, now),
    }
}
