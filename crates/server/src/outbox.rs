//! Per-connection bounded write queues and frames encoded once per encoding.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use axum::body::Bytes;
use chuhe_proto::Encoding;
use chuhe_proto::v1::{GameEvent, ServerMessage, server_message};
use futures_util::task::AtomicWaker;
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

/// A server message shared by every recipient: each encoding is produced at
/// most once, by whichever writer needs it first, however many connections
/// receive it.
#[derive(Debug)]
pub struct SharedFrame {
    pub seq: u64,
    msg: ServerMessage,
    proto: OnceLock<Bytes>,
    json: OnceLock<Utf8Bytes>,
}

impl SharedFrame {
    pub fn new(seq: u64, msg: ServerMessage) -> SharedFrame {
        SharedFrame {
            seq,
            msg,
            proto: OnceLock::new(),
            json: OnceLock::new(),
        }
    }

    /// A frame whose protobuf encoding is already known.
    pub fn with_proto(seq: u64, msg: ServerMessage, proto: Vec<u8>) -> SharedFrame {
        let f = SharedFrame::new(seq, msg);
        let _ = f.proto.set(Bytes::from(proto));
        f
    }

    pub fn message(&self) -> &ServerMessage {
        &self.msg
    }

    /// The game event the frame carries, if it is one.
    pub fn event(&self) -> Option<&GameEvent> {
        match &self.msg.kind {
            Some(server_message::Kind::Event(ev)) => Some(ev),
            _ => None,
        }
    }

    /// The frame's protobuf encoding (made once, shared with every protobuf connection).
    pub fn proto_bytes(&self) -> Bytes {
        self.proto
            .get_or_init(|| Bytes::from(chuhe_proto::encode_proto(&self.msg)))
            .clone()
    }

    pub fn ws_message(&self, enc: Encoding) -> Message {
        match enc {
            Encoding::Proto => Message::Binary(
                self.proto
                    .get_or_init(|| Bytes::from(chuhe_proto::encode_proto(&self.msg)))
                    .clone(),
            ),
            Encoding::Json => Message::Text(
                self.json
                    .get_or_init(|| Utf8Bytes::from(chuhe_proto::encode_json(&self.msg)))
                    .clone(),
            ),
        }
    }
}

/// What a connection's writer sends.
#[derive(Debug)]
pub enum Out {
    Shared(Arc<SharedFrame>),
    Own(Box<ServerMessage>),
}

/// Tells a connection to close (its queue overflowed, or it flooded us).
#[derive(Debug, Default)]
pub struct Kick {
    code: AtomicU16,
    notify: Notify,
}

impl Kick {
    pub fn kick(&self, code: u16) {
        if self
            .code
            .compare_exchange(0, code, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.notify.notify_one();
        }
    }
    pub fn code(&self) -> Option<u16> {
        match self.code.load(Ordering::Acquire) {
            0 => None,
            c => Some(c),
        }
    }
    pub async fn kicked(&self) -> u16 {
        loop {
            if let Some(c) = self.code() {
                return c;
            }
            self.notify.notified().await;
        }
    }
}

/// One connection's write queue: frames waiting for its task, bounded by `capacity`.
///
/// A plain locked `VecDeque` with one waker instead of a tokio mpsc channel: the queue has
/// one reader that takes everything at once, so a wake-up costs one lock for all queued
/// frames, and cloning an [`Outbox`] (once per request routed to a game) is two counters, not
/// a channel's sender bookkeeping. The kick lives beside it, so a connection is one allocation.
struct Queue {
    items: Mutex<VecDeque<Out>>,
    capacity: usize,
    /// The reader's waker; woken when a frame lands in an empty queue or the last sender goes.
    reader: AtomicWaker,
    /// Live [`Outbox`]es; when it reaches 0 the reader sees the end of the queue.
    senders: AtomicUsize,
    /// The [`Inbox`] was dropped: sends fail.
    reader_gone: AtomicBool,
    kick: Kick,
    /// Frames for a client on another node (see [`Outbox::remote`]): each is handed to this
    /// instead of the queue.
    sink: Option<Sink>,
}

/// Where a remote client's frames go (the owner's publisher, addressed to the client's node).
pub type Sink = Box<dyn Fn(Out) -> bool + Send + Sync>;

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue")
            .field("capacity", &self.capacity)
            .field("remote", &self.sink.is_some())
            .finish()
    }
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, VecDeque<Out>> {
        // A poisoned lock only means a panic elsewhere while pushing or swapping; the deque
        // itself is always consistent.
        self.items.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The sending side of a connection's bounded write queue. Sends never wait:
/// a full queue kicks the connection (close code 4008) — the server never
/// buffers without bound for a slow reader, which can reconnect with the last
/// seq it saw.
#[derive(Debug)]
pub struct Outbox {
    pub conn_id: u64,
    pub encoding: Encoding,
    q: Arc<Queue>,
}

impl Clone for Outbox {
    fn clone(&self) -> Outbox {
        self.q.senders.fetch_add(1, Ordering::Relaxed);
        Outbox {
            conn_id: self.conn_id,
            encoding: self.encoding,
            q: self.q.clone(),
        }
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        if self.q.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.q.reader.wake();
        }
    }
}

/// The receiving side of a connection's write queue (its task).
#[derive(Debug)]
pub struct Inbox {
    q: Arc<Queue>,
    /// Frames taken from the queue and not yet handed out; swapped with the queue's deque, so
    /// both keep their capacity and a take is one lock however many frames wait.
    taken: VecDeque<Out>,
}

/// A connection's [`Kick`], held apart from its queue (the connection task reads its queue
/// mutably while it watches the kick).
#[derive(Debug, Clone)]
pub struct KickHandle(Arc<Queue>);

impl std::ops::Deref for KickHandle {
    type Target = Kick;
    fn deref(&self) -> &Kick {
        &self.0.kick
    }
}

impl Inbox {
    /// Takes everything queued into `taken`; true when something came.
    fn take(&mut self) -> bool {
        if self.taken.is_empty() {
            std::mem::swap(&mut *self.q.lock(), &mut self.taken);
        }
        !self.taken.is_empty()
    }

    /// The next frame, if one is waiting.
    pub fn try_recv(&mut self) -> Option<Out> {
        self.take();
        self.taken.pop_front()
    }

    /// Waits for the next frame; `None` once every [`Outbox`] is gone and the queue is empty.
    pub fn poll_recv(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<Out>> {
        use std::task::Poll;
        if let Some(out) = self.try_recv() {
            return Poll::Ready(Some(out));
        }
        self.q.reader.register(cx.waker());
        // Again after registering: a frame queued (or the last sender dropped) in between
        // found no waker to wake.
        if let Some(out) = self.try_recv() {
            return Poll::Ready(Some(out));
        }
        if self.q.senders.load(Ordering::Acquire) == 0 {
            return Poll::Ready(None);
        }
        Poll::Pending
    }

    /// Waits for the next frame; `None` once every [`Outbox`] is gone and the queue is empty.
    pub async fn recv(&mut self) -> Option<Out> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        self.q.reader_gone.store(true, Ordering::Release);
        // Frames nobody will write: free them now, not when the last game lets go.
        let rest = std::mem::take(&mut *self.q.lock());
        drop(rest);
    }
}

impl Outbox {
    /// A connection's queue of `capacity` frames: the sending side (clone it for every game),
    /// the receiving side, and the kick both see.
    pub fn new(conn_id: u64, encoding: Encoding, capacity: usize) -> (Outbox, Inbox, KickHandle) {
        let q = Arc::new(Queue {
            items: Mutex::new(VecDeque::new()),
            capacity: capacity.max(1),
            reader: AtomicWaker::new(),
            senders: AtomicUsize::new(1),
            reader_gone: AtomicBool::new(false),
            kick: Kick::default(),
            sink: None,
        });
        (
            Outbox {
                conn_id,
                encoding,
                q: q.clone(),
            },
            Inbox {
                q: q.clone(),
                taken: VecDeque::new(),
            },
            KickHandle(q),
        )
    }

    /// The outbox of a client connected to another node, as its game's owner answers it:
    /// every frame goes to `sink` (which sends it to the client's node) in order. Nothing
    /// reads it here; it never fills.
    pub fn remote(conn_id: u64, sink: Sink) -> Outbox {
        let q = Arc::new(Queue {
            items: Mutex::new(VecDeque::new()),
            capacity: 1,
            reader: AtomicWaker::new(),
            senders: AtomicUsize::new(1),
            reader_gone: AtomicBool::new(false),
            kick: Kick::default(),
            sink: Some(sink),
        });
        Outbox {
            conn_id,
            encoding: Encoding::Proto,
            q,
        }
    }

    /// Queues a frame; false when the connection is gone or was just kicked.
    pub fn send(&self, out: Out) -> bool {
        if let Some(sink) = &self.q.sink {
            return sink(out);
        }
        if self.is_closed() {
            return false;
        }
        let mut items = self.q.lock();
        if items.len() >= self.q.capacity {
            drop(items);
            self.q.kick.kick(crate::error::close::TOO_SLOW);
            return false;
        }
        let was_empty = items.is_empty();
        items.push_back(out);
        drop(items);
        // The reader takes the whole queue at once, so only the first frame after a take
        // needs to wake it.
        if was_empty {
            self.q.reader.wake();
        }
        true
    }

    pub fn send_msg(&self, msg: ServerMessage) -> bool {
        self.send(Out::Own(Box::new(msg)))
    }

    /// Closes the connection with `code` (its task writes what is queued first, then closes).
    pub fn kick(&self, code: u16) {
        self.q.kick.kick(code);
    }

    pub fn is_closed(&self) -> bool {
        self.q.reader_gone.load(Ordering::Acquire) || self.q.kick.code().is_some()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn full_queue_kicks_with_too_slow() {
        let (ob, _rx, kick) = Outbox::new(1, Encoding::Json, 2);
        assert!(ob.send_msg(ServerMessage::default()));
        assert!(ob.send_msg(ServerMessage::default()));
        assert!(!ob.send_msg(ServerMessage::default()));
        assert_eq!(kick.code(), Some(crate::error::close::TOO_SLOW));
        assert!(ob.is_closed());
    }

    fn own(seq: u64) -> ServerMessage {
        ServerMessage {
            kind: Some(server_message::Kind::Pong(chuhe_proto::v1::Pong {
                client_time_ms: seq,
                server_time_ms: 0,
            })),
        }
    }

    fn seq_of(out: Out) -> u64 {
        match out {
            Out::Own(m) => match m.kind {
                Some(server_message::Kind::Pong(p)) => p.client_time_ms,
                _ => u64::MAX,
            },
            Out::Shared(f) => f.seq,
        }
    }

    #[test]
    fn frames_come_out_in_order_across_takes() {
        let (ob, mut rx, _kick) = Outbox::new(1, Encoding::Proto, 8);
        let other = ob.clone();
        assert!(ob.send_msg(own(1)));
        assert!(other.send_msg(own(2)));
        assert_eq!(rx.try_recv().map(seq_of), Some(1));
        // 2 is taken, 3 still queued: both come, in order.
        assert!(ob.send_msg(own(3)));
        assert_eq!(rx.try_recv().map(seq_of), Some(2));
        assert_eq!(rx.try_recv().map(seq_of), Some(3));
        assert!(rx.try_recv().is_none());
    }

    #[test]
    fn the_bound_counts_frames_not_yet_taken() {
        let (ob, mut rx, kick) = Outbox::new(1, Encoding::Proto, 2);
        assert!(ob.send_msg(own(1)));
        assert!(ob.send_msg(own(2)));
        assert_eq!(rx.try_recv().map(seq_of), Some(1));
        // Both were taken at once: the queue has room for two again.
        assert!(ob.send_msg(own(3)));
        assert!(ob.send_msg(own(4)));
        assert!(!ob.send_msg(own(5)));
        assert_eq!(kick.code(), Some(crate::error::close::TOO_SLOW));
    }

    #[tokio::test]
    async fn a_waiting_reader_is_woken_by_a_send_and_by_the_last_sender_leaving() {
        let (ob, mut rx, _kick) = Outbox::new(1, Encoding::Proto, 8);
        let other = ob.clone();
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(out) = rx.recv().await {
                got.push(seq_of(out));
            }
            got
        });
        tokio::task::yield_now().await;
        assert!(ob.send_msg(own(1)));
        tokio::task::yield_now().await;
        assert!(other.send_msg(own(2)));
        assert!(other.send_msg(own(3)));
        drop(other);
        drop(ob);
        assert_eq!(reader.await.unwrap(), vec![1, 2, 3]);
    }

    #[test]
    fn sends_fail_once_the_reader_is_gone() {
        let (ob, rx, _kick) = Outbox::new(1, Encoding::Proto, 8);
        assert!(ob.send_msg(own(1)));
        drop(rx);
        assert!(ob.is_closed());
        assert!(!ob.send_msg(own(2)));
    }

    #[test]
    fn shared_frame_encodes_each_encoding_once() {
        let f = SharedFrame::new(1, ServerMessage::default());
        let a = f.ws_message(Encoding::Json);
        let b = f.ws_message(Encoding::Json);
        match (a, b) {
            (Message::Text(a), Message::Text(b)) => {
                assert_eq!(a.as_str().as_ptr(), b.as_str().as_ptr())
            }
            _ => panic!("expected text"),
        }
    }
}
