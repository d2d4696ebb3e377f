//! The declarative event file an organiser writes (TOML or JSON, read by [`crate::file`]): the
//! 规程's settings, the teams with their rosters and captains, the arbiters, and the schedule.
//! Its settings use the same keys and values as `chuhe league`'s results file where the two
//! meet (`system`, `legs`, `boards`, `game_scoring`, `ranking`, and `result_chain`, which
//! [`crate::chain`] reads for both). [`EventSpec::rules`] checks it and turns it into
//! `chuhe-league` values; every refusal names the field.

use chuhe_league::chain::GameScoring;
use chuhe_league::colour::Colour;
use chuhe_league::entities::{Player, Roster};
use chuhe_league::lineup::{EligibilityRule, LineupRules, LineupSystem, MissingLineupPolicy};
use chuhe_league::matches::{EventRules, MatchScoring};
use chuhe_league::standings::{TeamCriterion, chains};
use serde::{Deserialize, Serialize};

use crate::chain::{self, ChainFile};
pub use crate::chain::{ChainSpec, ChainStageSpec};
use crate::datetime::{parse_duration, parse_instant};
pub use crate::refusal::SpecError;
use crate::refusal::{bad, half_points};

/// The event file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventSpec {
    /// Display name, e.g. "2026 全国象棋甲级联赛".
    pub name: String,
    /// `round_robin`, `swiss` or `knockout` — or empty when `stages` gives each stage's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub system: String,
    /// Round robin: 1 or 2 legs (default 2: 主客场).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legs: Option<u32>,
    /// Swiss: the number of rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
    /// Boards per match.
    pub boards: u32,
    /// `2-1-0` (default), `3-1-0`, `3-0-asymmetric` (2011 13.3: a draw is 1 for Red, 2 for
    /// Black), `1-0.5-0` (1999), or `{win, loss, draw_red, draw_black}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_scoring: Option<ScoringSpec>,
    /// `2011` (default), `1999`, `2011-game-points` (Swiss), or a list of criterion codes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranking: Option<RankingSpec>,
    /// The board result chain: `{"preset": "single", "time_control": …}`,
    /// `{"preset": "slow-fast-armageddon", "time_controls": [slow, fast, armageddon]}`, or
    /// `{"stages": [...]}`. Default: one game at `90m+30s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_chain: Option<ChainSpec>,
    #[serde(default)]
    pub lineup: LineupSpec,
    /// Art. 21: a player absent this long after the start loses the game (default 15m; `0`
    /// for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness: Option<String>,
    #[serde(default)]
    pub broadcast_delay: DelaySpec,
    /// What other sites may do with the event's broadcast: `embed_ancestors`, the sites that
    /// may show its embeddable boards in a frame (within the server's `--embed-ancestors`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broadcast: Option<BroadcastSpec>,
    #[serde(default)]
    pub armageddon: ChoiceSpec,
    /// Calls to the arbiter (请裁判) in the event's games: how many per side, and whether a
    /// call stops the clocks (default: 3, it stops them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arbiter_calls: Option<CallsSpec>,
    /// The presence lobby opens this long before each round's start (default 30m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_before: Option<String>,
    /// The pause between two games of a board's chain (default 5m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_between_games: Option<String>,
    /// How long before a round's start its games are set up, so players can join (default
    /// 5m; never before the lineups are revealed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub games_open_before: Option<String>,
    /// A multi-stage event (e.g. a round robin, then its top teams in a knockout): each
    /// stage's system and what differs from the settings above (instead of `system`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageSpec>,
    pub teams: Vec<TeamSpec>,
    /// Arbiters' account names (an account with the arbiter role is made for each new name).
    #[serde(default)]
    pub arbiters: Vec<String>,
    /// Round times: give `rounds_at` (one entry per round), or `first_round` and `every`.
    pub schedule: ScheduleSpec,
}

/// One stage of a multi-stage event: its system, and the settings that differ from the
/// event's (game scoring, ranking, result chain); from the second on, who enters it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageSpec {
    /// Printed with the stage's rounds and standings (default "stage N").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `round_robin`, `swiss` or `knockout`.
    pub system: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game_scoring: Option<ScoringSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranking: Option<RankingSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_chain: Option<ChainSpec>,
    /// Who enters (not for the first stage): `"all"` (default: every team still in, seeded
    /// by the previous stage's standings) or `{"top": K}` (the first K of those standings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entrants: Option<EntrantsSpec>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EntrantsSpec {
    All(String),
    Top { top: u32 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ScoringSpec {
    Preset(String),
    Custom {
        win: f64,
        loss: f64,
        draw_red: f64,
        draw_black: f64,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RankingSpec {
    Preset(String),
    Criteria(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineupSpec {
    /// `ordered_substitutes` (12.2, default), `fixed_order` (12.1), `free_order` (12.3),
    /// `all_play_all` (12.4), `total_score` (12.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// Eligibility rules, e.g. `{"at_least": 1, "tag": "W", "boards": [1, 4]}`.
    #[serde(default)]
    pub eligibility: Vec<EligibilitySpec>,
    /// A team that submitted nothing at the deadline: `registered_order` (default) or
    /// `forfeit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
    /// The deadline's distance before each round's start when the schedule gives none
    /// (default 12h).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_before: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EligibilitySpec {
    pub tag: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<u32>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub every: bool,
    /// `[first, last]` boards (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boards: Option<[u32; 2]>,
}

/// The event file's `arbiter_calls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallsSpec {
    /// Calls each side may make in a game (1 to 100; default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_per_side: Option<u32>,
    /// Whether a call stops the clocks (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_stops: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelaySpec {
    #[serde(default)]
    pub plies: u32,
    #[serde(default)]
    pub seconds: u32,
}

/// The event's `broadcast` settings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BroadcastSpec {
    /// The `frame-ancestors` sources of the event's embed pages: origins such as
    /// `https://news.example` or `https://*.example.org`, `'self'`, or `'none'` alone. The
    /// server's `--embed-ancestors` bounds them (see `crate::ancestors::ancestors`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embed_ancestors: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChoiceSpec {
    /// How long the chooser has to pick the armageddon colour (default 2m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub choose_within: Option<String>,
    /// The colour the chooser gets when it does not choose in time: `black` (default: the
    /// draw odds) or `red`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamSpec {
    pub name: String,
    /// 参赛单位 (Swiss round-1 avoidance).
    #[serde(default)]
    pub unit: String,
    /// The roster in registered order (board order of 12.1/12.2), substitutes last.
    pub players: Vec<PlayerSpec>,
    /// Captains' account names (default: one, "<team> 领队").
    #[serde(default)]
    pub captains: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PlayerSpec {
    Name(String),
    Full {
        name: String,
        #[serde(default)]
        tags: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rating: Option<i32>,
        /// Rated games before the event (the Elo K factor: 40 below 30 games).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rated_games: Option<u32>,
    },
}

impl PlayerSpec {
    pub fn name(&self) -> &str {
        match self {
            PlayerSpec::Name(n) | PlayerSpec::Full { name: n, .. } => n,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSpec {
    /// Each round's start (RFC 3339 or Unix ms), round 1 first.
    #[serde(default)]
    pub rounds_at: Vec<String>,
    /// Or: round 1's start …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_round: Option<String>,
    /// … and the time between rounds' starts (e.g. `7d`, or `20m` for an accelerated event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    /// Each round's lineup deadline, when not `lineup.deadline_before` before its start.
    #[serde(default)]
    pub deadlines: Vec<String>,
}

/// The competition system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum System {
    RoundRobin { legs: u32 },
    Swiss { rounds: u32 },
    Knockout,
}

/// Who enters a stage after the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entrants {
    /// Every team still in, seeded by the previous stage's standings.
    All,
    /// The first K of the previous stage's standings.
    Top(u32),
}

/// One stage's rules: its system and how its matches are played and ranked.
#[derive(Debug, Clone)]
pub struct StageRules {
    pub name: String,
    pub system: System,
    pub event: EventRules,
    pub criteria: Vec<TeamCriterion>,
    pub entrants: Entrants,
    /// How many teams play it (known from the file: withdrawals may make it fewer).
    pub teams: u32,
}

impl StageRules {
    /// The rounds it plays (a knockout's: enough for its bracket).
    pub fn rounds(&self) -> u32 {
        let n = self.teams;
        match self.system {
            System::RoundRobin { legs } => (n - 1 + n % 2) * legs,
            System::Swiss { rounds } => rounds,
            System::Knockout => n.next_power_of_two().trailing_zeros(),
        }
    }
}

/// Everything the league core decides with, checked.
#[derive(Debug, Clone)]
pub struct Rules {
    /// The first stage's system, match rules and ranking (a single-system event's only ones;
    /// a round's own are [`Rules::stages`]' of its stage).
    pub system: System,
    pub event: EventRules,
    pub criteria: Vec<TeamCriterion>,
    /// Every stage, first to last (one for a single-system event).
    pub stages: Vec<StageRules>,
    pub lineup: LineupRules,
    pub missing: MissingLineupPolicy,
    pub lateness_ms: u64,
    pub delay: DelaySpec,
    pub choose_within_ms: u64,
    /// The chooser's colour when it does not choose.
    pub choice_default: Colour,
    pub break_ms: u64,
    pub open_before_ms: u64,
    pub deadline_before_ms: u64,
    pub rosters: Vec<Roster>,
}

impl Rules {
    /// The rounds every stage plays, in all (the schedule needs as many times).
    pub fn planned_rounds(&self) -> u32 {
        self.stages.iter().map(StageRules::rounds).sum()
    }

    /// Stage `stage`'s rules (1-based; the first's when there is no such stage).
    pub fn stage(&self, stage: u32) -> &StageRules {
        let i = (stage.max(1) - 1) as usize;
        self.stages.get(i).unwrap_or(&self.stages[0])
    }
}

fn duration(field: &str, v: &Option<String>, default_ms: u64) -> Result<u64, SpecError> {
    match v {
        None => Ok(default_ms),
        Some(s) => parse_duration(s).map_err(|e| bad(field, e.to_string())),
    }
}

/// One system's rules from its settings (the event's own, or a stage's); `teams`: how many
/// play it. Fields are named as at the event's top level.
#[allow(clippy::too_many_arguments)]
fn system_rules(
    system: &str,
    legs: Option<u32>,
    rounds: Option<u32>,
    game_scoring: Option<&ScoringSpec>,
    ranking: Option<&RankingSpec>,
    result_chain: Option<&ChainSpec>,
    boards: u32,
    teams: usize,
) -> Result<(System, EventRules, Vec<TeamCriterion>), SpecError> {
    let system = match system {
        "round_robin" => {
            if rounds.is_some() {
                return Err(bad(
                    "rounds",
                    "only for a Swiss (a round robin has its own)",
                ));
            }
            let legs = legs.unwrap_or(2);
            if !(1..=2).contains(&legs) {
                return Err(bad("legs", "a round robin has 1 or 2 legs"));
            }
            System::RoundRobin { legs }
        }
        "swiss" => {
            let rounds =
                rounds.ok_or_else(|| bad("rounds", "a Swiss needs its number of rounds"))?;
            if rounds == 0 || rounds as usize >= teams {
                return Err(bad(
                    "rounds",
                    format!("must be 1 to {} for {teams} teams", teams - 1),
                ));
            }
            System::Swiss { rounds }
        }
        "knockout" => System::Knockout,
        other => {
            return Err(bad(
                "system",
                format!("unknown {other:?} (round_robin, swiss, knockout)"),
            ));
        }
    };
    let game_scoring = match game_scoring {
        None => GameScoring::TWO_ONE_ZERO,
        Some(ScoringSpec::Preset(p)) => match p.as_str() {
            "2-1-0" => GameScoring::TWO_ONE_ZERO,
            "3-1-0" => GameScoring::THREE_ONE_ZERO,
            "3-0-asymmetric" => GameScoring::THREE_ZERO_ASYMMETRIC,
            "1-0.5-0" => GameScoring::ONE_HALF_ZERO,
            other => {
                return Err(bad(
                    "game_scoring",
                    format!("unknown preset {other:?} (2-1-0, 3-1-0, 3-0-asymmetric, 1-0.5-0)"),
                ));
            }
        },
        Some(ScoringSpec::Custom {
            win,
            loss,
            draw_red,
            draw_black,
        }) => GameScoring {
            win: half_points("game_scoring.win", *win)?,
            loss: half_points("game_scoring.loss", *loss)?,
            draw_red: half_points("game_scoring.draw_red", *draw_red)?,
            draw_black: half_points("game_scoring.draw_black", *draw_black)?,
        },
    };
    let criteria = match (ranking, system) {
        (None, System::Swiss { .. }) => chains::SWISS_2011.to_vec(),
        (None, _) => chains::ROUND_ROBIN_2011.to_vec(),
        (Some(RankingSpec::Preset(p)), s) => match (p.as_str(), s) {
            ("2011", System::Swiss { .. }) => chains::SWISS_2011.to_vec(),
            ("2011-game-points", System::Swiss { .. }) => chains::SWISS_2011_GAME_POINTS.to_vec(),
            ("1999", System::Swiss { .. }) => chains::SWISS_1999.to_vec(),
            ("2011", _) => chains::ROUND_ROBIN_2011.to_vec(),
            ("1999", _) => chains::ROUND_ROBIN_1999.to_vec(),
            (other, _) => {
                return Err(bad(
                    "ranking",
                    format!(
                        "unknown preset {other:?} for this system (2011, 1999, 2011-game-points for a Swiss, or a list of criteria)"
                    ),
                ));
            }
        },
        (Some(RankingSpec::Criteria(list)), _) => {
            if list.is_empty() {
                return Err(bad("ranking", "needs at least one criterion"));
            }
            list.iter()
                .enumerate()
                .map(|(i, c)| {
                    TeamCriterion::from_code(c).ok_or_else(|| {
                        bad(format!("ranking[{i}]"), format!("unknown criterion {c:?}"))
                    })
                })
                .collect::<Result<_, _>>()?
        }
    };
    let chain = chain::parse(result_chain, "result_chain", ChainFile::Event)?;
    Ok((
        system,
        EventRules {
            boards,
            game_scoring,
            chain,
            match_scoring: MatchScoring::default(),
        },
        criteria,
    ))
}

impl EventSpec {
    /// Checks the file and gives the rules.
    pub fn rules(&self) -> Result<Rules, SpecError> {
        if self.name.trim().is_empty() || self.name.chars().count() > 200 {
            return Err(bad("name", "must be 1 to 200 characters"));
        }
        if self.boards == 0 || self.boards > 64 {
            return Err(bad("boards", "must be 1 to 64"));
        }
        let teams = self.teams.len();
        if teams < 2 {
            return Err(bad("teams", "at least 2 teams"));
        }
        if teams > 200 {
            return Err(bad("teams", "at most 200 teams"));
        }
        if let Some(list) = self
            .broadcast
            .as_ref()
            .and_then(|b| b.embed_ancestors.as_ref())
        {
            crate::ancestors::check_ancestors(list)
                .map_err(|why| bad("broadcast.embed_ancestors", why))?;
        }
        let stages = self.stage_rules()?;
        let (system, event, criteria) = {
            let s = &stages[0];
            (s.system, s.event.clone(), s.criteria.clone())
        };
        let lineup_system = self.lineup_system()?;
        let mut eligibility = Vec::new();
        for (i, e) in self.lineup.eligibility.iter().enumerate() {
            let f = format!("lineup.eligibility[{i}]");
            let [from, to] = e.boards.unwrap_or([1, self.boards]);
            if from == 0 || from > to || to > self.boards {
                return Err(bad(
                    format!("{f}.boards"),
                    format!("must be within 1..={}", self.boards),
                ));
            }
            let tag = e.tag.clone();
            eligibility.push(match (e.at_least, e.at_most, e.every) {
                (Some(count), None, false) => EligibilityRule::AtLeast {
                    tag,
                    count,
                    from,
                    to,
                },
                (None, Some(count), false) => EligibilityRule::AtMost {
                    tag,
                    count,
                    from,
                    to,
                },
                (None, None, true) => EligibilityRule::Every { tag, from, to },
                _ => return Err(bad(f, "give exactly one of at_least, at_most, every")),
            });
        }
        let missing = match self.lineup.missing.as_deref() {
            None | Some("registered_order") => MissingLineupPolicy::RegisteredOrder,
            Some("forfeit") => MissingLineupPolicy::Forfeit,
            Some(other) => {
                return Err(bad(
                    "lineup.missing",
                    format!("unknown {other:?} (registered_order, forfeit)"),
                ));
            }
        };
        let mut rosters = Vec::with_capacity(teams);
        let mut names = std::collections::BTreeSet::new();
        for (i, t) in self.teams.iter().enumerate() {
            let f = format!("teams[{i}]");
            if t.name.trim().is_empty() || t.name.chars().count() > 100 {
                return Err(bad(format!("{f}.name"), "must be 1 to 100 characters"));
            }
            if !names.insert(t.name.as_str()) {
                return Err(bad(
                    format!("{f}.name"),
                    format!("team {:?} is listed twice", t.name),
                ));
            }
            if t.players.len() < self.boards as usize {
                return Err(bad(
                    format!("{f}.players"),
                    format!(
                        "{} players registered for {} boards",
                        t.players.len(),
                        self.boards
                    ),
                ));
            }
            let players = t
                .players
                .iter()
                .enumerate()
                .map(|(k, p)| {
                    let n = p.name().trim();
                    if n.is_empty() || n.chars().count() > 100 {
                        return Err(bad(
                            format!("{f}.players[{k}]"),
                            "a name of 1 to 100 characters",
                        ));
                    }
                    let mut player = Player::new(n);
                    if let PlayerSpec::Full {
                        tags,
                        rating,
                        rated_games,
                        ..
                    } = p
                    {
                        for tag in tags {
                            player = player.tagged(tag.clone());
                        }
                        player.rating = *rating;
                        player.rated_games = rated_games.unwrap_or(0);
                    }
                    Ok(player)
                })
                .collect::<Result<Vec<_>, _>>()?;
            rosters.push(
                Roster::new(players).map_err(|e| bad(format!("{f}.players"), e.to_string()))?,
            );
            for (k, c) in t.captains.iter().enumerate() {
                if c.trim().is_empty() || c.chars().count() > 100 {
                    return Err(bad(
                        format!("{f}.captains[{k}]"),
                        "a name of 1 to 100 characters",
                    ));
                }
            }
        }
        for (k, a) in self.arbiters.iter().enumerate() {
            if a.trim().is_empty() || a.chars().count() > 100 {
                return Err(bad(
                    format!("arbiters[{k}]"),
                    "a name of 1 to 100 characters",
                ));
            }
        }
        self.presence_before_ms()?;
        if let Some(n) = self.arbiter_calls.and_then(|c| c.max_per_side) {
            if !(1..=100).contains(&n) {
                return Err(bad("arbiter_calls.max_per_side", "a number from 1 to 100"));
            }
        }
        let choice_default = match self.armageddon.default.as_deref() {
            None | Some("black") => Colour::Black,
            Some("red") => Colour::Red,
            Some(other) => {
                return Err(bad(
                    "armageddon.default",
                    format!("{other:?}: red or black"),
                ));
            }
        };
        Ok(Rules {
            system,
            event,
            criteria,
            stages,
            lineup: LineupRules {
                system: lineup_system,
                boards: self.boards,
                eligibility,
                deadline: None,
            },
            missing,
            lateness_ms: duration("lateness", &self.lateness, 15 * 60_000)?,
            delay: self.broadcast_delay,
            choose_within_ms: duration(
                "armageddon.choose_within",
                &self.armageddon.choose_within,
                120_000,
            )?,
            choice_default,
            break_ms: duration("break_between_games", &self.break_between_games, 300_000)?,
            open_before_ms: duration("games_open_before", &self.games_open_before, 300_000)?,
            deadline_before_ms: duration(
                "lineup.deadline_before",
                &self.lineup.deadline_before,
                12 * 3_600_000,
            )?,
            rosters,
        })
    }

    /// How long before a round's start its presence lobby opens.
    pub fn presence_before_ms(&self) -> Result<u64, SpecError> {
        duration("presence_before", &self.presence_before, 30 * 60_000)
    }

    /// The lineup system (12.1–12.5), checked against the boards and rosters it needs.
    fn lineup_system(&self) -> Result<LineupSystem, SpecError> {
        let system = match self.lineup.system.as_deref() {
            None | Some("ordered_substitutes") => LineupSystem::OrderedSubstitutes,
            Some("fixed_order") => LineupSystem::FixedOrder,
            Some("free_order") => LineupSystem::FreeOrder,
            Some("all_play_all") => LineupSystem::AllPlayAll,
            Some("total_score") => LineupSystem::TotalScore,
            Some(other) => {
                return Err(bad(
                    "lineup.system",
                    format!(
                        "unknown {other:?} (ordered_substitutes, fixed_order, free_order, all_play_all, total_score)"
                    ),
                ));
            }
        };
        match system {
            LineupSystem::AllPlayAll if self.boards > 8 => Err(bad(
                "boards",
                "12.4 all-play-all: at most 8 players a team (64 games a match)",
            )),
            LineupSystem::TotalScore => {
                // 12.5: a team's result is its entrants' individual ranks: it registers
                // exactly its entrants.
                match self
                    .teams
                    .iter()
                    .position(|t| t.players.len() != self.boards as usize)
                {
                    Some(i) => Err(bad(
                        format!("teams[{i}].players"),
                        format!(
                            "12.5 total score: each team registers exactly its {} entrants (no substitutes)",
                            self.boards
                        ),
                    )),
                    None => Ok(system),
                }
            }
            _ => Ok(system),
        }
    }

    /// The games of a match: one a board, or (12.4) every player against every player.
    fn match_games(&self) -> Result<u32, SpecError> {
        Ok(match self.lineup_system()? {
            LineupSystem::AllPlayAll => self.boards * self.boards,
            _ => self.boards,
        })
    }

    /// Every stage's rules: the event's one system, or each of `stages`.
    fn stage_rules(&self) -> Result<Vec<StageRules>, SpecError> {
        let teams = self.teams.len();
        let match_games = self.match_games()?;
        if self.stages.is_empty() {
            if self.system.is_empty() {
                return Err(bad("system", "required (or give stages)"));
            }
            let (system, event, criteria) = system_rules(
                &self.system,
                self.legs,
                self.rounds,
                self.game_scoring.as_ref(),
                self.ranking.as_ref(),
                self.result_chain.as_ref(),
                match_games,
                teams,
            )?;
            return Ok(vec![StageRules {
                name: String::new(),
                system,
                event,
                criteria,
                entrants: Entrants::All,
                teams: teams as u32,
            }]);
        }
        if !self.system.is_empty() {
            return Err(bad("system", "give system, or stages, not both"));
        }
        if self.legs.is_some() || self.rounds.is_some() {
            return Err(bad(
                if self.legs.is_some() {
                    "legs"
                } else {
                    "rounds"
                },
                "with stages, each stage gives its own",
            ));
        }
        if self.stages.len() > 8 {
            return Err(bad("stages", "at most 8 stages"));
        }
        let mut out: Vec<StageRules> = Vec::with_capacity(self.stages.len());
        for (i, st) in self.stages.iter().enumerate() {
            let f = format!("stages[{i}]");
            let at = |e: SpecError| bad(format!("{f}.{}", e.field), e.why);
            let entrants = match (&st.entrants, out.last()) {
                (None, _) => Entrants::All,
                (Some(_), None) => {
                    return Err(bad(
                        format!("{f}.entrants"),
                        "the first stage is played by every team",
                    ));
                }
                (Some(EntrantsSpec::All(a)), Some(_)) if a == "all" => Entrants::All,
                (Some(EntrantsSpec::All(a)), Some(_)) => {
                    return Err(bad(
                        format!("{f}.entrants"),
                        format!("unknown {a:?} (\"all\", or {{\"top\": K}})"),
                    ));
                }
                (Some(EntrantsSpec::Top { top }), Some(prev)) => {
                    if *top < 2 || *top > prev.teams {
                        return Err(bad(
                            format!("{f}.entrants.top"),
                            format!(
                                "must be 2 to {} (the teams of the stage before)",
                                prev.teams
                            ),
                        ));
                    }
                    Entrants::Top(*top)
                }
            };
            if let Some(prev) = out.last() {
                if prev.system == System::Knockout {
                    return Err(bad(
                        f.clone(),
                        "a knockout is the last stage: it has no standings to pass teams on from",
                    ));
                }
            }
            let n = match (entrants, out.last()) {
                (Entrants::Top(k), _) => k,
                (Entrants::All, Some(prev)) => prev.teams,
                (Entrants::All, None) => teams as u32,
            };
            let (system, event, criteria) = system_rules(
                &st.system,
                st.legs,
                st.rounds,
                st.game_scoring.as_ref().or(self.game_scoring.as_ref()),
                st.ranking.as_ref().or(self.ranking.as_ref()),
                st.result_chain.as_ref().or(self.result_chain.as_ref()),
                match_games,
                n as usize,
            )
            .map_err(at)?;
            let name = match &st.name {
                Some(nm) if nm.trim().is_empty() || nm.chars().count() > 100 => {
                    return Err(bad(format!("{f}.name"), "must be 1 to 100 characters"));
                }
                Some(nm) => nm.clone(),
                None => format!("stage {}", i + 1),
            };
            out.push(StageRules {
                name,
                system,
                event,
                criteria,
                entrants,
                teams: n,
            });
        }
        Ok(out)
    }
}

impl EventSpec {
    /// Each round's (start, lineup deadline), Unix ms; `rounds` is the number the system
    /// plays (a knockout's is known only as it goes: its later rounds follow `every`).
    pub fn round_times(&self, rules: &Rules, rounds: u32) -> Result<Vec<(u64, u64)>, SpecError> {
        let s = &self.schedule;
        let starts: Vec<u64> = if !s.rounds_at.is_empty() {
            if s.first_round.is_some() || s.every.is_some() {
                return Err(bad(
                    "schedule",
                    "give rounds_at, or first_round and every, not both",
                ));
            }
            if (s.rounds_at.len() as u32) < rounds {
                return Err(bad(
                    "schedule.rounds_at",
                    format!("{} times for {rounds} rounds", s.rounds_at.len()),
                ));
            }
            s.rounds_at
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    parse_instant(t)
                        .map_err(|e| bad(format!("schedule.rounds_at[{i}]"), e.to_string()))
                })
                .collect::<Result<_, _>>()?
        } else {
            let first = s
                .first_round
                .as_deref()
                .ok_or_else(|| bad("schedule", "needs rounds_at, or first_round and every"))?;
            let first =
                parse_instant(first).map_err(|e| bad("schedule.first_round", e.to_string()))?;
            let every = s
                .every
                .as_deref()
                .ok_or_else(|| bad("schedule.every", "needed with first_round"))?;
            let every = parse_duration(every).map_err(|e| bad("schedule.every", e.to_string()))?;
            if every == 0 {
                return Err(bad("schedule.every", "must be more than 0"));
            }
            (0..rounds.max(1))
                .map(|r| first + u64::from(r) * every)
                .collect()
        };
        for (i, w) in starts.windows(2).enumerate() {
            if w[1] <= w[0] {
                return Err(bad(
                    format!("schedule.rounds_at[{}]", i + 1),
                    "each round starts after the one before",
                ));
            }
        }
        let mut out = Vec::with_capacity(starts.len());
        for (i, start) in starts.iter().enumerate() {
            let deadline = match s.deadlines.get(i) {
                Some(t) => parse_instant(t)
                    .map_err(|e| bad(format!("schedule.deadlines[{i}]"), e.to_string()))?,
                None => start.saturating_sub(rules.deadline_before_ms),
            };
            if deadline > *start {
                return Err(bad(
                    format!("schedule.deadlines[{i}]"),
                    "the lineup deadline is after the round's start",
                ));
            }
            out.push((*start, deadline));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    pub(crate) fn sample() -> EventSpec {
        serde_json::from_value(serde_json::json!({
            "name": "象甲 test",
            "system": "round_robin",
            "boards": 2,
            "result_chain": {"preset": "slow-fast-armageddon", "time_controls": ["10m+5s", "3m+2s", "red:2m;black:90s"]},
            "teams": [
                {"name": "A", "players": ["a1", "a2", "a3"]},
                {"name": "B", "players": ["b1", {"name": "b2", "tags": ["W"]}]},
            ],
            "schedule": {"first_round": "2026-12-03T14:00:00+08:00", "every": "1d"}
        }))
        .unwrap()
    }

    #[test]
    fn a_sample_file_gives_its_rules() {
        let spec = sample();
        let r = spec.rules().unwrap();
        assert_eq!(r.system, System::RoundRobin { legs: 2 });
        assert_eq!(r.event.chain.stages().len(), 3);
        assert_eq!(r.lateness_ms, 900_000);
        assert_eq!(r.choice_default, Colour::Black);
        let times = spec.round_times(&r, 2).unwrap();
        assert_eq!(times[1].0 - times[0].0, 86_400_000);
        assert_eq!(times[0].0 - times[0].1, 12 * 3_600_000);
        // Serialises back to what it read.
        let again: EventSpec =
            serde_json::from_str(&serde_json::to_string(&spec).unwrap()).unwrap();
        assert_eq!(again, spec);
    }

    #[test]
    fn every_mistake_names_its_field() {
        let cases: Vec<(serde_json::Value, &str)> = vec![
            (serde_json::json!({"boards": 0}), "boards"),
            (serde_json::json!({"system": "league"}), "system"),
            (serde_json::json!({"legs": 3}), "legs"),
            (serde_json::json!({"game_scoring": "5-0"}), "game_scoring"),
            (serde_json::json!({"ranking": ["nonsense"]}), "ranking[0]"),
            (
                serde_json::json!({"result_chain": {"preset": "single", "time_control": "ninety"}}),
                "result_chain.time_control",
            ),
            (serde_json::json!({"lateness": "soon"}), "lateness"),
            (
                serde_json::json!({"presence_before": "later"}),
                "presence_before",
            ),
            (
                serde_json::json!({"arbiter_calls": {"max_per_side": 0}}),
                "arbiter_calls.max_per_side",
            ),
            (
                serde_json::json!({"lineup": {"missing": "shrug"}}),
                "lineup.missing",
            ),
            (
                serde_json::json!({"teams": [{"name": "A", "players": ["x"]}, {"name": "B", "players": ["y", "z"]}]}),
                "teams[0].players",
            ),
            (
                serde_json::json!({"teams": [{"name": "A", "players": ["x", "y"]}, {"name": "A", "players": ["y", "z"]}]}),
                "teams[1].name",
            ),
        ];
        for (patch, field) in cases {
            let mut v = serde_json::to_value(sample()).unwrap();
            for (k, val) in patch.as_object().unwrap() {
                v[k] = val.clone();
            }
            let spec: EventSpec = serde_json::from_value(v).unwrap();
            let e = spec.rules().unwrap_err();
            assert_eq!(e.field, field, "{e}");
        }
        let mut s = sample();
        s.schedule = ScheduleSpec {
            rounds_at: vec!["2026-12-03T14:00Z".into()],
            ..ScheduleSpec::default()
        };
        let r = s.rules().unwrap();
        assert_eq!(
            s.round_times(&r, 2).unwrap_err().field,
            "schedule.rounds_at"
        );
    }

    #[test]
    fn stages_are_checked_each_with_its_own_field() {
        let staged = |stages: serde_json::Value| {
            let mut v = serde_json::to_value(sample()).unwrap();
            v.as_object_mut().unwrap().remove("system");
            v["teams"] = serde_json::json!([
                {"name": "A", "players": ["a1", "a2"]}, {"name": "B", "players": ["b1", "b2"]},
                {"name": "C", "players": ["c1", "c2"]}, {"name": "D", "players": ["d1", "d2"]},
            ]);
            v["stages"] = stages;
            serde_json::from_value::<EventSpec>(v).unwrap()
        };
        let ok = staged(serde_json::json!([
            {"system": "round_robin", "legs": 1},
            {"name": "final", "system": "knockout", "entrants": {"top": 2},
             "result_chain": {"preset": "single", "time_control": "5m+3s"}},
        ]));
        let r = ok.rules().unwrap();
        assert_eq!(r.stages.len(), 2);
        assert_eq!(r.stages[0].name, "stage 1");
        assert_eq!(r.stages[1].entrants, Entrants::Top(2));
        assert_eq!(r.stages[1].event.chain.stages().len(), 1, "its own chain");
        assert_eq!(r.stages[0].event.chain.stages().len(), 3, "the event's");
        assert_eq!(r.planned_rounds(), 3 + 1);
        assert_eq!(r.system, System::RoundRobin { legs: 1 });
        let again: EventSpec = serde_json::from_str(&serde_json::to_string(&ok).unwrap()).unwrap();
        assert_eq!(again, ok);
        let cases = [
            (
                serde_json::json!([{"system": "swiss", "rounds": 2}, {"system": "league"}]),
                "stages[1].system",
            ),
            (
                serde_json::json!([{"system": "round_robin"}, {"system": "swiss", "rounds": 3, "entrants": {"top": 3}}]),
                "stages[1].rounds",
            ),
            (
                serde_json::json!([{"system": "round_robin"}, {"system": "knockout", "entrants": {"top": 5}}]),
                "stages[1].entrants.top",
            ),
            (
                serde_json::json!([{"system": "round_robin", "entrants": "all"}]),
                "stages[0].entrants",
            ),
            (
                serde_json::json!([{"system": "round_robin"}, {"system": "knockout", "entrants": "some"}]),
                "stages[1].entrants",
            ),
            (
                serde_json::json!([{"system": "knockout"}, {"system": "round_robin"}]),
                "stages[1]",
            ),
            (
                serde_json::json!([{"system": "round_robin", "result_chain": {"preset": "single", "time_control": "x"}}]),
                "stages[0].result_chain.time_control",
            ),
        ];
        for (stages, field) in cases {
            let e = staged(stages).rules().unwrap_err();
            assert_eq!(e.field, field, "{e}");
        }
        let mut both = ok.clone();
        both.system = "round_robin".into();
        assert_eq!(both.rules().unwrap_err().field, "system");
        let mut neither = ok;
        neither.stages.clear();
        assert_eq!(neither.rules().unwrap_err().field, "system");
    }

    #[test]
    fn the_lineup_systems_12_4_and_12_5_are_checked() {
        let mut s = sample();
        s.lineup.system = Some("all_play_all".into());
        let r = s.rules().unwrap();
        assert_eq!(r.lineup.system, LineupSystem::AllPlayAll);
        assert_eq!(r.lineup.boards, 2, "players a team");
        assert_eq!(r.event.boards, 4, "every player against every player");
        s.boards = 9;
        for t in &mut s.teams {
            t.players = (0..9)
                .map(|k| PlayerSpec::Name(format!("{}{k}", t.name)))
                .collect();
        }
        assert_eq!(s.rules().unwrap_err().field, "boards");
        let mut s = sample();
        s.lineup.system = Some("total_score".into());
        assert_eq!(
            s.rules().unwrap_err().field,
            "teams[0].players",
            "a substitute"
        );
        s.teams[0].players.truncate(2);
        let r = s.rules().unwrap();
        assert_eq!(r.lineup.system, LineupSystem::TotalScore);
        assert_eq!(r.event.boards, 2);
        s.lineup.system = Some("team_spirit".into());
        assert_eq!(s.rules().unwrap_err().field, "lineup.system");
    }
}
