//! The league service's pure core: what the server runs a team event (season) with, free of
//! IO, tasks, clocks and logging — the same shape as the game core.
//!
//! * The event file an organiser writes: [`spec`] (its keys, checked into `chuhe-league`
//!   rules), [`chain`] (the result-chain keys, shared with `chuhe league`'s results file),
//!   [`file`] (reading it as TOML or JSON, a refusal placed at its line and column) and
//!   [`datetime`] (instants and durations as people write them).
//! * The league as a state machine: [`decide`] says what a command would change, as log
//!   entries, without changing anything; [`League::fold`] applies a committed entry;
//!   [`League::replay`] rebuilds a league from its stored log. The queries in [`view`] say what
//!   is due and what to show. Time comes in; what a driver should log comes out as values
//!   ([`Decision::waiting`]).

pub mod ancestors;
pub mod chain;
pub mod datetime;
pub mod decide;
pub mod event;
pub mod file;
mod refusal;
pub mod spec;
pub mod state;
#[cfg(test)]
mod tests;
pub mod view;

pub use decide::{
    Actor, ColourResult, Decision, ImportedGame, LeagueCommand, LeagueError, Role, Waiting,
    board_open_for_import, decide,
};
pub use event::{
    BoardKey, BoardSetting, ColourName, Entry, ForfeitBy, LeagueEvent, Outcome, Revealed, SetGame,
    TeamAccounts, TeamSide,
};
pub use state::{FoldError, League};
pub use view::{
    GameWant, StageTables, TotalScoreTables, knockout_winner, live_score, match_result, next_due,
    stage_ranking, stage_tables, standings_stage, table_standings, total_score_tables,
    wanted_games,
};
