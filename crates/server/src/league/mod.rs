//! The league service: team events (seasons) run live on the server — fixtures, sealed
//! lineups, scheduled rounds whose board games start by themselves, the board chains (slow →
//! colour-swapped fast → armageddon), live 局分/场分 and standings. The rules are
//! `chuhe-league`'s; this module stores, schedules and drives them.
//!
//! * [`spec`]: the event file an organiser writes, checked into rules.
//! * [`core`]: the pure state machine (decide, fold, views), tested without IO.
//! * [`datetime`]: instants and durations as people write them.

pub mod api;
pub mod core;
pub mod datetime;
pub mod pages_api;
pub mod runner;
pub mod spec;
pub mod ws;

/// Whether the arbiter with account `arbiter` rules on the games of league `league` (its id as
/// the games carry it): the event's own arbiters do; an arbiter of another event, or of no
/// event, is a spectator of them (no commands, the delayed view, no event log).
pub fn arbiter_of(env: &crate::env::Env, league: &str, arbiter: i64) -> bool {
    let Ok(id) = league.parse::<i64>() else {
        return false;
    };
    match env.leagues.get(id) {
        Some(h) => h.snapshot().arbiters.contains(&arbiter),
        // Several nodes: the league runs elsewhere; its arbiters as its log names them.
        None => env.leagues.remote_arbiters(id).contains(&arbiter),
    }
}
