//! A team match: 局分 (the sum of board points) decides it; 场分 win 2, draw 1, loss 0 (2011 13.2).
//! Forfeits (21.4): a board forfeit is `+`/`-`; a whole-match forfeit scores 场分 2–0 and every
//! board as a forfeit win by default; a double forfeit loses for both. The points of a forfeited
//! board and the 局分 of a forfeited match are event settings ([`MatchScoring`]).

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
    /// Board points `[winner, loser]` of a forfeited board (21.4 `+`/`-`); `None`: the game
    /// scoring's win and loss, as if the game had been played and lost. Each side of a
    /// double-forfeited board gets the loser's points. An event setting of the 规程.
    pub forfeit_board: Option<[Points; 2]>,
    /// 局分 `[winner, loser]` of a whole-match forfeit; `None`: every board counts as a
    /// forfeited board. The 规程 may let a forfeited match count differently from a played one in
    /// 局分 (2011 13.3), e.g. `[0, 0]` so that a walkover never outweighs a played match on
    /// 总局分.
    pub forfeit_match_game_points: Option<[Points; 2]>,
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
            forfeit_board: None,
            forfeit_match_game_points: None,
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
    let boards: Vec<BoardResult> = match ms.forfeit_board {
        None => boards,
        Some([w, l]) => boards
            .into_iter()
            .map(|mut b| {
                match b.forfeit {
                    [true, true] => b.points = [l, l],
                    [true, false] => b.points = [l, w],
                    [false, true] => b.points = [w, l],
                    [false, false] => {}
                }
                b
            })
            .collect(),
    };
    let game_points = match (record, ms.forfeit_match_game_points) {
        (MatchRecord::Forfeit { forfeited_by }, Some([w, l])) => {
            let mut gp = [w, w];
            gp[forfeited_by.index()] = l;
            gp
        }
        _ => sum_points(&boards),
    };
    // A played match's winner is decided on the (possibly re-scored) 局分.
    let (match_points, winner) = match record {
        MatchRecord::Played(_) => match game_points[0].cmp(&game_points[1]) {
            std::cmp::Ordering::Greater => ([ms.win, ms.loss], Some(Side::First)),
            std::cmp::Ordering::Less => ([ms.loss, ms.win], Some(Side::Second)),
            std::cmp::Ordering::Equal => ([ms.draw, ms.draw], None),
        },
        _ => (match_points, winner),
    };
    Ok(MatchResult {
        game_points,
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
    fn forfeit_points_are_event_settings() {
        let mut r = rules();
        r.match_scoring.forfeit_board = Some([Points::whole(1), Points::ZERO]);
        r.match_scoring.forfeit_match_game_points = Some([Points::ZERO, Points::ZERO]);
        // A forfeited board counts 1–0 here, so the board's forfeit no longer outweighs a win.
        let rec = MatchRecord::Played(vec![
            BoardRecord::Forfeit {
                forfeited_by: Side::First,
            },
            played([GameResult::FirstWins; 4]).boards()[1].clone(),
            BoardRecord::DoubleForfeit,
            played([GameResult::Draw; 4]).boards()[3].clone(),
        ]);
        let m = evaluate_match(&r, &rec).unwrap();
        assert_eq!(m.boards[0].points, [Points::ZERO, Points::whole(1)]);
        assert_eq!(m.boards[2].points, [Points::ZERO, Points::ZERO]);
        // 0+2+0+1 against 1+0+0+1: the first team wins 3–2 on 局分.
        assert_eq!(m.game_points, [Points::whole(3), Points::whole(2)]);
        assert_eq!(m.winner, Some(Side::First));
        // A whole-match forfeit: 场分 2–0, 局分 as set (0–0), boards still marked.
        let f = evaluate_match(
            &r,
            &MatchRecord::Forfeit {
                forfeited_by: Side::Second,
            },
        )
        .unwrap();
        assert_eq!(f.match_points, [Points::whole(2), Points::ZERO]);
        assert_eq!(f.game_points, [Points::ZERO, Points::ZERO]);
        assert!(f.boards.iter().all(|b| b.forfeit == [false, true]));
        r.match_scoring.forfeit_match_game_points = Some([Points::whole(5), Points::whole(1)]);
        let f = evaluate_match(
            &r,
            &MatchRecord::Forfeit {
                forfeited_by: Side::First,
            },
        )
        .unwrap();
        assert_eq!(f.game_points, [Points::whole(1), Points::whole(5)]);
        assert_eq!(f.winner, Some(Side::Second));
    }

    /// Under the 象甲 preset (a board won 2–0) a forfeited board is worth the preset's board win
    /// whatever `game_scoring` says: a walkover over 4 boards is 8:0 under 3-1-0 and 1-0.5-0 alike.
    #[test]
    fn forfeit_board_is_worth_the_presets_board_win() {
        let tc = |s: &str| TimeControlText::new(s).unwrap();
        for gs in [
            GameScoring::THREE_ONE_ZERO,
            GameScoring::ONE_HALF_ZERO,
            GameScoring::THREE_ZERO_ASYMMETRIC,
            GameScoring::TWO_ONE_ZERO,
        ] {
            let r = EventRules {
                boards: 4,
                game_scoring: gs,
                chain: ResultChain::slow_fast_armageddon(tc("20+10"), tc("5+3"), tc("4+0")),
                match_scoring: MatchScoring::default(),
            };
            let w = evaluate_match(
                &r,
                &MatchRecord::Forfeit {
                    forfeited_by: Side::Second,
                },
            )
            .unwrap();
            assert_eq!(w.game_points, [Points::whole(8), Points::ZERO], "{gs:?}");
            assert!(
                w.boards
                    .iter()
                    .all(|b| b.points == [Points::whole(2), Points::ZERO])
            );
            let mut one = played([GameResult::FirstWins; 4]).boards().to_vec();
            one[1] = BoardRecord::Forfeit {
                forfeited_by: Side::First,
            };
            let m = evaluate_match(&r, &MatchRecord::Played(one)).unwrap();
            assert_eq!(
                m.boards[1].points,
                [Points::ZERO, Points::whole(2)],
                "{gs:?}"
            );
        }
        // Without a preset's board points the event's game scoring is the board's win.
        let mut r = rules();
        r.game_scoring = GameScoring::THREE_ONE_ZERO;
        let w = evaluate_match(
            &r,
            &MatchRecord::Forfeit {
                forfeited_by: Side::First,
            },
        )
        .unwrap();
        assert_eq!(w.game_points, [Points::ZERO, Points::whole(12)]);
    }

    impl MatchRecord {
        fn boards(&self) -> &[BoardRecord] {
            match self {
                MatchRecord::Played(b) => b,
                _ => &[],
            }
        }
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
