//! The crate's integration tests, one binary (a module per topic) so the dependency tree is linked once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cchess;
