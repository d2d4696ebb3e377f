//! A league's state, folded from its log: teams and their accounts, rounds and their
//! matches, sealed and revealed lineups, each board's chain of games, arbiter decisions and
//! withdrawals. Everything the league serves is computed from this.

use std::collections::BTreeMap;

use chuhe_league::chain::{BoardRecord, GameResult, PlayedGame};
use chuhe_league::colour::side_colour;

use super::event::{
    BoardKey, BoardSetting, ColourName, Entry, ForfeitBy, LeagueEvent, Outcome, Revealed,
    TeamAccounts, TeamSide,
};
use crate::spec::{EventSpec, Rules, SpecError, StageRules};

/// A game of a board's chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainGame {
    pub stage: u32,
    pub game: i64,
    pub first_colour: ColourName,
    pub red: i64,
    pub black: i64,
    pub start_ms: u64,
    pub finished: Option<Finished>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub outcome: Outcome,
    pub reason: String,
    pub fouls: [u32; 2],
    pub at_ms: u64,
}

/// A pending or made colour choice for a chosen stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub stage: u32,
    pub chooser: TeamSide,
    pub deadline_ms: u64,
    pub requested_at_ms: u64,
    /// The chooser's own colour, once chosen (or defaulted).
    pub chooser_colour: Option<ColourName>,
    pub chosen_at_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Board {
    pub games: Vec<ChainGame>,
    pub choice: Option<Choice>,
    /// An arbiter's setting, which replaces what the games say.
    pub set: Option<BoardSetting>,
    /// When the board was ordered replayed (its next game starts a break after).
    pub replayed_at_ms: Option<u64>,
    /// How often it was ordered replayed.
    pub replays: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub teams: [usize; 2],
    /// Sealed submissions, per side.
    pub submitted: [Option<Vec<String>>; 2],
    pub revealed: Option<[Revealed; 2]>,
    pub forfeit: Option<ForfeitBy>,
    pub boards: Vec<Board>,
    /// 12.4 all-play-all: who meets whom on each board (game) of the match, [first, second],
    /// from the revealed lineups; None for the other systems (board k: the lineups' k-th).
    pub pairs: Option<Vec<[String; 2]>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    pub number: u32,
    /// The event's stage it belongs to (1-based; always 1 for a single-system event).
    pub stage: u32,
    pub start_ms: u64,
    pub deadline_ms: u64,
    pub tables: Vec<Table>,
    pub byes: Vec<usize>,
    pub completed: bool,
    /// Its `RoundStarted` is in the log.
    pub started: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    pub name: String,
    pub unit: String,
    pub accounts: TeamAccounts,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Withdrawn {
    pub team: usize,
    pub after_round: u32,
    pub expelled: bool,
}

/// Why a log cannot be folded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FoldError {
    #[error("entry {seq}: expected seq {expected}")]
    Gap { seq: u64, expected: u64 },
    #[error("the first entry must create the league")]
    NotCreated,
    #[error("entry {seq}: the event file is refused: {source}")]
    Spec {
        seq: u64,
        #[source]
        source: SpecError,
    },
    #[error("entry {seq}: {why}")]
    Inconsistent { seq: u64, why: String },
}

/// A league, folded from its log.
#[derive(Debug, Clone)]
pub struct League {
    pub id: i64,
    pub seq: u64,
    pub at_ms: u64,
    pub spec: EventSpec,
    pub rules: Rules,
    pub teams: Vec<Team>,
    pub arbiters: Vec<i64>,
    /// Round times known at creation (a knockout's later ones follow its schedule).
    pub planned: Vec<(u64, u64)>,
    pub published: bool,
    pub rounds: Vec<Round>,
    /// The teams of each stage begun so far, seeded (stage 1: every team, in file order).
    pub stages: Vec<Vec<usize>>,
    pub withdrawals: Vec<Withdrawn>,
    /// Where each game of the league is played.
    pub games: BTreeMap<i64, (BoardKey, u32)>,
    /// Public events so far: the seq of the public stream.
    pub public_seq: u64,
    /// When each arbiter last sent a message to a captain or the event (the rate limit).
    pub last_message_ms: BTreeMap<i64, u64>,
}

impl League {
    /// The league its first entry creates.
    pub fn create(id: i64, first: &Entry) -> Result<League, FoldError> {
        let LeagueEvent::Created {
            spec,
            teams,
            arbiters,
            rounds,
        } = &first.event
        else {
            return Err(FoldError::NotCreated);
        };
        if first.seq != 1 {
            return Err(FoldError::Gap {
                seq: first.seq,
                expected: 1,
            });
        }
        let rules = spec
            .rules()
            .map_err(|source| FoldError::Spec { seq: 1, source })?;
        if teams.len() != spec.teams.len()
            || teams
                .iter()
                .zip(&spec.teams)
                .any(|(a, t)| a.players.len() != t.players.len())
        {
            return Err(FoldError::Inconsistent {
                seq: 1,
                why: "the accounts do not match the teams and rosters".into(),
            });
        }
        Ok(League {
            id,
            seq: 1,
            at_ms: first.at_ms,
            teams: spec
                .teams
                .iter()
                .zip(teams)
                .map(|(t, a)| Team {
                    name: t.name.clone(),
                    unit: t.unit.clone(),
                    accounts: a.clone(),
                })
                .collect(),
            spec: (**spec).clone(),
            rules,
            arbiters: arbiters.clone(),
            planned: rounds.clone(),
            published: false,
            rounds: Vec::new(),
            stages: vec![(0..teams.len()).collect()],
            withdrawals: Vec::new(),
            games: BTreeMap::new(),
            public_seq: 1,
            last_message_ms: BTreeMap::new(),
        })
    }

    /// Rebuilds a league from its whole log.
    pub fn replay<'a>(
        id: i64,
        log: impl IntoIterator<Item = &'a Entry>,
    ) -> Result<League, FoldError> {
        let mut log = log.into_iter();
        let first = log.next().ok_or(FoldError::NotCreated)?;
        let mut league = League::create(id, first)?;
        for e in log {
            league.fold(e)?;
        }
        Ok(league)
    }

    /// The stage being played (the last begun), 1-based.
    pub fn current_stage(&self) -> u32 {
        self.stages.len() as u32
    }

    /// The rules a round's matches are played and ranked by: its stage's.
    pub fn rules_of(&self, round: u32) -> &StageRules {
        self.rules.stage(self.round(round).map_or(1, |r| r.stage))
    }

    /// A stage's rounds, in order.
    pub fn stage_rounds(&self, stage: u32) -> impl Iterator<Item = &Round> {
        self.rounds.iter().filter(move |r| r.stage == stage)
    }

    pub fn round(&self, r: u32) -> Option<&Round> {
        self.rounds.get(r.checked_sub(1)? as usize)
    }

    pub fn table(&self, round: u32, table: u32) -> Option<&Table> {
        self.round(round)?
            .tables
            .get(table.checked_sub(1)? as usize)
    }

    pub fn board(&self, at: BoardKey) -> Option<&Board> {
        self.table(at.round, at.table)?
            .boards
            .get(at.board.checked_sub(1)? as usize)
    }

    fn table_mut(&mut self, seq: u64, round: u32, table: u32) -> Result<&mut Table, FoldError> {
        self.rounds
            .get_mut(round.wrapping_sub(1) as usize)
            .and_then(|r| r.tables.get_mut(table.wrapping_sub(1) as usize))
            .ok_or(FoldError::Inconsistent {
                seq,
                why: format!("no round {round} table {table}"),
            })
    }

    fn board_mut(&mut self, seq: u64, at: BoardKey) -> Result<&mut Board, FoldError> {
        self.table_mut(seq, at.round, at.table)?
            .boards
            .get_mut(at.board.wrapping_sub(1) as usize)
            .ok_or(FoldError::Inconsistent {
                seq,
                why: format!("no {at}"),
            })
    }

    /// Changes the league by one committed entry.
    pub fn fold(&mut self, e: &Entry) -> Result<(), FoldError> {
        let seq = e.seq;
        if seq != self.seq + 1 {
            return Err(FoldError::Gap {
                seq,
                expected: self.seq + 1,
            });
        }
        let boards = self.rules.stage(self.current_stage()).event.boards as usize;
        match &e.event {
            LeagueEvent::Created { .. } => {
                return Err(FoldError::Inconsistent {
                    seq,
                    why: "a second creation".into(),
                });
            }
            LeagueEvent::Published => self.published = true,
            LeagueEvent::StageStarted { stage, teams } => {
                if *stage as usize != self.stages.len() + 1
                    || *stage as usize > self.rules.stages.len()
                    || teams.iter().any(|t| *t >= self.teams.len())
                {
                    return Err(FoldError::Inconsistent {
                        seq,
                        why: format!("stage {stage} begun after stage {}", self.stages.len()),
                    });
                }
                self.stages.push(teams.clone());
            }
            LeagueEvent::RoundPaired {
                round,
                tables,
                byes,
                start_ms,
                deadline_ms,
            } => {
                if *round as usize != self.rounds.len() + 1 {
                    return Err(FoldError::Inconsistent {
                        seq,
                        why: format!("round {round} paired after round {}", self.rounds.len()),
                    });
                }
                self.rounds.push(Round {
                    number: *round,
                    stage: self.stages.len() as u32,
                    start_ms: *start_ms,
                    deadline_ms: *deadline_ms,
                    tables: tables
                        .iter()
                        .map(|t| Table {
                            teams: *t,
                            submitted: [None, None],
                            revealed: None,
                            forfeit: None,
                            boards: vec![Board::default(); boards],
                            pairs: None,
                        })
                        .collect(),
                    byes: byes.clone(),
                    completed: false,
                    started: false,
                });
            }
            LeagueEvent::RoundRescheduled {
                round,
                start_ms,
                deadline_ms,
            } => {
                let r = self.rounds.get_mut(round.wrapping_sub(1) as usize).ok_or(
                    FoldError::Inconsistent {
                        seq,
                        why: format!("no round {round}"),
                    },
                )?;
                r.start_ms = *start_ms;
                r.deadline_ms = *deadline_ms;
            }
            LeagueEvent::LineupSubmitted {
                round,
                table,
                side,
                players,
            } => {
                self.table_mut(seq, *round, *table)?.submitted[side.index()] =
                    Some(players.clone());
            }
            LeagueEvent::LineupsRevealed {
                round,
                table,
                lineups,
            } => {
                let teams = self.table_mut(seq, *round, *table)?.teams;
                let pairs = all_play_all_pairs(&self.rules, &teams, lineups);
                let t = self.table_mut(seq, *round, *table)?;
                t.revealed = Some(lineups.clone());
                t.pairs = pairs;
                t.forfeit = match (&lineups[0], &lineups[1]) {
                    (Revealed::Forfeit, Revealed::Forfeit) => Some(ForfeitBy::Both),
                    (Revealed::Forfeit, _) => Some(ForfeitBy::First),
                    (_, Revealed::Forfeit) => Some(ForfeitBy::Second),
                    _ => t.forfeit,
                };
            }
            LeagueEvent::GameCreated {
                at,
                stage,
                game,
                first_colour,
                red,
                black,
                start_ms,
            } => {
                let b = self.board_mut(seq, *at)?;
                b.games.push(ChainGame {
                    stage: *stage,
                    game: *game,
                    first_colour: *first_colour,
                    red: *red,
                    black: *black,
                    start_ms: *start_ms,
                    finished: None,
                });
                self.games.insert(*game, (*at, *stage));
            }
            LeagueEvent::ChoiceRequested {
                at,
                stage,
                chooser,
                deadline_ms,
            } => {
                self.board_mut(seq, *at)?.choice = Some(Choice {
                    stage: *stage,
                    chooser: *chooser,
                    deadline_ms: *deadline_ms,
                    requested_at_ms: e.at_ms,
                    chooser_colour: None,
                    chosen_at_ms: 0,
                });
            }
            LeagueEvent::ColourChosen {
                at, chooser_colour, ..
            } => {
                let b = self.board_mut(seq, *at)?;
                let c = b.choice.as_mut().ok_or(FoldError::Inconsistent {
                    seq,
                    why: format!("a colour chosen on {at} without a request"),
                })?;
                c.chooser_colour = Some(*chooser_colour);
                c.chosen_at_ms = e.at_ms;
            }
            LeagueEvent::GameFinished {
                at,
                game,
                outcome,
                reason,
                fouls,
                ..
            } => {
                let b = self.board_mut(seq, *at)?;
                let g = b.games.iter_mut().find(|g| g.game == *game).ok_or(
                    FoldError::Inconsistent {
                        seq,
                        why: format!("game {game} is not on {at}"),
                    },
                )?;
                g.finished = Some(Finished {
                    outcome: *outcome,
                    reason: reason.clone(),
                    fouls: *fouls,
                    at_ms: e.at_ms,
                });
            }
            LeagueEvent::BoardSet { at, setting } => {
                self.board_mut(seq, *at)?.set = Some(setting.clone());
            }
            LeagueEvent::MatchForfeited { round, table, by } => {
                self.table_mut(seq, *round, *table)?.forfeit = Some(*by);
            }
            LeagueEvent::Withdrawn {
                team,
                after_round,
                expelled,
            } => self.withdrawals.push(Withdrawn {
                team: *team,
                after_round: *after_round,
                expelled: *expelled,
            }),
            LeagueEvent::BoardReplayed { at } => {
                let b = self.board_mut(seq, *at)?;
                // Its games' results, should they still come, no longer count.
                b.games.clear();
                b.choice = None;
                b.set = None;
                b.replayed_at_ms = Some(e.at_ms);
                b.replays += 1;
            }
            LeagueEvent::RoundCompleted { round } => {
                if let Some(r) = self.rounds.get_mut(round.wrapping_sub(1) as usize) {
                    r.completed = true;
                }
            }
            LeagueEvent::ArbiterMessage { .. } => {
                if let Some(a) = e.actor {
                    self.last_message_ms.insert(a, e.at_ms);
                }
            }
            LeagueEvent::RoundStarted { round } => {
                if let Some(r) = self.rounds.get_mut(round.wrapping_sub(1) as usize) {
                    r.started = true;
                }
            }
        }
        if e.event.is_public() {
            self.public_seq += 1;
        }
        self.seq = seq;
        self.at_ms = e.at_ms;
        Ok(())
    }

    /// Whether the team has withdrawn (or was expelled), whenever it was.
    pub fn withdrawn(&self, team: usize) -> bool {
        self.withdrawals.iter().any(|w| w.team == team)
    }

    /// The team that withdrew before `round` (it plays nothing from that round on).
    pub fn withdrawn_before(&self, team: usize, round: u32) -> bool {
        self.withdrawals
            .iter()
            .any(|w| w.team == team && w.after_round < round)
    }

    /// The principal playing `side`'s board `board` (1-based) of a revealed match.
    pub fn player_of(&self, table: &Table, side: TeamSide, board: u32) -> Option<(i64, String)> {
        let team = &self.teams[table.teams[side.index()]];
        let name = match &table.pairs {
            Some(pairs) => pairs.get(board as usize - 1)?[side.index()].clone(),
            None => table.revealed.as_ref()?[side.index()]
                .players()?
                .get(board as usize - 1)?
                .clone(),
        };
        let pos = self.rules.rosters[table.teams[side.index()]].position(&name)?;
        Some((*team.accounts.players.get(pos)?, name))
    }

    /// A board's record as `chuhe-league` evaluates it, once it is decided (None: still being
    /// played, or not started).
    pub fn board_record(&self, at: BoardKey) -> Option<BoardRecord> {
        let table = self.table(at.round, at.table)?;
        let b = self.board(at)?;
        if let Some(set) = &b.set {
            return Some(match set {
                BoardSetting::Forfeit { by } => forfeit_record(*by),
                BoardSetting::Games { games } => set_games_record(games),
            });
        }
        if let Some(by) = table.forfeit {
            return Some(forfeit_record(by));
        }
        let mut played = Vec::with_capacity(b.games.len());
        for g in &b.games {
            let f = g.finished.as_ref()?;
            // A game lost by lateness (21.4), or lost by both: the board is forfeited.
            if f.reason == "lateness" || f.outcome == Outcome::BothLose {
                return Some(match f.outcome {
                    Outcome::First => BoardRecord::Forfeit {
                        forfeited_by: chuhe_league::Side::Second,
                    },
                    Outcome::Second => BoardRecord::Forfeit {
                        forfeited_by: chuhe_league::Side::First,
                    },
                    _ => BoardRecord::DoubleForfeit,
                });
            }
            played.push(PlayedGame {
                first_colour: g.first_colour.league(),
                result: game_result(f.outcome),
                fouls: f.fouls,
            });
        }
        if played.is_empty() {
            return None;
        }
        let record = BoardRecord::Played(played);
        let rules = &self.rules_of(at.round).event;
        chuhe_league::chain::evaluate_board(&rules.chain, &rules.game_scoring, at.board, &record)
            .ok()
            .map(|_| record)
    }

    /// The first team's colour in a stage's game of a board, when it is known: scheduled
    /// (13.2), swapped from the previous game, or chosen.
    pub fn stage_colour(&self, at: BoardKey, stage: u32) -> Option<ColourName> {
        use chuhe_league::chain::StageColours;
        let s = self
            .rules_of(at.round)
            .event
            .chain
            .stages()
            .get(stage as usize)?;
        let b = self.board(at)?;
        match s.colours {
            StageColours::AsScheduled => Some(ColourName::of_league(side_colour(
                chuhe_league::Side::First,
                at.board,
            ))),
            StageColours::SwappedFromPrevious => {
                let prev = b.games.iter().rev().find(|g| g.stage + 1 == stage)?;
                Some(prev.first_colour.opposite())
            }
            StageColours::ChosenBy(_) => {
                let c = b.choice.as_ref().filter(|c| c.stage == stage)?;
                let mine = c.chooser_colour?;
                Some(match c.chooser {
                    TeamSide::First => mine,
                    TeamSide::Second => mine.opposite(),
                })
            }
        }
    }
}

/// 12.4: every player of one side against every player of the other
/// (`chuhe_league::lineup::all_play_all`), sub-round by sub-round, numbered so that each game's
/// colours are 13.2's for its number (the first side Red on odd numbers): within a sub-round the
/// games the first side plays with Red take its odd numbers, in board order, those with Black
/// its even ones. None when the lineups are not both players, or for another system.
fn all_play_all_pairs(
    rules: &Rules,
    teams: &[usize; 2],
    lineups: &[Revealed; 2],
) -> Option<Vec<[String; 2]>> {
    use chuhe_league::lineup::{LineupRules, LineupSystem, all_play_all};
    if rules.lineup.system != LineupSystem::AllPlayAll {
        return None;
    }
    let check = LineupRules {
        deadline: None,
        ..rules.lineup.clone()
    };
    let first = check
        .validate(rules.rosters.get(teams[0])?, lineups[0].players()?, 0)
        .ok()?;
    let second = check
        .validate(rules.rosters.get(teams[1])?, lineups[1].players()?, 0)
        .ok()?;
    let games = all_play_all(&first, &second)?;
    let n = first.players().len();
    let mut out: Vec<[String; 2]> = Vec::with_capacity(n * n);
    for sub_round in games.chunks(n) {
        let mut red = sub_round
            .iter()
            .filter(|g| g.first_colour == chuhe_league::Colour::Red);
        let mut black = sub_round
            .iter()
            .filter(|g| g.first_colour == chuhe_league::Colour::Black);
        for _ in 0..n {
            let number = out.len() as u32 + 1;
            let g = match side_colour(chuhe_league::Side::First, number) {
                chuhe_league::Colour::Red => red.next()?,
                chuhe_league::Colour::Black => black.next()?,
            };
            out.push([g.first_player.clone(), g.second_player.clone()]);
        }
    }
    Some(out)
}

/// An arbiter's games of a board as `chuhe-league` reads them: a game lost by both ends the
/// board as lost by both (as a game both lost on the clock does), the rest are played games.
pub(crate) fn set_games_record(games: &[super::event::SetGame]) -> BoardRecord {
    if games.iter().any(|g| g.result == Outcome::BothLose) {
        return BoardRecord::DoubleForfeit;
    }
    BoardRecord::Played(
        games
            .iter()
            .map(|g| PlayedGame {
                first_colour: g.first_colour.league(),
                result: game_result(g.result),
                fouls: g.fouls,
            })
            .collect(),
    )
}

fn forfeit_record(by: ForfeitBy) -> BoardRecord {
    match by {
        ForfeitBy::First => BoardRecord::Forfeit {
            forfeited_by: chuhe_league::Side::First,
        },
        ForfeitBy::Second => BoardRecord::Forfeit {
            forfeited_by: chuhe_league::Side::Second,
        },
        ForfeitBy::Both => BoardRecord::DoubleForfeit,
    }
}

fn game_result(o: Outcome) -> GameResult {
    match o {
        Outcome::First => GameResult::FirstWins,
        Outcome::Second => GameResult::SecondWins,
        Outcome::Draw | Outcome::BothLose => GameResult::Draw,
    }
}
