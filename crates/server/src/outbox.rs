//! Per-connection bounded write queues and frames encoded once per encoding.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, OnceLock};

use axum::body::Bytes;
use axum::extract::ws::{Message, Utf8Bytes};
use chuhe_proto::Encoding;
use chuhe_proto::v1::{GameEvent, ServerMessage, server_message};
use tokio::sync::{Notify, mpsc};

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

/// The sending side of a connection's bounded write queue. Sends never wait:
/// a full queue kicks the connection (close code 4008) — the server never
/// buffers without bound for a slow reader, which can reconnect with the last
/// seq it saw.
#[derive(Debug, Clone)]
pub struct Outbox {
    pub conn_id: u64,
    pub encoding: Encoding,
    tx: mpsc::Sender<Out>,
    kick: Arc<Kick>,
}

impl Outbox {
    pub fn new(
        conn_id: u64,
        encoding: Encoding,
        capacity: usize,
    ) -> (Outbox, mpsc::Receiver<Out>, Arc<Kick>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let kick = Arc::new(Kick::default());
        (
            Outbox {
                conn_id,
                encoding,
                tx,
                kick: kick.clone(),
            },
            rx,
            kick,
        )
    }

    /// Queues a frame; false when the connection is gone or was just kicked.
    pub fn send(&self, out: Out) -> bool {
        if self.kick.code().is_some() {
            return false;
        }
        match self.tx.try_send(out) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.kick.kick(crate::error::close::TOO_SLOW);
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    pub fn send_msg(&self, msg: ServerMessage) -> bool {
        self.send(Out::Own(Box::new(msg)))
    }

    pub fn is_closed(&self) -> bool {
        self.tx.is_closed() || self.kick.code().is_some()
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
