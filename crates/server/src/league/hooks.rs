//! What the game drivers ask of the leagues, without importing the league runners: a league
//! game's end ([`GameEnd`]) and the [`LeagueHooks`] the leagues ([`super::runner::Leagues`])
//! answer them through — whose arbiters rule on a game, the event's call settings, a game's
//! end told to its league (on this node or the one running it).

use std::future::Future;
use std::pin::Pin;

use chuhe_league_core::spec::CallsSpec;

/// A game of a league ended (sent by the game's shard).
#[derive(Debug, Clone)]
pub struct GameEnd {
    pub game: i64,
    pub result: i32,
    pub reason: String,
    /// Fouls of [Red, Black].
    pub fouls: [u32; 2],
}

/// The leagues as the game drivers see them (a running game, its creation, its loading).
pub trait LeagueHooks: Send + Sync {
    /// Whether the arbiter with account `arbiter` rules on the games of league `league` (its
    /// id as the games carry it).
    fn arbiter_of(&self, league: &str, arbiter: i64) -> bool;

    /// The call settings of league `league`'s event, when it runs on this node.
    fn arbiter_calls(&self, league: i64) -> Option<CallsSpec>;

    /// A league game ended: its league learns it, here or (several nodes) on its node.
    fn game_ended_anywhere(&self, league: i64, end: GameEnd);

    /// Several nodes: reads the arbiters of the league the game with key `key` belongs to,
    /// when that league does not run here.
    fn learn_arbiters<'a>(
        &'a self,
        key: Option<&'a str>,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
}
