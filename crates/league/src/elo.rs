//! Elo ratings (seed 001): expected score `E = 1 / (1 + 10^(−D/400))` with `D` the rating
//! difference; the change is `K × (S − E)` summed over a rating period (all games of an event
//! rated from the ratings before it, as FIDE does). `K` depends on the rating band and the
//! number of rated games played; which stages of a board result chain are rated is set per
//! stage ([`crate::chain::Stage::rated`]).

use crate::chain::{BoardResult, GameResult, ResultChain};
use crate::colour::{Colour, Side};

/// Expected score of a player rated `rating` against `opponent`.
pub fn expected_score(rating: f64, opponent: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-(rating - opponent) / 400.0))
}

/// One band of the K-factor rule; the first band that matches applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KBand {
    /// Applies while the player has played fewer than this many rated games.
    pub games_below: Option<u32>,
    /// Applies while the rating is below this.
    pub rating_below: Option<i32>,
    /// The K factor.
    pub k: u32,
}

/// The K-factor rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KRule {
    /// Bands, tried in order.
    pub bands: Vec<KBand>,
    /// K when no band matches.
    pub otherwise: u32,
}

impl Default for KRule {
    /// FIDE's bands: 40 for fewer than 30 games, 20 below 2400, otherwise 10.
    fn default() -> Self {
        KRule {
            bands: vec![
                KBand {
                    games_below: Some(30),
                    rating_below: None,
                    k: 40,
                },
                KBand {
                    games_below: None,
                    rating_below: Some(2400),
                    k: 20,
                },
            ],
            otherwise: 10,
        }
    }
}

impl KRule {
    /// K for a player of `rating` with `games` rated games played.
    pub fn k(&self, rating: i32, games: u32) -> u32 {
        self.bands
            .iter()
            .find(|b| {
                b.games_below.is_none_or(|g| games < g) && b.rating_below.is_none_or(|r| rating < r)
            })
            .map_or(self.otherwise, |b| b.k)
    }
}

/// A player before the event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RatedPlayer {
    /// Rating, `None` if unrated (their games are not rated).
    pub rating: Option<i32>,
    /// Rated games played before the event.
    pub games: u32,
}

/// A rated game: indices into the player list and Red's score in half points (2 win, 1 draw, 0 loss).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RatedGame {
    /// Red player.
    pub red: usize,
    /// Black player.
    pub black: usize,
    /// Red's score in half points: 2, 1 or 0.
    pub red_halves: u8,
}

/// A player's rating change.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatingChange {
    /// Rating before.
    pub before: i32,
    /// Exact change `K × Σ(S − E)`.
    pub change: f64,
    /// New rating, rounded to the nearest integer (halves away from zero).
    pub after: i32,
    /// Games rated.
    pub games: u32,
}

/// Why games could not be rated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EloError {
    /// A player index is out of range.
    #[error("game #{game}: player {player} does not exist")]
    NoSuchPlayer {
        /// Game index.
        game: usize,
        /// Player index.
        player: usize,
    },
    /// A score that is not 0, 1 or 2 half points.
    #[error("game #{0}: Red's score must be 0, 1 or 2 half points")]
    BadScore(usize),
}

/// Rates an event: changes for every rated player (`None` for unrated players). Games with an
/// unrated player are skipped.
pub fn rate_event(
    players: &[RatedPlayer],
    games: &[RatedGame],
    rule: &KRule,
) -> Result<Vec<Option<RatingChange>>, EloError> {
    let mut sum = vec![0f64; players.len()];
    let mut count = vec![0u32; players.len()];
    for (i, g) in games.iter().enumerate() {
        for p in [g.red, g.black] {
            if p >= players.len() {
                return Err(EloError::NoSuchPlayer { game: i, player: p });
            }
        }
        if g.red_halves > 2 {
            return Err(EloError::BadScore(i));
        }
        let (Some(r), Some(b)) = (players[g.red].rating, players[g.black].rating) else {
            continue;
        };
        let s = f64::from(g.red_halves) / 2.0;
        let e = expected_score(f64::from(r), f64::from(b));
        sum[g.red] += s - e;
        sum[g.black] += (1.0 - s) - (1.0 - e);
        count[g.red] += 1;
        count[g.black] += 1;
    }
    Ok(players
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let rating = p.rating?;
            let change = f64::from(rule.k(rating, p.games)) * sum[i];
            Some(RatingChange {
                before: rating,
                change,
                after: rating + change.round() as i32,
                games: count[i],
            })
        })
        .collect())
}

/// The rated games of one board: `(first player's colour, on-board result)` for each game whose
/// stage is rated. An armageddon draw is rated as the draw it was on the board.
pub fn rated_games_of_board(chain: &ResultChain, board: &BoardResult) -> Vec<(Colour, GameResult)> {
    board
        .games
        .iter()
        .filter(|g| chain.stages().get(g.stage).is_some_and(|s| s.rated))
        .map(|g| (g.game.first_colour, g.game.result))
        .collect()
}

/// Converts a rated board game to a [`RatedGame`] given the first and second players' indices.
pub fn to_rated_game(
    first: usize,
    second: usize,
    first_colour: Colour,
    result: GameResult,
) -> RatedGame {
    let (red, black) = match first_colour {
        Colour::Red => (first, second),
        Colour::Black => (second, first),
    };
    let red_side = if first_colour == Colour::Red {
        Side::First
    } else {
        Side::Second
    };
    let red_halves = match result.winner() {
        Some(w) if w == red_side => 2,
        Some(_) => 0,
        None => 1,
    };
    RatedGame {
        red,
        black,
        red_halves,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::chain::{BoardRecord, GameScoring, PlayedGame, evaluate_board};
    use crate::entities::TimeControlText;

    #[test]
    fn expected_scores() {
        assert!((expected_score(1600.0, 1600.0) - 0.5).abs() < 1e-12);
        // D = 400: 1 / (1 + 10^-1) = 0.90909…
        assert!((expected_score(2000.0, 1600.0) - 10.0 / 11.0).abs() < 1e-12);
        assert!((expected_score(1600.0, 2000.0) - 1.0 / 11.0).abs() < 1e-12);
    }

    #[test]
    fn k_bands() {
        let k = KRule::default();
        assert_eq!(k.k(2500, 10), 40);
        assert_eq!(k.k(2300, 100), 20);
        assert_eq!(k.k(2400, 100), 10);
    }

    #[test]
    fn event_rating() {
        let players = [
            RatedPlayer {
                rating: Some(2000),
                games: 100,
            },
            RatedPlayer {
                rating: Some(1600),
                games: 100,
            },
            RatedPlayer {
                rating: None,
                games: 0,
            },
        ];
        let games = [
            RatedGame {
                red: 1,
                black: 0,
                red_halves: 2,
            }, // upset
            RatedGame {
                red: 0,
                black: 2,
                red_halves: 2,
            }, // unrated opponent: skipped
        ];
        let ch = rate_event(&players, &games, &KRule::default()).unwrap();
        let a = ch[0].unwrap();
        let b = ch[1].unwrap();
        assert_eq!(a.games, 1);
        assert!((a.change + 20.0 * 10.0 / 11.0).abs() < 1e-9);
        assert_eq!(a.after, 2000 - 18);
        assert_eq!(b.after, 1600 + 18);
        assert_eq!(ch[2], None);
        assert_eq!(
            rate_event(
                &players,
                &[RatedGame {
                    red: 0,
                    black: 9,
                    red_halves: 1
                }],
                &KRule::default()
            ),
            Err(EloError::NoSuchPlayer { game: 0, player: 9 })
        );
    }

    proptest::proptest! {
        /// With one K for everybody an event is zero-sum.
        #[test]
        fn zero_sum(ratings in proptest::collection::vec(1000i32..2800, 2..12), games in proptest::collection::vec((0usize..12, 0usize..12, 0u8..3), 0..60)) {
            let players: Vec<RatedPlayer> = ratings.iter().map(|&r| RatedPlayer { rating: Some(r), games: 100 }).collect();
            let n = players.len();
            let games: Vec<RatedGame> = games
                .into_iter()
                .map(|(a, b, s)| (a % n, b % n, s))
                .filter(|(a, b, _)| a != b)
                .map(|(red, black, red_halves)| RatedGame { red, black, red_halves })
                .collect();
            let rule = KRule { bands: vec![], otherwise: 20 };
            let ch = rate_event(&players, &games, &rule).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            let total: f64 = ch.iter().flatten().map(|c| c.change).sum();
            proptest::prop_assert!(total.abs() < 1e-6, "total {}", total);
        }
    }

    #[test]
    fn only_rated_stages() {
        let tc = |s: &str| TimeControlText::new(s).unwrap();
        let chain = ResultChain::slow_fast_armageddon(tc("20+10"), tc("5+3"), tc("4+0"));
        let g = |c, r| PlayedGame {
            first_colour: c,
            result: r,
            fouls: [0, 0],
        };
        let b = evaluate_board(
            &chain,
            &GameScoring::default(),
            1,
            &BoardRecord::Played(vec![
                g(Colour::Red, GameResult::Draw),
                g(Colour::Black, GameResult::FirstWins),
            ]),
        )
        .unwrap();
        assert_eq!(
            rated_games_of_board(&chain, &b),
            vec![(Colour::Red, GameResult::Draw)]
        );
        let rg = to_rated_game(5, 7, Colour::Black, GameResult::FirstWins);
        assert_eq!(
            rg,
            RatedGame {
                red: 7,
                black: 5,
                red_halves: 0
            }
        );
    }
}
