//! Issue 23's must-show: three real `chuhe serve` processes on one PostgreSQL database and a
//! Redis of the test's own ([`chuhe_e2e::nodes`]). Players and spectators spread over the
//! nodes play whole games; `kill -9` of a game's owner, a Redis restart and a node frozen past
//! its lease lose nothing, double nothing, and never leave two owners writing one game.
//!
//! What every test checks at its end, against the database itself: the stored log is gap-free
//! from seq 1, its moves are exactly the acknowledged ones in order (none lost, none doubled),
//! and every event any client saw on any node is the stored event of that seq (two owners
//! would show as two histories).
//!
//! Skipped (one stderr line) without `CHUHE_TEST_DATABASE_URL` or without `redis-server`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use chuhe_e2e::nodes::{Cluster, NodeOptions};
use chuhe_e2e::*;
use chuhe_proto::Encoding;
use chuhe_proto::v1::{self as w, GameEvent, client_message, game_event, server_message};

/// A legal line of `plies` plies that neither captures nor ends the game, from a seed.
fn line(seed: u64, plies: usize) -> Vec<String> {
    let mut pos = chuhe_rules::Position::new();
    let mut s = seed | 1;
    let mut out = Vec::new();
    for _ in 0..plies {
        let quiet = quiet_moves(&pos);
        if quiet.is_empty() {
            break;
        }
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let m = quiet[(s >> 11) as usize % quiet.len()];
        out.push(m.to_iccs());
        pos.play_mut(m).unwrap();
    }
    out
}

fn quiet_moves(pos: &chuhe_rules::Position) -> Vec<chuhe_rules::Move> {
    pos.legal_moves()
        .iter()
        .copied()
        .filter(|m| {
            pos.piece_at(m.to()).is_none() && pos.play(*m).is_ok_and(|p| p.outcome().is_none())
        })
        .collect()
}

/// Another quiet move than `not` after the first `plies` of `moves`.
fn other_move(moves: &[String], not: &str) -> String {
    let mut pos = chuhe_rules::Position::new();
    for m in moves {
        let m = pos
            .legal_moves()
            .iter()
            .copied()
            .find(|x| x.to_iccs() == *m)
            .unwrap();
        pos.play_mut(m).unwrap();
    }
    quiet_moves(&pos)
        .into_iter()
        .map(|m| m.to_iccs())
        .find(|m| m != not)
        .unwrap()
}

/// Codes that mean the command did not happen and may be sent again as it is. Anything else
/// (a reply, or `stale_ply`, `illegal_move`, …) is the answer.
fn passing(code: &str) -> bool {
    !matches!(
        code,
        "stale_ply"
            | "illegal_move"
            | "not_your_turn"
            | "game_finished"
            | "not_a_player"
            | "game_not_found"
            | "invalid_argument"
            | "not_subscribed"
            | "permission_denied"
    )
}

/// Sends a move until it is acknowledged (its seq) or refused for good (the code), retrying
/// while the answer says the game is passing between nodes, for at most `within`. A resent
/// move answered `stale_ply` was played by an earlier attempt whose answer was lost (only
/// this client plays its side): it counts as played, seq 0 (the log check confirms it).
async fn play_through(
    c: &mut Client,
    game: &str,
    ply: u32,
    mv: &str,
    within: Duration,
) -> Result<std::result::Result<u64, String>> {
    let deadline = tokio::time::Instant::now() + within;
    let mut resent = false;
    loop {
        let req = c.send_move(game, ply, mv).await?;
        let a = answer(c, req).await?;
        if resent && a.as_ref().is_err_and(|code| code == "stale_ply") {
            return Ok(Ok(0));
        }
        resent = true;
        match a {
            Ok(seq) => return Ok(Ok(seq)),
            Err(code) if passing(&code) && tokio::time::Instant::now() < deadline => {
                // The answer itself says when to try again: a retry pace, not a wait.
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(code) => return Ok(Err(code)),
        }
    }
}

/// The answer to request `req`: the reply's seq or the error's code.
async fn answer(c: &mut Client, req: u32) -> Result<std::result::Result<u64, String>> {
    c.expect(|m| match &m.kind {
        Some(server_message::Kind::Reply(r)) if r.request_id == req => Some(Ok(r.seq)),
        Some(server_message::Kind::Error(e)) if e.request_id == req => Some(Err(e.code.clone())),
        _ => None,
    })
    .await
}

/// Plays `mv` and insists on its acknowledgement.
async fn must_play(
    c: &mut Client,
    game: &str,
    ply: u32,
    mv: &str,
    within: Duration,
) -> Result<u64> {
    let answer = play_through(c, game, ply, mv, within)
        .await
        .with_context(|| format!("playing ply {ply} {mv}"))?;
    match answer {
        Ok(seq) => Ok(seq),
        Err(code) => bail!("ply {ply} {mv} refused: {code}"),
    }
}

/// Plays `moves[plies]` alternately (red on even indexes, black on odd: index i is ply i + 1),
/// each acknowledged, recording each in `acked`; the last one's seq.
async fn play_plies(
    red: &mut Client,
    black: &mut Client,
    game: &str,
    moves: &[String],
    plies: std::ops::Range<usize>,
    acked: &mut Vec<String>,
) -> Result<u64> {
    let mut last = 0;
    for i in plies {
        let c = if i % 2 == 0 { &mut *red } else { &mut *black };
        last = must_play(c, game, i as u32 + 1, &moves[i], TIMEOUT).await?;
        acked.push(moves[i].clone());
    }
    Ok(last)
}

async fn resign(c: &mut Client, game: &str) -> Result<()> {
    resign_through(c, game).await.context("resigning")
}

async fn resign_through(c: &mut Client, game: &str) -> Result<()> {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let req = c
            .send(client_message::Kind::Resign(w::Resign {
                game_id: game.into(),
            }))
            .await?;
        match answer(c, req).await? {
            Ok(_) => return Ok(()),
            Err(code) if passing(&code) && tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(code) => bail!("resign refused: {code}"),
        }
    }
}

/// Every game event a client has received so far (seq, event).
fn events_seen(c: &Client) -> Vec<(u64, GameEvent)> {
    c.seen
        .iter()
        .filter_map(|m| match &m.kind {
            Some(server_message::Kind::Event(e)) => Some((e.seq, e.clone())),
            _ => None,
        })
        .collect()
}

/// A connected, subscribed client on `addr`.
async fn joined(
    addr: std::net::SocketAddr,
    token: Option<&str>,
    enc: Encoding,
    game: &str,
) -> Result<Client> {
    let mut c = Client::connect(addr, token, enc).await?;
    subscribe_through(&mut c, game, 0).await?;
    Ok(c)
}

/// Subscribes from `last_seq`, again while the answer is a passing code (the game is
/// changing nodes); its reply's seq.
async fn subscribe_through(c: &mut Client, game: &str, last_seq: u64) -> Result<u64> {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let req = c
            .send(client_message::Kind::Subscribe(w::Subscribe {
                game_id: game.into(),
                last_seq,
            }))
            .await?;
        match answer(c, req).await.context("subscribing")? {
            Ok(seq) => return Ok(seq),
            Err(code) if passing(&code) && tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(code) => bail!("subscribe refused: {code}"),
        }
    }
}

/// Reads until the client has the event of `seq` (or a later one).
async fn until_seq(c: &mut Client, seq: u64) -> Result<()> {
    if events_seen(c).iter().any(|(s, _)| *s >= seq) {
        return Ok(());
    }
    c.event(|e| (e.seq >= seq).then_some(())).await
}

/// The checks every test ends with (see the module's doc); returns the stored log. Every
/// watcher's stream, read in order, must be the stored log: each event the stored one of its
/// seq, each the one after the last it had (a snapshot covers up to its seq), none twice.
/// `complete` watchers must have reached the log's end.
async fn check_log(
    cluster: &Cluster,
    game: &str,
    acked: &[String],
    complete: &[&Client],
    partial: &[&Client],
) -> Result<Vec<(u64, GameEvent)>> {
    let stored = cluster.stored_events(game).await?;
    for (i, (seq, _)) in stored.iter().enumerate() {
        ensure!(
            *seq == i as u64 + 1,
            "stored log has a gap at {i}: {stored:?}"
        );
    }
    let moves: Vec<String> = stored.iter().filter_map(|(_, e)| moved(e)).collect();
    ensure!(
        moves == acked,
        "stored moves {moves:?}\n acknowledged {acked:?}"
    );
    let watchers = complete.iter().map(|c| (c, true));
    for (i, (c, must_end)) in watchers
        .chain(partial.iter().map(|c| (c, false)))
        .enumerate()
    {
        let mut upto: Option<u64> = None;
        for m in &c.seen {
            match &m.kind {
                Some(server_message::Kind::Snapshot(snap)) if snap.game_id == game => {
                    upto = Some(upto.map_or(snap.seq, |u| u.max(snap.seq)));
                }
                Some(server_message::Kind::Event(e)) if e.game_id == game => {
                    let Some((_, s)) = stored.get((e.seq as usize).wrapping_sub(1)) else {
                        bail!("watcher {i} saw seq {}, which is not stored", e.seq);
                    };
                    ensure!(
                        s == e,
                        "watcher {i} saw at seq {} {e:?}, stored {s:?}",
                        e.seq
                    );
                    if let Some(u) = upto {
                        ensure!(
                            e.seq == u + 1,
                            "watcher {i} saw seq {} after {u}; its stream: {}",
                            e.seq,
                            stream_of(c, game)
                        );
                    }
                    upto = Some(e.seq);
                }
                _ => {}
            }
        }
        if must_end {
            ensure!(
                upto == Some(stored.len() as u64),
                "watcher {i} got to seq {upto:?} of {}",
                stored.len()
            );
        }
    }
    Ok(stored)
}

/// A watcher's stream in brief: `S<seq>` for a snapshot, the seq of each event.
fn stream_of(c: &Client, game: &str) -> String {
    c.seen
        .iter()
        .filter_map(|m| match &m.kind {
            Some(server_message::Kind::Snapshot(s)) if s.game_id == game => {
                Some(format!("S{}", s.seq))
            }
            Some(server_message::Kind::Event(e)) if e.game_id == game => Some(e.seq.to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn clock_of(e: &GameEvent) -> Option<w::ClockState> {
    match &e.kind {
        Some(game_event::Kind::Move(m)) => m.clock,
        _ => None,
    }
}

fn key(game: &str) -> String {
    format!("game:{game}")
}

/// Three nodes; three games, each created on another node; each game's red on one node, black
/// on the next, a spectator on every node (both encodings). Every game is played to its end
/// (20 plies, then red resigns); every spectator sees every event of its game in order.
#[tokio::test]
async fn players_and_spectators_spread_over_three_nodes_play_whole_games() -> Result<()> {
    let Some(mut cluster) = Cluster::start(3, NodeOptions::default()).await? else {
        return Ok(());
    };
    let outcome =
        players_and_spectators_spread_over_three_nodes_play_whole_games_on(&mut cluster).await;
    cluster.finish_with(outcome).await
}

async fn players_and_spectators_spread_over_three_nodes_play_whole_games_on(
    cluster: &mut Cluster,
) -> Result<()> {
    let cast = cluster.cast.clone();
    let mut games = Vec::new();
    for g in 0..3 {
        let id = create_game(cluster.addr(g), &cast, "10m+5s", "", "").await?;
        let enc = |i: usize| {
            if (g + i) % 2 == 0 {
                Encoding::Json
            } else {
                Encoding::Proto
            }
        };
        let red = joined(cluster.addr(g), Some(&cast.red), enc(0), &id).await?;
        let black = joined(cluster.addr((g + 1) % 3), Some(&cast.black), enc(1), &id).await?;
        let mut fans = Vec::new();
        for n in 0..3 {
            fans.push(joined(cluster.addr(n), None, enc(n), &id).await?);
        }
        games.push((id, red, black, fans, line(g as u64 + 7, 20)));
    }
    for ply in 0..20 {
        for (id, red, black, _, moves) in &mut games {
            let c = if ply % 2 == 0 { &mut *red } else { &mut *black };
            must_play(c, id, ply as u32 + 1, &moves[ply], TIMEOUT).await?;
        }
    }
    for (id, red, black, fans, moves) in &mut games {
        resign(red, id).await?;
        for f in fans.iter_mut() {
            let (result, _) = f.event(ended).await?;
            assert_eq!(result, w::Result::BlackWins);
        }
        black.event(ended).await?;
        let fans: Vec<&Client> = fans.iter().collect();
        check_log(cluster, id, moves, &fans, &[]).await?;
        assert!(cluster.holders(&key(id)).await?.len() <= 1);
    }
    Ok(())
}

/// `kill -9` of a game's owner mid-game: within 5 s the game goes on on another node, with
/// every acknowledged move; the clocks resume as they were at the last commit (the gap is
/// credited, as after a restart); a spectator of the dead node resumes by seq on another.
#[tokio::test]
async fn kill_9_of_the_owner_mid_game_moves_the_game_to_another_node() -> Result<()> {
    let Some(mut cluster) = Cluster::start(3, NodeOptions::default()).await? else {
        return Ok(());
    };
    let outcome =
        kill_9_of_the_owner_mid_game_moves_the_game_to_another_node_on(&mut cluster).await;
    cluster.finish_with(outcome).await
}

async fn kill_9_of_the_owner_mid_game_moves_the_game_to_another_node_on(
    cluster: &mut Cluster,
) -> Result<()> {
    let cast = cluster.cast.clone();
    let game = create_game(cluster.addr(0), &cast, "10m+5s", "", "").await?;
    let mut fan_o = joined(cluster.addr(0), None, Encoding::Json, &game).await?;
    let o = cluster.owner(&key(&game), None).await?;
    let (a, b) = ((o + 1) % 3, (o + 2) % 3);
    if o != 0 {
        fan_o = joined(cluster.addr(o), None, Encoding::Json, &game).await?;
    }
    let mut red = joined(cluster.addr(a), Some(&cast.red), Encoding::Json, &game).await?;
    let mut black = joined(cluster.addr(b), Some(&cast.black), Encoding::Proto, &game).await?;
    let mut fan_a = joined(cluster.addr(a), None, Encoding::Proto, &game).await?;
    let moves = line(11, 12);
    let mut acked = Vec::new();
    let last_seq = play_plies(&mut red, &mut black, &game, &moves, 0..6, &mut acked).await?;
    until_seq(&mut fan_o, last_seq).await?;
    let committed = fan_a
        .event(|e| (e.seq == last_seq).then(|| clock_of(e)).flatten())
        .await?;

    cluster.nodes[o].kill9().await?;
    let killed = tokio::time::Instant::now();
    let seq7 = must_play(&mut red, &game, 7, &moves[6], Duration::from_secs(5)).await?;
    let took = killed.elapsed();
    acked.push(moves[6].clone());
    // With chuhe's default lease (3 s) and sweep (0.5 s): about 3.4 s here.
    ensure!(
        took < Duration::from_secs(5),
        "the game was back after {took:?}"
    );
    let o2 = cluster.owner(&key(&game), Some(o)).await?;
    assert_ne!(o2, o);

    // The new owner recovered the game from the database: a restart event whose clocks are
    // the committed ones (nobody paid for the gap), then red's move.
    until_seq(&mut fan_a, seq7).await?;
    let restarted = events_seen(&fan_a)
        .into_iter()
        .find_map(|(s, e)| match e.kind {
            Some(game_event::Kind::ServerRestarted(r)) if s > last_seq => Some(r),
            _ => None,
        })
        .context("no restart event after the failover")?;
    let rc = restarted.clock.context("restart without clock")?;
    assert_eq!(rc.red, committed.red);
    assert_eq!(rc.black, committed.black);

    // The dead node's spectator comes back on another node from the last seq it saw.
    let seen_o = events_seen(&fan_o).last().map_or(0, |(s, _)| *s);
    let mut fan_back = Client::connect(cluster.addr(b), None, Encoding::Json).await?;
    subscribe_through(&mut fan_back, &game, seen_o).await?;
    until_seq(&mut fan_back, seq7).await?;
    let resumed: Vec<u64> = events_seen(&fan_back).iter().map(|(s, _)| *s).collect();
    assert_eq!(resumed, ((seen_o + 1)..=seq7).collect::<Vec<_>>());

    play_plies(
        &mut red,
        &mut black,
        &game,
        &moves,
        7..moves.len(),
        &mut acked,
    )
    .await?;
    resign(&mut black, &game).await?;
    fan_a.event(ended).await?;
    fan_back.event(ended).await?;
    check_log(cluster, &game, &acked, &[&fan_a, &fan_back], &[&fan_o]).await?;
    Ok(())
}

/// A rolling upgrade's step: the owner of a game stopped with SIGTERM. It gives the game up on
/// its way out, so another node has it at once — well before the lease would have expired —
/// and the game goes on with every acknowledged move; its spectator resumes on another node.
#[tokio::test]
async fn a_graceful_stop_of_the_owner_hands_its_game_over_at_once() -> Result<()> {
    let options = NodeOptions {
        // Long enough that waiting for the lease to expire would show.
        lease_ttl: Duration::from_secs(30),
        ..NodeOptions::default()
    };
    let Some(mut cluster) = Cluster::start(3, options).await? else {
        return Ok(());
    };
    let outcome = a_graceful_stop_of_the_owner_hands_its_game_over_at_once_on(&mut cluster).await;
    cluster.finish_with(outcome).await
}

async fn a_graceful_stop_of_the_owner_hands_its_game_over_at_once_on(
    cluster: &mut Cluster,
) -> Result<()> {
    let cast = cluster.cast.clone();
    let game = create_game(cluster.addr(0), &cast, "10m+5s", "", "").await?;
    let mut fan_o = joined(cluster.addr(0), None, Encoding::Json, &game).await?;
    let o = cluster.owner(&key(&game), None).await?;
    let (a, b) = ((o + 1) % 3, (o + 2) % 3);
    if o != 0 {
        fan_o = joined(cluster.addr(o), None, Encoding::Json, &game).await?;
    }
    let mut red = joined(cluster.addr(a), Some(&cast.red), Encoding::Proto, &game).await?;
    let mut black = joined(cluster.addr(b), Some(&cast.black), Encoding::Json, &game).await?;
    let mut fan_a = joined(cluster.addr(a), None, Encoding::Json, &game).await?;
    let moves = line(41, 10);
    let mut acked = Vec::new();
    play_plies(&mut red, &mut black, &game, &moves, 0..4, &mut acked).await?;
    let stopping = tokio::time::Instant::now();
    let status = cluster.nodes[o].terminate().await?;
    assert!(status.success(), "the stopped node exited with {status}");
    // Its spectator was told to reconnect, then the connection closed.
    let goodbye = fan_o
        .expect(|m| match &m.kind {
            Some(server_message::Kind::Goodbye(g)) => Some(g.code.clone()),
            _ => None,
        })
        .await?;
    assert_eq!(goodbye, "shutdown");
    // The game goes on at once on another node (far sooner than the 30 s lease).
    must_play(&mut red, &game, 5, &moves[4], TIMEOUT).await?;
    acked.push(moves[4].clone());
    let took = stopping.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "the game was back after {took:?}"
    );
    let o2 = cluster.owner(&key(&game), Some(o)).await?;
    assert_ne!(o2, o);
    let seen_o = events_seen(&fan_o).last().map_or(0, |(s, _)| *s);
    let mut fan_back = Client::connect(cluster.addr(b), None, Encoding::Proto).await?;
    subscribe_through(&mut fan_back, &game, seen_o).await?;
    play_plies(
        &mut red,
        &mut black,
        &game,
        &moves,
        5..moves.len(),
        &mut acked,
    )
    .await?;
    resign(&mut red, &game).await?;
    fan_a.event(ended).await?;
    fan_back.event(ended).await?;
    check_log(cluster, &game, &acked, &[&fan_a, &fan_back], &[&fan_o]).await?;
    Ok(())
}

/// Redis killed and started again (empty) mid-game: the owner's player goes on moving during
/// the outage, the other node's player gets through once Redis is back, and the log has
/// every acknowledged move once; spectators on every node see each event once, in order.
#[tokio::test]
async fn redis_restarted_mid_game_loses_and_doubles_nothing() -> Result<()> {
    let Some(mut cluster) = Cluster::start(3, NodeOptions::default()).await? else {
        return Ok(());
    };
    let outcome = redis_restarted_mid_game_loses_and_doubles_nothing_on(&mut cluster).await;
    cluster.finish_with(outcome).await
}

async fn redis_restarted_mid_game_loses_and_doubles_nothing_on(
    cluster: &mut Cluster,
) -> Result<()> {
    let cast = cluster.cast.clone();
    let game = create_game(cluster.addr(1), &cast, "10m+5s", "", "").await?;
    let mut fans = vec![joined(cluster.addr(1), None, Encoding::Json, &game).await?];
    let o = cluster.owner(&key(&game), None).await?;
    let a = (o + 1) % 3;
    for n in [0, 2] {
        fans.push(joined(cluster.addr(n), None, Encoding::Proto, &game).await?);
    }
    // Red on the owner, black on another node (its moves are routed).
    let mut red = joined(cluster.addr(o), Some(&cast.red), Encoding::Json, &game).await?;
    let mut black = joined(cluster.addr(a), Some(&cast.black), Encoding::Json, &game).await?;
    let moves = line(23, 16);
    let mut acked = Vec::new();
    play_plies(&mut red, &mut black, &game, &moves, 0..6, &mut acked).await?;

    cluster.redis.kill().await?;
    // The owner keeps playing its own game while Redis is away.
    must_play(&mut red, &game, 7, &moves[6], TIMEOUT).await?;
    acked.push(moves[6].clone());
    // Black's move has to cross nodes: sent during the outage, it is held and gets through
    // once Redis is back, or is refused with a passing code, or black is told to reconnect
    // to the owner (`owner_unreachable`, once its node noticed the outage) and plays there.
    let req = black.send_move(&game, 8, &moves[7]).await?;
    cluster.redis.restart().await?;
    match answer(&mut black, req).await {
        Ok(Ok(_)) => {}
        Ok(Err(code)) => {
            assert!(passing(&code), "black's move refused for good: {code}");
            must_play(&mut black, &game, 8, &moves[7], TIMEOUT).await?;
        }
        Err(closed) => {
            let bye = black
                .seen
                .iter()
                .rev()
                .find_map(|m| match &m.kind {
                    Some(server_message::Kind::Goodbye(g)) => Some(g.clone()),
                    _ => None,
                })
                .with_context(|| {
                    format!("black's connection ended without a goodbye: {closed:#}")
                })?;
            assert_eq!(bye.code, "owner_unreachable", "{bye:?}");
            let to = cluster.index_of(&bye.owner_node).unwrap_or(o);
            black = joined(cluster.addr(to), Some(&cast.black), Encoding::Json, &game).await?;
            must_play(&mut black, &game, 8, &moves[7], TIMEOUT).await?;
        }
    }
    acked.push(moves[7].clone());
    play_plies(
        &mut red,
        &mut black,
        &game,
        &moves,
        8..moves.len(),
        &mut acked,
    )
    .await?;
    resign(&mut red, &game).await?;
    for (i, f) in fans.iter_mut().enumerate() {
        f.event(ended)
            .await
            .with_context(|| format!("spectator {i} waiting for the end"))?;
    }
    let watchers: Vec<&Client> = fans.iter().collect();
    check_log(cluster, &game, &acked, &watchers, &[]).await?;
    assert!(cluster.holders(&key(&game)).await?.len() <= 1);
    Ok(())
}

/// A node frozen (`SIGSTOP`) past its lease: another node takes the game over and it goes on
/// there; the frozen node's player had sent a move into it meanwhile. Resumed (`SIGCONT`),
/// the stale owner's write of that move is refused — the log has no trace of it — no client
/// anywhere sees a second history, and the resumed node serves the game again through the
/// new owner.
#[tokio::test]
async fn a_node_frozen_past_its_lease_cannot_write_when_it_resumes() -> Result<()> {
    let Some(mut cluster) = Cluster::start(3, NodeOptions::default()).await? else {
        return Ok(());
    };
    let outcome = a_node_frozen_past_its_lease_cannot_write_when_it_resumes_on(&mut cluster).await;
    cluster.finish_with(outcome).await
}

async fn a_node_frozen_past_its_lease_cannot_write_when_it_resumes_on(
    cluster: &mut Cluster,
) -> Result<()> {
    let cast = cluster.cast.clone();
    let game = create_game(cluster.addr(2), &cast, "10m+5s", "", "").await?;
    let mut fan_2 = joined(cluster.addr(2), None, Encoding::Json, &game).await?;
    let o = cluster.owner(&key(&game), None).await?;
    let (a, b) = ((o + 1) % 3, (o + 2) % 3);
    let mut red = joined(cluster.addr(o), Some(&cast.red), Encoding::Json, &game).await?;
    let fan_o = joined(cluster.addr(o), None, Encoding::Proto, &game).await?;
    let mut black = joined(cluster.addr(a), Some(&cast.black), Encoding::Json, &game).await?;
    let mut fan_b = joined(cluster.addr(b), None, Encoding::Proto, &game).await?;
    let moves = line(31, 10);
    let mut acked = Vec::new();
    play_plies(&mut red, &mut black, &game, &moves, 0..4, &mut acked).await?;

    cluster.nodes[o].freeze()?;
    // The stale move goes into the frozen node's socket; it reads it when it resumes, after
    // another node has taken the game over.
    let stale = other_move(&moves[..4], &moves[4]);
    let stale_req = red.send_move(&game, 5, &stale).await;
    let taken = cluster.owner(&key(&game), Some(o)).await;
    if taken.is_err() || stale_req.is_err() {
        cluster.nodes[o].thaw()?;
    }
    let (new_owner, stale_req) = (taken?, stale_req?);
    assert_ne!(new_owner, o);
    // Meanwhile red plays on through another node.
    let mut red2 = joined(cluster.addr(a), Some(&cast.red), Encoding::Proto, &game).await?;
    must_play(&mut red2, &game, 5, &moves[4], TIMEOUT).await?;
    acked.push(moves[4].clone());
    let seq6 = must_play(&mut black, &game, 6, &moves[5], TIMEOUT).await?;
    acked.push(moves[5].clone());

    cluster.nodes[o].thaw()?;
    // The stale move is refused, whichever way the resumed node finds out.
    // (An error, or the connection closed: anything but an acknowledgement.)
    if let Ok(Ok(seq)) = answer(&mut red, stale_req).await {
        panic!("the stale move was acknowledged at seq {seq}");
    }
    // Still exactly one owner, and not the resumed node.
    let holders = cluster.holders(&key(&game)).await?;
    assert_eq!(holders.len(), 1, "{holders:?}");
    assert_eq!(cluster.owner(&key(&game), Some(o)).await?, new_owner);
    // The resumed node serves the game again (through the owner).
    let mut red3 = joined(cluster.addr(o), Some(&cast.red), Encoding::Json, &game).await?;
    play_plies(
        &mut red3,
        &mut black,
        &game,
        &moves,
        6..moves.len(),
        &mut acked,
    )
    .await?;
    resign(&mut black, &game).await?;
    fan_b.event(ended).await?;
    until_seq(&mut fan_b, seq6).await?;
    // The spectator who joined on node 2 must have everything unless node 2 is the one that
    // was frozen (then, like the frozen node's own spectator, it must only never contradict
    // the log).
    let (complete, partial): (Vec<&Client>, Vec<&Client>) = if o == 2 {
        (vec![&fan_b], vec![&fan_2, &fan_o, &red3])
    } else {
        fan_2.event(ended).await?;
        (vec![&fan_b, &fan_2], vec![&fan_o, &red3])
    };
    let stored = check_log(cluster, &game, &acked, &complete, &partial).await?;
    assert!(
        stored
            .iter()
            .all(|(_, e)| moved(e).as_deref() != Some(stale.as_str())),
        "the stale move is in the log"
    );
    Ok(())
}

/// The answer to `req` as a client following the liveness rule waits for it: `None` when the
/// connection is found dead first (nothing, not even a heartbeat, for three heartbeat
/// intervals).
async fn answer_live(c: &mut Client, req: u32) -> Result<Option<std::result::Result<u64, String>>> {
    while let Some(m) = c.recv_live().await? {
        match &m.kind {
            Some(server_message::Kind::Reply(r)) if r.request_id == req => {
                return Ok(Some(Ok(r.seq)));
            }
            Some(server_message::Kind::Error(e)) if e.request_id == req => {
                return Ok(Some(Err(e.code.clone())));
            }
            _ => {}
        }
    }
    Ok(None)
}

/// Reads as a client following the liveness rule until the connection is found dead; every
/// message meanwhile stays in `seen`.
async fn until_dead(c: &mut Client) -> Result<()> {
    while c.recv_live().await?.is_some() {}
    Ok(())
}

/// The last seq a client saw of `game` (events and snapshots).
fn last_seq_of(c: &Client, game: &str) -> u64 {
    c.seen
        .iter()
        .filter_map(|m| match &m.kind {
            Some(server_message::Kind::Event(e)) if e.game_id == game => Some(e.seq),
            Some(server_message::Kind::Snapshot(s)) if s.game_id == game => Some(s.seq),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// The liveness rule end to end: the owner of a game is frozen (`SIGSTOP`) with its player to
/// move and a spectator on it. Neither gets an answer or a close, but each notices the silence
/// (no heartbeat for three intervals), reconnects to another node and resumes by seq; the
/// player's move is played there once the game has moved. Both are back within 5 s of the
/// freeze (measured and printed).
#[tokio::test]
async fn clients_of_a_frozen_node_notice_and_play_on_elsewhere_within_5_s() -> Result<()> {
    let Some(mut cluster) = Cluster::start(3, NodeOptions::default()).await? else {
        return Ok(());
    };
    let outcome =
        clients_of_a_frozen_node_notice_and_play_on_elsewhere_within_5_s_on(&mut cluster).await;
    // Whatever happened, no node stays stopped (the cleanup kills them).
    for n in cluster.nodes.iter().filter(|n| n.running()) {
        let _ = n.thaw();
    }
    cluster.finish_with(outcome).await
}

async fn clients_of_a_frozen_node_notice_and_play_on_elsewhere_within_5_s_on(
    cluster: &mut Cluster,
) -> Result<()> {
    let cast = cluster.cast.clone();
    let game = create_game(cluster.addr(0), &cast, "10m+5s", "", "").await?;
    let _first = joined(cluster.addr(0), None, Encoding::Json, &game).await?;
    let o = cluster.owner(&key(&game), None).await?;
    let (a, b) = ((o + 1) % 3, (o + 2) % 3);
    let mut red = joined(cluster.addr(o), Some(&cast.red), Encoding::Json, &game).await?;
    let mut fan_o = joined(cluster.addr(o), None, Encoding::Proto, &game).await?;
    let mut black = joined(cluster.addr(a), Some(&cast.black), Encoding::Proto, &game).await?;
    let mut fan_b = joined(cluster.addr(b), None, Encoding::Json, &game).await?;
    ensure!(
        red.welcome.heartbeat_ms > 0 && red.welcome.heartbeat_ms <= 1000,
        "the welcome announces a heartbeat of {} ms",
        red.welcome.heartbeat_ms
    );
    let moves = line(53, 10);
    let mut acked = Vec::new();
    let last = play_plies(&mut red, &mut black, &game, &moves, 0..4, &mut acked).await?;
    until_seq(&mut fan_o, last).await?;
    // An idle connection hears the heartbeat (nothing else is sent to it now).
    fan_o.wait_heartbeat().await?;

    cluster.nodes[o].freeze()?;
    let frozen = tokio::time::Instant::now();
    let red_token = cast.red.clone();
    let (red_back, fan_back) = tokio::join!(
        async {
            // Red's move goes into the frozen node: no answer, no close.
            let req = red.send_move(&game, 5, &moves[4]).await?;
            ensure!(
                answer_live(&mut red, req).await?.is_none(),
                "the frozen node answered"
            );
            let noticed = frozen.elapsed();
            let seen = last_seq_of(&red, &game);
            let mut red2 =
                Client::connect(cluster.addr(a), Some(&red_token), Encoding::Json).await?;
            subscribe_through(&mut red2, &game, seen).await?;
            let seq = must_play(&mut red2, &game, 5, &moves[4], TIMEOUT).await?;
            Ok::<_, anyhow::Error>((noticed, frozen.elapsed(), red2, seq))
        },
        async {
            until_dead(&mut fan_o).await?;
            let noticed = frozen.elapsed();
            let seen = last_seq_of(&fan_o, &game);
            let mut back = Client::connect(cluster.addr(b), None, Encoding::Proto).await?;
            subscribe_through(&mut back, &game, seen).await?;
            // Back when the game is: red's move (ply 5) reaches it.
            back.event(|e| {
                matches!(&e.kind, Some(game_event::Kind::Move(m)) if m.r#move.as_ref().is_some_and(|r| r.ply == 5))
                    .then_some(())
            })
            .await?;
            Ok::<_, anyhow::Error>((noticed, frozen.elapsed(), back))
        }
    );
    let (red_noticed, red_took, mut red2, seq5) = red_back?;
    let (fan_noticed, fan_took, mut fan_back) = fan_back?;
    acked.push(moves[4].clone());
    let _ = writeln_stderr(&format!(
        "frozen node: its player noticed after {red_noticed:?} and played again after \
         {red_took:?}; its spectator noticed after {fan_noticed:?} and saw the game go on \
         after {fan_took:?}"
    ));
    ensure!(
        red_took < Duration::from_secs(5),
        "the frozen node's player played again after {red_took:?}"
    );
    ensure!(
        fan_took < Duration::from_secs(5),
        "the frozen node's spectator saw the game again after {fan_took:?}"
    );
    let o2 = cluster.owner(&key(&game), Some(o)).await?;
    assert_ne!(o2, o);
    until_seq(&mut fan_b, seq5).await?;

    cluster.nodes[o].thaw()?;
    play_plies(
        &mut red2,
        &mut black,
        &game,
        &moves,
        5..moves.len(),
        &mut acked,
    )
    .await?;
    resign(&mut black, &game).await?;
    fan_b.event(ended).await?;
    fan_back.event(ended).await?;
    check_log(
        cluster,
        &game,
        &acked,
        &[&fan_b],
        &[&fan_back, &fan_o, &red],
    )
    .await?;
    Ok(())
}

fn writeln_stderr(line: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    writeln!(std::io::stderr(), "{line}")
}

/// Polls `/readyz` until it answers `status` (bounded by [`TIMEOUT`]); the body then.
async fn readyz_until(addr: std::net::SocketAddr, status: u16) -> Result<String> {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let got = http(addr, "GET", "/readyz", None, None).await;
        if let Ok((s, body)) = &got
            && *s == status
        {
            return Ok(body.clone());
        }
        ensure!(
            tokio::time::Instant::now() < deadline,
            "/readyz on {addr} never answered {status}: {got:?}"
        );
        // A probe is a poll: nothing to wait on but its next answer.
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Redis stopped mid-game: every node's `/readyz` answers 503 (`cluster_unavailable`) while
/// it is away and 200 again once it is back. The game goes on through the outage: its owner's
/// player moves there, and the player on another node, told `owner_unreachable` (naming the
/// owner) when its move cannot reach the owner, reconnects to the owner and plays on there.
#[tokio::test]
async fn a_redis_outage_turns_readiness_off_and_stops_no_game_whose_players_reach_its_owner()
-> Result<()> {
    let Some(mut cluster) = Cluster::start(3, NodeOptions::default()).await? else {
        return Ok(());
    };
    let outcome = a_redis_outage_on(&mut cluster).await;
    cluster.finish_with(outcome).await
}

async fn a_redis_outage_on(cluster: &mut Cluster) -> Result<()> {
    let cast = cluster.cast.clone();
    let game = create_game(cluster.addr(1), &cast, "10m+5s", "", "").await?;
    let mut fan_1 = joined(cluster.addr(1), None, Encoding::Json, &game).await?;
    let o = cluster.owner(&key(&game), None).await?;
    let a = (o + 1) % 3;
    for i in 0..3 {
        let body = readyz_until(cluster.addr(i), 200).await?;
        ensure!(body.contains("\"cluster\":\"ok\""), "{body}");
    }
    let mut red = joined(cluster.addr(o), Some(&cast.red), Encoding::Json, &game).await?;
    let mut fan_o = joined(cluster.addr(o), None, Encoding::Proto, &game).await?;
    let mut black = joined(cluster.addr(a), Some(&cast.black), Encoding::Proto, &game).await?;
    let moves = line(61, 14);
    let mut acked = Vec::new();
    play_plies(&mut red, &mut black, &game, &moves, 0..4, &mut acked).await?;

    cluster.redis.kill().await?;
    for i in 0..3 {
        let body = readyz_until(cluster.addr(i), 503).await?;
        ensure!(body.contains("cluster_unavailable"), "node {i}: {body}");
    }
    // The owner's player moves during the outage.
    must_play(&mut red, &game, 5, &moves[4], TIMEOUT).await?;
    acked.push(moves[4].clone());
    // Black's node cannot reach the owner: black is told so, with the owner's id, at once.
    let req = black.send_move(&game, 6, &moves[5]).await?;
    let bye = black
        .expect(|m| match &m.kind {
            Some(server_message::Kind::Goodbye(g)) => Some(g.clone()),
            Some(server_message::Kind::Reply(r)) if r.request_id == req => Some(w::Goodbye {
                code: format!("acknowledged at seq {} by a cut-off node", r.seq),
                ..Default::default()
            }),
            Some(server_message::Kind::Error(e)) if e.request_id == req => Some(w::Goodbye {
                code: format!("error {}", e.code),
                ..Default::default()
            }),
            _ => None,
        })
        .await?;
    assert_eq!(bye.code, "owner_unreachable", "{bye:?}");
    assert_eq!(bye.owner_node, cluster.nodes[o].id, "{bye:?}");
    assert_eq!(black.wait_closed().await?, 4010);
    // It reconnects to the node named and plays on there, as does everybody, Redis still down.
    let to = cluster
        .index_of(&bye.owner_node)
        .context("an unknown node")?;
    let mut black2 = Client::connect(cluster.addr(to), Some(&cast.black), Encoding::Json).await?;
    subscribe_through(&mut black2, &game, last_seq_of(&black, &game)).await?;
    must_play(&mut black2, &game, 6, &moves[5], TIMEOUT).await?;
    acked.push(moves[5].clone());
    let during = play_plies(&mut red, &mut black2, &game, &moves, 6..10, &mut acked).await?;
    until_seq(&mut fan_o, during).await?;
    // Still down: the nodes are still not ready.
    for i in 0..3 {
        let (status, _) = http(cluster.addr(i), "GET", "/readyz", None, None).await?;
        assert_eq!(status, 503, "node {i} ready while Redis is down");
    }

    cluster.redis.restart().await?;
    for i in 0..3 {
        readyz_until(cluster.addr(i), 200).await?;
    }
    play_plies(
        &mut red,
        &mut black2,
        &game,
        &moves,
        10..moves.len(),
        &mut acked,
    )
    .await?;
    resign(&mut red, &game).await?;
    fan_o.event(ended).await?;
    fan_1.event(ended).await?;
    check_log(cluster, &game, &acked, &[&fan_o, &fan_1], &[&black]).await?;
    assert!(cluster.holders(&key(&game)).await?.len() <= 1);
    Ok(())
}

/// The harness's own Redis: answers, and after a restart on the same port it is there again,
/// empty (what the Redis test relies on).
#[tokio::test]
async fn the_throwaway_redis_restarts_empty_on_its_port() -> Result<()> {
    use chuhe_e2e::nodes::{Redis, Resp};
    if std::env::var_os("PATH")
        .is_none_or(|p| !std::env::split_paths(&p).any(|d| d.join("redis-server").is_file()))
    {
        chuhe_e2e::nodes::say_skipped_because("redis-server is not installed");
        return Ok(());
    }
    let mut redis = Redis::start().await?;
    let pid = redis.pid();
    assert_eq!(
        redis.command(&["SET", "chuhe-e2e:k", "n1"]).await?,
        Resp::Simple("OK".into())
    );
    assert_eq!(
        redis.keys("chuhe-e2e:*").await?,
        vec![("chuhe-e2e:k".to_string(), Some("n1".to_string()))]
    );
    redis.restart().await?;
    assert_ne!(redis.pid(), pid);
    assert_eq!(
        redis.command(&["GET", "chuhe-e2e:k"]).await?,
        Resp::Bulk(None)
    );
    redis.kill().await?;
    assert!(redis.command(&["PING"]).await.is_err());
    Ok(())
}
