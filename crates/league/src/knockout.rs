//! Knockout (淘汰制) beyond the first round: each tie is one match or two (13.5: colours
//! swapped in the second), decided by 场分, then 局分 over its legs, then a tiebreak match
//! played under the event's tiebreak chain (e.g. fast game → armageddon on every board), and if
//! that match is level on 局分 by its boards in order (the highest board with a winner). Winners
//! of consecutive bracket ties meet next; an optional third-place match between the losing
//! semi-finalists. Seeds are 1-based numbers (seed 1 strongest), as in
//! [`crate::fixtures::knockout_first_round`].

use crate::colour::Side;
use crate::fixtures::{ScheduleError, knockout_first_round, knockout_next_round};
use crate::matches::MatchResult;

/// A pairing of the bracket: the higher seed, and the lower seed or `None` for a bye.
pub type KnockoutPairing = (u32, Option<u32>);

/// Options of a knockout event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KnockoutOptions {
    /// Matches per tie: 1, or 2 (两局制, 13.5: the second with colours swapped).
    pub legs: u32,
    /// Play a match for third place between the losing semi-finalists.
    pub third_place: bool,
}

impl Default for KnockoutOptions {
    fn default() -> Self {
        KnockoutOptions {
            legs: 1,
            third_place: false,
        }
    }
}

/// A match of a tie as played: the seed listed first (moving first, Red on odd boards) and
/// the evaluated result (from the first-listed seed's view).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leg {
    /// The seed listed first.
    pub first: u32,
    /// The seed listed second.
    pub second: u32,
    /// The result, `[first, second]`.
    pub result: MatchResult,
}

/// What a knockout round has been played: legs and tiebreak matches, by round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayedMatch {
    /// Round (1-based).
    pub round: u32,
    /// The match.
    pub leg: Leg,
    /// A tiebreak match (played under the tiebreak chain after the legs were level).
    pub tiebreak: bool,
    /// The third-place match (in the final's round).
    pub third_place: bool,
}

/// What decided a tie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TieDecider {
    /// A bye: no opponent.
    Bye,
    /// 场分 over the legs.
    MatchPoints,
    /// 局分 over the legs.
    GamePoints,
    /// The tiebreak match's 局分.
    Tiebreak,
    /// The tiebreak match was level on 局分: the result of this board (the highest with a
    /// winner).
    TiebreakBoard(u32),
    /// A whole-match forfeit.
    Forfeit,
}

impl TieDecider {
    /// Stable machine code.
    pub fn code(self) -> String {
        match self {
            TieDecider::Bye => "bye".into(),
            TieDecider::MatchPoints => "match_points".into(),
            TieDecider::GamePoints => "game_points".into(),
            TieDecider::Tiebreak => "tiebreak".into(),
            TieDecider::TiebreakBoard(b) => format!("tiebreak_board_{b}"),
            TieDecider::Forfeit => "forfeit".into(),
        }
    }
}

/// Where a tie stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TieState {
    /// Decided.
    Decided {
        /// The seed going through.
        winner: u32,
        /// The seed out (none after a bye).
        loser: Option<u32>,
        /// What decided it.
        by: TieDecider,
    },
    /// Waiting for leg `n` (1-based).
    NeedsLeg(u32),
    /// Level after the legs: the tiebreak match is to be played.
    NeedsTiebreak,
}

/// A tie of the bracket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tie {
    /// The two seeds, higher seed first; `None` for a bye.
    pub seeds: (u32, Option<u32>),
    /// Its legs as played, then its tiebreak match.
    pub legs: Vec<Leg>,
    /// The tiebreak match, if played.
    pub tiebreak: Option<Leg>,
    /// Where it stands.
    pub state: TieState,
}

/// The bracket so far.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bracket {
    /// Bracket size (a power of two).
    pub size: u32,
    /// Rounds so far, each tie in bracket order.
    pub rounds: Vec<Vec<Tie>>,
    /// The third-place tie, once both semi-finals are decided (with the option).
    pub third_place: Option<Tie>,
    /// The winner, once the final is decided.
    pub champion: Option<u32>,
}

impl Bracket {
    /// The round to be played next and its pairings (higher seed first; colours by the lot,
    /// 13.4), once every tie of the last round is decided and the event is not over.
    pub fn next_round(&self) -> Option<(u32, Vec<KnockoutPairing>)> {
        let last = self.rounds.last()?;
        if last.len() < 2 {
            return None;
        }
        let winners: Option<Vec<u32>> = last
            .iter()
            .map(|t| match t.state {
                TieState::Decided { winner, .. } => Some(winner),
                _ => None,
            })
            .collect();
        Some((self.rounds.len() as u32 + 1, knockout_next_round(&winners?)))
    }
}

/// Why a knockout cannot be evaluated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KnockoutError {
    /// Bad seed count.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// Legs must be 1 or 2.
    #[error("a knockout tie has 1 or 2 legs, got {0}")]
    BadLegs(u32),
    /// A match between seeds that do not meet in that round.
    #[error("round {round}: seeds {a} and {b} do not meet in this round")]
    NotInBracket {
        /// Round.
        round: u32,
        /// One seed.
        a: u32,
        /// The other.
        b: u32,
    },
    /// More legs than the tie has, or a tiebreak before the legs were level.
    #[error("round {round}: seeds {a} and {b} play more matches than their tie needs")]
    TooManyMatches {
        /// Round.
        round: u32,
        /// One seed.
        a: u32,
        /// The other.
        b: u32,
    },
    /// 13.5: the second leg swaps who moves first.
    #[error(
        "round {round}: in the second match seed {first} moves first again (13.5 swaps the colours)"
    )]
    ColoursNotSwapped {
        /// Round.
        round: u32,
        /// The seed listed first twice.
        first: u32,
    },
    /// A round played before the previous one was decided.
    #[error("round {0} has matches but the round before it is not decided")]
    RoundTooEarly(u32),
    /// The tiebreak match and every board of it were level: nothing in the rules decides.
    #[error(
        "round {round}: the tiebreak match of seeds {a} and {b} is level on every board; the chain must decide each board"
    )]
    TiebreakLevel {
        /// Round.
        round: u32,
        /// One seed.
        a: u32,
        /// The other.
        b: u32,
    },
}

/// Decides a tie from its legs (and tiebreak match).
pub fn decide_tie(
    seeds: (u32, u32),
    legs_needed: u32,
    legs: &[Leg],
    tiebreak: Option<&Leg>,
) -> Option<TieState> {
    let (a, b) = seeds;
    // Totals from a's view.
    let mut mp = [crate::points::Points::ZERO; 2];
    let mut gp = [crate::points::Points::ZERO; 2];
    for l in legs {
        let (ia, ib) = if l.first == a { (0, 1) } else { (1, 0) };
        mp[0] += l.result.match_points[ia];
        mp[1] += l.result.match_points[ib];
        gp[0] += l.result.game_points[ia];
        gp[1] += l.result.game_points[ib];
        if l.result.match_forfeit.iter().any(|&f| f) {
            let winner = match l.result.winner {
                Some(Side::First) => l.first,
                Some(Side::Second) => l.second,
                None => return None,
            };
            let loser = if winner == a { b } else { a };
            return Some(TieState::Decided {
                winner,
                loser: Some(loser),
                by: TieDecider::Forfeit,
            });
        }
    }
    if (legs.len() as u32) < legs_needed {
        return Some(TieState::NeedsLeg(legs.len() as u32 + 1));
    }
    let decided = |w: bool, by| {
        let (winner, loser) = if w { (a, b) } else { (b, a) };
        TieState::Decided {
            winner,
            loser: Some(loser),
            by,
        }
    };
    if mp[0] != mp[1] {
        return Some(decided(mp[0] > mp[1], TieDecider::MatchPoints));
    }
    if gp[0] != gp[1] {
        return Some(decided(gp[0] > gp[1], TieDecider::GamePoints));
    }
    let Some(t) = tiebreak else {
        return Some(TieState::NeedsTiebreak);
    };
    let a_first = t.first == a;
    let side_of_a = if a_first { Side::First } else { Side::Second };
    let [g0, g1] = t.result.game_points;
    if g0 != g1 {
        return Some(decided((g0 > g1) == a_first, TieDecider::Tiebreak));
    }
    // Level: the highest board with a winner decides.
    let board = t.result.boards.iter().find(|b| b.winner.is_some())?;
    Some(decided(
        board.winner == Some(side_of_a),
        TieDecider::TiebreakBoard(board.board),
    ))
}

/// The bracket of `seeds` teams after the matches played so far.
pub fn knockout_bracket(
    seeds: u32,
    options: KnockoutOptions,
    played: &[PlayedMatch],
) -> Result<Bracket, KnockoutError> {
    if !(1..=2).contains(&options.legs) {
        return Err(KnockoutError::BadLegs(options.legs));
    }
    let first = knockout_first_round(seeds)?;
    let size = seeds.next_power_of_two();
    let mut rounds: Vec<Vec<Tie>> = Vec::new();
    let mut pairs = first;
    let mut used = vec![false; played.len()];
    let mut third_place = None;
    let mut round = 1u32;
    loop {
        let mut ties = Vec::with_capacity(pairs.len());
        for &(hi, lo) in &pairs {
            let Some(lo) = lo else {
                ties.push(Tie {
                    seeds: (hi, None),
                    legs: vec![],
                    tiebreak: None,
                    state: TieState::Decided {
                        winner: hi,
                        loser: None,
                        by: TieDecider::Bye,
                    },
                });
                continue;
            };
            ties.push(tie(
                round,
                (hi, lo),
                options.legs,
                played,
                &mut used,
                false,
            )?);
        }
        let all_decided = ties
            .iter()
            .all(|t| matches!(t.state, TieState::Decided { .. }));
        let len = ties.len();
        if len == 2 && options.third_place && all_decided {
            // A semi-final lost by forfeiting the whole match (弃权): the loser has left the
            // event as far as its remaining match goes (20.3/20.4 "其余未赛对局均作弃权，对方获胜"),
            // so it is not scheduled for third place and the other loser takes it by forfeit.
            // Both forfeited: no third-place match and no third place.
            let losers: Vec<(u32, bool)> = ties
                .iter()
                .filter_map(|t| match t.state {
                    TieState::Decided { loser, by, .. } => {
                        loser.map(|l| (l, by == TieDecider::Forfeit))
                    }
                    _ => None,
                })
                .collect();
            if let [(x, fx), (y, fy)] = losers[..] {
                let (hi, lo) = (x.min(y), x.max(y));
                third_place = match (fx, fy) {
                    (false, false) => Some(tie(
                        round + 1,
                        (hi, lo),
                        options.legs,
                        played,
                        &mut used,
                        true,
                    )?),
                    (true, true) => None,
                    _ => {
                        let (winner, gone) = if fx { (y, x) } else { (x, y) };
                        Some(Tie {
                            seeds: (hi, Some(lo)),
                            legs: vec![],
                            tiebreak: None,
                            state: TieState::Decided {
                                winner,
                                loser: Some(gone),
                                by: TieDecider::Forfeit,
                            },
                        })
                    }
                };
            }
        }
        rounds.push(ties);
        if len < 2 || !all_decided {
            break;
        }
        let winners: Vec<u32> = rounds[rounds.len() - 1]
            .iter()
            .filter_map(|t| match t.state {
                TieState::Decided { winner, .. } => Some(winner),
                _ => None,
            })
            .collect();
        // The next round exists on paper once this one is decided; stop if nothing of it is
        // played yet.
        round += 1;
        pairs = knockout_next_round(&winners);
        if !played
            .iter()
            .zip(&used)
            .any(|(p, &u)| !u && p.round == round && !p.third_place)
        {
            break;
        }
    }
    if let Some((i, p)) = played.iter().enumerate().find(|&(i, _)| !used[i]) {
        let _ = i;
        let last = rounds.len() as u32;
        return Err(if p.round > last {
            KnockoutError::RoundTooEarly(p.round)
        } else {
            KnockoutError::NotInBracket {
                round: p.round,
                a: p.leg.first,
                b: p.leg.second,
            }
        });
    }
    let champion = match rounds.last().map(Vec::as_slice) {
        Some(
            [
                Tie {
                    state: TieState::Decided { winner, .. },
                    ..
                },
            ],
        ) => Some(*winner),
        _ => None,
    };
    Ok(Bracket {
        size,
        rounds,
        third_place,
        champion,
    })
}

fn tie(
    round: u32,
    (hi, lo): (u32, u32),
    legs_needed: u32,
    played: &[PlayedMatch],
    used: &mut [bool],
    third: bool,
) -> Result<Tie, KnockoutError> {
    let mut legs = Vec::new();
    let mut tiebreak = None;
    for (i, p) in played.iter().enumerate() {
        let pair = (p.leg.first.min(p.leg.second), p.leg.first.max(p.leg.second));
        if used[i] || p.round != round || pair != (hi, lo) || p.third_place != third {
            continue;
        }
        used[i] = true;
        if p.tiebreak {
            if tiebreak.is_some() {
                return Err(KnockoutError::TooManyMatches {
                    round,
                    a: hi,
                    b: lo,
                });
            }
            tiebreak = Some(p.leg.clone());
        } else {
            if legs.len() as u32 >= legs_needed {
                return Err(KnockoutError::TooManyMatches {
                    round,
                    a: hi,
                    b: lo,
                });
            }
            if let Some(prev) = legs.last() {
                let prev: &Leg = prev;
                if prev.first == p.leg.first {
                    return Err(KnockoutError::ColoursNotSwapped {
                        round,
                        first: p.leg.first,
                    });
                }
            }
            legs.push(p.leg.clone());
        }
    }
    let state = decide_tie((hi, lo), legs_needed, &legs, tiebreak.as_ref()).ok_or(
        KnockoutError::TiebreakLevel {
            round,
            a: hi,
            b: lo,
        },
    )?;
    // A tiebreak played although the legs decided the tie.
    if tiebreak.is_some()
        && matches!(
            state,
            TieState::Decided {
                by: TieDecider::MatchPoints | TieDecider::GamePoints | TieDecider::Forfeit,
                ..
            }
        )
    {
        return Err(KnockoutError::TooManyMatches {
            round,
            a: hi,
            b: lo,
        });
    }
    Ok(Tie {
        seeds: (hi, Some(lo)),
        legs,
        tiebreak,
        state,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::chain::{BoardRecord, GameResult, GameScoring, PlayedGame, ResultChain};
    use crate::colour::side_colour;
    use crate::entities::TimeControlText;
    use crate::matches::{EventRules, MatchRecord, MatchScoring, evaluate_match};

    fn rules(chain: ResultChain) -> EventRules {
        EventRules {
            boards: 2,
            game_scoring: GameScoring::default(),
            chain,
            match_scoring: MatchScoring::default(),
        }
    }

    fn single() -> EventRules {
        rules(ResultChain::single(TimeControlText::new("60").unwrap()))
    }

    fn leg(r: &EventRules, first: u32, second: u32, res: &str) -> Leg {
        let boards = res
            .chars()
            .enumerate()
            .map(|(i, c)| {
                BoardRecord::Played(vec![PlayedGame {
                    first_colour: side_colour(Side::First, i as u32 + 1),
                    result: match c {
                        'W' => GameResult::FirstWins,
                        'L' => GameResult::SecondWins,
                        _ => GameResult::Draw,
                    },
                    fouls: [0, 0],
                }])
            })
            .collect();
        Leg {
            first,
            second,
            result: evaluate_match(r, &MatchRecord::Played(boards)).unwrap(),
        }
    }

    fn p(round: u32, leg: Leg) -> PlayedMatch {
        PlayedMatch {
            round,
            leg,
            tiebreak: false,
            third_place: false,
        }
    }

    #[test]
    fn rounds_follow_the_winners_to_the_final_and_third_place() {
        let r = single();
        let o = KnockoutOptions {
            legs: 1,
            third_place: true,
        };
        // 8 seeds: 1-8, 4-5, 2-7, 3-6. Upsets: 5 beats 4, 6 beats 3.
        let mut played = vec![
            p(1, leg(&r, 1, 8, "WW")),
            p(1, leg(&r, 5, 4, "WD")),
            p(1, leg(&r, 7, 2, "LL")),
            p(1, leg(&r, 3, 6, "LD")),
        ];
        let b = knockout_bracket(8, o, &played).unwrap();
        assert_eq!(b.next_round(), Some((2, vec![(1, Some(5)), (2, Some(6))])));
        played.push(p(2, leg(&r, 1, 5, "DL")));
        played.push(p(2, leg(&r, 6, 2, "LL")));
        let b = knockout_bracket(8, o, &played).unwrap();
        // Final 2–5; third place 1–6.
        assert_eq!(b.next_round(), Some((3, vec![(2, Some(5))])));
        assert_eq!(b.third_place.as_ref().map(|t| t.seeds), Some((1, Some(6))));
        played.push(p(3, leg(&r, 5, 2, "WW")));
        played.push(PlayedMatch {
            third_place: true,
            ..p(3, leg(&r, 6, 1, "LD"))
        });
        let b = knockout_bracket(8, o, &played).unwrap();
        assert_eq!(b.champion, Some(5));
        assert_eq!(b.next_round(), None);
        assert!(matches!(
            b.third_place.map(|t| t.state),
            Some(TieState::Decided { winner: 1, .. })
        ));
        // A match between seeds that do not meet: refused.
        played.push(p(3, leg(&r, 1, 2, "WW")));
        assert_eq!(
            knockout_bracket(8, o, &played),
            Err(KnockoutError::NotInBracket {
                round: 3,
                a: 1,
                b: 2
            })
        );
    }

    /// A semi-final forfeited as a whole (seed 4 did not play seed 1): seed 4 is not scheduled
    /// for third place; seed 3, the other semi's loser, takes it by forfeit.
    #[test]
    fn a_team_that_forfeited_its_semi_final_is_not_scheduled_for_third_place() {
        let r = single();
        let o = KnockoutOptions {
            legs: 1,
            third_place: true,
        };
        let walkover = |first, second, by| Leg {
            first,
            second,
            result: evaluate_match(&r, &MatchRecord::Forfeit { forfeited_by: by }).unwrap(),
        };
        let mut played = vec![
            p(1, walkover(1, 4, Side::Second)),
            p(1, leg(&r, 2, 3, "WD")),
        ];
        let b = knockout_bracket(4, o, &played).unwrap();
        assert_eq!(b.next_round(), Some((2, vec![(1, Some(2))])));
        let third = b.third_place.clone().unwrap();
        assert!(third.legs.is_empty(), "no third-place match is played");
        assert_eq!(
            third.state,
            TieState::Decided {
                winner: 3,
                loser: Some(4),
                by: TieDecider::Forfeit
            }
        );
        // A third-place match recorded anyway is refused.
        played.push(PlayedMatch {
            third_place: true,
            ..p(2, leg(&r, 3, 4, "WW"))
        });
        assert!(knockout_bracket(4, o, &played).is_err());
        // Both semi-finals forfeited: no third place at all.
        let both = vec![
            p(1, walkover(1, 4, Side::Second)),
            p(1, walkover(2, 3, Side::Second)),
        ];
        let b = knockout_bracket(4, o, &both).unwrap();
        assert_eq!(b.third_place, None);
        assert_eq!(b.next_round(), Some((2, vec![(1, Some(2))])));
    }

    #[test]
    fn byes_go_through_and_two_leg_ties_use_the_chain_as_tiebreak() {
        let r = single();
        let tb = rules(ResultChain::slow_fast_armageddon(
            TimeControlText::new("15").unwrap(),
            TimeControlText::new("5").unwrap(),
            TimeControlText::new("4").unwrap(),
        ));
        let o = KnockoutOptions {
            legs: 2,
            third_place: false,
        };
        // 3 seeds: 1 has a bye, 2–3 play two legs, level on 场分 and 局分.
        let mut played = vec![p(1, leg(&r, 2, 3, "WL")), p(1, leg(&r, 3, 2, "DD"))];
        let b = knockout_bracket(3, o, &played).unwrap();
        assert_eq!(
            b.rounds[0][0].state.clone(),
            TieState::Decided {
                winner: 1,
                loser: None,
                by: TieDecider::Bye
            }
        );
        assert_eq!(b.rounds[0][1].state, TieState::NeedsTiebreak);
        assert_eq!(b.next_round(), None);
        // The tiebreak under the chain: board 1 decided by armageddon (drawn: Black wins),
        // board 2 by the slow game; 2–1 each way: level on 局分, board 1 decides.
        let g = |c, res| PlayedGame {
            first_colour: c,
            result: res,
            fouls: [0, 0],
        };
        use crate::colour::Colour::*;
        let tie_result = evaluate_match(
            &tb,
            &MatchRecord::Played(vec![
                BoardRecord::Played(vec![
                    g(Red, GameResult::Draw),
                    g(Black, GameResult::Draw),
                    g(Red, GameResult::Draw),
                ]),
                BoardRecord::Played(vec![
                    g(Black, GameResult::Draw),
                    g(Red, GameResult::FirstWins),
                ]),
            ]),
        )
        .unwrap();
        assert_eq!(tie_result.game_points[0], tie_result.game_points[1]);
        played.push(PlayedMatch {
            tiebreak: true,
            ..p(
                1,
                Leg {
                    first: 3,
                    second: 2,
                    result: tie_result,
                },
            )
        });
        let b = knockout_bracket(3, o, &played).unwrap();
        // Board 1: seed 3 (first) Red in the armageddon, drawn → Black (seed 2) wins the board.
        assert_eq!(
            b.rounds[0][1].state,
            TieState::Decided {
                winner: 2,
                loser: Some(3),
                by: TieDecider::TiebreakBoard(1)
            }
        );
        assert_eq!(b.next_round(), Some((2, vec![(1, Some(2))])));
        // 13.5: the second leg swaps who moves first.
        let bad = vec![p(1, leg(&r, 2, 3, "WL")), p(1, leg(&r, 2, 3, "DD"))];
        assert_eq!(
            knockout_bracket(3, o, &bad),
            Err(KnockoutError::ColoursNotSwapped { round: 1, first: 2 })
        );
        // A round before its time.
        let early = vec![p(2, leg(&r, 1, 2, "WW"))];
        assert_eq!(
            knockout_bracket(3, o, &early),
            Err(KnockoutError::RoundTooEarly(2))
        );
    }
}
