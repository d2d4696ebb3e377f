//! The game as a pure state machine, in the shape of quinn-proto's `Connection`: no IO, no
//! tasks, no system clock, no metrics. Time comes in as an argument; events come out.
//!
//! * [`decide`]`(&state, &command, &actor, now)` says what a command would change: the events
//!   to commit and the answer to give once they are committed, or the error to answer with.
//!   It never changes the state.
//! * [`fold`]`(&mut state, &event)` changes the state by one committed event. Live play folds
//!   the events it has just committed ([`apply`], which reuses the board and clock `decide`
//!   already computed); recovery folds the stored log ([`State::replay`]). Nothing about how an
//!   event changes a game is written twice.
//!
//! The driver — a shard task ([`crate::shard`], [`crate::live`]) — owns the sockets, the
//! timers, the store and the metrics, and calls these.
//!
//! Files: [`state`] (the state and `fold`), [`command`] (commands, actors, `decide`, the
//! drafting helpers), [`start`] (creation, start modes, joining, lateness, the timer),
//! [`moves`] (moves, the flag, restarts), [`draw`] (offers, claims,
//! resignation, ruling requests), [`arbiter`] (arbiter commands), [`call`] (calls to the arbiter and the
//! arbiter channel's messages).

pub mod arbiter;
pub mod call;
pub mod command;
pub mod draw;
pub mod moves;
pub mod start;
pub mod state;
#[cfg(test)]
mod tests;

pub use command::{Actor, Answer, Command, Decided, apply, decide};
pub use start::{create, due_before_requests, tracks_joining};
pub use state::{DEFAULT_MOVE_LIMIT_PLIES, Event, FoldError, LastMove, State, fold};
