//! Individual tables: individual standings (2011 14.1, 14.3.1, 14.3.2; 1999 15.1, 15.2) with
//! 小分 (Sonneborn–Berger), 对手分 and 累进分, and per-board results with board prizes for team
//! leagues.

use crate::chain::GameScoring;
use crate::colour::{Colour, Side};
use crate::points::Points;
use crate::ranking::{Ranked, rank};
use std::collections::BTreeMap;
use std::fmt;

/// Index of a player in the caller's player list.
pub type PlayerIdx = usize;

/// A game's result, Red first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndividualResult {
    /// Red won.
    RedWins,
    /// Drawn.
    Draw,
    /// Black won.
    BlackWins,
    /// Red did not play (`-`); Black wins `+`.
    RedForfeits,
    /// Black did not play; Red wins `+`.
    BlackForfeits,
    /// Neither played, or both lost (21.3 双方弃: both past the lateness limit): both `-`, each
    /// scoring a loss; a game for both, won by neither.
    BothForfeit,
}

/// One individual game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndividualGame {
    /// Round (1-based).
    pub round: u32,
    /// Red player.
    pub red: PlayerIdx,
    /// Black player.
    pub black: PlayerIdx,
    /// Result.
    pub result: IndividualResult,
    /// Fouls `[red, black]`.
    pub fouls: [u32; 2],
}

/// An individual ranking criterion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndividualCriterion {
    /// 积分 (in 14.2: 局分总和).
    Points,
    /// 14.2 个人场分: each pairing of a multi-game round robin is a mini-match (all the games
    /// the two players played in that round) scoring 2 / 1 / 0 on its game points.
    MatchPoints,
    /// 后走胜局 (games won with Black).
    BlackWins,
    /// 18.4 penalties, last among equals.
    Penalties,
    /// 小分: points of the opponents beaten plus half the points of those drawn with.
    SonnebornBerger,
    /// 对手分: the sum of the opponents' points.
    OpponentScore,
    /// 累进分: the sum of the running totals after each round.
    Progressive,
    /// 14.3.2: 累进分 without round 1, then without rounds 1–2, … .
    ProgressiveCut,
    /// 胜局.
    Wins,
    /// 直胜 among all tied players.
    HeadToHead,
    /// 犯规 (fewer first).
    Fouls,
    /// 后走局数 (more first).
    BlackGames,
    /// 对局时后走: of two tied players who met, the one who had Black.
    BlackInMutualGame,
    /// Running total after the previous round, then the one before, … .
    EarlierRounds,
}

impl IndividualCriterion {
    /// Stable machine code.
    pub fn code(self) -> &'static str {
        use IndividualCriterion::*;
        match self {
            Points => "points",
            MatchPoints => "match_points",
            BlackWins => "black_wins",
            Penalties => "penalties",
            SonnebornBerger => "sonneborn_berger",
            OpponentScore => "opponent_score",
            Progressive => "progressive",
            ProgressiveCut => "progressive_cut",
            Wins => "wins",
            HeadToHead => "head_to_head",
            Fouls => "fouls",
            BlackGames => "black_games",
            BlackInMutualGame => "black_in_mutual_game",
            EarlierRounds => "earlier_rounds",
        }
    }

    /// The name used in the rules.
    pub fn chinese(self) -> &'static str {
        use IndividualCriterion::*;
        match self {
            Points => "积分",
            MatchPoints => "场分",
            BlackWins => "后走胜局",
            Penalties => "处分",
            SonnebornBerger => "小分",
            OpponentScore => "对手分",
            Progressive => "累进分",
            ProgressiveCut => "累进分(去轮)",
            Wins => "胜局",
            HeadToHead => "直胜",
            Fouls => "犯规",
            BlackGames => "后走局数",
            BlackInMutualGame => "对局时后走",
            EarlierRounds => "前轮成绩",
        }
    }
}

impl fmt::Display for IndividualCriterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.chinese(), self.code())
    }
}

/// Preset chains (18.4 penalties right after the points).
pub mod chains {
    use super::IndividualCriterion;
    use super::IndividualCriterion::*;
    /// 2011 14.1 (round robin, one game): 积分, 小分, 胜局, 直胜, 犯规, 后走局数, 对局时后走.
    pub const ROUND_ROBIN_2011: &[IndividualCriterion] = &[
        Points,
        Penalties,
        SonnebornBerger,
        Wins,
        HeadToHead,
        Fouls,
        BlackGames,
        BlackInMutualGame,
    ];
    /// 2011 14.2 (round robin of two or more games per pairing): 场分, 局分总和, 胜局, 直胜, 犯规,
    /// 后走胜局.
    pub const ROUND_ROBIN_MULTI_GAME_2011: &[IndividualCriterion] = &[
        MatchPoints,
        Penalties,
        Points,
        Wins,
        HeadToHead,
        Fouls,
        BlackWins,
    ];
    /// 2011 14.3.1 (Swiss): 积分, 对手分, 胜局, 犯规, 后走局数, then earlier rounds.
    pub const SWISS_2011_OPPONENTS: &[IndividualCriterion] = &[
        Points,
        Penalties,
        OpponentScore,
        Wins,
        Fouls,
        BlackGames,
        EarlierRounds,
    ];
    /// 2011 14.3.2 (Swiss): 积分, 累进分, 胜局, 犯规, 后走局数, then 累进分 without the first rounds.
    pub const SWISS_2011_PROGRESSIVE: &[IndividualCriterion] = &[
        Points,
        Penalties,
        Progressive,
        Wins,
        Fouls,
        BlackGames,
        ProgressiveCut,
    ];
    /// 1999 15.1 (round robin): 积分, 小分, 胜局, 直胜, 犯规.
    pub const ROUND_ROBIN_1999: &[IndividualCriterion] =
        &[Points, Penalties, SonnebornBerger, Wins, HeadToHead, Fouls];
    /// 1999 15.2 (Swiss): 积分, 对手分, 胜局, 犯规.
    pub const SWISS_1999: &[IndividualCriterion] = &[Points, Penalties, OpponentScore, Wins, Fouls];
}

/// A player's line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndividualRow {
    /// The player.
    pub player: PlayerIdx,
    /// Rank, shared when tied.
    pub rank: u32,
    /// What separated the player from the row above (first row: from the row below).
    pub decided_by: Option<IndividualCriterion>,
    /// Games (incl. forfeits and byes).
    pub games: u32,
    /// 积分.
    pub points: Points,
    /// 胜局.
    pub wins: u32,
    /// 小分, in quarter points (½ of a ½-point score is ¼).
    pub sonneborn_berger_quarters: i64,
    /// 对手分.
    pub opponent_score: Points,
    /// 累进分.
    pub progressive: Points,
    /// 犯规.
    pub fouls: u32,
    /// 后走局数.
    pub black_games: u32,
    /// 后走胜局.
    pub black_wins: u32,
    /// 14.2 个人场分 (each round's games against one opponent form a mini-match: 2 / 1 / 0).
    pub match_points: Points,
}

/// Input to [`individual_standings`].
#[derive(Clone, Debug)]
pub struct IndividualInput<'a> {
    /// Number of players.
    pub player_count: usize,
    /// Game points.
    pub scoring: GameScoring,
    /// Criteria.
    pub criteria: &'a [IndividualCriterion],
    /// Games.
    pub games: Vec<IndividualGame>,
    /// Byes `(round, player)`: scored as a win (14.4); the bye's 对手分 is the lowest score
    /// among players with points.
    pub byes: Vec<(u32, PlayerIdx)>,
    /// Penalties per player: (disqualifications, warnings).
    pub penalties: BTreeMap<PlayerIdx, (u32, u32)>,
}

/// Why individual standings cannot be computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IndividualError {
    /// A player index is out of range.
    #[error("game #{game}: player {player} does not exist")]
    NoSuchPlayer {
        /// Game index (0-based).
        game: usize,
        /// Player index.
        player: usize,
    },
    /// A player meets themself.
    #[error("game #{0}: a player cannot play themself")]
    SelfGame(usize),
}

#[derive(Default, Clone)]
struct Acc {
    games: u32,
    points: Points,
    wins: u32,
    fouls: u32,
    black_games: u32,
    black_wins: u32,
    // (opponent, my points, opponent's result from my view: 2 win, 1 draw, 0 loss)
    opp: Vec<(Option<PlayerIdx>, u8)>,
    per_round: BTreeMap<u32, Points>,
}

/// Computes individual standings.
pub fn individual_standings(
    input: IndividualInput<'_>,
) -> Result<Vec<IndividualRow>, IndividualError> {
    let n = input.player_count;
    let sc = input.scoring;
    let mut acc = vec![Acc::default(); n];
    for (i, g) in input.games.iter().enumerate() {
        for p in [g.red, g.black] {
            if p >= n {
                return Err(IndividualError::NoSuchPlayer { game: i, player: p });
            }
        }
        if g.red == g.black {
            return Err(IndividualError::SelfGame(i));
        }
        use IndividualResult::*;
        let (rp, bp) = game_points(&sc, g.result);
        // (red and black outcomes 2/1/0, counts as played for colours)
        let (ro, bo, played) = match g.result {
            RedWins => (2u8, 0u8, true),
            Draw => (1, 1, true),
            BlackWins => (0, 2, true),
            RedForfeits => (0, 2, false),
            BlackForfeits => (2, 0, false),
            BothForfeit => (0, 0, false),
        };
        for (me, opp, pts, outcome, colour, fouls) in [
            (g.red, g.black, rp, ro, Colour::Red, g.fouls[0]),
            (g.black, g.red, bp, bo, Colour::Black, g.fouls[1]),
        ] {
            let a = &mut acc[me];
            a.games += 1;
            a.points += pts;
            a.wins += u32::from(outcome == 2);
            a.fouls += fouls;
            a.black_games += u32::from(played && colour == Colour::Black);
            a.black_wins += u32::from(played && colour == Colour::Black && outcome == 2);
            a.opp.push((Some(opp), outcome));
            *a.per_round.entry(g.round).or_default() += pts;
        }
    }
    for &(round, p) in &input.byes {
        if p >= n {
            return Err(IndividualError::NoSuchPlayer {
                game: usize::MAX,
                player: p,
            });
        }
        let a = &mut acc[p];
        a.games += 1;
        a.points += sc.win;
        a.wins += 1;
        a.opp.push((None, 2));
        *a.per_round.entry(round).or_default() += sc.win;
    }
    // 14.2 mini-matches: the games of one round between the same two players.
    let mut mini: BTreeMap<(u32, PlayerIdx, PlayerIdx), [Points; 2]> = BTreeMap::new();
    for g in &input.games {
        let (lo, hi) = (g.red.min(g.black), g.red.max(g.black));
        let (rp, bp) = game_points(&sc, g.result);
        let e = mini.entry((g.round, lo, hi)).or_default();
        let (pl, ph) = if g.red == lo { (rp, bp) } else { (bp, rp) };
        e[0] += pl;
        e[1] += ph;
    }
    let mut match_points = vec![crate::points::Points::ZERO; n];
    for (&(_, lo, hi), pts) in &mini {
        let (a, b) = match pts[0].cmp(&pts[1]) {
            std::cmp::Ordering::Greater => (2, 0),
            std::cmp::Ordering::Less => (0, 2),
            std::cmp::Ordering::Equal => (1, 1),
        };
        match_points[lo] += crate::points::Points::whole(a);
        match_points[hi] += crate::points::Points::whole(b);
    }
    for &(_, p) in &input.byes {
        match_points[p] += crate::points::Points::whole(2);
    }
    let lowest = acc
        .iter()
        .map(|a| a.points)
        .filter(|&p| p > Points::ZERO)
        .min()
        .unwrap_or(Points::ZERO);
    let pts_of = |o: Option<PlayerIdx>| o.map_or(lowest, |o| acc[o].points);
    let sb: Vec<i64> = acc
        .iter()
        .map(|a| {
            a.opp
                .iter()
                .map(|&(o, r)| i64::from(pts_of(o).halves()) * i64::from(r))
                .sum()
        })
        .collect();
    let opp_score: Vec<Points> = acc
        .iter()
        .map(|a| a.opp.iter().map(|&(o, _)| pts_of(o)).sum())
        .collect();
    let last_round = acc
        .iter()
        .flat_map(|a| a.per_round.keys().copied())
        .max()
        .unwrap_or(0);
    let progressive_from = |a: &Acc, start: u32| -> Points {
        let mut total = Points::ZERO;
        let mut sum = Points::ZERO;
        for r in start..=last_round {
            total += a.per_round.get(&r).copied().unwrap_or_default();
            sum += total;
        }
        sum
    };
    let games = &input.games;
    let h = |p: Points| i64::from(p.halves());
    let key = |c: IndividualCriterion, group: &[usize], t: usize| -> Vec<i64> {
        let a = &acc[t];
        use IndividualCriterion::*;
        match c {
            Points => vec![h(a.points)],
            MatchPoints => vec![h(match_points[t])],
            BlackWins => vec![i64::from(a.black_wins)],
            Penalties => {
                let (d, w) = input.penalties.get(&t).copied().unwrap_or((0, 0));
                vec![-i64::from(d), -i64::from(w)]
            }
            SonnebornBerger => vec![sb[t]],
            OpponentScore => vec![h(opp_score[t])],
            Progressive => vec![h(progressive_from(a, 1))],
            ProgressiveCut => (2..=last_round)
                .map(|s| h(progressive_from(a, s)))
                .collect(),
            Wins => vec![i64::from(a.wins)],
            HeadToHead => {
                let mut total = 0i64;
                for g in games {
                    if group.contains(&g.red)
                        && group.contains(&g.black)
                        && (g.red == t || g.black == t)
                    {
                        let (rp, bp) = game_points(&sc, g.result);
                        total += h(if g.red == t { rp } else { bp });
                    }
                }
                vec![total]
            }
            Fouls => vec![-i64::from(a.fouls)],
            BlackGames => vec![i64::from(a.black_games)],
            BlackInMutualGame => {
                if group.len() != 2 {
                    return vec![0];
                }
                let other = if group[0] == t { group[1] } else { group[0] };
                let had_black = games
                    .iter()
                    .rev()
                    .find(|g| (g.red == t && g.black == other) || (g.red == other && g.black == t));
                vec![i64::from(had_black.is_some_and(|g| g.black == t))]
            }
            EarlierRounds => {
                let mut cum = Vec::new();
                let mut total = crate::points::Points::ZERO;
                for r in 1..last_round {
                    total += a.per_round.get(&r).copied().unwrap_or_default();
                    cum.push(h(total));
                }
                cum.reverse();
                cum
            }
        }
    };
    let items: Vec<usize> = (0..n).collect();
    let ranked: Vec<Ranked<IndividualCriterion>> = rank(&items, input.criteria, &key);
    Ok(ranked
        .into_iter()
        .map(|r| {
            let a = &acc[r.item];
            IndividualRow {
                player: r.item,
                rank: r.rank,
                decided_by: r.decided_by,
                games: a.games,
                points: a.points,
                wins: a.wins,
                sonneborn_berger_quarters: sb[r.item],
                opponent_score: opp_score[r.item],
                progressive: progressive_from(a, 1),
                fouls: a.fouls,
                black_games: a.black_games,
                black_wins: a.black_wins,
                match_points: match_points[r.item],
            }
        })
        .collect())
}

fn game_points(sc: &GameScoring, r: IndividualResult) -> (Points, Points) {
    match r {
        IndividualResult::RedWins | IndividualResult::BlackForfeits => (sc.win, sc.loss),
        IndividualResult::Draw => (sc.draw_red, sc.draw_black),
        IndividualResult::BlackWins | IndividualResult::RedForfeits => (sc.loss, sc.win),
        IndividualResult::BothForfeit => (sc.loss, sc.loss),
    }
}

/// Formats quarter points (小分 with ½-point scores): `3¼` → "3.25".
pub fn quarters_to_decimal(q: i64) -> String {
    let sign = if q < 0 { "-" } else { "" };
    let a = q.unsigned_abs();
    match a % 4 {
        0 => format!("{sign}{}", a / 4),
        1 => format!("{sign}{}.25", a / 4),
        2 => format!("{sign}{}.5", a / 4),
        _ => format!("{sign}{}.75", a / 4),
    }
}

/// One board game of a team league, for per-board tables and board prizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardEntry {
    /// Round.
    pub round: u32,
    /// Board (1-based).
    pub board: u32,
    /// Player name and team name, `[first, second]`.
    pub players: [(String, String); 2],
    /// Board points `[first, second]`.
    pub points: [Points; 2],
    /// Winner, if any.
    pub winner: Option<Side>,
    /// Forfeits `[first, second]`.
    pub forfeit: [bool; 2],
}

/// A player's line in a per-board table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardPrizeRow {
    /// Player name.
    pub player: String,
    /// Team name.
    pub team: String,
    /// Rank on this board (shared when tied).
    pub rank: u32,
    /// Boards played (incl. forfeits).
    pub games: u32,
    /// Wins / draws / losses.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// Losses.
    pub losses: u32,
    /// Board points.
    pub points: Points,
    /// Whether the player reached the minimum games for a prize.
    pub eligible: bool,
}

/// Per-board tables with board prizes: for each board number, the players who played it,
/// ranked by points per game (exact, by cross-multiplication), then points, then games. Players
/// below `min_games` on that board are listed after the eligible ones and cannot win the prize.
pub fn board_tables(entries: &[BoardEntry], min_games: u32) -> BTreeMap<u32, Vec<BoardPrizeRow>> {
    let mut per: BTreeMap<u32, BTreeMap<(String, String), BoardPrizeRow>> = BTreeMap::new();
    for e in entries {
        for side in Side::BOTH {
            let (p, t) = &e.players[side.index()];
            let row = per
                .entry(e.board)
                .or_default()
                .entry((p.clone(), t.clone()))
                .or_insert_with(|| BoardPrizeRow {
                    player: p.clone(),
                    team: t.clone(),
                    rank: 0,
                    games: 0,
                    wins: 0,
                    draws: 0,
                    losses: 0,
                    points: Points::ZERO,
                    eligible: false,
                });
            row.games += 1;
            row.points += e.points[side.index()];
            match e.winner {
                Some(w) if w == side => row.wins += 1,
                Some(_) => row.losses += 1,
                None if e.forfeit[side.index()] => row.losses += 1,
                None => row.draws += 1,
            }
        }
    }
    per.into_iter()
        .map(|(board, rows)| {
            let mut rows: Vec<BoardPrizeRow> = rows.into_values().collect();
            for r in &mut rows {
                r.eligible = r.games >= min_games;
            }
            let cmp = |a: &BoardPrizeRow, b: &BoardPrizeRow| {
                b.eligible
                    .cmp(&a.eligible)
                    .then_with(|| {
                        // points per game, exactly: a.p / a.g vs b.p / b.g
                        let l = i64::from(b.points.halves()) * i64::from(a.games.max(1));
                        let r = i64::from(a.points.halves()) * i64::from(b.games.max(1));
                        l.cmp(&r)
                    })
                    .then(b.points.cmp(&a.points))
                    .then(b.games.cmp(&a.games))
            };
            rows.sort_by(|a, b| cmp(a, b).then(a.player.cmp(&b.player)));
            for i in 0..rows.len() {
                rows[i].rank = if i > 0 && cmp(&rows[i - 1], &rows[i]).is_eq() {
                    rows[i - 1].rank
                } else {
                    i as u32 + 1
                };
            }
            (board, rows)
        })
        .collect()
}
