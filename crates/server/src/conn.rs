//! One websocket connection: subprotocol and auth at the upgrade, then one task that reads
//! (limits, decoding, routing to games) and writes (the bounded queue, what a direct write
//! left pending, pings for round-trip estimates, close frames) on the same socket, which the
//! games also write to while the task waits ([`crate::socket`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chuhe_clock::LagEstimator;
use chuhe_proto::v1::{self as w, ClientMessage, ServerMessage, client_message, server_message};
use chuhe_proto::{Encoding, Message as _};
use futures_util::{SinkExt, StreamExt};
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role as WsRole, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes, handshake::derive_accept_key};
use tracing::{Instrument, debug, error, info_span};

use crate::auth::{api_error, authenticate, bearer};
use crate::env::Env;
use crate::error::{ClientError, ErrorToWire, close};
use crate::frame_kinds::ScannedIo;
use crate::handle::GameHandle;
use crate::outbox::{Inbox, Kick, Next, Out, Outbox};
use crate::persist::Role;
use crate::request::{Body, Principal, Request};
use crate::socket::{SharedSocket, SocketIo};

static NEXT_CONN: AtomicU64 = AtomicU64::new(1);

/// Initial read buffer of a connection (grows on demand up to the hard frame limit).
const READ_BUFFER_BYTES: usize = 512;
/// Frames queued for one socket are written together up to this many bytes.
const WRITE_BATCH_BYTES: usize = 4096;

#[derive(Debug, serde::Deserialize)]
pub struct WsQuery {
    token: Option<String>,
}

/// A client's websocket: the upgraded HTTP connection's TCP socket, shared with the games
/// that write to it directly ([`crate::socket`]), every byte read through the [`ScannedIo`]
/// that lets a text frame that is not UTF-8 reach the connection as a frame.
type WebSocket = WebSocketStream<ScannedIo<SocketIo>>;

fn header_has(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case(token))
}

/// `GET /ws`: the websocket upgrade (RFC 6455 section 4.2), its subprotocol and bearer token.
/// Done here rather than by axum's extractor so the socket is read through [`ScannedIo`];
/// a request that is not a valid upgrade gets the JSON error `not_a_websocket_upgrade`.
pub async fn ws_handler(State(env): State<Env>, mut req: axum::extract::Request) -> Response {
    let headers = req.headers();
    if req.method() != Method::GET {
        return api_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "a websocket upgrade is a GET",
        );
    }
    let key = headers.get(header::SEC_WEBSOCKET_KEY).cloned();
    let Some(key) = key.filter(|_| {
        header_has(headers, header::CONNECTION, "upgrade")
            && header_has(headers, header::UPGRADE, "websocket")
            && headers
                .get(header::SEC_WEBSOCKET_VERSION)
                .is_some_and(|v| v.as_bytes() == b"13")
    }) else {
        return api_error(
            StatusCode::BAD_REQUEST,
            "not_a_websocket_upgrade",
            "/ws takes a websocket upgrade (Connection: Upgrade, Upgrade: websocket, \
             Sec-WebSocket-Version: 13, Sec-WebSocket-Key)",
        );
    };
    let enc = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|s| s.split(','))
        .find_map(|p| Encoding::from_subprotocol(p.trim()));
    let Some(enc) = enc else {
        return api_error(
            StatusCode::BAD_REQUEST,
            "unsupported_subprotocol",
            "request the websocket subprotocol chuhe.v1.proto or chuhe.v1.json",
        );
    };
    let q = match Query::<WsQuery>::try_from_uri(req.uri()) {
        Ok(Query(q)) => q,
        Err(e) => return api_error(StatusCode::BAD_REQUEST, "invalid_argument", &e.body_text()),
    };
    let who = match authenticate(&env, bearer(headers, q.token.as_deref())).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    if *env.shutdown.borrow() {
        return api_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting_down",
            "the server is shutting down",
        );
    }
    let hold = req.extensions().get::<crate::listen::SlotHold>().cloned();
    let upgrade = hyper::upgrade::on(&mut req);
    let hard = env.config.hard_frame_bytes;
    // Client frames are small (moves are tens of bytes): a small read buffer keeps idle
    // sockets cheap and grows for a larger frame. Writes are buffered up to WRITE_BATCH_BYTES
    // and flushed when the queue is drained, so a burst of frames (acknowledgement + event)
    // leaves in one syscall.
    let config = WebSocketConfig::default()
        .max_message_size(Some(hard))
        .max_frame_size(Some(hard))
        .read_buffer_size(READ_BUFFER_BYTES)
        .write_buffer_size(WRITE_BATCH_BYTES)
        .max_write_buffer_size(hard * 4);
    tokio::spawn(async move {
        let upgraded = match upgrade.await {
            Ok(u) => u,
            Err(e) => {
                debug!(error = %e, "websocket upgrade failed");
                return;
            }
        };
        // The TCP socket the listener served (`listen.rs`), and what HTTP had read past the
        // upgrade request.
        let parts = match upgraded.downcast::<hyper_util::rt::TokioIo<tokio::net::TcpStream>>() {
            Ok(parts) => parts,
            Err(_) => {
                error!("a websocket upgrade on a connection that is not a TCP socket");
                return;
            }
        };
        let shared = SharedSocket::new(parts.io.into_inner());
        let io = ScannedIo::new(SocketIo::new(shared.clone(), parts.read_buf));
        let socket = WebSocketStream::from_raw_socket(io, WsRole::Server, Some(config)).await;
        let conn = NEXT_CONN.fetch_add(1, Ordering::Relaxed);
        let span = info_span!("conn", conn, principal = ?who.id(), role = ?who.role());
        // The connection keeps its place under the connection caps while it is open.
        let _hold = hold;
        run(env, socket, shared, enc, who, conn)
            .instrument(span)
            .await;
    });
    (
        StatusCode::SWITCHING_PROTOCOLS,
        [
            (header::CONNECTION, HeaderValue::from_static("upgrade")),
            (header::UPGRADE, HeaderValue::from_static("websocket")),
            (
                header::SEC_WEBSOCKET_ACCEPT,
                HeaderValue::from_str(&derive_accept_key(key.as_bytes()))
                    .unwrap_or_else(|_| HeaderValue::from_static("")),
            ),
            (
                header::SEC_WEBSOCKET_PROTOCOL,
                HeaderValue::from_static(enc.subprotocol()),
            ),
        ],
    )
        .into_response()
}

fn role_gauge<'a>(env: &'a Env, who: &Principal) -> &'a std::sync::atomic::AtomicI64 {
    match who.role() {
        None => &env.metrics.conns_spectator,
        Some(Role::Player) => &env.metrics.conns_player,
        Some(Role::Arbiter) => &env.metrics.conns_arbiter,
        Some(Role::Organizer) => &env.metrics.conns_organizer,
    }
}

/// Token bucket: `rate` per second, burst `2 * rate`.
struct Bucket {
    tokens: f64,
    rate: f64,
    last: Instant,
}

impl Bucket {
    fn new(rate: u32) -> Bucket {
        Bucket {
            tokens: 2.0 * rate as f64,
            rate: rate as f64,
            last: Instant::now(),
        }
    }
    fn take(&mut self) -> bool {
        let now = Instant::now();
        let dt = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + dt * self.rate).min(2.0 * self.rate);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

struct Conn {
    env: Env,
    who: Arc<Principal>,
    out: Outbox,
    games: chuhe_store::IdMap<i64, GameHandle>,
    lag: LagEstimator,
}

/// A client frame's handling that waits ([`Conn::on_frame`]).
enum Slow {
    League(u32, client_message::Kind),
    Lobby(u32, String),
    Desk(u32, String),
    /// A request to a game this connection holds no live handle of yet.
    Game {
        req: u32,
        id: i64,
        game_id: String,
        body: Body,
    },
}

/// Why a connection's loop ended.
enum End {
    /// The client closed, or the socket broke while reading: flush what is queued, close.
    ClientGone,
    /// We close: kicked (too slow, rate limited, frame too large) or shutting down.
    Closing {
        code: u16,
        reason: &'static str,
        bye: Option<Message>,
    },
    /// A write failed or timed out: nothing more can be sent.
    WriteFailed,
}

/// One task per connection: it reads the client's frames, writes the queued ones and pings,
/// all on the one socket (no split halves, no second task). While it waits with nothing
/// queued, the games write their frames to the socket themselves ([`crate::socket`]), so a
/// frame for an idle connection wakes nobody. A write that must wait (the client reads slowly)
/// holds back reading for up to the write timeout; the client's moves wait in its own socket
/// meanwhile.
async fn run(
    env: Env,
    mut socket: WebSocket,
    shared: Arc<SharedSocket>,
    enc: Encoding,
    who: Principal,
    conn_id: u64,
) {
    let gauge = role_gauge(&env, &who);
    gauge.fetch_add(1, Ordering::Relaxed);
    env.desks.connected(who.id());
    crate::calls::presence_changed(&env, who.id());
    debug!("connected");
    // Room for a whole resume (the replay of up to `replay_events` events and its reply, or a
    // league stream's whole replay ring) besides the frames the queue may hold anyway: a client
    // resuming exactly at the replay limit gets its events, not a 4008 it would loop on. The
    // league ring's size also holds a round's burst of `game_created` entries (one per board)
    // for rounds of up to that many boards. The queue grows only as frames come: the bound
    // costs an idle connection nothing.
    let resume = env.config.replay_events.max(crate::league::runner::REPLAY);
    let capacity = env.config.write_queue + resume + 1;
    let (out, mut rx, kick) = Outbox::new(conn_id, enc, capacity);
    // While this task waits with nothing queued, games write frames straight to the socket.
    rx.write_directly(shared);
    let who = Arc::new(who);
    out.send_msg(ServerMessage {
        kind: Some(server_message::Kind::Welcome(w::Welcome {
            protocol: 1,
            server_version: env!("CARGO_PKG_VERSION").into(),
            role: who.wire_role() as i32,
            principal_id: who.id().map(|i| i.to_string()).unwrap_or_default(),
            display_name: who
                .account
                .as_ref()
                .map(|a| a.name.clone())
                .unwrap_or_default(),
            max_frame_bytes: env.config.max_frame_bytes as u32,
            rate_limit_per_sec: env.config.rate_per_sec,
            server_time_ms: env.time.now_ms(),
            heartbeat_ms: u32::try_from(env.config.heartbeat_interval.as_millis())
                .unwrap_or(u32::MAX),
        })),
    });
    env.desks.attach(who.id(), &out);
    let mut c = Conn {
        env: env.clone(),
        who,
        out,
        games: chuhe_store::IdMap::default(),
        lag: LagEstimator::default(),
    };
    let mut bucket = Bucket::new(env.config.rate_per_sec);
    // Whether anything arrived since the last ping, and for how long nothing has.
    let mut heard = true;
    let mut silent = Duration::ZERO;
    let mut refused = 0u32;
    let mut shutdown = env.shutdown.clone();
    let probe = env.shutdown.clone();
    let timeout = env.config.write_timeout;
    let ping_every = env.config.ping_interval;
    // The liveness rule (docs/protocol.md, "Liveness"): the connection's one timer ticks every
    // heartbeat interval; a tick that finds nothing written since the last one writes a
    // `Heartbeat`, and every `ping_interval` a tick also pings.
    let beat = env.config.heartbeat_interval;
    let tick = if beat.is_zero() {
        ping_every
    } else {
        beat.min(ping_every)
    };
    let mut since_ping = ping_every;
    // After the first ping (at once), each connection pings at its own phase of the interval:
    // connections that arrived together (a round starting, a node restarting) would otherwise
    // ping in the same tick every interval, and the thousands of pings and pongs of that tick
    // delay whatever the server sends then (a move to a board's spectators).
    let mut phase = ping_phase(conn_id, tick, ping_every);
    // The welcome is on its way: the first tick needs no heartbeat.
    let mut wrote = true;
    // Created once, not per loop turn: re-creating them would register and unregister
    // their wakers (a lock each) for every frame.
    let kicked = kick.kicked();
    tokio::pin!(kicked);
    let shut = shutdown.changed();
    tokio::pin!(shut);
    // The first ping goes out at once (a first round-trip estimate), then one per interval.
    let ping = tokio::time::sleep_until(Instant::now());
    tokio::pin!(ping);
    let mut signals = Signals {
        kick: &kick,
        kicked,
        probe: &probe,
        shut,
        ping,
        armed: None,
    };
    let end = loop {
        tokio::select! {
            biased;
            signal = &mut signals => match signal {
                Signal::Kicked(code) => break kicked_end(&env, enc, code),
                Signal::Shutdown => break End::Closing {
                    code: close::GOING_AWAY,
                    reason: "server shutting down",
                    bye: Some(goodbye(enc, "shutdown", "the server is restarting; reconnect with the last seq you saw", 1000)),
                },
                Signal::Ping => {
                    signals.ping_sent(Instant::now() + tick);
                    since_ping += tick;
                    let ping = since_ping >= ping_every;
                    if ping {
                        since_ping = std::mem::take(&mut phase);
                        // Silence is counted in ping intervals (no clock read per frame).
                        silent = if heard { Duration::ZERO } else { silent + ping_every };
                        heard = false;
                        if silent >= env.config.peer_timeout {
                            debug!("nothing heard from the client for the peer timeout");
                            break End::Closing { code: close::SILENT, reason: "no answer to pings", bye: None };
                        }
                    }
                    let direct = rx.wrote_directly();
                    let beats = !beat.is_zero() && !wrote && !direct;
                    wrote = false;
                    if !ping && !beats {
                        continue;
                    }
                    let sent = async {
                        if ping {
                            let now = env.time.now_ms().to_be_bytes();
                            socket.feed(Message::Ping(axum::body::Bytes::copy_from_slice(&now))).await?;
                        }
                        if beats {
                            socket.feed(heartbeat(enc)).await?;
                        }
                        socket.flush().await
                    };
                    if sent.await.is_err() {
                        break End::WriteFailed;
                    }
                }
            },
            next = rx.next() => {
                let item = match next {
                    Next::Frame(item) => Some(item),
                    // What a direct write left pending goes out with the flush.
                    Next::Flush => None,
                    Next::Closed => break End::ClientGone,
                };
                // Everything already queued goes out in one flush (one syscall when it fits
                // the write buffer), bounded by the queue's capacity.
                let batch = async {
                    if let Some(item) = item {
                        socket.feed(out_message(enc, item)).await?;
                    }
                    while let Some(item) = rx.try_recv() {
                        socket.feed(out_message(enc, item)).await?;
                    }
                    socket.flush().await
                };
                match write_within(timeout, batch).await {
                    Ok(Ok(())) => wrote = true,
                    Ok(Err(e)) => { debug!(error = %e, "write failed"); break End::WriteFailed; }
                    // The client reads too slowly: it is told so (goodbye too_slow, close 4008)
                    // after what is already on its way, like a client whose queue overflowed.
                    Err(_) => { debug!("write timed out"); break kicked_end(&env, enc, close::TOO_SLOW); }
                }
            }
            msg = socket.next() => {
                let msg = match msg {
                    Some(Ok(m)) => {
                        heard = true;
                        m
                    }
                    Some(Err(e)) => {
                        debug!(error = %e, "read error");
                        let text = e.to_string();
                        if text.contains("too long") || text.contains("Space limit") || text.contains("size") {
                            kick.kick(close::MESSAGE_TOO_BIG);
                            continue; // answered by the kicked branch
                        }
                        break End::ClientGone;
                    }
                    None => break End::ClientGone,
                };
                let (data, is_text) = match &msg {
                    Message::Text(t) => (t.as_str().as_bytes(), true),
                    // Every data message arrives as binary (see `frame_kinds`): whether the
                    // client sent it as text is remembered in order.
                    Message::Binary(b) => (&b[..], socket.get_mut().scan.next_was_text()),
                    Message::Frame(_) => continue,
                    Message::Pong(p) => {
                        c.on_pong(p);
                        continue;
                    }
                    Message::Ping(_) => continue,
                    Message::Close(_) => break End::ClientGone,
                };
                if !bucket.take() {
                    refused += 1;
                    if refused > env.config.flood_limit {
                        env.metrics.rate_limited_closes_total.fetch_add(1, Ordering::Relaxed);
                        kick.kick(close::RATE_LIMITED);
                        continue; // answered by the kicked branch
                    }
                    c.send_error(0, "", &ClientError::RateLimited { per_sec: env.config.rate_per_sec });
                    continue;
                }
                refused = 0;
                // A move to a game this connection plays is routed without awaiting. What must
                // wait (a league, lobby or desk subscription, a game looked up or loaded) is a
                // large future: boxed, it is allocated only while such a frame is handled
                // instead of inside every idle connection's task.
                if let Some(slow) = c.on_frame(data, is_text) {
                    Box::pin(c.on_slow(slow)).await;
                }
            }
        }
    };
    // From here on every frame is queued and written by this task, before its close frame.
    rx.stop_direct();
    if matches!(
        end,
        End::Closing {
            code: close::GOING_AWAY,
            ..
        }
    ) {
        // The server is stopping: the answers to this connection's requests that the games
        // still hold (a commit in flight, a request waiting behind one) arrive until every
        // shard has settled. Write them before the goodbye, so no request goes unanswered.
        let mut settled = env.settled.clone();
        let forward = async {
            loop {
                tokio::select! {
                    biased;
                    _ = async { settled.wait_for(|done| *done).await.map(|_| ()) } => break,
                    item = rx.recv() => {
                        let Some(item) = item else { break };
                        if socket.send(out_message(enc, item)).await.is_err() {
                            break;
                        }
                    }
                }
            }
        };
        if tokio::time::timeout(env.config.shutdown_grace, forward)
            .await
            .is_err()
        {
            debug!("games did not settle within the grace period");
        }
        flush_queued(&mut socket, &mut rx, enc, Duration::from_secs(2)).await;
    }
    // No more frames for this connection: games stop queueing to it.
    kick.kick(1000);
    for h in c.games.values() {
        h.detach(conn_id);
    }
    let short = Duration::from_secs(2);
    let we_close = match end {
        End::ClientGone => {
            flush_queued(&mut socket, &mut rx, enc, short).await;
            let _ = tokio::time::timeout(short, socket.send(Message::Close(None))).await;
            false
        }
        End::Closing { code, reason, bye } => {
            if code != close::TOO_SLOW && code != close::GOING_AWAY {
                // What is already queued (e.g. the rate-limit errors), bounded by the queue.
                flush_queued(&mut socket, &mut rx, enc, short).await;
            }
            if let Some(b) = bye {
                // A slow reader's goodbye waits behind what is still on its way to it: it may
                // take up to the write timeout more to leave.
                let limit = if code == close::TOO_SLOW {
                    env.config.write_timeout.max(short)
                } else {
                    short
                };
                let _ = tokio::time::timeout(limit, socket.send(b)).await;
            }
            let frame = (code != 1000 || !reason.is_empty()).then(|| CloseFrame {
                code: CloseCode::from(code),
                reason: reason.into(),
            });
            let _ = tokio::time::timeout(short, socket.send(Message::Close(frame))).await;
            true
        }
        End::WriteFailed => true,
    };
    if we_close {
        // Finish the closing handshake, reading and discarding what the client still sends,
        // so the socket is not reset with our Goodbye and close frame unread.
        let _ = tokio::time::timeout(short, async {
            while let Some(Ok(m)) = socket.next().await {
                if matches!(m, Message::Close(_)) {
                    break;
                }
            }
        })
        .await;
    }
    let _ = tokio::time::timeout(short, SinkExt::close(&mut socket)).await;
    gauge.fetch_sub(1, Ordering::Relaxed);
    env.desks.left(c.who.id(), env.time.now_ms());
    env.desks.detach(c.who.id(), c.out.conn_id);
    crate::calls::presence_changed(&env, c.who.id());
    debug!("disconnected");
}

/// A connection's rare wake-ups: kicked, the server shutting down, time to ping.
enum Signal {
    Kicked(u16),
    Shutdown,
    Ping,
}

/// The rare wake-ups of a connection as one future that is cheap to poll again. Each source
/// (the kick's `Notify`, the shutdown `watch`, the ping timer) is polled until it holds the
/// task's waker; after that a poll — one per frame read or written, the busy path — only
/// looks at atomics and the clock instead of locking a `Notify` and a `watch` and touching
/// the timer each time. The sources keep the waker and wake the task when they fire.
struct Signals<'a, K, S> {
    kick: &'a Kick,
    kicked: std::pin::Pin<&'a mut K>,
    /// A receiver of the shutdown flag for looking (`shut` borrows the other one).
    probe: &'a tokio::sync::watch::Receiver<bool>,
    shut: std::pin::Pin<&'a mut S>,
    ping: std::pin::Pin<&'a mut tokio::time::Sleep>,
    /// The waker every source holds, once they all do.
    armed: Option<std::task::Waker>,
}

impl<K, S> Signals<'_, K, S> {
    /// Schedules the next ping; the timer is polled again (and so armed) at the next poll.
    fn ping_sent(&mut self, next: Instant) {
        self.ping.as_mut().reset(next);
        self.armed = None;
    }
}

impl<K: Future<Output = u16>, S: Future> Future for Signals<'_, K, S> {
    type Output = Signal;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Signal> {
        use std::task::Poll;
        let this = &mut *self;
        if this.armed.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            if let Some(code) = this.kick.code() {
                return Poll::Ready(Signal::Kicked(code));
            }
            if !matches!(this.probe.has_changed(), Ok(false)) {
                return Poll::Ready(Signal::Shutdown);
            }
            // The timer entry's own flag (set when the driver fires it, which is also what
            // wakes us): no clock read per poll.
            if this.ping.is_elapsed() {
                return Poll::Ready(Signal::Ping);
            }
            return Poll::Pending;
        }
        if let Poll::Ready(code) = this.kicked.as_mut().poll(cx) {
            return Poll::Ready(Signal::Kicked(code));
        }
        if this.shut.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Signal::Shutdown);
        }
        if this.ping.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Signal::Ping);
        }
        this.armed = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Where in the ping interval connection `conn` pings after its first ping: a whole number of
/// ticks, spread over the interval by the connection's number.
fn ping_phase(conn: u64, tick: Duration, ping_every: Duration) -> Duration {
    let ticks = (ping_every.as_nanos() / tick.as_nanos().max(1)).max(1);
    let k = u32::try_from(u128::from(conn) % ticks).unwrap_or(0);
    tick * k
}

/// How a connection kicked with `code` closes.
fn kicked_end(env: &Env, enc: Encoding, code: u16) -> End {
    let bye = match code {
        close::TOO_SLOW => {
            env.metrics
                .dropped_slow_total
                .fetch_add(1, Ordering::Relaxed);
            tracing::info!("dropping a connection too slow to read what it is sent (4008)");
            Some(goodbye(
                enc,
                "too_slow",
                "your connection could not keep up; reconnect with the last seq you saw",
                1000,
            ))
        }
        close::RATE_LIMITED => Some(goodbye(enc, "rate_limited", "too many messages", 10_000)),
        _ => None,
    };
    let reason = match code {
        close::OWNER_UNREACHABLE => "the game's node is unreachable from here",
        close::TOO_SLOW => "too slow",
        close::RATE_LIMITED => "rate limited",
        close::MESSAGE_TOO_BIG => "frame too large",
        _ => "",
    };
    End::Closing { code, reason, bye }
}

/// The `Heartbeat` frame, the same bytes for every connection of an encoding (what
/// `encode` makes of it; checked by a test): no allocation per beat.
fn heartbeat(enc: Encoding) -> Message {
    match enc {
        Encoding::Proto => Message::Binary(axum::body::Bytes::from_static(HEARTBEAT_PROTO)),
        Encoding::Json => Message::Text(Utf8Bytes::from_static(HEARTBEAT_JSON)),
    }
}

/// `ServerMessage { heartbeat: {} }` in protobuf: field 60, length-delimited, empty.
const HEARTBEAT_PROTO: &[u8] = &[0xe2, 0x03, 0x00];
const HEARTBEAT_JSON: &str = r#"{"heartbeat":{}}"#;

fn goodbye(enc: Encoding, code: &str, message: &str, after: u32) -> Message {
    let m = ServerMessage {
        kind: Some(server_message::Kind::Goodbye(w::Goodbye {
            code: code.into(),
            message: message.into(),
            reconnect_after_ms: after,
            owner_node: String::new(),
        })),
    };
    encode(enc, &m)
}

/// Writes what is still queued, within `limit`.
async fn flush_queued(socket: &mut WebSocket, rx: &mut Inbox, enc: Encoding, limit: Duration) {
    let _ = tokio::time::timeout(limit, async {
        while let Some(item) = rx.try_recv() {
            if socket.feed(out_message(enc, item)).await.is_err() {
                break;
            }
        }
        let _ = socket.flush().await;
    })
    .await;
}

/// Runs `fut` with a deadline, arming the timer only when the first poll does not finish
/// (the usual write goes straight into the socket buffer and needs no timer).
async fn write_within<F: std::future::Future>(
    limit: Duration,
    fut: F,
) -> Result<F::Output, tokio::time::error::Elapsed> {
    let mut fut = std::pin::pin!(fut);
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(fut.as_mut().poll(cx))).await;
    match first {
        std::task::Poll::Ready(out) => Ok(out),
        std::task::Poll::Pending => tokio::time::timeout(limit, fut).await,
    }
}

fn out_message(enc: Encoding, item: Out) -> Message {
    match item {
        Out::Shared(f) => f.ws_message(enc),
        Out::Own(m) => encode(enc, &m),
    }
}

fn encode(enc: Encoding, m: &ServerMessage) -> Message {
    match enc {
        Encoding::Proto => Message::Binary(m.encode_to_vec().into()),
        Encoding::Json => Message::Text(chuhe_proto::encode_json(m).into()),
    }
}

/// Decodes a client's frame as the connection's encoding asks: its size, its type (text for
/// JSON, binary for protobuf), UTF-8 for text, then the message. Pure: every refusal is a
/// typed [`ClientError`] the connection answers, never a panic.
pub(crate) fn decode_client_frame(
    data: &[u8],
    is_text: bool,
    enc: Encoding,
    limit: usize,
) -> Result<ClientMessage, ClientError> {
    if data.len() > limit {
        return Err(ClientError::FrameTooLarge {
            size: data.len(),
            limit,
        });
    }
    if is_text != (enc == Encoding::Json) {
        return Err(ClientError::WrongFrameType);
    }
    let decoded = if is_text {
        let text = std::str::from_utf8(data)
            .map_err(|_| ClientError::MalformedFrame("not UTF-8".into()))?;
        chuhe_proto::decode_json(text)
    } else {
        chuhe_proto::decode_proto(data)
    };
    decoded.map_err(|e| ClientError::MalformedFrame(e.to_string()))
}

impl Conn {
    fn on_pong(&mut self, payload: &[u8]) {
        let Ok(b) = <[u8; 8]>::try_from(payload) else {
            return;
        };
        let sent = u64::from_be_bytes(b);
        let now = self.env.time.now_ms();
        if sent <= now {
            self.lag.record(Duration::from_millis(now - sent));
        }
    }

    fn send_error(&self, req: u32, game: &str, e: &ClientError) {
        self.env
            .metrics
            .client_errors_total
            .fetch_add(1, Ordering::Relaxed);
        debug!(code = e.code(), "client error");
        self.out.send_msg(ServerMessage {
            kind: Some(server_message::Kind::Error(e.to_wire(req, game))),
        });
    }

    /// Handles a client frame as far as it can without waiting: a request to a game this
    /// connection already talks to (a move) is routed here; what must wait (a league, lobby or
    /// desk subscription, a game to look up) comes back, for [`Conn::on_slow`].
    fn on_frame(&mut self, data: &[u8], is_text: bool) -> Option<Slow> {
        let limit = self.env.config.max_frame_bytes;
        let msg = match decode_client_frame(data, is_text, self.out.encoding, limit) {
            Ok(m) => m,
            Err(e) => {
                self.send_error(0, "", &e);
                return None;
            }
        };
        let req = msg.request_id;
        let Some(kind) = msg.kind else {
            self.send_error(req, "", &ClientError::UnknownMessage);
            return None;
        };
        use client_message::Kind as K;
        let (game_id, body) = match kind {
            k @ (K::LeagueSubscribe(_)
            | K::LeagueUnsubscribe(_)
            | K::LeagueLineup(_)
            | K::LeagueChooseColour(_)) => return Some(Slow::League(req, k)),
            K::LobbySubscribe(d) => return Some(Slow::Lobby(req, d.league_id)),
            K::ArbiterDeskSubscribe(d) => return Some(Slow::Desk(req, d.league_id)),
            K::Ping(p) => {
                self.out.send_msg(ServerMessage {
                    kind: Some(server_message::Kind::Pong(w::Pong {
                        client_time_ms: p.client_time_ms,
                        server_time_ms: self.env.time.now_ms(),
                    })),
                });
                return None;
            }
            K::ListGames(_) => {
                self.out.send_msg(ServerMessage {
                    kind: Some(server_message::Kind::GameList(w::GameList {
                        games: self.env.registry.live_games_of(),
                    })),
                });
                return None;
            }
            k => match crate::request::game_request(k) {
                Some(Ok(r)) => r,
                Some(Err((game, e))) => {
                    self.send_error(req, &game, &e);
                    return None;
                }
                None => {
                    self.send_error(req, "", &ClientError::UnknownMessage);
                    return None;
                }
            },
        };
        let Ok(id) = game_id.parse::<i64>() else {
            self.send_error(req, &game_id, &ClientError::GameNotFound(game_id.clone()));
            return None;
        };
        // A game this connection already talks to is found without awaiting; otherwise it is
        // looked up (and maybe loaded from the store) first.
        if !self.games.get(&id).is_some_and(GameHandle::is_alive) {
            return Some(Slow::Game {
                req,
                id,
                game_id,
                body,
            });
        }
        self.route(req, id, &game_id, body);
        None
    }

    /// What a client frame needed to wait for ([`Conn::on_frame`]).
    async fn on_slow(&mut self, slow: Slow) {
        match slow {
            Slow::League(req, k) => {
                crate::league::ws::on_message(&self.env, &self.who, &self.out, req, k).await
            }
            Slow::Lobby(req, league) => {
                crate::calls::subscribe_lobby(&self.env, &self.who, &self.out, req, &league).await
            }
            Slow::Desk(req, league) => {
                crate::calls::subscribe_desk(&self.env, &self.who, &self.out, req, &league).await
            }
            Slow::Game {
                req,
                id,
                game_id,
                body,
            } => {
                if let Err(e) = self.handle(id).await {
                    if e == ClientError::Unavailable && crate::node::cut_off(&self.env) {
                        // Several nodes, cut off from the coordination service: the client is
                        // told to reconnect to a node that can serve the game.
                        return crate::node::redirect(&self.out, None);
                    }
                    return self.send_error(req, &game_id, &e);
                }
                self.route(req, id, &game_id, body);
            }
        }
    }

    /// Sends a request to a game whose handle this connection holds.
    fn route(&mut self, req: u32, id: i64, game_id: &str, body: Body) {
        let unsubscribe = matches!(body, Body::Unsubscribe);
        let lag = self.lag.estimate();
        let r = Request {
            req,
            who: self.who.clone(),
            out: self.out.clone(),
            lag,
            received: Instant::now(),
            body,
        };
        let sent = match self.games.get(&id) {
            Some(handle) => handle.send(r),
            None => Err(ClientError::GameNotFound(game_id.to_string())),
        };
        if let Err(e) = sent {
            self.send_error(req, game_id, &e);
        }
        if unsubscribe {
            self.games.remove(&id);
        }
    }

    /// Looks the game up (loading it from the store if need be) and keeps its handle.
    async fn handle(&mut self, id: i64) -> Result<(), ClientError> {
        let h = self.env.registry.get_or_load(id).await?;
        self.games.insert(id, h);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_heartbeat_frames_are_what_encoding_a_heartbeat_makes() {
        let m = ServerMessage {
            kind: Some(server_message::Kind::Heartbeat(w::Heartbeat {})),
        };
        for enc in [Encoding::Proto, Encoding::Json] {
            assert_eq!(heartbeat(enc), encode(enc, &m), "{enc:?}");
        }
        let back: ServerMessage = chuhe_proto::decode_json(HEARTBEAT_JSON).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn connections_that_arrive_together_ping_at_phases_spread_over_the_interval() {
        let (tick, every) = (Duration::from_secs(1), Duration::from_secs(5));
        let mut per_phase = [0u32; 5];
        for conn in 0..1000 {
            let p = ping_phase(conn, tick, every);
            assert!(p < every, "{p:?}");
            assert_eq!(p.subsec_nanos(), 0, "a whole number of ticks");
            per_phase[p.as_secs() as usize] += 1;
        }
        assert_eq!(per_phase, [200; 5], "the same share at every phase");
        // Pings every tick (or faster than the tick): no phase.
        assert_eq!(ping_phase(7, tick, tick), Duration::ZERO);
        assert_eq!(
            ping_phase(7, tick, Duration::from_millis(100)),
            Duration::ZERO
        );
        assert_eq!(ping_phase(7, Duration::ZERO, every), Duration::ZERO);
    }
}
