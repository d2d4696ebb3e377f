//! The league's entities: league, season, stage, team, player, roster, captain, arbiter.
//!
//! Plain data with validating constructors where a rule applies. Identifiers are indices into the
//! owning collection (`TeamIdx` into `Season::teams`), so the pure logic never looks anything up
//! by name; names are for people.

use std::collections::BTreeSet;

/// Index of a team in its season's `teams`.
pub type TeamIdx = usize;

/// A league (e.g. 全国象棋甲级联赛): seasons share its name and organiser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct League {
    /// Display name.
    pub name: String,
    /// The organising body (竞赛组织机构).
    pub organiser: String,
    /// Seasons, oldest first.
    pub seasons: Vec<Season>,
}

/// One season: its teams and its stages (e.g. a double round robin, then a knockout).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Season {
    /// Display name, e.g. "2026".
    pub name: String,
    /// The teams; a `TeamIdx` indexes this.
    pub teams: Vec<Team>,
    /// Stages in the order they are played.
    pub stages: Vec<Stage>,
    /// Arbiters of the season (裁判长 first).
    pub arbiters: Vec<Arbiter>,
}

/// The competition system of a stage (1999 art. 11).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StageSystem {
    /// 大循环制: single (`legs == 1`) or double (`legs == 2`) round robin.
    RoundRobin {
        /// 1 or 2.
        legs: u32,
    },
    /// 积分编排制 for teams, with a fixed number of rounds.
    Swiss {
        /// Rounds to play.
        rounds: u32,
    },
    /// 淘汰制 with seeding.
    Knockout,
}

/// A stage of a season.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// Display name, e.g. "第一阶段".
    pub name: String,
    /// The system.
    pub system: StageSystem,
    /// The teams taking part (indices into `Season::teams`), in draw order (序号 1 first).
    pub teams: Vec<TeamIdx>,
    /// Boards per match.
    pub boards: u32,
}

/// Why a season's set-up is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SeasonError {
    /// Two teams share a name.
    #[error("team name {0:?} is used twice")]
    DuplicateTeam(String),
    /// A team name is empty.
    #[error("team #{0} has an empty name")]
    EmptyTeamName(usize),
    /// A stage names a team that does not exist.
    #[error("stage {stage:?}: team index {team} does not exist")]
    NoSuchTeam {
        /// Stage name.
        stage: String,
        /// The index.
        team: TeamIdx,
    },
    /// A stage lists a team twice.
    #[error("stage {stage:?}: team {team:?} is listed twice")]
    TeamTwice {
        /// Stage name.
        stage: String,
        /// Team name.
        team: String,
    },
    /// A stage has fewer than two teams.
    #[error("stage {0:?} needs at least 2 teams")]
    TooFewTeams(String),
    /// Boards must be at least 1.
    #[error("stage {0:?} needs at least 1 board")]
    NoBoards(String),
    /// A round robin has 1 or 2 legs; a Swiss at least 1 round.
    #[error("stage {0:?}: a round robin has 1 or 2 legs, a Swiss at least 1 round")]
    BadSystem(String),
    /// A team's roster is shorter than the boards.
    #[error("stage {stage:?}: team {team:?} registered {players} players for {boards} boards")]
    ShortRoster {
        /// Stage name.
        stage: String,
        /// Team name.
        team: String,
        /// Players registered.
        players: usize,
        /// Boards.
        boards: u32,
    },
}

impl Season {
    /// Checks the set-up: unique non-empty team names; every stage with at least two distinct
    /// existing teams, at least one board, a sensible system, and rosters at least as long as
    /// the boards (teams with an empty roster are allowed: rosters may come later).
    pub fn check(&self) -> Result<(), SeasonError> {
        let mut names = BTreeSet::new();
        for (i, t) in self.teams.iter().enumerate() {
            if t.name.trim().is_empty() {
                return Err(SeasonError::EmptyTeamName(i + 1));
            }
            if !names.insert(t.name.as_str()) {
                return Err(SeasonError::DuplicateTeam(t.name.clone()));
            }
        }
        for st in &self.stages {
            if st.teams.len() < 2 {
                return Err(SeasonError::TooFewTeams(st.name.clone()));
            }
            if st.boards == 0 {
                return Err(SeasonError::NoBoards(st.name.clone()));
            }
            match st.system {
                StageSystem::RoundRobin { legs } if !(1..=2).contains(&legs) => {
                    return Err(SeasonError::BadSystem(st.name.clone()));
                }
                StageSystem::Swiss { rounds: 0 } => {
                    return Err(SeasonError::BadSystem(st.name.clone()));
                }
                _ => {}
            }
            let mut seen = BTreeSet::new();
            for &t in &st.teams {
                let team = self.teams.get(t).ok_or_else(|| SeasonError::NoSuchTeam {
                    stage: st.name.clone(),
                    team: t,
                })?;
                if !seen.insert(t) {
                    return Err(SeasonError::TeamTwice {
                        stage: st.name.clone(),
                        team: team.name.clone(),
                    });
                }
                if !team.roster.is_empty() && team.roster.len() < st.boards as usize {
                    return Err(SeasonError::ShortRoster {
                        stage: st.name.clone(),
                        team: team.name.clone(),
                        players: team.roster.len(),
                        boards: st.boards,
                    });
                }
            }
        }
        Ok(())
    }
}

/// One round of a stage's fixtures: `(first, second)` team pairs in table order, and the bye.
pub type StageRound = (Vec<(TeamIdx, TeamIdx)>, Option<TeamIdx>);

impl Stage {
    /// The round-robin fixtures of this stage as team indices: `rounds[r]` lists
    /// `(first, second)` (first = Red on board 1) and the bye. Draw number k is `teams[k - 1]`.
    /// `None` if the stage is not a round robin or the schedule cannot be made.
    pub fn round_robin_fixtures(&self) -> Option<Vec<StageRound>> {
        let StageSystem::RoundRobin { legs } = self.system else {
            return None;
        };
        let rounds = crate::fixtures::round_robin(
            u32::try_from(self.teams.len()).ok()?,
            crate::fixtures::RoundRobinOptions {
                legs,
                ..Default::default()
            },
        )
        .ok()?;
        let idx = |n: u32| self.teams.get(n as usize - 1).copied();
        rounds
            .iter()
            .map(|r| {
                let pairs = r
                    .pairings
                    .iter()
                    .map(|p| Some((idx(p.first)?, idx(p.second)?)))
                    .collect::<Option<Vec<_>>>()?;
                let bye = match r.bye {
                    Some(b) => Some(idx(b)?),
                    None => None,
                };
                Some((pairs, bye))
            })
            .collect()
    }
}

/// A player. `tags` carry what eligibility rules test (e.g. `"W"` for a woman player, `"U18"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Player {
    /// Name as printed on the score sheet; unique within a roster.
    pub name: String,
    /// Rating (等级分), if the player has one.
    pub rating: Option<i32>,
    /// Rated games played before this event (selects the Elo K factor).
    pub rated_games: u32,
    /// Free-form tags.
    pub tags: BTreeSet<String>,
}

impl Player {
    /// A player with a name only.
    pub fn new(name: impl Into<String>) -> Self {
        Player {
            name: name.into(),
            rating: None,
            rated_games: 0,
            tags: BTreeSet::new(),
        }
    }

    /// Builder: add a tag.
    pub fn tagged(mut self, tag: impl Into<String>) -> Self {
        self.tags.insert(tag.into());
        self
    }

    /// Builder: set the rating.
    pub fn rated(mut self, rating: i32) -> Self {
        self.rating = Some(rating);
        self
    }
}

/// A person acting for a team (领队/教练) who may submit lineups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captain {
    /// Name.
    pub name: String,
}

/// An arbiter (裁判长 or 执台裁判).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arbiter {
    /// Name.
    pub name: String,
    /// True for the chief arbiter (裁判长).
    pub chief: bool,
}

/// A team: name, unit (参赛单位, used for the same-unit avoidance in Swiss round 1), roster, captain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Team {
    /// Display name.
    pub name: String,
    /// The unit the team represents; two teams of one unit avoid each other in Swiss round 1.
    pub unit: String,
    /// The registered roster.
    pub roster: Roster,
    /// The captain, if registered.
    pub captain: Option<Captain>,
}

impl Team {
    /// A team with an empty roster and no captain; `unit` defaults to the name.
    pub fn new(name: impl Into<String>) -> Self {
        let name = name.into();
        Team {
            unit: name.clone(),
            name,
            roster: Roster::default(),
            captain: None,
        }
    }
}

/// The registered order (报名台次顺序): index 0 is board 1's player, then the rest in order;
/// 12.2 substitutes follow the regular players in the same list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Roster {
    players: Vec<Player>,
}

/// Why a roster was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RosterError {
    /// A name appears twice.
    #[error("player {0:?} is registered twice")]
    DuplicatePlayer(String),
    /// A name is empty.
    #[error("player #{0} has an empty name")]
    EmptyName(usize),
    /// 12.1: a player is registered below a lower-rated (or unrated) player.
    #[error(
        "{above} (registered #{above_pos}) is rated below {below} (#{below_pos}); higher ratings come first and unrated players last (12.1)"
    )]
    RatingOrder {
        /// The player registered higher.
        above: String,
        /// Their 1-based position.
        above_pos: usize,
        /// The player registered lower but rated higher.
        below: String,
        /// Their 1-based position.
        below_pos: usize,
    },
}

impl Roster {
    /// A roster in registered order. Names must be unique and non-empty.
    pub fn new(players: Vec<Player>) -> Result<Self, RosterError> {
        let mut seen = BTreeSet::new();
        for (i, p) in players.iter().enumerate() {
            if p.name.trim().is_empty() {
                return Err(RosterError::EmptyName(i + 1));
            }
            if !seen.insert(p.name.as_str()) {
                return Err(RosterError::DuplicatePlayer(p.name.clone()));
            }
        }
        Ok(Roster { players })
    }

    /// 12.1 for national events: the registered order follows the latest ratings, higher first,
    /// unrated players after all rated ones (ties in either order).
    pub fn check_rating_order(&self) -> Result<(), RosterError> {
        for (i, w) in self.players.windows(2).enumerate() {
            let out_of_order = match (w[0].rating, w[1].rating) {
                (Some(a), Some(b)) => a < b,
                (None, Some(_)) => true,
                _ => false,
            };
            if out_of_order {
                return Err(RosterError::RatingOrder {
                    above: w[0].name.clone(),
                    above_pos: i + 1,
                    below: w[1].name.clone(),
                    below_pos: i + 2,
                });
            }
        }
        Ok(())
    }

    /// The substitutes (12.2) of an event with `boards` boards: the players registered after
    /// the first `boards`.
    pub fn substitutes(&self, boards: usize) -> &[Player] {
        self.players.get(boards..).unwrap_or(&[])
    }

    /// Players in registered order.
    pub fn players(&self) -> &[Player] {
        &self.players
    }

    /// Position (0-based) of `name` in the registered order.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.players.iter().position(|p| p.name == name)
    }

    /// Number of registered players.
    pub fn len(&self) -> usize {
        self.players.len()
    }

    /// True when nobody is registered.
    pub fn is_empty(&self) -> bool {
        self.players.is_empty()
    }
}

/// A time control kept as validated opaque text (e.g. `"20+10"`, `"5+3"`, `"Red 5:00 / Black 4:00"`).
///
/// The clock crate parses and runs time controls; the league only stores which one each stage of
/// a board result chain uses, so a stage can never carry an empty or garbled one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TimeControlText(String);

/// Why a time-control text was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimeControlError {
    /// Empty or only spaces.
    #[error("time control is empty")]
    Empty,
    /// Longer than 64 characters.
    #[error("time control is longer than 64 characters")]
    TooLong,
    /// Contains a control character (newline, tab, …).
    #[error("time control contains a control character")]
    ControlCharacter,
}

impl TimeControlText {
    /// Validates: 1–64 characters after trimming, no control characters.
    pub fn new(text: &str) -> Result<Self, TimeControlError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(TimeControlError::Empty);
        }
        if t.chars().count() > 64 {
            return Err(TimeControlError::TooLong);
        }
        if t.chars().any(char::is_control) {
            return Err(TimeControlError::ControlCharacter);
        }
        Ok(TimeControlText(t.to_string()))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn season() -> Season {
        let mut teams: Vec<Team> = ["A", "B", "C"].iter().map(|n| Team::new(*n)).collect();
        teams[1].roster = Roster::new(vec![Player::new("x"), Player::new("y")]).unwrap_or_default();
        Season {
            name: "2026".into(),
            teams,
            stages: vec![Stage {
                name: "league".into(),
                system: StageSystem::RoundRobin { legs: 2 },
                teams: vec![2, 0, 1],
                boards: 2,
            }],
            arbiters: vec![Arbiter {
                name: "裁判长".into(),
                chief: true,
            }],
        }
    }

    #[test]
    fn season_check_and_fixtures() {
        let s = season();
        assert_eq!(s.check(), Ok(()));
        let fx = s.stages[0].round_robin_fixtures().unwrap_or_default();
        assert_eq!(fx.len(), 6);
        // Draw numbers 1, 2, 3 are teams C, A, B: round 1 of the table for 3 is 2–3, bye 1.
        assert_eq!(fx[0], (vec![(0, 1)], Some(2)));
        let mut bad = season();
        bad.stages[0].boards = 3;
        assert!(matches!(
            bad.check(),
            Err(SeasonError::ShortRoster { players: 2, .. })
        ));
        let mut bad = season();
        bad.stages[0].teams.push(0);
        assert!(matches!(bad.check(), Err(SeasonError::TeamTwice { .. })));
        let mut bad = season();
        bad.stages[0].teams.push(9);
        assert!(matches!(
            bad.check(),
            Err(SeasonError::NoSuchTeam { team: 9, .. })
        ));
        let mut bad = season();
        bad.teams[2].name = "A".into();
        assert_eq!(bad.check(), Err(SeasonError::DuplicateTeam("A".into())));
        let mut bad = season();
        bad.stages[0].system = StageSystem::Swiss { rounds: 0 };
        assert!(matches!(bad.check(), Err(SeasonError::BadSystem(_))));
        assert_eq!(
            Stage {
                system: StageSystem::Knockout,
                ..season().stages[0].clone()
            }
            .round_robin_fixtures(),
            None
        );
    }

    #[test]
    fn roster_refuses_duplicates_and_empty_names() {
        assert_eq!(
            Roster::new(vec![Player::new("a"), Player::new("a")]),
            Err(RosterError::DuplicatePlayer("a".into()))
        );
        assert_eq!(
            Roster::new(vec![Player::new("a"), Player::new(" ")]),
            Err(RosterError::EmptyName(2))
        );
        let r = Roster::new(vec![Player::new("a"), Player::new("b")]);
        assert_eq!(r.map(|r| r.position("b")), Ok(Some(1)));
    }

    #[test]
    fn rating_order_and_substitutes() -> Result<(), RosterError> {
        let r = Roster::new(vec![
            Player::new("a").rated(2500),
            Player::new("b").rated(2500),
            Player::new("c").rated(2300),
            Player::new("d"),
            Player::new("e"),
        ])?;
        assert_eq!(r.check_rating_order(), Ok(()));
        assert_eq!(r.substitutes(4).len(), 1);
        assert!(r.substitutes(9).is_empty());
        let r = Roster::new(vec![
            Player::new("a").rated(2300),
            Player::new("b"),
            Player::new("c").rated(2400),
        ])?;
        assert_eq!(
            r.check_rating_order(),
            Err(RosterError::RatingOrder {
                above: "b".into(),
                above_pos: 2,
                below: "c".into(),
                below_pos: 3
            })
        );
        Ok(())
    }

    #[test]
    fn time_control_validation() {
        assert_eq!(TimeControlText::new(" "), Err(TimeControlError::Empty));
        assert_eq!(
            TimeControlText::new("5+3\n"),
            Ok(TimeControlText("5+3".into()))
        );
        assert_eq!(
            TimeControlText::new("5\t+3"),
            Err(TimeControlError::ControlCharacter)
        );
        assert_eq!(
            TimeControlText::new(&"9".repeat(65)),
            Err(TimeControlError::TooLong)
        );
    }
}
