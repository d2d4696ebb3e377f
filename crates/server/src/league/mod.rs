//! The league service: team events (seasons) run live on the server — fixtures, sealed
//! lineups, scheduled rounds whose board games start by themselves, the board chains (slow →
//! colour-swapped fast → armageddon), live 局分/场分 and standings. The rules are
//! `chuhe-league`'s; this module stores, schedules and drives them.
//!
//! The pure core is the `chuhe-league-core` crate, named here by its parts:
//! * [`spec`]: the event file an organiser writes, checked into rules.
//! * [`core`]: the state machine (decide, fold, views), tested without IO.
//! * [`datetime`]: instants and durations as people write them.
//!
//! The drivers and edges are here: [`runner`] (one task per league), [`api`] and [`pages_api`]
//! (HTTP), [`ws`] (the league's websocket stream); [`render`] is the league's views as JSON that
//! the routes and the event feeds share.

pub use chuhe_league_core as core;
pub use chuhe_league_core::{datetime, spec};

pub mod api;
pub mod hooks;
pub mod import;
pub mod pages_api;
pub mod render;
pub mod runner;
pub mod ws;

/// The games' call settings from the event file's `arbiter_calls`.
pub fn call_settings(spec: Option<&spec::CallsSpec>) -> chuhe_proto::v1::CallSettings {
    let c = spec.copied().unwrap_or_default();
    chuhe_proto::v1::CallSettings {
        max_per_side: c
            .max_per_side
            .unwrap_or(chuhe_game::call::DEFAULT_MAX_CALLS),
        clock_runs: !c.clock_stops.unwrap_or(true),
    }
}
