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
    /// A player meets themself.
    #[error("game #{0}: a player cannot play themself")]
    SelfGame(usize),
}

/// Rates an event: changes for every rated player (`None` for unrated players). Games with an
/// unrated player are skipped.
pub fn rate_event(
    players: &[RatedPlayer],
    games: &[RatedGame],
    rule: &KRule,
) -> Result<Vec<Option<RatingChange>>, EloError> {
    let rows = rating_list(
        players,
        games,
        &EloOptions {
            k: rule.clone(),
            initial: InitialRating::Unrated,
        },
    )?;
    Ok(rows
        .iter()
        .map(|r| {
            Some(RatingChange {
                before: r.before?,
                change: r.change,
                after: r.after?,
                games: r.rated_games,
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

/// The rating difference `dp` that a score fraction `p` corresponds to: the inverse of
/// [`expected_score`] ("将等级差别转化为分数或取胜概率，反之亦然", seed 001),
/// `dp = 400 × log10(p / (1 − p))`, held within ±800 (a score of 0 or 1 gives ∓/±800, as FIDE's
/// table ends there).
pub fn rating_difference(p: f64) -> f64 {
    if p.is_nan() {
        return 0.0;
    }
    if p <= 0.0 {
        return -800.0;
    }
    if p >= 1.0 {
        return 800.0;
    }
    (400.0 * (p / (1.0 - p)).log10()).clamp(-800.0, 800.0)
}

/// Performance rating: the opponents' average rating plus the difference the score fraction
/// corresponds to ([`rating_difference`]). `None` without rated opponents.
pub fn performance_rating(opponents: &[i32], score: f64) -> Option<f64> {
    if opponents.is_empty() {
        return None;
    }
    let n = opponents.len() as f64;
    let avg = opponents.iter().map(|&r| f64::from(r)).sum::<f64>() / n;
    Some(avg + rating_difference(score / n))
}

/// How a player without a rating gets one from the event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialRating {
    /// Unrated players stay unrated; their games are not rated.
    Unrated,
    /// The performance rating over the games against rated opponents, rounded, once the player
    /// has at least `min_games` of them (a first rating from results, as rating lists do).
    Performance {
        /// Games against rated opponents needed for a first rating.
        min_games: u32,
    },
    /// Everybody unrated starts at this rating (with 0 games played, so the K of new players).
    Fixed(i32),
}

/// Options of a rating list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EloOptions {
    /// The K-factor rule.
    pub k: KRule,
    /// Ratings for unrated players.
    pub initial: InitialRating,
}

impl Default for EloOptions {
    fn default() -> Self {
        EloOptions {
            k: KRule::default(),
            initial: InitialRating::Performance { min_games: 5 },
        }
    }
}

/// A player's line in a rating list.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatingRow {
    /// Index in the player list.
    pub player: usize,
    /// Rating before the event (`None`: unrated).
    pub before: Option<i32>,
    /// The rating was given by [`InitialRating`] (not carried from before).
    pub initial: bool,
    /// K applied (rated players).
    pub k: Option<u32>,
    /// Games played in the event (all, rated or not).
    pub games: u32,
    /// Games counted for the rating (both players rated).
    pub rated_games: u32,
    /// Score over all games (1 per win, ½ per draw).
    pub score: f64,
    /// Expected score over the rated games, `Σ E`.
    pub expected: f64,
    /// Performance rating over the games against rated opponents.
    pub performance: Option<f64>,
    /// Exact change `K × Σ(S − E)`.
    pub change: f64,
    /// Rating after the event, rounded (halves away from zero); `None`: still unrated.
    pub after: Option<i32>,
}

/// A rating list after an event: every player's rating before and after, with K, the score
/// against the expectation and the performance rating. Ratings before the event are used for
/// every game (one rating period); unrated players get a first rating by `options.initial`.
/// Rows are in player order.
pub fn rating_list(
    players: &[RatedPlayer],
    games: &[RatedGame],
    options: &EloOptions,
) -> Result<Vec<RatingRow>, EloError> {
    for (i, g) in games.iter().enumerate() {
        for p in [g.red, g.black] {
            if p >= players.len() {
                return Err(EloError::NoSuchPlayer { game: i, player: p });
            }
        }
        if g.red_halves > 2 {
            return Err(EloError::BadScore(i));
        }
        if g.red == g.black {
            return Err(EloError::SelfGame(i));
        }
    }
    let n = players.len();
    let mut score = vec![0f64; n];
    let mut count = vec![0u32; n];
    for g in games {
        let s = f64::from(g.red_halves) / 2.0;
        score[g.red] += s;
        score[g.black] += 1.0 - s;
        count[g.red] += 1;
        count[g.black] += 1;
    }
    // Opponents' ratings before the event (for performance) — rated opponents only.
    let opponents = |p: usize, ratings: &[Option<i32>]| -> (Vec<i32>, f64) {
        let mut opp = Vec::new();
        let mut sc = 0.0;
        for g in games {
            let (o, s) = if g.red == p {
                (g.black, f64::from(g.red_halves) / 2.0)
            } else if g.black == p {
                (g.red, 1.0 - f64::from(g.red_halves) / 2.0)
            } else {
                continue;
            };
            if let Some(r) = ratings[o] {
                opp.push(r);
                sc += s;
            }
        }
        (opp, sc)
    };
    let before: Vec<Option<i32>> = players.iter().map(|p| p.rating).collect();
    // Starting ratings: unrated players rated by the option (from the ratings before).
    let mut start = before.clone();
    let mut initial = vec![false; n];
    for p in 0..n {
        if before[p].is_some() {
            continue;
        }
        match options.initial {
            InitialRating::Unrated => {}
            InitialRating::Fixed(r) => {
                start[p] = Some(r);
                initial[p] = true;
            }
            InitialRating::Performance { min_games } => {
                let (opp, sc) = opponents(p, &before);
                if opp.len() as u32 >= min_games.max(1) {
                    start[p] = performance_rating(&opp, sc).map(|x| x.round() as i32);
                    initial[p] = true;
                }
            }
        }
    }
    // Rated games: both players rated before the event (or by a fixed start).
    let rated_start: Vec<Option<i32>> = (0..n)
        .map(|p| match options.initial {
            InitialRating::Fixed(_) => start[p],
            _ => before[p],
        })
        .collect();
    let mut sum = vec![0f64; n];
    let mut expected = vec![0f64; n];
    let mut rated = vec![0u32; n];
    for g in games {
        let (Some(r), Some(b)) = (rated_start[g.red], rated_start[g.black]) else {
            continue;
        };
        let s = f64::from(g.red_halves) / 2.0;
        let e = expected_score(f64::from(r), f64::from(b));
        sum[g.red] += s - e;
        sum[g.black] += (1.0 - s) - (1.0 - e);
        expected[g.red] += e;
        expected[g.black] += 1.0 - e;
        rated[g.red] += 1;
        rated[g.black] += 1;
    }
    Ok((0..n)
        .map(|p| {
            let (opp, sc) = opponents(p, &before);
            let performance = performance_rating(&opp, sc);
            let (k, change, after) = match rated_start[p] {
                Some(r) => {
                    let k = options.k.k(r, players[p].games);
                    let change = f64::from(k) * sum[p];
                    (Some(k), change, Some(r + change.round() as i32))
                }
                // A first rating from the performance: no change on top of it.
                None => (None, 0.0, start[p]),
            };
            RatingRow {
                player: p,
                before: before[p],
                initial: initial[p],
                k,
                games: count[p],
                rated_games: rated[p],
                score: score[p],
                expected: expected[p],
                performance,
                change,
                after,
            }
        })
        .collect())
}

/// The rating list's order: best rating after the event first (unrated last), then by name.
pub fn rating_order<'a>(rows: &'a [RatingRow], names: &[String]) -> Vec<&'a RatingRow> {
    let mut order: Vec<&RatingRow> = rows.iter().collect();
    order.sort_by(|a, b| {
        b.after
            .cmp(&a.after)
            .then_with(|| names[a.player].cmp(&names[b.player]))
    });
    order
}

/// The rating list as a printable table, in [`rating_order`]:
/// 名次, 姓名, 队名, 赛前, K, 局数, 得分, 期望得分, 表现分, 增减, 赛后.
pub fn rating_table(
    rows: &[RatingRow],
    names: &[String],
    teams: &[String],
    l: crate::text::Lang,
) -> crate::report::Table {
    let order = rating_order(rows, names);
    let fmt2 = |x: f64| format!("{x:.2}");
    let header = [
        l.pick("名次", "Rank"),
        l.pick("姓名", "Player"),
        l.pick("队名", "Team"),
        l.pick("赛前", "Before"),
        "K",
        l.pick("局数", "Games"),
        l.pick("得分", "Score"),
        l.pick("期望得分", "Expected"),
        l.pick("表现分", "Performance"),
        l.pick("增减", "Change"),
        l.pick("赛后", "After"),
    ];
    let mut prev: Option<Option<i32>> = None;
    let mut rank = 0;
    let body = order
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if prev != Some(r.after) {
                rank = i + 1;
            }
            prev = Some(r.after);
            let before = match (r.before, r.initial, r.after) {
                (Some(b), _, _) => b.to_string(),
                (None, true, _) => l.pick("无（首次）", "none (first)").to_string(),
                (None, false, _) => l.pick("无", "none").to_string(),
            };
            vec![
                if r.after.is_some() {
                    rank.to_string()
                } else {
                    "-".to_string()
                },
                names.get(r.player).cloned().unwrap_or_default(),
                teams.get(r.player).cloned().unwrap_or_default(),
                before,
                r.k.map(|k| k.to_string()).unwrap_or_default(),
                r.games.to_string(),
                crate::points::Points::from_halves((r.score * 2.0).round() as i32).to_string(),
                if r.rated_games > 0 {
                    fmt2(r.expected)
                } else {
                    String::new()
                },
                r.performance
                    .map(|p| format!("{}", p.round() as i64))
                    .unwrap_or_default(),
                if r.k.is_some() {
                    format!("{:+}", r.change.round() as i64)
                } else {
                    String::new()
                },
                r.after.map(|a| a.to_string()).unwrap_or_default(),
            ]
        })
        .collect();
    crate::report::Table {
        title: l.pick("等级分表", "Rating list").to_string(),
        header: header.iter().map(|s| s.to_string()).collect(),
        rows: body,
        left: vec![1, 2],
        points: vec![6],
        notes: vec![],
    }
}

/// An entry of a rating list read from text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RatingEntry {
    /// Player name.
    pub name: String,
    /// Rating, `None` if unrated.
    pub rating: Option<i32>,
    /// Rated games played before.
    pub games: u32,
}

/// Why a rating list text was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct RatingListError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Reads a rating list: CSV lines `name,rating[,games]` (RFC 4180 quotes allowed), an optional
/// header line (first cell `name` or `姓名`), a leading UTF-8 BOM and empty lines ignored; an
/// empty rating is an unrated player. Ratings 0–4000, games 0–100000; names unique.
pub fn parse_rating_list(text: &str) -> Result<Vec<RatingEntry>, RatingListError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out: Vec<RatingEntry> = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let line = i + 1;
        let err = |m: String| RatingListError { line, message: m };
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.trim().is_empty() {
            continue;
        }
        let cells = split_csv_line(raw).map_err(err)?;
        let first = cells.first().map(|c| c.trim()).unwrap_or_default();
        if out.is_empty() && (first.eq_ignore_ascii_case("name") || first == "姓名") {
            continue;
        }
        if !(2..=3).contains(&cells.len()) {
            return Err(err(format!(
                "expected name,rating[,games], got {} fields",
                cells.len()
            )));
        }
        let name = first.to_string();
        if name.is_empty() {
            return Err(err("empty name".into()));
        }
        let rating = match cells[1].trim() {
            "" => None,
            r => match r.parse::<i32>() {
                Ok(v) if (0..=4000).contains(&v) => Some(v),
                _ => return Err(err(format!("rating {r:?} is not a whole number 0–4000"))),
            },
        };
        let games = match cells.get(2).map(|g| g.trim()) {
            None | Some("") => 0,
            Some(g) => match g.parse::<u32>() {
                Ok(v) if v <= 100_000 => v,
                _ => return Err(err(format!("games {g:?} is not a whole number 0–100000"))),
            },
        };
        if out.iter().any(|e| e.name == name) {
            return Err(err(format!("{name:?} is listed twice")));
        }
        out.push(RatingEntry {
            name,
            rating,
            games,
        });
    }
    Ok(out)
}

/// Splits one CSV line into cells (RFC 4180 quoting; no line breaks inside quotes).
fn split_csv_line(line: &str) -> Result<Vec<String>, String> {
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (true, c) => cur.push(c),
            (false, '"') if cur.trim().is_empty() && !was_quoted => {
                cur.clear();
                quoted = true;
                was_quoted = true;
            }
            (false, '"') => return Err("a quote inside an unquoted field".into()),
            (false, ',') => {
                cells.push(std::mem::take(&mut cur));
                was_quoted = false;
            }
            (false, c) if was_quoted && !c.is_whitespace() => {
                return Err("text after a closing quote".into());
            }
            (false, c) => cur.push(c),
        }
    }
    if quoted {
        return Err("a quoted field is not closed".into());
    }
    cells.push(cur);
    Ok(cells)
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

    /// The worked example of the English Wikipedia article "Elo rating system" (section
    /// "Mathematical details"), with its K = 32: a player rated 1613 loses to 1609, draws with
    /// 1477, beats 1388 and 1586, loses to 1720: score 2½ against an expected 2.867 (the article
    /// rounds each term: 0.51 + 0.69 + 0.79 + 0.54 + 0.35 = 2.88), new rating 1601. Seed 001's
    /// Elo text states the method (rating difference ↔ expected score) but prints no numbers.
    #[test]
    fn published_worked_example() {
        let ratings = [1613, 1609, 1477, 1388, 1586, 1720];
        let players: Vec<RatedPlayer> = ratings
            .iter()
            .map(|&r| RatedPlayer {
                rating: Some(r),
                games: 100,
            })
            .collect();
        // Player 0 is Red in every game; Red's score in half points.
        let games: Vec<RatedGame> = [(1, 0), (2, 1), (3, 2), (4, 2), (5, 0)]
            .iter()
            .map(|&(o, h)| RatedGame {
                red: 0,
                black: o,
                red_halves: h,
            })
            .collect();
        let rule = KRule {
            bands: vec![],
            otherwise: 32,
        };
        let options = EloOptions {
            k: rule,
            initial: InitialRating::Unrated,
        };
        let list = rating_list(&players, &games, &options).unwrap();
        let a = list[0];
        assert_eq!(a.score, 2.5);
        assert!((a.expected - 2.8666).abs() < 1e-3, "{}", a.expected);
        for (opp, e) in [
            (1609, 0.51),
            (1477, 0.69),
            (1388, 0.79),
            (1586, 0.54),
            (1720, 0.35),
        ] {
            let x = expected_score(1613.0, f64::from(opp));
            assert!((x - e).abs() < 0.005, "{opp}: {x}");
        }
        assert_eq!(a.k, Some(32));
        assert!((a.change - 32.0 * (2.5 - a.expected)).abs() < 1e-9);
        assert_eq!(a.after, Some(1601));
        // rate_event agrees.
        let ev = rate_event(&players, &games, &options.k).unwrap();
        assert_eq!(ev[0].map(|c| c.after), Some(1601));
        // Performance: average 1556, score 50 %: dp 0 … here 2.5/5 = 50 %: exactly the average.
        assert_eq!(a.performance.map(|p| p.round()), Some(1556.0));
    }

    #[test]
    fn rating_difference_inverts_the_expectation() {
        for d in [-700.0, -400.0, -100.0, 0.0, 50.0, 333.0, 799.0] {
            let p = expected_score(d, 0.0);
            assert!((rating_difference(p) - d).abs() < 1e-6, "{d}");
        }
        assert_eq!(rating_difference(1.0), 800.0);
        assert_eq!(rating_difference(0.0), -800.0);
        // 2 of 2 against 2000 and 2200: 2100 + 800.
        assert_eq!(performance_rating(&[2000, 2200], 2.0), Some(2900.0));
        assert_eq!(performance_rating(&[], 1.0), None);
    }

    #[test]
    fn first_ratings_for_unrated_players() {
        // Player 2 is unrated and scores 1½ of 2 against 1800 and 2000 (75 %: dp = 190.85).
        let players = [
            RatedPlayer {
                rating: Some(1800),
                games: 50,
            },
            RatedPlayer {
                rating: Some(2000),
                games: 50,
            },
            RatedPlayer {
                rating: None,
                games: 0,
            },
        ];
        let games = [
            RatedGame {
                red: 2,
                black: 0,
                red_halves: 2,
            },
            RatedGame {
                red: 1,
                black: 2,
                red_halves: 1,
            },
        ];
        let perf = |min_games| EloOptions {
            k: KRule::default(),
            initial: InitialRating::Performance { min_games },
        };
        let list = rating_list(&players, &games, &perf(2)).unwrap();
        assert_eq!(list[2].after, Some(2091));
        assert!(list[2].initial);
        assert_eq!(list[2].k, None);
        // Its games do not move the rated players (it had no rating before the event).
        assert_eq!(list[0].after, Some(1800));
        assert_eq!(list[0].rated_games, 0);
        // Too few games: stays unrated.
        let list = rating_list(&players, &games, &perf(3)).unwrap();
        assert_eq!(list[2].after, None);
        // A fixed start: rated from 1500 like everybody else (K 40, fewer than 30 games).
        let fixed = EloOptions {
            k: KRule::default(),
            initial: InitialRating::Fixed(1500),
        };
        let list = rating_list(&players, &games, &fixed).unwrap();
        assert_eq!(list[2].k, Some(40));
        assert!(list[2].after > Some(1500));
        assert!(list[0].after < Some(1800));
        assert_eq!(
            rating_list(
                &players,
                &[RatedGame {
                    red: 1,
                    black: 1,
                    red_halves: 1
                }],
                &fixed
            ),
            Err(EloError::SelfGame(0))
        );
    }

    #[test]
    fn rating_lists_from_text() {
        let text =
            "\u{feff}姓名,等级分,局数\r\n王天一,2650,300\r\n\"Li, Jr\",2400\r\n新人,,\r\n\r\n";
        let list = parse_rating_list(text).unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[0].rating, Some(2650));
        assert_eq!(list[0].games, 300);
        assert_eq!(list[1].name, "Li, Jr");
        assert_eq!(list[2].rating, None);
        let e = |t: &str| parse_rating_list(t).unwrap_err();
        assert_eq!(e("a,x").line, 1);
        assert!(
            e("a,1\nb,1,2,3").message.contains("3 fields")
                || e("a,1\nb,1,2,3").message.contains("4 fields")
        );
        assert!(e("a,1\na,2").message.contains("twice"));
        assert!(e("a,9999").message.contains("0–4000"));
        assert!(e("\"a,1").message.contains("not closed"));
        assert!(e(",1").message.contains("empty name"));
    }

    proptest::proptest! {
        /// Any text: a list or a typed error, never a panic.
        #[test]
        fn rating_list_text_never_panics(text in ".{0,200}") {
            let _ = parse_rating_list(&text);
        }

        #[test]
        fn rating_list_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let _ = parse_rating_list(&String::from_utf8_lossy(&bytes));
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
