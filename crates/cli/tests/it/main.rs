//! The crate's integration tests, one binary (a module per topic) so the dependency tree is linked once.

mod admin_cli;
mod deploy;
mod league_cli;
mod league_event;
mod league_records;
mod newcomer;
mod records_cli;
mod rules_cli;
mod rulings_cli;
mod serve_cli;
