//! The crate's integration tests, one binary (a module per topic) so the dependency tree is linked once.

mod berger;
mod individual;
mod lineup;
mod report;
mod standings;
mod swiss;
mod withdrawals;
