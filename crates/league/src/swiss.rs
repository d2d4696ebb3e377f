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
    if teams.iter().filter(|t| !t.withdrawn).count() < 2 {
        return Err(SwissError::TooFewTeams);
    }
    let mut seeds = BTreeSet::new();
    for t in teams {
        if !seeds.insert(t.seed) {
            return Err(SwissError::DuplicateSeed(t.seed));
        }
    }
    let st = states(teams, played)?;
    let round_no = played.len() + 1;
    if played.is_empty() {
        return Ok(first_round(teams, options));
    }
    // Placement: 场分 desc, then draw number asc.
    let order = placement(teams, &st);
    if order.len() < 2 {
        return Err(SwissError::TooFewTeams);
    }
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

/// Each team's score, colour balance, last colour, opponents and bye from the rounds played.
fn states(teams: &[SwissTeam], played: &[SwissRound]) -> Result<Vec<State>, SwissError> {
    let n = teams.len();
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
    Ok(st)
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

/// What is wrong with a proposed pairing (an organiser's override, or a least-bad option).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PairingProblem {
    /// A team index that does not exist.
    UnknownTeam(TeamIdx),
    /// A withdrawn team is paired or given the bye.
    Withdrawn(TeamIdx),
    /// A team appears more than once.
    Twice(TeamIdx),
    /// An active team is neither paired nor given the bye.
    Missing(TeamIdx),
    /// A team paired with itself.
    SelfPairing(TeamIdx),
    /// The odd team out has no bye, or an even field has one.
    ByeCount,
    /// Two teams that have met already.
    Rematch(TeamIdx, TeamIdx),
    /// A team's balance of first-moves minus second-moves would leave −2…+2.
    ColourLimit {
        /// The team.
        team: TeamIdx,
        /// Its balance after the round.
        balance: i32,
    },
    /// A second bye for a team while others have had none.
    ByeAgain(TeamIdx),
}

impl PairingProblem {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            PairingProblem::UnknownTeam(_) => "unknown_team",
            PairingProblem::Withdrawn(_) => "withdrawn",
            PairingProblem::Twice(_) => "twice",
            PairingProblem::Missing(_) => "missing",
            PairingProblem::SelfPairing(_) => "self_pairing",
            PairingProblem::ByeCount => "bye_count",
            PairingProblem::Rematch(..) => "rematch",
            PairingProblem::ColourLimit { .. } => "colour_limit",
            PairingProblem::ByeAgain(_) => "bye_again",
        }
    }

    /// A breach of the pairing rules an organiser may accept knowingly (rematch, colour limit,
    /// second bye), as opposed to a pairing that is not a round at all.
    pub fn is_rule_breach(&self) -> bool {
        matches!(
            self,
            PairingProblem::Rematch(..)
                | PairingProblem::ColourLimit { .. }
                | PairingProblem::ByeAgain(_)
        )
    }

    /// A sentence, with team names from `names`.
    pub fn describe(&self, names: &[String]) -> String {
        let n = |t: &TeamIdx| names.get(*t).map_or_else(|| format!("#{t}"), Clone::clone);
        match self {
            PairingProblem::UnknownTeam(t) => format!("team #{} does not exist", t + 1),
            PairingProblem::Withdrawn(t) => format!("{} has withdrawn", n(t)),
            PairingProblem::Twice(t) => format!("{} appears twice", n(t)),
            PairingProblem::Missing(t) => format!("{} is neither paired nor given the bye", n(t)),
            PairingProblem::SelfPairing(t) => format!("{} is paired with itself", n(t)),
            PairingProblem::ByeCount => {
                "the bye must go to exactly one team when the number of teams is odd, and to none when it is even".to_string()
            }
            PairingProblem::Rematch(a, b) => format!("{} and {} have met already", n(a), n(b)),
            PairingProblem::ColourLimit { team, balance } => format!(
                "{} would have {balance:+} first-moves over second-moves (limit ±2)",
                n(team)
            ),
            PairingProblem::ByeAgain(t) => format!("{} would have a second bye", n(t)),
        }
    }
}

/// Checks a proposed pairing of the next round against the rounds played: every problem, none
/// for a valid pairing (a team list with a problem of [`PairingProblem::is_rule_breach`] only
/// is a pairing an organiser may still choose knowingly).
pub fn check_pairing(
    teams: &[SwissTeam],
    played: &[SwissRound],
    proposed: &SwissPairing,
) -> Result<Vec<PairingProblem>, SwissError> {
    let st = states(teams, played)?;
    let n = teams.len();
    let mut problems = Vec::new();
    let mut seen = vec![false; n];
    let mut see = |t: TeamIdx, problems: &mut Vec<PairingProblem>| {
        if t >= n {
            problems.push(PairingProblem::UnknownTeam(t));
            return false;
        }
        if teams[t].withdrawn {
            problems.push(PairingProblem::Withdrawn(t));
        }
        if std::mem::replace(&mut seen[t], true) {
            problems.push(PairingProblem::Twice(t));
            return false;
        }
        true
    };
    for &(a, b) in &proposed.tables {
        if a == b {
            problems.push(PairingProblem::SelfPairing(a));
            continue;
        }
        let (ka, kb) = (see(a, &mut problems), see(b, &mut problems));
        if !(ka && kb) {
            continue;
        }
        if st[a].met.contains(&b) {
            problems.push(PairingProblem::Rematch(a, b));
        }
        for (t, d) in [(a, st[a].diff + 1), (b, st[b].diff - 1)] {
            if !(-2..=2).contains(&d) {
                problems.push(PairingProblem::ColourLimit {
                    team: t,
                    balance: d,
                });
            }
        }
    }
    if let Some(b) = proposed.bye {
        if see(b, &mut problems) && st[b].had_bye {
            let others_without = (0..n).any(|t| !teams[t].withdrawn && t != b && !st[t].had_bye);
            if others_without {
                problems.push(PairingProblem::ByeAgain(b));
            }
        }
    }
    let active = (0..n).filter(|&t| !teams[t].withdrawn).count();
    if (active % 2 == 1) != proposed.bye.is_some() {
        problems.push(PairingProblem::ByeCount);
    }
    for (t, team) in teams.iter().enumerate() {
        if !team.withdrawn && !seen[t] {
            problems.push(PairingProblem::Missing(t));
        }
    }
    Ok(problems)
}

/// A pairing offered to the organiser when no valid one exists, with what it breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairingOption {
    /// The pairing (colours allocated as usual, within the limits where possible).
    pub pairing: SwissPairing,
    /// What it breaks (rematches, colour limits, a second bye).
    pub problems: Vec<PairingProblem>,
    /// Its badness: 1000 per rematch, 100 per step beyond the colour limits, 500 for a second
    /// bye, plus the placement distance of each table (teams placed far apart).
    pub cost: u64,
}

/// The least-bad pairings of the next round, best first (at most `max` of them): for the
/// organiser when [`pair_next_round`] finds no pairing without a rematch within the colour
/// limits. Deterministic; the search is bounded.
pub fn least_bad_pairings(
    teams: &[SwissTeam],
    played: &[SwissRound],
    max: usize,
) -> Result<Vec<PairingOption>, SwissError> {
    let st = states(teams, played)?;
    let order = placement(teams, &st);
    if order.len() < 2 {
        return Err(SwissError::TooFewTeams);
    }
    let byes: Vec<Option<TeamIdx>> = if order.len() % 2 == 1 {
        order.iter().rev().map(|&t| Some(t)).collect()
    } else {
        vec![None]
    };
    let mut best: Vec<Scored> = Vec::new();
    let mut budget = SEARCH_LIMIT;
    let others_without_bye = |b: TeamIdx| order.iter().any(|&t| t != b && !st[t].had_bye);
    for bye in byes {
        let rest: Vec<TeamIdx> = order.iter().copied().filter(|&t| Some(t) != bye).collect();
        let base = match bye {
            Some(b) if st[b].had_bye && others_without_bye(b) => 500,
            _ => 0,
        };
        let mut used = vec![false; rest.len()];
        let mut cur = Vec::new();
        bad_rec(
            &rest,
            &st,
            &mut used,
            &mut cur,
            base,
            bye,
            max,
            &mut best,
            &mut budget,
        );
    }
    Ok(best
        .into_iter()
        .map(|(cost, tables, bye)| {
            let pairing = SwissPairing { tables, bye };
            let problems = check_pairing(teams, played, &pairing).unwrap_or_default();
            PairingOption {
                pairing,
                problems,
                cost,
            }
        })
        .collect())
}

/// A complete candidate: its cost, tables and bye.
type Scored = (u64, Vec<(TeamIdx, TeamIdx)>, Option<TeamIdx>);

fn pair_cost(order: &[TeamIdx], i: usize, j: usize, st: &[State]) -> (u64, (TeamIdx, TeamIdx)) {
    let (t, u) = (order[i], order[j]);
    let (first, second) = allocate(t, u, st);
    let mut cost = (j - i - 1) as u64;
    if st[t].met.contains(&u) {
        cost += 1000;
    }
    for d in [st[first].diff + 1, st[second].diff - 1] {
        cost += 100 * u64::from((d.unsigned_abs()).saturating_sub(2));
    }
    (cost, (first, second))
}

#[allow(clippy::too_many_arguments)]
fn bad_rec(
    order: &[TeamIdx],
    st: &[State],
    used: &mut [bool],
    cur: &mut Vec<(TeamIdx, TeamIdx)>,
    cost: u64,
    bye: Option<TeamIdx>,
    max: usize,
    best: &mut Vec<Scored>,
    budget: &mut u64,
) {
    if best.len() >= max && best.last().is_some_and(|b| cost >= b.0) {
        return;
    }
    let Some(i) = used.iter().position(|u| !u) else {
        let entry = (cost, cur.clone(), bye);
        let at = best.partition_point(|b| b.0 <= cost);
        best.insert(at, entry);
        best.truncate(max);
        return;
    };
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    used[i] = true;
    for j in i + 1..order.len() {
        if used[j] {
            continue;
        }
        let (c, pair) = pair_cost(order, i, j, st);
        used[j] = true;
        cur.push(pair);
        bad_rec(order, st, used, cur, cost + c, bye, max, best, budget);
        cur.pop();
        used[j] = false;
    }
    used[i] = false;
}

/// Placement (定位): active teams by 场分, then draw number.
fn placement(teams: &[SwissTeam], st: &[State]) -> Vec<TeamIdx> {
    let mut order: Vec<TeamIdx> = (0..teams.len()).filter(|&t| !teams[t].withdrawn).collect();
    order.sort_by(|&a, &b| {
        st[b]
            .score
            .cmp(&st[a].score)
            .then(teams[a].seed.cmp(&teams[b].seed))
    });
    order
}

/// An organiser's override of a round's pairing, for the event's log: what the engine paired
/// (or that it found nothing), what was chosen, what that breaks, who and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairingOverride {
    /// Round (1-based).
    pub round: usize,
    /// The engine's pairing, `None` when it found no valid one.
    pub computed: Option<SwissPairing>,
    /// The pairing chosen.
    pub chosen: SwissPairing,
    /// What the chosen pairing breaks (accepted knowingly).
    pub problems: Vec<PairingProblem>,
    /// Who decided.
    pub by: String,
    /// Why.
    pub reason: String,
}

impl PairingOverride {
    /// One log line: `round 5 override by 裁判长: B-A, E-C, bye D (engine: A-B, C-E, bye D); accepted: …; reason: …`.
    pub fn log_line(&self, names: &[String]) -> String {
        let n = |t: TeamIdx| names.get(t).map_or_else(|| format!("#{t}"), Clone::clone);
        let show = |p: &SwissPairing| {
            let mut v: Vec<String> = p
                .tables
                .iter()
                .map(|&(a, b)| format!("{}-{}", n(a), n(b)))
                .collect();
            if let Some(b) = p.bye {
                v.push(format!("bye {}", n(b)));
            }
            v.join(", ")
        };
        let computed = match &self.computed {
            Some(c) => show(c),
            None => "no valid pairing".to_string(),
        };
        let accepted = if self.problems.is_empty() {
            "nothing".to_string()
        } else {
            self.problems
                .iter()
                .map(|p| p.describe(names))
                .collect::<Vec<_>>()
                .join("; ")
        };
        format!(
            "round {} override by {}: {} (engine: {computed}); accepted: {accepted}; reason: {}",
            self.round,
            self.by,
            show(&self.chosen),
            self.reason
        )
    }
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

    #[test]
    fn overrides_are_checked_and_least_bad_options_offered() -> Result<(), SwissError> {
        let t = teams(&["a", "b", "c", "d"]);
        let w = Points::whole(2);
        let z = Points::ZERO;
        // Three rounds: everybody has met everybody.
        let played = vec![
            SwissRound {
                pairings: vec![(0, 1, [w, z]), (2, 3, [w, z])],
                bye: None,
            },
            SwissRound {
                pairings: vec![(3, 0, [z, w]), (1, 2, [w, z])],
                bye: None,
            },
            SwissRound {
                pairings: vec![(0, 2, [w, z]), (3, 1, [w, z])],
                bye: None,
            },
        ];
        assert_eq!(
            pair_next_round(&t, &played, SwissOptions::default()),
            Err(SwissError::NoPairing(4))
        );
        let options = least_bad_pairings(&t, &played, 3)?;
        assert_eq!(options.len(), 3);
        assert!(options.windows(2).all(|w| w[0].cost <= w[1].cost));
        for o in &options {
            // Two rematches each (everybody met), nothing structural.
            assert_eq!(
                o.problems.iter().filter(|p| p.code() == "rematch").count(),
                2
            );
            assert!(o.problems.iter().all(PairingProblem::is_rule_breach));
        }
        // The best option pairs by placement: a (6) with b (2)… a-b or a-c first.
        let best = &options[0].pairing;
        assert_eq!(best.tables.len(), 2);
        // An organiser's choice: checked, every problem named.
        let proposed = SwissPairing {
            tables: vec![(0, 0), (1, 2), (9, 3)],
            bye: Some(3),
        };
        let problems = check_pairing(&t, &played, &proposed)?;
        let codes: Vec<&str> = problems.iter().map(PairingProblem::code).collect();
        assert!(codes.contains(&"self_pairing"));
        assert!(codes.contains(&"unknown_team"));
        assert!(codes.contains(&"rematch"));
        assert!(codes.contains(&"twice"));
        assert!(codes.contains(&"bye_count"));
        assert!(codes.contains(&"missing"));
        let names: Vec<String> = ["A", "B", "C", "D"].iter().map(|s| s.to_string()).collect();
        assert_eq!(
            PairingProblem::Rematch(1, 2).describe(&names),
            "B and C have met already"
        );
        // A valid override after round 1: nothing to report; the log line says it all.
        let r1 = &played[..1];
        let ok = SwissPairing {
            tables: vec![(1, 2), (3, 0)],
            bye: None,
        };
        assert_eq!(check_pairing(&t, r1, &ok)?, vec![]);
        let log = PairingOverride {
            round: 2,
            computed: Some(pair_next_round(&t, r1, SwissOptions::default())?),
            chosen: ok,
            problems: vec![],
            by: "裁判长".into(),
            reason: "travel".into(),
        }
        .log_line(&names);
        assert!(
            log.starts_with("round 2 override by 裁判长: B-C, D-A (engine: "),
            "{log}"
        );
        assert!(log.ends_with("accepted: nothing; reason: travel"), "{log}");
        // Colour limits: a team at +2 moving first again.
        let lopsided = vec![
            SwissRound {
                pairings: vec![(0, 1, [w, z]), (2, 3, [w, z])],
                bye: None,
            },
            SwissRound {
                pairings: vec![(0, 3, [w, z]), (2, 1, [w, z])],
                bye: None,
            },
        ];
        let p = check_pairing(
            &t,
            &lopsided,
            &SwissPairing {
                tables: vec![(0, 2), (1, 3)],
                bye: None,
            },
        )?;
        assert!(p.contains(&PairingProblem::ColourLimit {
            team: 0,
            balance: 3
        }));
        Ok(())
    }
}
