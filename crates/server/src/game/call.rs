//! The arbiter's channel of a game: a player calls the arbiter (请裁判), an arbiter takes the
//! call and closes it, and the arbiter and the players exchange messages. Everything is an
//! event of the game's log, so a restart replays it; none of it reaches spectators (see
//! [`crate::live`]). Resuming, time, fouls and results stay the arbiter commands
//! ([`super::arbiter`]).
//!
//! Players may not message each other or anyone but the game's arbiters, and only while a call
//! is open: a league game has no channel between its players.

use chuhe_clock::Millis;
use chuhe_proto::v1::{self as w, ArbiterNote, Role as WRole, Side, game_event::Kind};

use super::command::{Actor, Answer, Decided, Draft, ensure_not_finished};
use super::state::State;
use crate::error::ClientError;
use crate::side;

/// Calls per side when the game's settings name no limit.
pub const DEFAULT_MAX_CALLS: u32 = 3;
/// The longest message or call reason, in characters.
pub const MAX_TEXT_CHARS: usize = 500;
/// A player may send one message per this many ms.
pub const PLAYER_MESSAGE_INTERVAL_MS: u64 = 1000;

/// A call not yet closed, as the state keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenCall {
    /// The `ArbiterCalled` event's seq: the call's id.
    pub seq: u64,
    pub side: Side,
    pub at_ms: u64,
    pub reason: String,
    /// The arbiter who took it.
    pub taken_by: Option<i64>,
    pub clock_stopped: bool,
}

/// The game's call settings: its own, or the defaults for a league game; None: no calls.
pub fn settings(st: &State) -> Option<w::CallSettings> {
    match (&st.info.calls, &st.info.league) {
        (Some(c), _) => Some(*c),
        (None, Some(_)) => Some(w::CallSettings::default()),
        (None, None) => None,
    }
}

fn max_calls(s: &w::CallSettings) -> u32 {
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
    let mut d = Draft::new(st, now);
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
    d.push(Kind::ArbiterCalled(w::ArbiterCalled {
        side: s as i32,
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
    let mut d = Draft::new(st, now);
    let n = note(actor, "");
    d.push_by(
        Kind::CallTaken(w::CallTaken {
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
    let mut d = Draft::new(st, now);
    let n = note(actor, decision.trim());
    d.push_by(
        Kind::CallClosed(w::CallClosed {
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
    to: i32,
    text: &str,
    now: u64,
) -> Result<Decided, ClientError> {
    let text = text.trim();
    let to = Side::try_from(to).unwrap_or(Side::Unspecified);
    let (from_role, from_side) = if actor.is_arbiter() {
        (WRole::Arbiter, Side::Unspecified)
    } else if let Some(s) = actor.side_in(st) {
        if settings(st).is_none() {
            return Err(ClientError::CallsNotAllowed);
        }
        if to != Side::Unspecified {
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
        (WRole::Player, s)
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
    let mut d = Draft::new(st, now);
    let k = Kind::Message(w::GameMessage {
        from_id: actor.id.unwrap_or(0).to_string(),
        from_role: from_role as i32,
        from_side: from_side as i32,
        to: to as i32,
        text: text.to_string(),
        call_seq: st.open_call.as_ref().map_or(0, |c| c.seq),
    });
    if from_role == WRole::Arbiter {
        let n = note(actor, "");
        d.push_by(k, Some(&n));
    } else {
        d.push(k);
    }
    Ok(d.finish_batch())
}

/// Who may see an event of the arbiter channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Viewer {
    /// One of the game's arbiters (or an organizer): sees everything.
    Arbiter,
    /// A player of the game.
    Player(Side),
    /// Anyone else.
    Spectator,
}

/// Whether `k` belongs to the arbiter channel (the only events not everyone sees).
pub fn is_private(k: Option<&Kind>) -> bool {
    matches!(
        k,
        Some(Kind::ArbiterCalled(_) | Kind::CallTaken(_) | Kind::CallClosed(_) | Kind::Message(_))
    )
}

/// The event `ev` of the arbiter channel as `viewer` receives it: whole, without what is not
/// theirs (a call's reason for the opponent), or as a [`w::PrivateEvent`] keeping only the
/// clocks. `clock`: the clocks after the event (for the stand-in).
pub fn redact(ev: &w::GameEvent, viewer: Viewer, clock: Option<w::ClockState>) -> w::GameEvent {
    let clock = clock.or(match &ev.kind {
        Some(Kind::ArbiterCalled(c)) => c.clock,
        _ => None,
    });
    let stand_in = || w::GameEvent {
        game_id: ev.game_id.clone(),
        seq: ev.seq,
        at_ms: ev.at_ms,
        kind: Some(Kind::Private(w::PrivateEvent { clock })),
    };
    let Viewer::Player(me) = viewer else {
        return match viewer {
            Viewer::Arbiter => ev.clone(),
            _ => stand_in(),
        };
    };
    match &ev.kind {
        Some(Kind::ArbiterCalled(c)) if c.side != me as i32 => {
            let mut e = ev.clone();
            if let Some(Kind::ArbiterCalled(c)) = &mut e.kind {
                c.reason.clear();
            }
            e
        }
        Some(Kind::Message(m)) => {
            let mine = m.from_side == me as i32;
            let to_me = m.from_role == WRole::Arbiter as i32
                && (m.to == Side::Unspecified as i32 || m.to == me as i32);
            if mine || to_me {
                ev.clone()
            } else {
                stand_in()
            }
        }
        _ => ev.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(from_role: WRole, from_side: Side, to: Side) -> w::GameEvent {
        w::GameEvent {
            game_id: "1".into(),
            seq: 9,
            at_ms: 5,
            kind: Some(Kind::Message(w::GameMessage {
                from_id: "3".into(),
                from_role: from_role as i32,
                from_side: from_side as i32,
                to: to as i32,
                text: "hello".into(),
                call_seq: 8,
            })),
        }
    }

    fn hidden(e: &w::GameEvent) -> bool {
        matches!(e.kind, Some(Kind::Private(_)))
    }

    #[test]
    fn messages_reach_only_their_audience() {
        let red = msg(WRole::Player, Side::Red, Side::Unspecified);
        assert!(!hidden(&redact(&red, Viewer::Arbiter, None)));
        assert!(!hidden(&redact(&red, Viewer::Player(Side::Red), None)));
        assert!(hidden(&redact(&red, Viewer::Player(Side::Black), None)));
        assert!(hidden(&redact(&red, Viewer::Spectator, None)));
        let to_black = msg(WRole::Arbiter, Side::Unspecified, Side::Black);
        assert!(hidden(&redact(&to_black, Viewer::Player(Side::Red), None)));
        assert!(!hidden(&redact(
            &to_black,
            Viewer::Player(Side::Black),
            None
        )));
        assert!(hidden(&redact(&to_black, Viewer::Spectator, None)));
        let to_both = msg(WRole::Arbiter, Side::Unspecified, Side::Unspecified);
        assert!(!hidden(&redact(&to_both, Viewer::Player(Side::Red), None)));
        assert!(!hidden(&redact(
            &to_both,
            Viewer::Player(Side::Black),
            None
        )));
        // The stand-in keeps the seq.
        assert_eq!(redact(&to_both, Viewer::Spectator, None).seq, 9);
    }

    #[test]
    fn the_opponent_sees_a_call_without_its_reason() {
        let ev = w::GameEvent {
            game_id: "1".into(),
            seq: 4,
            at_ms: 5,
            kind: Some(Kind::ArbiterCalled(w::ArbiterCalled {
                side: Side::Red as i32,
                reason: "my opponent is using an engine".into(),
                clock: None,
                clock_stopped: true,
                count: 1,
            })),
        };
        let reason = |e: w::GameEvent| match e.kind {
            Some(Kind::ArbiterCalled(c)) => Some(c.reason),
            _ => None,
        };
        assert_eq!(
            reason(redact(&ev, Viewer::Player(Side::Red), None)).as_deref(),
            Some("my opponent is using an engine")
        );
        assert_eq!(
            reason(redact(&ev, Viewer::Player(Side::Black), None)).as_deref(),
            Some("")
        );
        assert!(hidden(&redact(&ev, Viewer::Spectator, None)));
    }
}
