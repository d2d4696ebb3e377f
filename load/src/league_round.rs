//! `chuhe-load league-round`: a league round of many boards starting at one scheduled instant
//! (issue 19's benchmark). The organizer creates a round-robin event whose round 1 has
//! `boards` boards, publishes it, and lets the server do the rest: at the lineup deadline the
//! registered orders are applied, `open_before` before the start the league's driver sets up
//! every board's game, and at the scheduled instant every game's clock starts. One spectator
//! per board subscribes as soon as the league announces the board's game.
//!
//! Measured, per board, against the scheduled instant T:
//! - **start lateness**: the server time of the game's `started` event (when the server
//!   decided the start; the clocks themselves start at T) minus T, from the game's stored log;
//! - **spectator sees the start**: when the board's spectator received the first message that
//!   shows the game started (the `started` event, or a snapshot with a running clock) minus T;
//! - when the board's game was announced (the league's `game_created`) relative to T.
//!
//! The server is a running `chuhe serve` (its own process); the clocks of both processes are
//! the same machine's.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use chuhe_proto::v1::{
    self as w, ClientMessage, ServerMessage, client_message, game_event, server_message,
};
use chuhe_proto::{Encoding, decode_proto, encode_proto};
use futures_util::{SinkExt, StreamExt};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

use crate::chuhe::{ApiError, Organizer};
use crate::report::{Machine, machine};

/// What to run.
#[derive(Clone, Debug, Serialize)]
pub struct Options {
    /// Boards in the round (a multiple of `boards_per_match`).
    pub boards: usize,
    /// Boards per match (the event's `boards`, at most 64).
    pub boards_per_match: usize,
    /// From the event's creation to the round's start.
    pub lead_ms: u64,
    /// How long before the start the server sets up the round's games (`games_open_before`;
    /// 0: at the start itself).
    pub open_before_ms: u64,
    /// The games' time control (long: no flag falls during a run).
    pub time_control: String,
    /// Spectator connects in flight at most.
    pub connect_concurrency: usize,
    /// Every client gives up this long after the scheduled instant.
    pub give_up_after_ms: u64,
}

/// Why the run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RoundError {
    #[error("{0}")]
    Options(String),
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error("league stream: {0}")]
    Stream(String),
}

/// p50/p99/max (and min) of a set of millisecond values, nearest rank.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Spread {
    pub count: usize,
    pub min_ms: i64,
    pub p50_ms: i64,
    pub p99_ms: i64,
    pub max_ms: i64,
}

impl Spread {
    pub fn of(mut v: Vec<i64>) -> Spread {
        if v.is_empty() {
            return Spread::default();
        }
        v.sort_unstable();
        let rank = |p: usize| v[((v.len() * p).div_ceil(100)).clamp(1, v.len()) - 1];
        Spread {
            count: v.len(),
            min_ms: v[0],
            p50_ms: rank(50),
            p99_ms: rank(99),
            max_ms: v[v.len() - 1],
        }
    }
}

/// What the run saw.
#[derive(Clone, Debug, Serialize)]
pub struct RoundReport {
    pub scenario: &'static str,
    pub options: Options,
    pub machine: Machine,
    pub league: String,
    pub teams: usize,
    /// The round's scheduled start, Unix ms.
    pub scheduled_ms: u64,
    /// Creating the event (its accounts included), ms.
    pub create_ms: u64,
    /// The league's `game_created` announcements relative to T (negative: before).
    pub games_announced: Spread,
    /// Server time of each game's `started` event minus T.
    pub start_lateness: Spread,
    /// Games whose clocks did not start exactly at T (`startedAtMs`), and games whose log
    /// has no start.
    pub clock_not_at_scheduled_instant: usize,
    pub not_started: usize,
    /// When each board's spectator first saw the game started, minus T.
    pub spectator_sees_start: Spread,
    pub spectators_connected: usize,
    pub spectators_missing: usize,
    /// Every clock started within 100 ms of T.
    pub goal_met: bool,
}

impl RoundReport {
    pub fn clean(&self) -> bool {
        self.not_started == 0
            && self.spectators_missing == 0
            && self.clock_not_at_scheduled_instant == 0
    }

    pub fn human(&self) -> String {
        let s = |x: &Spread| {
            format!(
                "p50 {} ms, p99 {} ms, max {} ms (min {} ms, n={})",
                x.p50_ms, x.p99_ms, x.max_ms, x.min_ms, x.count
            )
        };
        format!(
            "league-round: {} boards ({} teams x {} boards), league {}, games set up {} ms before the start\n\
             machine: {} CPUs, {}\n\
             event created in {} ms\n\
             games announced (vs start): {}\n\
             clock start lateness (started event vs scheduled instant): {}\n\
             spectator sees the start (vs scheduled instant): {}\n\
             spectators connected {}, missing {}; games not started {}; clocks not at the instant {}\n\
             goal (every clock within 100 ms): {}\n",
            self.options.boards,
            self.teams,
            self.options.boards_per_match,
            self.league,
            self.options.open_before_ms,
            self.machine.cpus,
            self.machine.cpu_model,
            self.create_ms,
            s(&self.games_announced),
            s(&self.start_lateness),
            s(&self.spectator_sees_start),
            self.spectators_connected,
            self.spectators_missing,
            self.not_started,
            self.clock_not_at_scheduled_instant,
            if self.goal_met { "met" } else { "MISSED" },
        )
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The event file: `teams` teams of `boards_per_match` players, round 1 at `start_ms`.
pub fn event_spec(run: &str, o: &Options, teams: usize, start_ms: u64) -> Value {
    let teams: Vec<Value> = (1..=teams)
        .map(|t| {
            json!({
                "name": format!("LR {run} team {t}"),
                "players": (1..=o.boards_per_match)
                    .map(|p| format!("lr-{run}-t{t}-p{p}"))
                    .collect::<Vec<_>>(),
                "captains": [format!("lr-{run}-t{t}-captain")],
            })
        })
        .collect();
    // Lineups: none submitted, so the registered orders apply at the deadline, a little
    // before the games are set up.
    let deadline_before = o.open_before_ms + 2_000;
    json!({
        "name": format!("chuhe-load league-round {run}"),
        "system": "round_robin",
        "legs": 1,
        "boards": o.boards_per_match,
        "result_chain": {"preset": "single", "time_control": o.time_control},
        "lineup": {"deadline_before": deadline_before.to_string()},
        "lateness": "0",
        "games_open_before": o.open_before_ms.to_string(),
        "teams": teams,
        "schedule": {"first_round": start_ms.to_string(), "every": "1d"},
    })
}

/// Runs the round against the chuhe server at `url` (`ws://127.0.0.1:PORT/ws`).
pub async fn run(
    url: &str,
    addr: SocketAddr,
    token: &str,
    o: Options,
) -> Result<RoundReport, RoundError> {
    if o.boards_per_match == 0 || o.boards_per_match > 64 || o.boards % o.boards_per_match != 0 {
        return Err(RoundError::Options(format!(
            "--boards ({}) must be a multiple of --boards-per-match (1 to 64, got {})",
            o.boards, o.boards_per_match
        )));
    }
    let teams = 2 * o.boards / o.boards_per_match;
    if teams > 200 {
        return Err(RoundError::Options(format!(
            "{teams} teams: at most 200 (raise --boards-per-match)"
        )));
    }
    let _ = crate::net::raise_fd_limit();
    let run = format!("{:x}", now_ms());
    let mut org = Organizer::connect(addr, token).await?;
    let t0 = now_ms();
    let start = t0 + o.lead_ms;
    let spec = event_spec(&run, &o, teams, start);
    let created: Value = org.call("POST", "/api/v1/leagues", Some(&spec)).await?;
    let create_ms = now_ms() - t0;
    let league = created["id"]
        .as_str()
        .ok_or_else(|| RoundError::Stream(format!("no league id in {created}")))?
        .to_string();
    if now_ms() + o.open_before_ms + 2_000 > start {
        return Err(RoundError::Options(format!(
            "creating the event took {create_ms} ms: raise --lead above it plus --open-before and 2 s"
        )));
    }
    // The league's stream first, so no announcement is missed.
    let mut stream = connect(url).await?;
    send(
        &mut stream,
        client_message::Kind::LeagueSubscribe(w::LeagueSubscribe {
            league_id: league.clone(),
            last_seq: 0,
            feed: false,
        }),
    )
    .await?;
    let _: Value = org
        .call(
            "POST",
            &format!("/api/v1/leagues/{league}/publish"),
            None::<&Value>,
        )
        .await?;

    // Each announced game gets a spectator.
    let give_up =
        tokio::time::Instant::now() + Duration::from_millis(o.lead_ms + o.give_up_after_ms);
    let gate = Arc::new(Semaphore::new(o.connect_concurrency.max(1)));
    let mut games = Vec::with_capacity(o.boards);
    let mut announced = Vec::with_capacity(o.boards);
    let mut watchers = tokio::task::JoinSet::new();
    while games.len() < o.boards {
        let msg = tokio::time::timeout_at(give_up, stream.next())
            .await
            .map_err(|_| {
                RoundError::Stream(format!(
                    "only {} of {} games announced",
                    games.len(),
                    o.boards
                ))
            })?
            .ok_or_else(|| RoundError::Stream("the league stream closed".into()))?
            .map_err(|e| RoundError::Stream(e.to_string()))?;
        let Some(update) = league_update(msg) else {
            continue;
        };
        if update.kind != "game_created" {
            continue;
        }
        let v: Value =
            serde_json::from_str(&update.json).map_err(|e| RoundError::Stream(e.to_string()))?;
        let Some(game) = v["game"].as_i64() else {
            continue;
        };
        announced.push(now_ms() as i64 - start as i64);
        games.push(game);
        let (url, gate) = (url.to_string(), gate.clone());
        watchers.spawn(async move { watch(&url, game, gate, give_up).await });
    }
    drop(stream);
    let mut seen = Vec::new();
    let mut missing = 0;
    let mut connected = 0;
    while let Some(r) = watchers.join_next().await {
        match r {
            Ok(Ok((c, Some(at)))) => {
                connected += usize::from(c);
                seen.push(at as i64 - start as i64);
            }
            Ok(Ok((c, None))) => {
                connected += usize::from(c);
                missing += 1;
            }
            _ => missing += 1,
        }
    }

    // The server's side: each game's stored start. A fresh connection: the server closes a
    // keep-alive connection left idle past its handshake timeout (10 s), as this one was.
    let mut org = Organizer::connect(addr, token).await?;
    let mut lateness = Vec::with_capacity(games.len());
    let (mut off, mut not_started) = (0, 0);
    for g in &games {
        let log: w::GameEventLog = org
            .call("GET", &format!("/api/v1/games/{g}/events"), None::<&Value>)
            .await?;
        let started = log.events.iter().find_map(|e| match &e.kind {
            Some(game_event::Kind::Started(s)) => Some((e.at_ms, s.started_at_ms)),
            _ => None,
        });
        match started {
            Some((at, clocks)) => {
                lateness.push(at as i64 - start as i64);
                off += usize::from(clocks != start);
            }
            None => not_started += 1,
        }
    }
    let start_lateness = Spread::of(lateness);
    let goal_met = not_started == 0 && start_lateness.count > 0 && start_lateness.max_ms <= 100;
    Ok(RoundReport {
        scenario: "league-round",
        options: o,
        machine: machine(),
        league,
        teams,
        scheduled_ms: start,
        create_ms,
        games_announced: Spread::of(announced),
        start_lateness,
        clock_not_at_scheduled_instant: off,
        not_started,
        spectator_sees_start: Spread::of(seen),
        spectators_connected: connected,
        spectators_missing: missing,
        goal_met,
    })
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(url: &str) -> Result<Ws, RoundError> {
    let mut req = url
        .into_client_request()
        .map_err(|e| RoundError::Stream(e.to_string()))?;
    req.headers_mut().insert(
        "sec-websocket-protocol",
        HeaderValue::from_static(Encoding::Proto.subprotocol()),
    );
    let (ws, _) = tokio_tungstenite::connect_async_with_config(
        req,
        Some(crate::net::client_ws_config()),
        true,
    )
    .await
    .map_err(|e| RoundError::Stream(e.to_string()))?;
    Ok(ws)
}

async fn send(ws: &mut Ws, kind: client_message::Kind) -> Result<(), RoundError> {
    let m = ClientMessage {
        request_id: 1,
        kind: Some(kind),
    };
    ws.send(Message::Binary(encode_proto(&m).into()))
        .await
        .map_err(|e| RoundError::Stream(e.to_string()))
}

fn decode(msg: Message) -> Option<ServerMessage> {
    match msg {
        Message::Binary(b) => decode_proto(&b).ok(),
        Message::Text(t) => chuhe_proto::decode_json(&t).ok(),
        _ => None,
    }
}

fn league_update(msg: Message) -> Option<w::LeagueUpdate> {
    match decode(msg)?.kind {
        Some(server_message::Kind::League(u)) => Some(u),
        _ => None,
    }
}

/// A spectator of `game`: (whether it connected, when it first saw the game started, Unix ms).
async fn watch(
    url: &str,
    game: i64,
    gate: Arc<Semaphore>,
    give_up: tokio::time::Instant,
) -> Result<(bool, Option<u64>), RoundError> {
    let permit = gate
        .acquire_owned()
        .await
        .map_err(|e| RoundError::Stream(e.to_string()))?;
    let mut ws = tokio::time::timeout_at(give_up, connect(url))
        .await
        .map_err(|_| RoundError::Stream("connect timed out".into()))??;
    send(
        &mut ws,
        client_message::Kind::Subscribe(w::Subscribe {
            game_id: game.to_string(),
            last_seq: 0,
        }),
    )
    .await?;
    drop(permit);
    loop {
        let Ok(Some(Ok(msg))) = tokio::time::timeout_at(give_up, ws.next()).await else {
            return Ok((true, None));
        };
        let Some(m) = decode(msg) else { continue };
        let started = match m.kind {
            Some(server_message::Kind::Event(e)) => {
                matches!(e.kind, Some(game_event::Kind::Started(_)))
            }
            Some(server_message::Kind::Snapshot(s)) => s
                .clock
                .is_some_and(|c| c.running != w::Side::Unspecified as i32),
            _ => false,
        };
        if started {
            let at = now_ms();
            let _ = ws.close(None).await;
            return Ok((true, Some(at)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_nearest_rank() {
        let s = Spread::of((1..=100).rev().collect());
        assert_eq!(
            (s.min_ms, s.p50_ms, s.p99_ms, s.max_ms, s.count),
            (1, 50, 99, 100, 100)
        );
        let s = Spread::of(vec![7]);
        assert_eq!((s.p50_ms, s.p99_ms, s.max_ms), (7, 7, 7));
        assert_eq!(Spread::of(Vec::new()), Spread::default());
    }

    #[test]
    fn the_event_file_has_the_round_asked_for() {
        let o = Options {
            boards: 500,
            boards_per_match: 50,
            lead_ms: 60_000,
            open_before_ms: 20_000,
            time_control: "3h".into(),
            connect_concurrency: 64,
            give_up_after_ms: 30_000,
        };
        let v = event_spec("x", &o, 20, 1_900_000_000_000);
        assert_eq!(v["teams"].as_array().map(Vec::len), Some(20));
        assert_eq!(v["teams"][0]["players"].as_array().map(Vec::len), Some(50));
        assert_eq!(v["boards"], 50);
        assert_eq!(v["games_open_before"], "20000");
        assert_eq!(v["lineup"]["deadline_before"], "22000");
    }
}
