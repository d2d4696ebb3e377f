//! Game scoring (2011 13.1/13.3, 1999 14.1) and board result chains: a board is a single game,
//! or a chain such as slow game → colour-swapped fast game → armageddon (象甲 style), each stage
//! with its own time control, colour rule, draw rule and the board points it awards.

use crate::colour::{Colour, Side, side_colour};
use crate::entities::TimeControlText;
use crate::points::Points;

/// Points for one game by result and colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameScoring {
    /// The winner's points.
    pub win: Points,
    /// The loser's points.
    pub loss: Points,
    /// Red's points for a draw.
    pub draw_red: Points,
    /// Black's points for a draw.
    pub draw_black: Points,
}

impl GameScoring {
    /// 2011 13.1: win 2, draw 1, loss 0 (the default).
    pub const TWO_ONE_ZERO: GameScoring = GameScoring {
        win: Points::whole(2),
        loss: Points::ZERO,
        draw_red: Points::whole(1),
        draw_black: Points::whole(1),
    };
    /// 2011 13.3: win 3, draw 1, loss 0.
    pub const THREE_ONE_ZERO: GameScoring = GameScoring {
        win: Points::whole(3),
        loss: Points::ZERO,
        draw_red: Points::whole(1),
        draw_black: Points::whole(1),
    };
    /// 2011 13.3: win 3, loss 0, a draw is 1 for Red (先手) and 2 for Black (后手).
    pub const THREE_ZERO_ASYMMETRIC: GameScoring = GameScoring {
        win: Points::whole(3),
        loss: Points::ZERO,
        draw_red: Points::whole(1),
        draw_black: Points::whole(2),
    };
    /// 1999 14.1: win 1, draw ½, loss 0.
    pub const ONE_HALF_ZERO: GameScoring = GameScoring {
        win: Points::whole(1),
        loss: Points::ZERO,
        draw_red: Points::HALF,
        draw_black: Points::HALF,
    };

    /// Draw points for a player of `colour`.
    pub fn draw(&self, colour: Colour) -> Points {
        match colour {
            Colour::Red => self.draw_red,
            Colour::Black => self.draw_black,
        }
    }
}

impl Default for GameScoring {
    fn default() -> Self {
        GameScoring::TWO_ONE_ZERO
    }
}

/// How the colours of a stage's game are set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageColours {
    /// As scheduled: the first-listed team Red on odd boards (13.2/13.3).
    AsScheduled,
    /// The colours of the previous stage's game, swapped.
    SwappedFromPrevious,
    /// Chosen before the game by [`Chooser`].
    ChosenBy(Chooser),
}

/// Who chooses the colour of a stage (usually the armageddon).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chooser {
    /// The player who had Black in the previous stage's game (象甲 default).
    PreviousBlack,
    /// The player who had Red in the previous stage's game.
    PreviousRed,
    /// The first-listed team's player.
    FirstTeam,
    /// The second-listed team's player.
    SecondTeam,
}

/// What a drawn game of a stage means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawRule {
    /// A draw: go on to the next stage, or the board is drawn if this is the last.
    Draw,
    /// A draw counts as a win for this colour (armageddon: Black, by default).
    WinFor(Colour),
}

/// One stage of a board result chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// Label, e.g. "slow", "fast", "armageddon".
    pub name: String,
    /// The stage's time control (opaque text; the clock crate interprets it).
    pub time_control: TimeControlText,
    /// Colours of the stage's game.
    pub colours: StageColours,
    /// Meaning of a drawn game.
    pub on_draw: DrawRule,
    /// Board points `(winner, loser)` when the board is decided in this stage; `None` uses the
    /// event's [`GameScoring`] win/loss.
    pub decided_points: Option<(Points, Points)>,
    /// Whether the stage's game counts for Elo.
    pub rated: bool,
}

/// Which game of a board the 胜局 / 后走胜局 / 后走局数 counts read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CountBasis {
    /// The first (slow) game only (default).
    #[default]
    FirstStage,
    /// The game that decided the board (a drawn board counts as drawn, with the last game's colours).
    DecidingGame,
}

/// A validated board result chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultChain {
    stages: Vec<Stage>,
    /// What the win/Black counts read.
    pub count_basis: CountBasis,
}

/// Why a chain was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// No stages.
    #[error("a result chain needs at least one stage")]
    Empty,
    /// The first stage must use the scheduled colours.
    #[error("the first stage must use the scheduled colours")]
    FirstStageColours,
    /// A stage after one that cannot be drawn is unreachable.
    #[error("stage {0} can never be reached: the stage before it cannot end drawn")]
    Unreachable(usize),
    /// The loser would get more than the winner.
    #[error("stage {0}: the loser's points exceed the winner's")]
    BadPoints(usize),
}

impl ResultChain {
    /// A chain from stages (first stage first).
    pub fn new(stages: Vec<Stage>, count_basis: CountBasis) -> Result<Self, ChainError> {
        let first = stages.first().ok_or(ChainError::Empty)?;
        if first.colours != StageColours::AsScheduled {
            return Err(ChainError::FirstStageColours);
        }
        for (i, s) in stages.iter().enumerate() {
            if i + 1 < stages.len() && s.on_draw != DrawRule::Draw {
                return Err(ChainError::Unreachable(i + 2));
            }
            if let Some((w, l)) = s.decided_points {
                if l > w {
                    return Err(ChainError::BadPoints(i + 1));
                }
            }
        }
        Ok(ResultChain {
            stages,
            count_basis,
        })
    }

    /// One game per board under `time_control`.
    pub fn single(time_control: TimeControlText) -> Self {
        ResultChain {
            stages: vec![Stage {
                name: "game".into(),
                time_control,
                colours: StageColours::AsScheduled,
                on_draw: DrawRule::Draw,
                decided_points: None,
                rated: true,
            }],
            count_basis: CountBasis::FirstStage,
        }
    }

    /// The 象甲-style chain: slow (decided: 2–0) → colours swapped fast (2–1) → armageddon whose
    /// colour the fast game's Black chooses, a draw counting as Black's win (2–1). Only the slow
    /// game is rated.
    pub fn slow_fast_armageddon(
        slow: TimeControlText,
        fast: TimeControlText,
        armageddon: TimeControlText,
    ) -> Self {
        let after = Some((Points::whole(2), Points::whole(1)));
        ResultChain {
            stages: vec![
                Stage {
                    name: "slow".into(),
                    time_control: slow,
                    colours: StageColours::AsScheduled,
                    on_draw: DrawRule::Draw,
                    decided_points: Some((Points::whole(2), Points::ZERO)),
                    rated: true,
                },
                Stage {
                    name: "fast".into(),
                    time_control: fast,
                    colours: StageColours::SwappedFromPrevious,
                    on_draw: DrawRule::Draw,
                    decided_points: after,
                    rated: false,
                },
                Stage {
                    name: "armageddon".into(),
                    time_control: armageddon,
                    colours: StageColours::ChosenBy(Chooser::PreviousBlack),
                    on_draw: DrawRule::WinFor(Colour::Black),
                    decided_points: after,
                    rated: false,
                },
            ],
            count_basis: CountBasis::FirstStage,
        }
    }

    /// The stages.
    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// Board points `(winner, loser)` of a board won outright: the first stage's decided points
    /// if the chain sets them (the 象甲 preset: 2–0), else the event's [`GameScoring`] win/loss.
    /// A forfeited board (21.4 `+`/`-`) is worth exactly this: the win the event's board scoring
    /// gives that board, so a walkover over 4 boards under the 象甲 preset is 8:0 whatever
    /// `game_scoring` says.
    pub fn board_win(&self, scoring: &GameScoring) -> (Points, Points) {
        self.stages
            .first()
            .and_then(|s| s.decided_points)
            .unwrap_or((scoring.win, scoring.loss))
    }

    /// Who chooses the colour of stage `stage` (0-based), given who had Red in the previous
    /// stage's game. `None` if the stage's colours are not chosen.
    pub fn chooser(&self, stage: usize, previous_red: Side) -> Option<Side> {
        match self.stages.get(stage)?.colours {
            StageColours::ChosenBy(Chooser::PreviousBlack) => Some(previous_red.other()),
            StageColours::ChosenBy(Chooser::PreviousRed) => Some(previous_red),
            StageColours::ChosenBy(Chooser::FirstTeam) => Some(Side::First),
            StageColours::ChosenBy(Chooser::SecondTeam) => Some(Side::Second),
            _ => None,
        }
    }
}

/// The result of one game, from the first-listed team's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameResult {
    /// The first team's player won.
    FirstWins,
    /// The second team's player won.
    SecondWins,
    /// Drawn.
    Draw,
}

impl GameResult {
    /// The winning side, if any.
    pub fn winner(self) -> Option<Side> {
        match self {
            GameResult::FirstWins => Some(Side::First),
            GameResult::SecondWins => Some(Side::Second),
            GameResult::Draw => None,
        }
    }

    /// The result with `side` winning.
    pub fn win_for(side: Side) -> Self {
        match side {
            Side::First => GameResult::FirstWins,
            Side::Second => GameResult::SecondWins,
        }
    }
}

/// One played game of a board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayedGame {
    /// Colour of the first team's player.
    pub first_colour: Colour,
    /// The result on the board (before any draw rule).
    pub result: GameResult,
    /// Fouls (犯规) recorded against `[first, second]` in this game.
    pub fouls: [u32; 2],
}

/// How a board went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardRecord {
    /// Played: the games of the chain in order.
    Played(Vec<PlayedGame>),
    /// One side did not play (21.4): the other wins `+`, it loses `-`.
    Forfeit {
        /// The side that forfeited.
        forfeited_by: Side,
    },
    /// Neither played: both lose.
    DoubleForfeit,
}

/// A board's evaluated result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardResult {
    /// Board number (1-based).
    pub board: u32,
    /// Points `[first, second]`.
    pub points: [Points; 2],
    /// The side that won the board, if any.
    pub winner: Option<Side>,
    /// The stage (0-based) that decided the board; `None` for a drawn board or a forfeit.
    pub decided_at: Option<usize>,
    /// `Some(side)` when `side` forfeited (`-`); both for a double forfeit.
    pub forfeit: [bool; 2],
    /// Fouls `[first, second]` over all games of the board.
    pub fouls: [u32; 2],
    /// The game the 胜局/后走 counts read ([`CountBasis`]); `None` for forfeits.
    pub counted: Option<CountedGame>,
    /// Each played game, for ratings and score sheets.
    pub games: Vec<StageGame>,
}

/// One played game of a board with its stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageGame {
    /// Stage index (0-based) in the chain.
    pub stage: usize,
    /// The game as played (its on-board result).
    pub game: PlayedGame,
    /// The result after the stage's draw rule (an armageddon draw becomes Black's win).
    pub scored: GameResult,
}

/// The game the win and colour counts read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CountedGame {
    /// Colour of the first team's player in that game.
    pub first_colour: Colour,
    /// Winner of that game (after the draw rule, if it was the deciding one), if any.
    pub winner: Option<Side>,
}

/// Why a board record does not fit the chain.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    /// No games.
    #[error("board {board}: no games recorded")]
    NoGames {
        /// Board.
        board: u32,
    },
    /// More games than stages, or a game after the board was decided.
    #[error("board {board}: game {game} was played after the board was already decided")]
    TooManyGames {
        /// Board.
        board: u32,
        /// The surplus game (1-based).
        game: usize,
    },
    /// The last game was drawn but the chain has another stage.
    #[error("board {board}: game {game} was drawn, so stage {next:?} is still to be played")]
    Unfinished {
        /// Board.
        board: u32,
        /// The drawn game (1-based).
        game: usize,
        /// The next stage's name.
        next: String,
    },
    /// The colours do not follow the stage's colour rule.
    #[error(
        "board {board}: game {game} ({stage}) has the wrong colours for the first team's player (expected {expected:?})"
    )]
    WrongColours {
        /// Board.
        board: u32,
        /// Game (1-based).
        game: usize,
        /// Stage name.
        stage: String,
        /// The colour the rule gives the first team's player.
        expected: Colour,
    },
}

/// Evaluates one board under `chain` and `scoring`.
pub fn evaluate_board(
    chain: &ResultChain,
    scoring: &GameScoring,
    board: u32,
    record: &BoardRecord,
) -> Result<BoardResult, BoardError> {
    let games = match record {
        BoardRecord::Forfeit { forfeited_by } => {
            let w = forfeited_by.other();
            let (wp, lp) = chain.board_win(scoring);
            let mut points = [Points::ZERO; 2];
            points[w.index()] = wp;
            points[forfeited_by.index()] = lp;
            let mut forfeit = [false; 2];
            forfeit[forfeited_by.index()] = true;
            return Ok(BoardResult {
                board,
                points,
                winner: Some(w),
                decided_at: None,
                forfeit,
                fouls: [0, 0],
                counted: None,
                games: vec![],
            });
        }
        BoardRecord::DoubleForfeit => {
            let (_, lp) = chain.board_win(scoring);
            return Ok(BoardResult {
                board,
                points: [lp, lp],
                winner: None,
                decided_at: None,
                forfeit: [true, true],
                fouls: [0, 0],
                counted: None,
                games: vec![],
            });
        }
        BoardRecord::Played(games) => games,
    };
    if games.is_empty() {
        return Err(BoardError::NoGames { board });
    }
    let mut fouls = [0u32; 2];
    let mut evaluated = Vec::with_capacity(games.len());
    let mut outcome: Option<(usize, Option<Side>)> = None;
    let mut prev_colour: Option<Colour> = None;
    for (i, g) in games.iter().enumerate() {
        if outcome.is_some() || i >= chain.stages.len() {
            return Err(BoardError::TooManyGames { board, game: i + 1 });
        }
        let stage = &chain.stages[i];
        let expected = match (stage.colours, prev_colour) {
            (StageColours::AsScheduled, _) => Some(side_colour(Side::First, board)),
            (StageColours::SwappedFromPrevious, Some(p)) => Some(p.opposite()),
            _ => None,
        };
        if let Some(expected) = expected {
            if g.first_colour != expected {
                return Err(BoardError::WrongColours {
                    board,
                    game: i + 1,
                    stage: stage.name.clone(),
                    expected,
                });
            }
        }
        fouls[0] += g.fouls[0];
        fouls[1] += g.fouls[1];
        let result = match (g.result, stage.on_draw) {
            (GameResult::Draw, DrawRule::WinFor(colour)) => {
                if g.first_colour == colour {
                    GameResult::FirstWins
                } else {
                    GameResult::SecondWins
                }
            }
            (r, _) => r,
        };
        evaluated.push(StageGame {
            stage: i,
            game: *g,
            scored: result,
        });
        prev_colour = Some(g.first_colour);
        match result.winner() {
            Some(w) => outcome = Some((i, Some(w))),
            None if i + 1 == chain.stages.len() => outcome = Some((i, None)),
            None => {}
        }
    }
    let Some((last, winner)) = outcome else {
        let next = chain
            .stages
            .get(games.len())
            .map(|s| s.name.clone())
            .unwrap_or_default();
        return Err(BoardError::Unfinished {
            board,
            game: games.len(),
            next,
        });
    };
    let stage = &chain.stages[last];
    let mut points = [Points::ZERO; 2];
    match winner {
        Some(w) => {
            let (wp, lp) = stage.decided_points.unwrap_or((scoring.win, scoring.loss));
            points[w.index()] = wp;
            points[w.other().index()] = lp;
        }
        None => {
            let fc = evaluated[last].game.first_colour;
            points[0] = scoring.draw(fc);
            points[1] = scoring.draw(fc.opposite());
        }
    }
    let counted_game = match chain.count_basis {
        CountBasis::FirstStage => evaluated[0],
        CountBasis::DecidingGame => evaluated[last],
    };
    Ok(BoardResult {
        board,
        points,
        winner,
        decided_at: winner.map(|_| last),
        forfeit: [false, false],
        fouls,
        counted: Some(CountedGame {
            first_colour: counted_game.game.first_colour,
            winner: counted_game.scored.winner(),
        }),
        games: evaluated,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn tc(s: &str) -> TimeControlText {
        TimeControlText::new(s).unwrap()
    }

    fn xj() -> ResultChain {
        ResultChain::slow_fast_armageddon(tc("20+10"), tc("5+3"), tc("4+0 vs 5+0"))
    }

    fn g(first_colour: Colour, result: GameResult) -> PlayedGame {
        PlayedGame {
            first_colour,
            result,
            fouls: [0, 0],
        }
    }

    #[test]
    fn slow_win_is_two_nil() {
        let r = evaluate_board(
            &xj(),
            &GameScoring::default(),
            1,
            &BoardRecord::Played(vec![g(Colour::Red, GameResult::SecondWins)]),
        )
        .unwrap();
        assert_eq!(r.points, [Points::ZERO, Points::whole(2)]);
        assert_eq!(r.decided_at, Some(0));
    }

    #[test]
    fn armageddon_draw_is_black_win_two_one() {
        use Colour::*;
        let r = evaluate_board(
            &xj(),
            &GameScoring::default(),
            2,
            &BoardRecord::Played(vec![
                g(Black, GameResult::Draw),
                g(Red, GameResult::Draw),
                g(Black, GameResult::Draw),
            ]),
        )
        .unwrap();
        assert_eq!(r.winner, Some(Side::First));
        assert_eq!(r.points, [Points::whole(2), Points::whole(1)]);
        assert_eq!(r.decided_at, Some(2));
        // counts read the slow game: a draw, first team Black
        assert_eq!(
            r.counted,
            Some(CountedGame {
                first_colour: Black,
                winner: None
            })
        );
    }

    #[test]
    fn chain_errors() {
        use Colour::*;
        let sc = GameScoring::default();
        assert_eq!(
            evaluate_board(
                &xj(),
                &sc,
                1,
                &BoardRecord::Played(vec![g(Red, GameResult::Draw)])
            ),
            Err(BoardError::Unfinished {
                board: 1,
                game: 1,
                next: "fast".into()
            })
        );
        assert!(matches!(
            evaluate_board(
                &xj(),
                &sc,
                1,
                &BoardRecord::Played(vec![g(Red, GameResult::Draw), g(Red, GameResult::Draw)])
            ),
            Err(BoardError::WrongColours { game: 2, .. })
        ));
        assert!(matches!(
            evaluate_board(
                &xj(),
                &sc,
                1,
                &BoardRecord::Played(vec![
                    g(Red, GameResult::FirstWins),
                    g(Black, GameResult::Draw)
                ])
            ),
            Err(BoardError::TooManyGames { game: 2, .. })
        ));
        assert!(matches!(
            evaluate_board(&xj(), &sc, 1, &BoardRecord::Played(vec![])),
            Err(BoardError::NoGames { .. })
        ));
    }

    #[test]
    fn asymmetric_draw() {
        let chain = ResultChain::single(tc("60+30"));
        let r = evaluate_board(
            &chain,
            &GameScoring::THREE_ZERO_ASYMMETRIC,
            2,
            &BoardRecord::Played(vec![g(Colour::Black, GameResult::Draw)]),
        )
        .unwrap();
        assert_eq!(r.points, [Points::whole(2), Points::whole(1)]);
    }

    #[test]
    fn chooser_and_validation() {
        let c = xj();
        assert_eq!(c.chooser(2, Side::First), Some(Side::Second));
        assert_eq!(c.chooser(1, Side::First), None);
        let mut stages = c.stages().to_vec();
        stages.swap(0, 1);
        assert_eq!(
            ResultChain::new(stages, CountBasis::FirstStage),
            Err(ChainError::FirstStageColours)
        );
        let mut stages = c.stages().to_vec();
        stages.push(stages[0].clone());
        stages[3].colours = StageColours::SwappedFromPrevious;
        assert_eq!(
            ResultChain::new(stages, CountBasis::FirstStage),
            Err(ChainError::Unreachable(4))
        );
        assert_eq!(
            ResultChain::new(vec![], CountBasis::FirstStage),
            Err(ChainError::Empty)
        );
    }
}
