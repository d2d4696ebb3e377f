//! The arbiter's channel of a game: a player calls the arbiter (请裁判), an arbiter takes the
//! call and closes it, and the arbiter and the players exchange messages. Everything is an
//! event of the game's log, so a restart replays it; none of it reaches spectators (the
//! server's `audience` decides who sees what). Resuming, time, fouls and results stay the arbiter commands
//! ([`super::arbiter`]).
//!
//! Players may not message each other or anyone but the game's arbiters, and only while a call
//! is open: a league game has no channel between its players.

use chuhe_clock::Millis;

use super::command::{Actor, Answer, Batch, Decided, ensure_not_finished};
use super::state::State;
use crate::error::ClientError;
use crate::side;
use crate::types::{self as t, ArbiterNote, Kind, Role, Side};

/// Calls per side when the game's settings name no limit.
pub const DEFAULT_MAX_CALLS: u32 = 3;
/// The longest message or call reason, in characters.
pub const MAX_TEXT_CHARS: usize = 500;
/// A player may send one message per this many ms.
pub const PLAYER_MESSAGE_INTERVAL_MS: u64 = 1000;

pub use crate::state::OpenCall;

/// The game's call settings: its own, or the defaults for a league game; None: no calls.
pub fn settings(st: &State) -> Option<t::CallSettings> {
    match (&st.info.calls, &st.info.league) {
        (Some(c), _) => Some(*c),
        (None, Some(_)) => Some(t::CallSettings::default()),
        (None, None) => None,
    }
}

fn max_calls(s: &t::CallSettings) -> u32 {
    match s.max_per_side {
        0 => DEFAULT_MAX_CALLS,
        n => n,
    }
}

fn check_text(text: &str) -> Result<(), ClientError> {
    let n = text.chars().count();
    if n > MAX_TEXT_CHARS {
        return Err(ClientError::MessageTooLong {
            chars: n,
            limit: MAX_TEXT_CHARS,
        });
    }
    Ok(())
}

fn note(actor: &Actor, reason: &str) -> ArbiterNote {
    ArbiterNote {
        arbiter_id: actor.id.unwrap_or(0).to_string(),
        reason: reason.to_string(),
    }
}

/// A player calls the arbiter.
pub(crate) fn call(
    st: &State,
    actor: &Actor,
    reason: &str,
    now: u64,
) -> Result<Decided, ClientError> {
    let s = actor.side_in(st).ok_or(ClientError::NotAPlayer)?;
    let settings = settings(st).ok_or(ClientError::CallsNotAllowed)?;
    ensure_not_finished(st)?;
    check_text(reason)?;
    if let Some(c) = &st.open_call {
        return Err(ClientError::CallOpen { call_seq: c.seq });
    }
    let max = max_calls(&settings);
    let count = st.calls[side::index(s)] + 1;
    if count > max {
        return Err(ClientError::CallLimitReached { max });
    }
    let mut d = Batch::new(st, now);
    let running = d.clock().is_started() && !d.clock().is_paused() && st.started_at.is_some();
    if running && !settings.clock_runs {
        // The flag may have fallen already: then the call is refused as a move would be.
        d.clock_mut().pause(Millis(now)).map_err(|e| match e {
            chuhe_clock::ClockError::Paused => ClientError::GamePaused,
            other => ClientError::InvalidArgument(other.to_string()),
        })?;
    }
    let clock_stopped = d.clock().is_paused();
    let clock = d.clock_state();
    d.push(Kind::ArbiterCalled(t::ArbiterCalled {
        side: Some(s),
        reason: reason.trim().to_string(),
        clock: Some(clock),
        clock_stopped,
        count,
    }));
    Ok(d.finish_batch())
}

fn open_call(st: &State) -> Result<&OpenCall, ClientError> {
    st.open_call.as_ref().ok_or(ClientError::NoOpenCall)
}

fn ensure_free_for(call: &OpenCall, actor: &Actor) -> Result<(), ClientError> {
    match call.taken_by {
        Some(a) if Some(a) != actor.id => Err(ClientError::CallTaken { by: a.to_string() }),
        _ => Ok(()),
    }
}

/// An arbiter takes the open call. Taking one's own call again is acknowledged, changing
/// nothing; another arbiter's is refused with who has it.
pub(crate) fn take(st: &State, actor: &Actor, now: u64) -> Result<Decided, ClientError> {
    if !actor.is_arbiter() {
        return Err(ClientError::NotAnArbiter);
    }
    let call = open_call(st)?;
    ensure_free_for(call, actor)?;
    if call.taken_by.is_some() {
        return Ok(Decided::answered(Answer::Seq(st.seq)));
    }
    let mut d = Batch::new(st, now);
    let n = note(actor, "");
    d.push_by(
        Kind::CallTaken(t::CallTaken {
            call_seq: call.seq,
            arbiter: Some(n.clone()),
        }),
        Some(&n),
    );
    Ok(d.finish_batch())
}

/// An arbiter closes the open call with a decision (taking it if nobody had).
pub(crate) fn close(
    st: &State,
    actor: &Actor,
    decision: &str,
    now: u64,
) -> Result<Decided, ClientError> {
    if !actor.is_arbiter() {
        return Err(ClientError::NotAnArbiter);
    }
    let call = open_call(st)?;
    ensure_free_for(call, actor)?;
    if decision.trim().is_empty() {
        return Err(ClientError::InvalidArgument(
            "closing a call needs a decision".into(),
        ));
    }
    check_text(decision)?;
    let mut d = Batch::new(st, now);
    let n = note(actor, decision.trim());
    d.push_by(
        Kind::CallClosed(t::CallClosed {
            call_seq: call.seq,
            arbiter: Some(n.clone()),
        }),
        Some(&n),
    );
    Ok(d.finish_batch())
}

/// A message on the game's arbiter channel.
pub(crate) fn message(
    st: &State,
    actor: &Actor,
    to: Option<Side>,
    text: &str,
    now: u64,
) -> Result<Decided, ClientError> {
    let text = text.trim();
    let (from_role, from_side) = if actor.is_arbiter() {
        (Role::Arbiter, None)
    } else if let Some(s) = actor.side_in(st) {
        if settings(st).is_none() {
            return Err(ClientError::CallsNotAllowed);
        }
        if to.is_some() {
            return Err(ClientError::MessagingNotAllowed(
                "a player may message only the game's arbiters".into(),
            ));
        }
        if st.open_call.is_none() {
            return Err(ClientError::MessagingNotAllowed(
                "a player may message the arbiters only while a call is open".into(),
            ));
        }
        let last = st.last_message_at[side::index(s)];
        if last != 0 && now < last.saturating_add(PLAYER_MESSAGE_INTERVAL_MS) {
            return Err(ClientError::MessageRateLimited {
                interval_ms: PLAYER_MESSAGE_INTERVAL_MS,
            });
        }
        (Role::Player, Some(s))
    } else {
        return Err(ClientError::MessagingNotAllowed(
            "only the game's players and arbiters use its arbiter channel".into(),
        ));
    };
    ensure_not_finished(st)?;
    if text.is_empty() {
        return Err(ClientError::InvalidArgument("the message is empty".into()));
    }
    check_text(text)?;
    let mut d = Batch::new(st, now);
    let k = Kind::Message(t::GameMessage {
        from_id: actor.id.unwrap_or(0).to_string(),
        from_role: Some(from_role),
        from_side,
        to,
        text: text.to_string(),
        call_seq: st.open_call.as_ref().map_or(0, |c| c.seq),
    });
    if from_role == Role::Arbiter {
        let n = note(actor, "");
        d.push_by(k, Some(&n));
    } else {
        d.push(k);
    }
    Ok(d.finish_batch())
}
