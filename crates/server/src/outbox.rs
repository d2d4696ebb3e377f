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

use crate::socket::{Direct, SharedSocket};

/// A server message shared by every recipient: each encoding is produced at
/// most once, by whichever writer needs it first, however many connections
/// receive it.
///
/// A game's events are made from their protobuf encoding alone
/// ([`SharedFrame::from_proto_frame`]): the message is decoded from it only if something asks
/// for it (a JSON connection, the delayed view of a game), so the replay ring of every game
/// holds each event once, as bytes.
#[derive(Debug)]
pub struct SharedFrame {
    pub seq: u64,
    /// The message: given, or decoded from the protobuf frame when first asked for.
    msg: OnceLock<ServerMessage>,
    /// Whether it carries an event of the arbiter channel (known without decoding it).
    private: bool,
    /// The JSON text: a slice of its websocket frame below (the protobuf payload is sliced
    /// from its frame when asked for).
    json: OnceLock<Utf8Bytes>,
    /// The whole websocket frame of each encoding (direct writes send it as it is).
    proto_frame: OnceLock<Bytes>,
    json_frame: OnceLock<Bytes>,
}

impl SharedFrame {
    pub fn new(seq: u64, msg: ServerMessage) -> SharedFrame {
        let private = matches!(&msg.kind, Some(server_message::Kind::Event(ev))
            if crate::audience::is_private(ev.kind.as_ref()));
        SharedFrame {
            seq,
            msg: OnceLock::from(msg),
            private,
            json: OnceLock::new(),
            proto_frame: OnceLock::new(),
            json_frame: OnceLock::new(),
        }
    }

    /// A frame whose protobuf encoding is already known.
    pub fn with_proto(seq: u64, msg: ServerMessage, proto: Vec<u8>) -> SharedFrame {
        SharedFrame::with_proto_frame(seq, msg, crate::socket::ws_frame(true, &proto))
    }

    /// A frame whose protobuf encoding is already known as a whole websocket frame
    /// ([`crate::socket::ws_frame`]'s form).
    pub fn with_proto_frame(seq: u64, msg: ServerMessage, frame: Bytes) -> SharedFrame {
        let f = SharedFrame::new(seq, msg);
        let _ = f.proto_frame.set(frame);
        f
    }

    /// A frame known only by its protobuf encoding as a whole websocket frame, and whether it
    /// carries an event of the arbiter channel. The message is decoded from it when first
    /// asked for.
    pub fn from_proto_frame(seq: u64, frame: Bytes, private: bool) -> SharedFrame {
        SharedFrame {
            seq,
            msg: OnceLock::new(),
            private,
            json: OnceLock::new(),
            proto_frame: OnceLock::from(frame),
            json_frame: OnceLock::new(),
        }
    }

    pub fn message(&self) -> &ServerMessage {
        // Every frame has its message or its protobuf frame from the start: decoding reads
        // the frame, never the message.
        self.msg.get_or_init(|| {
            use prost::Message as _;
            let payload = match self.proto_frame.get() {
                Some(frame) => crate::socket::ws_payload(frame),
                None => Bytes::new(),
            };
            ServerMessage::decode(payload).unwrap_or_else(|e| {
                tracing::error!(seq = self.seq, error = %e, "a shared frame of ours did not decode");
                ServerMessage::default()
            })
        })
    }

    /// The game event the frame carries, if it is one.
    pub fn event(&self) -> Option<&GameEvent> {
        match &self.message().kind {
            Some(server_message::Kind::Event(ev)) => Some(ev),
            _ => None,
        }
    }

    /// Whether the frame carries an event of the arbiter channel.
    pub fn is_private(&self) -> bool {
        self.private
    }

    /// The frame's protobuf encoding (made once, shared with every protobuf connection): the
    /// payload of its websocket frame, so each frame is held once.
    pub fn proto_bytes(&self) -> Bytes {
        crate::socket::ws_payload(self.ws_frame(Encoding::Proto))
    }

    /// The frame's JSON text, the payload of its websocket frame.
    fn json_text(&self) -> &Utf8Bytes {
        self.json.get_or_init(|| {
            let payload = crate::socket::ws_payload(self.ws_frame(Encoding::Json));
            // The payload is the text `encode_json` made: always UTF-8.
            Utf8Bytes::try_from(payload)
                .unwrap_or_else(|_| Utf8Bytes::from(chuhe_proto::encode_json(self.message())))
        })
    }

    /// The whole websocket frame (header and payload) of the encoding, made once.
    pub fn ws_frame(&self, enc: Encoding) -> &Bytes {
        match enc {
            Encoding::Proto => self.proto_frame.get_or_init(|| {
                crate::socket::ws_frame(true, &chuhe_proto::encode_proto(self.message()))
            }),
            Encoding::Json => self.json_frame.get_or_init(|| {
                crate::socket::ws_frame(false, chuhe_proto::encode_json(self.message()).as_bytes())
            }),
        }
    }

    pub fn ws_message(&self, enc: Encoding) -> Message {
        match enc {
            Encoding::Proto => Message::Binary(self.proto_bytes()),
            Encoding::Json => Message::Text(self.json_text().clone()),
        }
    }
}

/// Holds a connection's frames while it lives ([`Outbox::cork`]).
#[must_use = "the frames are held only while the cork lives"]
pub struct Cork<'a>(&'a Outbox);

impl Drop for Cork<'_> {
    fn drop(&mut self) {
        self.0.uncork();
    }
}

/// What [`Inbox::poll_next`] found.
#[derive(Debug)]
pub enum Next {
    Frame(Out),
    /// A direct write left bytes pending: flush the socket.
    Flush,
    /// Every [`Outbox`] is gone and nothing is queued.
    Closed,
}

/// Room made up front for what a cork holds (it grows if more comes).
const CORKED_BYTES: usize = 512;

/// A connection's own message as a whole websocket frame.
fn own_frame(enc: Encoding, m: &ServerMessage) -> Bytes {
    let mut frame = Vec::new();
    push_own_frame(&mut frame, enc, m);
    Bytes::from(frame)
}

/// Appends a connection's own message to `out` as a whole websocket frame (a protobuf one is
/// encoded in place, after its header).
fn push_own_frame(out: &mut Vec<u8>, enc: Encoding, m: &ServerMessage) {
    match enc {
        Encoding::Proto => {
            use prost::Message as _;
            crate::socket::push_ws_header(out, true, m.encoded_len());
            m.encode_raw(out);
        }
        Encoding::Json => {
            let text = chuhe_proto::encode_json(m);
            crate::socket::push_ws_header(out, false, text.len());
            out.extend_from_slice(text.as_bytes());
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
    items: Mutex<Items>,
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
    /// A frame was written directly since the task last asked (its heartbeat is not due).
    wrote_directly: AtomicBool,
}

/// What the queue's lock guards: the frames, and whether one may skip them.
#[derive(Default)]
struct Items {
    q: VecDeque<Out>,
    /// The connection's socket, while its task lets senders write to it directly
    /// ([`Inbox::write_directly`]).
    socket: Option<Arc<SharedSocket>>,
    /// The task has written (and flushed) everything it took and waits for more: a frame for
    /// an empty queue may go straight to the socket instead (see [`Outbox::send`]).
    idle: bool,
    /// A direct write left part of its frame pending: the task must flush it.
    flush: bool,
    /// Frames are held until [`Cork`] is dropped, then written together ([`Outbox::cork`]).
    corked: bool,
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
    fn lock(&self) -> MutexGuard<'_, Items> {
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
            let mut items = self.q.lock();
            if !items.q.is_empty() {
                items.idle = false;
                std::mem::swap(&mut items.q, &mut self.taken);
            }
        }
        !self.taken.is_empty()
    }

    /// Lets senders write frames straight to `socket` while this connection's task is idle
    /// (see [`Outbox::send`]). The task must then write only through the socket's
    /// [`crate::socket::SocketIo`], wait with [`Inbox::poll_next`], and flush when told to.
    pub fn write_directly(&mut self, socket: Arc<SharedSocket>) {
        self.q.lock().socket = Some(socket);
    }

    /// No more direct writes (the connection is closing): every frame is queued from now on.
    pub fn stop_direct(&mut self) {
        let mut items = self.q.lock();
        items.socket = None;
        items.idle = false;
    }

    /// Whether a frame was written directly since the last call.
    pub fn wrote_directly(&self) -> bool {
        self.q.wrote_directly.swap(false, Ordering::Relaxed)
    }

    /// Waits for the next frame, or for a direct write's rest to be flushed; [`Next::Closed`]
    /// once every [`Outbox`] is gone and the queue is empty. While it waits, senders may write
    /// to the socket directly: the caller has written and flushed everything it took.
    pub fn poll_next(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Next> {
        use std::task::Poll;
        if let Some(out) = self.try_recv() {
            return Poll::Ready(Next::Frame(out));
        }
        self.q.reader.register(cx.waker());
        // Again after registering: a frame queued (or the last sender dropped) in between
        // found no waker to wake. The check and the idle mark are one lock, so a sender sees
        // either the frame still queued or the task idle.
        {
            let mut items = self.q.lock();
            if !items.q.is_empty() {
                items.idle = false;
                std::mem::swap(&mut items.q, &mut self.taken);
            } else if std::mem::take(&mut items.flush) {
                return Poll::Ready(Next::Flush);
            } else if self.q.senders.load(Ordering::Acquire) == 0 {
                return Poll::Ready(Next::Closed);
            } else {
                items.idle = items.socket.is_some();
                return Poll::Pending;
            }
        }
        match self.taken.pop_front() {
            Some(out) => Poll::Ready(Next::Frame(out)),
            None => Poll::Ready(Next::Closed),
        }
    }

    /// Waits for the next frame, or a flush ([`Inbox::poll_next`]).
    pub async fn next(&mut self) -> Next {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    /// The next frame, if one is waiting.
    pub fn try_recv(&mut self) -> Option<Out> {
        self.take();
        self.taken.pop_front()
    }

    /// Waits for the next frame; `None` once every [`Outbox`] is gone and the queue is empty.
    pub fn poll_recv(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<Out>> {
        loop {
            match std::task::ready!(self.poll_next(cx)) {
                Next::Frame(out) => return std::task::Poll::Ready(Some(out)),
                Next::Closed => return std::task::Poll::Ready(None),
                // Only after a direct write: whatever writes next finishes its pending bytes.
                Next::Flush => {}
            }
        }
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
        let mut items = self.q.lock();
        let rest = std::mem::take(&mut items.q);
        items.socket = None;
        items.idle = false;
        drop(items);
        drop(rest);
    }
}

impl Outbox {
    /// A connection's queue of `capacity` frames: the sending side (clone it for every game),
    /// the receiving side, and the kick both see.
    pub fn new(conn_id: u64, encoding: Encoding, capacity: usize) -> (Outbox, Inbox, KickHandle) {
        let q = Arc::new(Queue {
            items: Mutex::new(Items::default()),
            capacity: capacity.max(1),
            reader: AtomicWaker::new(),
            senders: AtomicUsize::new(1),
            reader_gone: AtomicBool::new(false),
            kick: Kick::default(),
            sink: None,
            wrote_directly: AtomicBool::new(false),
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
            items: Mutex::new(Items::default()),
            capacity: 1,
            reader: AtomicWaker::new(),
            senders: AtomicUsize::new(1),
            reader_gone: AtomicBool::new(false),
            kick: Kick::default(),
            sink: Some(sink),
            wrote_directly: AtomicBool::new(false),
        });
        Outbox {
            conn_id,
            encoding: Encoding::Proto,
            q,
        }
    }

    /// Sends a frame: straight to the socket when the connection's task waits with nothing
    /// queued, else into its queue; false when the connection is gone or was just kicked.
    pub fn send(&self, out: Out) -> bool {
        self.send_with(out, true)
    }

    /// Queues a frame for the connection's task to write, never writing it here (a board's
    /// fan-out beyond what its shard writes itself, so that other workers share the writing).
    pub fn send_queued(&self, out: Out) -> bool {
        self.send_with(out, false)
    }

    fn send_with(&self, out: Out, direct: bool) -> bool {
        if let Some(sink) = &self.q.sink {
            return sink(out);
        }
        if self.is_closed() {
            return false;
        }
        let mut items = self.q.lock();
        if items.corked {
            // Written (or the task woken) when the cork comes out.
            if items.q.len() >= self.q.capacity {
                drop(items);
                self.q.kick.kick(crate::error::close::TOO_SLOW);
                return false;
            }
            items.q.push_back(out);
            return true;
        }
        // The task waits with nothing queued: the frame goes to the socket now, without
        // waking the task (one system call instead of a wake-up, a poll and the call).
        if direct && items.idle && items.q.is_empty() {
            if let Some(socket) = &items.socket {
                let written = match &out {
                    Out::Shared(f) => socket.try_frame(f.ws_frame(self.encoding)),
                    Out::Own(m) => socket.try_frame(&own_frame(self.encoding, m)),
                };
                match written {
                    Direct::Written => {
                        self.q.wrote_directly.store(true, Ordering::Relaxed);
                        return true;
                    }
                    Direct::Partly => {
                        // The rest is the socket's to finish: the task flushes it first.
                        items.idle = false;
                        items.flush = true;
                        drop(items);
                        self.q.wrote_directly.store(true, Ordering::Relaxed);
                        self.q.reader.wake();
                        return true;
                    }
                    Direct::Refused => {}
                }
            }
        }
        if items.q.len() >= self.q.capacity {
            drop(items);
            self.q.kick.kick(crate::error::close::TOO_SLOW);
            return false;
        }
        items.idle = false;
        let was_empty = items.q.is_empty();
        items.q.push_back(out);
        drop(items);
        // The reader takes the whole queue at once, so only the first frame after a take
        // needs to wake it.
        if was_empty {
            self.q.reader.wake();
        }
        true
    }

    /// Holds this connection's frames until the returned [`Cork`] is dropped, then writes
    /// them together: a move's acknowledgement and its event leave in one system call.
    pub fn cork(&self) -> Cork<'_> {
        if self.q.sink.is_none() {
            self.q.lock().corked = true;
        }
        Cork(self)
    }

    fn uncork(&self) {
        if self.q.sink.is_some() {
            return;
        }
        let mut items = self.q.lock();
        if !std::mem::take(&mut items.corked) || items.q.is_empty() {
            return;
        }
        if items.idle {
            if let Some(socket) = &items.socket {
                // A move's answer and its event: a few hundred bytes, one allocation.
                let mut frames = Vec::with_capacity(CORKED_BYTES);
                for out in &items.q {
                    match out {
                        Out::Shared(f) => frames.extend_from_slice(f.ws_frame(self.encoding)),
                        Out::Own(m) => push_own_frame(&mut frames, self.encoding, m),
                    }
                }
                match socket.try_frame(&frames) {
                    Direct::Written => {
                        items.q.clear();
                        self.q.wrote_directly.store(true, Ordering::Relaxed);
                        return;
                    }
                    Direct::Partly => {
                        items.q.clear();
                        items.flush = true;
                        self.q.wrote_directly.store(true, Ordering::Relaxed);
                    }
                    Direct::Refused => {}
                }
            }
        }
        items.idle = false;
        drop(items);
        self.q.reader.wake();
    }

    pub fn send_msg(&self, msg: ServerMessage) -> bool {
        self.send(Out::Own(Box::new(msg)))
    }

    /// Closes the connection with `code` (its task writes what is queued first, then closes).
    pub fn kick(&self, code: u16) {
        self.q.kick.kick(code);
    }

    /// Whether this is a client of another node ([`Outbox::remote`]).
    pub fn is_remote(&self) -> bool {
        self.q.sink.is_some()
    }

    /// Whether both are the same connection's.
    pub fn same_connection(&self, other: &Outbox) -> bool {
        Arc::ptr_eq(&self.q, &other.q)
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

    /// A connection whose task waits (`poll_next` said Pending) over a real socket, and the
    /// client's end of it (plain std, so "nothing arrived" is what the kernel says).
    async fn direct_conn(enc: Encoding) -> (Outbox, Inbox, std::net::TcpStream) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (server, _) = l.accept().await.unwrap();
        let (ob, mut rx, _kick) = Outbox::new(1, enc, 64);
        rx.write_directly(crate::socket::SharedSocket::new(server));
        (ob, rx, client)
    }

    fn idle(rx: &mut Inbox) {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(rx.poll_next(&mut cx).is_pending());
    }

    fn read_exactly(client: &mut std::net::TcpStream, n: usize) -> Vec<u8> {
        use std::io::Read;
        client.set_nonblocking(false).unwrap();
        let mut got = vec![0u8; n];
        client.read_exact(&mut got).unwrap();
        got
    }

    fn nothing_arrived(client: &mut std::net::TcpStream) -> bool {
        use std::io::Read;
        client.set_nonblocking(true).unwrap();
        let mut b = [0u8; 1];
        matches!(client.read(&mut b), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
    }

    #[tokio::test]
    async fn a_frame_for_a_waiting_connection_is_written_to_its_socket_by_the_sender() {
        let (ob, mut rx, mut client) = direct_conn(Encoding::Proto).await;
        // The task has not waited yet (it is writing): the frame is queued.
        assert!(ob.send_msg(own(1)));
        assert_eq!(rx.try_recv().map(seq_of), Some(1));
        assert!(nothing_arrived(&mut client));
        // It waits: the next frames go straight to the socket, whole and in order.
        idle(&mut rx);
        let shared = Arc::new(SharedFrame::new(2, own(2)));
        assert!(ob.send(Out::Shared(shared.clone())));
        assert!(ob.send_msg(own(3)));
        assert!(rx.try_recv().is_none());
        let want = [
            &shared.ws_frame(Encoding::Proto)[..],
            &own_frame(Encoding::Proto, &own(3))[..],
        ]
        .concat();
        assert_eq!(read_exactly(&mut client, want.len()), want);
        assert!(rx.wrote_directly());
        assert!(!rx.wrote_directly());
        // Closing: frames are queued again, for the task to write before its close frame.
        rx.stop_direct();
        assert!(ob.send_msg(own(4)));
        assert_eq!(rx.try_recv().map(seq_of), Some(4));
    }

    #[tokio::test]
    async fn a_frame_sent_queued_waits_for_the_task_even_when_it_is_idle() {
        let (ob, mut rx, mut client) = direct_conn(Encoding::Proto).await;
        idle(&mut rx);
        assert!(ob.send_queued(Out::Own(Box::new(own(1)))));
        assert!(nothing_arrived(&mut client));
        assert_eq!(rx.try_recv().map(seq_of), Some(1));
    }

    #[tokio::test]
    async fn a_corked_connection_gets_its_frames_in_one_write_when_the_cork_comes_out() {
        let (ob, mut rx, mut client) = direct_conn(Encoding::Json).await;
        idle(&mut rx);
        let other = ob.clone();
        let cork = ob.cork();
        assert!(ob.send_msg(own(1)));
        assert!(other.send_msg(own(2)));
        assert!(nothing_arrived(&mut client));
        drop(cork);
        assert!(rx.try_recv().is_none());
        let want = [
            own_frame(Encoding::Json, &own(1)),
            own_frame(Encoding::Json, &own(2)),
        ]
        .concat();
        assert_eq!(read_exactly(&mut client, want.len()), want);
    }

    #[tokio::test]
    async fn a_corked_busy_connection_gets_its_frames_through_its_queue() {
        let (ob, mut rx, mut client) = direct_conn(Encoding::Proto).await;
        let cork = ob.cork();
        assert!(ob.send_msg(own(1)));
        drop(cork);
        assert!(nothing_arrived(&mut client));
        assert_eq!(rx.try_recv().map(seq_of), Some(1));
    }

    #[tokio::test]
    async fn what_a_full_socket_did_not_take_is_left_for_the_task_to_flush() {
        let (ob, mut rx, client) = direct_conn(Encoding::Proto).await;
        let big = ServerMessage {
            kind: Some(server_message::Kind::Welcome(chuhe_proto::v1::Welcome {
                display_name: "x".repeat(200_000),
                ..Default::default()
            })),
        };
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        // Until the socket is full, big frames go straight to it; the one it takes only in
        // part makes the task flush; after it, frames are queued behind the pending bytes.
        let mut sent = 0;
        loop {
            idle(&mut rx);
            assert!(ob.send_msg(big.clone()));
            sent += 1;
            match rx.poll_next(&mut cx) {
                std::task::Poll::Pending => continue,
                std::task::Poll::Ready(Next::Flush) => break,
                other => panic!("expected a flush, got {other:?}"),
            }
        }
        assert!(ob.send_msg(own(9)));
        assert_eq!(rx.try_recv().map(seq_of), Some(9));
        assert!(sent > 1);
        drop(client);
    }

    /// A frame's encodings are held once: each payload is a slice of its websocket frame.
    #[test]
    fn a_shared_frame_holds_each_encoding_once() {
        for f in [
            SharedFrame::new(1, own(7)),
            SharedFrame::with_proto(1, own(7), chuhe_proto::encode_proto(&own(7))),
        ] {
            let frame = f.ws_frame(Encoding::Proto).clone();
            let payload = f.proto_bytes();
            assert_eq!(&payload[..], &chuhe_proto::encode_proto(&own(7))[..]);
            assert_eq!(payload.as_ptr(), frame[2..].as_ptr());
            let Message::Text(text) = f.ws_message(Encoding::Json) else {
                panic!("expected text");
            };
            assert_eq!(text.as_str(), chuhe_proto::encode_json(&own(7)));
            assert_eq!(
                text.as_str().as_ptr(),
                f.ws_frame(Encoding::Json)[2..].as_ptr()
            );
        }
    }

    /// A frame made from its protobuf encoding alone reads as the frame made from its
    /// message: the same message, encodings and arbiter-channel flag.
    #[test]
    fn a_frame_from_its_protobuf_is_the_frame_from_its_message() {
        use chuhe_proto::v1::{ArbiterCalled, GameEvent, MovePlayed, MoveRecord, game_event::Kind};
        let event = |kind| ServerMessage {
            kind: Some(server_message::Kind::Event(GameEvent {
                game_id: "g7".into(),
                seq: 12,
                at_ms: 3_000,
                kind: Some(kind),
            })),
        };
        let a_move = event(Kind::Move(MovePlayed {
            r#move: Some(MoveRecord {
                iccs: "h2e2".into(),
                chinese: "炮二平五".into(),
                fen: "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR b".into(),
                ..Default::default()
            }),
            ..Default::default()
        }));
        let a_call = event(Kind::ArbiterCalled(ArbiterCalled {
            reason: "the clock".into(),
            ..Default::default()
        }));
        for (msg, private) in [(a_move, false), (a_call, true), (own(3), false)] {
            let given = SharedFrame::new(12, msg.clone());
            let frame = crate::socket::ws_frame(true, &chuhe_proto::encode_proto(&msg));
            let decoded = SharedFrame::from_proto_frame(12, frame, private);
            assert_eq!(given.is_private(), private);
            assert_eq!(decoded.is_private(), private);
            // JSON first: the message is decoded for it.
            assert_eq!(
                decoded.ws_frame(Encoding::Json),
                given.ws_frame(Encoding::Json)
            );
            assert_eq!(decoded.message(), &msg);
            assert_eq!(decoded.event(), given.event());
            assert_eq!(decoded.proto_bytes(), given.proto_bytes());
        }
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
