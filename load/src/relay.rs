//! The bare relay: the yardstick chuhe is measured against.
//!
//! It pairs player connections into games and forwards every data frame unchanged to the other
//! members of the game (opponent and spectators) and back to its sender — that copy stands in for
//! chuhe's move acknowledgement, so both servers write the same number of frames per move.
//! Nothing else: no rules, no clocks, no storage, no history.
//!
//! ## Handshake
//! A client opens `ws://HOST:PORT/relay/<game>/<role>` where `<role>` is `red`, `black` or
//! `spectator` and `<game>` is 1–64 characters of `[A-Za-z0-9_.-]`. Anything else is refused with
//! HTTP 400 before the upgrade. After the upgrade the relay sends one text frame
//! `{"t":"joined","role":"red","players":["red","black"]}` (the seats now filled). When a player
//! takes a seat, every other member of the game gets `{"t":"peer","role":"black"}`. A player who
//! connects to a seat that is already taken replaces the old connection (that is how a client
//! reconnects). These two text frames are the only frames the relay makes itself.
//!
//! ## Limits
//! Each connection has a bounded outgoing queue (`queue` frames). A member whose queue is full when
//! a frame arrives for it is removed from the game and its connection closed (it may reconnect):
//! the relay never buffers without bound, the same policy chuhe has for slow spectators.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures_util::{SinkExt, StreamExt};
use serde::Serialize;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::protocol::frame::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};

/// How the relay behaves; the defaults are what `chuhe-load relay` uses.
#[derive(Clone, Debug)]
pub struct RelayConfig {
    /// Frames queued per connection before the connection counts as too slow and is dropped.
    pub queue: usize,
    /// Largest accepted message, bytes.
    pub max_message: usize,
}

impl Default for RelayConfig {
    fn default() -> Self {
        Self {
            queue: 1024,
            max_message: 16 * 1024,
        }
    }
}

/// Counters the relay keeps; read them while it runs or after it stops.
#[derive(Debug, Default)]
pub struct RelayStats {
    pub connections: AtomicU64,
    pub open: AtomicU64,
    pub refused: AtomicU64,
    pub frames_in: AtomicU64,
    pub frames_out: AtomicU64,
    pub slow_dropped: AtomicU64,
}

/// A snapshot of [`RelayStats`].
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct RelayCounts {
    pub connections: u64,
    pub open: u64,
    pub refused: u64,
    pub frames_in: u64,
    pub frames_out: u64,
    pub slow_dropped: u64,
}

impl RelayStats {
    pub fn snapshot(&self) -> RelayCounts {
        RelayCounts {
            connections: self.connections.load(Ordering::Relaxed),
            open: self.open.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            frames_in: self.frames_in.load(Ordering::Relaxed),
            frames_out: self.frames_out.load(Ordering::Relaxed),
            slow_dropped: self.slow_dropped.load(Ordering::Relaxed),
        }
    }
}

/// Where a connection sits in its game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RelayRole {
    Red,
    Black,
    Spectator,
}

impl RelayRole {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Red => "red",
            Self::Black => "black",
            Self::Spectator => "spectator",
        }
    }
}

/// Why a handshake path was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PathError {
    #[error("path must be /relay/<game>/<red|black|spectator>")]
    Shape,
    #[error("game id must be 1-64 characters of A-Z a-z 0-9 _ . -")]
    GameId,
    #[error("role must be red, black or spectator")]
    Role,
}

/// Parses `/relay/<game>/<role>` (a query string is ignored).
pub fn parse_path(path: &str) -> Result<(String, RelayRole), PathError> {
    let path = path.split('?').next().unwrap_or_default();
    let mut parts = path.split('/');
    let (Some(""), Some("relay"), Some(game), Some(role), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return Err(PathError::Shape);
    };
    let valid_id = !game.is_empty()
        && game.len() <= 64
        && game
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if !valid_id {
        return Err(PathError::GameId);
    }
    let role = match role {
        "red" => RelayRole::Red,
        "black" => RelayRole::Black,
        "spectator" => RelayRole::Spectator,
        _ => return Err(PathError::Role),
    };
    Ok((game.to_owned(), role))
}

/// The relay's own frames (server to client only).
#[derive(Debug, Serialize, serde::Deserialize, PartialEq, Eq)]
#[serde(tag = "t", rename_all = "lowercase")]
pub enum Control {
    Joined { role: String, players: Vec<String> },
    Peer { role: String },
}

struct Member {
    id: u64,
    tx: mpsc::Sender<Message>,
}

#[derive(Default)]
struct Room {
    red: Option<Member>,
    black: Option<Member>,
    spectators: HashMap<u64, mpsc::Sender<Message>>,
}

impl Room {
    fn players(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.red.is_some() {
            v.push("red".to_owned());
        }
        if self.black.is_some() {
            v.push("black".to_owned());
        }
        v
    }

    fn is_empty(&self) -> bool {
        self.red.is_none() && self.black.is_none() && self.spectators.is_empty()
    }

    /// Queues `msg` for every member except `skip`; members whose queue is full are removed.
    /// Returns how many frames were queued.
    fn send_all(&mut self, msg: &Message, skip: Option<u64>, stats: &RelayStats) -> u64 {
        let mut sent = 0;
        for seat in [&mut self.red, &mut self.black] {
            if let Some(m) = seat
                && Some(m.id) != skip
            {
                match m.tx.try_send(msg.clone()) {
                    Ok(()) => sent += 1,
                    Err(mpsc::error::TrySendError::Full(_)) => {
                        stats.slow_dropped.fetch_add(1, Ordering::Relaxed);
                        *seat = None;
                    }
                    Err(mpsc::error::TrySendError::Closed(_)) => *seat = None,
                }
            }
        }
        self.spectators.retain(|id, tx| {
            if Some(*id) == skip {
                return true;
            }
            match tx.try_send(msg.clone()) {
                Ok(()) => {
                    sent += 1;
                    true
                }
                Err(mpsc::error::TrySendError::Full(_)) => {
                    stats.slow_dropped.fetch_add(1, Ordering::Relaxed);
                    false
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            }
        });
        sent
    }
}

type Rooms = Mutex<HashMap<String, Arc<Mutex<Room>>>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means another connection task panicked; the data is still consistent
    // (every critical section is a handful of map operations), so carry on.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct Shared {
    cfg: RelayConfig,
    rooms: Rooms,
    stats: Arc<RelayStats>,
    next_id: AtomicU64,
}

fn ws_config(max_message: usize) -> WebSocketConfig {
    // Small buffers: the relay measures the cost of a socket, not of tungstenite's 128 KiB default.
    WebSocketConfig::default()
        .read_buffer_size(4 * 1024)
        .write_buffer_size(0)
        .max_write_buffer_size(256 * 1024)
        .max_message_size(Some(max_message))
        .max_frame_size(Some(max_message))
}

/// Runs the relay on `listener` until `shutdown` resolves; then closes every connection with a
/// "going away" close frame (aborting, after 5 s, any stuck writing to a client that does not
/// read) and returns.
pub async fn serve(
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    cfg: RelayConfig,
    stats: Arc<RelayStats>,
) -> std::io::Result<()> {
    let shared = Arc::new(Shared {
        cfg,
        rooms: Mutex::new(HashMap::new()),
        stats,
        next_id: AtomicU64::new(1),
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => {
                match accepted {
                    Ok((stream, _peer)) => {
                        let shared = Arc::clone(&shared);
                        let stop = stop_rx.clone();
                        tasks.spawn(connection(stream, shared, stop));
                    }
                    // Out of file descriptors or a connection reset during accept: keep serving.
                    Err(e) => {
                        eprintln!("relay: accept failed: {e}");
                        tokio::task::yield_now().await;
                    }
                }
            }
            // Reap finished connection tasks so the set does not grow with the run's history.
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    let _ = stop_tx.send(true);
    // A connection stuck writing to a client that does not read cannot see the stop signal:
    // give the others a moment to say goodbye, then abort what is left.
    let drain = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(std::time::Duration::from_secs(5), drain)
        .await
        .is_err()
    {
        tasks.shutdown().await;
    }
    Ok(())
}

async fn connection(stream: TcpStream, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let stats = &shared.stats;
    let _ = stream.set_nodelay(true);
    let mut joined: Option<Result<(String, RelayRole), PathError>> = None;
    // The signature is tungstenite's handshake callback; its error type is not ours to shrink.
    #[allow(clippy::result_large_err)]
    let callback = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        let parsed = parse_path(req.uri().path());
        let refused = parsed.as_ref().err().map(ToString::to_string);
        joined = Some(parsed);
        match refused {
            None => Ok(resp),
            Some(reason) => {
                let mut err = ErrorResponse::new(Some(reason));
                *err.status_mut() = StatusCode::BAD_REQUEST;
                Err(err)
            }
        }
    };
    let ws = tokio_tungstenite::accept_hdr_async_with_config(
        stream,
        callback,
        Some(ws_config(shared.cfg.max_message)),
    )
    .await;
    let (mut ws, (game, role)) = match (ws, joined) {
        (Ok(ws), Some(Ok(j))) => (ws, j),
        _ => {
            stats.refused.fetch_add(1, Ordering::Relaxed);
            return;
        }
    };
    stats.connections.fetch_add(1, Ordering::Relaxed);
    stats.open.fetch_add(1, Ordering::Relaxed);

    let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
    let (tx, mut rx) = mpsc::channel::<Message>(shared.cfg.queue.max(1));
    let room = {
        let mut rooms = lock(&shared.rooms);
        Arc::clone(rooms.entry(game.clone()).or_default())
    };
    let hello = {
        let mut r = lock(&room);
        match role {
            RelayRole::Red => r.red = Some(Member { id, tx }),
            RelayRole::Black => r.black = Some(Member { id, tx }),
            RelayRole::Spectator => {
                r.spectators.insert(id, tx);
            }
        }
        if role != RelayRole::Spectator {
            let peer = Control::Peer {
                role: role.as_str().to_owned(),
            };
            if let Ok(text) = serde_json::to_string(&peer) {
                r.send_all(&Message::Text(Utf8Bytes::from(text)), Some(id), stats);
            }
        }
        Control::Joined {
            role: role.as_str().to_owned(),
            players: r.players(),
        }
    };
    let mut ok = match serde_json::to_string(&hello) {
        Ok(text) => ws.send(Message::Text(Utf8Bytes::from(text))).await.is_ok(),
        Err(_) => false,
    };

    while ok {
        tokio::select! {
            out = rx.recv() => match out {
                Some(msg) => {
                    // Batch whatever is queued into one flush.
                    let mut n = 1;
                    ok = ws.feed(msg).await.is_ok();
                    while ok && n < 64 {
                        match rx.try_recv() {
                            Ok(m) => { ok = ws.feed(m).await.is_ok(); n += 1; }
                            Err(_) => break,
                        }
                    }
                    ok = ok && ws.flush().await.is_ok();
                    stats.frames_out.fetch_add(n, Ordering::Relaxed);
                }
                // Removed from the room: replaced by a reconnect, or too slow.
                None => {
                    let _ = ws.close(Some(CloseFrame {
                        code: CloseCode::Policy,
                        reason: Utf8Bytes::from_static("replaced or too slow"),
                    })).await;
                    break;
                }
            },
            frame = ws.next() => match frame {
                Some(Ok(msg @ (Message::Binary(_) | Message::Text(_)))) => {
                    stats.frames_in.fetch_add(1, Ordering::Relaxed);
                    lock(&room).send_all(&msg, None, stats);
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
                Some(Ok(Message::Close(_)) | Err(_)) | None => break,
            },
            _ = stop.changed() => {
                let _ = ws.close(Some(CloseFrame {
                    code: CloseCode::Away,
                    reason: Utf8Bytes::from_static("relay shutting down"),
                })).await;
                break;
            }
        }
    }

    // Leave the room (unless a reconnect already took the seat) and forget empty rooms.
    {
        let mut rooms = lock(&shared.rooms);
        let mut r = lock(&room);
        match role {
            RelayRole::Red if r.red.as_ref().is_some_and(|m| m.id == id) => r.red = None,
            RelayRole::Black if r.black.as_ref().is_some_and(|m| m.id == id) => r.black = None,
            RelayRole::Spectator => {
                r.spectators.remove(&id);
            }
            _ => {}
        }
        if r.is_empty() {
            drop(r);
            if rooms.get(&game).is_some_and(|x| Arc::ptr_eq(x, &room)) {
                rooms.remove(&game);
            }
        }
    }
    stats.open.fetch_sub(1, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(
            parse_path("/relay/g-1.x_2/red"),
            Ok(("g-1.x_2".to_owned(), RelayRole::Red))
        );
        assert_eq!(
            parse_path("/relay/g/spectator?since=3"),
            Ok(("g".to_owned(), RelayRole::Spectator))
        );
        assert_eq!(parse_path("/relay/g/black/"), Err(PathError::Shape));
        assert_eq!(parse_path("/ws"), Err(PathError::Shape));
        assert_eq!(parse_path("/relay//red"), Err(PathError::GameId));
        assert_eq!(parse_path("/relay/a b/red"), Err(PathError::GameId));
        assert_eq!(
            parse_path(&format!("/relay/{}/red", "x".repeat(65))),
            Err(PathError::GameId)
        );
        assert_eq!(parse_path("/relay/g/arbiter"), Err(PathError::Role));
    }

    #[test]
    fn control_frames_are_stable_json() -> Result<(), serde_json::Error> {
        let j = Control::Joined {
            role: "red".into(),
            players: vec!["red".into()],
        };
        assert_eq!(
            serde_json::to_string(&j)?,
            r#"{"t":"joined","role":"red","players":["red"]}"#
        );
        let p = Control::Peer {
            role: "black".into(),
        };
        assert_eq!(serde_json::to_string(&p)?, r#"{"t":"peer","role":"black"}"#);
        Ok(())
    }
}
