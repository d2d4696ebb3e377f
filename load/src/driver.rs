//! The framing layer: the only part of a simulated client that knows which server it talks to.
//!
//! Scenarios and simulated clients speak in [`Event`]s and moves; a [`Protocol`] turns them into
//! websocket frames for one target (the bare relay here, chuhe's protocol in [`crate::chuhe`]).

use std::sync::Arc;

use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::client::Request;
use tokio_tungstenite::tungstenite::{Bytes, Message};

use crate::relay::Control;

/// Which side a player is on. Red moves first (odd plies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seat {
    Red,
    Black,
}

impl Seat {
    /// Does this side play ply `ply` (1-based)?
    pub fn plays(self, ply: u32) -> bool {
        (ply % 2 == 1) == (self == Seat::Red)
    }
}

/// What a simulated client is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Player(Seat),
    Spectator,
}

/// One game as the load generator knows it: how to reach it and what will be played.
#[derive(Debug)]
pub struct GameSpec {
    /// Position of the game in this run (0-based).
    pub index: usize,
    /// The id the target knows the game by.
    pub id: String,
    /// Bearer tokens, where the target needs them (chuhe); empty for the relay.
    pub red_token: String,
    pub black_token: String,
    pub spectator_token: String,
    /// The moves both players will play, in the target's notation.
    pub moves: Arc<[String]>,
}

/// A client's identity for one connection.
#[derive(Clone, Debug)]
pub struct Participant {
    pub game: Arc<GameSpec>,
    pub role: Role,
    /// On a reconnect: the last sequence number this client saw.
    pub resume_after: Option<u64>,
    /// Connections this client gave up as lost (dead, closed, redirected): each moves it one
    /// node on from where it started (several nodes).
    pub node_shift: usize,
}

/// What a client learns from the server, whichever server it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The connection is in the game. `plies` is how many moves the server says were already
    /// played (a snapshot), `seq` the stream position the snapshot is at, `head` the last
    /// sequence number of the game when the join was answered (what a resumed stream will have
    /// replayed up to), each when the server says.
    Joined {
        plies: Option<u32>,
        seq: Option<u64>,
        head: Option<u64>,
    },
    /// A player took a seat (the relay says so; chuhe may say nothing).
    PeerJoined,
    /// The server accepted (and, for chuhe, durably committed) this client's move `ply`. `seq` is
    /// set when the acknowledgement is itself the move's place in the event stream (the relay);
    /// chuhe sends the move's event separately.
    Ack { ply: u32, seq: Option<u64> },
    /// A move of the game as broadcast (to the opponent, spectators, and on chuhe the mover too).
    Move { seq: u64, ply: u32 },
    /// Another sequenced event that is not a move (clock, draw offer, ...).
    Sequenced { seq: u64 },
    /// The game is over.
    Ended { seq: Option<u64> },
    /// The server refused something; `code` is its stable machine code.
    Error { code: String },
    /// A frame the client does not need.
    Ignored,
}

/// Why a frame could not be understood or a request built.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error("bad url: {0}")]
    Url(String),
    #[error("undecodable frame: {0}")]
    Decode(String),
}

/// The framing layer of one target.
pub trait Protocol: Send + Sync + 'static {
    /// `relay` or `chuhe`.
    fn name(&self) -> &'static str;
    /// The websocket upgrade request (URL, subprotocol, auth) for `who`.
    fn request(&self, who: &Participant) -> Result<Request, DriverError>;
    /// Frames to send right after the upgrade (join, subscribe, resume).
    fn hello(&self, who: &Participant) -> Vec<Message>;
    /// The frame that plays ply `ply` (1-based).
    fn encode_move(&self, who: &Participant, ply: u32, mv: &str) -> Message;
    /// The frame that resigns, if the target has games that must be ended.
    fn encode_resign(&self, who: &Participant, ply: u32) -> Option<Message>;
    /// Events in a frame from the server (appended to `out`).
    fn decode(
        &self,
        who: &Participant,
        msg: Message,
        out: &mut Vec<Event>,
    ) -> Result<(), DriverError>;
}

/// The relay's framing: the relay's own JSON text frames, and for moves a binary frame the relay
/// forwards unchanged: `0x01`, the ply as a big-endian `u32`, then the move text. `0x02` + ply is a
/// resignation.
pub struct RelayProtocol {
    base: String,
}

const RELAY_MOVE: u8 = 1;
const RELAY_RESIGN: u8 = 2;

impl RelayProtocol {
    /// `base` is `ws://HOST:PORT` (a trailing `/` is allowed).
    pub fn new(base: &str) -> Self {
        Self {
            base: base.trim_end_matches('/').to_owned(),
        }
    }
}

fn frame(kind: u8, ply: u32, rest: &[u8]) -> Message {
    let mut v = Vec::with_capacity(5 + rest.len());
    v.push(kind);
    v.extend_from_slice(&ply.to_be_bytes());
    v.extend_from_slice(rest);
    Message::Binary(Bytes::from(v))
}

impl Protocol for RelayProtocol {
    fn name(&self) -> &'static str {
        "relay"
    }

    fn request(&self, who: &Participant) -> Result<Request, DriverError> {
        let role = match who.role {
            Role::Player(Seat::Red) => "red",
            Role::Player(Seat::Black) => "black",
            Role::Spectator => "spectator",
        };
        format!("{}/relay/{}/{}", self.base, who.game.id, role)
            .into_client_request()
            .map_err(|e| DriverError::Url(e.to_string()))
    }

    fn hello(&self, _who: &Participant) -> Vec<Message> {
        Vec::new()
    }

    fn encode_move(&self, _who: &Participant, ply: u32, mv: &str) -> Message {
        frame(RELAY_MOVE, ply, mv.as_bytes())
    }

    fn encode_resign(&self, _who: &Participant, ply: u32) -> Option<Message> {
        Some(frame(RELAY_RESIGN, ply, &[]))
    }

    fn decode(
        &self,
        who: &Participant,
        msg: Message,
        out: &mut Vec<Event>,
    ) -> Result<(), DriverError> {
        match msg {
            Message::Text(text) => {
                let control: Control = serde_json::from_str(text.as_str())
                    .map_err(|e| DriverError::Decode(e.to_string()))?;
                out.push(match control {
                    Control::Joined { .. } => Event::Joined {
                        plies: None,
                        seq: None,
                        head: None,
                    },
                    Control::Peer { .. } => Event::PeerJoined,
                });
            }
            Message::Binary(b) => {
                let (kind, ply) = match (b.first(), b.get(1..5)) {
                    (Some(&k), Some(p)) => {
                        let mut a = [0u8; 4];
                        a.copy_from_slice(p);
                        (k, u32::from_be_bytes(a))
                    }
                    _ => return Err(DriverError::Decode(format!("{} byte frame", b.len()))),
                };
                out.push(match kind {
                    // The relay's echo of our own move is its acknowledgement.
                    RELAY_MOVE if matches!(who.role, Role::Player(s) if s.plays(ply)) => {
                        Event::Ack {
                            ply,
                            seq: Some(u64::from(ply)),
                        }
                    }
                    RELAY_MOVE => Event::Move {
                        seq: u64::from(ply),
                        ply,
                    },
                    RELAY_RESIGN => Event::Ended { seq: None },
                    k => return Err(DriverError::Decode(format!("frame kind {k}"))),
                });
            }
            Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => out.push(Event::Ignored),
            Message::Close(_) => out.push(Event::Ignored),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(role: Role) -> Participant {
        Participant {
            game: Arc::new(GameSpec {
                index: 0,
                id: "g7".into(),
                red_token: String::new(),
                black_token: String::new(),
                spectator_token: String::new(),
                moves: Arc::from(vec!["h2e2".to_owned()]),
            }),
            role,
            resume_after: None,
            node_shift: 0,
        }
    }

    #[test]
    fn seat_parity() {
        assert!(Seat::Red.plays(1));
        assert!(!Seat::Red.plays(2));
        assert!(Seat::Black.plays(2));
        assert!(!Seat::Black.plays(3));
    }

    #[test]
    fn relay_move_round_trip() -> Result<(), DriverError> {
        let p = RelayProtocol::new("ws://127.0.0.1:1/");
        let w = who(Role::Player(Seat::Black));
        assert_eq!(
            p.request(&w)?.uri().to_string(),
            "ws://127.0.0.1:1/relay/g7/black"
        );
        let mut out = Vec::new();
        p.decode(&w, p.encode_move(&w, 300, "h2e2"), &mut out)?;
        p.decode(&w, p.encode_move(&w, 301, "h2e2"), &mut out)?;
        if let Some(m) = p.encode_resign(&w, 301) {
            p.decode(&w, m, &mut out)?;
        }
        p.decode(
            &w,
            Message::text(r#"{"t":"joined","role":"red","players":[]}"#),
            &mut out,
        )?;
        p.decode(&w, Message::text(r#"{"t":"peer","role":"red"}"#), &mut out)?;
        assert_eq!(
            out,
            vec![
                Event::Ack {
                    ply: 300,
                    seq: Some(300)
                },
                Event::Move { seq: 301, ply: 301 },
                Event::Ended { seq: None },
                Event::Joined {
                    plies: None,
                    seq: None,
                    head: None
                },
                Event::PeerJoined,
            ]
        );
        Ok(())
    }

    #[test]
    fn relay_rejects_garbage() {
        let p = RelayProtocol::new("ws://127.0.0.1:1");
        let w = who(Role::Spectator);
        let mut out = Vec::new();
        assert!(
            p.decode(&w, Message::Binary(Bytes::from_static(&[1, 0])), &mut out)
                .is_err()
        );
        assert!(
            p.decode(
                &w,
                Message::Binary(Bytes::from_static(&[9, 0, 0, 0, 1])),
                &mut out
            )
            .is_err()
        );
        assert!(p.decode(&w, Message::text("{"), &mut out).is_err());
        assert!(out.is_empty());
    }
}
