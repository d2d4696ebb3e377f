//! Team standings (2011 14.5/14.6, 1999 15.3/15.4) with head-to-head as a mini-league among all
//! tied teams, penalties last among equals (18.4) and withdrawals (20.3/20.4).
//!
//! Every row says which criterion separated it from its neighbour.

use crate::colour::{Colour, Side};
use crate::entities::TeamIdx;
use crate::matches::{EventRules, MatchError, MatchRecord, MatchResult, evaluate_match};
use crate::points::Points;
use crate::ranking::{Ranked, rank};
use std::collections::BTreeMap;
use std::fmt;

/// A team ranking criterion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TeamCriterion {
    /// 场分 (more first).
    MatchPoints,
    /// 18.4: teams penalised (18.1 warning, 18.2 disqualification from a match) rank last among
    /// teams equal on points, the heavier and more often penalised lower.
    Penalties,
    /// 团体对手分: the sum of the 场分 of the teams met (Swiss).
    OpponentMatchPoints,
    /// 全队总局分.
    GamePoints,
    /// 全队胜场 (matches won).
    MatchWins,
    /// 全队胜局 (games won; forfeit wins count).
    GameWins,
    /// 直胜: 场分 in a mini-league of the matches among all the tied teams (every meeting).
    HeadToHead,
    /// 全队犯规 (fewer first).
    Fouls,
    /// 后走胜局 (games won with Black).
    BlackWins,
    /// 后走局数 (games played with Black).
    BlackGames,
    /// Swiss: compare the cumulative 场分 after the previous round, then the one before, … .
    EarlierRounds,
}

impl TeamCriterion {
    /// Stable machine code.
    pub fn code(self) -> &'static str {
        match self {
            TeamCriterion::MatchPoints => "match_points",
            TeamCriterion::Penalties => "penalties",
            TeamCriterion::OpponentMatchPoints => "opponent_match_points",
            TeamCriterion::GamePoints => "game_points",
            TeamCriterion::MatchWins => "match_wins",
            TeamCriterion::GameWins => "game_wins",
            TeamCriterion::HeadToHead => "head_to_head",
            TeamCriterion::Fouls => "fouls",
            TeamCriterion::BlackWins => "black_wins",
            TeamCriterion::BlackGames => "black_games",
            TeamCriterion::EarlierRounds => "earlier_rounds",
        }
    }

    /// Parses [`Self::code`].
    pub fn from_code(code: &str) -> Option<Self> {
        ALL_CRITERIA.iter().copied().find(|c| c.code() == code)
    }

    /// The name used in the rules.
    pub fn chinese(self) -> &'static str {
        match self {
            TeamCriterion::MatchPoints => "场分",
            TeamCriterion::Penalties => "处分",
            TeamCriterion::OpponentMatchPoints => "团体对手分",
            TeamCriterion::GamePoints => "总局分",
            TeamCriterion::MatchWins => "胜场",
            TeamCriterion::GameWins => "胜局",
            TeamCriterion::HeadToHead => "直胜",
            TeamCriterion::Fouls => "犯规",
            TeamCriterion::BlackWins => "后走胜局",
            TeamCriterion::BlackGames => "后走局数",
            TeamCriterion::EarlierRounds => "前轮成绩",
        }
    }
}

impl TeamCriterion {
    /// The English name used on printouts.
    pub fn english(self) -> &'static str {
        match self {
            TeamCriterion::MatchPoints => "match points",
            TeamCriterion::Penalties => "penalties",
            TeamCriterion::OpponentMatchPoints => "opponents' match points",
            TeamCriterion::GamePoints => "game points",
            TeamCriterion::MatchWins => "matches won",
            TeamCriterion::GameWins => "games won",
            TeamCriterion::HeadToHead => "head-to-head",
            TeamCriterion::Fouls => "fouls",
            TeamCriterion::BlackWins => "wins with Black",
            TeamCriterion::BlackGames => "games with Black",
            TeamCriterion::EarlierRounds => "earlier rounds",
        }
    }
}

impl fmt::Display for TeamCriterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.chinese(), self.code())
    }
}

const ALL_CRITERIA: [TeamCriterion; 11] = [
    TeamCriterion::MatchPoints,
    TeamCriterion::Penalties,
    TeamCriterion::OpponentMatchPoints,
    TeamCriterion::GamePoints,
    TeamCriterion::MatchWins,
    TeamCriterion::GameWins,
    TeamCriterion::HeadToHead,
    TeamCriterion::Fouls,
    TeamCriterion::BlackWins,
    TeamCriterion::BlackGames,
    TeamCriterion::EarlierRounds,
];

/// Preset chains. Penalties (18.4) come right after the points, as "在积分相同时" says.
pub mod chains {
    use super::TeamCriterion;
    use super::TeamCriterion::*;

    /// 2011 14.5 (round robin): 场分, 总局分, 胜场, 胜局, 直胜, 犯规, 后走胜局, 后走局数.
    pub const ROUND_ROBIN_2011: &[TeamCriterion] = &[
        MatchPoints,
        Penalties,
        GamePoints,
        MatchWins,
        GameWins,
        HeadToHead,
        Fouls,
        BlackWins,
        BlackGames,
    ];
    /// 2011 14.6 (Swiss): 场分, 团体对手分, 总局分, 胜场, 胜局, 犯规, then earlier rounds.
    pub const SWISS_2011: &[TeamCriterion] = &[
        MatchPoints,
        Penalties,
        OpponentMatchPoints,
        GamePoints,
        MatchWins,
        GameWins,
        Fouls,
        EarlierRounds,
    ];
    /// 2011 14.7 (Swiss ranked on 总局分), then the 14.6 criteria.
    pub const SWISS_2011_GAME_POINTS: &[TeamCriterion] = &[
        GamePoints,
        Penalties,
        MatchPoints,
        OpponentMatchPoints,
        MatchWins,
        GameWins,
        Fouls,
        EarlierRounds,
    ];
    /// 1999 15.3 (round robin): 场分, 总局分, 胜局, 直胜, 犯规.
    pub const ROUND_ROBIN_1999: &[TeamCriterion] = &[
        MatchPoints,
        Penalties,
        GamePoints,
        GameWins,
        HeadToHead,
        Fouls,
    ];
    /// 1999 15.4 (Swiss): 场分, 团体对手分, 总局分, 胜场, 犯规.
    pub const SWISS_1999: &[TeamCriterion] = &[
        MatchPoints,
        Penalties,
        OpponentMatchPoints,
        GamePoints,
        MatchWins,
        Fouls,
    ];
}

/// The competition system, for the withdrawal rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum System {
    /// Round robin with 1 or 2 legs (20.3).
    RoundRobin {
        /// Legs.
        legs: u32,
    },
    /// Swiss (20.4).
    Swiss,
}

/// An evaluated match of the season.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamMatch {
    /// Round (1-based).
    pub round: u32,
    /// First-listed team (Red on board 1).
    pub first: TeamIdx,
    /// Second-listed team.
    pub second: TeamIdx,
    /// The evaluated result.
    pub result: MatchResult,
}

/// A disciplinary penalty (18.1 warning, 18.2 disqualification from a match).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PenaltyKind {
    /// 18.1 警告.
    Warning,
    /// 18.2 取消当场比赛资格.
    Disqualification,
}

/// A penalty against a team.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Penalty {
    /// The team.
    pub team: TeamIdx,
    /// The kind.
    pub kind: PenaltyKind,
}

/// A team leaving the event (20.3/20.4) after `after_round`: of its own accord, or expelled by
/// the organisers (18.3 除名: "对除名者,按退出处理", treated as a withdrawal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Withdrawal {
    /// The team.
    pub team: TeamIdx,
    /// Its last round; it plays nothing later.
    pub after_round: u32,
    /// 18.3 除名: expelled rather than withdrawn (the same effect on results, shown apart).
    pub expelled: bool,
}

/// What a team's withdrawal did to its results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WithdrawalEffect {
    /// 20.3 first half: fewer than half its matches played — all its results are annulled and it
    /// is not ranked.
    Annulled,
    /// 20.3 second half / 20.4: its results stand; its remaining matches are forfeited to the
    /// opponents (round robin) or simply not paired (Swiss).
    ResultsStand,
}

/// Input to [`standings`].
#[derive(Clone, Debug)]
pub struct StandingsInput<'a> {
    /// Number of teams (indices `0..team_count`).
    pub team_count: usize,
    /// The system.
    pub system: System,
    /// The scoring rules (used to score forfeits created by withdrawals and byes).
    pub rules: &'a EventRules,
    /// The chain of criteria.
    pub criteria: &'a [TeamCriterion],
    /// The matches played (or forfeited) so far.
    pub matches: Vec<TeamMatch>,
    /// Swiss byes `(round, team)`; a bye scores as a whole-match forfeit win (14.4), and its
    /// 对手分 is the lowest 场分 among the teams that have points. Ignored in round robins.
    pub byes: Vec<(u32, TeamIdx)>,
    /// Penalties.
    pub penalties: Vec<Penalty>,
    /// Withdrawals.
    pub withdrawals: Vec<Withdrawal>,
    /// The schedule (round robin), when known: says when each unplayed meeting of a withdrawn
    /// team was due. Needed only when two teams withdrew in different rounds without meeting.
    pub schedule: Option<Vec<Fixture>>,
}

/// Why standings cannot be computed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StandingsError {
    /// A team index is out of range.
    #[error("match #{index}: team {team} does not exist ({count} teams)")]
    NoSuchTeam {
        /// Match index (0-based) or `usize::MAX` for byes/penalties/withdrawals.
        index: usize,
        /// The index given.
        team: usize,
        /// Team count.
        count: usize,
    },
    /// A team meets itself.
    #[error("match #{index}: a team cannot play itself")]
    SelfMatch {
        /// Match index (0-based).
        index: usize,
    },
    /// Round 0.
    #[error("match #{index}: rounds start at 1")]
    RoundZero {
        /// Match index (0-based).
        index: usize,
    },
    /// A team plays twice in one round.
    #[error("team {team} plays more than once in round {round}")]
    TwiceInRound {
        /// Team.
        team: TeamIdx,
        /// Round.
        round: u32,
    },
    /// A pair met more often than the legs allow.
    #[error("teams {a} and {b} met {times} times; a {legs}-leg round robin allows {legs}")]
    TooManyMeetings {
        /// One team.
        a: TeamIdx,
        /// The other.
        b: TeamIdx,
        /// Meetings found.
        times: u32,
        /// Legs.
        legs: u32,
    },
    /// A result dated after the team's withdrawal.
    #[error("team {team} withdrew after round {after_round} but has a match in round {round}")]
    AfterWithdrawal {
        /// Team.
        team: TeamIdx,
        /// Its last round.
        after_round: u32,
        /// The offending round.
        round: u32,
    },
    /// A team is listed as withdrawing twice.
    #[error("team {team} withdraws twice")]
    WithdrawsTwice {
        /// Team.
        team: TeamIdx,
    },
    /// Two teams left in different rounds without meeting, and no schedule says when their
    /// meeting was due (before the later departure: a forfeit win for the later; after: a double
    /// forfeit).
    #[error(
        "teams {a} and {b} withdrew (after rounds {} and {}) without meeting; the schedule is needed to tell whether their meeting was due before the second withdrawal",
        after[0], after[1]
    )]
    MeetingRoundUnknown {
        /// The team that left first.
        a: TeamIdx,
        /// The team that left later.
        b: TeamIdx,
        /// Their last rounds `[a, b]`.
        after: [u32; 2],
    },
    /// Two teams met more often than the schedule has them meet.
    #[error("teams {a} and {b} met more often than the schedule has them meet")]
    NotScheduled {
        /// One team.
        a: TeamIdx,
        /// The other.
        b: TeamIdx,
    },
    /// A generated forfeit could not be scored.
    #[error(transparent)]
    Match(#[from] MatchError),
}

/// A team's line in the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TeamRow {
    /// The team.
    pub team: TeamIdx,
    /// Rank (1-based, shared when tied); `None` for a team whose results were annulled (20.3).
    pub rank: Option<u32>,
    /// The criterion that separated it from the row above (first row: from the row below).
    pub decided_by: Option<TeamCriterion>,
    /// Matches counted (incl. forfeits and byes).
    pub played: u32,
    /// Matches won / drawn / lost.
    pub won: u32,
    /// Matches drawn.
    pub drawn: u32,
    /// Matches lost.
    pub lost: u32,
    /// 场分.
    pub match_points: Points,
    /// 总局分.
    pub game_points: Points,
    /// 胜局.
    pub game_wins: u32,
    /// 犯规.
    pub fouls: u32,
    /// 后走胜局.
    pub black_wins: u32,
    /// 后走局数.
    pub black_games: u32,
    /// 团体对手分.
    pub opponent_match_points: Points,
    /// Penalties: (disqualifications, warnings).
    pub penalties: (u32, u32),
    /// 直胜 mini-league 场分 within the tied group, when that criterion was applied to it.
    pub head_to_head: Option<Points>,
    /// Withdrawal, if any.
    pub withdrawal: Option<WithdrawalEffect>,
    /// 18.3 除名: the team was expelled (its `withdrawal` says what happened to its results).
    pub expelled: bool,
}

/// The computed table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standings {
    /// Rows, best first; annulled teams last, unranked.
    pub rows: Vec<TeamRow>,
    /// Forfeits created by 20.3 for the remaining matches of withdrawn teams.
    pub generated_forfeits: Vec<GeneratedForfeit>,
    /// Meetings due when both teams had already withdrawn (or when they left together) and not
    /// in the input: double forfeits (20.3 "其余未赛对局均作弃权": each side's unplayed match is a
    /// forfeit), 0 场分 each, counted as played and lost by both.
    pub double_forfeits: Vec<DoubleForfeit>,
}

/// A meeting a withdrawn team did not play, scored as a whole-match forfeit win for the
/// opponent that was still in the event (20.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GeneratedForfeit {
    /// The team awarded the win.
    pub winner: TeamIdx,
    /// The withdrawn team.
    pub withdrawn: TeamIdx,
    /// The round the meeting was due, when the schedule was given.
    pub round: Option<u32>,
}

/// A meeting due after both its teams had withdrawn (or when they left together): a forfeit by
/// both (20.3 均作弃权).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DoubleForfeit {
    /// The two teams, lower index first.
    pub teams: [TeamIdx; 2],
    /// The round the meeting was due, when the schedule was given.
    pub round: Option<u32>,
}

/// A scheduled meeting: the round it is due and its two teams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixture {
    /// Round (1-based).
    pub round: u32,
    /// First-listed team.
    pub first: TeamIdx,
    /// Second-listed team.
    pub second: TeamIdx,
}

#[derive(Default, Clone)]
struct Acc {
    played: u32,
    won: u32,
    drawn: u32,
    lost: u32,
    mp: Points,
    gp: Points,
    game_wins: u32,
    fouls: u32,
    black_wins: u32,
    black_games: u32,
    opponents: Vec<Option<TeamIdx>>, // None = bye
    per_round: BTreeMap<u32, Points>,
}

/// Computes the standings.
pub fn standings(input: StandingsInput<'_>) -> Result<Standings, StandingsError> {
    let n = input.team_count;
    let check = |index: usize, team: usize| {
        if team >= n {
            Err(StandingsError::NoSuchTeam {
                index,
                team,
                count: n,
            })
        } else {
            Ok(())
        }
    };
    let mut seen_in_round: BTreeMap<(u32, TeamIdx), ()> = BTreeMap::new();
    for (i, m) in input.matches.iter().enumerate() {
        check(i, m.first)?;
        check(i, m.second)?;
        if m.first == m.second {
            return Err(StandingsError::SelfMatch { index: i });
        }
        if m.round == 0 {
            return Err(StandingsError::RoundZero { index: i });
        }
        for t in [m.first, m.second] {
            if seen_in_round.insert((m.round, t), ()).is_some() {
                return Err(StandingsError::TwiceInRound {
                    team: t,
                    round: m.round,
                });
            }
        }
    }
    for &(round, t) in &input.byes {
        check(usize::MAX, t)?;
        if seen_in_round.insert((round, t), ()).is_some() {
            return Err(StandingsError::TwiceInRound { team: t, round });
        }
    }
    for p in &input.penalties {
        check(usize::MAX, p.team)?;
    }
    for w in &input.withdrawals {
        check(usize::MAX, w.team)?;
    }
    if let System::RoundRobin { legs } = input.system {
        let mut meetings: BTreeMap<(usize, usize), u32> = BTreeMap::new();
        for m in &input.matches {
            *meetings
                .entry((m.first.min(m.second), m.first.max(m.second)))
                .or_default() += 1;
        }
        for (&(a, b), &times) in &meetings {
            if times > legs {
                return Err(StandingsError::TooManyMeetings { a, b, times, legs });
            }
        }
    }

    // Withdrawals.
    let mut matches: Vec<TeamMatch> = input.matches.clone();
    let mut effect: BTreeMap<TeamIdx, WithdrawalEffect> = BTreeMap::new();
    let mut generated = Vec::new();
    let mut double = Vec::new();
    for (i, w) in input.withdrawals.iter().enumerate() {
        if input.withdrawals[..i].iter().any(|x| x.team == w.team) {
            return Err(StandingsError::WithdrawsTwice { team: w.team });
        }
        // After its withdrawal a team has only forfeits: its whole matches forfeited (20.3
        // "其余未赛对局均作弃权"), entered as its rounds come; anything played is an error.
        let forfeited_by_it = |m: &TeamMatch| {
            let side = if m.first == w.team { 0 } else { 1 };
            m.result.match_forfeit[side]
        };
        if let Some(m) = matches.iter().find(|m| {
            (m.first == w.team || m.second == w.team)
                && m.round > w.after_round
                && !forfeited_by_it(m)
        }) {
            return Err(StandingsError::AfterWithdrawal {
                team: w.team,
                after_round: w.after_round,
                round: m.round,
            });
        }
        match input.system {
            System::Swiss => {
                effect.insert(w.team, WithdrawalEffect::ResultsStand);
            }
            System::RoundRobin { legs } => {
                // 已赛对手: the matches up to its withdrawal (forfeits count as played); the
                // forfeits entered for its later rounds do not.
                let played = matches
                    .iter()
                    .filter(|m| {
                        (m.first == w.team || m.second == w.team) && m.round <= w.after_round
                    })
                    .count() as u32;
                let scheduled = legs * (n as u32).saturating_sub(1);
                if played * 2 < scheduled {
                    effect.insert(w.team, WithdrawalEffect::Annulled);
                } else {
                    effect.insert(w.team, WithdrawalEffect::ResultsStand);
                }
            }
        }
    }
    // Annulled teams: drop every match they played.
    matches.retain(|m| {
        effect.get(&m.first) != Some(&WithdrawalEffect::Annulled)
            && effect.get(&m.second) != Some(&WithdrawalEffect::Annulled)
    });
    if let System::RoundRobin { legs } = input.system {
        // The table after round N counts only rounds ≤ N: a meeting the schedule puts later
        // than the last round of the input is not yet due.
        let through = input
            .matches
            .iter()
            .map(|m| m.round)
            .chain(input.byes.iter().map(|b| b.0))
            .max()
            .unwrap_or(0);
        remaining_meetings(
            &input,
            legs,
            through,
            &effect,
            &mut matches,
            &mut generated,
            &mut double,
        )?;
    }

    // Accumulate.
    let mut acc: Vec<Acc> = vec![Acc::default(); n];
    for m in &matches {
        for side in Side::BOTH {
            let (me, opp) = match side {
                Side::First => (m.first, m.second),
                Side::Second => (m.second, m.first),
            };
            let a = &mut acc[me];
            let r = &m.result;
            a.played += 1;
            match r.winner {
                Some(w) if w == side => a.won += 1,
                Some(_) => a.lost += 1,
                None if r.match_forfeit == [true, true] => a.lost += 1,
                None => a.drawn += 1,
            }
            a.mp += r.match_points[side.index()];
            a.gp += r.game_points[side.index()];
            *a.per_round.entry(m.round).or_default() += r.match_points[side.index()];
            a.opponents.push(Some(opp));
            for b in &r.boards {
                a.fouls += b.fouls[side.index()];
                match b.counted {
                    Some(c) => {
                        let colour = if side == Side::First {
                            c.first_colour
                        } else {
                            c.first_colour.opposite()
                        };
                        let won = c.winner == Some(side);
                        a.game_wins += u32::from(won);
                        if colour == Colour::Black {
                            a.black_games += 1;
                            a.black_wins += u32::from(won);
                        }
                    }
                    None => a.game_wins += u32::from(b.winner == Some(side)),
                }
            }
        }
    }
    if input.system == System::Swiss {
        let bye = evaluate_match(
            input.rules,
            &MatchRecord::Forfeit {
                forfeited_by: Side::Second,
            },
        )?;
        for &(round, t) in &input.byes {
            if effect.get(&t) == Some(&WithdrawalEffect::Annulled) {
                continue;
            }
            let a = &mut acc[t];
            a.played += 1;
            a.won += 1;
            a.mp += bye.match_points[0];
            a.gp += bye.game_points[0];
            a.game_wins += bye.boards.len() as u32;
            *a.per_round.entry(round).or_default() += bye.match_points[0];
            a.opponents.push(None);
        }
    }
    let lowest_scoring = acc
        .iter()
        .map(|a| a.mp)
        .filter(|&p| p > Points::ZERO)
        .min()
        .unwrap_or(Points::ZERO);
    let opp_mp: Vec<Points> = acc
        .iter()
        .map(|a| {
            a.opponents
                .iter()
                .map(|o| o.map_or(lowest_scoring, |o| acc[o].mp))
                .sum()
        })
        .collect();
    let mut pen = vec![(0u32, 0u32); n];
    for p in &input.penalties {
        match p.kind {
            PenaltyKind::Disqualification => pen[p.team].0 += 1,
            PenaltyKind::Warning => pen[p.team].1 += 1,
        }
    }
    let last_round = matches
        .iter()
        .map(|m| m.round)
        .filter(|&r| r != u32::MAX)
        .chain(input.byes.iter().map(|b| b.0))
        .max()
        .unwrap_or(0);

    let played_rounds: Vec<u32> = acc
        .iter()
        .flat_map(|a| a.per_round.keys().copied())
        .filter(|&r| r < last_round)
        .collect::<std::collections::BTreeSet<u32>>()
        .into_iter()
        .collect();

    // Head-to-head mini-league among the teams of a group (all meetings).
    let h2h = |group: &[usize], t: usize| -> Option<Points> {
        // Only meaningful when every pair of the group has met.
        for (i, &a) in group.iter().enumerate() {
            for &b in &group[i + 1..] {
                let met = matches
                    .iter()
                    .any(|m| (m.first == a && m.second == b) || (m.first == b && m.second == a));
                if !met {
                    return None;
                }
            }
        }
        Some(
            matches
                .iter()
                .filter(|m| group.contains(&m.first) && group.contains(&m.second))
                .map(|m| {
                    if m.first == t {
                        m.result.match_points[0]
                    } else if m.second == t {
                        m.result.match_points[1]
                    } else {
                        Points::ZERO
                    }
                })
                .sum(),
        )
    };
    let h = |p: Points| i64::from(p.halves());
    let key = |c: TeamCriterion, group: &[usize], t: usize| -> Vec<i64> {
        let a = &acc[t];
        match c {
            TeamCriterion::MatchPoints => vec![h(a.mp)],
            TeamCriterion::Penalties => vec![-i64::from(pen[t].0), -i64::from(pen[t].1)],
            TeamCriterion::OpponentMatchPoints => vec![h(opp_mp[t])],
            TeamCriterion::GamePoints => vec![h(a.gp)],
            TeamCriterion::MatchWins => vec![i64::from(a.won)],
            TeamCriterion::GameWins => vec![i64::from(a.game_wins)],
            TeamCriterion::HeadToHead => vec![h2h(group, t).map_or(0, h)],
            TeamCriterion::Fouls => vec![-i64::from(a.fouls)],
            TeamCriterion::BlackWins => vec![i64::from(a.black_wins)],
            TeamCriterion::BlackGames => vec![i64::from(a.black_games)],
            TeamCriterion::EarlierRounds => {
                // The running score after each earlier round, latest first. Rounds in which
                // nobody scored add the same entry for every team, so only the rounds played
                // count (round numbers can be sparse).
                let mut cum = Vec::with_capacity(played_rounds.len());
                let mut total = Points::ZERO;
                for r in &played_rounds {
                    total += a.per_round.get(r).copied().unwrap_or_default();
                    cum.push(h(total));
                }
                cum.reverse();
                cum
            }
        }
    };
    let ranked_items: Vec<usize> = (0..n)
        .filter(|t| effect.get(t) != Some(&WithdrawalEffect::Annulled))
        .collect();
    let ranked: Vec<Ranked<TeamCriterion>> = rank(&ranked_items, input.criteria, &key);

    // Record the head-to-head values of the groups where it was applied.
    let mut h2h_value: BTreeMap<usize, Points> = BTreeMap::new();
    if let Some(pos) = input
        .criteria
        .iter()
        .position(|&c| c == TeamCriterion::HeadToHead)
    {
        let before = &input.criteria[..pos];
        let mut groups: BTreeMap<Vec<Vec<i64>>, Vec<usize>> = BTreeMap::new();
        for &t in &ranked_items {
            // Criteria before head-to-head never depend on the group.
            let k: Vec<Vec<i64>> = before.iter().map(|&c| key(c, &[], t)).collect();
            groups.entry(k).or_default().push(t);
        }
        for g in groups.values().filter(|g| g.len() > 1) {
            for &t in g {
                if let Some(v) = h2h(g, t) {
                    h2h_value.insert(t, v);
                }
            }
        }
    }

    let row = |t: usize, rank: Option<u32>, decided_by| {
        let a = &acc[t];
        TeamRow {
            team: t,
            rank,
            decided_by,
            played: a.played,
            won: a.won,
            drawn: a.drawn,
            lost: a.lost,
            match_points: a.mp,
            game_points: a.gp,
            game_wins: a.game_wins,
            fouls: a.fouls,
            black_wins: a.black_wins,
            black_games: a.black_games,
            opponent_match_points: opp_mp[t],
            penalties: pen[t],
            head_to_head: h2h_value.get(&t).copied(),
            withdrawal: effect.get(&t).copied(),
            expelled: input.withdrawals.iter().any(|w| w.team == t && w.expelled),
        }
    };
    let mut rows: Vec<TeamRow> = ranked
        .iter()
        .map(|r| row(r.item, Some(r.rank), r.decided_by))
        .collect();
    for (&t, &e) in &effect {
        if e == WithdrawalEffect::Annulled {
            let mut r = row(t, None, None);
            r.played = 0;
            rows.push(r);
        }
    }
    Ok(Standings {
        rows,
        generated_forfeits: generated,
        double_forfeits: double,
    })
}

/// 20.3: the meetings a withdrawn team (results standing) did not play become forfeit wins for
/// the opponent that was still in the event when the meeting was due; a meeting due when both
/// teams were gone is a forfeit by both ("均作弃权"). Decided pair by pair, by the teams'
/// departures and the schedule alone, so the outcome never depends on the order of the input.
/// Meetings already in the input (a forfeit entered when its round came) are not added again;
/// with a schedule, meetings due after round `through` are not yet added.
fn remaining_meetings(
    input: &StandingsInput<'_>,
    legs: u32,
    through: u32,
    effect: &BTreeMap<TeamIdx, WithdrawalEffect>,
    matches: &mut Vec<TeamMatch>,
    generated: &mut Vec<GeneratedForfeit>,
    double: &mut Vec<DoubleForfeit>,
) -> Result<(), StandingsError> {
    let n = input.team_count;
    // The round after which a team is gone (`u32::MAX`: never).
    let gone_after = |t: TeamIdx| {
        input
            .withdrawals
            .iter()
            .find(|w| w.team == t)
            .map_or(u32::MAX, |w| w.after_round)
    };
    let stands = |t: TeamIdx| effect.get(&t) == Some(&WithdrawalEffect::ResultsStand);
    let annulled = |t: TeamIdx| effect.get(&t) == Some(&WithdrawalEffect::Annulled);
    let forfeit = evaluate_match(
        input.rules,
        &MatchRecord::Forfeit {
            forfeited_by: Side::Second,
        },
    )?;
    let both = evaluate_match(input.rules, &MatchRecord::DoubleForfeit)?;
    for x in 0..n {
        for y in x + 1..n {
            if annulled(x) || annulled(y) || !(stands(x) || stands(y)) {
                continue;
            }
            let met = matches
                .iter()
                .filter(|m| (m.first == x && m.second == y) || (m.first == y && m.second == x))
                .count();
            // The rounds the unplayed meetings were due (`None`: no schedule given).
            let due: Vec<Option<u32>> = match &input.schedule {
                Some(fixtures) => {
                    let mut rounds: Vec<u32> = fixtures
                        .iter()
                        .filter(|f| {
                            (f.first == x && f.second == y) || (f.first == y && f.second == x)
                        })
                        .map(|f| f.round)
                        .collect();
                    if met > rounds.len() {
                        return Err(StandingsError::NotScheduled { a: x, b: y });
                    }
                    rounds.sort_unstable();
                    rounds[met..].iter().map(|&r| Some(r)).collect()
                }
                None => vec![None; (legs as usize).saturating_sub(met)],
            };
            let (dx, dy) = (gone_after(x), gone_after(y));
            for round in due {
                if round.is_some_and(|r| r > through) {
                    continue;
                }
                // The team that left later (or never) wins if it was still in when the meeting was
                // due: a meeting due before the first departure was never played, so it falls due
                // at that departure.
                let (earlier, later) = if dx < dy { (x, y) } else { (y, x) };
                let (d_earlier, d_later) = (dx.min(dy), dx.max(dy));
                let winner = if dx == dy {
                    None
                } else if d_later == u32::MAX {
                    Some(later)
                } else {
                    let Some(r) = round else {
                        return Err(StandingsError::MeetingRoundUnknown {
                            a: earlier,
                            b: later,
                            after: [d_earlier, d_later],
                        });
                    };
                    (d_later >= r.max(d_earlier.saturating_add(1))).then_some(later)
                };
                match winner {
                    Some(w) => {
                        let loser = if w == x { y } else { x };
                        matches.push(TeamMatch {
                            round: u32::MAX,
                            first: w,
                            second: loser,
                            result: forfeit.clone(),
                        });
                        generated.push(GeneratedForfeit {
                            winner: w,
                            withdrawn: loser,
                            round,
                        });
                    }
                    None => {
                        matches.push(TeamMatch {
                            round: u32::MAX,
                            first: x,
                            second: y,
                            result: both.clone(),
                        });
                        double.push(DoubleForfeit {
                            teams: [x, y],
                            round,
                        });
                    }
                }
            }
        }
    }
    Ok(())
}
