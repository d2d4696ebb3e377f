//! chuhe's framing layer (`chuhe.v1` over `/ws`, either encoding) and the organizer HTTP API the
//! load generator uses to create players, tokens and games before a run.
//!
//! Mapping to [`Event`]s:
//! - `Reply` to our `Subscribe` → `Joined`; `GameSnapshot` → `Joined` with the plies played
//!   (and `Ended` if the game is over).
//! - `Reply` to a `MakeMove` (whose `requestId` is the ply) → `Ack` (sent after the commit).
//! - `GameEvent` `move` → `Move`; `ended` → `Ended`; any other event → `Sequenced`.
//! - `Error` → `Error` with its code; `Goodbye` → `Error` with `goodbye:<code>`.
//! - `Heartbeat` (the liveness rule's beat) → `Ignored`: any frame keeps a connection alive.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

use chuhe_proto::v1::{
    self as w, ClientMessage, ServerMessage, client_message, game_event, server_message,
};
use chuhe_proto::{Encoding, decode_json, decode_proto, encode_json, encode_proto};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::client::Request;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{self, Message};

use crate::driver::{DriverError, Event, Participant, Protocol, Role, Seat};

/// `requestId` of our `Subscribe`; moves use their ply (far below this) as their id.
pub const SUBSCRIBE_REQUEST: u32 = 0x4000_0000;
/// `requestId` of our `Resign`.
pub const RESIGN_REQUEST: u32 = 0x4000_0001;

/// chuhe's protocol in one encoding, to one node or spread over several.
pub struct ChuheProtocol {
    urls: Vec<String>,
    encoding: Encoding,
    /// Spectator connections (and reconnections) so far: the next goes to the next node.
    spectators: AtomicUsize,
}

impl ChuheProtocol {
    /// `url` is the websocket endpoint, e.g. `ws://127.0.0.1:8080/ws`.
    pub fn new(url: &str, encoding: Encoding) -> Self {
        Self::nodes(&[url.to_owned()], encoding)
    }

    /// Several nodes of one cluster (their websocket endpoints), spread over as
    /// [`node_for`] says. An empty list is one node at an empty URL (every request fails).
    pub fn nodes(urls: &[String], encoding: Encoding) -> Self {
        Self {
            urls: if urls.is_empty() {
                vec![String::new()]
            } else {
                urls.to_vec()
            },
            encoding,
            spectators: AtomicUsize::new(0),
        }
    }

    fn encode(&self, m: &ClientMessage) -> Message {
        match self.encoding {
            Encoding::Proto => Message::Binary(encode_proto(m).into()),
            Encoding::Json => Message::text(encode_json(m)),
        }
    }
}

/// Which of `nodes` nodes a client connects to: game `game`'s red player to node `game mod
/// nodes` (the games spread over the nodes), its black player to the next node (so one player's commands cross nodes whenever there are several),
/// spectators round-robin by their connection number `spectator` (the spectators of one board
/// spread evenly over every node; a reconnection may land on another node than before).
pub fn node_for(role: Role, game: usize, spectator: usize, nodes: usize) -> usize {
    let nodes = nodes.max(1);
    match role {
        Role::Player(Seat::Red) => game % nodes,
        Role::Player(Seat::Black) => (game + 1) % nodes,
        Role::Spectator => spectator % nodes,
    }
}

fn token(who: &Participant) -> &str {
    match who.role {
        Role::Player(Seat::Red) => &who.game.red_token,
        Role::Player(Seat::Black) => &who.game.black_token,
        Role::Spectator => &who.game.spectator_token,
    }
}

impl Protocol for ChuheProtocol {
    fn name(&self) -> &'static str {
        "chuhe"
    }

    fn request(&self, who: &Participant) -> Result<Request, DriverError> {
        let spectator = match who.role {
            Role::Spectator => self.spectators.fetch_add(1, Ordering::Relaxed),
            Role::Player(_) => 0,
        };
        let n = self.urls.len();
        let url =
            &self.urls[(node_for(who.role, who.game.index, spectator, n) + who.node_shift) % n];
        let mut req = url
            .as_str()
            .into_client_request()
            .map_err(|e| DriverError::Url(e.to_string()))?;
        let h = req.headers_mut();
        h.insert(
            "sec-websocket-protocol",
            HeaderValue::from_static(self.encoding.subprotocol()),
        );
        let t = token(who);
        if !t.is_empty() {
            let v = HeaderValue::from_str(&format!("Bearer {t}"))
                .map_err(|e| DriverError::Url(e.to_string()))?;
            h.insert("authorization", v);
        }
        Ok(req)
    }

    fn hello(&self, who: &Participant) -> Vec<Message> {
        vec![self.encode(&ClientMessage {
            request_id: SUBSCRIBE_REQUEST,
            kind: Some(client_message::Kind::Subscribe(w::Subscribe {
                game_id: who.game.id.clone(),
                last_seq: who.resume_after.unwrap_or(0),
            })),
        })]
    }

    fn encode_move(&self, who: &Participant, ply: u32, mv: &str) -> Message {
        self.encode(&ClientMessage {
            request_id: ply,
            kind: Some(client_message::Kind::Move(w::MakeMove {
                game_id: who.game.id.clone(),
                ply,
                r#move: mv.to_owned(),
                // No think time given: the server's own ping estimate compensates lag.
                ..Default::default()
            })),
        })
    }

    fn encode_resign(&self, who: &Participant, _ply: u32) -> Option<Message> {
        Some(self.encode(&ClientMessage {
            request_id: RESIGN_REQUEST,
            kind: Some(client_message::Kind::Resign(w::Resign {
                game_id: who.game.id.clone(),
            })),
        }))
    }

    fn decode(
        &self,
        _who: &Participant,
        msg: Message,
        out: &mut Vec<Event>,
    ) -> Result<(), DriverError> {
        let sm: ServerMessage = match msg {
            Message::Binary(b) => {
                decode_proto(&b).map_err(|e| DriverError::Decode(e.to_string()))?
            }
            Message::Text(t) => {
                decode_json(t.as_str()).map_err(|e| DriverError::Decode(e.to_string()))?
            }
            _ => {
                out.push(Event::Ignored);
                return Ok(());
            }
        };
        let event = match sm.kind {
            Some(server_message::Kind::Reply(r)) => match r.request_id {
                SUBSCRIBE_REQUEST => Event::Joined {
                    plies: None,
                    seq: None,
                    head: Some(r.seq),
                },
                RESIGN_REQUEST => Event::Ignored,
                ply if ply > 0 && ply < SUBSCRIBE_REQUEST => Event::Ack { ply, seq: None },
                _ => Event::Ignored,
            },
            Some(server_message::Kind::Error(e)) => Event::Error { code: e.code },
            Some(server_message::Kind::Event(ev)) => match ev.kind {
                Some(game_event::Kind::Move(m)) => Event::Move {
                    seq: ev.seq,
                    ply: m.r#move.map_or(0, |r| r.ply),
                },
                Some(game_event::Kind::Ended(_)) => Event::Ended { seq: Some(ev.seq) },
                _ => Event::Sequenced { seq: ev.seq },
            },
            Some(server_message::Kind::Snapshot(s)) => {
                out.push(Event::Joined {
                    plies: Some(u32::try_from(s.moves.len()).unwrap_or(u32::MAX)),
                    seq: Some(s.seq),
                    head: None,
                });
                if s.finished {
                    Event::Ended { seq: None }
                } else {
                    return Ok(());
                }
            }
            Some(server_message::Kind::Goodbye(g)) => Event::Error {
                code: format!("goodbye:{}", g.code),
            },
            Some(
                server_message::Kind::Welcome(_)
                | server_message::Kind::GameList(_)
                | server_message::Kind::Pong(_)
                | server_message::Kind::League(_)
                | server_message::Kind::Desk(_)
                | server_message::Kind::Presence(_)
                | server_message::Kind::Heartbeat(_)
                | server_message::Kind::LeagueMessage(_),
            )
            | None => Event::Ignored,
        };
        out.push(event);
        Ok(())
    }
}

/// Why the organizer API failed.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("cannot reach the organizer API at {addr}: {reason}")]
    Connect { addr: SocketAddr, reason: String },
    #[error("{path}: HTTP {status} {code}: {message}")]
    Status {
        path: String,
        status: u16,
        code: String,
        message: String,
    },
    #[error("{path}: unexpected answer: {reason}")]
    Body { path: String, reason: String },
}

/// A keep-alive HTTP/1.1 connection to chuhe's organizer API.
pub struct Organizer {
    addr: SocketAddr,
    token: String,
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
}

impl Organizer {
    /// Connects to `addr` (loopback) with an organizer bearer token.
    pub async fn connect(addr: SocketAddr, token: &str) -> Result<Self, ApiError> {
        let err = |e: &dyn std::fmt::Display| ApiError::Connect {
            addr,
            reason: e.to_string(),
        };
        let stream = TcpStream::connect(addr).await.map_err(|e| err(&e))?;
        let _ = stream.set_nodelay(true);
        let (sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| err(&e))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Self {
            addr,
            token: token.to_owned(),
            sender,
        })
    }

    async fn post<Req: serde::Serialize, Resp: serde::de::DeserializeOwned>(
        &mut self,
        path: &str,
        body: &Req,
    ) -> Result<Resp, ApiError> {
        self.call("POST", path, Some(body)).await
    }

    /// One request with the organizer's token: a JSON body (none for a GET), a JSON answer.
    pub async fn call<Req: serde::Serialize, Resp: serde::de::DeserializeOwned>(
        &mut self,
        method: &str,
        path: &str,
        body: Option<&Req>,
    ) -> Result<Resp, ApiError> {
        let bad = |reason: String| ApiError::Body {
            path: path.to_owned(),
            reason,
        };
        let body = body.map(encode_json).unwrap_or_default();
        let req = tungstenite::http::Request::builder()
            .method(method)
            .uri(path)
            .header("host", self.addr.to_string())
            .header("authorization", format!("Bearer {}", self.token))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| bad(e.to_string()))?;
        self.sender
            .ready()
            .await
            .map_err(|e| bad(format!("connection lost: {e}")))?;
        let resp = self
            .sender
            .send_request(req)
            .await
            .map_err(|e| bad(e.to_string()))?;
        let status = resp.status();
        let bytes = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| bad(e.to_string()))?
            .to_bytes();
        let text = String::from_utf8_lossy(&bytes);
        if !status.is_success() {
            let e: w::ApiError = decode_json(&text).unwrap_or(w::ApiError {
                code: "unknown".into(),
                message: text.chars().take(200).collect(),
            });
            return Err(ApiError::Status {
                path: path.to_owned(),
                status: status.as_u16(),
                code: e.code,
                message: e.message,
            });
        }
        decode_json(&text).map_err(|e| bad(e.to_string()))
    }

    /// Creates a player named `name` and issues a bearer token for it; returns (player id,
    /// token). The server chooses the id.
    pub async fn player_with_token(&mut self, name: &str) -> Result<(String, String), ApiError> {
        let p: w::Player = self
            .post(
                "/api/v1/players",
                &w::CreatePlayerRequest {
                    id: String::new(),
                    display_name: name.to_owned(),
                    role: w::Role::Player as i32,
                },
            )
            .await?;
        if p.id.is_empty() {
            return Err(ApiError::Body {
                path: "/api/v1/players".into(),
                reason: "no player id in the answer".into(),
            });
        }
        let t: w::IssueTokenResponse = self
            .post(
                "/api/v1/tokens",
                &w::IssueTokenRequest {
                    player_id: p.id.clone(),
                    label: "chuhe-load".into(),
                },
            )
            .await?;
        Ok((p.id, t.token))
    }

    /// Creates a game between two players; returns its id.
    pub async fn game(
        &mut self,
        red: &str,
        black: &str,
        time_control: &str,
        event: &str,
        board: usize,
    ) -> Result<String, ApiError> {
        let r: w::CreateGameResponse = self
            .post(
                "/api/v1/games",
                &w::CreateGameRequest {
                    red_id: red.to_owned(),
                    black_id: black.to_owned(),
                    time_control: time_control.to_owned(),
                    event: event.to_owned(),
                    board: board.to_string(),
                    ..Default::default()
                },
            )
            .await?;
        r.info
            .map(|i| i.game_id)
            .filter(|id| !id.is_empty())
            .ok_or_else(|| ApiError::Body {
                path: "/api/v1/games".into(),
                reason: "no game id in the answer".into(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::GameSpec;
    use std::sync::Arc;

    #[test]
    fn nodes_are_spread_over() {
        // One node: everyone on it.
        for role in [
            Role::Player(Seat::Red),
            Role::Player(Seat::Black),
            Role::Spectator,
        ] {
            assert_eq!(node_for(role, 7, 5, 1), 0);
            assert_eq!(node_for(role, 7, 5, 0), 0);
        }
        // Three: games spread, each game's players on two different nodes.
        let reds: Vec<usize> = (0..6)
            .map(|g| node_for(Role::Player(Seat::Red), g, 0, 3))
            .collect();
        assert_eq!(reds, [0, 1, 2, 0, 1, 2]);
        for g in 0..6 {
            assert_ne!(
                node_for(Role::Player(Seat::Red), g, 0, 3),
                node_for(Role::Player(Seat::Black), g, 0, 3)
            );
        }
        // The spectators of one board: evenly over the three.
        let mut per = [0; 3];
        for n in 0..300 {
            per[node_for(Role::Spectator, 4, n, 3)] += 1;
        }
        assert_eq!(per, [100, 100, 100]);
    }

    #[test]
    fn spectators_connect_to_the_nodes_in_turn() {
        let urls: Vec<String> = (1..=3).map(|p| format!("ws://127.0.0.1:{p}/ws")).collect();
        let p = ChuheProtocol::nodes(&urls, Encoding::Json);
        let ports: Vec<Option<u16>> = (0..4)
            .map(|_| {
                p.request(&who(Role::Spectator))
                    .ok()
                    .and_then(|r| r.uri().port_u16())
            })
            .collect();
        assert_eq!(ports, [Some(1), Some(2), Some(3), Some(1)]);
        let red = p.request(&who(Role::Player(Seat::Red))).ok();
        let black = p.request(&who(Role::Player(Seat::Black))).ok();
        assert_eq!(red.and_then(|r| r.uri().port_u16()), Some(1));
        assert_eq!(black.and_then(|r| r.uri().port_u16()), Some(2));
    }

    fn who(role: Role) -> Participant {
        Participant {
            game: Arc::new(GameSpec {
                index: 0,
                id: "42".into(),
                red_token: "tr".into(),
                black_token: "tb".into(),
                spectator_token: String::new(),
                moves: Arc::from(vec!["h2e2".to_owned()]),
            }),
            role,
            resume_after: Some(7),
            node_shift: 0,
        }
    }

    fn server(kind: server_message::Kind, enc: Encoding) -> Message {
        let m = ServerMessage { kind: Some(kind) };
        match enc {
            Encoding::Proto => Message::Binary(encode_proto(&m).into()),
            Encoding::Json => Message::text(encode_json(&m)),
        }
    }

    fn client(m: Message) -> Result<ClientMessage, Box<dyn std::error::Error>> {
        Ok(match m {
            Message::Binary(b) => decode_proto(&b)?,
            Message::Text(t) => decode_json(t.as_str())?,
            other => return Err(format!("{other:?}").into()),
        })
    }

    #[test]
    fn requests_carry_subprotocol_and_token() -> Result<(), Box<dyn std::error::Error>> {
        let p = ChuheProtocol::new("ws://127.0.0.1:8080/ws", Encoding::Json);
        let r = p.request(&who(Role::Player(Seat::Black)))?;
        assert_eq!(r.uri().path(), "/ws");
        assert_eq!(r.headers()["sec-websocket-protocol"], "chuhe.v1.json");
        assert_eq!(r.headers()["authorization"], "Bearer tb");
        let s = p.request(&who(Role::Spectator))?;
        assert!(s.headers().get("authorization").is_none());
        Ok(())
    }

    #[test]
    fn client_frames_in_both_encodings() -> Result<(), Box<dyn std::error::Error>> {
        for enc in [Encoding::Proto, Encoding::Json] {
            let p = ChuheProtocol::new("ws://127.0.0.1:1/ws", enc);
            let w = who(Role::Player(Seat::Red));
            let hello = p.hello(&w);
            assert_eq!(hello.len(), 1);
            let sub = client(hello.into_iter().next().ok_or("no hello")?)?;
            assert_eq!(sub.request_id, SUBSCRIBE_REQUEST);
            assert!(matches!(
                sub.kind,
                Some(client_message::Kind::Subscribe(ref s)) if s.game_id == "42" && s.last_seq == 7
            ));
            let mv = client(p.encode_move(&w, 3, "b0c2"))?;
            assert_eq!(mv.request_id, 3);
            assert!(matches!(
                mv.kind,
                Some(client_message::Kind::Move(ref m)) if m.ply == 3 && m.r#move == "b0c2"
            ));
            let rs = client(p.encode_resign(&w, 9).ok_or("no resign")?)?;
            assert!(matches!(rs.kind, Some(client_message::Kind::Resign(_))));
        }
        Ok(())
    }

    #[test]
    fn server_frames_in_both_encodings() -> Result<(), DriverError> {
        for enc in [Encoding::Proto, Encoding::Json] {
            let p = ChuheProtocol::new("ws://127.0.0.1:1/ws", enc);
            let w = who(Role::Player(Seat::Red));
            let mut out = Vec::new();
            let reply = |id| {
                server_message::Kind::Reply(w::Reply {
                    request_id: id,
                    game_id: "42".into(),
                    seq: 5,
                })
            };
            p.decode(&w, server(reply(SUBSCRIBE_REQUEST), enc), &mut out)?;
            p.decode(&w, server(reply(3), enc), &mut out)?;
            p.decode(&w, server(reply(RESIGN_REQUEST), enc), &mut out)?;
            let event = |seq, kind| {
                server_message::Kind::Event(w::GameEvent {
                    game_id: "42".into(),
                    seq,
                    at_ms: 1,
                    kind: Some(kind),
                })
            };
            let played = game_event::Kind::Move(w::MovePlayed {
                r#move: Some(w::MoveRecord {
                    ply: 4,
                    iccs: "h9g7".into(),
                    ..Default::default()
                }),
                ..Default::default()
            });
            p.decode(&w, server(event(6, played), enc), &mut out)?;
            let offered = game_event::Kind::DrawOffered(w::DrawOffered { side: 1 });
            p.decode(&w, server(event(7, offered), enc), &mut out)?;
            let ended = game_event::Kind::Ended(w::GameEnded::default());
            p.decode(&w, server(event(8, ended), enc), &mut out)?;
            let snap = server_message::Kind::Snapshot(w::GameSnapshot {
                seq: 9,
                moves: vec![w::MoveRecord::default(); 2],
                ..Default::default()
            });
            p.decode(&w, server(snap, enc), &mut out)?;
            let err = server_message::Kind::Error(w::Error {
                code: "illegal_move".into(),
                ..Default::default()
            });
            p.decode(&w, server(err, enc), &mut out)?;
            let bye = server_message::Kind::Goodbye(w::Goodbye {
                code: "too_slow".into(),
                ..Default::default()
            });
            p.decode(&w, server(bye, enc), &mut out)?;
            assert_eq!(
                out,
                vec![
                    Event::Joined {
                        plies: None,
                        seq: None,
                        head: Some(5)
                    },
                    Event::Ack { ply: 3, seq: None },
                    Event::Ignored,
                    Event::Move { seq: 6, ply: 4 },
                    Event::Sequenced { seq: 7 },
                    Event::Ended { seq: Some(8) },
                    Event::Joined {
                        plies: Some(2),
                        seq: Some(9),
                        head: None
                    },
                    Event::Error {
                        code: "illegal_move".into()
                    },
                    Event::Error {
                        code: "goodbye:too_slow".into()
                    },
                ],
                "{enc:?}"
            );
            assert!(p.decode(&w, Message::text("{not json"), &mut out).is_err());
            assert!(
                p.decode(&w, Message::Binary(vec![0xff, 0xff].into()), &mut out)
                    .is_err()
            );
        }
        Ok(())
    }
}
