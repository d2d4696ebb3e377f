//! Team league logic for chuhe. Pure: no IO, no async, no system clock (times are passed in).
//!
//! - [`points`]: exact scores in half points.
//! - [`entities`]: league, season, stage, team, player, roster, captain, arbiter.
//! - [`fixtures`]: Berger round robins (single/double, byes) and seeded knockout brackets.
//! - [`knockout`]: knockout rounds after the first: ties of one or two matches, tiebreak by the board chain, third place.
//! - [`swiss`]: team Swiss (积分编排制) with deterministic positional pairing (定位编排).
//! - [`colour`]: who has Red on which board (13.2–13.5).
//! - [`lineup`]: lineup systems 12.1–12.5, eligibility, sealed submission.
//! - [`chain`]: board result chains (slow → colour-swapped fast → armageddon) and game scoring.
//! - [`matches`](mod@matches): evaluating a team match: 局分, 场分, forfeits.
//! - [`standings`]: team standings with the 2011/1999 tie-break chains, 直胜, 18.4, 20.3/20.4.
//! - [`individual`]: individual standings (14.1–14.3) and per-board tables / board prizes.
//! - [`elo`]: Elo ratings with configurable K.
//! - [`ranking`]: the criteria-chain ranking engine shared by team and individual standings.
//! - [`sheet`]: score sheets (计分表) as CSV and printable HTML.
//! - [`report`]: standings, crosstables and board tables as text, CSV and printable HTML.
//! - [`text`]: label language, CSV/HTML escaping, dates as 年月日.

pub mod chain;
pub mod colour;
pub mod elo;
pub mod entities;
pub mod fixtures;
pub mod individual;
pub mod knockout;
pub mod lineup;
pub mod matches;
pub mod points;
pub mod ranking;
pub mod report;
pub mod sheet;
pub mod standings;
pub mod swiss;
pub mod text;

pub use colour::{Colour, Lot, Side};
pub use points::Points;
