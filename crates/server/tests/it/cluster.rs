//! Several nodes on one store (issue 23), in process: an in-memory hub for leases and
//! channels, each node with its own view (its own fencing tokens) of one in-memory store.

use crate::harness::{Client, Cluster, Result, TTL};

/// Legal opening moves, red and black alternately.
const MOVES: [&str; 8] = [
    "h2e2", "h9g7", "h0g2", "i9h9", "i0h0", "b9c7", "b0c2", "a9b9",
];

fn red_or_black<'a>(ply: usize, red: &'a mut Client, black: &'a mut Client) -> &'a mut Client {
    if ply % 2 == 1 { red } else { black }
}

/// The cast's red player connected to node `red_on`, and black to node `black_on`.
async fn players(c: &Cluster, red_on: usize, black_on: usize) -> Result<(Client, Client)> {
    let red = Client::connect(c.nodes[red_on].addr, Some(&c.cast.red)).await?;
    let black = Client::connect(c.nodes[black_on].addr, Some(&c.cast.black)).await?;
    Ok((red, black))
}

/// An anonymous spectator on node `i`, subscribed to `game` from its start.
async fn spectator_on(c: &Cluster, i: usize, game: &str) -> Result<Client> {
    let mut s = Client::connect(c.nodes[i].addr, None).await?;
    s.subscribe(game, 0).await?;
    Ok(s)
}

/// Plays `MOVES[plies]`, red and black by turn: each move's seq.
async fn play_moves(
    game: &str,
    plies: std::ops::Range<usize>,
    red: &mut Client,
    black: &mut Client,
) -> Result<Vec<u64>> {
    let mut seqs = Vec::new();
    for i in plies {
        let ply = i + 1;
        let r = red_or_black(ply, red, black)
            .play(game, ply as u32, MOVES[i])
            .await?;
        seqs.push(r.seq);
    }
    Ok(seqs)
}

/// Node `i`'s `/metrics` page, read by the organizer.
async fn metrics_of(c: &Cluster, i: usize) -> Result<String> {
    let addr = c.nodes[i].addr;
    let organizer = Some(c.cast.organizer.as_str());
    Ok(
        crate::harness::http(addr, "GET", "/metrics", organizer, None)
            .await?
            .1,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_is_played_from_clients_on_every_node() -> Result<()> {
    let c = Cluster::start(3).await?;
    let game = c.create_game(0, "").await?;
    assert_eq!(
        c.hub.holder_of(&format!("game:{game}")).as_deref(),
        Some("n0")
    );
    let (mut red, mut black) = players(&c, 1, 2).await?;
    red.subscribe(&game, 0).await?;
    black.subscribe(&game, 0).await?;
    let mut spectators = Vec::new();
    for i in 0..c.nodes.len() {
        spectators.push(spectator_on(&c, i, &game).await?);
    }
    let seqs = play_moves(&game, 0..MOVES.len(), &mut red, &mut black).await?;
    assert!(seqs.iter().all(|&seq| seq > 0));
    // Every spectator, on every node, sees every move once and in order.
    for s in &mut spectators {
        let mut last = 0;
        for mv in MOVES {
            let (seq, got) = s.next_move().await?;
            assert_eq!(got, mv);
            assert!(seq > last, "seqs increase");
            last = seq;
        }
    }
    // The players see each other's moves too.
    for (i, mv) in MOVES.iter().enumerate() {
        assert_eq!(red.next_move().await?.1, *mv, "red sees ply {}", i + 1);
        assert_eq!(black.next_move().await?.1, *mv, "black sees ply {}", i + 1);
    }
    assert_eq!(c.stored_moves(&game).await?, MOVES);
    let metrics = metrics_of(&c, 1).await?;
    assert!(
        !metrics.contains("chuhe_cluster_relayed_total 0"),
        "red's moves and subscriptions went to n0: {metrics}"
    );
    // Still one owner.
    assert_eq!(
        c.hub.holder_of(&format!("game:{game}")).as_deref(),
        Some("n0")
    );
    // The game list of a node that does not run the game shows it (the nodes publish theirs).
    let deadline = tokio::time::Instant::now() + crate::harness::TIMEOUT;
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(50));
    loop {
        tick.tick().await;
        let (status, body) =
            crate::harness::http(c.nodes[2].addr, "GET", "/api/v1/games", None, None).await?;
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body)?;
        let listed = v["games"].as_array().is_some_and(|g| {
            g.iter()
                .any(|g| g["gameId"].as_str() == Some(game.as_str()))
        });
        if listed {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never listed: {body}"
        );
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_subscription_on_another_node_gets_exactly_what_it_missed() -> Result<()> {
    let c = Cluster::start(2).await?;
    let game = c.create_game(0, "").await?;
    let (mut red, mut black) = players(&c, 0, 0).await?;
    let seqs = play_moves(&game, 0..4, &mut red, &mut black).await?;
    // A spectator on the other node that saw up to ply 2 resumes: plies 3 and 4 come, then
    // the live stream goes on.
    let mut s = Client::connect(c.nodes[1].addr, None).await?;
    let reply = s.subscribe(&game, seqs[1]).await?;
    assert_eq!(reply.seq, seqs[3]);
    assert_eq!(s.next_move().await?, (seqs[2], MOVES[2].to_string()));
    assert_eq!(s.next_move().await?, (seqs[3], MOVES[3].to_string()));
    red.play(&game, 5, MOVES[4]).await?;
    assert_eq!(s.next_move().await?.1, MOVES[4]);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_is_published_once_another_node_subscribes_to_it() -> Result<()> {
    let c = Cluster::start(2).await?;
    let game = c.create_game(0, "").await?;
    let live = format!("game:{game}:live");
    let (mut red, mut black) = players(&c, 0, 0).await?;
    red.subscribe(&game, 0).await?;
    black.subscribe(&game, 0).await?;
    let mut here = spectator_on(&c, 0, &game).await?;
    play_moves(&game, 0..4, &mut red, &mut black).await?;
    for mv in &MOVES[..4] {
        assert_eq!(here.next_move().await?.1, *mv);
    }
    // A spectator on the other node: its node's subscription is answered with a snapshot,
    // and what follows is published for it (the publisher keeps its order, so once it sees
    // ply 5 everything queued before it has gone too).
    let mut there = spectator_on(&c, 1, &game).await?;
    play_moves(&game, 4..6, &mut red, &mut black).await?;
    for mv in &MOVES[4..6] {
        assert_eq!(there.next_move().await?.1, *mv);
        assert_eq!(here.next_move().await?.1, *mv);
    }
    assert_eq!(
        c.hub.published(&live),
        2,
        "only the two moves after the other node subscribed are published"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_shutting_down_hands_the_game_on_and_spectators_keep_their_socket() -> Result<()>
{
    let mut c = Cluster::start(3).await?;
    let game = c.create_game(0, "").await?;
    let key = format!("game:{game}");
    let (mut red, mut black) = players(&c, 1, 2).await?;
    let mut spectator = spectator_on(&c, 1, &game).await?;
    red.play(&game, 1, MOVES[0]).await?;
    black.play(&game, 2, MOVES[1]).await?;
    assert_eq!(spectator.next_move().await?.1, MOVES[0]);
    assert_eq!(spectator.next_move().await?.1, MOVES[1]);
    c.nodes[0].stop().await?;
    // A move sent at once waits for the game's next owner (no error to resend on).
    let req = red
        .send(chuhe_proto::v1::client_message::Kind::Move(
            chuhe_proto::v1::MakeMove {
                game_id: game.clone(),
                ply: 3,
                r#move: MOVES[2].into(),
                ..Default::default()
            },
        ))
        .await?;
    let answer = red.answer(req).await?;
    assert!(answer.is_ok(), "{answer:?}");
    let owner = c.wait_holder_other_than(&key, "n0").await?;
    assert!(owner == "n1" || owner == "n2");
    // The game goes on with every acknowledged move; the spectator on a surviving node keeps
    // its socket and gets the moves played on the new owner.
    play_moves(&game, 3..MOVES.len(), &mut red, &mut black).await?;
    for mv in &MOVES[2..] {
        assert_eq!(spectator.next_move().await?.1, *mv);
    }
    assert_eq!(c.stored_moves(&game).await?, MOVES);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_owners_game_is_taken_by_another_node_when_its_lease_expires() -> Result<()> {
    let c = Cluster::start(2).await?;
    let game = c.create_game(0, "").await?;
    let key = format!("game:{game}");
    let (mut red, mut black) = players(&c, 1, 1).await?;
    let mut spectator = spectator_on(&c, 1, &game).await?;
    red.play(&game, 1, MOVES[0]).await?;
    assert_eq!(spectator.next_move().await?.1, MOVES[0]);
    // n0 stops answering anything, as a killed process: no renewals, no messages.
    c.nodes[0].cluster.leave();
    c.hub.expire_node("n0");
    assert_eq!(c.restarts(&game).await?, 0);
    assert_eq!(c.wait_holder_other_than(&key, "n0").await?, "n1");
    black.play(&game, 2, MOVES[1]).await?;
    // n1 recovered the game from its log: the gap is credited as after a restart, once.
    assert_eq!(c.restarts(&game).await?, 1);
    red.play(&game, 3, MOVES[2]).await?;
    assert_eq!(spectator.next_move().await?.1, MOVES[1]);
    assert_eq!(spectator.next_move().await?.1, MOVES[2]);
    assert_eq!(c.stored_moves(&game).await?, MOVES[..3]);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fenced_commit_unloads_the_game_and_the_new_owner_answers() -> Result<()> {
    let c = Cluster::start(2).await?;
    let game = c.create_game(0, "").await?;
    let key = format!("game:{game}");
    let (mut red, mut black) = players(&c, 0, 0).await?;
    red.subscribe(&game, 0).await?;
    red.play(&game, 1, MOVES[0]).await?;
    // n0 is frozen past its lease (it neither renews nor notices the loss); n1 takes the game
    // and claims it in the store.
    c.nodes[0].cluster.freeze(true);
    c.hub.expire_node("n0");
    assert_eq!(c.wait_holder_other_than(&key, "n0").await?, "n1");
    // n0 still runs its copy: black's move there is refused by the store (fenced), never
    // acknowledged by n0; the game leaves n0 and the move is answered by n1.
    let r = black.play(&game, 2, MOVES[1]).await?;
    assert!(r.seq > 0);
    assert_eq!(c.stored_moves(&game).await?, MOVES[..2]);
    // Red, subscribed on n0, follows the game to n1 without reconnecting.
    assert_eq!(red.next_move().await?.1, MOVES[0]);
    assert_eq!(red.next_move().await?.1, MOVES[1]);
    red.play(&game, 3, MOVES[2]).await?;
    assert_eq!(red.next_move().await?.1, MOVES[2]);
    let metrics = metrics_of(&c, 0).await?;
    assert!(
        metrics.contains("chuhe_cluster_games_left_total 1"),
        "{metrics}"
    );
    // The database itself refused n0's write (not n0 noticing a lost lease first).
    assert!(
        metrics.contains("chuhe_cluster_fenced_commits_total 1"),
        "{metrics}"
    );
    c.nodes[0].cluster.freeze(false);
    // Never two owners: n0 never takes the lease back while n1 runs the game.
    assert_eq!(c.hub.holder_of(&key).as_deref(), Some("n1"));
    assert_eq!(c.stored_moves(&game).await?, MOVES[..3]);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_broadcast_delay_holds_on_a_remote_node() -> Result<()> {
    let c = Cluster::start(2).await?;
    let game = c.create_game(0, r#","delay":{"plies":2}"#).await?;
    let (mut red, mut black) = players(&c, 0, 0).await?;
    let mut spectator = spectator_on(&c, 1, &game).await?;
    play_moves(&game, 0..4, &mut red, &mut black).await?;
    // Ply k reaches the remote spectator only once ply k + 2 is committed.
    for (i, mv) in MOVES[..2].iter().enumerate() {
        let (_, got) = spectator.next_move().await?;
        assert_eq!(got, *mv);
        assert!(c.stored_moves(&game).await?.len() >= i + 1 + 2);
    }
    // A new subscription on the remote node gets the delayed view, not the live one.
    let mut late = spectator_on(&c, 1, &game).await?;
    let snap = late
        .expect(|m| match &m.kind {
            Some(chuhe_proto::v1::server_message::Kind::Snapshot(s)) => Some(s.clone()),
            _ => None,
        })
        .await?;
    assert_eq!(snap.moves.len(), 2, "the snapshot is the delayed one");
    // The record read over HTTP on the remote node is the delayed one too.
    let (status, body) = crate::harness::http(
        c.nodes[1].addr,
        "GET",
        &format!("/api/v1/games/{game}"),
        None,
        None,
    )
    .await?;
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body)?;
    assert_eq!(v["moves"].as_array().map(|m| m.len()), Some(2), "{body}");
    Ok(())
}

/// A league's event file: 2 teams of 2, its one round far in the future.
fn league_spec() -> String {
    let base = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
        + 3_600_000;
    serde_json::json!({
        "name": "双节点联赛",
        "system": "round_robin",
        "legs": 1,
        "boards": 2,
        "result_chain": {"preset": "slow-fast-armageddon",
                         "time_controls": ["5m+2s", "3m+2s", "red:2m;black:90s"]},
        "lineup": {"deadline_before": "30m"},
        "teams": [
            {"name": "队A", "players": ["A1", "A2"]},
            {"name": "队B", "players": ["B1", "B2"]},
        ],
        "arbiters": ["裁判长"],
        "schedule": {"rounds_at": [base.to_string()]},
    })
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_league_runs_on_one_node_and_moves_when_that_node_stops() -> Result<()> {
    let mut c = Cluster::start(2).await?;
    let spec = league_spec();
    let (status, body) = crate::harness::http(
        c.nodes[0].addr,
        "POST",
        "/api/v1/leagues",
        Some(&c.cast.organizer),
        Some(&spec),
    )
    .await?;
    assert_eq!(status, 201, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body)?;
    let id = v["id"].as_str().ok_or("no id")?.to_string();
    let key = format!("league:{id}");
    // Its runner is n0's: n1's sweeps leave it alone.
    assert_eq!(c.hub.holder_of(&key).as_deref(), Some("n0"));
    let path = format!("/api/v1/leagues/{id}");
    let (status, on_owner) =
        crate::harness::http(c.nodes[0].addr, "GET", &path, None, None).await?;
    assert_eq!(status, 200);
    // Asked of the other node, the league's node answers (forwarded), the same.
    let (status, forwarded) =
        crate::harness::http(c.nodes[1].addr, "GET", &path, None, None).await?;
    assert_eq!(status, 200, "{forwarded}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&forwarded)?,
        serde_json::from_str::<serde_json::Value>(&on_owner)?
    );
    // A websocket follower of the league on the other node: its catch-up comes from the
    // league's node, then the stream through the league's channel.
    let mut follower = Client::connect(c.nodes[1].addr, None).await?;
    let top = follower.league_subscribe(&id, 0).await?;
    assert!(top >= 1);
    let (first, kind) = follower.league_next().await?;
    assert_eq!((first, kind.as_str()), (1, "created"));
    for _ in 1..top {
        follower.league_next().await?;
    }
    // An organizer's command through the other node reaches the league too.
    let (status, body) = crate::harness::http(
        c.nodes[1].addr,
        "POST",
        &format!("{path}/publish"),
        Some(&c.cast.organizer),
        None,
    )
    .await?;
    assert_eq!(status, 200, "{body}");
    // Publishing pairs the first round: both entries come, once each, in order.
    assert_eq!(follower.league_next().await?, (top + 1, "published".into()));
    assert_eq!(
        follower.league_next().await?,
        (top + 2, "round_paired".into())
    );
    c.nodes[0].stop().await?;
    // n1 takes the league and runs it from its log.
    assert_eq!(c.wait_holder_other_than(&key, "n0").await?, "n1");
    let deadline = tokio::time::Instant::now() + crate::harness::TIMEOUT;
    loop {
        let (status, body) =
            crate::harness::http(c.nodes[1].addr, "GET", &path, None, None).await?;
        if status == 200 {
            let v: serde_json::Value = serde_json::from_str(&body)?;
            assert_eq!(v["name"].as_str(), Some("双节点联赛"), "{body}");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{status} {body}");
        // The runner starts right after the lease is taken: ask again after a round trip.
        crate::harness::http(c.nodes[1].addr, "GET", "/healthz", None, None).await?;
    }
    // The follower on n1 kept its socket: the league's next public entry reaches it.
    let later = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
        + 7_200_000;
    let (status, body) = crate::harness::http(
        c.nodes[1].addr,
        "POST",
        &format!("{path}/rounds/1/reschedule"),
        Some(&c.cast.organizer),
        Some(&format!(r#"{{"start":"{later}"}}"#)),
    )
    .await?;
    assert_eq!(status, 200, "{body}");
    let (seq, kind) = follower.league_next().await?;
    assert_eq!(seq, top + 3, "{kind}");
    assert!(kind.contains("reschedul"), "{kind}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spectator_catches_up_after_its_node_was_cut_off_from_the_hub() -> Result<()> {
    let c = Cluster::start(2).await?;
    let game = c.create_game(0, "").await?;
    let (mut red, mut black) = players(&c, 0, 0).await?;
    let mut spectator = spectator_on(&c, 1, &game).await?;
    red.play(&game, 1, MOVES[0]).await?;
    assert_eq!(spectator.next_move().await?.1, MOVES[0]);
    // n1 loses the coordination service: the owner's messages meanwhile never reach it.
    c.nodes[1].cluster.outage(true);
    black.play(&game, 2, MOVES[1]).await?;
    red.play(&game, 3, MOVES[2]).await?;
    // Back, lost again and back (catch-ups overlap: each is asked for on reconnection).
    c.nodes[1].cluster.outage(false);
    c.nodes[1].cluster.outage(true);
    c.nodes[1].cluster.outage(false);
    // The spectator gets what it missed, once each, in order, and the stream goes on.
    assert_eq!(spectator.next_move().await?.1, MOVES[1]);
    assert_eq!(spectator.next_move().await?.1, MOVES[2]);
    black.play(&game, 4, MOVES[3]).await?;
    assert_eq!(spectator.next_move().await?.1, MOVES[3]);
    red.play(&game, 5, MOVES[4]).await?;
    assert_eq!(spectator.next_move().await?.1, MOVES[4]);
    // Everything the catch-ups sent came before the last move: no move came twice.
    let doubled: Vec<_> = spectator
        .seen
        .iter()
        .filter(|m| matches!(&m.kind, Some(chuhe_proto::v1::server_message::Kind::Event(e)) if crate::harness::moved(e).is_some()))
        .collect();
    assert!(doubled.is_empty(), "{doubled:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_sent_to_a_dead_owner_is_answered_by_the_next_one() -> Result<()> {
    let c = Cluster::start(2).await?;
    let game = c.create_game(0, "").await?;
    let mut red = Client::connect(c.nodes[1].addr, Some(&c.cast.red)).await?;
    red.subscribe(&game, 0).await?;
    // n0 dies (no more messages), its leases not yet expired: the move waits for it…
    c.nodes[0].cluster.leave();
    let req = red
        .send(chuhe_proto::v1::client_message::Kind::Move(
            chuhe_proto::v1::MakeMove {
                game_id: game.clone(),
                ply: 1,
                r#move: MOVES[0].into(),
                ..Default::default()
            },
        ))
        .await?;
    red.ping().await?;
    // …and once its leases lapse, n1 takes the game and answers the move itself (no
    // `unavailable`, no resend by the client).
    c.hub.expire_node("n0");
    let reply = red.answer(req).await?;
    assert!(reply.is_ok(), "{reply:?}");
    assert_eq!(c.stored_moves(&game).await?, MOVES[..1]);
    assert_eq!(red.next_move().await?.1, MOVES[0]);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_lease_unloads_the_game_and_its_clients_follow_it() -> Result<()> {
    let c = Cluster::start(2).await?;
    let game = c.create_game(0, "").await?;
    let key = format!("game:{game}");
    let (mut red, mut black) = players(&c, 0, 0).await?;
    let mut spectator = spectator_on(&c, 0, &game).await?;
    red.play(&game, 1, MOVES[0]).await?;
    assert_eq!(spectator.next_move().await?.1, MOVES[0]);
    // The game's lease lapses while n0 runs: n0 finds it lost at its next renewal and unloads
    // the game; whichever node takes it next runs it, and n0's clients keep their sockets.
    c.hub.expire(&key);
    let deadline = tokio::time::Instant::now() + crate::harness::TIMEOUT;
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(20));
    loop {
        tick.tick().await;
        let metrics = metrics_of(&c, 0).await?;
        if metrics.contains("chuhe_cluster_games_left_total 1") {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "never unloaded");
    }
    black.play(&game, 2, MOVES[1]).await?;
    red.play(&game, 3, MOVES[2]).await?;
    assert_eq!(spectator.next_move().await?.1, MOVES[1]);
    assert_eq!(spectator.next_move().await?.1, MOVES[2]);
    assert_eq!(c.stored_moves(&game).await?, MOVES[..3]);
    assert!(c.hub.holder_of(&key).is_some());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_hub_restarts_empty_the_owners_keep_their_games() -> Result<()> {
    let c = Cluster::start(2).await?;
    let game = c.create_game(0, "").await?;
    let key = format!("game:{game}");
    let mut red = Client::connect(c.nodes[0].addr, Some(&c.cast.red)).await?;
    let mut spectator = spectator_on(&c, 1, &game).await?;
    red.play(&game, 1, MOVES[0]).await?;
    assert_eq!(spectator.next_move().await?.1, MOVES[0]);
    // The hub restarts empty; n1 reconnects first, n0 (the owner) a few of n1's sweeps
    // later but within a lease TTL, and re-takes its leases then.
    c.hub.restart_empty();
    c.nodes[1].cluster.outage(false);
    tokio::time::sleep(TTL / 3).await;
    c.nodes[0].cluster.outage(false);
    // n1 waited a TTL before sweeping: the owner kept its game, which never restarted.
    tokio::time::sleep(TTL * 2).await;
    assert_eq!(c.hub.holder_of(&key).as_deref(), Some("n0"));
    assert_eq!(c.restarts(&game).await?, 0);
    let mut black = Client::connect(c.nodes[1].addr, Some(&c.cast.black)).await?;
    black.play(&game, 2, MOVES[1]).await?;
    assert_eq!(spectator.next_move().await?.1, MOVES[1]);
    assert_eq!(c.hub.holder_of(&key).as_deref(), Some("n0"));
    assert_eq!(c.stored_moves(&game).await?, MOVES[..2]);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arbiter_reads_the_live_record_on_any_node() -> Result<()> {
    let c = Cluster::start(2).await?;
    let p: &dyn chuhe_server::Persist = c.persist.as_ref();
    let arbiter = p
        .create_account("arb", chuhe_server::persist::Role::Arbiter)
        .await?;
    let arbiter = p.issue_token(arbiter.id, None).await?.0;
    let game = c.create_game(0, r#","delay":{"plies":2}"#).await?;
    let (mut red, mut black) = players(&c, 0, 0).await?;
    play_moves(&game, 0..3, &mut red, &mut black).await?;
    let path = format!("/api/v1/games/{game}");
    let moves = |body: &str| -> Result<Option<usize>> {
        let v: serde_json::Value = serde_json::from_str(body)?;
        Ok(v["moves"].as_array().map(|m| m.len()))
    };
    // On the owner and on the other node alike: the arbiter and the organizer see the live
    // record, an anonymous reader the delayed one.
    for node in &c.nodes {
        for (who, want) in [
            (Some(arbiter.as_str()), 3),
            (Some(c.cast.organizer.as_str()), 3),
            (None, 1),
        ] {
            let (status, body) = crate::harness::http(node.addr, "GET", &path, who, None).await?;
            assert_eq!(status, 200, "{body}");
            assert_eq!(moves(&body)?, Some(want), "{} {who:?}: {body}", node.name);
        }
    }
    Ok(())
}

/// Creates a league through node `i`; its id.
async fn create_league(c: &Cluster, i: usize) -> Result<String> {
    let (status, body) = crate::harness::http(
        c.nodes[i].addr,
        "POST",
        "/api/v1/leagues",
        Some(&c.cast.organizer),
        Some(&league_spec()),
    )
    .await?;
    assert_eq!(status, 201, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body)?;
    Ok(v["id"].as_str().ok_or("no id")?.to_string())
}

/// A follower of league `id` on node `i`, caught up to the league's seq it returns.
async fn league_follower(c: &Cluster, i: usize, id: &str) -> Result<(Client, u64)> {
    let mut follower = Client::connect(c.nodes[i].addr, None).await?;
    let top = follower.league_subscribe(id, 0).await?;
    for _ in 0..top {
        follower.league_next().await?;
    }
    Ok((follower, top))
}

/// Publishes league `id` through node `i` until it is answered 200 (a 503 is retryable):
/// the statuses answered.
async fn publish_league(c: &Cluster, i: usize, id: &str) -> Result<Vec<u16>> {
    let deadline = tokio::time::Instant::now() + crate::harness::TIMEOUT;
    let mut statuses = Vec::new();
    loop {
        let (status, body) = crate::harness::http(
            c.nodes[i].addr,
            "POST",
            &format!("/api/v1/leagues/{id}/publish"),
            Some(&c.cast.organizer),
            None,
        )
        .await?;
        statuses.push(status);
        if status == 200 {
            return Ok(statuses);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} answers, none 200; the last: {status} {body}",
            statuses.len()
        );
        // Nobody runs the league for a moment (its lease lapsed): ask again after a round
        // trip.
        crate::harness::http(c.nodes[i].addr, "GET", "/healthz", None, None).await?;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_league_whose_lease_is_lost_stops_there_and_its_followers_follow_it() -> Result<()> {
    let c = Cluster::start(2).await?;
    let id = create_league(&c, 0).await?;
    let key = format!("league:{id}");
    assert_eq!(c.hub.holder_of(&key).as_deref(), Some("n0"));
    // A follower on the runner's own node.
    let (mut follower, top) = league_follower(&c, 0, &id).await?;
    // The lease lapses: n0 finds it lost at its next renewal and its runner stops at once;
    // whichever node takes the league next runs it, and the follower keeps its socket.
    c.hub.expire(&key);
    publish_league(&c, 1, &id).await?;
    assert_eq!(follower.league_next().await?, (top + 1, "published".into()));
    assert_eq!(
        follower.league_next().await?,
        (top + 2, "round_paired".into())
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fenced_league_commit_stops_the_runner_and_the_retry_reaches_the_new_one() -> Result<()> {
    let c = Cluster::start(2).await?;
    let id = create_league(&c, 0).await?;
    let key = format!("league:{id}");
    let (mut follower, top) = league_follower(&c, 0, &id).await?;
    // n0 is frozen past its lease (it neither renews nor notices the loss); n1 takes the
    // league and claims it in the store.
    c.nodes[0].cluster.freeze(true);
    c.hub.expire_node("n0");
    assert_eq!(c.wait_holder_other_than(&key, "n0").await?, "n1");
    let deadline = tokio::time::Instant::now() + crate::harness::TIMEOUT;
    let path = format!("/api/v1/leagues/{id}");
    while crate::harness::http(c.nodes[1].addr, "GET", &path, None, None)
        .await?
        .0
        != 200
    {
        assert!(tokio::time::Instant::now() < deadline, "n1 never ran it");
    }
    // n0 still runs its copy: its commit is refused (fenced) and answered retryable, its
    // runner stops, and the retry through n0 reaches n1's runner.
    let statuses = publish_league(&c, 0, &id).await?;
    assert!(statuses.len() <= 2, "{statuses:?}");
    // n0's follower follows the league to n1.
    assert_eq!(follower.league_next().await?, (top + 1, "published".into()));
    c.nodes[0].cluster.freeze(false);
    assert_eq!(c.hub.holder_of(&key).as_deref(), Some("n1"));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_league_whose_lease_lapsed_and_came_back_keeps_its_followers() -> Result<()> {
    let c = Cluster::start(2).await?;
    let id = create_league(&c, 0).await?;
    let key = format!("league:{id}");
    let (mut follower, top) = league_follower(&c, 0, &id).await?;
    // n1 is cut off, so only n0 can take the league again once its lease lapsed: its old
    // runner stops and a new one starts there; the follower follows it (through the relay).
    c.nodes[1].cluster.outage(true);
    c.hub.expire(&key);
    let deadline = tokio::time::Instant::now() + crate::harness::TIMEOUT;
    while c.hub.holder_of(&key).is_none() {
        assert!(tokio::time::Instant::now() < deadline, "never taken again");
        crate::harness::http(c.nodes[0].addr, "GET", "/healthz", None, None).await?;
    }
    assert_eq!(c.hub.holder_of(&key).as_deref(), Some("n0"));
    publish_league(&c, 0, &id).await?;
    assert_eq!(follower.league_next().await?, (top + 1, "published".into()));
    assert_eq!(
        follower.league_next().await?,
        (top + 2, "round_paired".into())
    );
    Ok(())
}

/// Casual challenges live on the node holding the `challenges` lease: one offered on a node
/// is listed by every node and accepted from any, and its creator learns the game anywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_offered_on_one_node_is_accepted_on_another() -> Result<()> {
    let c = Cluster::start(3).await?;
    let (status, body) = crate::harness::http(
        c.nodes[0].addr,
        "POST",
        "/api/v1/challenges",
        Some(&c.cast.red),
        Some(r#"{"timeControl":"30m|3x30s","colour":"red"}"#),
    )
    .await?;
    assert_eq!(status, 201, "{body}");
    let id = serde_json::from_str::<serde_json::Value>(&body)?["id"]
        .as_str()
        .ok_or("no id")?
        .to_string();
    let (status, list) =
        crate::harness::http(c.nodes[1].addr, "GET", "/api/v1/challenges", None, None).await?;
    assert_eq!(status, 200, "{list}");
    assert!(list.contains(&format!("\"id\":\"{id}\"")), "{list}");
    let (status, accepted) = crate::harness::http(
        c.nodes[2].addr,
        "POST",
        &format!("/api/v1/challenges/{id}/accept"),
        Some(&c.cast.black),
        None,
    )
    .await?;
    assert_eq!(status, 200, "{accepted}");
    let game = serde_json::from_str::<serde_json::Value>(&accepted)?["gameId"]
        .as_str()
        .ok_or("no gameId")?
        .to_string();
    let (status, seen) = crate::harness::http(
        c.nodes[0].addr,
        "GET",
        &format!("/api/v1/challenges/{id}"),
        None,
        None,
    )
    .await?;
    assert_eq!(status, 200, "{seen}");
    assert!(seen.contains(&format!("\"gameId\":\"{game}\"")), "{seen}");
    // The game is an ordinary game, with the colours as offered.
    let (status, g) = crate::harness::http(
        c.nodes[1].addr,
        "GET",
        &format!("/api/v1/games/{game}"),
        None,
        None,
    )
    .await?;
    assert_eq!(status, 200, "{g}");
    assert!(g.contains("30m|3x30s"), "{g}");
    Ok(())
}

/// A node cut off from the hub is not ready (`/readyz` 503 `cluster_unavailable`) while the
/// others stay ready; a player whose move it cannot route to the game's owner is told so at
/// once (`goodbye owner_unreachable` naming the owner, close 4010) instead of waiting, plays
/// on at the owner, and the node is ready again once it is back on the hub.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_cut_off_from_the_hub_is_unready_and_sends_players_to_the_owner() -> Result<()> {
    use chuhe_proto::v1::{self as w, client_message, server_message};
    let c = Cluster::start(2).await?;
    let game = c.create_game(0, "").await?;
    let (mut red, mut black) = players(&c, 0, 1).await?;
    play_moves(&game, 0..2, &mut red, &mut black).await?;
    let ready = |i: usize| crate::harness::http(c.nodes[i].addr, "GET", "/readyz", None, None);
    let (status, body) = ready(1).await?;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""cluster":"ok""#), "{body}");

    c.nodes[1].cluster.outage(true);
    let (status, body) = ready(1).await?;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("cluster_unavailable"), "{body}");
    assert_eq!(ready(0).await?.0, 200);
    // The owner's player goes on; black's node cannot reach the owner.
    red.play(&game, 3, MOVES[2]).await?;
    let req = black
        .send(client_message::Kind::Move(w::MakeMove {
            game_id: game.clone(),
            ply: 4,
            r#move: MOVES[3].into(),
            ..Default::default()
        }))
        .await?;
    let bye = black
        .expect(|m| match &m.kind {
            Some(server_message::Kind::Goodbye(g)) => Some(g.clone()),
            Some(server_message::Kind::Reply(r)) if r.request_id == req => Some(w::Goodbye {
                code: "acknowledged by a cut-off node".into(),
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
    assert_eq!(bye.owner_node, c.nodes[0].name, "{bye:?}");
    assert!(bye.reconnect_after_ms > 0);
    let mut black = Client::connect(c.nodes[0].addr, Some(&c.cast.black)).await?;
    black.play(&game, 4, MOVES[3]).await?;
    red.play(&game, 5, MOVES[4]).await?;

    c.nodes[1].cluster.outage(false);
    assert_eq!(ready(1).await?.0, 200);
    Ok(())
}
