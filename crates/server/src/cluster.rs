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

    /// Publishes every `(channel, payload)` in order, as [`Cluster::publish`] would one by one
    /// (an implementation over the network sends them in one round trip).
    fn publish_many(&self, messages: Vec<(String, Bytes)>) -> BoxFut<'_, Result<(), ClusterError>> {
        Box::pin(async move {
            for (channel, payload) in messages {
                self.publish(&channel, payload).await?;
            }
            Ok(())
        })
    }

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

    /// How long a lease lives without renewal (after the coordination service restarted
    /// empty, the owners re-take their leases within about this; see the sweeper).
    fn lease_ttl(&self) -> std::time::Duration {
        std::time::Duration::from_secs(3)
    }
}

/// Several in-process nodes' coordination service, for tests: leases that expire `ttl` after
/// their last renewal (each node renews its own every `ttl / 3`), and pub/sub channels that
/// deliver to each subscribed node in publish order. Tests make leases expire at once
/// ([`MemoryHub::expire`], [`MemoryHub::expire_node`]) or a node stop renewing
/// ([`MemoryCluster::freeze`]) instead of waiting.
#[derive(Clone)]
pub struct MemoryHub {
    inner: std::sync::Arc<std::sync::Mutex<Hub>>,
    ttl: std::time::Duration,
}

#[derive(Default)]
struct Hub {
    /// key → (holder, expires at).
    leases: std::collections::HashMap<String, (String, tokio::time::Instant)>,
    nodes: std::collections::HashMap<String, HubNode>,
    /// Messages published on each channel (by a node that could reach the hub).
    published: std::collections::HashMap<String, u64>,
}

struct HubNode {
    channels: std::collections::HashSet<String>,
    tx: mpsc::Sender<ClusterMessage>,
    /// Keys this node believes it holds.
    held: std::collections::HashSet<String>,
    lost: mpsc::UnboundedSender<String>,
    frozen: bool,
    /// Cut off from the hub (an outage of the coordination service, as this node sees it).
    down: bool,
    /// The hub restarted empty while this node was cut off: it re-takes its leases when it
    /// reconnects.
    rebooted: bool,
    connected: watch::Sender<bool>,
}

/// One node's view of a [`MemoryHub`].
pub struct MemoryCluster {
    hub: MemoryHub,
    node: String,
    messages: std::sync::Mutex<Option<mpsc::Receiver<ClusterMessage>>>,
    lost: std::sync::Mutex<Option<mpsc::UnboundedReceiver<String>>>,
    connected: watch::Receiver<bool>,
    renewer: tokio::task::JoinHandle<()>,
}

impl MemoryHub {
    pub fn new(ttl: std::time::Duration) -> MemoryHub {
        MemoryHub {
            inner: Default::default(),
            ttl,
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Hub) -> T) -> T {
        let mut g = match self.inner.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        f(&mut g)
    }

    /// A node joining the hub (it renews its leases from a task of the current runtime).
    pub fn join(&self, node: &str) -> std::sync::Arc<MemoryCluster> {
        let (tx, rx) = mpsc::channel(65_536);
        let (lost_tx, lost_rx) = mpsc::unbounded_channel();
        let (connected_tx, connected) = watch::channel(true);
        self.with(|h| {
            h.nodes.insert(
                node.to_string(),
                HubNode {
                    channels: Default::default(),
                    tx,
                    held: Default::default(),
                    lost: lost_tx,
                    frozen: false,
                    down: false,
                    rebooted: false,
                    connected: connected_tx,
                },
            )
        });
        let hub = self.clone();
        let me = node.to_string();
        let renewer = tokio::spawn(async move {
            let mut every = tokio::time::interval(hub.ttl / 3);
            loop {
                every.tick().await;
                hub.renew(&me);
            }
        });
        std::sync::Arc::new(MemoryCluster {
            hub: self.clone(),
            node: node.to_string(),
            messages: std::sync::Mutex::new(Some(rx)),
            lost: std::sync::Mutex::new(Some(lost_rx)),
            connected,
            renewer,
        })
    }

    /// Extends `node`'s leases; the ones it finds expired or taken are reported lost.
    fn renew(&self, node: &str) {
        let now = tokio::time::Instant::now();
        let ttl = self.ttl;
        self.with(|h| {
            let Hub { leases, nodes, .. } = h;
            let Some(n) = nodes.get_mut(node) else {
                return;
            };
            if n.frozen || n.down {
                return;
            }
            let mut lost = Vec::new();
            for key in &n.held {
                match leases.get_mut(key) {
                    Some((holder, exp)) if holder == node && *exp > now => *exp = now + ttl,
                    _ => lost.push(key.clone()),
                }
            }
            for key in lost {
                n.held.remove(&key);
                let _ = n.lost.send(key);
            }
        });
    }

    /// Makes the lease on `key` expire now (its holder finds it lost at its next renewal).
    pub fn expire(&self, key: &str) {
        self.with(|h| h.leases.remove(key));
    }

    /// Makes every lease `node` holds expire now, as if it had stopped renewing for a TTL.
    pub fn expire_node(&self, node: &str) {
        self.with(|h| h.leases.retain(|_, (holder, _)| holder != node));
    }

    /// The coordination service restarts empty (as Redis without persistence): every lease
    /// is gone and every node is cut off until its [`MemoryCluster::outage`]`(false)`, which
    /// re-takes the leases it held first (as `chuhe-cluster` does on a new boot marker).
    pub fn restart_empty(&self) {
        self.with(|h| {
            h.leases.clear();
            for n in h.nodes.values_mut() {
                n.down = true;
                n.rebooted = true;
                n.connected.send_replace(false);
            }
        });
    }

    /// How many messages were published on `channel` so far, whoever subscribed to it.
    pub fn published(&self, channel: &str) -> u64 {
        self.with(|h| h.published.get(channel).copied().unwrap_or(0))
    }

    /// The node holding `key`'s lease now.
    pub fn holder_of(&self, key: &str) -> Option<String> {
        let now = tokio::time::Instant::now();
        self.with(|h| {
            h.leases
                .get(key)
                .filter(|(_, exp)| *exp > now)
                .map(|(n, _)| n.clone())
        })
    }
}

impl MemoryCluster {
    /// Stops (true) or resumes (false) renewing this node's leases and noticing their loss: a
    /// process frozen by `SIGSTOP`, as the others see it.
    pub fn freeze(&self, frozen: bool) {
        self.hub.with(|h| {
            if let Some(n) = h.nodes.get_mut(&self.node) {
                n.frozen = frozen;
            }
        });
    }

    /// Cuts this node off from the hub (true) or reconnects it (false): meanwhile messages to
    /// and from it are lost, its leases are not renewed and `connected` says false.
    /// After [`MemoryHub::restart_empty`], reconnecting re-takes the leases this node held
    /// (those nobody took meanwhile) before `connected` says true.
    pub fn outage(&self, down: bool) {
        let now = tokio::time::Instant::now();
        let ttl = self.hub.ttl;
        self.hub.with(|h| {
            let Hub { leases, nodes, .. } = h;
            if let Some(n) = nodes.get_mut(&self.node) {
                if !down && std::mem::take(&mut n.rebooted) {
                    for key in &n.held {
                        leases
                            .entry(key.clone())
                            .or_insert_with(|| (self.node.clone(), now + ttl));
                    }
                }
                n.down = down;
                n.connected.send_replace(!down);
            }
        });
    }

    /// Leaves the hub as a killed process does: no more renewals or messages; its leases
    /// expire at their time (or at once with [`MemoryHub::expire_node`]).
    pub fn leave(&self) {
        self.renewer.abort();
        self.hub.with(|h| {
            if let Some(n) = h.nodes.remove(&self.node) {
                n.connected.send_replace(false);
            }
        });
    }
}

impl Drop for MemoryCluster {
    fn drop(&mut self) {
        self.renewer.abort();
    }
}

impl Cluster for MemoryCluster {
    fn node_id(&self) -> &str {
        &self.node
    }

    fn acquire(&self, key: &str) -> BoxFut<'_, Result<Option<String>, ClusterError>> {
        let now = tokio::time::Instant::now();
        let ttl = self.hub.ttl;
        let r = self.hub.with(|h| {
            match h.nodes.get(&self.node) {
                None => return Err(ClusterError("this node left the hub".into())),
                Some(n) if n.down => return Err(ClusterError("the hub is unreachable".into())),
                Some(_) => {}
            }
            match h.leases.get(key) {
                Some((holder, exp)) if *exp > now && holder != &self.node => {
                    return Ok(Some(holder.clone()));
                }
                _ => {}
            }
            h.leases
                .insert(key.to_string(), (self.node.clone(), now + ttl));
            if let Some(n) = h.nodes.get_mut(&self.node) {
                n.held.insert(key.to_string());
            }
            Ok(None)
        });
        Box::pin(async move { r })
    }

    fn holder(&self, key: &str) -> BoxFut<'_, Result<Option<String>, ClusterError>> {
        let down = self
            .hub
            .with(|h| h.nodes.get(&self.node).is_some_and(|n| n.down));
        let r = if down {
            Err(ClusterError("the hub is unreachable".into()))
        } else {
            Ok(self.hub.holder_of(key))
        };
        Box::pin(async move { r })
    }

    fn release(&self, key: &str) -> BoxFut<'_, Result<(), ClusterError>> {
        self.hub.with(|h| {
            if h.leases.get(key).is_some_and(|(n, _)| n == &self.node) {
                h.leases.remove(key);
            }
            if let Some(n) = h.nodes.get_mut(&self.node) {
                n.held.remove(key);
            }
        });
        Box::pin(async { Ok(()) })
    }

    fn lost(&self) -> Option<mpsc::UnboundedReceiver<String>> {
        self.lost.lock().ok()?.take()
    }

    fn publish(&self, channel: &str, payload: Bytes) -> BoxFut<'_, Result<(), ClusterError>> {
        self.hub.with(|h| {
            if h.nodes.get(&self.node).is_none_or(|n| n.down) {
                return;
            }
            *h.published.entry(channel.to_string()).or_default() += 1;
            for n in h.nodes.values().filter(|n| !n.down) {
                if n.channels.contains(channel) {
                    let _ = n.tx.try_send(ClusterMessage {
                        channel: channel.to_string(),
                        payload: payload.clone(),
                    });
                }
            }
        });
        Box::pin(async { Ok(()) })
    }

    fn subscribe(&self, channel: &str) -> BoxFut<'_, Result<(), ClusterError>> {
        self.hub.with(|h| {
            if let Some(n) = h.nodes.get_mut(&self.node) {
                n.channels.insert(channel.to_string());
            }
        });
        Box::pin(async { Ok(()) })
    }

    fn unsubscribe(&self, channel: &str) -> BoxFut<'_, Result<(), ClusterError>> {
        self.hub.with(|h| {
            if let Some(n) = h.nodes.get_mut(&self.node) {
                n.channels.remove(channel);
            }
        });
        Box::pin(async { Ok(()) })
    }

    fn messages(&self) -> Option<mpsc::Receiver<ClusterMessage>> {
        self.messages.lock().ok()?.take()
    }

    fn connected(&self) -> watch::Receiver<bool> {
        self.connected.clone()
    }

    fn lease_ttl(&self) -> std::time::Duration {
        self.hub.ttl
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn a_lease_has_one_holder_until_it_expires_and_its_loss_is_reported() {
        let hub = MemoryHub::new(Duration::from_secs(3));
        let a = hub.join("a");
        let b = hub.join("b");
        assert_eq!(a.acquire("game:1").await.unwrap(), None);
        assert_eq!(
            a.acquire("game:1").await.unwrap(),
            None,
            "a holds it already"
        );
        assert_eq!(b.acquire("game:1").await.unwrap(), Some("a".into()));
        // Renewed while a runs: still a's long after one TTL.
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(b.holder("game:1").await.unwrap(), Some("a".into()));
        // Frozen, a stops renewing: the lease lapses after the TTL and b takes it.
        a.freeze(true);
        tokio::time::sleep(Duration::from_secs(4)).await;
        assert_eq!(b.acquire("game:1").await.unwrap(), None);
        assert_eq!(a.holder("game:1").await.unwrap(), Some("b".into()));
        // Thawed, a finds it lost at its next renewal.
        let mut lost = a.lost().unwrap();
        a.freeze(false);
        assert_eq!(lost.recv().await.as_deref(), Some("game:1"));
        assert!(a.lost().is_none(), "taken once");
    }

    #[tokio::test(start_paused = true)]
    async fn messages_reach_the_subscribed_nodes_in_order_and_not_during_an_outage() {
        let hub = MemoryHub::new(Duration::from_secs(3));
        let a = hub.join("a");
        let b = hub.join("b");
        let mut rx = b.messages().unwrap();
        b.subscribe("game:1:live").await.unwrap();
        for i in 0..3u8 {
            a.publish("game:1:live", Bytes::from(vec![i]))
                .await
                .unwrap();
        }
        a.publish("game:2:live", Bytes::from_static(b"x"))
            .await
            .unwrap();
        for i in 0..3u8 {
            let m = rx.recv().await.unwrap();
            assert_eq!(
                (m.channel.as_str(), &m.payload[..]),
                ("game:1:live", &[i][..])
            );
        }
        b.outage(true);
        assert!(!*b.connected().borrow());
        a.publish("game:1:live", Bytes::from_static(b"lost"))
            .await
            .unwrap();
        b.outage(false);
        a.publish("game:1:live", Bytes::from_static(b"after"))
            .await
            .unwrap();
        assert_eq!(&rx.recv().await.unwrap().payload[..], b"after");
    }
}
