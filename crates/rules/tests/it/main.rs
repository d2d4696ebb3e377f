//! The crate's integration tests, one binary (a module per topic) so the dependency tree is linked once.

mod decoders;
mod fen;
mod game_api;
mod perft;
mod props;
mod repetition_suite;
mod rulings_props;
