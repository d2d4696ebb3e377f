//! The crate's integration tests, one binary (a module per topic) so the dependency tree is linked once.

mod calls;
mod demo;
mod game;
mod hardening;
mod league;
mod league_stages;
mod nodes;
mod outage;
mod records;
mod recovery;
mod robustness;
mod rulings_clocks;
