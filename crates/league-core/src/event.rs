//! The league's events: what its append-only log stores (JSON, one entry per event, with
//! who, when and why) and what its state is folded from. A kind is never removed or
//! renamed; fields are only added (with defaults), so every stored log folds again.

use serde::{Deserialize, Serialize};

use crate::spec::EventSpec;

/// A board of a match: round, table (match) within the round, board — all 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct BoardKey {
    pub round: u32,
    pub table: u32,
    pub board: u32,
}

impl std::fmt::Display for BoardKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "round {} table {} board {}",
            self.round, self.table, self.board
        )
    }
}

/// The first- or second-listed team of a match (the first has Red on board 1, 13.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TeamSide {
    First,
    Second,
}

impl TeamSide {
    pub fn index(self) -> usize {
        match self {
            TeamSide::First => 0,
            TeamSide::Second => 1,
        }
    }
    pub fn other(self) -> TeamSide {
        match self {
            TeamSide::First => TeamSide::Second,
            TeamSide::Second => TeamSide::First,
        }
    }
    pub fn league(self) -> chuhe_league::Side {
        match self {
            TeamSide::First => chuhe_league::Side::First,
            TeamSide::Second => chuhe_league::Side::Second,
        }
    }
    pub fn of_league(s: chuhe_league::Side) -> TeamSide {
        match s {
            chuhe_league::Side::First => TeamSide::First,
            chuhe_league::Side::Second => TeamSide::Second,
        }
    }
}

/// Red or Black.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColourName {
    Red,
    Black,
}

impl ColourName {
    pub fn league(self) -> chuhe_league::Colour {
        match self {
            ColourName::Red => chuhe_league::Colour::Red,
            ColourName::Black => chuhe_league::Colour::Black,
        }
    }
    pub fn of_league(c: chuhe_league::Colour) -> ColourName {
        match c {
            chuhe_league::Colour::Red => ColourName::Red,
            chuhe_league::Colour::Black => ColourName::Black,
        }
    }
    pub fn opposite(self) -> ColourName {
        match self {
            ColourName::Red => ColourName::Black,
            ColourName::Black => ColourName::Red,
        }
    }
}

/// A game's outcome from the first team's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    First,
    Second,
    Draw,
    /// Both players lost (both absent past the lateness limit).
    BothLose,
}

/// How a side's lineup stood at the reveal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Revealed {
    /// The captain's lineup, in board order.
    Submitted { players: Vec<String> },
    /// None was submitted: the registered order.
    RegisteredOrder { players: Vec<String> },
    /// None (valid) at all: the side forfeits the match.
    Forfeit,
}

impl Revealed {
    pub fn players(&self) -> Option<&[String]> {
        match self {
            Revealed::Submitted { players } | Revealed::RegisteredOrder { players } => {
                Some(players)
            }
            Revealed::Forfeit => None,
        }
    }
}

/// Who forfeits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForfeitBy {
    First,
    Second,
    Both,
}

/// A board's result as an arbiter sets or corrects it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardSetting {
    /// The games of the chain, in order: the first team's colour and each game's result.
    Games { games: Vec<SetGame> },
    /// A forfeited board (21.4).
    Forfeit { by: ForfeitBy },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetGame {
    pub first_colour: ColourName,
    pub result: Outcome,
    #[serde(default)]
    pub fouls: [u32; 2],
}

/// The accounts the server made (or found) for an event's people, by team.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TeamAccounts {
    /// One principal per roster player, in roster order.
    pub players: Vec<i64>,
    pub captains: Vec<i64>,
}

/// One event of a league's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LeagueEvent {
    /// The event, as the organiser described it, with its people's accounts and round times.
    Created {
        spec: Box<EventSpec>,
        teams: Vec<TeamAccounts>,
        arbiters: Vec<i64>,
        /// (start, lineup deadline) per round known at creation, Unix ms.
        rounds: Vec<(u64, u64)>,
    },
    /// Fixtures are public; lineups can be submitted.
    Published,
    /// A stage after the first begins (a multi-stage event): its teams, seeded (seed 1 first)
    /// from the previous stage's standings. The rounds paired from now on are this stage's.
    StageStarted { stage: u32, teams: Vec<usize> },
    /// A round's matches: `tables[i]` = [first, second] team indices; teams with a bye.
    RoundPaired {
        round: u32,
        tables: Vec<[usize; 2]>,
        byes: Vec<usize>,
        start_ms: u64,
        deadline_ms: u64,
    },
    RoundRescheduled {
        round: u32,
        start_ms: u64,
        deadline_ms: u64,
    },
    /// A captain's lineup, sealed: never public, replaced by a later one before the deadline.
    LineupSubmitted {
        round: u32,
        table: u32,
        side: TeamSide,
        players: Vec<String>,
    },
    /// Both lineups revealed together (both in, or the deadline passed).
    LineupsRevealed {
        round: u32,
        table: u32,
        lineups: [Revealed; 2],
    },
    /// A chain game was set up on a board: its game id and who has Red.
    GameCreated {
        at: BoardKey,
        stage: u32,
        game: i64,
        first_colour: ColourName,
        red: i64,
        black: i64,
        start_ms: u64,
    },
    /// The armageddon's chooser is asked for a colour, until the deadline.
    ChoiceRequested {
        at: BoardKey,
        stage: u32,
        chooser: TeamSide,
        deadline_ms: u64,
    },
    /// The chooser's colour (its own), chosen or given by default at the deadline.
    ColourChosen {
        at: BoardKey,
        stage: u32,
        chooser_colour: ColourName,
        by_default: bool,
    },
    /// A chain game ended (reason: the game's own end code, e.g. checkmate, lateness).
    GameFinished {
        at: BoardKey,
        stage: u32,
        game: i64,
        outcome: Outcome,
        reason: String,
        /// Fouls of [first, second] in the game.
        fouls: [u32; 2],
    },
    /// An arbiter set or corrected a board's result.
    BoardSet { at: BoardKey, setting: BoardSetting },
    /// A whole match forfeited (an arbiter, or no lineup at all).
    MatchForfeited {
        round: u32,
        table: u32,
        by: ForfeitBy,
    },
    /// A team left (20.3/20.4) after `after_round`; `expelled`: 18.3 除名.
    Withdrawn {
        team: usize,
        after_round: u32,
        expelled: bool,
    },
    /// An arbiter ordered a board played again: its games so far no longer count.
    BoardReplayed { at: BoardKey },
    /// Every match of the round has its result.
    RoundCompleted { round: u32 },
    /// An arbiter's message (the entry's actor) to the captains of `team`, or to everyone of
    /// the event when `team` is None. Not public: the event's arbiters read it in the log, its
    /// recipients in their messages; spectators never.
    ArbiterMessage {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        team: Option<usize>,
        text: String,
    },
    /// The round's start time came (its games' clocks start): recorded once per round, by
    /// the server, for the public stream (`round_started` of the event feed).
    RoundStarted { round: u32 },
}

impl LeagueEvent {
    /// The kind's name as stored beside the payload.
    pub fn kind(&self) -> &'static str {
        match self {
            LeagueEvent::Created { .. } => "created",
            LeagueEvent::Published => "published",
            LeagueEvent::StageStarted { .. } => "stage_started",
            LeagueEvent::RoundPaired { .. } => "round_paired",
            LeagueEvent::RoundRescheduled { .. } => "round_rescheduled",
            LeagueEvent::LineupSubmitted { .. } => "lineup_submitted",
            LeagueEvent::LineupsRevealed { .. } => "lineups_revealed",
            LeagueEvent::GameCreated { .. } => "game_created",
            LeagueEvent::ChoiceRequested { .. } => "choice_requested",
            LeagueEvent::ColourChosen { .. } => "colour_chosen",
            LeagueEvent::GameFinished { .. } => "game_finished",
            LeagueEvent::BoardSet { .. } => "board_set",
            LeagueEvent::MatchForfeited { .. } => "match_forfeited",
            LeagueEvent::Withdrawn { .. } => "withdrawn",
            LeagueEvent::BoardReplayed { .. } => "board_replayed",
            LeagueEvent::RoundCompleted { .. } => "round_completed",
            LeagueEvent::ArbiterMessage { .. } => "arbiter_message",
            LeagueEvent::RoundStarted { .. } => "round_started",
        }
    }

    /// Whether spectators may see it (a sealed lineup is seen by nobody but its team, an
    /// arbiter's message by nobody but its recipients and the event's officials).
    pub fn is_public(&self) -> bool {
        !matches!(
            self,
            LeagueEvent::LineupSubmitted { .. } | LeagueEvent::ArbiterMessage { .. }
        )
    }
}

/// An entry of the log: the event with its seq, time, who and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub seq: u64,
    pub at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub event: LeagueEvent,
}
