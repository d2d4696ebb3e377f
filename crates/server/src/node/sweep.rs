//! The sweeper: games and leagues nobody runs are taken, remote games that moved re-routed.

use super::*;
use crate::env::Env;

/// Every `cluster_sweep`: takes the unfinished games nobody holds, and re-routes remote games
/// whose owner changed or vanished. For one lease TTL after this node reconnects to the
/// coordination service it does not sweep: if the service restarted empty, every lease is
/// gone until its holder reconnects and re-takes it, and the owners re-take their own first
/// instead of every game changing owner.
pub(super) async fn sweeper(env: Env) {
    let Some(link) = env.node.clone() else {
        return;
    };
    let mut every = tokio::time::interval(env.config.cluster_sweep);
    let mut lists = tokio::time::interval(GAME_LIST_EVERY);
    let mut shutdown = env.shutdown.clone();
    let mut connected = link.cluster.connected();
    connected.borrow_and_update();
    let mut quiet_until: Option<Instant> = None;
    let mut watching = true;
    loop {
        tokio::select! {
            _ = every.tick() => {}
            r = connected.changed(), if watching => {
                if r.is_err() {
                    // The coordination service's link is gone for good: sweeps fail anyway.
                    watching = false;
                    continue;
                }
                // Any change seen as connected is a reconnection (a quick outage's two
                // changes may be seen as one).
                if *connected.borrow_and_update() {
                    quiet_until = Some(Instant::now() + link.cluster.lease_ttl());
                    debug!("reconnected to the coordination service; sweeps wait one lease TTL");
                }
                continue;
            }
            _ = lists.tick() => {
                let msg = NodeMessage {
                    kind: Some(node_message::Kind::Games(w::NodeGames {
                        node: link.id.clone(),
                        games: env.registry.local_games(),
                    })),
                };
                link.publish(Publish::Raw(GAMES_CHANNEL.into(), Bytes::from(msg.encode_to_vec())));
                continue;
            }
            _ = shutdown.changed() => return,
        }
        if *env.shutdown.borrow() {
            return;
        }
        if quiet_until.is_some_and(|t| Instant::now() < t) {
            continue;
        }
        quiet_until = None;
        sweep(&env, &link, true).await;
    }
}

/// One sweep (also run at start, in place of recovering every unfinished game; the leagues
/// are started after it then, see `serve`). `leagues`: also start the leagues nobody runs.
pub(crate) async fn sweep(env: &Env, link: &Arc<Link>, leagues: bool) {
    // Remote games first: a vanished owner's game is taken, a moved one re-routed. Only the
    // games of owner nodes that are gone, and suspects, are looked up one by one.
    let suspects: std::collections::HashSet<i64> = link
        .suspects
        .lock()
        .map(|mut s| std::mem::take(&mut *s))
        .unwrap_or_default();
    let mut alive: HashMap<String, bool> = HashMap::new();
    for h in env.registry.remote_handles() {
        let owner = h
            .remote
            .as_ref()
            .and_then(|o| o.lock().ok().map(|o| o.clone()))
            .unwrap_or_default();
        if !suspects.contains(&h.id) {
            match link.is_alive(&owner, &mut alive).await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(_) => return,
            }
        }
        let key = game_key(h.id);
        match link.cluster.holder(&key).await {
            Ok(Some(node)) if node != link.id => {
                let known = h
                    .remote
                    .as_ref()
                    .and_then(|o| o.lock().ok().map(|o| o.clone()));
                if known.as_deref() != Some(node.as_str()) {
                    link.ctl(Ctl::Owner {
                        id: h.id,
                        owner: Some(node),
                    });
                }
            }
            Ok(_) => {
                if let Err(e) = env.registry.take_over(&h).await {
                    debug!(game = h.id, code = e.code(), "game not taken over");
                }
            }
            Err(e) => {
                debug!(error = %e, "cluster unreachable; sweep skipped");
                return;
            }
        }
    }
    let ids = match env.persist.unfinished_games().await {
        Ok(ids) => ids,
        Err(e) => {
            debug!(error = %e, "cannot list unfinished games");
            return;
        }
    };
    // Leagues nobody runs (a dead node's): the first node to take the lease runs them.
    if leagues {
        if let Ok(list) = env.persist.competitions().await {
            // A league whose first entry is not stored yet is being created (by the node
            // that will run it): left alone.
            for c in list.into_iter().filter(|c| c.last_seq > 0) {
                crate::league::runner::start_owned(&env.league_deps(), c.id.0).await;
            }
        }
    }
    // Games a live node lists as its own are not looked up one by one.
    let mut listed = std::collections::HashSet::new();
    for (node, games) in link.lists_by_node() {
        if let Ok(true) = link.is_alive(&node, &mut alive).await {
            listed.extend(games.iter().filter_map(|g| g.game_id.parse::<i64>().ok()));
        }
    }
    for id in ids {
        if env.registry.get(id).is_some() || listed.contains(&id) {
            continue;
        }
        match link.cluster.holder(&game_key(id)).await {
            Ok(None) => {
                if let Err(e) = env.registry.get_or_load(id).await {
                    debug!(game = id, code = e.code(), "game not taken");
                }
            }
            Ok(Some(_)) => {}
            Err(_) => return,
        }
    }
}
