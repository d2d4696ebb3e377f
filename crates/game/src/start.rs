//! Creation and the start of a game: when its clocks start (at once, at a scheduled instant, or
//! when both players have joined), players joining, lateness (art. 21), and the server's timer.

use chuhe_clock::Millis;

use super::command::{Actor, Answer, Batch, Decided};
use super::state::State;
use crate::error::ClientError;
use crate::side;
use crate::types::{self as t, GameResult, Kind, Side, StartMode};

/// A new game: the state before its first event, and the decision that creates it (the
/// `Created` event; with START_MODE_NOW, or no mode, the clocks start at `now`).
pub fn create(info: &t::GameInfo, now: u64) -> Result<(State, Decided), ClientError> {
    let st = State::from_info(info).map_err(ClientError::InvalidArgument)?;
    if let Some(o) = st.board.position().outcome() {
        // No move can be played from it: the game would only wait for a flag.
        let how = match o.reason {
            chuhe_rules::EndReason::Checkmate => "checkmated",
            _ => "stalemated (困毙)",
        };
        return Err(ClientError::InvalidArgument(format!(
            "the starting position is already decided: the side to move is {how}"
        )));
    }
    match st.start_mode {
        StartMode::Scheduled if info.scheduled_start_ms == 0 => {
            return Err(ClientError::InvalidArgument(
                "a scheduled game needs its start time (scheduledStartMs)".into(),
            ));
        }
        StartMode::Scheduled | StartMode::PlayersPresent => {}
        StartMode::Now | StartMode::Unspecified => {}
    }
    let mut d = Batch::new(&st, now);
    let at_once = matches!(st.start_mode, StartMode::Now | StartMode::Unspecified);
    if at_once {
        d.clock_mut()
            .start(Millis(now))
            .map_err(|e| ClientError::InvalidArgument(e.to_string()))?;
    }
    let clock = d.clock_state();
    d.push(Kind::Created(t::GameCreated {
        info: Some(Box::new(info.clone())),
        clock: Some(clock),
    }));
    let decided = d.finish_batch();
    Ok((st, decided))
}

/// Starts the drafted game's clocks at `at` (a scheduled start may be recorded a little after
/// its instant: the clocks still start at it).
fn start(d: &mut Batch<'_>, at: u64) -> Result<(), ClientError> {
    d.clock_mut()
        .start_at(Millis(at))
        .map_err(|e| ClientError::InvalidArgument(e.to_string()))?;
    d.started = Some(at);
    let clock = d.clock_state();
    d.push(Kind::Started(t::GameStarted {
        clock: Some(clock),
        started_at_ms: at,
    }));
    Ok(())
}

/// Whether a game records who joined: only when it matters (lateness, or a start that waits
/// for both players), so other games' event streams are as they always were.
pub fn tracks_joining(st: &State) -> bool {
    st.info.lateness_limit_ms > 0 || st.start_mode == StartMode::PlayersPresent
}

/// A player of the game is here. Recorded once per side, in games that track joining; the
/// second player's arrival starts a START_MODE_PLAYERS_PRESENT game.
pub(crate) fn join(st: &State, actor: &Actor, now: u64) -> Result<Decided, ClientError> {
    let s = actor.side_in(st).ok_or(ClientError::NotAPlayer)?;
    if st.joined[side::index(s)] || !tracks_joining(st) || st.is_finished() {
        return Ok(Decided::answered(Answer::Seq(st.seq)));
    }
    let mut d = Batch::new(st, now);
    join_into(&mut d, s)?;
    Ok(d.finish_batch())
}

/// Drafts side `s` joining (and the start it may bring).
pub(crate) fn join_into(d: &mut Batch<'_>, s: Side) -> Result<(), ClientError> {
    d.push(Kind::Joined(t::PlayerJoined { side: Some(s) }));
    let other_here = d.st.joined[side::index(side::other(s))];
    if d.st.start_mode == StartMode::PlayersPresent && other_here && d.started.is_none() {
        let now = d.now;
        start(d, now)?;
    }
    Ok(())
}

/// The server's timer: a scheduled start whose instant has come, a lateness forfeit whose
/// limit has passed, a flag that has fallen — whatever is due at `now`, in that order.
pub(crate) fn tick(st: &State, now: u64) -> Result<Decided, ClientError> {
    if st.is_finished() {
        return Err(ClientError::GameFinished);
    }
    let mut d = Batch::new(st, now);
    if let Some(at) = st.start_due().filter(|at| *at <= now) {
        start(&mut d, at)?;
    }
    let lateness = d
        .started
        .map(|at| at.saturating_add(st.info.lateness_limit_ms))
        .filter(|_| st.info.lateness_limit_ms > 0 && st.joined != [true, true]);
    if let Some(limit) = lateness.filter(|t| *t <= now) {
        let _ = limit;
        let mins = st.info.lateness_limit_ms / 60_000;
        let secs = st.info.lateness_limit_ms % 60_000 / 1000;
        let after = if secs == 0 {
            format!("{mins} min")
        } else {
            format!("{mins} min {secs} s")
        };
        let (result, explanation, absent) = match st.joined {
            [false, false] => (
                GameResult::BothLose,
                format!(
                    "Neither player had joined the game {after} after its start: both lose by lateness (art. 21)."
                ),
                "both",
            ),
            [false, _] => (
                side::win_for(Side::Black),
                format!(
                    "Red had not joined the game {after} after its start: Red loses by lateness (art. 21)."
                ),
                "red",
            ),
            _ => (
                side::win_for(Side::Red),
                format!(
                    "Black had not joined the game {after} after its start: Black loses by lateness (art. 21)."
                ),
                "black",
            ),
        };
        let phrase = crate::phrase::phrase(
            "ended.lateness",
            &[
                ("side", absent.to_string()),
                ("after_ms", st.info.lateness_limit_ms.to_string()),
                ("article", "21".into()),
            ],
        );
        d.end(result, "lateness", explanation, phrase, None);
    } else {
        d.flag();
    }
    if d.is_empty() {
        return Err(ClientError::InvalidArgument("nothing is due".into()));
    }
    Ok(d.finish_batch())
}

/// A start or lateness limit due at `now` (not the flag, which a move that comes after it
/// meets by itself): the driver decides it before the next request.
pub fn due_before_requests(st: &State, now: u64) -> bool {
    st.start_due().is_some_and(|t| t <= now) || st.lateness_due().is_some_and(|t| t <= now)
}
