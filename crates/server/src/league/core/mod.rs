//! The league as a pure state machine, in the same shape as the game core
//! ([`chuhe_game`]): [`decide`] says what a command would change, as log entries, without
//! changing anything; [`League::fold`] applies a committed entry; [`League::replay`] rebuilds a
//! league from its stored log. The queries in [`view`] say what is due and what to show. No IO,
//! no tasks, no clock: time comes in.

pub mod decide;
pub mod event;
pub mod state;
#[cfg(test)]
mod tests;
pub mod view;

pub use decide::{LeagueCommand, LeagueError, decide};
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
