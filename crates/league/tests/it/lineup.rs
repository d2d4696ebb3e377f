//! Lineup systems 12.1–12.5, eligibility and sealed submission.

use chuhe_league::Side;
use chuhe_league::entities::{Player, Roster};
use chuhe_league::lineup::*;

fn roster(names: &[&str]) -> Roster {
    match Roster::new(names.iter().map(|n| Player::new(*n)).collect()) {
        Ok(r) => r,
        Err(e) => panic!("test roster: {e}"),
    }
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn rules(system: LineupSystem, boards: u32) -> LineupRules {
    LineupRules {
        system,
        boards,
        eligibility: vec![],
        deadline: None,
    }
}

fn codes(e: &LineupError) -> Vec<&'static str> {
    e.reasons.iter().map(LineupRefusal::code).collect()
}

#[test]
fn fixed_order_12_1() {
    let r = roster(&["A", "B", "C", "D"]);
    let rl = rules(LineupSystem::FixedOrder, 4);
    assert!(rl.validate(&r, &names(&["A", "B", "C", "D"]), 0).is_ok());
    let err = rl
        .validate(&r, &names(&["B", "A", "C", "D"]), 0)
        .err()
        .map(|e| e.reasons);
    assert_eq!(
        err,
        Some(vec![
            LineupRefusal::NotRegisteredBoard {
                board: 1,
                expected: "A".into(),
                got: "B".into()
            },
            LineupRefusal::NotRegisteredBoard {
                board: 2,
                expected: "B".into(),
                got: "A".into()
            },
        ])
    );
}

#[test]
fn the_fifteen_orders_of_12_2() {
    let orders = substitute_orders(6, 4);
    assert_eq!(orders.len(), 15);
    assert_eq!(orders.first(), Some(&vec![0, 1, 2, 3]), "1-2-3-4");
    assert_eq!(orders.get(1), Some(&vec![0, 1, 2, 4]), "1-2-3-5");
    assert_eq!(orders.last(), Some(&vec![2, 3, 4, 5]), "3-4-5-6");
    // Every one of the 15 is accepted; every other arrangement of 4 of the 6 (360 in all) is
    // refused as reversing the registered order.
    let r = roster(&["p1", "p2", "p3", "p4", "p5", "p6"]);
    let rl = rules(LineupSystem::OrderedSubstitutes, 4);
    let all = ["p1", "p2", "p3", "p4", "p5", "p6"];
    let mut accepted = 0;
    for a in 0..6 {
        for b in 0..6 {
            for c in 0..6 {
                for d in 0..6 {
                    let idx = [a, b, c, d];
                    let mut u = idx.to_vec();
                    u.sort_unstable();
                    u.dedup();
                    if u.len() < 4 {
                        continue;
                    }
                    let lineup: Vec<String> = idx.iter().map(|&i| all[i].to_string()).collect();
                    let ok = rl.validate(&r, &lineup, 0).is_ok();
                    assert_eq!(ok, orders.contains(&idx.to_vec()), "{lineup:?}");
                    accepted += usize::from(ok);
                }
            }
        }
    }
    assert_eq!(accepted, 15);
    let e = rl
        .validate(&r, &names(&["p1", "p3", "p2", "p4"]), 0)
        .err()
        .map(|e| e.reasons);
    assert_eq!(
        e,
        Some(vec![LineupRefusal::OrderReversed {
            board: 3,
            name: "p2".into(),
            above: "p3".into()
        }])
    );
}

#[test]
fn free_order_12_3_and_all_reasons() {
    let r = roster(&["A", "B", "C", "D", "E"]);
    let rl = rules(LineupSystem::FreeOrder, 4);
    assert!(rl.validate(&r, &names(&["E", "C", "A", "B"]), 0).is_ok());
    let e = rl.validate(&r, &names(&["E", "E", "Z"]), 0).err();
    let e = match e {
        Some(e) => e,
        None => panic!("must be refused"),
    };
    assert_eq!(codes(&e), vec!["wrong_count", "duplicate", "not_on_roster"]);
    assert!(e.to_string().contains("Z (board 3) is not on the roster"));
}

#[test]
fn all_play_all_12_4() {
    let r1 = roster(&["A1", "A2", "A3"]);
    let r2 = roster(&["B1", "B2", "B3"]);
    let rl = rules(LineupSystem::AllPlayAll, 3);
    let (Ok(a), Ok(b)) = (
        rl.validate(&r1, &names(&["A1", "A2", "A3"]), 0),
        rl.validate(&r2, &names(&["B3", "B1", "B2"]), 0),
    ) else {
        panic!("valid lineups")
    };
    let games = all_play_all(&a, &b).unwrap_or_default();
    assert_eq!(games.len(), 9);
    let mut pairs: Vec<(String, String)> = games
        .iter()
        .map(|g| (g.first_player.clone(), g.second_player.clone()))
        .collect();
    pairs.sort();
    pairs.dedup();
    assert_eq!(pairs.len(), 9, "every pair exactly once");
    for p in ["A1", "A2", "A3"] {
        let reds = games
            .iter()
            .filter(|g| g.first_player == p && g.first_colour == chuhe_league::Colour::Red)
            .count();
        assert!((1..=2).contains(&reds), "{p} colours balanced");
    }
}

#[test]
fn total_score_12_5() {
    let r = roster(&["A", "B", "C"]);
    let rl = rules(LineupSystem::TotalScore, 2);
    assert!(rl.validate(&r, &names(&["C", "A"]), 0).is_ok());
    assert!(rl.validate(&r, &names(&["C"]), 0).is_err());
    // Team 0: ranks 1+8 = 9; team 1: 4+5 = 9; team 2: 2+3 = 5; team 3: 4+5, more fouls.
    let rows = rank_total_score(
        &[vec![1, 8], vec![4, 5], vec![2, 3], vec![5, 4]],
        &[0, 0, 0, 1],
    );
    let order: Vec<usize> = rows.iter().map(|r| r.team).collect();
    assert_eq!(order, vec![2, 0, 1, 3]);
    assert_eq!(rows[0].decided_by, None);
    assert_eq!(rows[1].decided_by, Some(TotalScoreCriterion::RankSum));
    assert_eq!(rows[2].decided_by, Some(TotalScoreCriterion::BestRank(1)));
    assert_eq!(rows[3].decided_by, Some(TotalScoreCriterion::Fouls));
}

#[test]
fn eligibility_and_deadline() {
    let r = match Roster::new(vec![
        Player::new("A"),
        Player::new("B").tagged("W"),
        Player::new("C"),
        Player::new("D"),
        Player::new("E"),
    ]) {
        Ok(r) => r,
        Err(e) => panic!("{e}"),
    };
    let rl = LineupRules {
        system: LineupSystem::FreeOrder,
        boards: 4,
        eligibility: vec![EligibilityRule::AtLeast {
            tag: "W".into(),
            count: 1,
            from: 1,
            to: 4,
        }],
        deadline: Some(1000),
    };
    assert!(rl.validate(&r, &names(&["A", "B", "C", "D"]), 999).is_ok());
    let e = rl.validate(&r, &names(&["A", "C", "D", "E"]), 1000).err();
    let e = match e {
        Some(e) => e,
        None => panic!("refused"),
    };
    assert_eq!(codes(&e), vec!["deadline_passed", "ineligible"]);
    assert!(
        e.to_string()
            .contains("at least 1 player(s) tagged W on boards 1–4")
    );
}

#[test]
fn sealed_until_both_are_in() {
    let r1 = roster(&["A", "B"]);
    let r2 = roster(&["X", "Y", "Z"]);
    let rl = LineupRules {
        deadline: Some(100),
        ..rules(LineupSystem::OrderedSubstitutes, 2)
    };
    let mut s = SealedLineups::new(rl);
    assert_eq!(
        s.submit(Side::First, &r1, &names(&["A", "B"]), 10),
        Ok(SubmitOutcome::Sealed)
    );
    assert_eq!(s.opponent_lineup(Side::Second, 10), None);
    assert_eq!(s.opponent_lineup(Side::First, 10), None);
    assert!(
        s.submit(Side::Second, &r2, &names(&["Z", "X"]), 20)
            .is_err()
    );
    assert_eq!(
        s.finalize([&r1, &r2], MissingLineupPolicy::Forfeit, 20),
        None
    );
    // The deadline passes with only one lineup in: the other side gets its registered order.
    let fin = s.finalize([&r1, &r2], MissingLineupPolicy::RegisteredOrder, 100);
    match fin {
        Some([FinalLineup::Submitted(a), FinalLineup::RegisteredOrder(b)]) => {
            assert_eq!(a.players(), names(&["A", "B"]).as_slice());
            assert_eq!(b.players(), names(&["X", "Y"]).as_slice());
        }
        other => panic!("{other:?}"),
    }
    let fin = s.finalize([&r1, &r2], MissingLineupPolicy::Forfeit, 100);
    assert!(matches!(fin, Some([_, FinalLineup::Forfeit])));
    // Submitting after the deadline is refused with the reason.
    let e = s.submit(Side::Second, &r2, &names(&["X", "Y"]), 100).err();
    assert_eq!(e.map(|e| codes(&e)), Some(vec!["deadline_passed"]));
}

#[test]
fn both_in_reveals() {
    let r1 = roster(&["A", "B"]);
    let r2 = roster(&["X", "Y"]);
    let mut s = SealedLineups::new(rules(LineupSystem::FixedOrder, 2));
    assert!(s.submit(Side::Second, &r2, &names(&["X", "Y"]), 1).is_ok());
    assert_eq!(
        s.submit(Side::First, &r1, &names(&["A", "B"]), 2),
        Ok(SubmitOutcome::BothRevealed)
    );
    assert_eq!(
        s.opponent_lineup(Side::First, 2)
            .map(|l| l.players().to_vec()),
        Some(names(&["X", "Y"]))
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn binom(n: usize, k: usize) -> usize {
        (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
    }

    proptest! {
        /// 12.2: a lineup is accepted exactly when its roster positions strictly increase, and
        /// `substitute_orders` lists exactly those, C(n, k) of them.
        #[test]
        fn substitutes_accept_exactly_the_order_preserving_choices(
            n in 1usize..=9,
            picks in prop::collection::vec(0usize..9, 1..=6),
        ) {
            let k = picks.len();
            let names_all: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
            let r = match Roster::new(names_all.iter().map(|s| Player::new(s.clone())).collect()) {
                Ok(r) => r,
                Err(e) => return Err(TestCaseError::fail(e.to_string())),
            };
            let lineup: Vec<String> = picks.iter().map(|&i| format!("p{i}")).collect();
            let rl = rules(LineupSystem::OrderedSubstitutes, k as u32);
            let valid = picks.iter().all(|&i| i < n) && picks.windows(2).all(|w| w[0] < w[1]);
            prop_assert_eq!(rl.validate(&r, &lineup, 0).is_ok(), valid);
            let orders = substitute_orders(n, k);
            prop_assert_eq!(orders.len(), if k <= n { binom(n, k) } else { 0 });
            prop_assert_eq!(orders.contains(&picks), valid);
        }
    }
}
