//! The game's domain types: its description, its events and what they carry. The server
//! converts them to and from the wire messages of `chuhe.v1` at its edge (one function each
//! way per type, in the server's `game_wire`), so the core depends on no wire format.
//!
//! They follow the shape of the events as the log stores them, field for field, so that a log
//! written by any version of the server converts to them and back to the same bytes. Where the
//! wire has an "unspecified" enum value the domain has an `Option` (None: unspecified).

/// A side of the board. Red moves first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Red,
    Black,
}

/// The outcome of a finished game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameResult {
    RedWins,
    BlackWins,
    Draw,
    /// Both sides lose (both absent past the lateness limit, art. 21).
    BothLose,
}

impl GameResult {
    /// The result's stable name, as phrases carry it (`RESULT_RED_WINS`, ...).
    pub fn code(self) -> &'static str {
        match self {
            GameResult::RedWins => "RESULT_RED_WINS",
            GameResult::BlackWins => "RESULT_BLACK_WINS",
            GameResult::Draw => "RESULT_DRAW",
            GameResult::BothLose => "RESULT_BOTH_LOSE",
        }
    }

    /// The result in PGN form: `1-0`, `0-1`, `1/2-1/2`, `0-0` (both lose).
    pub fn text(self) -> &'static str {
        match self {
            GameResult::RedWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
            GameResult::BothLose => "0-0",
        }
    }
}

/// A result in PGN form, `*` while the game is not over.
pub fn result_text(r: Option<GameResult>) -> &'static str {
    r.map_or("*", GameResult::text)
}

/// When a game's clocks start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StartMode {
    /// No mode named (games created before start modes existed): at once, as [`StartMode::Now`].
    #[default]
    Unspecified,
    /// At once, when the server takes the game up.
    Now,
    /// At [`GameInfo::scheduled_start_ms`], whether or not the players are there.
    Scheduled,
    /// When both players have joined.
    PlayersPresent,
}

/// Roles of authenticated principals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Player,
    Arbiter,
    Organizer,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Player => "player",
            Role::Arbiter => "arbiter",
            Role::Organizer => "organizer",
        }
    }
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "player" => Some(Role::Player),
            "arbiter" => Some(Role::Arbiter),
            "organizer" | "organiser" => Some(Role::Organizer),
            _ => None,
        }
    }
}

/// One side's clock as clients see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SideClock {
    /// Remaining main time, or remaining time of the current byoyomi period, in ms.
    pub remaining_ms: u64,
    pub periods_left: u32,
    pub in_byoyomi: bool,
}

/// Both clocks as clients see them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClockState {
    pub red: Option<SideClock>,
    pub black: Option<SideClock>,
    /// Whose clock is running (None: none is).
    pub running: Option<Side>,
    pub paused: bool,
}

/// A per-game delay for spectators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BroadcastDelay {
    pub plies: u32,
    pub seconds: u32,
}

/// How a game's players may call the arbiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CallSettings {
    /// Calls per side (0: the default).
    pub max_per_side: u32,
    /// The clocks keep running during a call.
    pub clock_runs: bool,
}

/// Where a league's game is played.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LeagueBoard {
    pub league_id: String,
    pub round: u32,
    pub table: u32,
    pub board: u32,
    pub stage: u32,
}

/// A game's static description (its `Created` event).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GameInfo {
    pub game_id: String,
    pub red_id: String,
    pub red_name: String,
    pub black_id: String,
    pub black_name: String,
    /// Time control text, e.g. "90m+30s".
    pub time_control: String,
    /// "cxa" or "engine".
    pub ruleset: String,
    pub initial_fen: String,
    pub event: String,
    pub round: String,
    pub board: String,
    pub delay: Option<BroadcastDelay>,
    /// Plies without capture that make a natural draw (0: the default).
    pub move_limit_plies: u32,
    pub created_at_ms: u64,
    pub start_mode: StartMode,
    pub scheduled_start_ms: u64,
    /// Art. 21 (0: no limit).
    pub lateness_limit_ms: u64,
    pub league: Option<LeagueBoard>,
    pub calls: Option<CallSettings>,
}

/// A sentence for people as a stable code with its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Phrase {
    pub code: String,
    pub params: Vec<PhraseParam>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PhraseParam {
    pub name: String,
    pub value: String,
}

/// Who did something only an arbiter may do, and why.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArbiterNote {
    pub arbiter_id: String,
    pub reason: String,
}

/// A move as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MoveRecord {
    pub ply: u32,
    pub iccs: String,
    pub chinese: String,
    pub wxf: String,
    pub spent_ms: u64,
    pub fen: String,
    pub check: bool,
    pub capture: bool,
}

/// How a move of a repetition cycle is classified (棋例 27.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MoveClass {
    Idle,
    Check,
    MateThreat,
    Chase,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RulingMove {
    pub ply: u32,
    pub iccs: String,
    pub chinese: String,
    pub class: Option<MoveClass>,
    /// Squares of the pieces chased by this move.
    pub chased: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RulingKind {
    /// The named side must vary (24.3).
    Warning,
    /// The game is decided by the ruling.
    Decision,
    /// A requested ruling found nothing to rule on.
    None,
}

/// A ruling with its explanation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ruling {
    pub kind: Option<RulingKind>,
    /// The side the ruling is against (None for a draw).
    pub side: Option<Side>,
    pub result: Option<GameResult>,
    pub article: String,
    pub explanation: String,
    pub cycle: Vec<RulingMove>,
    pub ply: u32,
    pub phrase: Option<Phrase>,
    pub explanation_en: String,
    pub explanation_zh: String,
}

/// One event of a game's log.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GameEvent {
    pub game_id: String,
    /// From 1, without gaps.
    pub seq: u64,
    /// Server time of the event, Unix ms.
    pub at_ms: u64,
    /// None only in a log this server cannot read.
    pub kind: Option<Kind>,
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Created(GameCreated),
    Move(MovePlayed),
    DrawOffered(DrawOffered),
    DrawDeclined(DrawDeclined),
    Foul(FoulRecorded),
    ClockAdjusted(ClockAdjusted),
    Paused(GamePaused),
    Resumed(GameResumed),
    Ruling(RulingIssued),
    Ended(GameEnded),
    RulingOverridden(RulingOverridden),
    ServerRestarted(ServerRestarted),
    Started(GameStarted),
    Joined(PlayerJoined),
    ArbiterCalled(ArbiterCalled),
    CallTaken(CallTaken),
    CallClosed(CallClosed),
    Message(GameMessage),
}

impl Kind {
    /// The event's stable name, as the store's `kind` column and metrics name it.
    pub fn label(&self) -> &'static str {
        match self {
            Kind::Created(_) => "created",
            Kind::Move(_) => "move",
            Kind::DrawOffered(_) => "draw_offered",
            Kind::DrawDeclined(_) => "draw_declined",
            Kind::Foul(_) => "foul",
            Kind::ClockAdjusted(_) => "clock_adjusted",
            Kind::Paused(_) => "paused",
            Kind::Resumed(_) => "resumed",
            Kind::Ruling(_) => "ruling",
            Kind::Ended(_) => "ended",
            Kind::RulingOverridden(_) => "ruling_overridden",
            Kind::ServerRestarted(_) => "server_restarted",
            Kind::Started(_) => "started",
            Kind::Joined(_) => "joined",
            Kind::ArbiterCalled(_) => "arbiter_called",
            Kind::CallTaken(_) => "call_taken",
            Kind::CallClosed(_) => "call_closed",
            Kind::Message(_) => "message",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GameCreated {
    /// Boxed: the one large event, once per game.
    pub info: Option<Box<GameInfo>>,
    pub clock: Option<ClockState>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MovePlayed {
    pub mv: Option<MoveRecord>,
    pub clock: Option<ClockState>,
    pub side: Option<Side>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DrawOffered {
    pub side: Option<Side>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DrawDeclined {
    pub side: Option<Side>,
    /// Declined by playing a move instead of answering.
    pub by_moving: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FoulRecorded {
    pub side: Option<Side>,
    pub code: String,
    pub explanation: String,
    /// The side's foul count after this foul.
    pub count: u32,
    pub arbiter: Option<ArbiterNote>,
    pub phrase: Option<Phrase>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClockAdjusted {
    pub side: Option<Side>,
    /// Added (positive) or charged (negative), in ms.
    pub delta_ms: i64,
    pub code: String,
    pub clock: Option<ClockState>,
    pub arbiter: Option<ArbiterNote>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GamePaused {
    pub clock: Option<ClockState>,
    pub arbiter: Option<ArbiterNote>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GameResumed {
    pub clock: Option<ClockState>,
    pub arbiter: Option<ArbiterNote>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RulingIssued {
    pub ruling: Option<Ruling>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GameEnded {
    pub result: Option<GameResult>,
    /// Stable code: "checkmate", "resign", "flag", ...
    pub reason: String,
    pub explanation: String,
    pub clock: Option<ClockState>,
    pub arbiter: Option<ArbiterNote>,
    pub phrase: Option<Phrase>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RulingOverridden {
    pub ruling_seq: u64,
    /// None: play continues.
    pub result: Option<GameResult>,
    pub arbiter: Option<ArbiterNote>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerRestarted {
    pub clock: Option<ClockState>,
    pub downtime_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GameStarted {
    pub clock: Option<ClockState>,
    pub started_at_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlayerJoined {
    pub side: Option<Side>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArbiterCalled {
    pub side: Option<Side>,
    pub reason: String,
    pub clock: Option<ClockState>,
    pub clock_stopped: bool,
    /// The side's calls in this game, this one included.
    pub count: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallTaken {
    pub call_seq: u64,
    pub arbiter: Option<ArbiterNote>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CallClosed {
    pub call_seq: u64,
    pub arbiter: Option<ArbiterNote>,
}

/// A message on the arbiter's channel.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GameMessage {
    pub from_id: String,
    pub from_role: Option<Role>,
    /// The sender's side when a player sent it.
    pub from_side: Option<Side>,
    /// An arbiter's message to one side; None: to both (a player's goes to the arbiters).
    pub to: Option<Side>,
    pub text: String,
    /// The open call it was sent in (0: none).
    pub call_seq: u64,
}

/// What an arbiter command does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArbiterAction {
    Pause,
    Resume,
    /// Positive adds time, negative charges it. The side must be named.
    AddTime {
        side: Option<Side>,
        delta_ms: i64,
    },
    RecordFoul {
        side: Option<Side>,
    },
    /// The result must be named.
    SetResult {
        result: Option<GameResult>,
    },
    /// None: the game goes on.
    OverrideRuling {
        ruling_seq: u64,
        result: Option<GameResult>,
    },
}
