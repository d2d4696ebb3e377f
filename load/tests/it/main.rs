//! The crate's integration tests, one binary (a module per topic) so the dependency tree is linked once.

mod chuhe;
mod cli;
mod relay;
mod scenarios;
