//! The state the edges are given (HTTP routes, websocket connections, the node relay, the demo):
//! the store, the settings and the drivers (game shards, registry, leagues, the node link).
//! [`Env::start_with`] assembles the drivers, each from the narrow handles it uses — a running
//! game its [`GameDeps`], the shards their [`ShardDeps`], the registry its [`AdoptDeps`], the
//! league runners their [`LeagueDeps`] ([`Env::league_deps`]) — so no driver imports this file.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use crate::adopt::AdoptDeps;
use crate::config::Config;
use crate::game_deps::GameDeps;
use crate::handle::LoadedGames;
use crate::league::runner::{LeagueDeps, Leagues};
use crate::persist::Persist;
use crate::shard::ShardDeps;
use crate::{challenge, cluster, desks, metrics, node, registry, shard, time, token_cache};

/// Shared by every task of the server.
#[derive(Clone)]
pub struct Env {
    pub persist: Arc<dyn Persist>,
    /// The other nodes, when this is one of several (`--redis-url`); None: one node.
    pub cluster: Option<Arc<dyn cluster::Cluster>>,
    /// This node's link to the others (routing, fan-out, failover) when `cluster` is set.
    pub node: Option<Arc<node::Link>>,
    pub config: Arc<Config>,
    pub metrics: Arc<metrics::Metrics>,
    pub registry: Arc<registry::Registry>,
    /// Every league running on this server.
    pub leagues: Arc<Leagues>,
    /// Open casual-game challenges taken by this node (in memory).
    pub challenges: Arc<challenge::Challenges>,
    /// The arbiters following each league's calls.
    pub desks: Arc<desks::Desks>,
    /// Tokens the store accepted recently ([`token_cache`]).
    pub tokens: Arc<token_cache::TokenCache>,
    pub shards: Arc<shard::Shards>,
    pub time: time::TimeBase,
    pub shutdown: watch::Receiver<bool>,
    /// Turns true once every shard has stopped at shutdown: every commit in flight settled and
    /// answered, every waiting request answered `shutting_down`. Connections wait for it
    /// (bounded by the grace period) before they say goodbye, so no request goes unanswered.
    pub settled: watch::Receiver<bool>,
    /// Held by every shard and connection task; serve waits for all to be dropped.
    pub tasks_done: mpsc::Sender<()>,
}

impl Env {
    /// The shared state of a server, with its game shards running (they stop when
    /// `shutdown` turns true).
    pub fn start(
        persist: Arc<dyn Persist>,
        config: Config,
        shutdown: watch::Receiver<bool>,
        tasks_done: mpsc::Sender<()>,
    ) -> Env {
        Env::start_with(persist, None, config, shutdown, tasks_done)
    }

    /// As [`Env::start`], for one node of several when `cluster` is given.
    pub fn start_with(
        persist: Arc<dyn Persist>,
        cluster: Option<Arc<dyn cluster::Cluster>>,
        config: Config,
        shutdown: watch::Receiver<bool>,
        tasks_done: mpsc::Sender<()>,
    ) -> Env {
        let count = match config.shards {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let (shards, queues) = shard::Shards::new(count, config.shard_mailbox);
        let (settled_tx, settled) = watch::channel(false);
        let tokens = Arc::new(token_cache::TokenCache::new(
            u64::try_from(config.token_cache.as_millis()).unwrap_or(u64::MAX),
            TOKEN_CACHE_MAX,
        ));
        let node = cluster.clone().map(node::Link::new);
        let config = Arc::new(config);
        let metrics = Arc::new(metrics::Metrics::default());
        let desks = Arc::new(desks::Desks::default());
        let time = time::TimeBase::new();
        let shards = Arc::new(shards);
        let leagues = Arc::new(Leagues::new(persist.clone(), node.clone()));
        let game = GameDeps {
            config: config.clone(),
            metrics: metrics.clone(),
            time,
            desks: desks.clone(),
            leagues: leagues.clone(),
            publisher: node.as_ref().map(|l| l.publisher().clone()),
        };
        let loaded = Arc::new(LoadedGames::default());
        let adopt = AdoptDeps {
            game,
            persist: persist.clone(),
            shards: shards.clone(),
        };
        let registry = Arc::new(registry::Registry::new(adopt, node.clone(), loaded.clone()));
        let shard_deps = ShardDeps {
            persist: persist.clone(),
            config: config.clone(),
            metrics: metrics.clone(),
            registry: loaded,
            node: node.clone(),
            shutdown: shutdown.clone(),
            tasks_done: tasks_done.clone(),
        };
        shard::Shards::start(&shard_deps, queues, settled_tx);
        Env {
            persist,
            node,
            cluster,
            config,
            metrics,
            registry,
            leagues,
            challenges: Arc::new(challenge::Challenges::default()),
            desks,
            tokens,
            shards,
            time,
            shutdown,
            settled,
            tasks_done,
        }
    }

    /// What the league runners are given (to create, load or start a league).
    pub fn league_deps(&self) -> LeagueDeps {
        LeagueDeps {
            persist: self.persist.clone(),
            time: self.time,
            desks: self.desks.clone(),
            metrics: self.metrics.clone(),
            node: self.node.clone(),
            leagues: self.leagues.clone(),
            registry: self.registry.clone(),
            shutdown: self.shutdown.clone(),
            tasks_done: self.tasks_done.clone(),
        }
    }
}

/// Tokens the token cache holds at most (about 100 bytes each).
const TOKEN_CACHE_MAX: usize = 100_000;
