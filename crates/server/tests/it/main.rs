//! The server's integration tests, one binary (a module per topic): several servers in this
//! process, real websocket clients.

mod broadcast;
mod cluster;
mod harness;
mod matchday;
