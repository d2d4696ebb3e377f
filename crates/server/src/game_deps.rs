//! What a running game is given ([`GameDeps`]): the settings, the metrics, the clock, the
//! arbiters' desks, the leagues as [`LeagueHooks`], and — with several nodes — the node's
//! publish queue. Not the store, the shards, the registry or the node link: a game reaches
//! those only through its shard.

use std::sync::Arc;

use crate::config::Config;
use crate::desks::Desks;
use crate::league::hooks::LeagueHooks;
use crate::metrics::Metrics;
use crate::node::publish::Publisher;
use crate::time::TimeBase;

/// What a running game ([`crate::live::LiveGame`]) is given.
#[derive(Clone)]
pub struct GameDeps {
    pub config: Arc<Config>,
    pub metrics: Arc<Metrics>,
    pub time: TimeBase,
    /// The arbiters following each league's calls (a game pushes its desk events there).
    pub desks: Arc<Desks>,
    /// The leagues: whose arbiters rule on a league game, where its end goes.
    pub leagues: Arc<dyn LeagueHooks>,
    /// Several nodes: where the game's streams are published for the other nodes.
    pub publisher: Option<Publisher>,
}
