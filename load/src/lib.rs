//! chuhe-load: the load generator for chuhe and the bare websocket relay it is measured against.
//!
//! - [`relay`]: the bare relay (`chuhe-load relay`), the yardstick.
//! - [`driver`]: the framing layer, one [`driver::Protocol`] per target ([`chuhe`] for chuhe).
//! - [`client`]: simulated players and spectators; [`scenario`]: what they do together.
//! - [`metrics`], [`procstat`], [`report`]: what is measured and how it is reported;
//!   [`diskprobe`]: the disk's own flush latency beside a run.
//! - [`league_round`]: a league round of many boards starting at one scheduled instant.
//! - [`net`]: loopback-only connects, bounded concurrency, source addresses, fd limits.

pub mod chuhe;
pub mod client;
pub mod diskprobe;
pub mod driver;
pub mod league_round;
pub mod metrics;
pub mod moves;
pub mod net;
pub mod procstat;
pub mod relay;
pub mod report;
pub mod scenario;
pub mod target;
pub mod think;
