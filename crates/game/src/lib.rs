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
//! The driver — a shard task of the server (`chuhe-server`'s `shard` and `live`) — owns the
//! sockets, the timers, the store and the metrics, and calls these. The core's purity is a
//! property of this crate's `Cargo.toml`: its dependencies are `chuhe-rules`, `chuhe-clock` and
//! `thiserror`, and the workspace's CI checks that nothing async, logging, storage, network or
//! wire-format enters its tree.
//!
//! The core speaks its own domain types ([`types`]: the game's description, events, sides,
//! results, roles); the server converts them to and from the protobuf wire at its edge.
//! Around them: [`board`] (the rules' game and its rulings as events), [`side`] (sides between
//! the rules, the clock and the game), [`phrase`] (explanations as codes with parameters),
//! [`error`] (the errors a client can cause, with their stable codes).
//!
//! ```
//! use chuhe_game::{Actor, Answer, Command, Role, apply, create, decide, types::GameInfo};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let info = GameInfo {
//!     game_id: "1".into(),
//!     red_id: "10".into(),
//!     black_id: "20".into(),
//!     time_control: "10m+5s".into(),
//!     ruleset: "cxa".into(),
//!     initial_fen: chuhe_rules::START_FEN.into(),
//!     ..GameInfo::default()
//! };
//! let (mut st, mut created) = create(&info, 1_000)?; // the `Created` event; clocks running
//! apply(&mut st, &mut created)?; // committed by the driver: folded
//! let red = Actor { id: Some(10), role: Some(Role::Player) };
//! let mv = Command::Move {
//!     ply: 1,
//!     mv: "h2e2".into(),
//!     offer_draw: false,
//!     think_ms: None,
//!     lag: Default::default(),
//! };
//! let mut d = decide(&st, &mv, &red, 3_000)?; // the events to commit, and the answer
//! assert_eq!(d.answer, Answer::Seq(2));
//! apply(&mut st, &mut d)?; // once committed
//! assert_eq!(st.board.plies(), 1);
//! # Ok(())
//! # }
//! ```
//!
//! Files: [`state`] (the state and `fold`), [`command`] (commands, actors, the drafting
//! helpers), [`decide`] (each command to its file), [`start`] (creation, start modes, joining, lateness, the timer),
//! [`moves`] (moves, the flag, restarts), [`draw`] (offers, claims,
//! resignation, ruling requests), [`arbiter`] (arbiter commands), [`call`] (calls to the arbiter and the
//! arbiter channel's messages).

pub mod arbiter;
pub mod board;
pub mod call;
pub mod command;
pub mod decide;
pub mod draw;
pub mod error;
pub mod moves;
pub mod phrase;
pub mod side;
pub mod start;
pub mod state;
#[cfg(test)]
mod tests;
pub mod types;

pub use command::{Actor, Answer, Command, Decided, apply};
pub use decide::decide;
pub use error::ClientError;
pub use start::{create, due_before_requests, tracks_joining};
pub use state::{DEFAULT_MOVE_LIMIT_PLIES, Event, FoldError, LastMove, State, fold};
pub use types::{GameResult, Role, Side};
