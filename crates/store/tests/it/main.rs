//! The crate's integration tests, one binary (a module per topic) so the dependency tree is linked once.

mod conformance;
mod contract;
mod crash;
mod fence;
mod league;
mod outage;
mod wal;
