//! Arbiter commands: pause, resume, add or charge time, record a foul, set a result, override
//! a ruling. Each needs a reason, and each event carries the arbiter and the reason (the
//! arbiter log).

use std::time::Duration;

use chuhe_clock::Millis;

use super::command::{Actor, Batch, Decided, ensure_not_finished};
use super::state::State;
use crate::error::ClientError;
use crate::phrase::{phrase, side_code};
use crate::side;
use crate::types::{self as t, ArbiterAction as Action, ArbiterNote, Kind, Side};

fn side_arg(s: Option<Side>) -> Result<Side, ClientError> {
    s.ok_or_else(|| ClientError::InvalidArgument("side must be SIDE_RED or SIDE_BLACK".into()))
}

fn clock_error(e: chuhe_clock::ClockError) -> ClientError {
    ClientError::InvalidArgument(e.to_string())
}

pub(crate) fn act(
    st: &State,
    actor: &Actor,
    reason: &str,
    action: &Action,
    now: u64,
) -> Result<Decided, ClientError> {
    if !actor.is_arbiter() {
        return Err(ClientError::NotAnArbiter);
    }
    if reason.trim().is_empty() {
        return Err(ClientError::InvalidArgument(
            "an arbiter command needs a reason".into(),
        ));
    }
    let note = ArbiterNote {
        arbiter_id: actor.id.unwrap_or(0).to_string(),
        reason: reason.to_string(),
    };
    let mut d = Batch::new(st, now);
    match action {
        Action::Pause => {
            ensure_not_finished(st)?;
            d.clock_mut().pause(Millis(now)).map_err(clock_error)?;
            let clock = d.clock_state();
            d.push_by(
                Kind::Paused(t::GamePaused {
                    clock: Some(clock),
                    arbiter: Some(note.clone()),
                }),
                Some(&note),
            );
        }
        Action::Resume => {
            ensure_not_finished(st)?;
            d.clock_mut().resume(Millis(now)).map_err(clock_error)?;
            let clock = d.clock_state();
            d.push_by(
                Kind::Resumed(t::GameResumed {
                    clock: Some(clock),
                    arbiter: Some(note.clone()),
                }),
                Some(&note),
            );
        }
        Action::AddTime { side, delta_ms } => {
            ensure_not_finished(st)?;
            let s = side_arg(*side)?;
            let amount = Duration::from_millis(delta_ms.unsigned_abs());
            let flagged = if *delta_ms >= 0 {
                d.clock_mut()
                    .add_time(side::to_clock(s), amount, Millis(now))
                    .map_err(clock_error)?;
                false
            } else {
                d.clock_mut()
                    .charge_time(side::to_clock(s), amount, Millis(now))
                    .map_err(clock_error)?
                    .is_some()
            };
            let clock = d.clock_state();
            d.push_by(
                Kind::ClockAdjusted(t::ClockAdjusted {
                    side: Some(s),
                    delta_ms: *delta_ms,
                    code: "arbiter".into(),
                    clock: Some(clock),
                    arbiter: Some(note.clone()),
                }),
                Some(&note),
            );
            if flagged {
                d.end(
                    side::win_for(side::other(s)),
                    "flag",
                    format!(
                        "The time charged by the arbiter used up {}'s time.",
                        side::name(s)
                    ),
                    phrase(
                        "ended.flag_arbiter",
                        &[
                            ("side", side_code(s)),
                            ("winner", side_code(side::other(s))),
                            ("reason", reason.to_string()),
                        ],
                    ),
                    Some(note),
                );
            }
        }
        Action::RecordFoul { side } => {
            ensure_not_finished(st)?;
            let s = side_arg(*side)?;
            d.foul(
                s,
                "arbiter",
                format!(
                    "The arbiter recorded a foul against {}: {reason}",
                    side::name(s)
                ),
                phrase(
                    "foul.arbiter",
                    &[("side", side_code(s)), ("reason", reason.to_string())],
                ),
                Some(note),
            );
        }
        Action::SetResult { result } => {
            // A finished game's record is closed (its result is stored with its end); a
            // league board's result is corrected in its league.
            ensure_not_finished(st)?;
            let Some(result) = *result else {
                return Err(ClientError::InvalidArgument("result must be set".into()));
            };
            d.end(
                result,
                "arbiter",
                format!("The arbiter set the result {}: {reason}", result.text()),
                phrase(
                    "ended.arbiter",
                    &[
                        ("result", result.code().to_string()),
                        ("reason", reason.to_string()),
                    ],
                ),
                Some(note),
            );
        }
        Action::OverrideRuling { ruling_seq, result } => {
            ensure_not_finished(st)?;
            if !st.rulings.contains(ruling_seq) {
                return Err(ClientError::InvalidArgument(format!(
                    "event {ruling_seq} is not a ruling"
                )));
            }
            d.push_by(
                Kind::RulingOverridden(t::RulingOverridden {
                    ruling_seq: *ruling_seq,
                    result: *result,
                    arbiter: Some(note.clone()),
                }),
                Some(&note),
            );
            if let Some(result) = *result {
                d.end(
                    result,
                    "arbiter",
                    format!("The arbiter overrode the ruling: {reason}"),
                    phrase(
                        "ended.arbiter_override",
                        &[
                            ("result", result.code().to_string()),
                            ("ruling_seq", ruling_seq.to_string()),
                            ("reason", reason.to_string()),
                        ],
                    ),
                    Some(note),
                );
            }
        }
    }
    Ok(d.finish_batch())
}
