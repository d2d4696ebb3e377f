//! Servers in this process sharing one in-memory store and one in-memory cluster hub, and a
//! small websocket client.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use chuhe_proto::v1::{
    self as w, ClientMessage, GameEvent, ServerMessage, client_message, server_message,
};
use chuhe_server::cluster::{MemoryCluster, MemoryHub};
use chuhe_server::persist::{MemoryPersist, Role};
use chuhe_server::{Config, Deps, Persist};
use futures_util::{SinkExt, StreamExt};
use prost::Message as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The longest any wait in these tests takes before it fails.
pub const TIMEOUT: Duration = Duration::from_secs(15);

/// Leases of the in-memory hub (short: failover tests wait for it, never sleep).
pub const TTL: Duration = Duration::from_millis(600);

pub fn config() -> Config {
    Config {
        shards: 2,
        remote_timeout: Duration::from_millis(800),
        cluster_sweep: Duration::from_millis(100),
        shutdown_grace: Duration::from_secs(3),
        ..Config::default()
    }
}

/// One server of the cluster.
pub struct Node {
    pub name: String,
    pub addr: SocketAddr,
    pub cluster: Arc<MemoryCluster>,
    pub persist: Arc<MemoryPersist>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Node {
    /// Graceful shutdown; waits for it.
    pub async fn stop(&mut self) -> Result<()> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            tokio::time::timeout(TIMEOUT, t).await???;
        }
        self.cluster.leave();
        Ok(())
    }
}

pub struct Cast {
    pub organizer: String,
    pub red: String,
    pub red_id: i64,
    pub black: String,
    pub black_id: i64,
}

/// `n` servers on one store and one hub, and the accounts of a game.
pub struct Cluster {
    pub hub: MemoryHub,
    pub persist: Arc<MemoryPersist>,
    pub nodes: Vec<Node>,
    pub cast: Cast,
    /// Every node's configuration.
    pub config: Config,
}

impl Cluster {
    pub async fn start(n: usize) -> Result<Cluster> {
        Cluster::start_with(n, config()).await
    }

    /// As [`Cluster::start`], the nodes configured as `config` says.
    pub async fn start_with(n: usize, config: Config) -> Result<Cluster> {
        let hub = MemoryHub::new(TTL);
        let persist = Arc::new(MemoryPersist::default());
        let p: &dyn Persist = persist.as_ref();
        let org = p.create_account("org", Role::Organizer).await?;
        let red = p.create_account("red", Role::Player).await?;
        let black = p.create_account("black", Role::Player).await?;
        let cast = Cast {
            organizer: p.issue_token(org.id, None).await?.0,
            red: p.issue_token(red.id, None).await?.0,
            red_id: red.id,
            black: p.issue_token(black.id, None).await?.0,
            black_id: black.id,
        };
        let mut c = Cluster {
            hub,
            persist,
            nodes: Vec::new(),
            cast,
            config,
        };
        for i in 0..n {
            c.add(&format!("n{i}")).await?;
        }
        Ok(c)
    }

    pub async fn add(&mut self, name: &str) -> Result<()> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let cluster = self.hub.join(name);
        let persist = Arc::new(self.persist.node_view());
        let task = tokio::spawn(chuhe_server::serve(
            listener,
            async move {
                let _ = rx.await;
            },
            Deps {
                persist: persist.clone(),
                config: self.config.clone(),
                cluster: Some(cluster.clone()),
            },
        ));
        self.nodes.push(Node {
            name: name.to_string(),
            addr,
            cluster,
            persist,
            stop: Some(tx),
            task: Some(task),
        });
        Ok(())
    }

    /// Creates a game through node `i`'s organizer API; `extra` is more JSON fields.
    pub async fn create_game(&self, i: usize, extra: &str) -> Result<String> {
        let body = format!(
            r#"{{"redId":"{}","blackId":"{}","timeControl":"10m"{extra}}}"#,
            self.cast.red_id, self.cast.black_id
        );
        let (status, text) = http(
            self.nodes[i].addr,
            "POST",
            "/api/v1/games",
            Some(&self.cast.organizer),
            Some(&body),
        )
        .await?;
        if status != 201 {
            return Err(format!("create game: {status} {text}").into());
        }
        let v: serde_json::Value = serde_json::from_str(&text)?;
        Ok(v["info"]["gameId"]
            .as_str()
            .ok_or("no game id")?
            .to_string())
    }

    /// The moves stored in a game's log, in order.
    pub async fn stored_moves(&self, game: &str) -> Result<Vec<String>> {
        let id: i64 = game.parse()?;
        let log = self.persist.events(id).await?;
        let mut moves = Vec::new();
        for (_, payload) in log {
            let s = w::StoredEvent::decode(&payload[..])?;
            if let Some(m) = s.event.as_ref().and_then(moved) {
                moves.push(m);
            }
        }
        Ok(moves)
    }

    /// How many `ServerRestarted` events a game's log holds (one per recovery: the clocks
    /// credited for the gap).
    pub async fn restarts(&self, game: &str) -> Result<usize> {
        let id: i64 = game.parse()?;
        let mut n = 0;
        for (_, payload) in self.persist.events(id).await? {
            let s = w::StoredEvent::decode(&payload[..])?;
            if matches!(
                s.event.and_then(|e| e.kind),
                Some(w::game_event::Kind::ServerRestarted(_))
            ) {
                n += 1;
            }
        }
        Ok(n)
    }

    /// Waits until `key`'s lease is held by a node other than `not`; returns it.
    pub async fn wait_holder_other_than(&self, key: &str, not: &str) -> Result<String> {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        loop {
            tick.tick().await;
            if let Some(h) = self.hub.holder_of(key) {
                if h != not {
                    return Ok(h);
                }
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!("{key} never held by another node than {not}").into());
            }
        }
    }
}

pub async fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Result<(u16, String)> {
    let mut s = TcpStream::connect(addr).await?;
    let body = body.unwrap_or("");
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await?;
    let mut buf = Vec::new();
    tokio::time::timeout(TIMEOUT, s.read_to_end(&mut buf)).await??;
    let text = String::from_utf8_lossy(&buf).to_string();
    let status: u16 = text.split_whitespace().nth(1).ok_or("no status")?.parse()?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((status, body))
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

/// A protobuf websocket client.
pub struct Client {
    ws: Ws,
    next_req: u32,
    /// Messages read but not yet looked at.
    pub seen: std::collections::VecDeque<ServerMessage>,
}

impl Client {
    pub async fn connect(addr: SocketAddr, token: Option<&str>) -> Result<Client> {
        let mut req = format!("ws://{addr}/ws").into_client_request()?;
        req.headers_mut()
            .insert("Sec-WebSocket-Protocol", "chuhe.v1.proto".parse()?);
        if let Some(t) = token {
            req.headers_mut()
                .insert("Authorization", format!("Bearer {t}").parse()?);
        }
        let (ws, _) =
            tokio::time::timeout(TIMEOUT, tokio_tungstenite::connect_async(req)).await??;
        let mut c = Client {
            ws,
            next_req: 1,
            seen: Default::default(),
        };
        c.expect(|m| matches!(m.kind, Some(server_message::Kind::Welcome(_))).then_some(()))
            .await?;
        Ok(c)
    }

    pub async fn send(&mut self, kind: client_message::Kind) -> Result<u32> {
        let id = self.next_req;
        self.next_req += 1;
        let m = ClientMessage {
            request_id: id,
            kind: Some(kind),
        };
        self.ws
            .send(Message::Binary(m.encode_to_vec().into()))
            .await?;
        Ok(id)
    }

    async fn read(&mut self, deadline: tokio::time::Instant) -> Result<ServerMessage> {
        loop {
            let m = tokio::time::timeout_at(deadline, self.ws.next())
                .await?
                .ok_or("socket closed")??;
            match m {
                Message::Binary(b) => {
                    let m = ServerMessage::decode(&b[..])?;
                    // The liveness rule's beats are not messages a test waits for.
                    if !matches!(m.kind, Some(server_message::Kind::Heartbeat(_))) {
                        return Ok(m);
                    }
                }
                Message::Close(c) => return Err(format!("closed: {c:?}").into()),
                _ => {}
            }
        }
    }

    /// The first message (looked-at ones excepted) `f` picks; the others stay for later.
    pub async fn expect<T>(&mut self, mut f: impl FnMut(&ServerMessage) -> Option<T>) -> Result<T> {
        if let Some(i) = self.seen.iter().position(|m| f(m).is_some()) {
            let m = self.seen.remove(i).ok_or("gone")?;
            return f(&m).ok_or_else(|| "unreachable".into());
        }
        // One deadline for the whole wait (the server's pings do not extend it).
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            let m = self.read(deadline).await?;
            if let Some(t) = f(&m) {
                return Ok(t);
            }
            self.seen.push_back(m);
        }
    }

    /// The answer to request `req`: its reply, or its error's code.
    pub async fn answer(&mut self, req: u32) -> Result<std::result::Result<w::Reply, String>> {
        self.expect(|m| match &m.kind {
            Some(server_message::Kind::Reply(r)) if r.request_id == req => Some(Ok(r.clone())),
            Some(server_message::Kind::Error(e)) if e.request_id == req => {
                Some(Err(e.code.clone()))
            }
            _ => None,
        })
        .await
    }

    pub async fn subscribe(&mut self, game: &str, last_seq: u64) -> Result<w::Reply> {
        let req = self
            .send(client_message::Kind::Subscribe(w::Subscribe {
                game_id: game.into(),
                last_seq,
            }))
            .await?;
        self.answer(req).await?.map_err(|e| e.into())
    }

    /// Plays a move, resending it (same ply) while the answer is a retryable error.
    pub async fn play(&mut self, game: &str, ply: u32, mv: &str) -> Result<w::Reply> {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            let req = self
                .send(client_message::Kind::Move(w::MakeMove {
                    game_id: game.into(),
                    ply,
                    r#move: mv.into(),
                    ..Default::default()
                }))
                .await?;
            match self.answer(req).await? {
                Ok(r) => return Ok(r),
                Err(code)
                    if [
                        "unavailable",
                        "shutting_down",
                        "busy",
                        "store_unavailable",
                        "game_not_found",
                    ]
                    .contains(&code.as_str())
                        && tokio::time::Instant::now() < deadline =>
                {
                    // Retryable: the game is moving between nodes. Wait for the next retry
                    // on the socket itself (a ping) rather than a sleep.
                    self.ping().await?;
                }
                Err(code) => return Err(format!("move {mv} refused: {code}").into()),
            }
        }
    }

    /// A round trip to the server.
    pub async fn ping(&mut self) -> Result<()> {
        self.send(client_message::Kind::Ping(w::Ping { client_time_ms: 7 }))
            .await?;
        self.expect(|m| matches!(m.kind, Some(server_message::Kind::Pong(_))).then_some(()))
            .await
    }

    /// The next game event (with its seq).
    pub async fn event(&mut self) -> Result<GameEvent> {
        self.expect(|m| match &m.kind {
            Some(server_message::Kind::Event(e)) => Some(e.clone()),
            _ => None,
        })
        .await
    }

    /// The next move event: its seq and move.
    pub async fn next_move(&mut self) -> Result<(u64, String)> {
        loop {
            let e = self.event().await?;
            if let Some(m) = moved(&e) {
                return Ok((e.seq, m));
            }
        }
    }
}

impl Client {
    /// Subscribes to a league's public stream; the reply's seq.
    pub async fn league_subscribe(&mut self, league: &str, last_seq: u64) -> Result<u64> {
        let req = self
            .send(client_message::Kind::LeagueSubscribe(w::LeagueSubscribe {
                league_id: league.into(),
                last_seq,
                feed: false,
            }))
            .await?;
        Ok(self.answer(req).await??.seq)
    }

    /// The next league update: its seq and kind.
    pub async fn league_next(&mut self) -> Result<(u64, String)> {
        self.expect(|m| match &m.kind {
            Some(server_message::Kind::League(u)) => Some((u.seq, u.kind.clone())),
            _ => None,
        })
        .await
    }
}

pub fn moved(e: &GameEvent) -> Option<String> {
    match &e.kind {
        Some(w::game_event::Kind::Move(m)) => m.r#move.as_ref().map(|m| m.iccs.clone()),
        _ => None,
    }
}
