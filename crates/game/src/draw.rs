//! Draw offers and answers, resignation, the move-limit claim and the request for a ruling:
//! the players' commands besides moves (art. 9, 23).

use std::time::Duration;

use chuhe_clock::Millis;

use super::command::{Actor, Batch, Decided, ensure_not_finished, ensure_playing};
use super::state::State;
use crate::error::ClientError;
use crate::phrase::{phrase, side_code};
use crate::side;
use crate::types::{self as t, GameResult, Kind};

/// A false move-limit claim costs the claimant this much of its clock (art. 23.3).
pub const FALSE_CLAIM_PENALTY: Duration = Duration::from_secs(300);

/// A draw offer outside a move: only after one's own move, before the opponent's.
pub(crate) fn offer(st: &State, actor: &Actor, now: u64) -> Result<Decided, ClientError> {
    let side = actor.side_in(st).ok_or(ClientError::NotAPlayer)?;
    ensure_playing(st)?;
    if st.board.to_move() == side || st.draw_offer == Some(side) {
        return Err(ClientError::DrawOfferNotAllowed);
    }
    if st.draw_offer == Some(side::other(side)) {
        // The opponent's offer stands: it is to be answered, not met with another.
        return Err(ClientError::DrawOfferNotAllowed);
    }
    let mut d = Batch::new(st, now);
    d.offer(side);
    Ok(d.finish_batch())
}

/// Accepting or declining the opponent's standing offer.
pub(crate) fn answer(
    st: &State,
    actor: &Actor,
    accept: bool,
    now: u64,
) -> Result<Decided, ClientError> {
    let side = actor.side_in(st).ok_or(ClientError::NotAPlayer)?;
    ensure_playing(st)?;
    if st.draw_offer != Some(side::other(side)) {
        return Err(ClientError::NoDrawOffer);
    }
    let mut d = Batch::new(st, now);
    if accept {
        d.end(
            GameResult::Draw,
            "draw_agreed",
            format!(
                "{} accepted {}'s draw offer.",
                side::name(side),
                side::name(side::other(side))
            ),
            phrase(
                "ended.draw_agreed",
                &[
                    ("side", side_code(side)),
                    ("other", side_code(side::other(side))),
                ],
            ),
            None,
        );
    } else {
        d.push(Kind::DrawDeclined(t::DrawDeclined {
            side: Some(side),
            by_moving: false,
        }));
    }
    Ok(d.finish_batch())
}

pub(crate) fn resign(st: &State, actor: &Actor, now: u64) -> Result<Decided, ClientError> {
    let side = actor.side_in(st).ok_or(ClientError::NotAPlayer)?;
    ensure_not_finished(st)?;
    let mut d = Batch::new(st, now);
    d.end(
        side::win_for(side::other(side)),
        "resign",
        format!("{} resigned.", side::name(side)),
        phrase(
            "ended.resign",
            &[
                ("side", side_code(side)),
                ("winner", side_code(side::other(side))),
            ],
        ),
        None,
    );
    Ok(d.finish_batch())
}

/// A claim of the natural move limit (art. 23.3): true, a draw; false, a foul and five minutes
/// off the claimant's clock (which may flag it).
pub(crate) fn claim_move_limit(
    st: &State,
    actor: &Actor,
    now: u64,
) -> Result<Decided, ClientError> {
    let side = actor.side_in(st).ok_or(ClientError::NotAPlayer)?;
    ensure_playing(st)?;
    let mut d = Batch::new(st, now);
    let counted = st.board.move_limit_count();
    if counted >= st.move_limit {
        d.end(
            GameResult::Draw,
            "move_limit",
            format!(
                "{} claimed the natural move limit: {counted} plies without a capture (limit {}). Draw (art. 4.2.4).",
                side::name(side),
                st.move_limit
            ),
            phrase(
                "ended.move_limit_claim",
                &[
                    ("side", side_code(side)),
                    ("plies", counted.to_string()),
                    ("limit", st.move_limit.to_string()),
                    ("article", "4.2.4".into()),
                ],
            ),
            None,
        );
        return Ok(d.finish_batch());
    }
    d.foul(
        side,
        "false_move_limit_claim",
        format!(
            "{} claimed the move limit after {counted} plies without a capture; the limit is {}. A false claim is a foul and costs 5 minutes (art. 23.3).",
            side::name(side),
            st.move_limit
        ),
        phrase(
            "foul.false_move_limit_claim",
            &[
                ("side", side_code(side)),
                ("plies", counted.to_string()),
                ("limit", st.move_limit.to_string()),
                ("article", "23.3".into()),
            ],
        ),
        None,
    );
    if !d.ended {
        let flag = d
            .clock_mut()
            .charge_time(side::to_clock(side), FALSE_CLAIM_PENALTY, Millis(now))
            .ok()
            .flatten();
        let clock = d.clock_state();
        d.push(Kind::ClockAdjusted(t::ClockAdjusted {
            side: Some(side),
            delta_ms: -(FALSE_CLAIM_PENALTY.as_millis() as i64),
            code: "false_claim_penalty".into(),
            clock: Some(clock),
            arbiter: None,
        }));
        if flag.is_some() {
            d.end(
                side::win_for(side::other(side)),
                "flag",
                format!("The 5-minute penalty used up {}'s time.", side::name(side)),
                phrase(
                    "ended.flag_penalty",
                    &[
                        ("side", side_code(side)),
                        ("winner", side_code(side::other(side))),
                    ],
                ),
                None,
            );
        }
    }
    Ok(d.finish_batch())
}

/// A player asks for a ruling: the must-vary warning in force, or that there is nothing to
/// rule on (the server rules by itself at every third occurrence).
pub(crate) fn request_ruling(st: &State, actor: &Actor, now: u64) -> Result<Decided, ClientError> {
    actor.side_in(st).ok_or(ClientError::NotAPlayer)?;
    ensure_playing(st)?;
    let ruling = st.board.pending_warning().unwrap_or_else(|| t::Ruling {
        kind: Some(t::RulingKind::None),
        explanation: "No cycle is being repeated: there is nothing to rule on (art. 24). The server rules automatically at every third occurrence of a position.".into(),
        explanation_en: "No cycle is being repeated: there is nothing to rule on (art. 24). The server rules automatically at every third occurrence of a position.".into(),
        explanation_zh: "没有循环重复的局面，无须裁决（第24条）。局面每第三次出现时服务器自动裁决。".into(),
        phrase: Some(phrase("ruling.none", &[("article", "24".into())])),
        ply: st.board.plies(),
        ..t::Ruling::default()
    });
    let mut d = Batch::new(st, now);
    d.push(Kind::Ruling(t::RulingIssued {
        ruling: Some(ruling),
    }));
    Ok(d.finish_batch())
}
