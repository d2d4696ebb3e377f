//! The shard driving games: commits in order, back-pressure, unloading, and a failed commit
//! changing nothing. These talk to a shard through in-memory channels and a memory store.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use chuhe_proto::v1::{Result as WResult, Side, server_message};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::adopt::{GameSeed, create};
use crate::env::Env;
use crate::handle::{GameHandle, ShardCmd};
use crate::outbox::Outbox;
use crate::persist::{Account, MemoryPersist, NewGame, Persist, Role};
use crate::request::{Body, Principal, Request};
use crate::view::View;

use chuhe_proto::Encoding;

struct Table {
    persist: Arc<MemoryPersist>,
    handle: GameHandle,
    red: Arc<Principal>,
    black: Arc<Principal>,
    out: Outbox,
    rx: crate::outbox::Inbox,
    metrics: Arc<crate::metrics::Metrics>,
    _shutdown: watch::Sender<bool>,
    _done: mpsc::Receiver<()>,
    req: u32,
}

async fn table(fen: &str) -> Table {
    table_with(fen, crate::Config::default()).await
}

async fn table_with(fen: &str, config: crate::Config) -> Table {
    table_full(fen, config, 0).await
}

async fn table_full(fen: &str, config: crate::Config, delay_plies: u32) -> Table {
    let persist = Arc::new(MemoryPersist::default());
    let red = persist.create_account("red", Role::Player).await.unwrap();
    let black = persist.create_account("black", Role::Player).await.unwrap();
    let row = persist
        .create_game(NewGame {
            time_control: "90m+30s".into(),
            start_fen: fen.into(),
            broadcast_delay: chuhe_store::BroadcastDelay {
                moves: delay_plies,
                millis: 0,
            },
            ..crate::persist::test_game(
                chuhe_store::PrincipalId(red.id),
                chuhe_store::PrincipalId(black.id),
            )
        })
        .await
        .unwrap();
    let (sd_tx, sd_rx) = watch::channel(false);
    let (done_tx, done_rx) = mpsc::channel(1);
    let env = Env::start(persist.clone(), config, sd_rx, done_tx);
    let seed = GameSeed {
        row,
        red: red.clone(),
        black: black.clone(),
        move_limit_plies: 0,
        calls: None,
    };
    let handle = create(env.registry.adopt_deps().clone(), seed)
        .await
        .unwrap();
    let (out, rx, _) = Outbox::new(1, Encoding::Proto, 64);
    let who = |a: Account| Arc::new(Principal { account: Some(a) });
    Table {
        persist,
        handle,
        red: who(red),
        black: who(black),
        out,
        rx,
        metrics: env.metrics.clone(),
        _shutdown: sd_tx,
        _done: done_rx,
        req: 0,
    }
}

impl Table {
    /// Sends a move and returns the answer: Ok(seq acknowledged) or Err(error code).
    async fn play(
        &mut self,
        red: bool,
        ply: u32,
        mv: &str,
        offer_draw: bool,
    ) -> Result<u64, String> {
        let id = self.send(red, Body::mv(ply, mv, offer_draw));
        loop {
            let (rid, answer) = self.answer().await;
            if rid == id {
                return answer;
            }
        }
    }

    async fn record(&self) -> View {
        self.handle.record(false).await.unwrap().view
    }

    /// Sends a request without waiting for its answer; returns its request id.
    fn send(&mut self, red: bool, body: Body) -> u32 {
        self.req += 1;
        let who = if red { &self.red } else { &self.black };
        self.handle
            .send(Request {
                req: self.req,
                who: who.clone(),
                out: self.out.clone(),
                lag: Duration::ZERO,
                received: Instant::now(),
                body,
            })
            .unwrap();
        self.req
    }

    /// The next reply or error: (request id, Ok(seq) or Err(code)).
    async fn answer(&mut self) -> (u32, Result<u64, String>) {
        loop {
            let crate::outbox::Out::Own(msg) = self.rx.recv().await.unwrap() else {
                continue;
            };
            match msg.kind {
                Some(server_message::Kind::Reply(r)) => return (r.request_id, Ok(r.seq)),
                Some(server_message::Kind::Error(e)) => return (e.request_id, Err(e.code)),
                _ => {}
            }
        }
    }

    /// Nothing but events is waiting in the outbox.
    fn no_answer_yet(&mut self) -> bool {
        while let Some(out) = self.rx.try_recv() {
            if let crate::outbox::Out::Own(msg) = out {
                if matches!(
                    msg.kind,
                    Some(server_message::Kind::Reply(_) | server_message::Kind::Error(_))
                ) {
                    return false;
                }
            }
        }
        true
    }
}

fn mv(ply: u32, m: &str) -> Body {
    Body::mv(ply, m, false)
}

#[tokio::test]
async fn commands_wait_for_their_games_commit_and_run_in_order() {
    let mut t = table(chuhe_rules::START_FEN).await;
    t.persist.hold(true);
    let a = t.send(true, mv(1, "h2e2"));
    let b = t.send(false, mv(2, "h9g7"));
    let c = t.send(true, mv(3, "h0g2"));
    // A record is answered at once, from what is committed: the shard has taken the three
    // moves, the first is being committed, nothing is acknowledged or visible yet.
    let rec = t.record().await;
    assert!(rec.moves.is_empty(), "an uncommitted move is visible");
    assert!(t.no_answer_yet(), "answered before the commit");
    t.persist.hold(false);
    assert_eq!(t.answer().await, (a, Ok(2)));
    assert_eq!(t.answer().await, (b, Ok(3)));
    assert_eq!(t.answer().await, (c, Ok(4)));
    let rec = t.record().await;
    let iccs: Vec<&str> = rec.moves.iter().map(|m| m.iccs.as_str()).collect();
    assert_eq!(iccs, ["h2e2", "h9g7", "h0g2"]);
}

#[tokio::test]
async fn a_full_backlog_answers_busy_and_loses_nothing_else() {
    let config = crate::Config {
        game_mailbox: 2,
        ..crate::Config::default()
    };
    let mut t = table_with(chuhe_rules::START_FEN, config).await;
    t.persist.hold(true);
    let first = t.send(true, mv(1, "h2e2"));
    let waiting = [t.send(false, mv(2, "h9g7")), t.send(true, mv(3, "h0g2"))];
    let over = t.send(false, Body::Game(chuhe_game::Command::Resign));
    assert_eq!(t.answer().await, (over, Err("busy".into())));
    t.persist.hold(false);
    assert_eq!(t.answer().await, (first, Ok(2)));
    assert_eq!(t.answer().await, (waiting[0], Ok(3)));
    assert_eq!(t.answer().await, (waiting[1], Ok(4)));
    assert!(
        !t.record().await.finished,
        "the refused resignation was not played"
    );
}

#[tokio::test]
async fn a_request_for_a_game_the_shard_does_not_hold_is_answered() {
    let mut t = table(chuhe_rules::START_FEN).await;
    let other = t.handle.id + 1000;
    let r = Request {
        req: 77,
        who: t.red.clone(),
        out: t.out.clone(),
        lag: Duration::ZERO,
        received: Instant::now(),
        body: Body::Game(chuhe_game::Command::Resign),
    };
    t.handle
        .tx
        .try_send(ShardCmd::Client(other, Box::new(r)))
        .unwrap_or_else(|_| panic!("mailbox"));
    assert_eq!(t.answer().await, (77, Err("game_not_found".into())));
}

#[tokio::test]
async fn a_finished_game_unloads_after_lingering() {
    tokio::time::pause();
    let config = crate::Config {
        finished_linger: Duration::from_secs(60),
        ..crate::Config::default()
    };
    let mut t = table_with(chuhe_rules::START_FEN, config).await;
    let r = t.send(true, Body::Game(chuhe_game::Command::Resign));
    assert_eq!(t.answer().await, (r, Ok(2)));
    assert!(t.handle.is_alive());
    tokio::time::advance(Duration::from_secs(59)).await;
    assert!(
        t.record().await.finished,
        "still loaded before the linger is over"
    );
    tokio::time::advance(Duration::from_secs(2)).await;
    // The shard answers records of games it holds only; once unloaded, none comes.
    assert!(t.handle.record(false).await.is_none());
    assert!(!t.handle.is_alive());
}

#[tokio::test]
async fn a_move_whose_commit_fails_is_taken_back_completely() {
    let mut t = table(chuhe_rules::START_FEN).await;
    assert_eq!(t.play(true, 1, "h2e2", false).await, Ok(2));
    let before = t.record().await;
    // Black's knight move (with a draw offer) cannot be stored: refused, nothing changes.
    t.persist.set_failing(true);
    assert_eq!(
        t.play(false, 2, "h9g7", true).await,
        Err("store_unavailable".into())
    );
    t.persist.set_failing(false);
    let after = t.record().await;
    assert_eq!(
        (after.seq, after.moves.len(), after.fen(), after.draw_offer),
        (
            before.seq,
            before.moves.len(),
            before.fen(),
            before.draw_offer
        )
    );
    // The same move is still ply 2 and legal (the knight is back on h9), the clock
    // runs for Black, and it is not mistaken for a resend of a stored move.
    assert_eq!(t.play(false, 2, "h9g7", false).await, Ok(3));
    assert_eq!(
        t.play(false, 2, "h9g7", false).await,
        Ok(3),
        "idempotent resend"
    );
    assert_eq!(
        t.play(false, 2, "马8进7", false).await,
        Ok(3),
        "resend in Chinese"
    );
    assert_eq!(t.play(true, 3, "h0g2", false).await, Ok(4));
    let rec = t.record().await;
    let iccs: Vec<&str> = rec.moves.iter().map(|m| m.iccs.as_str()).collect();
    assert_eq!(iccs, ["h2e2", "h9g7", "h0g2"]);
    assert_eq!(rec.draw_offer, Side::Unspecified as i32);
    let stored = t.persist.events(t.handle.id).await.unwrap();
    assert_eq!(stored.len(), 4, "created + three moves");
}

#[tokio::test]
async fn a_mating_move_whose_commit_fails_leaves_the_game_running() {
    // Red mates with i7i9: the rook on a8 holds the 8th rank.
    let mut t = table("4k4/R8/8R/9/9/9/9/9/9/3K5 w - - 0 1").await;
    t.persist.set_failing(true);
    assert_eq!(
        t.play(true, 1, "i7i9", false).await,
        Err("store_unavailable".into())
    );
    let rec = t.record().await;
    assert!(!rec.finished && rec.moves.is_empty());
    assert_eq!(
        rec.clock.running,
        Side::Red as i32,
        "Red's clock still runs"
    );
    t.persist.set_failing(false);
    assert_eq!(t.play(true, 1, "i7i9", false).await, Ok(2));
    let rec = t.record().await;
    assert!(rec.finished);
    assert_eq!(rec.result, WResult::RedWins as i32);
    assert_eq!(rec.end_reason, "checkmate");
}

#[tokio::test]
async fn the_broadcast_delay_holds_after_a_restart() {
    let mut t = table_full(chuhe_rules::START_FEN, crate::Config::default(), 2).await;
    // The game's description is not delayed: spectators see who plays at once.
    let public = t.handle.record(true).await.unwrap().view;
    assert_eq!(
        (
            public.info.red_name.as_str(),
            public.info.black_name.as_str()
        ),
        ("red", "black")
    );
    assert_eq!(t.handle.summary.lock().unwrap().red_name, "red");
    for (ply, m) in ["h2e2", "h9g7", "h0g2", "i9h9"].iter().enumerate() {
        let red = ply % 2 == 0;
        assert!(t.play(red, ply as u32 + 1, m, false).await.is_ok());
    }
    let public = t.handle.record(true).await.unwrap().view;
    assert_eq!(public.moves.len(), 2, "two plies behind before the restart");
    // The server restarts: a new process takes the game up from the store.
    let (_sd, sd_rx) = watch::channel(false);
    let (done_tx, _done) = mpsc::channel(1);
    let env = Env::start(t.persist.clone(), crate::Config::default(), sd_rx, done_tx);
    let seed = env.registry.load_seed(t.handle.id).await.unwrap();
    let again = crate::adopt::recover(env.registry.adopt_deps().clone(), seed)
        .await
        .unwrap();
    let public = again.record(true).await.unwrap().view;
    assert_eq!(public.moves.len(), 2, "the delay was lost in the restart");
    assert!(public.delayed);
    let live = again.record(false).await.unwrap().view;
    assert_eq!(live.moves.len(), 4);
    let summary = again.summary.lock().unwrap().clone();
    assert_eq!(summary.plies, 2, "the game list shows the delayed count");
}

/// Issue 21, item 1: the database connection dies during a commit that did commit. The
/// mover must be acknowledged (not told `store_unavailable`), and the game must go on from
/// the committed move — before, it stayed a ply behind until a restart.
#[tokio::test]
async fn a_commit_whose_outcome_is_unknown_is_resolved_against_the_store() {
    let mut t = table(chuhe_rules::START_FEN).await;
    t.persist.set_ambiguous(Some(true), 1);
    assert_eq!(
        t.play(true, 1, "h2e2", false).await,
        Ok(2),
        "committed: acknowledged"
    );
    t.persist.set_ambiguous(None, 0);
    assert_eq!(
        t.play(false, 2, "h9g7", false).await,
        Ok(3),
        "the next ply follows"
    );
    let rec = t.record().await;
    assert_eq!(rec.moves.len(), 2);
    // It did not commit: refused, and the same move goes through afterwards.
    t.persist.set_ambiguous(Some(false), 1);
    assert_eq!(
        t.play(true, 3, "h0g2", false).await,
        Err("store_unavailable".into())
    );
    t.persist.set_ambiguous(None, 0);
    assert_eq!(t.play(true, 3, "h0g2", false).await, Ok(4));
    let stored = t.persist.events(t.handle.id).await.unwrap();
    assert_eq!(stored.len(), 4, "created + three moves, none twice");
}

/// A board's fan-out is timed once per event when it has at least `FANOUT_OBSERVED` live
/// subscribers, and not below that.
#[tokio::test]
async fn a_boards_fan_out_is_timed_once_it_has_a_hundred_spectators() {
    let mut t = table(chuhe_rules::START_FEN).await;
    let spectator = Arc::new(Principal { account: None });
    let mut inboxes = Vec::new();
    let mut subscribe = |t: &mut Table, n: u64| {
        for _ in 0..n {
            // Connection ids 1000, 1001, …: one per spectator.
            let (out, rx, _) = Outbox::new(1000 + inboxes.len() as u64, Encoding::Proto, 64);
            t.handle
                .send(Request {
                    req: 1,
                    who: spectator.clone(),
                    out,
                    lag: Duration::ZERO,
                    received: Instant::now(),
                    body: Body::Subscribe {
                        last_seq: 0,
                        relay: None,
                    },
                })
                .unwrap();
            inboxes.push(rx);
        }
    };
    let timed = |t: &Table| {
        t.metrics
            .render(None)
            .contains("chuhe_fanout_seconds_count 1\n")
    };
    subscribe(&mut t, crate::metrics::FANOUT_OBSERVED as u64 - 1);
    assert!(t.play(true, 1, "h2e2", false).await.is_ok());
    assert!(
        t.metrics
            .render(None)
            .contains("chuhe_fanout_seconds_count 0\n")
    );
    subscribe(&mut t, 1);
    assert!(t.play(false, 2, "h9g7", false).await.is_ok());
    assert!(timed(&t), "{}", t.metrics.render(None));
}
