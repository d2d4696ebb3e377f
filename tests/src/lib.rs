//! Helpers for the end-to-end tests: a database per test (temp SQLite, or a
//! fresh PostgreSQL database when `CHUHE_TEST_DATABASE_URL` is set), the real
//! server on a free port (in-process, or as a child process for kill tests),
//! an organizer HTTP client and websocket clients in both encodings.
//!
//! Waiting is always for an event, with a generous timeout only as a failure
//! guard.

pub mod nodes;

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use chuhe_proto::v1::{
    self as w, ClientMessage, GameEvent, ServerMessage, client_message, game_event, server_message,
};
use chuhe_proto::{Encoding, Message as _};
use chuhe_server::persist::{Persist, Role};
use chuhe_server::store_adapter::StoreAdapter;
use chuhe_server::{Config, Deps};
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

/// The failure guard for every wait.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// Which database backends to run a test on: SQLite always, PostgreSQL when
/// `CHUHE_TEST_DATABASE_URL` is set (else [`say_skipped`] prints one line naming the test).
pub fn backends() -> Vec<&'static str> {
    let mut v = vec!["sqlite"];
    if std::env::var("CHUHE_TEST_DATABASE_URL").is_ok() {
        v.push("postgres");
    } else {
        say_skipped("its PostgreSQL variant", "CHUHE_TEST_DATABASE_URL");
    }
    v
}

/// Prints `skipped: <test> (<what>: <var> is not set)` as one line on the process's stderr.
/// Written to the stderr handle, not with `eprintln!`: libtest captures the `print!` family
/// (and shows it only for failed tests) but not the handle, so the line is always seen. The
/// test is named by its thread, which libtest names after it.
pub fn say_skipped(what: &str, var: &str) {
    use std::io::Write as _;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {test} ({what}: {var} is not set)"
    );
}

/// A database that lives as long as the test.
pub struct TestDb {
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    pg: Option<(String, String)>,
}

impl TestDb {
    pub async fn new(backend: &str) -> Result<TestDb> {
        match backend {
            "sqlite" => {
                let dir = tempfile::tempdir()?;
                let url = format!("sqlite://{}", dir.path().join("chuhe.db").display());
                Ok(TestDb {
                    url,
                    _dir: Some(dir),
                    pg: None,
                })
            }
            "postgres" => {
                let admin = std::env::var("CHUHE_TEST_DATABASE_URL")?;
                let name = format!(
                    "chuhe_test_{}",
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)?
                        .as_nanos()
                        % 1_000_000_000_000
                        + u128::from(std::process::id())
                );
                use sqlx::Connection;
                let mut c = sqlx::PgConnection::connect(&admin).await?;
                sqlx::query(&format!("CREATE DATABASE {name}"))
                    .execute(&mut c)
                    .await?;
                let base = admin
                    .rsplit_once('/')
                    .map(|(b, _)| b.to_string())
                    .unwrap_or(admin.clone());
                Ok(TestDb {
                    url: format!("{base}/{name}"),
                    _dir: None,
                    pg: Some((admin, name)),
                })
            }
            other => bail!("unknown backend {other}"),
        }
    }

    /// Drops a PostgreSQL database (SQLite's temp dir goes by itself).
    pub async fn drop_db(self) {
        if let Some((admin, name)) = &self.pg {
            use sqlx::Connection;
            if let Ok(mut c) = sqlx::PgConnection::connect(admin).await {
                let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&mut c)
                    .await;
            }
        }
    }

    pub async fn persist(&self) -> Result<Arc<dyn Persist>> {
        let store = chuhe_store::open(&self.url, &chuhe_store::StoreOptions::default()).await?;
        Ok(Arc::new(StoreAdapter::new(Arc::new(store))))
    }
}

/// Accounts and tokens made before the server starts (like `chuhe admin`).
#[derive(Debug, Clone)]
pub struct Cast {
    pub organizer: String,
    pub arbiter: String,
    pub arbiter_id: i64,
    pub red: String,
    pub red_id: i64,
    pub black: String,
    pub black_id: i64,
    pub other: String,
}

pub async fn seed(p: &dyn Persist) -> Result<Cast> {
    let tag = std::process::id();
    let org = p
        .create_account(&format!("org-{tag}"), Role::Organizer)
        .await?;
    let arb = p
        .create_account(&format!("arbiter-{tag}"), Role::Arbiter)
        .await?;
    let red = p
        .create_account(&format!("red-{tag}"), Role::Player)
        .await?;
    let black = p
        .create_account(&format!("black-{tag}"), Role::Player)
        .await?;
    let other = p
        .create_account(&format!("other-{tag}"), Role::Player)
        .await?;
    Ok(Cast {
        organizer: p.issue_token(org.id, None).await?.0,
        arbiter: p.issue_token(arb.id, None).await?.0,
        arbiter_id: arb.id,
        red: p.issue_token(red.id, None).await?.0,
        red_id: red.id,
        black: p.issue_token(black.id, None).await?.0,
        black_id: black.id,
        other: p.issue_token(other.id, None).await?.0,
    })
}

/// A fresh database on `backend`, seeded with the test cast, and a server on it.
pub async fn start_seeded(backend: &str, config: Config) -> Result<(TestDb, Server, Cast)> {
    let db = TestDb::new(backend).await?;
    let p = db.persist().await?;
    let cast = seed(p.as_ref()).await?;
    let server = Server::start(p, config).await?;
    Ok((db, server, cast))
}

/// A fresh database on `backend`, seeded with the test cast, and the server binary `exe` (see
/// [`ChildServer::start`]) on it; the seeding connection is closed before the server starts.
pub async fn start_child_seeded(backend: &str, exe: &str) -> Result<(TestDb, ChildServer, Cast)> {
    let db = TestDb::new(backend).await?;
    let cast = {
        let p = db.persist().await?;
        seed(p.as_ref()).await?
    };
    let server = ChildServer::start(exe, &db.url).await?;
    Ok((db, server, cast))
}

/// The server running in this process.
pub struct Server {
    pub addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl Server {
    pub async fn start(persist: Arc<dyn Persist>, config: Config) -> Result<Server> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(chuhe_server::serve(
            listener,
            async move {
                let _ = rx.await;
            },
            Deps {
                persist,
                config,
                cluster: None,
            },
        ));
        Ok(Server {
            addr,
            stop: Some(tx),
            task: Some(task),
        })
    }

    /// Starts the graceful shutdown without waiting for it (see [`Server::stop`]).
    pub fn begin_stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }

    /// Graceful shutdown; waits for it to finish.
    pub async fn stop(mut self) -> Result<()> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            tokio::time::timeout(TIMEOUT, t).await???;
        }
        Ok(())
    }
}

/// The server as a child process (for `kill -9`).
pub struct ChildServer {
    pub addr: std::net::SocketAddr,
    pub child: tokio::process::Child,
}

impl ChildServer {
    /// `exe`: `env!("CARGO_BIN_EXE_chuhe-e2e-server")` from the test.
    pub async fn start(exe: &str, db_url: &str) -> Result<ChildServer> {
        ChildServer::start_on(exe, db_url, "multi").await
    }

    /// As [`ChildServer::start`], on the tokio scheduler named (`single` or `multi`).
    pub async fn start_on(exe: &str, db_url: &str, scheduler: &str) -> Result<ChildServer> {
        let mut child = tokio::process::Command::new(exe)
            .arg(db_url)
            .arg(scheduler)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let stdout = child.stdout.take().context("no stdout")?;
        let mut lines = tokio::io::BufReader::new(stdout);
        let mut line = String::new();
        use tokio::io::AsyncBufReadExt;
        tokio::time::timeout(TIMEOUT, lines.read_line(&mut line)).await??;
        let addr = line
            .trim()
            .strip_prefix("listening ")
            .context("no listening line")?
            .parse()?;
        Ok(ChildServer { addr, child })
    }

    /// SIGKILL: no shutdown code runs.
    pub async fn kill9(mut self) -> Result<()> {
        self.child.kill().await?;
        Ok(())
    }
}

/// Minimal HTTP/1.1 client for the organizer API and records.
pub async fn http(
    addr: std::net::SocketAddr,
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
    read_response(&mut s).await
}

/// Reads an HTTP/1.1 response to its end (the request said `Connection: close`): the status
/// and the body (dechunked).
async fn read_response(s: &mut TcpStream) -> Result<(u16, String)> {
    let mut buf = Vec::new();
    tokio::time::timeout(TIMEOUT, s.read_to_end(&mut buf)).await??;
    let text = String::from_utf8_lossy(&buf).to_string();
    let status: u16 = text
        .split_whitespace()
        .nth(1)
        .context("no status")?
        .parse()?;
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(rest)
    } else {
        rest.to_string()
    };
    Ok((status, body))
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((len, rest)) = s.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(len.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// Creates a game through the organizer API; returns its id.
pub async fn create_game(
    addr: std::net::SocketAddr,
    cast: &Cast,
    time_control: &str,
    fen: &str,
    extra: &str,
) -> Result<String> {
    let body = format!(
        r#"{{"redId":"{}","blackId":"{}","timeControl":"{time_control}","initialFen":"{fen}"{extra}}}"#,
        cast.red_id, cast.black_id
    );
    let (status, text) = http(
        addr,
        "POST",
        "/api/v1/games",
        Some(&cast.organizer),
        Some(&body),
    )
    .await?;
    if status != 201 {
        bail!("create game: {status} {text}");
    }
    let v: serde_json::Value = serde_json::from_str(&text)?;
    Ok(v["info"]["gameId"]
        .as_str()
        .context("no game id")?
        .to_string())
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

/// A websocket client speaking one encoding.
pub struct Client {
    ws: Ws,
    pub enc: Encoding,
    next_req: u32,
    /// Every message received, in order (tests look back at them).
    pub seen: Vec<ServerMessage>,
    pub welcome: w::Welcome,
    /// Close code and reason once the server closed.
    pub closed: Option<(u16, String)>,
    /// Websocket pings received from the server (tungstenite answers them).
    pub pings: u32,
    /// `Heartbeat`s received (the liveness rule's; not kept in `seen`).
    pub heartbeats: u32,
    /// When the last frame of any kind arrived (the liveness rule's clock).
    pub heard: tokio::time::Instant,
}

impl Client {
    pub async fn connect(
        addr: std::net::SocketAddr,
        token: Option<&str>,
        enc: Encoding,
    ) -> Result<Client> {
        let req = upgrade_request(addr, token, enc)?;
        let (ws, resp) =
            tokio::time::timeout(TIMEOUT, tokio_tungstenite::connect_async(req)).await??;
        Client::welcomed(ws, &resp, enc).await
    }

    /// A client on a websocket just opened: checks the subprotocol and reads the Welcome.
    async fn welcomed(
        ws: Ws,
        resp: &tokio_tungstenite::tungstenite::handshake::client::Response,
        enc: Encoding,
    ) -> Result<Client> {
        let proto = resp
            .headers()
            .get("sec-websocket-protocol")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if proto != enc.subprotocol() {
            bail!("server chose subprotocol {proto:?}");
        }
        let mut c = Client {
            ws,
            enc,
            next_req: 1,
            seen: Vec::new(),
            welcome: w::Welcome::default(),
            closed: None,
            pings: 0,
            heartbeats: 0,
            heard: tokio::time::Instant::now(),
        };
        let m = c.recv().await?;
        match m.kind {
            Some(server_message::Kind::Welcome(wel)) => c.welcome = wel,
            other => bail!("expected Welcome, got {other:?}"),
        }
        Ok(c)
    }

    /// Sends a message; returns its request id.
    pub async fn send(&mut self, kind: client_message::Kind) -> Result<u32> {
        let id = self.next_req;
        self.next_req += 1;
        let m = ClientMessage {
            request_id: id,
            kind: Some(kind),
        };
        let frame = match self.enc {
            Encoding::Proto => Message::Binary(m.encode_to_vec().into()),
            Encoding::Json => Message::Text(chuhe_proto::encode_json(&m).into()),
        };
        self.ws.send(frame).await?;
        Ok(id)
    }

    pub async fn send_raw(&mut self, frame: Message) -> Result<()> {
        self.ws.send(frame).await?;
        Ok(())
    }

    /// The next server message (pings are answered by tungstenite itself), within
    /// [`TIMEOUT`] (pings alone do not keep it waiting).
    pub async fn recv(&mut self) -> Result<ServerMessage> {
        self.recv_by(tokio::time::Instant::now() + TIMEOUT).await
    }

    /// The next server message before `deadline`. Every wait of this client for a message has
    /// one, so a request the server never answers fails the test instead of hanging it while
    /// the server's pings keep the connection busy.
    async fn recv_by(&mut self, deadline: tokio::time::Instant) -> Result<ServerMessage> {
        tokio::time::timeout_at(deadline, async {
            loop {
                if let Some(msg) = self.next_frame().await? {
                    return Ok(msg);
                }
            }
        })
        .await
        .map_err(|_| anyhow!("timed out waiting for a server message (pings only)"))?
    }

    /// The next server message unless the liveness rule (docs/protocol.md, "Liveness") finds
    /// the connection dead first: `None` when nothing at all (no message, no heartbeat, no
    /// ping) arrived for three `Welcome.heartbeat_ms`. Errors if the server announced none.
    pub async fn recv_live(&mut self) -> Result<Option<ServerMessage>> {
        let beat = Duration::from_millis(u64::from(self.welcome.heartbeat_ms));
        if beat.is_zero() {
            bail!("the server announced no heartbeat interval");
        }
        loop {
            let dead_at = self.heard + 3 * beat;
            match tokio::time::timeout_at(dead_at, self.next_frame()).await {
                Err(_) => return Ok(None),
                Ok(Ok(Some(m))) => return Ok(Some(m)),
                Ok(Ok(None)) => {}
                Ok(Err(e)) => return Err(e),
            }
        }
    }

    /// Reads until the next `Heartbeat` (messages meanwhile are kept in `seen`).
    pub async fn wait_heartbeat(&mut self) -> Result<()> {
        let n = self.heartbeats + 1;
        while self.heartbeats < n {
            self.next_frame().await?;
        }
        Ok(())
    }

    /// Reads until the server has sent `n` websocket pings in all (messages meanwhile are kept
    /// in `seen`).
    pub async fn wait_pings(&mut self, n: u32) -> Result<()> {
        while self.pings < n {
            self.next_frame().await?;
        }
        Ok(())
    }

    /// Reads one frame: a server message (kept in `seen`), or None for any other frame (a
    /// ping is counted in `pings`).
    async fn next_frame(&mut self) -> Result<Option<ServerMessage>> {
        let m = tokio::time::timeout(TIMEOUT, self.ws.next())
            .await
            .map_err(|_| anyhow!("timed out waiting for a server message"))?;
        let m = match m {
            Some(Ok(m)) => m,
            Some(Err(e)) => bail!("websocket error: {e}"),
            None => bail!("connection closed"),
        };
        self.heard = tokio::time::Instant::now();
        let msg: ServerMessage = match m {
            Message::Binary(b) => {
                if self.enc != Encoding::Proto {
                    bail!("binary frame on a JSON connection");
                }
                chuhe_proto::decode_proto(&b)?
            }
            Message::Text(t) => {
                if self.enc != Encoding::Json {
                    bail!("text frame on a proto connection");
                }
                chuhe_proto::decode_json(t.as_str())?
            }
            Message::Close(c) => {
                let c = c
                    .map(|c| (u16::from(c.code), c.reason.to_string()))
                    .unwrap_or((1005, String::new()));
                self.closed = Some(c.clone());
                bail!("closed by server: {} {}", c.0, c.1);
            }
            Message::Ping(_) => {
                self.pings += 1;
                return Ok(None);
            }
            _ => return Ok(None),
        };
        if let Some(server_message::Kind::Heartbeat(_)) = msg.kind {
            self.heartbeats += 1;
            return Ok(None);
        }
        self.seen.push(msg.clone());
        Ok(Some(msg))
    }

    /// Waits for a message matching `f`, returning what `f` extracts.
    pub async fn expect<T>(&mut self, mut f: impl FnMut(&ServerMessage) -> Option<T>) -> Result<T> {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            let m = self.recv_by(deadline).await?;
            if let Some(t) = f(&m) {
                return Ok(t);
            }
        }
    }

    /// Waits for the Reply to `req` (Err with the code on an Error).
    pub async fn reply(&mut self, req: u32) -> Result<w::Reply> {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            let m = self.recv_by(deadline).await?;
            match m.kind {
                Some(server_message::Kind::Reply(r)) if r.request_id == req => return Ok(r),
                Some(server_message::Kind::Error(e)) if e.request_id == req => {
                    bail!("error {}: {}", e.code, e.message)
                }
                _ => {}
            }
        }
    }

    /// Waits for the Error answering `req`; returns its code.
    pub async fn error_code(&mut self, req: u32) -> Result<String> {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            let m = self.recv_by(deadline).await?;
            match m.kind {
                Some(server_message::Kind::Error(e)) if e.request_id == req => return Ok(e.code),
                Some(server_message::Kind::Reply(r)) if r.request_id == req => {
                    bail!("expected an error, got a reply {r:?}")
                }
                _ => {}
            }
        }
    }

    /// Waits for the next game event matching `f`.
    pub async fn event<T>(&mut self, mut f: impl FnMut(&GameEvent) -> Option<T>) -> Result<T> {
        self.expect(|m| match &m.kind {
            Some(server_message::Kind::Event(e)) => f(e),
            _ => None,
        })
        .await
    }

    pub async fn subscribe(&mut self, game: &str, last_seq: u64) -> Result<w::Reply> {
        let r = self
            .send(client_message::Kind::Subscribe(w::Subscribe {
                game_id: game.into(),
                last_seq,
            }))
            .await?;
        self.reply(r).await
    }

    /// Sends a move and waits for its acknowledgement.
    pub async fn play(&mut self, game: &str, ply: u32, mv: &str) -> Result<w::Reply> {
        let r = self.send_move(game, ply, mv).await?;
        self.reply(r).await
    }

    pub async fn send_move(&mut self, game: &str, ply: u32, mv: &str) -> Result<u32> {
        self.send(client_message::Kind::Move(w::MakeMove {
            game_id: game.into(),
            ply,
            r#move: mv.into(),
            offer_draw: false,
            think_ms: 0,
        }))
        .await
    }

    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }

    /// Waits until the server closes the connection; returns the close code.
    pub async fn wait_closed(&mut self) -> Result<u16> {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            if let Some((c, _)) = &self.closed {
                return Ok(*c);
            }
            match self.recv_by(deadline).await {
                Ok(_) => {}
                Err(e) => {
                    if let Some((c, _)) = &self.closed {
                        return Ok(*c);
                    }
                    return Err(e);
                }
            }
        }
    }
}

/// The ended event's (result, reason), if `e` is one.
pub fn ended(e: &GameEvent) -> Option<(w::Result, String)> {
    match &e.kind {
        Some(game_event::Kind::Ended(x)) => Some((
            w::Result::try_from(x.result).unwrap_or(w::Result::Unspecified),
            x.reason.clone(),
        )),
        _ => None,
    }
}

/// The move's ICCS, if `e` is a move event.
pub fn moved(e: &GameEvent) -> Option<String> {
    match &e.kind {
        Some(game_event::Kind::Move(m)) => m.r#move.as_ref().map(|m| m.iccs.clone()),
        _ => None,
    }
}

/// The snapshot, if `m` is one.
pub fn snapshot(m: &ServerMessage) -> Option<w::GameSnapshot> {
    match &m.kind {
        Some(server_message::Kind::Snapshot(s)) => Some(s.clone()),
        _ => None,
    }
}

// ---- league helpers ----

/// An HTTP request with an optional JSON body; the status and the body parsed as JSON (Null
/// when it is not JSON).
pub async fn http_json(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&serde_json::Value>,
) -> Result<(u16, serde_json::Value)> {
    let body = body.map(|b| b.to_string());
    let (status, text) = http(addr, method, path, token, body.as_deref()).await?;
    Ok((
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
    ))
}

/// Organizer `org` creates a league from `spec`, publishes it and issues its tokens: the
/// league's id and the issued tokens (objects with `token`, `principalId`, `role`, `team`).
pub async fn published_league(
    addr: std::net::SocketAddr,
    org: &str,
    spec: &serde_json::Value,
) -> Result<(String, Vec<serde_json::Value>)> {
    let (s, v) = http_json(addr, "POST", "/api/v1/leagues", Some(org), Some(spec)).await?;
    anyhow::ensure!(s == 201, "create: {s} {v}");
    let id = v["id"].as_str().context("id")?.to_string();
    let path = format!("/api/v1/leagues/{id}");
    let (s, v) = http_json(addr, "POST", &format!("{path}/publish"), Some(org), None).await?;
    anyhow::ensure!(s == 200, "publish: {s} {v}");
    let (s, v) = http_json(
        addr,
        "POST",
        &format!("{path}/tokens"),
        Some(org),
        Some(&serde_json::json!({})),
    )
    .await?;
    anyhow::ensure!(s == 201, "tokens: {s} {v}");
    let tokens = v["tokens"].as_array().context("tokens")?.clone();
    Ok((id, tokens))
}

/// A league update's (public seq, kind, the entry as JSON), if `m` is one.
pub fn league_update(m: &ServerMessage) -> Option<(u64, String, serde_json::Value)> {
    match &m.kind {
        Some(server_message::Kind::League(u)) => Some((
            u.seq,
            u.kind.clone(),
            serde_json::from_str(&u.json).unwrap_or(serde_json::Value::Null),
        )),
        _ => None,
    }
}

impl Client {
    /// A barrier: sends a Ping and reads until its Pong; returns every other message that came
    /// before it. Whatever the server queued for this connection before the Ping was read is
    /// among them (one connection's messages leave in order).
    pub async fn until_pong(&mut self) -> Result<Vec<ServerMessage>> {
        let stamp = 0x5eed_u64;
        self.send(client_message::Kind::Ping(w::Ping {
            client_time_ms: stamp,
        }))
        .await?;
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        let mut before = Vec::new();
        loop {
            let m = self.recv_by(deadline).await?;
            match &m.kind {
                Some(server_message::Kind::Pong(p)) if p.client_time_ms == stamp => {
                    return Ok(before);
                }
                _ => before.push(m),
            }
        }
    }

    /// Follows a league's public stream from `last_seq`; the reply's seq (the stream's latest).
    pub async fn league_subscribe(&mut self, league: &str, last_seq: u64) -> Result<u64> {
        let r = self
            .send(client_message::Kind::LeagueSubscribe(w::LeagueSubscribe {
                league_id: league.into(),
                last_seq,
                feed: false,
            }))
            .await?;
        Ok(self.reply(r).await?.seq)
    }

    /// The next league update (seq, kind, entry).
    pub async fn league_next(&mut self) -> Result<(u64, String, serde_json::Value)> {
        self.expect(league_update).await
    }
}

// ---- hardening helpers ----

/// Sends `request` (a whole raw HTTP/1.1 request, which should say `Connection: close`) and
/// reads the answer: the status and body. For requests [`http`] cannot make (websocket
/// upgrades, odd headers).
pub async fn raw_http(addr: std::net::SocketAddr, request: &str) -> Result<(u16, String)> {
    let mut s = TcpStream::connect(addr).await?;
    s.write_all(request.as_bytes()).await?;
    read_response(&mut s).await
}

/// A complete websocket upgrade request for `/ws` in the JSON encoding, with a bearer token.
pub fn ws_upgrade_request(token: Option<&str>) -> String {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    format!(
        "GET /ws HTTP/1.1\r\nHost: test\r\nConnection: Upgrade, close\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Sec-WebSocket-Protocol: chuhe.v1.json\r\n{auth}\r\n"
    )
}

impl Client {
    /// As [`Client::connect`], over a socket whose receive buffer is `recv_buffer` bytes (the
    /// kernel doubles it): a client that reads slowly fills it at once and the server's writes
    /// must wait.
    pub async fn connect_small_window(
        addr: std::net::SocketAddr,
        token: Option<&str>,
        enc: Encoding,
        recv_buffer: u32,
    ) -> Result<Client> {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.set_recv_buffer_size(recv_buffer)?;
        let stream = tokio::time::timeout(TIMEOUT, socket.connect(addr)).await??;
        let req = upgrade_request(addr, token, enc)?;
        let stream = tokio_tungstenite::MaybeTlsStream::Plain(stream);
        let (ws, resp) =
            tokio::time::timeout(TIMEOUT, tokio_tungstenite::client_async(req, stream)).await??;
        Client::welcomed(ws, &resp, enc).await
    }
}

/// The websocket upgrade request for `/ws` with `token` (as `?token=`) in `enc`.
fn upgrade_request(
    addr: std::net::SocketAddr,
    token: Option<&str>,
    enc: Encoding,
) -> Result<tokio_tungstenite::tungstenite::handshake::client::Request> {
    let url = match token {
        Some(t) => format!("ws://{addr}/ws?token={t}"),
        None => format!("ws://{addr}/ws"),
    };
    let mut req = url.into_client_request()?;
    req.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        HeaderValue::from_static(enc.subprotocol()),
    );
    Ok(req)
}

/// The code of the next Error the client gets (any request id).
pub async fn next_error_code(c: &mut Client) -> Result<String> {
    c.expect(|m| match &m.kind {
        Some(server_message::Kind::Error(e)) => Some(e.code.clone()),
        _ => None,
    })
    .await
}

/// Reads `/metrics` (with `token`) until `name` has `value`, bounded by [`TIMEOUT`]; the last
/// text read otherwise.
pub async fn wait_metric(
    addr: std::net::SocketAddr,
    token: &str,
    name: &str,
    value: u64,
) -> Result<()> {
    let want = format!("\n{name} {value}\n");
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let (_, text) = http(addr, "GET", "/metrics", Some(token), None).await?;
        if text.contains(&want) {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            bail!("{name} never reached {value}: {text}");
        }
        // Polling a counter: nothing to wait on but the next read.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A TCP connection to `addr` from the loopback address `local` (any of 127.0.0.0/8 works on
/// Linux), so a test can stand for several client addresses.
pub async fn connect_from(addr: std::net::SocketAddr, local: [u8; 4]) -> Result<TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(std::net::SocketAddr::from((local, 0)))?;
    Ok(tokio::time::timeout(TIMEOUT, socket.connect(addr)).await??)
}

/// Sends `GET path` with `Connection: close` on an open connection and reads the answer.
pub async fn get_on(s: &mut TcpStream, path: &str) -> Result<(u16, String)> {
    let req = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await?;
    read_response(s).await
}

/// Waits until the server closes `s` (end of stream or a reset), reading and dropping what it
/// sends; bounded by [`TIMEOUT`].
pub async fn wait_server_closed(s: &mut TcpStream) -> Result<()> {
    let mut buf = [0u8; 512];
    tokio::time::timeout(TIMEOUT, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .map_err(|_| anyhow!("the server kept the connection open"))
}
