//! [`decide`]: what a command to a league would change, as log entries, without changing it.
//! After every command the league also settles what has become due by then (lineups to
//! reveal, colours to default, choices to ask for, a completed round, the next Swiss or
//! knockout round). The driver folds the entries once they are committed.

use chuhe_league::chain::StageColours;
use chuhe_league::lineup::{FinalLineup, LineupRules};
use chuhe_league::swiss::{SwissOptions, SwissRound, SwissTeam, pair_next_round};
use serde::{Deserialize, Serialize};

use super::event::{
    BoardKey, BoardSetting, ColourName, Entry, ForfeitBy, LeagueEvent, Outcome, Revealed, TeamSide,
};
use super::state::League;
use super::view::stage_complete;
use crate::spec::System;

/// Who sends a command, as the league needs to know it: an account (its id and role), or the
/// driver itself ([`Actor::SERVER`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Actor {
    /// The account's id; None: anonymous, or the driver.
    pub id: Option<i64>,
    pub role: Option<Role>,
}

impl Actor {
    /// The driver's own commands (its timer, the games it sets up and sees end).
    pub const SERVER: Actor = Actor {
        id: None,
        role: None,
    };
}

/// An account's role, as the league's permissions read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Player,
    Arbiter,
    Organizer,
}

/// How a league game ended, in Red/Black terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColourResult {
    RedWins,
    BlackWins,
    Draw,
    BothLose,
}

/// What a command changes: the entries to commit (possibly none), and what could not follow
/// by itself and waits for the organiser (for the driver to log).
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub entries: Vec<Entry>,
    pub waiting: Vec<Waiting>,
}

/// Something that would follow by itself but cannot yet: it waits for the organiser, who sees
/// why in the league's state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Waiting {
    /// A Swiss round completed and the next cannot be paired.
    #[error("next Swiss round not paired: {0}")]
    SwissRound(LeagueError),
    /// A stage completed and the next cannot be seeded from its standings.
    #[error("next stage not begun: {0}")]
    NextStage(LeagueError),
}

impl Waiting {
    /// The reason.
    pub fn error(&self) -> &LeagueError {
        match self {
            Waiting::SwissRound(e) | Waiting::NextStage(e) => e,
        }
    }

    /// What waits, in a few words.
    pub fn what(&self) -> &'static str {
        match self {
            Waiting::SwissRound(_) => "next Swiss round not paired",
            Waiting::NextStage(_) => "next stage not begun",
        }
    }
}

/// What can be asked of a league.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum LeagueCommand {
    /// Organiser: fix the fixtures (a round robin's every round, a Swiss or knockout's first)
    /// and open lineups.
    Publish,
    /// Organiser: move a round that has not started.
    Reschedule {
        round: u32,
        start_ms: u64,
        deadline_ms: u64,
    },
    /// A captain (or the organiser): a lineup in board order, before the deadline.
    SubmitLineup {
        round: u32,
        table: u32,
        team: usize,
        players: Vec<String>,
    },
    /// The chooser of a chosen stage (the armageddon): its own colour.
    ChooseColour { at: BoardKey, colour: ColourName },
    /// The driver set up a chain game.
    GameCreated {
        at: BoardKey,
        stage: u32,
        game: i64,
        first_colour: ColourName,
        red: i64,
        black: i64,
        start_ms: u64,
    },
    /// The driver saw a league game end: its result in Red/Black terms (None: the game has
    /// none), its reason code, and the fouls of [Red, Black].
    GameFinished {
        game: i64,
        result: Option<ColourResult>,
        reason: String,
        fouls: [u32; 2],
    },
    /// Arbiter: set or correct a board's result.
    SetBoard { at: BoardKey, setting: BoardSetting },
    /// Arbiter (through `POST …/boards/{b}/import`, which stores the games first): a board
    /// played elsewhere, its chain's games loaded as played games. Refused on a board that
    /// has a game or a result.
    ImportBoard {
        at: BoardKey,
        games: Vec<ImportedGame>,
    },
    /// Arbiter: a whole match forfeited.
    ForfeitMatch {
        round: u32,
        table: u32,
        by: ForfeitBy,
    },
    /// Arbiter: a team withdraws (or is expelled, 18.3) after a round.
    Withdraw {
        team: usize,
        after_round: u32,
        #[serde(default)]
        expelled: bool,
    },
    /// Arbiter: a board is played again.
    ReplayBoard { at: BoardKey },
    /// Arbiter: a message to the captains of `team`, or to everyone of the event (no team).
    Message {
        #[serde(default)]
        team: Option<usize>,
        text: String,
    },
    /// Organiser: pair the next Swiss round now (it is otherwise paired when the round before
    /// completes).
    PairNextRound,
    /// Organiser: begin the next stage of a multi-stage event now that the current one is
    /// complete (it otherwise begins by itself then), with its teams seeded from the
    /// standings — or, when given, these teams in seed order (to settle a tie for the last
    /// place that passes on, after a play-off).
    StartNextStage {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        teams: Option<Vec<usize>>,
    },
    /// The driver's timer: whatever is due.
    Tick,
}

/// The longest arbiter's message to captains or the event, in characters.
pub const MESSAGE_MAX_CHARS: usize = 500;
/// An arbiter sends at most one message to captains or the event per this many ms.
pub const MESSAGE_INTERVAL_MS: u64 = 2000;
/// A game of an imported board, stored already (its log holds the moves and its end).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportedGame {
    pub game: i64,
    pub first_colour: ColourName,
    pub red: i64,
    pub black: i64,
    pub outcome: Outcome,
    /// The game's end reason code (e.g. `checkmate`, or `arbiter` for a result recorded).
    pub reason: String,
    pub start_ms: u64,
}

/// A refused command; the league is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeagueError {
    #[error("{0}")]
    PermissionDenied(String),
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
    /// The event is not in a state that allows this.
    #[error("{0}")]
    Conflict(String),
    /// Every reason a lineup was refused: (code, sentence).
    #[error("lineup refused: {}", .0.iter().map(|(_, m)| m.as_str()).collect::<Vec<_>>().join("; "))]
    LineupRefused(Vec<(String, String)>),
    /// A Swiss round cannot be paired.
    #[error("the next round cannot be paired: {0}")]
    Pairing(String),
    /// The next stage cannot begin: the current one has matches to play.
    #[error("{0}")]
    StageNotComplete(String),
    /// The next stage's teams cannot be seeded from the standings (a tie for the last place
    /// that passes on): the organiser names them.
    #[error("the next stage cannot be seeded: {0}")]
    Seeding(String),
    /// A correction would change who went on to a knockout round or a stage that has been
    /// paired already.
    #[error("{0}")]
    AlreadySeeded(String),
    /// A message over the length limit.
    #[error("the message has {chars} characters; at most {limit}")]
    MessageTooLong { chars: usize, limit: usize },
    /// An arbiter's messages come too fast.
    #[error("one message every {interval_ms} ms at most")]
    MessageRateLimited { interval_ms: u64 },
    /// The board has a game or a result already (an import goes to an empty board).
    #[error("{0}")]
    BoardNotEmpty(String),
}

impl LeagueError {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            LeagueError::PermissionDenied(_) => "permission_denied",
            LeagueError::NotFound(_) => "not_found",
            LeagueError::Invalid(_) => "invalid_argument",
            LeagueError::Conflict(_) => "conflict",
            LeagueError::LineupRefused(_) => "lineup_refused",
            LeagueError::Pairing(_) => "pairing_refused",
            LeagueError::StageNotComplete(_) => "stage_not_complete",
            LeagueError::Seeding(_) => "seeding_refused",
            LeagueError::AlreadySeeded(_) => "already_seeded",
            LeagueError::MessageTooLong { .. } => "message_too_long",
            LeagueError::MessageRateLimited { .. } => "message_rate_limited",
            LeagueError::BoardNotEmpty(_) => "board_not_empty",
        }
    }
}

/// Commands are decided on a working copy: each drafted entry is folded into it at once, so
/// what is drafted next sees it.
struct CommandDraft {
    work: League,
    now: u64,
    entries: Vec<Entry>,
    actor: Option<i64>,
    reason: Option<String>,
    waiting: Vec<Waiting>,
}

impl CommandDraft {
    fn push(&mut self, event: LeagueEvent) -> Result<(), LeagueError> {
        let e = Entry {
            seq: self.work.seq + 1,
            at_ms: self.now,
            actor: self.actor,
            reason: self.reason.clone(),
            event,
        };
        self.work
            .fold(&e)
            .map_err(|err| LeagueError::Conflict(err.to_string()))?;
        self.entries.push(e);
        Ok(())
    }

    /// What follows by itself, recorded without an actor.
    fn push_system(&mut self, event: LeagueEvent) -> Result<(), LeagueError> {
        let (a, r) = (self.actor.take(), self.reason.take());
        let out = self.push(event);
        self.actor = a;
        self.reason = r;
        out
    }
}

/// Whether a board can take an import: it exists, has no game and no result (neither set by
/// an arbiter nor by a forfeit of its match).
pub fn board_open_for_import(league: &League, at: BoardKey) -> Result<(), LeagueError> {
    let b = league
        .board(at)
        .ok_or_else(|| LeagueError::NotFound(at.to_string()))?;
    let t = league
        .table(at.round, at.table)
        .ok_or_else(|| LeagueError::NotFound(at.to_string()))?;
    if !b.games.is_empty() || b.set.is_some() || t.forfeit.is_some() {
        return Err(LeagueError::BoardNotEmpty(format!(
            "{at} has a game or a result already: nothing imported (an arbiter's replay_board \
             clears it)"
        )));
    }
    Ok(())
}

fn import_board(
    d: &mut CommandDraft,
    league: &League,
    at: BoardKey,
    games: &[ImportedGame],
) -> Result<(), LeagueError> {
    board_open_for_import(league, at)?;
    if games.is_empty() {
        return Err(LeagueError::Invalid("no game to import".into()));
    }
    if let Some(g) = games.iter().find(|g| league.games.contains_key(&g.game)) {
        return Err(LeagueError::Conflict(format!(
            "game {} belongs to the event already",
            g.game
        )));
    }
    let record = chuhe_league::chain::BoardRecord::Played(
        games
            .iter()
            .map(|g| chuhe_league::chain::PlayedGame {
                first_colour: g.first_colour.league(),
                result: match g.outcome {
                    Outcome::First => chuhe_league::chain::GameResult::FirstWins,
                    Outcome::Second => chuhe_league::chain::GameResult::SecondWins,
                    Outcome::Draw | Outcome::BothLose => chuhe_league::chain::GameResult::Draw,
                },
                fouls: [0, 0],
            })
            .collect(),
    );
    let rules = &league.rules_of(at.round).event;
    chuhe_league::chain::evaluate_board(&rules.chain, &rules.game_scoring, at.board, &record)
        .map_err(|e| LeagueError::Invalid(format!("the games do not make {at}'s result: {e}")))?;
    for (stage, g) in games.iter().enumerate() {
        d.push(LeagueEvent::GameCreated {
            at,
            stage: stage as u32,
            game: g.game,
            first_colour: g.first_colour,
            red: g.red,
            black: g.black,
            start_ms: g.start_ms,
        })?;
        d.push(LeagueEvent::GameFinished {
            at,
            stage: stage as u32,
            game: g.game,
            outcome: g.outcome,
            reason: g.reason.clone(),
            fouls: [0, 0],
        })?;
    }
    if d.work.board_record(at).is_none() {
        return Err(LeagueError::Invalid(format!(
            "the games do not decide {at}: more of its chain is to be played"
        )));
    }
    Ok(())
}

fn is_organizer(a: &Actor) -> bool {
    a.role == Some(Role::Organizer)
}

fn is_arbiter(l: &League, a: &Actor) -> bool {
    is_organizer(a)
        || (a.role == Some(Role::Arbiter) && a.id.is_some_and(|id| l.arbiters.contains(&id)))
}

fn need_organizer(a: &Actor) -> Result<(), LeagueError> {
    is_organizer(a)
        .then_some(())
        .ok_or_else(|| LeagueError::PermissionDenied("this needs the organizer".into()))
}

fn need_arbiter(l: &League, a: &Actor, reason: Option<&str>) -> Result<(), LeagueError> {
    if !is_arbiter(l, a) {
        return Err(LeagueError::PermissionDenied(
            "this needs an arbiter of this event (or the organizer)".into(),
        ));
    }
    if reason.is_none_or(|r| r.trim().is_empty()) {
        return Err(LeagueError::Invalid(
            "an arbiter's decision needs a reason".into(),
        ));
    }
    Ok(())
}

/// What `cmd` by `actor` at `now` would change: the entries to commit (possibly none) and
/// what waits for the organiser, or why it is refused. `reason`: the why of an arbiter's
/// decision (mandatory for those).
pub fn decide(
    league: &League,
    cmd: &LeagueCommand,
    actor: &Actor,
    reason: Option<&str>,
    now: u64,
) -> Result<Decision, LeagueError> {
    let mut d = CommandDraft {
        work: league.clone(),
        now,
        entries: Vec::new(),
        actor: actor.id,
        reason: reason.map(str::to_string),
        waiting: Vec::new(),
    };
    let nothing = || {
        Ok(Decision {
            entries: Vec::new(),
            waiting: Vec::new(),
        })
    };
    match cmd {
        LeagueCommand::Publish => {
            need_organizer(actor)?;
            if league.published {
                return Err(LeagueError::Conflict(
                    "the event is published already".into(),
                ));
            }
            d.push(LeagueEvent::Published)?;
            pair_stage(&mut d, 1, false)?;
        }
        LeagueCommand::Reschedule {
            round,
            start_ms,
            deadline_ms,
        } => {
            need_organizer(actor)?;
            let r = league
                .round(*round)
                .ok_or_else(|| LeagueError::NotFound(format!("round {round}")))?;
            if r.tables
                .iter()
                .any(|t| t.boards.iter().any(|b| !b.games.is_empty()))
            {
                return Err(LeagueError::Conflict(format!(
                    "round {round} has started: its games exist"
                )));
            }
            if deadline_ms > start_ms {
                return Err(LeagueError::Invalid(
                    "the lineup deadline must not be after the start".into(),
                ));
            }
            if *start_ms <= now {
                return Err(LeagueError::Invalid(
                    "the new start is not in the future".into(),
                ));
            }
            d.push(LeagueEvent::RoundRescheduled {
                round: *round,
                start_ms: *start_ms,
                deadline_ms: *deadline_ms,
            })?;
        }
        LeagueCommand::SubmitLineup {
            round,
            table,
            team,
            players,
        } => submit_lineup(&mut d, league, actor, *round, *table, *team, players)?,
        LeagueCommand::ChooseColour { at, colour } => {
            let b = league
                .board(*at)
                .ok_or_else(|| LeagueError::NotFound(at.to_string()))?;
            let c = b
                .choice
                .as_ref()
                .filter(|c| c.chooser_colour.is_none())
                .ok_or_else(|| LeagueError::Conflict(format!("no colour to choose on {at}")))?;
            let table = league
                .table(at.round, at.table)
                .ok_or_else(|| LeagueError::NotFound(at.to_string()))?;
            // The chooser is the player of the chosen side on this board.
            let chooser = league.player_of(table, c.chooser, at.board).map(|p| p.0);
            if actor.id.is_none() || chooser != actor.id {
                return Err(LeagueError::PermissionDenied(format!(
                    "only the chooser of {at} picks the colour"
                )));
            }
            if now >= c.deadline_ms {
                return Err(LeagueError::Conflict(
                    "the time to choose has passed".into(),
                ));
            }
            d.push(LeagueEvent::ColourChosen {
                at: *at,
                stage: c.stage,
                chooser_colour: *colour,
                by_default: false,
            })?;
        }
        LeagueCommand::GameCreated {
            at,
            stage,
            game,
            first_colour,
            red,
            black,
            start_ms,
        } => {
            if actor.role.is_some() {
                return Err(LeagueError::PermissionDenied(
                    "only the server records games".into(),
                ));
            }
            if league.games.contains_key(game) {
                return nothing();
            }
            d.push(LeagueEvent::GameCreated {
                at: *at,
                stage: *stage,
                game: *game,
                first_colour: *first_colour,
                red: *red,
                black: *black,
                start_ms: *start_ms,
            })?;
        }
        LeagueCommand::GameFinished {
            game,
            result,
            reason,
            fouls,
        } => {
            if actor.role.is_some() {
                return Err(LeagueError::PermissionDenied(
                    "only the server records games".into(),
                ));
            }
            let Some((at, stage)) = league.games.get(game).copied() else {
                return nothing();
            };
            let Some(b) = league.board(at) else {
                return nothing();
            };
            // Not (or no longer) the board's game, or recorded already: nothing to do.
            let Some(g) = b
                .games
                .iter()
                .find(|g| g.game == *game && g.finished.is_none())
            else {
                return nothing();
            };
            let first_red = g.first_colour == ColourName::Red;
            let outcome =
                match (*result, first_red) {
                    (Some(ColourResult::RedWins), true)
                    | (Some(ColourResult::BlackWins), false) => Outcome::First,
                    (Some(ColourResult::RedWins), false)
                    | (Some(ColourResult::BlackWins), true) => Outcome::Second,
                    (Some(ColourResult::Draw), _) => Outcome::Draw,
                    (Some(ColourResult::BothLose), _) => Outcome::BothLose,
                    (None, _) => {
                        return Err(LeagueError::Invalid(format!("game {game} has no result")));
                    }
                };
            let [red, black] = *fouls;
            d.push(LeagueEvent::GameFinished {
                at,
                stage,
                game: *game,
                outcome,
                reason: reason.clone(),
                fouls: if first_red {
                    [red, black]
                } else {
                    [black, red]
                },
            })?;
        }
        LeagueCommand::SetBoard { at, setting } => {
            need_arbiter(league, actor, reason)?;
            league
                .board(*at)
                .ok_or_else(|| LeagueError::NotFound(at.to_string()))?;
            if let BoardSetting::Games { games } = setting {
                let record = super::state::set_games_record(games);
                let rules = &league.rules_of(at.round).event;
                chuhe_league::chain::evaluate_board(
                    &rules.chain,
                    &rules.game_scoring,
                    at.board,
                    &record,
                )
                .map_err(|e| LeagueError::Invalid(e.to_string()))?;
            }
            d.push(LeagueEvent::BoardSet {
                at: *at,
                setting: setting.clone(),
            })?;
            keep_who_went_on(league, &d.work, at.round)?;
        }
        LeagueCommand::ImportBoard { at, games } => {
            need_arbiter(league, actor, reason)?;
            import_board(&mut d, league, *at, games)?;
            keep_who_went_on(league, &d.work, at.round)?;
        }
        LeagueCommand::ForfeitMatch { round, table, by } => {
            need_arbiter(league, actor, reason)?;
            league
                .table(*round, *table)
                .ok_or_else(|| LeagueError::NotFound(format!("round {round} table {table}")))?;
            d.push(LeagueEvent::MatchForfeited {
                round: *round,
                table: *table,
                by: *by,
            })?;
            keep_who_went_on(league, &d.work, *round)?;
        }
        LeagueCommand::Withdraw {
            team,
            after_round,
            expelled,
        } => {
            need_arbiter(league, actor, reason)?;
            if *team >= league.teams.len() {
                return Err(LeagueError::NotFound(format!("team {team}")));
            }
            if league.withdrawn(*team) {
                return Err(LeagueError::Conflict(
                    "the team has withdrawn already".into(),
                ));
            }
            d.push(LeagueEvent::Withdrawn {
                team: *team,
                after_round: *after_round,
                expelled: *expelled,
            })?;
        }
        LeagueCommand::ReplayBoard { at } => {
            need_arbiter(league, actor, reason)?;
            league
                .board(*at)
                .ok_or_else(|| LeagueError::NotFound(at.to_string()))?;
            d.push(LeagueEvent::BoardReplayed { at: *at })?;
            keep_who_went_on(league, &d.work, at.round)?;
        }
        LeagueCommand::Message { team, text } => {
            if !is_arbiter(league, actor) {
                return Err(LeagueError::PermissionDenied(
                    "messages to captains and the event are for its arbiters (and the organizer)"
                        .into(),
                ));
            }
            let text = text.trim();
            if text.is_empty() {
                return Err(LeagueError::Invalid("the message is empty".into()));
            }
            let chars = text.chars().count();
            if chars > MESSAGE_MAX_CHARS {
                return Err(LeagueError::MessageTooLong {
                    chars,
                    limit: MESSAGE_MAX_CHARS,
                });
            }
            if let Some(t) = team {
                if *t >= league.teams.len() {
                    return Err(LeagueError::NotFound(format!("team {t}")));
                }
            }
            let last = actor
                .id
                .and_then(|a| league.last_message_ms.get(&a).copied());
            if last.is_some_and(|t| now < t.saturating_add(MESSAGE_INTERVAL_MS)) {
                return Err(LeagueError::MessageRateLimited {
                    interval_ms: MESSAGE_INTERVAL_MS,
                });
            }
            d.push(LeagueEvent::ArbiterMessage {
                team: *team,
                text: text.to_string(),
            })?;
        }
        LeagueCommand::PairNextRound => {
            need_organizer(actor)?;
            let stage = league.current_stage();
            if !matches!(league.rules.stage(stage).system, System::Swiss { .. }) {
                return Err(LeagueError::Conflict(
                    "only a Swiss is paired round by round".into(),
                ));
            }
            if league.rounds.last().is_some_and(|r| !r.completed) {
                return Err(LeagueError::Conflict(
                    "the current round has matches without a result".into(),
                ));
            }
            pair_swiss(&mut d)?;
        }
        LeagueCommand::StartNextStage { teams } => {
            need_organizer(actor)?;
            if !league.published {
                return Err(LeagueError::Conflict("the event is not published".into()));
            }
            let next = league.current_stage() + 1;
            if next as usize > league.rules.stages.len() {
                return Err(LeagueError::Conflict(
                    "the event has no further stage".into(),
                ));
            }
            if !stage_complete(league, next - 1) {
                return Err(LeagueError::StageNotComplete(format!(
                    "stage {} has matches without a result",
                    next - 1
                )));
            }
            let seeded = match teams {
                None => seed_next_stage(league)?,
                Some(t) => chosen_seeds(league, t)?,
            };
            d.push(LeagueEvent::StageStarted {
                stage: next,
                teams: seeded,
            })?;
            pair_stage(&mut d, next, false)?;
        }
        LeagueCommand::Tick => {
            if actor.role.is_some() {
                return Err(LeagueError::PermissionDenied(
                    "only the server's timer ticks".into(),
                ));
            }
        }
    }
    settle(&mut d)?;
    Ok(Decision {
        entries: d.entries,
        waiting: d.waiting,
    })
}

/// The (start, deadline) of round `r`: as scheduled at creation, or, past those, spaced like
/// the last two.
fn round_time(league: &League, r: u32) -> Result<(u64, u64), LeagueError> {
    if let Some(t) = league.planned.get(r as usize - 1) {
        return Ok(*t);
    }
    let n = league.planned.len();
    let (last, _) = *league
        .planned
        .last()
        .ok_or_else(|| LeagueError::Invalid("no schedule".into()))?;
    let every = if n >= 2 {
        league.planned[n - 1].0 - league.planned[n - 2].0
    } else {
        86_400_000
    };
    let start = last + every * u64::from(r - n as u32);
    Ok((start, start.saturating_sub(league.rules.deadline_before_ms)))
}

fn submit_lineup(
    d: &mut CommandDraft,
    league: &League,
    actor: &Actor,
    round: u32,
    table: u32,
    team: usize,
    players: &[String],
) -> Result<(), LeagueError> {
    let t = league
        .table(round, table)
        .ok_or_else(|| LeagueError::NotFound(format!("round {round} table {table}")))?;
    let side = if t.teams[0] == team {
        TeamSide::First
    } else if t.teams[1] == team {
        TeamSide::Second
    } else {
        return Err(LeagueError::Invalid(format!(
            "team {team} does not play round {round} table {table}"
        )));
    };
    if league.withdrawn_before(team, round) {
        return Err(LeagueError::Conflict(format!(
            "team {team} has withdrawn: its round {round} match is a forfeit"
        )));
    }
    let captain = actor
        .id
        .is_some_and(|id| league.teams[team].accounts.captains.contains(&id));
    if !captain && !is_organizer(actor) {
        return Err(LeagueError::PermissionDenied(
            "only the team's captain submits its lineup".into(),
        ));
    }
    if t.revealed.is_some() {
        return Err(LeagueError::LineupRefused(vec![(
            "deadline_passed".into(),
            "the lineups have been revealed: no more changes".into(),
        )]));
    }
    let r = league
        .round(round)
        .ok_or_else(|| LeagueError::NotFound(format!("round {round}")))?;
    // chuhe-league compares whole seconds; the deadline is to the millisecond: a lineup is
    // late only from the deadline's millisecond on (not from the start of its second).
    let rules = LineupRules {
        deadline: (d.now >= r.deadline_ms).then_some((r.deadline_ms / 1000) as i64),
        ..league.rules.lineup.clone()
    };
    let roster = &league.rules.rosters[team];
    rules
        .validate(roster, players, (d.now / 1000) as i64)
        .map_err(|e| {
            LeagueError::LineupRefused(
                e.reasons
                    .iter()
                    .map(|r| (r.code().to_string(), r.to_string()))
                    .collect(),
            )
        })?;
    d.push(LeagueEvent::LineupSubmitted {
        round,
        table,
        side,
        players: players.to_vec(),
    })?;
    Ok(())
}

/// A stage's fixtures as it begins (1: at publication): a round robin's every round, a
/// Swiss's or a knockout's first, among the stage's teams (numbered by their seeds).
/// `by_system`: recorded without the actor (the stage began by itself).
fn pair_stage(d: &mut CommandDraft, stage: u32, by_system: bool) -> Result<(), LeagueError> {
    let l = &d.work;
    let teams = l
        .stages
        .get(stage as usize - 1)
        .cloned()
        .ok_or_else(|| LeagueError::NotFound(format!("stage {stage}")))?;
    let n = teams.len() as u32;
    let seed = |s: u32| teams[s as usize - 1];
    let base = l.rounds.len() as u32;
    let mut paired = Vec::new();
    match l.rules.stage(stage).system {
        System::RoundRobin { legs } => {
            let rounds = chuhe_league::fixtures::round_robin(
                n,
                chuhe_league::fixtures::RoundRobinOptions {
                    legs,
                    ..Default::default()
                },
            )
            .map_err(|e| LeagueError::Invalid(e.to_string()))?;
            for r in rounds {
                paired.push((
                    base + r.number,
                    r.pairings
                        .iter()
                        .map(|p| [seed(p.first), seed(p.second)])
                        .collect::<Vec<_>>(),
                    r.bye.map(seed).into_iter().collect::<Vec<_>>(),
                ));
            }
        }
        System::Swiss { .. } => return pair_swiss(d),
        System::Knockout => {
            let first = chuhe_league::fixtures::knockout_first_round(n)
                .map_err(|e| LeagueError::Invalid(e.to_string()))?;
            paired.push((
                base + 1,
                first
                    .iter()
                    .filter_map(|(a, b)| b.map(|b| [seed(*a), seed(b)]))
                    .collect(),
                first
                    .iter()
                    .filter(|(_, b)| b.is_none())
                    .map(|(a, _)| seed(*a))
                    .collect(),
            ));
        }
    }
    for (round, tables, byes) in paired {
        let (start_ms, deadline_ms) = round_time(&d.work, round)?;
        let e = LeagueEvent::RoundPaired {
            round,
            tables,
            byes,
            start_ms,
            deadline_ms,
        };
        if by_system {
            d.push_system(e)?;
        } else {
            d.push(e)?;
        }
    }
    Ok(())
}

/// The next stage's teams in seed order, from the current stage's standings: every team still
/// in, or the first K; a tie for the K-th place is refused (nobody is mis-seeded).
fn seed_next_stage(l: &League) -> Result<Vec<usize>, LeagueError> {
    seeding_of(l, l.current_stage())
}

/// Who passes on from `stage` to the stage after it, in seed order, by `stage`'s standings.
fn seeding_of(l: &League, stage: u32) -> Result<Vec<usize>, LeagueError> {
    let next = l.rules.stage(stage + 1);
    let rows: Vec<(usize, Option<u32>)> = super::view::stage_ranking(l, stage)
        .ok_or_else(|| LeagueError::Seeding(format!("stage {stage} has no standings")))?
        .map_err(LeagueError::Seeding)?
        .into_iter()
        .filter(|(team, rank)| rank.is_some() && !l.withdrawn(*team))
        .collect();
    let k = match next.entrants {
        crate::spec::Entrants::All => rows.len(),
        crate::spec::Entrants::Top(k) => k as usize,
    };
    if rows.len() < k.max(2) {
        return Err(LeagueError::Seeding(format!(
            "{} teams are still in, stage {} needs {}",
            rows.len(),
            stage + 1,
            k.max(2)
        )));
    }
    if let (Some(last_in), Some(first_out)) = (rows.get(k - 1), rows.get(k)) {
        if last_in.1 == first_out.1 {
            return Err(LeagueError::Seeding(format!(
                "{} and {} share rank {} and only one passes on: name stage {}'s teams (start_next_stage with teams) once a play-off separates them",
                l.teams[last_in.0].name,
                l.teams[first_out.0].name,
                last_in.1.unwrap_or(0),
                stage + 1
            )));
        }
    }
    Ok(rows.into_iter().take(k).map(|(t, _)| t).collect())
}

/// The winners of a knockout round's matches, table by table (None: level, or no result).
fn round_winners(l: &League, round: u32) -> Vec<Option<usize>> {
    let Some(r) = l.round(round) else {
        return Vec::new();
    };
    (1..=r.tables.len() as u32)
        .map(|t| {
            let side = super::view::match_result(l, round, t)?.winner?;
            Some(r.tables[t as usize - 1].teams[TeamSide::of_league(side).index()])
        })
        .collect()
}

/// Refuses a correction of `round` (drafted into `after`) that would change who went on from
/// it: a knockout round's winners once its next round is paired, or the teams a stage passed
/// on once the next stage has begun. A correction that changes neither stands.
fn keep_who_went_on(before: &League, after: &League, round: u32) -> Result<(), LeagueError> {
    let Some(r) = before.round(round) else {
        return Ok(());
    };
    let stage = r.stage;
    let later_in_stage = before.stage_rounds(stage).any(|x| x.number > round);
    if before.rules.stage(stage).system == System::Knockout && later_in_stage {
        let (was, now) = (round_winners(before, round), round_winners(after, round));
        if was != now {
            return Err(LeagueError::AlreadySeeded(format!(
                "round {} is paired from round {round}'s winners: this correction would change who won a tie there (fouls and margins that keep the winners may still be corrected)",
                round + 1
            )));
        }
    }
    if let Some(passed_on) = before.stages.get(stage as usize) {
        let now = seeding_of(after, stage);
        if now.as_ref().ok() != Some(passed_on) && seeding_of(before, stage) != now {
            return Err(LeagueError::AlreadySeeded(format!(
                "stage {} has begun with the teams stage {stage}'s standings passed on; this correction would change who passes on or their seeds",
                stage + 1
            )));
        }
    }
    Ok(())
}

/// The organiser's seeding of the next stage, checked: teams of the current stage, still in,
/// each once, as many as the stage takes.
fn chosen_seeds(l: &League, teams: &[usize]) -> Result<Vec<usize>, LeagueError> {
    let stage = l.current_stage();
    let next = l.rules.stage(stage + 1);
    let current = l.stages.last().cloned().unwrap_or_default();
    let still_in = current.iter().filter(|t| !l.withdrawn(**t)).count();
    let want = match next.entrants {
        crate::spec::Entrants::All => still_in,
        crate::spec::Entrants::Top(k) => k as usize,
    };
    if teams.len() != want {
        return Err(LeagueError::Invalid(format!(
            "stage {} takes {want} teams, {} were named",
            stage + 1,
            teams.len()
        )));
    }
    let mut seen = std::collections::BTreeSet::new();
    for t in teams {
        if !current.contains(t) || l.withdrawn(*t) {
            return Err(LeagueError::Invalid(format!(
                "team {t} is not a team still in stage {stage}"
            )));
        }
        if !seen.insert(*t) {
            return Err(LeagueError::Invalid(format!("team {t} is named twice")));
        }
    }
    Ok(teams.to_vec())
}

/// A stage's team (global index) as its local index, when it plays the stage.
fn local(teams: &[usize], team: usize) -> Option<usize> {
    teams.iter().position(|t| *t == team)
}

/// Pairs the current stage's next Swiss round from the results so far.
fn pair_swiss(d: &mut CommandDraft) -> Result<(), LeagueError> {
    let l = &d.work;
    let stage = l.current_stage();
    let System::Swiss { rounds } = l.rules.stage(stage).system else {
        return Ok(());
    };
    let entrants = l.stages.last().cloned().unwrap_or_default();
    let played_rounds: Vec<_> = l.stage_rounds(stage).collect();
    let next_local = played_rounds.len() as u32 + 1;
    if next_local > rounds {
        return Ok(());
    }
    let next = l.rounds.len() as u32 + 1;
    let teams: Vec<SwissTeam> = entrants
        .iter()
        .enumerate()
        .map(|(i, &t)| SwissTeam {
            seed: i as u32 + 1,
            unit: l.teams[t].unit.clone(),
            withdrawn: l.withdrawn_before(t, next),
        })
        .collect();
    let mut played = Vec::with_capacity(played_rounds.len());
    for r in &played_rounds {
        let mut round = SwissRound::default();
        for (k, t) in r.tables.iter().enumerate() {
            let mp = super::view::match_result(l, r.number, k as u32 + 1)
                .map(|m| m.match_points)
                .unwrap_or_default();
            let (Some(a), Some(b)) = (local(&entrants, t.teams[0]), local(&entrants, t.teams[1]))
            else {
                return Err(LeagueError::Pairing(format!(
                    "round {} has a team outside stage {stage}",
                    r.number
                )));
            };
            round.pairings.push((a, b, mp));
        }
        round.bye = r
            .byes
            .first()
            .and_then(|b| local(&entrants, *b))
            .map(|b| (b, l.rules.stage(stage).event.match_scoring.forfeit_win));
        played.push(round);
    }
    // Look ahead one round, except in the stage's last round (nothing follows it).
    let options = SwissOptions {
        lookahead: next_local < rounds,
        ..SwissOptions::default()
    };
    let pairing = pair_next_round(&teams, &played, options)
        .map_err(|e| LeagueError::Pairing(e.to_string()))?;
    let (start_ms, deadline_ms) = round_time(l, next)?;
    d.push_system(LeagueEvent::RoundPaired {
        round: next,
        tables: pairing
            .tables
            .iter()
            .map(|(a, b)| [entrants[*a], entrants[*b]])
            .collect(),
        byes: pairing.bye.map(|b| entrants[b]).into_iter().collect(),
        start_ms,
        deadline_ms,
    })
}

/// Records what has become due by `d.now`, until nothing more is.
fn settle(d: &mut CommandDraft) -> Result<(), LeagueError> {
    for _ in 0..64 {
        let before = d.entries.len();
        settle_once(d)?;
        if d.entries.len() == before {
            return Ok(());
        }
    }
    Ok(())
}

fn settle_once(d: &mut CommandDraft) -> Result<(), LeagueError> {
    if !d.work.published {
        return Ok(());
    }
    let now = d.now;
    // 20.3/20.4 "其余未赛对局均作弃权，对方获胜": a match of a team that withdrew before its round
    // becomes a forfeit when the round comes (its lineup deadline): by that team, or by both
    // when both had gone (均作弃权: a double forfeit). Nobody's lineup is revealed for it.
    let mut walkovers = Vec::new();
    for r in &d.work.rounds {
        if now < r.deadline_ms {
            continue;
        }
        for (k, t) in r.tables.iter().enumerate() {
            let gone = t.teams.map(|team| d.work.withdrawn_before(team, r.number));
            let by = match gone {
                [true, true] => ForfeitBy::Both,
                [true, false] => ForfeitBy::First,
                [false, true] => ForfeitBy::Second,
                [false, false] => continue,
            };
            if t.forfeit.is_none() {
                walkovers.push((r.number, k as u32 + 1, by));
            }
        }
    }
    for (round, table, by) in walkovers {
        d.push_system(LeagueEvent::MatchForfeited { round, table, by })?;
    }
    // Lineups: revealed when both are in, or at the deadline (missing ones per the 规程); never
    // for a match with a withdrawn team.
    let mut reveal = Vec::new();
    for r in &d.work.rounds {
        for (k, t) in r.tables.iter().enumerate() {
            let both_in = t.submitted.iter().all(Option::is_some);
            let withdrawn = t
                .teams
                .iter()
                .any(|&team| d.work.withdrawn_before(team, r.number));
            if t.revealed.is_none() && !withdrawn && (both_in || now >= r.deadline_ms) {
                reveal.push((r.number, k as u32 + 1));
            }
        }
    }
    for (round, table) in reveal {
        let l = &d.work;
        let t = l
            .table(round, table)
            .ok_or_else(|| LeagueError::NotFound("table".into()))?;
        let one = |s: TeamSide| -> Revealed {
            let team = t.teams[s.index()];
            match &t.submitted[s.index()] {
                Some(p) => Revealed::Submitted { players: p.clone() },
                None => match l.rules.missing {
                    chuhe_league::lineup::MissingLineupPolicy::Forfeit => Revealed::Forfeit,
                    chuhe_league::lineup::MissingLineupPolicy::RegisteredOrder => {
                        match l.rules.lineup.registered_order(&l.rules.rosters[team]) {
                            Some(lineup) => Revealed::RegisteredOrder {
                                players: lineup.players().to_vec(),
                            },
                            None => Revealed::Forfeit,
                        }
                    }
                },
            }
        };
        let _ = FinalLineup::Forfeit; // the same three outcomes as chuhe-league's FinalLineup
        let lineups = [one(TeamSide::First), one(TeamSide::Second)];
        d.push_system(LeagueEvent::LineupsRevealed {
            round,
            table,
            lineups,
        })?;
    }
    // A round's start time came: recorded once (not for a round completed before it, nor
    // again for a round of an older log that completed without one).
    let started: Vec<u32> = d
        .work
        .rounds
        .iter()
        .filter(|r| !r.started && !r.completed && now >= r.start_ms)
        .map(|r| r.number)
        .collect();
    for round in started {
        d.push_system(LeagueEvent::RoundStarted { round })?;
    }
    // Chain games: a drawn game whose next stage's colour is chosen asks for the choice; an
    // unanswered choice is defaulted at its deadline.
    let mut asks = Vec::new();
    let mut defaults = Vec::new();
    for r in &d.work.rounds {
        for (k, t) in r.tables.iter().enumerate() {
            for (bi, b) in t.boards.iter().enumerate() {
                let at = BoardKey {
                    round: r.number,
                    table: k as u32 + 1,
                    board: bi as u32 + 1,
                };
                if let Some(c) = &b.choice {
                    if c.chooser_colour.is_none() && now >= c.deadline_ms {
                        defaults.push((at, c.stage, c.chooser));
                    }
                    continue;
                }
                if let Some((stage, chooser)) = choice_needed(&d.work, at) {
                    asks.push((at, stage, chooser));
                }
            }
        }
    }
    for (at, stage, chooser) in asks {
        let deadline_ms = now + d.work.rules.choose_within_ms;
        d.push_system(LeagueEvent::ChoiceRequested {
            at,
            stage,
            chooser,
            deadline_ms,
        })?;
    }
    for (at, stage, _) in defaults {
        let colour = ColourName::of_league(d.work.rules.choice_default);
        d.push_system(LeagueEvent::ColourChosen {
            at,
            stage,
            chooser_colour: colour,
            by_default: true,
        })?;
    }
    // A round whose every match has its result is complete — in a knockout, its winner: a
    // level tie keeps the round open until an arbiter decides it —; a Swiss pairs the next, a
    // knockout draws the next from the winners.
    let complete: Vec<u32> = d
        .work
        .rounds
        .iter()
        .filter(|r| !r.completed)
        .filter(|r| {
            let knockout = d.work.rules.stage(r.stage).system == System::Knockout;
            (1..=r.tables.len() as u32).all(|t| {
                let tb = &r.tables[t as usize - 1];
                super::view::match_result(&d.work, r.number, t)
                    .is_some_and(|m| !knockout || m.winner.is_some())
                    || tb
                        .teams
                        .iter()
                        .any(|&team| d.work.withdrawn_before(team, r.number))
            })
        })
        .map(|r| r.number)
        .collect();
    // A knockout round completed with a level tie (a log written before level ties kept the
    // round open) draws its next round once an arbiter has decided the tie.
    if complete.is_empty() {
        if let Some(last) = d.work.rounds.last() {
            let (round, stage) = (last.number, last.stage);
            if last.completed
                && d.work.rules.stage(stage).system == System::Knockout
                && !stage_complete(&d.work, stage)
            {
                next_knockout_round(d, round)?;
            }
        }
    }
    for round in complete {
        d.push_system(LeagueEvent::RoundCompleted { round })?;
        if round as usize == d.work.rounds.len() {
            let stage = d.work.current_stage();
            match d.work.rules.stage(stage).system {
                System::Swiss { .. } => {
                    // A round that cannot be paired waits for the organiser (who sees why).
                    if let Err(e) = pair_swiss(d) {
                        d.waiting.push(Waiting::SwissRound(e));
                    }
                }
                System::Knockout => next_knockout_round(d, round)?,
                System::RoundRobin { .. } => {}
            }
            // A complete stage passes its teams on to the next, seeded by its standings (a
            // tie for the last place that passes on waits for the organiser).
            let stage = d.work.current_stage();
            if (stage as usize) < d.work.rules.stages.len() && stage_complete(&d.work, stage) {
                match seed_next_stage(&d.work) {
                    Ok(teams) => {
                        d.push_system(LeagueEvent::StageStarted {
                            stage: stage + 1,
                            teams,
                        })?;
                        pair_stage(d, stage + 1, true)?;
                    }
                    Err(e) => d.waiting.push(Waiting::NextStage(e)),
                }
            }
        }
    }
    Ok(())
}

/// The stage a board's next game is chosen for and who chooses, when its previous game
/// ended without deciding the board and the choice has not been asked for.
fn choice_needed(l: &League, at: BoardKey) -> Option<(u32, TeamSide)> {
    let b = l.board(at)?;
    if b.set.is_some() || b.choice.is_some() {
        return None;
    }
    let last = b.games.last()?;
    last.finished.as_ref()?;
    if l.board_record(at).is_some() {
        return None; // decided
    }
    let next = last.stage + 1;
    let chain = &l.rules_of(at.round).event.chain;
    let stage = chain.stages().get(next as usize)?;
    if !matches!(stage.colours, StageColours::ChosenBy(_)) {
        return None;
    }
    let previous_red = if last.first_colour == ColourName::Red {
        chuhe_league::Side::First
    } else {
        chuhe_league::Side::Second
    };
    let chooser = chain.chooser(next as usize, previous_red)?;
    Some((next, TeamSide::of_league(chooser)))
}

fn next_knockout_round(d: &mut CommandDraft, round: u32) -> Result<(), LeagueError> {
    let l = &d.work;
    let r = l
        .round(round)
        .ok_or_else(|| LeagueError::NotFound("round".into()))?;
    // Winners in bracket order (tables in order, then byes); a level match waits for the
    // arbiters (they set a board to decide it).
    // Seeds are the stage's (its teams' places in its seeding).
    let entrants = l
        .stages
        .get(r.stage as usize - 1)
        .cloned()
        .unwrap_or_default();
    let seed = |team: usize| local(&entrants, team).map(|i| i as u32 + 1);
    let mut winners = Vec::new();
    for (k, t) in r.tables.iter().enumerate() {
        // A team withdrawn before the round lost its tie without playing (a walkover): the
        // other goes on; when both withdrew, neither does.
        let gone = t.teams.map(|team| l.withdrawn_before(team, round));
        match gone {
            [true, true] => continue,
            [true, false] | [false, true] => {
                let stays = t.teams[usize::from(gone[0])];
                winners.extend(seed(stays));
                continue;
            }
            [false, false] => {}
        }
        let m = super::view::match_result(l, round, k as u32 + 1);
        match m
            .and_then(|m| m.winner)
            .and_then(|s| seed(t.teams[TeamSide::of_league(s).index()]))
        {
            Some(s) => winners.push(s),
            None => return Ok(()),
        }
    }
    for b in &r.byes {
        winners.extend(seed(*b));
    }
    if winners.len() < 2 {
        return Ok(());
    }
    winners.sort_unstable();
    let pairs = chuhe_league::fixtures::knockout_next_round(&winners);
    let (start_ms, deadline_ms) = round_time(l, round + 1)?;
    d.push_system(LeagueEvent::RoundPaired {
        round: round + 1,
        tables: pairs
            .iter()
            .filter_map(|(a, b)| b.map(|b| [entrants[*a as usize - 1], entrants[b as usize - 1]]))
            .collect(),
        byes: pairs
            .iter()
            .filter(|(_, b)| b.is_none())
            .map(|(a, _)| entrants[*a as usize - 1])
            .collect(),
        start_ms,
        deadline_ms,
    })
}
