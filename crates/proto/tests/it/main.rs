//! The crate's integration tests, one binary (a module per topic).

mod decoders;
