//! The [`Cluster`] port on Redis: an adapter over `chuhe-cluster`'s [`RedisCluster`] (leases,
//! pub/sub, reconnection; see that crate's README for exactly what happens while Redis is
//! unreachable). Built by the CLI from `--redis-url`, `--node-id` and `--lease-ttl`.

use std::sync::Mutex;
use std::time::Duration;

use axum::body::Bytes;
use chuhe_cluster::{Config, RedisCluster};
use tokio::sync::{mpsc, watch};

use crate::cluster::{BoxFut, Cluster, ClusterError, ClusterMessage};

/// How the server's node joins a cluster on Redis.
#[derive(Debug, Clone)]
pub struct RedisClusterOptions {
    /// `redis://host:port[/db]`.
    pub url: String,
    /// This node's id, unique among the running nodes.
    pub node_id: String,
    /// Prefix of every key and channel (one per cluster sharing a Redis).
    pub prefix: String,
    /// Lease time to live (renewed every third of it).
    pub lease_ttl: Duration,
}

/// A node id for this process: the host name (letters, digits, `.`, `-`, `_` kept; at most
/// 40 characters) and 8 random hex digits, e.g. `web-3-a91f03c2`. Unique among running nodes
/// even when two start on one host.
pub fn default_node_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let host: String = host
        .trim()
        .chars()
        .filter(|&c| node_id_char(c))
        .take(40)
        .collect();
    let host = if host.is_empty() {
        "chuhe".into()
    } else {
        host
    };
    let suffix = chuhe_cluster::random_suffix();
    format!("{host}-{}", &suffix[..8])
}

/// Whether `id` can name a node: 1 to 64 ASCII letters, digits, `.`, `-` or `_`.
pub fn valid_node_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.chars().all(node_id_char)
}

/// A character a node id may hold.
fn node_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')
}

/// [`Cluster`] on Redis.
pub struct RedisClusterAdapter {
    inner: RedisCluster,
    messages: Mutex<Option<mpsc::Receiver<ClusterMessage>>>,
    forward: tokio::task::JoinHandle<()>,
}

fn ce(e: chuhe_cluster::Error) -> ClusterError {
    ClusterError(e.to_string())
}

impl RedisClusterAdapter {
    /// Connects (failing within a second when Redis cannot be reached: a node does not start
    /// without its Redis). Must be called inside a tokio runtime.
    pub async fn connect(options: RedisClusterOptions) -> Result<Self, ClusterError> {
        let config = Config {
            prefix: options.prefix,
            ..Config::new(options.url, options.node_id).with_lease_ttl(options.lease_ttl)
        };
        let inner = RedisCluster::connect(config).await.map_err(ce)?;
        let (tx, rx) = mpsc::channel(inner.config().message_buffer.max(1));
        let mut from = inner
            .take_messages()
            .ok_or_else(|| ClusterError("the messages were taken".into()))?;
        let forward = tokio::spawn(async move {
            while let Some(m) = from.recv().await {
                let m = ClusterMessage {
                    channel: m.channel,
                    payload: Bytes::from(m.payload),
                };
                if tx.send(m).await.is_err() {
                    return;
                }
            }
        });
        Ok(RedisClusterAdapter {
            inner,
            messages: Mutex::new(Some(rx)),
            forward,
        })
    }

    /// The client underneath (its held leases, `renew_now`, `release_all_and_close`).
    pub fn client(&self) -> &RedisCluster {
        &self.inner
    }
}

impl Drop for RedisClusterAdapter {
    fn drop(&mut self) {
        self.forward.abort();
    }
}

impl Cluster for RedisClusterAdapter {
    fn node_id(&self) -> &str {
        self.inner.node_id()
    }

    fn acquire(&self, key: &str) -> BoxFut<'_, Result<Option<String>, ClusterError>> {
        let key = key.to_owned();
        Box::pin(async move { self.inner.acquire(&key).await.map_err(ce) })
    }

    fn holder(&self, key: &str) -> BoxFut<'_, Result<Option<String>, ClusterError>> {
        let key = key.to_owned();
        Box::pin(async move { self.inner.holder(&key).await.map_err(ce) })
    }

    fn release(&self, key: &str) -> BoxFut<'_, Result<(), ClusterError>> {
        let key = key.to_owned();
        Box::pin(async move { self.inner.release(&key).await.map_err(ce) })
    }

    fn lost(&self) -> Option<mpsc::UnboundedReceiver<String>> {
        self.inner.take_lost()
    }

    fn publish(&self, channel: &str, payload: Bytes) -> BoxFut<'_, Result<(), ClusterError>> {
        let channel = channel.to_owned();
        Box::pin(async move { self.inner.publish(&channel, &payload).await.map_err(ce) })
    }

    fn publish_many(&self, messages: Vec<(String, Bytes)>) -> BoxFut<'_, Result<(), ClusterError>> {
        Box::pin(async move { self.inner.publish_many(&messages).await.map_err(ce) })
    }

    fn subscribe(&self, channel: &str) -> BoxFut<'_, Result<(), ClusterError>> {
        let channel = channel.to_owned();
        Box::pin(async move { self.inner.subscribe(&channel).await.map_err(ce) })
    }

    fn unsubscribe(&self, channel: &str) -> BoxFut<'_, Result<(), ClusterError>> {
        let channel = channel.to_owned();
        Box::pin(async move { self.inner.unsubscribe(&channel).await.map_err(ce) })
    }

    fn messages(&self) -> Option<mpsc::Receiver<ClusterMessage>> {
        self.messages
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    fn connected(&self) -> watch::Receiver<bool> {
        self.inner.connected()
    }

    fn lease_ttl(&self) -> Duration {
        self.inner.config().lease_ttl
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use chuhe_cluster::testing::ThrowawayRedis;

    fn options(redis: &ThrowawayRedis, prefix: &str, node: &str) -> RedisClusterOptions {
        RedisClusterOptions {
            url: redis.url(),
            node_id: node.into(),
            prefix: prefix.into(),
            lease_ttl: Duration::from_secs(3),
        }
    }

    /// The port's operations reach Redis through the adapter: leases between two nodes,
    /// messages with their channel and bytes, and the connected watch.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_port_on_redis() {
        let Some(redis) =
            ThrowawayRedis::start_or_skip("redis_cluster::the_port_on_redis").unwrap()
        else {
            return;
        };
        let prefix = format!("t{}", chuhe_cluster::random_suffix());
        let a: Box<dyn Cluster> = Box::new(
            RedisClusterAdapter::connect(options(&redis, &prefix, "a"))
                .await
                .unwrap(),
        );
        let b: Box<dyn Cluster> = Box::new(
            RedisClusterAdapter::connect(options(&redis, &prefix, "b"))
                .await
                .unwrap(),
        );
        assert_eq!(a.node_id(), "a");
        assert_eq!(a.acquire("game:1").await.unwrap(), None);
        assert_eq!(b.acquire("game:1").await.unwrap(), Some("a".into()));
        assert_eq!(b.holder("game:1").await.unwrap(), Some("a".into()));
        a.release("game:1").await.unwrap();
        assert_eq!(b.holder("game:1").await.unwrap(), None);
        assert!(a.lost().is_some() && a.lost().is_none());

        let mut inbox = a.messages().unwrap();
        assert!(a.messages().is_none());
        let mut connected = a.connected();
        tokio::time::timeout(Duration::from_secs(10), connected.wait_for(|c| *c))
            .await
            .unwrap()
            .unwrap();
        a.subscribe("node:a").await.unwrap();
        b.publish("node:a", Bytes::from_static(b"\x01\x02"))
            .await
            .unwrap();
        let m = tokio::time::timeout(Duration::from_secs(10), inbox.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(m.channel, "node:a");
        assert_eq!(&m.payload[..], b"\x01\x02");
        a.unsubscribe("node:a").await.unwrap();
    }

    #[test]
    fn node_ids() {
        let a = default_node_id();
        assert!(valid_node_id(&a), "{a}");
        assert_ne!(a, default_node_id(), "random suffix");
        assert!(!valid_node_id(""));
        assert!(!valid_node_id("a b"));
        assert!(!valid_node_id(&"x".repeat(65)));
        assert!(valid_node_id("web-1.eu_2"));
    }

    #[tokio::test]
    async fn no_redis_no_cluster() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let r = RedisClusterAdapter::connect(RedisClusterOptions {
            url: format!("redis://127.0.0.1:{port}"),
            node_id: "n".into(),
            prefix: "chuhe".into(),
            lease_ttl: Duration::from_secs(3),
        })
        .await;
        assert!(r.is_err());
    }
}
