//! Lineups (出场名单) under the team-event systems of 1999 art. 12 (2011 art. 11), with
//! eligibility rules and sealed submission.
//!
//! A lineup is the list of player names in board order (board 1 first). Validation collects
//! *every* reason a lineup is refused, so a captain can fix them all at once.

use crate::colour::{Colour, Side, first_team_colour};
use crate::entities::Roster;
use std::collections::BTreeMap;
use std::fmt;

/// The team-event system (团体赛比赛种类), 12.1–12.5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineupSystem {
    /// 12.1 分台定人制: the registered order is the board order, no substitutes.
    FixedOrder,
    /// 12.2 分台换人制: substitutes allowed; a lineup is an order-preserving choice from the
    /// registered order (4 boards from 6 players: exactly 15 orders).
    OrderedSubstitutes,
    /// 12.3 临时定台制: any roster players in any order, chosen before each match.
    FreeOrder,
    /// 12.4 全队轮赛制: every player of one team plays every player of the other.
    AllPlayAll,
    /// 12.5 队员总分制: no boards; the team's result is the sum of its entrants' individual results.
    TotalScore,
}

/// An eligibility rule over boards `from..=to` (1-based), e.g. "at least 1 player tagged W among
/// boards 1–4".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EligibilityRule {
    /// At least `count` players with `tag` on boards `from..=to`.
    AtLeast {
        /// The tag tested.
        tag: String,
        /// Minimum number.
        count: u32,
        /// First board (1-based).
        from: u32,
        /// Last board (inclusive).
        to: u32,
    },
    /// At most `count` players with `tag` on boards `from..=to`.
    AtMost {
        /// The tag tested.
        tag: String,
        /// Maximum number.
        count: u32,
        /// First board.
        from: u32,
        /// Last board (inclusive).
        to: u32,
    },
    /// Every player on boards `from..=to` has `tag`.
    Every {
        /// The tag required.
        tag: String,
        /// First board.
        from: u32,
        /// Last board (inclusive).
        to: u32,
    },
}

impl fmt::Display for EligibilityRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EligibilityRule::AtLeast {
                tag,
                count,
                from,
                to,
            } => write!(
                f,
                "at least {count} player(s) tagged {tag} on boards {from}–{to}"
            ),
            EligibilityRule::AtMost {
                tag,
                count,
                from,
                to,
            } => write!(
                f,
                "at most {count} player(s) tagged {tag} on boards {from}–{to}"
            ),
            EligibilityRule::Every { tag, from, to } => {
                write!(f, "every player on boards {from}–{to} tagged {tag}")
            }
        }
    }
}

/// The lineup rules of an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineupRules {
    /// The system.
    pub system: LineupSystem,
    /// Boards per match (entrants per team for 12.5).
    pub boards: u32,
    /// Extra eligibility rules.
    pub eligibility: Vec<EligibilityRule>,
    /// Submission deadline in seconds since the Unix epoch (`None`: no deadline).
    pub deadline: Option<i64>,
}

/// One reason a lineup is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineupRefusal {
    /// Submitted at or after the deadline.
    #[error("the deadline ({deadline}) has passed (submitted at {submitted_at})")]
    DeadlinePassed {
        /// The deadline (Unix seconds).
        deadline: i64,
        /// When it was submitted (Unix seconds).
        submitted_at: i64,
    },
    /// Wrong number of players.
    #[error("{expected} players are required, {got} were given")]
    WrongCount {
        /// Boards of the event.
        expected: u32,
        /// Players in the lineup.
        got: u32,
    },
    /// A player appears on two boards.
    #[error("{name} appears on boards {first_board} and {second_board}")]
    Duplicate {
        /// The player.
        name: String,
        /// The first board naming them.
        first_board: u32,
        /// The later board naming them.
        second_board: u32,
    },
    /// The player is not on the team's roster.
    #[error("{name} (board {board}) is not on the roster")]
    NotOnRoster {
        /// The player.
        name: String,
        /// The board.
        board: u32,
    },
    /// 12.1: the board must be played by the player registered for it.
    #[error("board {board} must be {expected} (fixed registered order, 12.1), not {got}")]
    NotRegisteredBoard {
        /// The board.
        board: u32,
        /// Registered player for that board.
        expected: String,
        /// Player given.
        got: String,
    },
    /// 12.2: the registered order may not be reversed.
    #[error(
        "board {board}: {name} is registered before {above} (board {}) — the registered order may not be reversed (12.2)",
        board - 1
    )]
    OrderReversed {
        /// The board whose player is out of order.
        board: u32,
        /// That player.
        name: String,
        /// The player on the board above.
        above: String,
    },
    /// An eligibility rule is not met.
    #[error("ineligible: {rule} (found {found})")]
    Ineligible {
        /// The rule, in words.
        rule: String,
        /// How many matching players were found.
        found: u32,
    },
}

impl LineupRefusal {
    /// A stable machine code for clients.
    pub fn code(&self) -> &'static str {
        match self {
            LineupRefusal::DeadlinePassed { .. } => "deadline_passed",
            LineupRefusal::WrongCount { .. } => "wrong_count",
            LineupRefusal::Duplicate { .. } => "duplicate",
            LineupRefusal::NotOnRoster { .. } => "not_on_roster",
            LineupRefusal::NotRegisteredBoard { .. } => "order",
            LineupRefusal::OrderReversed { .. } => "order",
            LineupRefusal::Ineligible { .. } => "ineligible",
        }
    }
}

/// A refused lineup: every reason, in board order.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("lineup refused: {}", .reasons.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct LineupError {
    /// All reasons (never empty).
    pub reasons: Vec<LineupRefusal>,
}

/// A validated lineup: player names in board order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lineup {
    players: Vec<String>,
}

impl Lineup {
    /// Names in board order.
    pub fn players(&self) -> &[String] {
        &self.players
    }
}

impl LineupRules {
    /// Validates `names` (board order) for a team with `roster`, submitted at `now` (Unix seconds).
    pub fn validate(
        &self,
        roster: &Roster,
        names: &[String],
        now: i64,
    ) -> Result<Lineup, LineupError> {
        let mut reasons = Vec::new();
        if let Some(deadline) = self.deadline {
            if now >= deadline {
                reasons.push(LineupRefusal::DeadlinePassed {
                    deadline,
                    submitted_at: now,
                });
            }
        }
        if names.len() as u32 != self.boards {
            reasons.push(LineupRefusal::WrongCount {
                expected: self.boards,
                got: names.len() as u32,
            });
        }
        let mut first_seen: BTreeMap<&str, u32> = BTreeMap::new();
        let mut positions: Vec<Option<usize>> = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            let board = i as u32 + 1;
            if let Some(&fb) = first_seen.get(name.as_str()) {
                reasons.push(LineupRefusal::Duplicate {
                    name: name.clone(),
                    first_board: fb,
                    second_board: board,
                });
            } else {
                first_seen.insert(name, board);
            }
            let pos = roster.position(name);
            if pos.is_none() {
                reasons.push(LineupRefusal::NotOnRoster {
                    name: name.clone(),
                    board,
                });
            }
            positions.push(pos);
        }
        match self.system {
            LineupSystem::FixedOrder => {
                for (i, name) in names.iter().enumerate() {
                    if let Some(reg) = roster.players().get(i) {
                        if positions[i].is_some() && reg.name != *name {
                            reasons.push(LineupRefusal::NotRegisteredBoard {
                                board: i as u32 + 1,
                                expected: reg.name.clone(),
                                got: name.clone(),
                            });
                        }
                    }
                }
            }
            LineupSystem::OrderedSubstitutes => {
                for i in 1..names.len() {
                    if let (Some(a), Some(b)) = (positions[i - 1], positions[i]) {
                        if b < a {
                            reasons.push(LineupRefusal::OrderReversed {
                                board: i as u32 + 1,
                                name: names[i].clone(),
                                above: names[i - 1].clone(),
                            });
                        }
                    }
                }
            }
            LineupSystem::FreeOrder | LineupSystem::AllPlayAll | LineupSystem::TotalScore => {}
        }
        for rule in &self.eligibility {
            let (tag, from, to) = match rule {
                EligibilityRule::AtLeast { tag, from, to, .. }
                | EligibilityRule::AtMost { tag, from, to, .. }
                | EligibilityRule::Every { tag, from, to } => (tag, *from, *to),
            };
            let mut tagged = 0u32;
            let mut untagged = 0u32;
            for (i, pos) in positions.iter().enumerate() {
                let board = i as u32 + 1;
                if board < from || board > to {
                    continue;
                }
                let has = pos
                    .and_then(|p| roster.players().get(p))
                    .is_some_and(|p| p.tags.contains(tag));
                if has {
                    tagged += 1;
                } else {
                    untagged += 1;
                }
            }
            let ok = match rule {
                EligibilityRule::AtLeast { count, .. } => tagged >= *count,
                EligibilityRule::AtMost { count, .. } => tagged <= *count,
                EligibilityRule::Every { .. } => untagged == 0,
            };
            if !ok {
                reasons.push(LineupRefusal::Ineligible {
                    rule: rule.to_string(),
                    found: tagged,
                });
            }
        }
        if reasons.is_empty() {
            Ok(Lineup {
                players: names.to_vec(),
            })
        } else {
            Err(LineupError { reasons })
        }
    }

    /// The lineup a team gets when it submitted none: its registered order (first `boards`
    /// players). `None` when the roster is too short or the registered order breaks an
    /// eligibility rule (then the 规程 decides, usually a forfeit).
    pub fn registered_order(&self, roster: &Roster) -> Option<Lineup> {
        let names: Vec<String> = roster
            .players()
            .iter()
            .take(self.boards as usize)
            .map(|p| p.name.clone())
            .collect();
        let rules = LineupRules {
            deadline: None,
            ..self.clone()
        };
        rules.validate(roster, &names, 0).ok()
    }
}

/// 12.2: every admissible board order when `boards` players are chosen from a registered order
/// of `registered` players: the order-preserving choices, as 0-based roster positions, in
/// lexicographic order. For 4 boards from 6 players: 15 orders, 1-2-3-4 … 3-4-5-6.
pub fn substitute_orders(registered: usize, boards: usize) -> Vec<Vec<usize>> {
    fn rec(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        let need = k - cur.len();
        for i in start..n {
            if n - i < need {
                break;
            }
            cur.push(i);
            rec(i + 1, n, k, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    if boards <= registered {
        rec(
            0,
            registered,
            boards,
            &mut Vec::with_capacity(boards),
            &mut out,
        );
    }
    out
}

/// One game of a 12.4 all-play-all match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllPlayAllGame {
    /// Sub-round, 1-based (there are as many as players per team).
    pub round: u32,
    /// Board, 1-based.
    pub board: u32,
    /// Player of the first team.
    pub first_player: String,
    /// Player of the second team.
    pub second_player: String,
    /// Colour of the first team's player.
    pub first_colour: Colour,
}

/// 12.4: every player of `first` meets every player of `second` (equal sizes). In sub-round `r`
/// (0-based) the first team's player `i` meets the second team's player `(i + r) mod n` on board
/// `i + 1`; the first team's player has Red when `i + r` is even, so colours follow 13.2 in
/// sub-round 1 and alternate afterwards. Returns `None` when the sizes differ or are zero.
pub fn all_play_all(first: &Lineup, second: &Lineup) -> Option<Vec<AllPlayAllGame>> {
    let n = first.players.len();
    if n == 0 || n != second.players.len() {
        return None;
    }
    let mut games = Vec::with_capacity(n * n);
    for r in 0..n {
        for i in 0..n {
            let colour = if (i + r) % 2 == 0 {
                Colour::Red
            } else {
                Colour::Black
            };
            games.push(AllPlayAllGame {
                round: r as u32 + 1,
                board: i as u32 + 1,
                first_player: first.players[i].clone(),
                second_player: second.players[(i + r) % n].clone(),
                first_colour: colour,
            });
        }
    }
    debug_assert_eq!(games[0].first_colour, first_team_colour(1));
    Some(games)
}

/// A row of a 12.5 total-score team ranking (1999 15.5, 2011 14.8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TotalScoreRow {
    /// The team (index into the input).
    pub team: usize,
    /// Rank, 1-based; equal for teams that cannot be separated.
    pub rank: u32,
    /// Sum of the individual ranks of the team's players (lower is better).
    pub rank_sum: u32,
    /// What separated this team from the one above (`None` for the first row, or when tied).
    pub decided_by: Option<TotalScoreCriterion>,
}

/// Criteria of the 12.5 ranking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TotalScoreCriterion {
    /// 个人名次总和, fewer is better.
    RankSum,
    /// 最高个人名次, then 次高, … (the `n`-th best individual rank, 1-based).
    BestRank(u32),
    /// 全队犯规, fewer is better.
    Fouls,
}

/// Ranks teams of a 12.5 event: `teams[t]` holds the individual ranks of team `t`'s players and
/// `fouls[t]` its fouls. Lower rank sum first; then best individual rank, second best, …; then
/// fewer fouls; otherwise the rank is shared.
pub fn rank_total_score(teams: &[Vec<u32>], fouls: &[u32]) -> Vec<TotalScoreRow> {
    let key = |t: usize| {
        let mut ranks = teams[t].clone();
        ranks.sort_unstable();
        (
            ranks.iter().sum::<u32>(),
            ranks,
            fouls.get(t).copied().unwrap_or(0),
        )
    };
    let mut order: Vec<usize> = (0..teams.len()).collect();
    order.sort_by_key(|&t| (key(t), t));
    let mut rows: Vec<TotalScoreRow> = Vec::with_capacity(order.len());
    for (i, &t) in order.iter().enumerate() {
        let k = key(t);
        let (rank, decided_by) = match i.checked_sub(1).map(|j| (order[j], &rows[j])) {
            None => (1, None),
            Some((prev, prev_row)) => {
                let pk = key(prev);
                if pk.0 != k.0 {
                    (i as u32 + 1, Some(TotalScoreCriterion::RankSum))
                } else if let Some(pos) = pk.1.iter().zip(&k.1).position(|(a, b)| a != b) {
                    (
                        i as u32 + 1,
                        Some(TotalScoreCriterion::BestRank(pos as u32 + 1)),
                    )
                } else if pk.2 != k.2 {
                    (i as u32 + 1, Some(TotalScoreCriterion::Fouls))
                } else {
                    (prev_row.rank, None)
                }
            }
        };
        rows.push(TotalScoreRow {
            team: t,
            rank,
            rank_sum: k.0,
            decided_by,
        });
    }
    rows
}

/// What a team submitting a lineup is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubmitOutcome {
    /// Accepted and sealed; the opponent's lineup stays hidden until both are in.
    Sealed,
    /// Accepted, and now both are in: both are revealed.
    BothRevealed,
}

/// What happens at the deadline to a team that submitted nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingLineupPolicy {
    /// It plays in its registered order (if that order is valid), else forfeits.
    RegisteredOrder,
    /// It forfeits the match.
    Forfeit,
}

/// The final lineup of one side after the reveal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FinalLineup {
    /// The lineup the captain submitted.
    Submitted(Lineup),
    /// No submission: the registered order was used.
    RegisteredOrder(Lineup),
    /// No (valid) lineup: the whole match is forfeited by this side.
    Forfeit,
}

/// Sealed lineups for one match: a captain sees the opponent's lineup only when both are in
/// (or the deadline has passed). Resubmitting before the deadline replaces the earlier lineup.
#[derive(Clone, Debug)]
pub struct SealedLineups {
    rules: LineupRules,
    submitted: [Option<Lineup>; 2],
}

impl SealedLineups {
    /// No lineups yet.
    pub fn new(rules: LineupRules) -> Self {
        SealedLineups {
            rules,
            submitted: [None, None],
        }
    }

    /// `side` submits `names` at `now`.
    pub fn submit(
        &mut self,
        side: Side,
        roster: &Roster,
        names: &[String],
        now: i64,
    ) -> Result<SubmitOutcome, LineupError> {
        let lineup = self.rules.validate(roster, names, now)?;
        self.submitted[side.index()] = Some(lineup);
        Ok(if self.submitted.iter().all(Option::is_some) {
            SubmitOutcome::BothRevealed
        } else {
            SubmitOutcome::Sealed
        })
    }

    /// What `viewer` may see of the opponent's lineup at `now`.
    pub fn opponent_lineup(&self, viewer: Side, now: i64) -> Option<&Lineup> {
        if self.is_revealed(now) {
            self.submitted[viewer.other().index()].as_ref()
        } else {
            None
        }
    }

    /// True when both are in, or the deadline has passed.
    pub fn is_revealed(&self, now: i64) -> bool {
        self.submitted.iter().all(Option::is_some) || self.rules.deadline.is_some_and(|d| now >= d)
    }

    /// The final lineups, once revealed (`None` before). `rosters` are [first, second].
    pub fn finalize(
        &self,
        rosters: [&Roster; 2],
        policy: MissingLineupPolicy,
        now: i64,
    ) -> Option<[FinalLineup; 2]> {
        if !self.is_revealed(now) {
            return None;
        }
        let one = |s: Side| match &self.submitted[s.index()] {
            Some(l) => FinalLineup::Submitted(l.clone()),
            None => match policy {
                MissingLineupPolicy::Forfeit => FinalLineup::Forfeit,
                MissingLineupPolicy::RegisteredOrder => self
                    .rules
                    .registered_order(rosters[s.index()])
                    .map_or(FinalLineup::Forfeit, FinalLineup::RegisteredOrder),
            },
        };
        Some([one(Side::First), one(Side::Second)])
    }
}
