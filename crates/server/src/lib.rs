//! chuhe game server: authoritative Xiangqi games over websockets.
//!
//! [`serve`] runs the server on a bound listener until `shutdown` resolves:
//! HTTP (`/healthz`, `/metrics`, the organiser API, game records, the demo
//! page) and the websocket protocol at `/ws` (see `docs/protocol.md`). A game
//! is a pure state machine (the `chuhe-game` crate: `decide` and `fold`) that a
//! shard task drives ([`shard`], [`live`]), converting its events to the wire
//! at the edge ([`game_wire`]); storage is reached only through the
//! [`persist::Persist`] port.

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tracing::{info, warn};

pub mod admin;
pub mod adopt;
pub mod audience;
pub mod auth;
pub mod calls;
pub mod challenge;
pub mod challenge_http;
pub mod cluster;
pub mod config;
pub mod conn;
#[cfg(test)]
mod decode_props;
pub mod demo;
pub mod desks;
pub mod embed_http;
pub mod env;
pub mod error;
pub mod feed_http;
pub mod frame_kinds;
pub mod game_deps;
pub mod game_wire;
pub mod handle;
pub mod http;
pub mod league;
pub mod listen;
pub mod live;
pub mod metrics;
pub mod node;
pub mod outbox;
pub mod persist;
pub mod record;
pub mod records_http;
pub mod redis_cluster;
pub mod registry;
pub mod request;
pub mod shard;
#[cfg(test)]
mod shard_tests;
pub mod snapshot;
pub mod socket;
pub mod store_adapter;
pub mod time;
pub mod token_cache;
pub mod view;
pub mod web;

pub use config::Config;
pub use env::Env;
pub use error::ClientError;
pub use persist::{Persist, PersistError};

/// Binds a listener with a deep accept backlog (4,096 instead of the default 128), so a league
/// round connecting every board at once is not met with SYN drops and one-second retries.
pub fn bind_listener(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(4096)
}

/// What the server is given.
pub struct Deps {
    pub persist: Arc<dyn Persist>,
    pub config: Config,
    /// The other nodes (several nodes on one database, `--redis-url`); None: one node.
    pub cluster: Option<Arc<dyn cluster::Cluster>>,
}

/// Runs the server until `shutdown` resolves, then shuts down in stages:
/// stop accepting; every game finishes the command in hand (its commit
/// included) and stops; every socket gets a `Goodbye` and close 1001.
/// Unfinished games are recovered at the next start.
pub async fn serve(
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
    deps: Deps,
) -> std::io::Result<()> {
    let (sd_tx, sd_rx) = watch::channel(false);
    let (done_tx, mut done_rx) = mpsc::channel::<()>(1);
    let env = Env::start_with(deps.persist, deps.cluster, deps.config, sd_rx, done_tx);
    let app = http::router(env.clone());
    match env.node.clone() {
        // Several nodes: this node takes the unfinished games nobody runs (a sweep), and
        // keeps sweeping.
        Some(link) => {
            link.serve_routes(Some(app.clone()));
            node::start(&env);
            node::sweep(&env, &link, false).await;
        }
        None => recover_all(&env).await,
    }
    if let Some(d) = &env.config.demo {
        // Before the leagues' drivers: a demo season whose rounds fell due while the server
        // was down is moved, not started all at once.
        demo::prepare(&env, d).await;
    }
    league::runner::start_all(&env.league_deps()).await;
    if let Some(d) = env.config.demo.clone() {
        demo::start(&env, d).await;
    }
    info!(addr = ?listener.local_addr().ok(), "listening");
    let grace = env.config.shutdown_grace;
    let link = env.node.clone();
    listen::run(listener, app, env, async move {
        shutdown.await;
        info!("shutting down: no new connections");
        let _ = sd_tx.send(true);
    })
    .await;
    if let Some(link) = link {
        link.serve_routes(None);
    }
    // Games finish their in-flight commits; sockets close with 1001.
    if tokio::time::timeout(grace, done_rx.recv()).await.is_err() {
        warn!("shutdown grace period over with tasks still running");
    }
    info!("shut down");
    Ok(())
}

/// Loads every unfinished game (clocks resume with no time lost to the outage).
async fn recover_all(env: &Env) {
    let ids = match env.persist.unfinished_games().await {
        Ok(ids) => ids,
        Err(e) => {
            warn!(error = %e, "cannot list unfinished games");
            return;
        }
    };
    let (mut recovered, mut started) = (0, 0);
    for id in ids {
        let new = env.config.new_games.contains(&id);
        match env.registry.get_or_load(id).await {
            Ok(_) if new => started += 1,
            Ok(_) => recovered += 1,
            Err(e) if new => warn!(game = id, code = e.code(), "new game not started"),
            Err(e) => warn!(game = id, code = e.code(), "game not recovered"),
        }
    }
    if recovered > 0 {
        info!(games = recovered, "unfinished games recovered");
    }
    if started > 0 {
        info!(games = started, "new games started");
    }
}
