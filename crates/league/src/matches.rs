//! A team match: 局分 (the sum of board points) decides it; 场分 win 2, draw 1, loss 0 (2011 13.2).
//! Forfeits (21.4): a board forfeit is `+`/`-`; a whole-match forfeit scores 场分 2–0 and every
//! board as a forfeit win by default; a double forfeit loses for both.

use crate::chain::{
    BoardError, BoardRecord, BoardResult, GameScoring, ResultChain, evaluate_board,
};
use crate::colour::Side;
use crate::points::Points;

/// 场分 values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchScoring {
    /// Match won on 局分.
    pub win: Points,
    /// Equal 局分.
    pub draw: Points,
    /// Match lost on 局分.
    pub loss: Points,
    /// The side that did not forfeit a whole match.
    pub forfeit_win: Points,
    /// The side that forfeited a whole match.
    pub forfeit_loss: Points,
    /// Each side of a double forfeit.
    pub double_forfeit: Points,
}

impl Default for MatchScoring {
    /// 2/1/0; whole-match forfeit 2–0; double forfeit 0–0.
    fn default() -> Self {
        MatchScoring {
            win: Points::whole(2),
            draw: Points::whole(1),
            loss: Points::ZERO,
            forfeit_win: Points::whole(2),
            forfeit_loss: Points::ZERO,
            double_forfeit: Points::ZERO,
        }
    }
}

/// The scoring rules of an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRules {
    /// Boards per match.
    pub boards: u32,
    /// Game points.
    pub game_scoring: GameScoring,
    /// The board result chain.
    pub chain: ResultChain,
    /// 场分.
    pub match_scoring: MatchScoring,
}

/// How a match went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchRecord {
    /// Played board by board (board 1 first).
    Played(Vec<BoardRecord>),
    /// A whole team did not turn up.
    Forfeit {
        /// The side that forfeited.
        forfeited_by: Side,
    },
    /// Neither team played.
    DoubleForfeit,
}

/// An evaluated match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchResult {
    /// 局分 `[first, second]`.
    pub game_points: [Points; 2],
    /// 场分 `[first, second]`.
    pub match_points: [Points; 2],
    /// The winner on 局分 (or by forfeit), if any.
    pub winner: Option<Side>,
    /// Per-board results.
    pub boards: Vec<BoardResult>,
    /// `[first, second]`: which side forfeited the whole match.
    pub match_forfeit: [bool; 2],
}

/// Why a match record was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MatchError {
    /// Boards recorded ≠ boards of the event.
    #[error("{got} boards recorded, the event has {expected}")]
    WrongBoardCount {
        /// Boards of the event.
        expected: u32,
        /// Boards recorded.
        got: u32,
    },
    /// A board does not fit the result chain.
    #[error(transparent)]
    Board(#[from] BoardError),
}

/// Evaluates a match under `rules`.
pub fn evaluate_match(rules: &EventRules, record: &MatchRecord) -> Result<MatchResult, MatchError> {
    let ms = &rules.match_scoring;
    let eval_all = |f: &dyn Fn(u32) -> BoardRecord| -> Result<Vec<BoardResult>, MatchError> {
        (1..=rules.boards)
            .map(|b| {
                evaluate_board(&rules.chain, &rules.game_scoring, b, &f(b)).map_err(Into::into)
            })
            .collect()
    };
    let (boards, match_points, winner, match_forfeit) = match record {
        MatchRecord::Forfeit { forfeited_by } => {
            let fb = *forfeited_by;
            let boards = eval_all(&|_| BoardRecord::Forfeit { forfeited_by: fb })?;
            let mut mp = [Points::ZERO; 2];
            mp[fb.index()] = ms.forfeit_loss;
            mp[fb.other().index()] = ms.forfeit_win;
            let mut mf = [false; 2];
            mf[fb.index()] = true;
            (boards, mp, Some(fb.other()), mf)
        }
        MatchRecord::DoubleForfeit => {
            let boards = eval_all(&|_| BoardRecord::DoubleForfeit)?;
            (
                boards,
                [ms.double_forfeit, ms.double_forfeit],
                None,
                [true, true],
            )
        }
        MatchRecord::Played(records) => {
            if records.len() as u32 != rules.boards {
                return Err(MatchError::WrongBoardCount {
                    expected: rules.boards,
                    got: records.len() as u32,
                });
            }
            let boards = records
                .iter()
                .enumerate()
                .map(|(i, r)| evaluate_board(&rules.chain, &rules.game_scoring, i as u32 + 1, r))
                .collect::<Result<Vec<_>, _>>()?;
            let gp = sum_points(&boards);
            let (mp, winner) = match gp[0].cmp(&gp[1]) {
                std::cmp::Ordering::Greater => ([ms.win, ms.loss], Some(Side::First)),
                std::cmp::Ordering::Less => ([ms.loss, ms.win], Some(Side::Second)),
                std::cmp::Ordering::Equal => ([ms.draw, ms.draw], None),
            };
            (boards, mp, winner, [false, false])
        }
    };
    Ok(MatchResult {
        game_points: sum_points(&boards),
        match_points,
        winner,
        boards,
        match_forfeit,
    })
}

fn sum_points(boards: &[BoardResult]) -> [Points; 2] {
    [
        boards.iter().map(|b| b.points[0]).sum(),
        boards.iter().map(|b| b.points[1]).sum(),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::chain::{GameResult, PlayedGame};
    use crate::colour::{Colour, side_colour};
    use crate::entities::TimeControlText;

    fn rules() -> EventRules {
        EventRules {
            boards: 4,
            game_scoring: GameScoring::default(),
            chain: ResultChain::single(TimeControlText::new("60+30").unwrap()),
            match_scoring: MatchScoring::default(),
        }
    }

    fn played(results: [GameResult; 4]) -> MatchRecord {
        MatchRecord::Played(
            results
                .iter()
                .enumerate()
                .map(|(i, &r)| {
                    BoardRecord::Played(vec![PlayedGame {
                        first_colour: side_colour(Side::First, i as u32 + 1),
                        result: r,
                        fouls: [0, 0],
                    }])
                })
                .collect(),
        )
    }

    #[test]
    fn game_points_decide() {
        use GameResult::*;
        let r = evaluate_match(&rules(), &played([FirstWins, Draw, Draw, SecondWins])).unwrap();
        assert_eq!(r.game_points, [Points::whole(4), Points::whole(4)]);
        assert_eq!(r.match_points, [Points::whole(1), Points::whole(1)]);
        let r = evaluate_match(&rules(), &played([FirstWins, Draw, Draw, Draw])).unwrap();
        assert_eq!(r.match_points, [Points::whole(2), Points::ZERO]);
        assert_eq!(r.winner, Some(Side::First));
    }

    #[test]
    fn forfeits() {
        let r = evaluate_match(
            &rules(),
            &MatchRecord::Forfeit {
                forfeited_by: Side::First,
            },
        )
        .unwrap();
        assert_eq!(r.match_points, [Points::ZERO, Points::whole(2)]);
        assert_eq!(r.game_points, [Points::ZERO, Points::whole(8)]);
        assert!(r.boards.iter().all(|b| b.forfeit == [true, false]));
        let r = evaluate_match(&rules(), &MatchRecord::DoubleForfeit).unwrap();
        assert_eq!(r.match_points, [Points::ZERO, Points::ZERO]);
        assert_eq!(r.winner, None);
        let _ = Colour::Red;
    }

    #[test]
    fn wrong_board_count() {
        assert_eq!(
            evaluate_match(&rules(), &MatchRecord::Played(vec![])),
            Err(MatchError::WrongBoardCount {
                expected: 4,
                got: 0
            })
        );
    }
}
