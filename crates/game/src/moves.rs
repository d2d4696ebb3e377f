//! Moves, the flag and the restart: the commands that run the board and the clock.

use std::time::Duration;

use chuhe_clock::Millis;

use super::command::{Actor, Answer, Batch, Decided, ensure_playing};
use super::state::State;
use crate::board::Played;
use crate::error::ClientError;
use crate::side;
use crate::types::{self as t, Kind};

/// A player's move. A resend of the last move (same ply, any notation) is answered with its
/// seq and changes nothing; a move that comes after the flag fell commits the flag and is
/// refused.
#[allow(clippy::too_many_arguments)]
pub(crate) fn play(
    st: &State,
    actor: &Actor,
    ply: u32,
    mv: &str,
    offer_draw: bool,
    think_ms: Option<u32>,
    lag: Duration,
    now: u64,
) -> Result<Decided, ClientError> {
    let side = actor.side_in(st).ok_or(ClientError::NotAPlayer)?;
    if let Some(last) = &st.last_move {
        if last.ply == ply && last.side == side && is_same_move(mv, last) {
            return Ok(Decided::answered(Answer::Seq(last.seq)));
        }
    }
    ensure_playing(st)?;
    let expected = st.board.plies() + 1;
    if ply != expected {
        return Err(ClientError::StalePly { got: ply, expected });
    }
    if st.board.to_move() != side {
        return Err(ClientError::NotYourTurn);
    }
    let illegal = |why| ClientError::IllegalMove {
        mv: mv.to_string(),
        why,
    };
    let m = st.board.parse(mv).map_err(illegal)?;
    let mut board = st.board_copy();
    let played = board.play_move(m).map_err(illegal)?;
    let mut clock = st.clock.clone();
    let report = match clock.on_move(
        Millis(now),
        think_ms.map(|t| Duration::from_millis(u64::from(t))),
        lag,
    ) {
        Ok(rep) => rep,
        Err(chuhe_clock::ClockError::Paused) => return Err(ClientError::GamePaused),
        // The flag fell before the move arrived: the timer's decision comes first.
        Err(chuhe_clock::ClockError::Flagged(_) | chuhe_clock::ClockError::GameOver) => {
            return flag_instead(st, now);
        }
        Err(e) => return Err(ClientError::InvalidArgument(e.to_string())),
    };
    if report.is_flagged() {
        return flag_instead(st, now);
    }
    let mut d = Batch::new(st, now);
    d.set_clock(clock);
    if super::start::tracks_joining(st) && !st.joined[side::index(side)] {
        super::start::join_into(&mut d, side)?;
    }
    if st.draw_offer == Some(side::other(side)) {
        d.push(Kind::DrawDeclined(t::DrawDeclined {
            side: Some(side),
            by_moving: true,
        }));
    }
    let seq_of_move = d.next_seq();
    let clock = d.clock_state();
    let Played {
        iccs,
        chinese,
        wxf,
        fen,
        check,
        capture,
        end,
        warning,
    } = played;
    d.push(Kind::Move(t::MovePlayed {
        mv: Some(t::MoveRecord {
            ply,
            iccs,
            chinese,
            wxf,
            spent_ms: report.used_ms,
            fen,
            check,
            capture,
        }),
        clock: Some(clock),
        side: Some(side),
    }));
    d.ack = Some(seq_of_move);
    d.board = Some(board);
    if let Some(warning) = warning {
        d.push(Kind::Ruling(t::RulingIssued {
            ruling: Some(warning),
        }));
    }
    if let Some(end) = end {
        if let Some(r) = end.ruling {
            d.push(Kind::Ruling(t::RulingIssued { ruling: Some(r) }));
        }
        d.end(end.result, end.reason, end.explanation, end.phrase, None);
    } else if offer_draw {
        d.offer(side);
    }
    Ok(d.finish_batch())
}

/// Whether `text` names the recorded move `last` (in any notation).
fn is_same_move(text: &str, last: &super::state::LastMove) -> bool {
    let t = text.trim();
    let canonical = chuhe_rules::Move::from_iccs(t).ok().map(|m| m.to_iccs());
    canonical.as_deref() == Some(last.iccs.as_str())
        || [&last.iccs, &last.chinese, &last.wxf]
            .iter()
            .any(|x| x.as_str() == t)
}

/// The events that end the game on time if the flag has fallen at `now` (None: it has not).
pub(crate) fn flag(st: &State, now: u64) -> Option<Batch<'_>> {
    let mut d = Batch::new(st, now);
    d.flag().then_some(d)
}

/// A move came after the flag fell: the flag is committed and the move refused.
fn flag_instead(st: &State, now: u64) -> Result<Decided, ClientError> {
    match flag(st, now) {
        Some(mut d) => {
            d.error_after = Some(ClientError::GameFinished);
            Ok(d.finish_batch())
        }
        None => Err(ClientError::GameFinished),
    }
}

/// The game is taken up after the server was down since the last event: the clocks resume
/// from where they were (the stored snapshot), the outage charged to nobody.
pub(crate) fn restart(st: &State, now: u64) -> Result<Decided, ClientError> {
    if st.result.is_some() {
        return Err(ClientError::GameFinished);
    }
    let mut d = Batch::new(st, now);
    // The clock as of the last event, restarted at `now`: the time between is nobody's.
    let at_last = st.clock.snapshot(Millis(st.at_ms));
    let resumed = chuhe_clock::Clock::restore(&at_last, Millis(now))
        .map_err(|e| ClientError::InvalidArgument(e.to_string()))?;
    d.set_clock(resumed);
    let clock = d.clock_state();
    d.push(Kind::ServerRestarted(t::ServerRestarted {
        clock: Some(clock),
        downtime_ms: now.saturating_sub(st.at_ms),
    }));
    Ok(d.finish_batch())
}
