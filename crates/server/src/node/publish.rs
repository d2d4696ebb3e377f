//! What this node publishes for the others, in order: the lease keys and channel names, the
//! [`Publisher`] (the publish queue — all a running game or a league runner is given of the
//! node link, to publish its streams on their [`Channel`]s) and the task that sends it.

use std::sync::{Arc, OnceLock};

use axum::body::Bytes;
use chuhe_proto::v1::{ChannelFrame, NodeFrame, NodeFrames, NodeMessage, node_message};
use prost::Message as _;
use tokio::sync::mpsc;
use tracing::{debug, warn};

use crate::cluster::Cluster;
use crate::metrics::Metrics;
use crate::outbox::SharedFrame;

/// How many messages wait for the publisher at most; beyond, a publish is dropped (counted,
/// logged) as a message the coordination service lost would be: subscribers notice the gap.
const PUBLISH_QUEUE: usize = 65_536;

/// At most this many queued messages go to Redis in one pipelined round trip.
const PUBLISH_BATCH: usize = 1024;

/// The lease key of a game.
pub fn game_key(id: i64) -> String {
    format!("game:{id}")
}

/// The lease key of a league (its runner).
pub fn league_key(id: i64) -> String {
    format!("league:{id}")
}

/// The lease every node holds on itself while it runs: a sweep asks once per owner node
/// whether it is alive instead of once per remote game.
pub(crate) fn alive_key(node: &str) -> String {
    format!("alive:{node}")
}

/// The channels of game `id`'s live and delayed public streams.
pub(crate) fn game_channels(id: i64) -> [String; 2] {
    [format!("game:{id}:live"), format!("game:{id}:public")]
}

/// The channel a league's public stream is published on.
pub(crate) fn league_channel(id: impl std::fmt::Display) -> String {
    format!("league:{id}:public")
}

/// The channel of a node (the requests and frames addressed to it).
pub(crate) fn node_channel(node: &str) -> String {
    format!("node:{node}")
}

/// What the publisher sends.
pub(crate) enum Publish {
    /// A frame for a client on `node` (coalesced with the next ones for the same node).
    Frame(String, NodeFrame),
    /// A message, as it is, on a channel.
    Raw(String, Bytes),
}

/// The publish queue's sending end: what the node link, a game's channels and a league's
/// channel publish through.
#[derive(Clone)]
pub struct Publisher {
    tx: mpsc::Sender<Publish>,
    /// The node's metrics (set once the node's `Env` exists).
    metrics: Arc<OnceLock<Arc<Metrics>>>,
}

impl Publisher {
    /// The queue, and its receiving end for [`publisher`].
    pub(crate) fn new(
        metrics: Arc<OnceLock<Arc<Metrics>>>,
    ) -> (Publisher, mpsc::Receiver<Publish>) {
        let (tx, rx) = mpsc::channel(PUBLISH_QUEUE);
        (Publisher { tx, metrics }, rx)
    }

    /// Queues `p`; false when the queue is full (the message is dropped, counted).
    pub(crate) fn publish(&self, p: Publish) -> bool {
        match self.tx.try_send(p) {
            Ok(()) => true,
            Err(_) => {
                // Counted in the metrics; logged at the 1st, 2nd, 4th, 8th… drop only.
                let n = self.metrics.get().map(|m| {
                    1 + m
                        .cluster_publish_dropped_total
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                });
                if n.is_none_or(u64::is_power_of_two) {
                    warn!(
                        dropped_so_far = n,
                        "cluster publish queue full; a message is dropped"
                    );
                }
                false
            }
        }
    }
}

/// Where a game's owner publishes its streams for the other nodes.
pub(crate) struct GameChannels {
    live: Channel,
    public: Channel,
}

impl GameChannels {
    /// The channels of game `id` when this node is one of several.
    pub(crate) fn of(publisher: Option<&Publisher>, id: i64) -> Option<Arc<GameChannels>> {
        let [live, public] = game_channels(id);
        Some(Arc::new(GameChannels {
            live: Channel::of(publisher, live)?,
            public: Channel::of(publisher, public)?,
        }))
    }

    /// Publishes one event frame of the live (true) or the delayed public stream.
    pub(crate) fn publish(&self, live: bool, frame: &SharedFrame) {
        if live { &self.live } else { &self.public }.publish(frame);
    }
}

/// A channel this node publishes a stream's event frames on (a league's public stream, a
/// game's live or public one).
pub(crate) struct Channel {
    name: String,
    publisher: Publisher,
}

impl Channel {
    pub(crate) fn of(publisher: Option<&Publisher>, name: String) -> Option<Channel> {
        Some(Channel {
            name,
            publisher: publisher?.clone(),
        })
    }

    pub(crate) fn publish(&self, frame: &SharedFrame) {
        let msg = ChannelFrame {
            seq: frame.seq,
            message: frame.proto_bytes().to_vec(),
        };
        self.publisher.publish(Publish::Raw(
            self.name.clone(),
            Bytes::from(msg.encode_to_vec()),
        ));
    }
}

/// Sends what the node publishes, in order; consecutive frames for one node go as one message.
pub(crate) async fn publisher(
    cluster: Arc<dyn Cluster>,
    mut rx: mpsc::Receiver<Publish>,
    mut settled: tokio::sync::watch::Receiver<bool>,
) {
    let mut batch = Vec::with_capacity(PUBLISH_BATCH);
    loop {
        tokio::select! {
            n = rx.recv_many(&mut batch, PUBLISH_BATCH) => {
                if n == 0 {
                    return;
                }
            }
            _ = async { let _ = settled.wait_for(|s| *s).await; } => {
                // Shutdown: what is queued still goes, then the task ends.
                while let Ok(p) = rx.try_recv() {
                    batch.push(p);
                }
                send_batch(cluster.as_ref(), &mut batch).await;
                return;
            }
        }
        send_batch(cluster.as_ref(), &mut batch).await;
    }
}

async fn send_batch(cluster: &dyn Cluster, batch: &mut Vec<Publish>) {
    // Everything queued goes in one pipelined round trip, in order: one by one, a busy
    // node's publisher could not keep up with its games (a round trip per event).
    let mut out: Vec<(String, Bytes)> = Vec::with_capacity(batch.len());
    let mut frames: Option<(String, Vec<NodeFrame>)> = None;
    for p in batch.drain(..) {
        match p {
            Publish::Frame(node, f) => match &mut frames {
                Some((n, v)) if *n == node => v.push(f),
                _ => {
                    if let Some((n, v)) = frames.take() {
                        out.push(frames_message(&n, v));
                    }
                    frames = Some((node, vec![f]));
                }
            },
            Publish::Raw(channel, bytes) => {
                if let Some((n, v)) = frames.take() {
                    out.push(frames_message(&n, v));
                }
                out.push((channel, bytes));
            }
        }
    }
    if let Some((n, v)) = frames.take() {
        out.push(frames_message(&n, v));
    }
    let n = out.len();
    if let Err(e) = cluster.publish_many(out).await {
        debug!(messages = n, error = %e, "publish failed");
    }
}

/// The message carrying `frames` to `node`'s channel.
fn frames_message(node: &str, frames: Vec<NodeFrame>) -> (String, Bytes) {
    let msg = NodeMessage {
        kind: Some(node_message::Kind::Frames(NodeFrames { frames })),
    };
    (node_channel(node), Bytes::from(msg.encode_to_vec()))
}
