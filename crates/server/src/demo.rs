//! `chuhe serve --demo`: demo accounts and random-mover bots that keep a
//! couple of live games going, so a newcomer sees boards move at once.
//!
//! A bot is an in-process client: it talks to its game actor through the
//! same requests and outbox a websocket connection uses.

use std::sync::Arc;
use std::time::Duration;

use chuhe_proto::v1::{CreateGameRequest, game_event, server_message};
use tokio::time::Instant;
use tracing::{debug, info};

use crate::outbox::{Out, Outbox};
use crate::persist::{Account, Persist, Role};
use crate::request::{Body, Principal, Request};
use crate::{Env, admin};

/// What the demo seeding created: (id, name, token) per role.
pub struct DemoCast {
    pub red: (i64, String, String),
    pub black: (i64, String, String),
    pub arbiter: (i64, String, String),
    pub organizer: (i64, String, String),
    pub game_for_players: i64,
    /// Bot accounts, paired for games.
    pub bot_pairs: Vec<(i64, i64)>,
}

fn suffix() -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!("{:04x}", (n % 65536) as u32)
}

/// Creates the demo accounts, their tokens and a game for the two humans.
pub async fn seed(p: &dyn Persist) -> Result<DemoCast, admin::AdminError> {
    let s = suffix();
    let mut made = Vec::new();
    for (name, role) in [
        (format!("Demo Red {s}"), Role::Player),
        (format!("Demo Black {s}"), Role::Player),
        (format!("Demo Arbiter {s}"), Role::Arbiter),
        (format!("Demo Organizer {s}"), Role::Organizer),
    ] {
        let a = admin::create_player(p, &name, role).await?;
        let (tok, _) = admin::issue_token(p, a.id, Some("demo".into())).await?;
        made.push((a.id, a.name, tok));
    }
    let mut bots = Vec::new();
    for i in 1..=4 {
        let a = admin::create_player(p, &format!("Random Bot {i} {s}"), Role::Player).await?;
        bots.push(a.id);
    }
    let req = CreateGameRequest {
        red_id: made[0].0.to_string(),
        black_id: made[1].0.to_string(),
        time_control: "15m+10s".into(),
        ..CreateGameRequest::default()
    };
    let (row, _, _) = admin::create_game_row(p, &req, 0).await?;
    let mut it = made.into_iter();
    let mut next = || it.next().unwrap_or((0, String::new(), String::new()));
    Ok(DemoCast {
        red: next(),
        black: next(),
        arbiter: next(),
        organizer: next(),
        game_for_players: row.id.0,
        bot_pairs: vec![(bots[0], bots[1]), (bots[2], bots[3])],
    })
}

/// A tiny xorshift generator: demo moves need no cryptographic randomness.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
}

/// Runs bot games forever (until shutdown): a game between the pair, then another.
pub fn spawn_pair(env: Env, red: i64, black: i64, seed: u64) {
    let mut shutdown = env.shutdown.clone();
    tokio::spawn(async move {
        let mut rng = Rng(seed | 1);
        loop {
            tokio::select! {
                _ = shutdown.changed() => return,
                r = play_one(&env, red, black, &mut rng) => {
                    if let Err(e) = r {
                        debug!(error = %e, "demo game stopped");
                    }
                }
            }
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = tokio::time::sleep(Duration::from_secs(5)) => {}
            }
        }
    });
}

async fn play_one(env: &Env, red: i64, black: i64, rng: &mut Rng) -> Result<(), String> {
    let req = CreateGameRequest {
        red_id: red.to_string(),
        black_id: black.to_string(),
        time_control: "5m+3s".into(),
        event: "chuhe demo".into(),
        ..CreateGameRequest::default()
    };
    let info = admin::create_game(env, &req)
        .await
        .map_err(|e| e.to_string())?;
    let gid: i64 = info.game_id.parse().map_err(|_| "bad id".to_string())?;
    info!(game = gid, "demo bot game started");
    let handle = env
        .registry
        .get_or_load(env, gid)
        .await
        .map_err(|e| e.to_string())?;
    let accounts: Vec<Arc<Principal>> = [red, black]
        .iter()
        .map(|id| {
            Arc::new(Principal {
                account: Some(Account {
                    id: *id,
                    name: String::new(),
                    role: Role::Player,
                }),
            })
        })
        .collect();
    let (out, mut rx, _kick) =
        Outbox::new(u64::MAX - gid as u64, chuhe_proto::Encoding::Proto, 1024);
    let send = |body: Body, who: &Arc<Principal>| {
        handle.send(Request {
            req: 0,
            who: who.clone(),
            out: out.clone(),
            lag: Duration::ZERO,
            received: Instant::now(),
            body,
        })
    };
    send(Body::Subscribe { last_seq: 0 }, &accounts[0]).map_err(|e| e.to_string())?;
    let mut fen = info.initial_fen.clone();
    let mut ply = 0u32;
    loop {
        // Whose turn: the FEN says.
        let pos = chuhe_rules::Position::from_fen(&fen).map_err(|e| e.to_string())?;
        if pos.outcome().is_none() {
            let think = 400 + rng.below(1600);
            tokio::time::sleep(Duration::from_millis(think)).await;
            let moves = pos.legal_moves();
            let list: Vec<_> = moves.iter().copied().collect();
            if !list.is_empty() {
                let m = list[rng.below(list.len() as u64) as usize];
                let who = if pos.side_to_move() == chuhe_rules::Color::Red {
                    &accounts[0]
                } else {
                    &accounts[1]
                };
                let _ = send(
                    Body::Move {
                        ply: ply + 1,
                        mv: m.to_iccs(),
                        offer_draw: false,
                        think_ms: None,
                    },
                    who,
                );
            }
        }
        // Wait for the move (or the end) to come back.
        loop {
            let Some(item) = rx.recv().await else {
                return Ok(());
            };
            let msg = match &item {
                Out::Shared(f) => f.message().clone(),
                Out::Own(m) => (**m).clone(),
            };
            match msg.kind {
                Some(server_message::Kind::Snapshot(s)) => {
                    fen = s.fen;
                    ply = s.moves.len() as u32;
                    if s.finished {
                        return Ok(());
                    }
                }
                Some(server_message::Kind::Event(e)) => match e.kind {
                    Some(game_event::Kind::Move(m)) => {
                        if let Some(r) = m.r#move {
                            fen = r.fen;
                            ply = r.ply;
                        }
                        break;
                    }
                    Some(game_event::Kind::Ended(_)) => return Ok(()),
                    _ => {}
                },
                Some(server_message::Kind::Error(_)) => break,
                _ => {}
            }
        }
    }
}
