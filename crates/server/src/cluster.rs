//! The cluster port: how one node of several coordinates with the others (issue 23) — leases
//! that make one node the owner of a game or a league, and channels for routing commands and
//! fanning events out. Without `--redis-url` there is no cluster (`Env::cluster` is `None`)
//! and the server is one process, exactly as before.
//!
//! The port is narrow, like [`crate::persist::Persist`]: Redis implements it for production
//! (see `redis_cluster.rs`), an in-memory hub for in-process tests. A lease says who *should*
//! write; the store's fencing token ([`crate::persist::Persist::claim_game`]) makes sure a
//! stale owner *cannot*.

use axum::body::Bytes;
use tokio::sync::{mpsc, watch};

pub use crate::persist::BoxFut;

/// The coordination service failed or is unreachable (retrying later may work).
#[derive(Debug, Clone, thiserror::Error)]
#[error("cluster: {0}")]
pub struct ClusterError(pub String);

/// A message that arrived on one of this node's subscribed channels.
#[derive(Debug, Clone)]
pub struct ClusterMessage {
    pub channel: String,
    pub payload: Bytes,
}

/// Leases and messages between the nodes sharing one database.
///
/// Keys and channels are plain names chosen by the server (`game:42`, `league:7`,
/// `node:<id>`, …); the implementation adds its own prefix, so several clusters can share one
/// Redis.
pub trait Cluster: Send + Sync + 'static {
    /// This node's id, unique among the running nodes.
    fn node_id(&self) -> &str;

    /// Takes the lease on `key` for this node if nobody holds it. `Ok(None)`: this node holds
    /// it now (it did already, or took it) and keeps it renewed until [`Cluster::release`] or
    /// until it is lost ([`Cluster::lost`]). `Ok(Some(node))`: another node holds it.
    fn acquire(&self, key: &str) -> BoxFut<'_, Result<Option<String>, ClusterError>>;

    /// The node holding `key`'s lease, if any.
    fn holder(&self, key: &str) -> BoxFut<'_, Result<Option<String>, ClusterError>>;

    /// Gives up this node's lease on `key` (nothing if another node holds it).
    fn release(&self, key: &str) -> BoxFut<'_, Result<(), ClusterError>>;

    /// Keys whose lease this node held and has found lost (expired, or held by another node
    /// at a renewal), as they are found. Taken once (the server's one listener).
    fn lost(&self) -> Option<mpsc::UnboundedReceiver<String>>;

    /// Publishes `payload` on `channel` to the nodes subscribed to it at that moment (at most
    /// once: a node that is not listening misses it).
    fn publish(&self, channel: &str, payload: Bytes) -> BoxFut<'_, Result<(), ClusterError>>;

    /// Subscribes this node to `channel`; its messages arrive on [`Cluster::messages`]. Kept
    /// across reconnects to the coordination service.
    fn subscribe(&self, channel: &str) -> BoxFut<'_, Result<(), ClusterError>>;

    /// Unsubscribes this node from `channel`.
    fn unsubscribe(&self, channel: &str) -> BoxFut<'_, Result<(), ClusterError>>;

    /// The messages of every channel this node subscribes to, in arrival order. Taken once.
    fn messages(&self) -> Option<mpsc::Receiver<ClusterMessage>>;

    /// Whether the node is connected to the coordination service now (false during a Redis
    /// outage; messages published meanwhile are missed, leases are not renewed).
    fn connected(&self) -> watch::Receiver<bool>;
}
