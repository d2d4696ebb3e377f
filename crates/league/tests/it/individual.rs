//! Individual standings (14.1, 14.3.1, 14.3.2) and board tables.
#![allow(clippy::unwrap_used)]

use chuhe_league::Points;
use chuhe_league::Side;
use chuhe_league::chain::GameScoring;
use chuhe_league::individual::IndividualResult::*;
use chuhe_league::individual::*;
use std::collections::BTreeMap;

fn g(round: u32, red: usize, black: usize, result: IndividualResult) -> IndividualGame {
    IndividualGame {
        round,
        red,
        black,
        result,
        fouls: [0, 0],
    }
}

fn run(
    n: usize,
    criteria: &[IndividualCriterion],
    games: Vec<IndividualGame>,
) -> Vec<IndividualRow> {
    individual_standings(IndividualInput {
        player_count: n,
        scoring: GameScoring::default(),
        criteria,
        games,
        byes: vec![],
        penalties: BTreeMap::new(),
    })
    .unwrap()
}

fn order(rows: &[IndividualRow]) -> Vec<usize> {
    rows.iter().map(|r| r.player).collect()
}

#[test]
fn sonneborn_berger_decides_14_1() {
    let rows = run(
        4,
        chains::ROUND_ROBIN_2011,
        vec![
            g(1, 0, 2, RedWins),
            g(1, 1, 3, RedWins),
            g(2, 2, 3, RedWins),
            g(2, 0, 1, Draw),
            g(3, 3, 0, RedWins),
            g(3, 2, 1, RedWins),
        ],
    );
    assert_eq!(order(&rows), vec![2, 0, 1, 3]);
    assert_eq!(
        rows[2].decided_by,
        Some(IndividualCriterion::SonnebornBerger)
    );
    // P0: beat P2 (4) + half of P1 (3) = 5½; P1: beat P3 (2) + half of P0 (3) = 3½.
    assert_eq!(
        quarters_to_decimal(rows[1].sonneborn_berger_quarters),
        "5.5"
    );
    assert_eq!(
        quarters_to_decimal(rows[2].sonneborn_berger_quarters),
        "3.5"
    );
}

#[test]
fn opponent_score_decides_14_3_1() {
    let rows = run(
        4,
        chains::SWISS_2011_OPPONENTS,
        vec![
            g(1, 0, 1, RedWins),
            g(1, 2, 3, RedWins),
            g(2, 0, 2, Draw),
            g(2, 1, 3, RedWins),
        ],
    );
    assert_eq!(order(&rows), vec![0, 2, 1, 3]);
    assert_eq!(rows[1].decided_by, Some(IndividualCriterion::OpponentScore));
    assert_eq!(rows[0].opponent_score, Points::whole(5));
}

#[test]
fn progressive_decides_14_3_2() {
    let rows = run(
        4,
        chains::SWISS_2011_PROGRESSIVE,
        vec![
            g(1, 0, 1, RedWins),
            g(1, 2, 3, Draw),
            g(2, 2, 1, RedWins),
            g(2, 3, 0, Draw),
        ],
    );
    assert_eq!(order(&rows)[..2], [0, 2]);
    assert_eq!(rows[1].decided_by, Some(IndividualCriterion::Progressive));
    assert_eq!(
        (rows[0].progressive, rows[1].progressive),
        (Points::whole(5), Points::whole(4))
    );
}

#[test]
fn black_in_the_mutual_game_decides_last() {
    let rows = run(
        4,
        chains::ROUND_ROBIN_2011,
        vec![g(1, 0, 1, Draw), g(2, 2, 0, Draw), g(2, 1, 3, Draw)],
    );
    assert_eq!(order(&rows)[..2], [1, 0]);
    assert_eq!(
        rows[1].decided_by,
        Some(IndividualCriterion::BlackInMutualGame)
    );
}

#[test]
fn half_point_scoring_and_forfeits() {
    let rows = individual_standings(IndividualInput {
        player_count: 3,
        scoring: GameScoring::ONE_HALF_ZERO,
        criteria: chains::SWISS_1999,
        games: vec![g(1, 0, 1, Draw), g(2, 2, 0, RedForfeits)],
        byes: vec![(1, 2)],
        penalties: BTreeMap::new(),
    })
    .unwrap();
    let p0 = rows.iter().find(|r| r.player == 0).unwrap();
    assert_eq!(p0.points, Points::from_halves(3), "½ + a forfeit win");
    assert_eq!(p0.points.to_string(), "1½");
    assert_eq!(
        p0.black_games, 0,
        "a forfeit is not a game played with Black"
    );
    let p2 = rows.iter().find(|r| r.player == 2).unwrap();
    assert_eq!(p2.points, Points::whole(1), "the bye counts as a win");
}

#[test]
fn a_game_both_lost_is_a_loss_for_both() {
    // 21.3 双方弃: both past the lateness limit, both `-`. Player 0 also drew player 2.
    let rows = run(
        3,
        chains::ROUND_ROBIN_2011,
        vec![g(1, 0, 1, BothForfeit), g(2, 0, 2, Draw)],
    );
    let row = |p: usize| rows.iter().find(|r| r.player == p).unwrap();
    for p in [0, 1] {
        assert_eq!(row(p).wins, 0, "player {p} won nothing");
        assert_eq!(row(p).black_games, 0, "not a game played with Black");
    }
    assert_eq!((row(0).games, row(0).points), (2, Points::whole(1)));
    assert_eq!((row(1).games, row(1).points), (1, Points::ZERO));
    // Nobody was beaten by the other: no 小分 from the game both lost.
    assert_eq!(row(1).sonneborn_berger_quarters, 0);
    assert_eq!(
        row(0).sonneborn_berger_quarters,
        2,
        "½ × player 2's 1 point"
    );
}

#[test]
fn errors() {
    let e = individual_standings(IndividualInput {
        player_count: 2,
        scoring: GameScoring::default(),
        criteria: chains::ROUND_ROBIN_2011,
        games: vec![g(1, 0, 5, Draw)],
        byes: vec![],
        penalties: BTreeMap::new(),
    });
    assert_eq!(e, Err(IndividualError::NoSuchPlayer { game: 0, player: 5 }));
}

#[test]
fn board_prizes() {
    let e = |round, board, a: &str, b: &str, pts: [i32; 2], winner| BoardEntry {
        round,
        board,
        players: [(a.into(), "T1".into()), (b.into(), "T2".into())],
        points: [Points::whole(pts[0]), Points::whole(pts[1])],
        winner,
        forfeit: [false, false],
    };
    let entries = vec![
        e(1, 1, "Wang", "Li", [2, 0], Some(Side::First)),
        e(2, 1, "Wang", "Zhao", [1, 1], None),
        e(1, 2, "Chen", "Sun", [1, 1], None),
        e(2, 1, "Li", "Qian", [2, 0], Some(Side::First)),
    ];
    let t = board_tables(&entries, 2);
    let b1 = &t[&1];
    assert_eq!(b1[0].player, "Wang");
    assert_eq!(
        (b1[0].wins, b1[0].draws, b1[0].points),
        (1, 1, Points::whole(3))
    );
    assert_eq!(b1[1].player, "Li");
    assert_eq!(b1[1].rank, 2);
    // Zhao (one game, 1 point) is below the minimum and listed after eligible players.
    assert!(!b1.iter().find(|r| r.player == "Zhao").unwrap().eligible);
    assert_eq!(
        t[&2][0].rank, t[&2][1].rank,
        "equal board-2 records share the rank"
    );
}

#[test]
fn multi_game_round_robin_14_2_ranks_on_match_points() {
    // Two games per pairing. R1 A–B: A wins one, one drawn (A 3, B 1 → A wins the mini-match).
    // R2 A–C: both drawn (2–2). R3 B–C: B wins both (4–0).
    // Game points: A 5, B 5, C 2 — but 场分: A 3, B 2, C 1.
    let rows = run(
        3,
        chains::ROUND_ROBIN_MULTI_GAME_2011,
        vec![
            g(1, 0, 1, RedWins),
            g(1, 1, 0, Draw),
            g(2, 0, 2, Draw),
            g(2, 2, 0, Draw),
            g(3, 1, 2, RedWins),
            g(3, 2, 1, BlackWins),
        ],
    );
    assert_eq!(order(&rows), vec![0, 1, 2]);
    assert_eq!(rows[0].points, rows[1].points);
    assert_eq!(rows[1].decided_by, Some(IndividualCriterion::MatchPoints));
    assert_eq!(
        rows.iter().map(|r| r.match_points).collect::<Vec<_>>(),
        vec![Points::whole(3), Points::whole(2), Points::whole(1)]
    );
    assert_eq!(rows[1].black_wins, 1, "B won the round-3 game with Black");
}
