//! The results file (input of `standings`, `sheet` and `pair`) as JSON. Unknown fields are
//! refused; the format is documented in `crates/league/README.md`.

use chuhe_league_core::chain::ChainSpec;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ResultsFile {
    #[serde(default)]
    pub(super) event: String,
    pub(super) system: SystemJson,
    #[serde(default)]
    pub(super) legs: Option<u32>,
    #[serde(default)]
    pub(super) ranking: Option<RankingJson>,
    pub(super) boards: u32,
    #[serde(default)]
    pub(super) game_scoring: Option<GameScoringJson>,
    #[serde(default)]
    pub(super) match_points: Option<MatchPointsJson>,
    #[serde(default)]
    pub(super) result_chain: Option<ChainSpec>,
    pub(super) teams: Vec<TeamJson>,
    #[serde(default)]
    pub(super) matches: Vec<MatchJson>,
    #[serde(default)]
    pub(super) byes: Vec<ByeJson>,
    #[serde(default)]
    pub(super) penalties: Vec<PenaltyJson>,
    #[serde(default)]
    pub(super) withdrawals: Vec<WithdrawalJson>,
    #[serde(default)]
    pub(super) schedule: Option<ScheduleJson>,
    #[serde(default)]
    pub(super) forfeits: Option<ForfeitsJson>,
    /// Knockout: play for third place.
    #[serde(default)]
    pub(super) third_place: bool,
    /// Knockout: the chain of the tiebreak match after level legs (default: the result chain).
    #[serde(default)]
    pub(super) tiebreak_chain: Option<ChainSpec>,
}

/// The 规程's forfeit scoring: a forfeited board's points and a forfeited match's 局分.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ForfeitsJson {
    /// `[winner, loser]` points of a forfeited board.
    #[serde(default)]
    pub(super) board: Option<[f64; 2]>,
    /// `"boards"` (every board a forfeited board) or `[winner, loser]` 局分.
    #[serde(default)]
    pub(super) match_game_points: Option<MatchGamePointsJson>,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum MatchGamePointsJson {
    Preset(String),
    Fixed([f64; 2]),
}

/// The round robin's schedule: `"berger"` (team order = draw numbers), or the fixtures.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum ScheduleJson {
    Preset(String),
    Fixtures(Vec<FixtureJson>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FixtureJson {
    pub(super) round: u32,
    pub(super) first: String,
    pub(super) second: String,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(super) enum SystemJson {
    RoundRobin,
    Swiss,
    Knockout,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum RankingJson {
    Preset(String),
    Criteria(Vec<String>),
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum GameScoringJson {
    Preset(String),
    Custom(CustomScoringJson),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CustomScoringJson {
    pub(super) win: f64,
    pub(super) loss: f64,
    pub(super) draw_red: f64,
    pub(super) draw_black: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MatchPointsJson {
    #[serde(default)]
    pub(super) win: Option<f64>,
    #[serde(default)]
    pub(super) draw: Option<f64>,
    #[serde(default)]
    pub(super) loss: Option<f64>,
    #[serde(default)]
    pub(super) forfeit_win: Option<f64>,
    #[serde(default)]
    pub(super) forfeit_loss: Option<f64>,
    #[serde(default)]
    pub(super) double_forfeit: Option<f64>,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum TeamJson {
    Name(String),
    Full {
        name: String,
        #[serde(default)]
        unit: Option<String>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MatchJson {
    pub(super) round: u32,
    #[serde(default)]
    pub(super) table: Option<u32>,
    #[serde(default)]
    pub(super) date: Option<String>,
    pub(super) first: String,
    pub(super) second: String,
    #[serde(default)]
    pub(super) boards: Option<Vec<BoardJson>>,
    #[serde(default)]
    pub(super) forfeited_by: Option<ForfeitJson>,
    /// Scheduled, not played yet: no results (boards may list the players only).
    #[serde(default)]
    pub(super) pending: bool,
    /// Knockout: the tiebreak match of a tie whose legs were level.
    #[serde(default)]
    pub(super) tiebreak: bool,
    /// Knockout: the third-place match.
    #[serde(default)]
    pub(super) third_place: bool,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum ForfeitJson {
    First,
    Second,
    Both,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BoardJson {
    #[serde(default)]
    pub(super) first_player: Option<String>,
    #[serde(default)]
    pub(super) second_player: Option<String>,
    #[serde(default)]
    pub(super) games: Option<Vec<GameJson>>,
    #[serde(default)]
    pub(super) forfeited_by: Option<ForfeitJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GameJson {
    pub(super) result: ResultJson,
    #[serde(default)]
    pub(super) fouls: [u32; 2],
    #[serde(default)]
    pub(super) first_colour: Option<ColourJson>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum ResultJson {
    First,
    Second,
    Draw,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum ColourJson {
    Red,
    Black,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ByeJson {
    pub(super) round: u32,
    pub(super) team: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PenaltyJson {
    pub(super) team: String,
    pub(super) kind: PenaltyKindJson,
    #[serde(default)]
    pub(super) round: Option<u32>,
    #[serde(default)]
    pub(super) note: Option<String>,
    /// Expulsion only: the team's last round.
    #[serde(default)]
    pub(super) after_round: Option<u32>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum PenaltyKindJson {
    Warning,
    Disqualification,
    Expulsion,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WithdrawalJson {
    pub(super) team: String,
    pub(super) after_round: u32,
}
