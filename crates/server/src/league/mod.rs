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
