//! Standings: each criterion of the 2011 14.5 chain decides one case; head-to-head among three;
//! forfeits; armageddon boards; 13.3 asymmetric scoring; both halves of 20.3; 20.4; 18.4.
#![allow(clippy::unwrap_used)]

use chuhe_league::Points;
use chuhe_league::Side;
use chuhe_league::chain::*;
use chuhe_league::colour::{Colour, side_colour};
use chuhe_league::entities::TimeControlText;
use chuhe_league::matches::*;
use chuhe_league::standings::*;

fn tc(s: &str) -> TimeControlText {
    TimeControlText::new(s).unwrap()
}

fn rules(boards: u32, scoring: GameScoring) -> EventRules {
    EventRules {
        boards,
        game_scoring: scoring,
        chain: ResultChain::single(tc("60+30")),
        match_scoring: MatchScoring::default(),
    }
}

/// `results`: one letter per board from the first team's view: W win, L loss, D draw,
/// F the first team's player forfeited, f the second's. `fouls`: (board, [first, second]).
fn m(
    r: &EventRules,
    round: u32,
    first: usize,
    second: usize,
    results: &str,
    fouls: &[(u32, [u32; 2])],
) -> TeamMatch {
    let boards = results
        .chars()
        .enumerate()
        .map(|(i, c)| {
            let b = i as u32 + 1;
            let result = match c {
                'W' => GameResult::FirstWins,
                'L' => GameResult::SecondWins,
                'D' => GameResult::Draw,
                'F' => {
                    return BoardRecord::Forfeit {
                        forfeited_by: Side::First,
                    };
                }
                'f' => {
                    return BoardRecord::Forfeit {
                        forfeited_by: Side::Second,
                    };
                }
                _ => panic!("bad letter {c}"),
            };
            let f = fouls.iter().find(|x| x.0 == b).map_or([0, 0], |x| x.1);
            BoardRecord::Played(vec![PlayedGame {
                first_colour: side_colour(Side::First, b),
                result,
                fouls: f,
            }])
        })
        .collect();
    TeamMatch {
        round,
        first,
        second,
        result: evaluate_match(r, &MatchRecord::Played(boards)).unwrap(),
    }
}

fn table(r: &EventRules, n: usize, matches: Vec<TeamMatch>) -> Standings {
    run(
        r,
        n,
        matches,
        vec![],
        vec![],
        System::RoundRobin { legs: 1 },
    )
}

fn run(
    r: &EventRules,
    n: usize,
    matches: Vec<TeamMatch>,
    penalties: Vec<Penalty>,
    withdrawals: Vec<Withdrawal>,
    system: System,
) -> Standings {
    standings(StandingsInput {
        team_count: n,
        system,
        rules: r,
        criteria: chains::ROUND_ROBIN_2011,
        matches,
        byes: vec![],
        penalties,
        withdrawals,
        schedule: None,
    })
    .unwrap()
}

/// The row of `team`.
fn row(s: &Standings, team: usize) -> &TeamRow {
    s.rows.iter().find(|r| r.team == team).unwrap()
}

/// Asserts that `upper` is ranked directly above `lower`, separated by `by`.
fn above(s: &Standings, upper: usize, lower: usize, by: TeamCriterion) {
    let pos = |t| s.rows.iter().position(|r| r.team == t).unwrap();
    assert_eq!(
        pos(upper) + 1,
        pos(lower),
        "{upper} directly above {lower}: {:#?}",
        s.rows
    );
    assert_eq!(
        row(s, lower).decided_by,
        Some(by),
        "{lower} separated by {by}"
    );
    assert!(row(s, upper).rank < row(s, lower).rank);
}

const A: usize = 0;
const B: usize = 1;
const C: usize = 2;
const D: usize = 3;

#[test]
fn match_points_decide() {
    let r = rules(4, GameScoring::default());
    let s = table(&r, 2, vec![m(&r, 1, A, B, "WDDD", &[])]);
    above(&s, A, B, TeamCriterion::MatchPoints);
    assert_eq!(
        row(&s, A).decided_by,
        Some(TeamCriterion::MatchPoints),
        "first row says what separated it from the second"
    );
}

#[test]
fn penalties_rank_last_among_equals_18_4() {
    let r = rules(4, GameScoring::default());
    let matches = vec![m(&r, 1, A, C, "WDDD", &[]), m(&r, 1, B, D, "WWWW", &[])];
    let s = run(
        &r,
        4,
        matches,
        vec![Penalty {
            team: B,
            kind: PenaltyKind::Warning,
        }],
        vec![],
        System::RoundRobin { legs: 1 },
    );
    // B has more game points but a warning: A goes first.
    above(&s, A, B, TeamCriterion::Penalties);
    assert_eq!(row(&s, B).penalties, (0, 1));
}

#[test]
fn game_points_decide() {
    let r = rules(4, GameScoring::default());
    let s = table(
        &r,
        4,
        vec![m(&r, 1, A, C, "WDDD", &[]), m(&r, 1, B, D, "WWWW", &[])],
    );
    above(&s, B, A, TeamCriterion::GamePoints);
    assert_eq!(row(&s, B).game_points, Points::whole(8));
    assert_eq!(row(&s, A).game_points, Points::whole(5));
}

#[test]
fn match_wins_decide() {
    let r = rules(4, GameScoring::default());
    // A: a win 5–3 and a loss 3–5 (2 场分, 8 局分); B: two 4–4 draws (2 场分, 8 局分).
    let s = table(
        &r,
        6,
        vec![
            m(&r, 1, A, 2, "WDDD", &[]),
            m(&r, 2, A, 3, "LDDD", &[]),
            m(&r, 1, B, 4, "WLDD", &[]),
            m(&r, 2, B, 5, "WLDD", &[]),
        ],
    );
    assert_eq!(row(&s, A).match_points, row(&s, B).match_points);
    assert_eq!(row(&s, A).game_points, row(&s, B).game_points);
    above(&s, A, B, TeamCriterion::MatchWins);
}

#[test]
fn game_wins_decide() {
    let r = rules(4, GameScoring::default());
    let s = table(
        &r,
        4,
        vec![m(&r, 1, A, C, "WWLD", &[]), m(&r, 1, B, D, "WDDD", &[])],
    );
    assert_eq!(row(&s, A).game_points, row(&s, B).game_points);
    above(&s, A, B, TeamCriterion::GameWins);
    assert_eq!((row(&s, A).game_wins, row(&s, B).game_wins), (2, 1));
}

#[test]
fn head_to_head_mini_league_of_three() {
    let r = rules(4, GameScoring::default());
    // Mini-league: A–B drawn, A beat C, B–C drawn → A 3, B 2, C 1.
    // Outside results even everything else out: all three end on 6 场分, 21 局分, 2 match wins, 2 game wins.
    let mut ms = vec![
        m(&r, 1, A, B, "DDDD", &[]),
        m(&r, 2, A, C, "WDDD", &[]),
        m(&r, 3, B, C, "DDDD", &[]),
    ];
    let mut extra = 3;
    let mut vs = |ms: &mut Vec<TeamMatch>, t: usize, round: u32, res: &str| {
        ms.push(m(&r, round, t, extra, res, &[]));
        extra += 1;
    };
    vs(&mut ms, A, 4, "WDDD");
    vs(&mut ms, A, 5, "DDDD");
    vs(&mut ms, A, 6, "LDDD");
    vs(&mut ms, B, 4, "WDDD");
    vs(&mut ms, B, 5, "WDDD");
    vs(&mut ms, B, 6, "LDDD");
    vs(&mut ms, C, 4, "WDDD");
    vs(&mut ms, C, 5, "WDDD");
    vs(&mut ms, C, 6, "DDDD");
    let s = table(&r, 12, ms);
    for t in [A, B, C] {
        let x = row(&s, t);
        assert_eq!(
            (x.match_points, x.game_points, x.won, x.game_wins),
            (Points::whole(6), Points::whole(21), 2, 2),
            "team {t}"
        );
    }
    assert_eq!(s.rows[0].team, A);
    above(&s, A, B, TeamCriterion::HeadToHead);
    above(&s, B, C, TeamCriterion::HeadToHead);
    assert_eq!(row(&s, A).head_to_head, Some(Points::whole(3)));
    assert_eq!(row(&s, B).head_to_head, Some(Points::whole(2)));
    assert_eq!(row(&s, C).head_to_head, Some(Points::whole(1)));
}

#[test]
fn head_to_head_counts_both_meetings_in_a_double_round_robin() {
    let r = rules(2, GameScoring::default());
    // A and B meet twice: A wins 3–1, then 2–2. Mini-league over both meetings: A 3, B 1.
    // Outside, A loses to C 1–3 and B beats C 3–1, so both end on 3 场分, 6 局分, 1 win, 1 game win.
    let ms = vec![
        m(&r, 1, A, B, "WD", &[]),
        m(&r, 2, B, A, "DD", &[]),
        m(&r, 3, C, A, "WD", &[]),
        m(&r, 4, B, C, "WD", &[]),
    ];
    let s = run(&r, 3, ms, vec![], vec![], System::RoundRobin { legs: 2 });
    for t in [A, B] {
        let x = row(&s, t);
        assert_eq!(
            (x.match_points, x.game_points, x.won, x.game_wins),
            (Points::whole(3), Points::whole(6), 1, 1)
        );
    }
    above(&s, A, B, TeamCriterion::HeadToHead);
    assert_eq!(row(&s, A).head_to_head, Some(Points::whole(3)));
    assert_eq!(row(&s, B).head_to_head, Some(Points::whole(1)));
}

#[test]
fn cyclic_head_to_head_does_not_separate() {
    let r = rules(2, GameScoring::default());
    // Double round robin of three where every team wins once 3–1 and draws three times 2–2.
    let ms = vec![
        m(&r, 1, A, B, "WD", &[]),
        m(&r, 2, B, A, "DD", &[]),
        m(&r, 3, B, C, "WD", &[]),
        m(&r, 4, C, B, "DD", &[]),
        m(&r, 5, A, C, "DD", &[]),
        m(&r, 6, C, A, "WD", &[]),
    ];
    let s = run(&r, 3, ms, vec![], vec![], System::RoundRobin { legs: 2 });
    for t in [A, B, C] {
        assert_eq!(row(&s, t).match_points, Points::whole(4));
        assert_eq!(row(&s, t).head_to_head, Some(Points::whole(4)));
        assert_ne!(row(&s, t).decided_by, Some(TeamCriterion::HeadToHead));
    }
}

#[test]
fn fouls_decide() {
    let r = rules(4, GameScoring::default());
    let s = table(&r, 2, vec![m(&r, 1, A, B, "DDDD", &[(2, [1, 0])])]);
    assert_eq!(row(&s, A).head_to_head, Some(Points::whole(1)));
    above(&s, B, A, TeamCriterion::Fouls);
    assert_eq!(row(&s, A).fouls, 1);
}

#[test]
fn black_wins_decide() {
    let r = rules(4, GameScoring::default());
    // A loses board 1 (Red) and wins board 2 (Black); B wins board 1 (Red) and loses board 2.
    // Round 2 lifts A and B clear of C and D with identical wins.
    let s = table(
        &r,
        6,
        vec![
            m(&r, 1, A, C, "LWDD", &[]),
            m(&r, 1, B, D, "WLDD", &[]),
            m(&r, 2, A, 4, "WWWW", &[]),
            m(&r, 2, B, 5, "WWWW", &[]),
        ],
    );
    above(&s, A, B, TeamCriterion::BlackWins);
    assert_eq!((row(&s, A).black_wins, row(&s, B).black_wins), (3, 2));
}

#[test]
fn black_games_decide() {
    let r = rules(3, GameScoring::default());
    // Three boards: the first-listed team has Black on one board, the second on two.
    // Round 2 lifts A and B clear of C and D with identical wins (one more Black game each).
    let s = table(
        &r,
        6,
        vec![
            m(&r, 1, A, C, "DDD", &[]),
            m(&r, 1, D, B, "DDD", &[]),
            m(&r, 2, A, 4, "WWW", &[]),
            m(&r, 2, B, 5, "WWW", &[]),
        ],
    );
    above(&s, B, A, TeamCriterion::BlackGames);
    assert_eq!((row(&s, A).black_games, row(&s, B).black_games), (2, 3));
}

#[test]
fn complete_tie_shares_the_rank() {
    let r = rules(4, GameScoring::default());
    let s = table(
        &r,
        4,
        vec![m(&r, 1, A, C, "DDDD", &[]), m(&r, 1, B, D, "DDDD", &[])],
    );
    // A and B: first-listed, identical records; C and D likewise.
    assert_eq!(row(&s, A).rank, row(&s, B).rank);
    assert_eq!(row(&s, B).decided_by, None);
}

#[test]
fn forfeits_count_as_wins_and_losses() {
    let r = rules(4, GameScoring::default());
    let whole = TeamMatch {
        round: 1,
        first: A,
        second: B,
        result: evaluate_match(
            &r,
            &MatchRecord::Forfeit {
                forfeited_by: Side::Second,
            },
        )
        .unwrap(),
    };
    let boards = m(&r, 2, C, A, "fWDD", &[]); // board 1: A's player absent
    let double = TeamMatch {
        round: 2,
        first: B,
        second: D,
        result: evaluate_match(&r, &MatchRecord::DoubleForfeit).unwrap(),
    };
    let s = table(&r, 4, vec![whole, boards, double]);
    let a = row(&s, A);
    assert_eq!(
        a.match_points,
        Points::whole(2),
        "won the forfeit, lost to C"
    );
    assert_eq!(a.game_points, Points::whole(8 + 2));
    assert_eq!(a.game_wins, 4, "forfeit wins count as game wins");
    let c = row(&s, C);
    assert_eq!(c.game_wins, 2, "the board forfeit plus a played win");
    assert_eq!(c.game_points, Points::whole(6));
    let b = row(&s, B);
    assert_eq!((b.won, b.lost, b.match_points), (0, 2, Points::ZERO));
    let d = row(&s, D);
    assert_eq!((d.lost, d.match_points), (1, Points::ZERO));
}

#[test]
fn boards_decided_by_armageddon() {
    let r = EventRules {
        boards: 4,
        game_scoring: GameScoring::default(),
        chain: ResultChain::slow_fast_armageddon(tc("20+10"), tc("5+3"), tc("4+0")),
        match_scoring: MatchScoring::default(),
    };
    let g = |c: Colour, res: GameResult| PlayedGame {
        first_colour: c,
        result: res,
        fouls: [0, 0],
    };
    use Colour::*;
    use GameResult::*;
    let rec = MatchRecord::Played(vec![
        // Board 1: A wins the slow game: 2–0.
        BoardRecord::Played(vec![g(Red, FirstWins)]),
        // Board 2: slow drawn, B wins the colour-swapped fast game: 1–2.
        BoardRecord::Played(vec![g(Black, Draw), g(Red, SecondWins)]),
        // Board 3: all drawn; the fast game's Black (B) chose Black for the armageddon; the draw wins for Black: 1–2.
        BoardRecord::Played(vec![g(Red, Draw), g(Black, Draw), g(Red, Draw)]),
        // Board 4: slow drawn, fast drawn, armageddon won by A with Red: 2–1.
        BoardRecord::Played(vec![g(Black, Draw), g(Red, Draw), g(Red, FirstWins)]),
    ]);
    let res = evaluate_match(&r, &rec).unwrap();
    assert_eq!(
        res.game_points,
        [Points::whole(2 + 1 + 1 + 2), Points::whole(2 + 2 + 1)],
        "board points: 2+1+1+2 vs 0+2+2+1"
    );
    assert_eq!(res.winner, Some(Side::First));
    assert_eq!(res.boards[2].decided_at, Some(2));
    let s = table(
        &r,
        2,
        vec![TeamMatch {
            round: 1,
            first: A,
            second: B,
            result: res,
        }],
    );
    above(&s, A, B, TeamCriterion::MatchPoints);
    // 胜局 reads the slow games: A won one (board 1), B none.
    assert_eq!((row(&s, A).game_wins, row(&s, B).game_wins), (1, 0));
    assert_eq!(row(&s, A).black_games, 2);
}

#[test]
fn asymmetric_draw_scoring_13_3() {
    let r = rules(4, GameScoring::THREE_ZERO_ASYMMETRIC);
    // A is first: Red on boards 1 and 3, Black on 2 and 4. All drawn: A 1+2+1+2 = 6, B 2+1+2+1 = 6.
    let s = table(&r, 2, vec![m(&r, 1, A, B, "DDDD", &[])]);
    assert_eq!(row(&s, A).game_points, Points::whole(6));
    // Board 1 won by A, the rest drawn: A 3+2+1+2 = 8, B 0+1+2+1 = 4.
    let s = table(&r, 2, vec![m(&r, 1, A, B, "WDDD", &[])]);
    assert_eq!(
        (row(&s, A).game_points, row(&s, B).game_points),
        (Points::whole(8), Points::whole(4))
    );
    // Black draws are worth more: A draws 3 boards with Red… B (second) loses board 2 (its Red board)
    // and draws the rest: A 1+3+1+2 = 7, B 2+0+2+1 = 5.
    let s = table(&r, 2, vec![m(&r, 1, A, B, "DWDD", &[])]);
    assert_eq!(
        (row(&s, A).game_points, row(&s, B).game_points),
        (Points::whole(7), Points::whole(5))
    );
}

fn four_team_rr(r: &EventRules, upto_round: u32) -> Vec<TeamMatch> {
    // Berger for 4: R1 1-4, 2-3; R2 4-3, 1-2; R3 2-4, 3-1. Team D (index 3) loses everything.
    let all = vec![
        m(r, 1, A, D, "WWWW", &[]),
        m(r, 1, B, C, "WDDD", &[]),
        m(r, 2, D, C, "LLLL", &[]),
        m(r, 2, A, B, "DDDD", &[]),
        m(r, 3, B, D, "WWWW", &[]),
        m(r, 3, C, A, "DDDD", &[]),
    ];
    all.into_iter()
        .filter(|x| x.round <= upto_round || (x.first != D && x.second != D))
        .collect()
}

#[test]
fn withdrawal_before_half_annuls_all_results_20_3() {
    let r = rules(4, GameScoring::default());
    // D withdraws after round 1: it played 1 of 3 matches (< half): all its results are annulled.
    let s = run(
        &r,
        4,
        four_team_rr(&r, 1),
        vec![],
        vec![Withdrawal {
            team: D,
            after_round: 1,
            expelled: false,
        }],
        System::RoundRobin { legs: 1 },
    );
    let d = row(&s, D);
    assert_eq!(d.rank, None);
    assert_eq!(d.withdrawal, Some(WithdrawalEffect::Annulled));
    // A's win over D is gone: A has the draws with B and C only.
    let a = row(&s, A);
    assert_eq!((a.played, a.match_points), (2, Points::whole(2)));
    assert!(s.generated_forfeits.is_empty());
    assert_eq!(s.rows.last().map(|r| r.team), Some(D));
}

#[test]
fn withdrawal_after_half_keeps_results_and_forfeits_the_rest_20_3() {
    let r = rules(4, GameScoring::default());
    // D withdraws after round 2: 2 of 3 played (≥ half): results stand, the round-3 match is a forfeit win for B.
    let s = run(
        &r,
        4,
        four_team_rr(&r, 2),
        vec![],
        vec![Withdrawal {
            team: D,
            after_round: 2,
            expelled: false,
        }],
        System::RoundRobin { legs: 1 },
    );
    assert_eq!(
        s.generated_forfeits,
        vec![GeneratedForfeit {
            winner: B,
            withdrawn: D,
            round: None
        }]
    );
    let a = row(&s, A);
    assert_eq!(a.match_points, Points::whole(2 + 1 + 1));
    let b = row(&s, B);
    assert_eq!(b.match_points, Points::whole(2 + 1 + 2));
    assert_eq!(b.game_points, Points::whole(5 + 4 + 8));
    let d = row(&s, D);
    assert_eq!((d.rank, d.played, d.lost), (Some(4), 3, 3));
    assert_eq!(d.withdrawal, Some(WithdrawalEffect::ResultsStand));
}

#[test]
fn swiss_withdrawal_keeps_results_20_4() {
    let r = rules(4, GameScoring::default());
    let s = run(
        &r,
        4,
        four_team_rr(&r, 1),
        vec![],
        vec![Withdrawal {
            team: D,
            after_round: 1,
            expelled: false,
        }],
        System::Swiss,
    );
    assert_eq!(row(&s, D).withdrawal, Some(WithdrawalEffect::ResultsStand));
    assert_eq!(row(&s, A).match_points, Points::whole(4));
    assert!(s.generated_forfeits.is_empty());
}

#[test]
fn input_errors_are_typed() {
    let r = rules(4, GameScoring::default());
    let bad = |ms: Vec<TeamMatch>, ws: Vec<Withdrawal>| {
        standings(StandingsInput {
            team_count: 4,
            system: System::RoundRobin { legs: 1 },
            rules: &r,
            criteria: chains::ROUND_ROBIN_2011,
            matches: ms,
            byes: vec![],
            penalties: vec![],
            withdrawals: ws,
            schedule: None,
        })
    };
    assert!(matches!(
        bad(vec![m(&r, 1, A, 9, "DDDD", &[])], vec![]),
        Err(StandingsError::NoSuchTeam { team: 9, .. })
    ));
    assert!(matches!(
        bad(vec![m(&r, 1, A, A, "DDDD", &[])], vec![]),
        Err(StandingsError::SelfMatch { .. })
    ));
    assert!(matches!(
        bad(
            vec![m(&r, 1, A, B, "DDDD", &[]), m(&r, 1, A, C, "DDDD", &[])],
            vec![]
        ),
        Err(StandingsError::TwiceInRound { team: A, round: 1 })
    ));
    assert!(matches!(
        bad(
            vec![m(&r, 1, A, B, "DDDD", &[]), m(&r, 2, B, A, "DDDD", &[])],
            vec![]
        ),
        Err(StandingsError::TooManyMeetings { .. })
    ));
    assert!(matches!(
        bad(
            four_team_rr(&r, 3),
            vec![Withdrawal {
                team: D,
                after_round: 1,
                expelled: false,
            }]
        ),
        Err(StandingsError::AfterWithdrawal { team: D, .. })
    ));
}

#[test]
fn swiss_chain_uses_opponent_points_and_earlier_rounds() {
    let r = rules(2, GameScoring::default());
    let run_swiss = |ms: Vec<TeamMatch>, byes: Vec<(u32, usize)>| {
        standings(StandingsInput {
            team_count: 4,
            system: System::Swiss,
            rules: &r,
            criteria: chains::SWISS_2011,
            matches: ms,
            byes,
            penalties: vec![],
            withdrawals: vec![],
            schedule: None,
        })
        .unwrap()
    };
    // R1: A beats B 4–0, C beats D 4–0. R2: A–C drawn 2–2, B beats D 4–0.
    let s = run_swiss(
        vec![
            m(&r, 1, A, B, "WW", &[]),
            m(&r, 1, C, D, "WW", &[]),
            m(&r, 2, A, C, "DD", &[]),
            m(&r, 2, B, D, "WW", &[]),
        ],
        vec![],
    );
    // A and C: 3 场分, 6 局分. Opponents: A met B (2) and C (3) = 5; C met D (0) and A (3) = 3.
    above(&s, A, C, TeamCriterion::OpponentMatchPoints);
    assert_eq!(row(&s, A).opponent_match_points, Points::whole(5));
    // Earlier rounds: identical everything, but one won in round 1 and drew round 2, the other the reverse.
    let s = run_swiss(
        vec![
            m(&r, 1, A, B, "DD", &[]),
            m(&r, 2, A, D, "WW", &[]),
            m(&r, 1, C, D, "WW", &[]),
            m(&r, 2, C, B, "DD", &[]),
        ],
        vec![],
    );
    // A: 1 then 2 (3); C: 2 then 1 (3); opponents: A met B(2) and D(0) = 2, C met D(0), B(2) = 2.
    above(&s, C, A, TeamCriterion::EarlierRounds);
}

mod properties {
    use super::*;
    use chuhe_league::fixtures::{RoundRobinOptions, round_robin};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]
        /// For any results of a complete round robin: ranks are a consistent ordering, every
        /// row with a rank below the row above names the criterion, equal ranks name none, the
        /// table is sorted by 场分, and the points add up.
        #[test]
        fn tables_are_consistent(n in 2usize..=10, double in any::<bool>(), seed in prop::collection::vec(0u8..3, 1..200)) {
            let r = rules(2, GameScoring::default());
            let legs = if double { 2 } else { 1 };
            let schedule = round_robin(n as u32, RoundRobinOptions { legs, ..Default::default() })
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let mut k = 0;
            let mut ms = Vec::new();
            for round in &schedule {
                for p in &round.pairings {
                    let mut res = String::new();
                    for _ in 0..2 {
                        res.push(['W', 'D', 'L'][seed[k % seed.len()] as usize]);
                        k += 1;
                    }
                    ms.push(m(&r, round.number, p.first as usize - 1, p.second as usize - 1, &res, &[]));
                }
            }
            let total_mp: i32 = ms.iter().map(|x| x.result.match_points[0].halves() + x.result.match_points[1].halves()).sum();
            let s = run(&r, n, ms, vec![], vec![], System::RoundRobin { legs });
            prop_assert_eq!(s.rows.len(), n);
            prop_assert_eq!(s.rows.iter().map(|x| x.match_points.halves()).sum::<i32>(), total_mp);
            let mut seen: Vec<usize> = s.rows.iter().map(|x| x.team).collect();
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..n).collect::<Vec<_>>());
            prop_assert_eq!(s.rows[0].rank, Some(1));
            for (i, w) in s.rows.windows(2).enumerate() {
                prop_assert!(w[0].match_points >= w[1].match_points);
                prop_assert_eq!(w[0].played, legs * (n as u32 - 1));
                match w[1].decided_by {
                    Some(_) => prop_assert_eq!(w[1].rank, Some(i as u32 + 2)),
                    None => prop_assert_eq!(w[1].rank, w[0].rank),
                }
                if w[0].match_points != w[1].match_points {
                    prop_assert_eq!(w[1].decided_by, Some(TeamCriterion::MatchPoints));
                }
            }
        }
    }
}

/// Plays `group` results (`(first, second, letters)`, one round each) and, for each team, its
/// results against fresh outside teams, from round 100 on.
fn tied_group(
    r: &EventRules,
    group: &[(usize, usize, &str)],
    outside: &[(usize, &[&str])],
    first_extra: usize,
) -> (Vec<TeamMatch>, usize) {
    let mut ms: Vec<TeamMatch> = group
        .iter()
        .enumerate()
        .map(|(i, &(a, b, res))| m(r, i as u32 + 1, a, b, res, &[]))
        .collect();
    let mut extra = first_extra;
    for &(t, results) in outside {
        for (k, res) in results.iter().enumerate() {
            ms.push(m(r, 100 + k as u32, t, extra, res, &[]));
            extra += 1;
        }
    }
    (ms, extra)
}

/// 14.5 "直至区分": five teams level on 场分, 总局分, 胜场 and 胜局. 直胜 over the five puts A
/// first (6), E last (2) and leaves B, C, D on 4; applied again to B, C, D alone it separates
/// them (B beat C and D, C beat D): two steps, one criterion.
#[test]
fn head_to_head_reapplied_until_separated_five_teams() {
    let r = rules(4, GameScoring::default());
    const E: usize = 4;
    // A win is 5:3 (one board won, three drawn), so every team with the same record has the
    // same 局分, 胜场 and 胜局.
    let (ms, n) = tied_group(
        &r,
        &[
            (A, B, "WDDD"),
            (A, C, "WDDD"),
            (D, A, "WDDD"),
            (A, E, "WDDD"),
            (B, C, "WDDD"),
            (B, D, "WDDD"),
            (E, B, "WDDD"),
            (C, D, "WDDD"),
            (C, E, "WDDD"),
            (D, E, "WDDD"),
        ],
        // Everyone ends 3 won, 3 lost.
        &[
            (A, &["LDDD", "LDDD"]),
            (B, &["WDDD", "LDDD"]),
            (C, &["WDDD", "LDDD"]),
            (D, &["WDDD", "LDDD"]),
            (E, &["WDDD", "WDDD"]),
        ],
        5,
    );
    let s = table(&r, n, ms);
    for t in [A, B, C, D, E] {
        let x = row(&s, t);
        assert_eq!(
            (x.match_points, x.game_points, x.won, x.game_wins),
            (Points::whole(6), Points::whole(24), 3, 3),
            "team {t}"
        );
    }
    let order: Vec<usize> = s.rows.iter().take(5).map(|x| x.team).collect();
    assert_eq!(order, vec![A, B, C, D, E], "{:#?}", s.rows);
    above(&s, A, B, TeamCriterion::HeadToHead);
    above(&s, B, C, TeamCriterion::HeadToHead);
    above(&s, C, D, TeamCriterion::HeadToHead);
    above(&s, D, E, TeamCriterion::HeadToHead);
    let ranks: Vec<Option<u32>> = s.rows.iter().take(5).map(|x| x.rank).collect();
    assert_eq!(ranks, vec![Some(1), Some(2), Some(3), Some(4), Some(5)]);
    // The value shown is the mini-league of the whole tied group.
    assert_eq!(row(&s, B).head_to_head, Some(Points::whole(4)));
}

/// Four teams level; 直胜 over the four: C 5, B 3, A 2, D 2. A and D were left sharing 3rd;
/// D beat A, so 直胜 applied to A and D alone puts D 3rd and A 4th.
#[test]
fn head_to_head_reapplied_four_teams_d_beat_a() {
    let r = rules(4, GameScoring::default());
    let (ms, n) = tied_group(
        &r,
        &[
            (D, A, "WDDD"),
            (A, B, "WDDD"),
            (C, A, "WDDD"),
            (B, C, "DDDD"),
            (B, D, "WDDD"),
            (C, D, "WDDD"),
        ],
        // Everyone ends 3 won, 1 drawn, 2 lost.
        &[
            (A, &["WDDD", "WDDD", "DDDD"]),
            (B, &["WDDD", "WDDD", "LDDD"]),
            (C, &["WDDD", "LDDD", "LDDD"]),
            (D, &["WDDD", "WDDD", "DDDD"]),
        ],
        4,
    );
    let s = table(&r, n, ms);
    for t in [A, B, C, D] {
        let x = row(&s, t);
        assert_eq!(
            (x.match_points, x.game_points, x.won, x.game_wins),
            (Points::whole(7), Points::whole(25), 3, 3),
            "team {t}"
        );
    }
    let order: Vec<usize> = s.rows.iter().take(4).map(|x| x.team).collect();
    assert_eq!(order, vec![C, B, D, A], "{:#?}", s.rows);
    above(&s, D, A, TeamCriterion::HeadToHead);
    assert_eq!(row(&s, D).rank, Some(3));
    assert_eq!(row(&s, A).rank, Some(4));
}
