//! Team Swiss (积分编排制) with deterministic positional pairing (定位编排), after seed 001
//! (高海明, 象棋比赛的积分编排制) and 1999 appendix 2:
//!
//! - teams that met are never paired again;
//! - the colour (先走/后走) balance is kept: no team's count of first-moves minus second-moves
//!   ever leaves −2…+2, and each team alternates where it can;
//! - in round 1 two teams of the same unit avoid each other where possible (only in round 1);
//! - the result is unique for a given input (定位编排使编排结果具有唯一性).
//!
//! Round 1: teams in draw-number order (序列号) are split into an upper and a lower half, either
//! odd/even numbers (1,3,5… vs 2,4,6…: 1–2, 3–4, …) or first/second half (1…n/2 vs n/2+1…n:
//! 1–(n/2+1), …); the i-th of the upper half meets the i-th of the lower half. The lot decides
//! whether the upper team moves first on table 1; colours then alternate by table.
//!
//! Later rounds: teams are placed (定位) by 场分, then draw number. From the top, each unpaired
//! team meets the highest-placed unpaired team below it that it has not met and with which the
//! colour limits hold; if the rest cannot then be paired, the next candidate is tried
//! (backtracking), so the pairing is the first admissible one in placement order. With an odd
//! number of teams the lowest-placed team that has not had a bye gets it (scored as a win, 14.4).
//!
//! Colours of a pair: the team with fewer first-moves (net) moves first; if equal, each takes the
//! opposite of its last colour; if that does not settle it, the higher-placed team takes the
//! opposite of its own last colour (first, if it has none).

use crate::entities::TeamIdx;
use crate::points::Points;
use std::collections::BTreeSet;

/// A team as the Swiss pairing sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwissTeam {
    /// Draw number (序列号), 1-based and unique; lower is placed higher on equal points.
    pub seed: u32,
    /// The unit (参赛单位) for the round-1 avoidance.
    pub unit: String,
    /// Withdrawn (20.4): no longer paired; its past games still count for the others.
    pub withdrawn: bool,
}

/// One played round: pairings `(first, second, [first's 场分, second's 场分])` and the bye.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SwissRound {
    /// Matches with the 场分 each side scored.
    pub pairings: Vec<(TeamIdx, TeamIdx, [Points; 2])>,
    /// The team with the bye and the 场分 it was given.
    pub bye: Option<(TeamIdx, Points)>,
}

/// How round 1 splits the draw numbers (seed 001, 序列号的区分方式).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FirstRoundSplit {
    /// ① odd numbers upper half, even lower: 1–2, 3–4, … (default).
    #[default]
    OddEven,
    /// ② 1…n/2 upper, n/2+1…n lower: 1–(n/2+1), 2–(n/2+2), … .
    TopBottom,
}

/// Options of the Swiss pairing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwissOptions {
    /// Round-1 split.
    pub split: FirstRoundSplit,
    /// Avoid same-unit pairs in round 1 (同一单位可在第一轮回避配对).
    pub avoid_same_unit_in_round_1: bool,
    /// The lot: does the upper-half team move first on table 1 of round 1?
    pub upper_moves_first_on_table_1: bool,
}

impl Default for SwissOptions {
    fn default() -> Self {
        SwissOptions {
            split: FirstRoundSplit::OddEven,
            avoid_same_unit_in_round_1: true,
            upper_moves_first_on_table_1: true,
        }
    }
}

/// A round's pairing: tables in order, each `(first, second)` with `first` moving first
/// (Red on odd boards, 13.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwissPairing {
    /// Tables, table 1 first.
    pub tables: Vec<(TeamIdx, TeamIdx)>,
    /// The team with the bye.
    pub bye: Option<TeamIdx>,
}

/// Why a round cannot be paired.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SwissError {
    /// Fewer than two teams.
    #[error("a Swiss needs at least 2 teams")]
    TooFewTeams,
    /// Draw numbers must be unique.
    #[error("draw number {0} is used twice")]
    DuplicateSeed(u32),
    /// A round refers to a missing team or repeats one.
    #[error("round {round}: team {team} does not exist or appears twice")]
    BadRound {
        /// 1-based round.
        round: usize,
        /// Team index.
        team: usize,
    },
    /// No pairing without a rematch within the colour limits exists.
    #[error("round {0} cannot be paired without a rematch or breaking the colour limits")]
    NoPairing(usize),
}

/// Bound on the backtracking search (a round that needs more is refused, not hung on).
const SEARCH_LIMIT: u64 = 2_000_000;

#[derive(Clone, Default)]
struct State {
    score: Points,
    diff: i32,
    last: Option<bool>,
    met: BTreeSet<TeamIdx>,
    had_bye: bool,
}

/// Pairs the next round (round `played.len() + 1`).
pub fn pair_next_round(
    teams: &[SwissTeam],
    played: &[SwissRound],
    options: SwissOptions,
) -> Result<SwissPairing, SwissError> {
    let n = teams.len();
    if teams.iter().filter(|t| !t.withdrawn).count() < 2 {
        return Err(SwissError::TooFewTeams);
    }
    let mut seeds = BTreeSet::new();
    for t in teams {
        if !seeds.insert(t.seed) {
            return Err(SwissError::DuplicateSeed(t.seed));
        }
    }
    let mut st = vec![State::default(); n];
    for (r, round) in played.iter().enumerate() {
        let mut seen = BTreeSet::new();
        let mut check = |t: usize| {
            if t >= n || !seen.insert(t) {
                Err(SwissError::BadRound {
                    round: r + 1,
                    team: t,
                })
            } else {
                Ok(())
            }
        };
        for &(a, b, pts) in &round.pairings {
            check(a)?;
            check(b)?;
            for (t, o, first, p) in [(a, b, true, pts[0]), (b, a, false, pts[1])] {
                let s = &mut st[t];
                s.score += p;
                s.diff += if first { 1 } else { -1 };
                s.last = Some(first);
                s.met.insert(o);
            }
        }
        if let Some((t, p)) = round.bye {
            check(t)?;
            st[t].score += p;
            st[t].had_bye = true;
        }
    }
    let round_no = played.len() + 1;
    if played.is_empty() {
        return Ok(first_round(teams, options));
    }
    // Placement: 场分 desc, then draw number asc.
    let mut order: Vec<TeamIdx> = (0..n).filter(|&t| !teams[t].withdrawn).collect();
    if order.len() < 2 {
        return Err(SwissError::TooFewTeams);
    }
    order.sort_by(|&a, &b| {
        st[b]
            .score
            .cmp(&st[a].score)
            .then(teams[a].seed.cmp(&teams[b].seed))
    });
    let mut budget = SEARCH_LIMIT;
    if order.len() % 2 == 0 {
        let pairs = search(&order, &st, &mut budget).ok_or(SwissError::NoPairing(round_no))?;
        return Ok(SwissPairing {
            tables: pairs,
            bye: None,
        });
    }
    // Odd: the lowest-placed team without a bye sits out (then the next lowest, if the rest
    // cannot be paired).
    let mut candidates: Vec<TeamIdx> = order
        .iter()
        .rev()
        .copied()
        .filter(|&t| !st[t].had_bye)
        .collect();
    if candidates.is_empty() {
        candidates = order.iter().rev().copied().collect();
    }
    for bye in candidates {
        let rest: Vec<TeamIdx> = order.iter().copied().filter(|&t| t != bye).collect();
        if let Some(pairs) = search(&rest, &st, &mut budget) {
            return Ok(SwissPairing {
                tables: pairs,
                bye: Some(bye),
            });
        }
    }
    Err(SwissError::NoPairing(round_no))
}

fn first_round(teams: &[SwissTeam], options: SwissOptions) -> SwissPairing {
    let mut by_seed: Vec<TeamIdx> = (0..teams.len()).filter(|&t| !teams[t].withdrawn).collect();
    by_seed.sort_by_key(|&t| teams[t].seed);
    let bye = if by_seed.len() % 2 == 1 {
        by_seed.pop()
    } else {
        None
    };
    let half = by_seed.len() / 2;
    let (upper, mut lower): (Vec<TeamIdx>, Vec<TeamIdx>) = match options.split {
        FirstRoundSplit::OddEven => (
            by_seed.iter().step_by(2).copied().collect(),
            by_seed.iter().skip(1).step_by(2).copied().collect(),
        ),
        FirstRoundSplit::TopBottom => (by_seed[..half].to_vec(), by_seed[half..].to_vec()),
    };
    if options.avoid_same_unit_in_round_1 {
        let same = |u: TeamIdx, l: TeamIdx| teams[u].unit == teams[l].unit;
        for i in 0..half {
            if !same(upper[i], lower[i]) {
                continue;
            }
            // Swap with the nearest lower-half team (later tables first, then earlier) such that
            // both tables become mixed.
            let later = (i + 1..half).chain((0..i).rev());
            for j in later {
                if !same(upper[i], lower[j]) && !same(upper[j], lower[i]) {
                    lower.swap(i, j);
                    break;
                }
            }
        }
    }
    let tables = upper
        .iter()
        .zip(&lower)
        .enumerate()
        .map(|(k, (&u, &l))| {
            let upper_first = (k % 2 == 0) == options.upper_moves_first_on_table_1;
            if upper_first { (u, l) } else { (l, u) }
        })
        .collect();
    SwissPairing { tables, bye }
}

fn colours_ok(a: &State, b: &State) -> bool {
    let fits = |d: i32| (-2..=2).contains(&d);
    (fits(a.diff + 1) && fits(b.diff - 1)) || (fits(a.diff - 1) && fits(b.diff + 1))
}

/// `(first, second)` for a pair where `hi` is placed above `lo`.
fn allocate(hi: TeamIdx, lo: TeamIdx, st: &[State]) -> (TeamIdx, TeamIdx) {
    let (h, l) = (&st[hi], &st[lo]);
    let fits = |d: i32| (-2..=2).contains(&d);
    let hi_first_ok = fits(h.diff + 1) && fits(l.diff - 1);
    let lo_first_ok = fits(l.diff + 1) && fits(h.diff - 1);
    let hi_first = if !lo_first_ok {
        true
    } else if !hi_first_ok {
        false
    } else if h.diff != l.diff {
        h.diff < l.diff
    } else {
        match (h.last, l.last) {
            (Some(x), Some(y)) if x != y => !x,
            (Some(x), _) => !x,
            (None, Some(y)) => y,
            (None, None) => true,
        }
    };
    if hi_first { (hi, lo) } else { (lo, hi) }
}

fn search(order: &[TeamIdx], st: &[State], budget: &mut u64) -> Option<Vec<(TeamIdx, TeamIdx)>> {
    let mut used = vec![false; order.len()];
    let mut out = Vec::with_capacity(order.len() / 2);
    if rec(order, st, &mut used, &mut out, budget) {
        Some(out)
    } else {
        None
    }
}

fn rec(
    order: &[TeamIdx],
    st: &[State],
    used: &mut [bool],
    out: &mut Vec<(TeamIdx, TeamIdx)>,
    budget: &mut u64,
) -> bool {
    let Some(i) = used.iter().position(|u| !u) else {
        return true;
    };
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    let t = order[i];
    used[i] = true;
    for j in i + 1..order.len() {
        if used[j] {
            continue;
        }
        let u = order[j];
        if st[t].met.contains(&u) || !colours_ok(&st[t], &st[u]) {
            continue;
        }
        used[j] = true;
        out.push(allocate(t, u, st));
        if rec(order, st, used, out, budget) {
            return true;
        }
        out.pop();
        used[j] = false;
    }
    used[i] = false;
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn teams(units: &[&str]) -> Vec<SwissTeam> {
        units
            .iter()
            .enumerate()
            .map(|(i, u)| SwissTeam {
                seed: i as u32 + 1,
                unit: u.to_string(),
                withdrawn: false,
            })
            .collect()
    }

    #[test]
    fn round_one_odd_even_and_top_bottom() -> Result<(), SwissError> {
        let t = teams(&["a", "b", "c", "d", "e", "f"]);
        let p = pair_next_round(&t, &[], SwissOptions::default())?;
        assert_eq!(p.tables, vec![(0, 1), (3, 2), (4, 5)]);
        let p = pair_next_round(
            &t,
            &[],
            SwissOptions {
                split: FirstRoundSplit::TopBottom,
                upper_moves_first_on_table_1: false,
                ..Default::default()
            },
        )?;
        assert_eq!(p.tables, vec![(3, 0), (1, 4), (5, 2)]);
        Ok(())
    }

    #[test]
    fn round_one_same_unit_avoidance() -> Result<(), SwissError> {
        // 1 and 2 are both of unit X: 2 swaps with 4.
        let t = teams(&["X", "X", "Y", "Z"]);
        let p = pair_next_round(&t, &[], SwissOptions::default())?;
        assert_eq!(p.tables, vec![(0, 3), (1, 2)]);
        let p = pair_next_round(
            &t,
            &[],
            SwissOptions {
                avoid_same_unit_in_round_1: false,
                ..Default::default()
            },
        )?;
        assert_eq!(p.tables, vec![(0, 1), (3, 2)]);
        Ok(())
    }

    #[test]
    fn odd_count_bye_to_lowest_without_bye() -> Result<(), SwissError> {
        let t = teams(&["a", "b", "c", "d", "e"]);
        let r1 = pair_next_round(&t, &[], SwissOptions::default())?;
        assert_eq!(r1.bye, Some(4));
        let w = Points::whole(2);
        let z = Points::ZERO;
        let played = vec![SwissRound {
            pairings: r1.tables.iter().map(|&(a, b)| (a, b, [w, z])).collect(),
            bye: Some((4, w)),
        }];
        let r2 = pair_next_round(&t, &played, SwissOptions::default())?;
        assert!(r2.bye.is_some() && r2.bye != Some(4));
        Ok(())
    }

    #[test]
    fn withdrawn_teams_are_not_paired() -> Result<(), SwissError> {
        let mut t = teams(&["a", "b", "c", "d"]);
        let w = Points::whole(2);
        let z = Points::ZERO;
        let played = vec![SwissRound {
            pairings: vec![(0, 1, [w, z]), (3, 2, [w, z])],
            bye: None,
        }];
        t[3].withdrawn = true;
        let p = pair_next_round(&t, &played, SwissOptions::default())?;
        assert_eq!(p.tables.len(), 1);
        assert!(p.tables.iter().all(|&(a, b)| a != 3 && b != 3));
        assert!(p.bye.is_some() && p.bye != Some(3));
        Ok(())
    }

    #[test]
    fn errors() {
        assert_eq!(
            pair_next_round(&teams(&["a"]), &[], SwissOptions::default()),
            Err(SwissError::TooFewTeams)
        );
        let mut t = teams(&["a", "b"]);
        t[1].seed = 1;
        assert_eq!(
            pair_next_round(&t, &[], SwissOptions::default()),
            Err(SwissError::DuplicateSeed(1))
        );
        let t = teams(&["a", "b"]);
        let played = vec![SwissRound {
            pairings: vec![(0, 1, [Points::whole(1), Points::whole(1)])],
            bye: None,
        }];
        assert_eq!(
            pair_next_round(&t, &played, SwissOptions::default()),
            Err(SwissError::NoPairing(2))
        );
    }
}
