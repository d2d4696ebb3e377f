//! The Berger tables chuhe generates are identical to FIDE's published ones (C.05 Annex 1),
//! for every team count 3–16 (odd counts: the highest number is the bye), and round robins keep
//! their invariants for any size.

use chuhe_league::fixtures::{RoundRobinOptions, berger, round_robin};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

type Table = Vec<Vec<(u32, u32)>>;

fn published() -> Result<BTreeMap<u32, Table>, String> {
    let text = include_str!("../data/berger_fide.txt");
    let mut tables: BTreeMap<u32, Table> = BTreeMap::new();
    let mut current: Option<u32> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(n) = line.strip_prefix("== ") {
            let n: u32 = n.parse().map_err(|e| format!("line {}: {e}", i + 1))?;
            tables.insert(n, Vec::new());
            current = Some(n);
            continue;
        }
        let n = current.ok_or(format!("line {}: round before table", i + 1))?;
        let (_, games) = line
            .split_once(':')
            .ok_or(format!("line {}: no ':'", i + 1))?;
        let mut round = Vec::new();
        for g in games.split(',') {
            let (a, b) = g
                .trim()
                .split_once('-')
                .ok_or(format!("line {}: bad game {g:?}", i + 1))?;
            let a: u32 = a.parse().map_err(|e| format!("line {}: {e}", i + 1))?;
            let b: u32 = b.parse().map_err(|e| format!("line {}: {e}", i + 1))?;
            round.push((a, b));
        }
        tables.get_mut(&n).ok_or("no table")?.push(round);
    }
    Ok(tables)
}

#[test]
fn identical_to_fide_tables_for_4_to_16() -> Result<(), String> {
    let tables = published()?;
    assert_eq!(tables.len(), 7, "tables for 4, 6, …, 16");
    for (&n, table) in &tables {
        // Even count: the table as printed.
        let ours = berger(n).map_err(|e| e.to_string())?;
        let ours: Table = ours
            .iter()
            .map(|r| r.pairings.iter().map(|p| (p.first, p.second)).collect())
            .collect();
        assert_eq!(&ours, table, "{n} teams");
        // Odd count n - 1: the same table with the highest number as the bye.
        let odd = berger(n - 1).map_err(|e| e.to_string())?;
        assert_eq!(odd.len(), table.len(), "{} teams: rounds", n - 1);
        for (r, round) in odd.iter().enumerate() {
            let expected: Vec<(u32, u32)> = table[r]
                .iter()
                .copied()
                .filter(|&(a, b)| a != n && b != n)
                .collect();
            let got: Vec<(u32, u32)> = round.pairings.iter().map(|p| (p.first, p.second)).collect();
            assert_eq!(got, expected, "{} teams round {}", n - 1, r + 1);
            let bye = table[r]
                .iter()
                .find_map(|&(a, b)| (a == n).then_some(b).or((b == n).then_some(a)));
            assert_eq!(round.bye, bye, "{} teams round {} bye", n - 1, r + 1);
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn every_pair_meets_once_per_leg_and_colours_follow_the_table(n in 2u32..=40, double in any::<bool>()) {
        let legs = if double { 2 } else { 1 };
        let rounds = round_robin(n, RoundRobinOptions { legs, ..Default::default() }).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let per_leg = if n % 2 == 0 { n - 1 } else { n };
        prop_assert_eq!(rounds.len() as u32, per_leg * legs);
        for leg in 0..legs {
            let slice = &rounds[(leg * per_leg) as usize..((leg + 1) * per_leg) as usize];
            let mut met = BTreeSet::new();
            for r in slice {
                let mut seen = BTreeSet::new();
                for p in &r.pairings {
                    prop_assert!(p.first != p.second);
                    prop_assert!(p.first >= 1 && p.first <= n && p.second >= 1 && p.second <= n);
                    prop_assert!(seen.insert(p.first) && seen.insert(p.second), "a team twice in one round");
                    prop_assert!(met.insert((p.first.min(p.second), p.first.max(p.second))), "pair met twice in a leg");
                }
                if let Some(b) = r.bye {
                    prop_assert!(seen.insert(b));
                }
                prop_assert_eq!(seen.len() as u32, n, "everybody plays or has the bye");
            }
            prop_assert_eq!(met.len() as u32, n * (n - 1) / 2);
        }
        // Colours: the second leg is the first with colours swapped (13.2).
        if legs == 2 {
            for (a, b) in rounds[..per_leg as usize].iter().zip(&rounds[per_leg as usize..]) {
                for (p, q) in a.pairings.iter().zip(&b.pairings) {
                    prop_assert_eq!((p.first, p.second), (q.second, q.first));
                }
            }
        }
        // Colours alternate as the Berger table says: from round 2 on, every team alternates
        // first/second between consecutive rounds except the fixed number (even n: n; odd n: the
        // bye slot) which the table alternates itself, and the player meeting it.
        let m = n + n % 2;
        let first_leg = &rounds[..per_leg as usize];
        for t in 1..=n {
            let colours: Vec<Option<bool>> = first_leg.iter().map(|r| {
                r.pairings.iter().find_map(|p| {
                    if p.first == t { Some(true) } else if p.second == t { Some(false) } else { None }
                })
            }).collect();
            let played: Vec<bool> = colours.iter().flatten().copied().collect();
            let firsts = played.iter().filter(|&&c| c).count() as i64;
            let seconds = played.len() as i64 - firsts;
            prop_assert!((firsts - seconds).abs() <= 1, "team {} colour balance {} vs {}", t, firsts, seconds);
            // Within a leg nobody has the same colour in three consecutive rounds.
            for w in colours.windows(3) {
                if let [Some(a), Some(b), Some(c)] = w {
                    prop_assert!(!(a == b && b == c), "team {} has three in a row", t);
                }
            }
            if t == m {
                // the fixed number alternates strictly: second in odd rounds, first in even rounds
                for (r, c) in colours.iter().enumerate() {
                    prop_assert_eq!(*c, Some(r % 2 == 1));
                }
            }
        }
    }
}

proptest! {
    /// FIDE's recommendation works: with the last two rounds of the first leg exchanged, nobody
    /// has three consecutive games with the same colour across a double round robin.
    #[test]
    fn fide_swap_avoids_three_in_a_row(half in 2u32..=20) {
        let n = half * 2;
        let rounds = round_robin(n, RoundRobinOptions { legs: 2, swap_last_two_rounds_of_first_leg: true })
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        for t in 1..=n {
            let colours: Vec<bool> = rounds.iter().filter_map(|r| {
                r.pairings.iter().find_map(|p| if p.first == t { Some(true) } else if p.second == t { Some(false) } else { None })
            }).collect();
            prop_assert_eq!(colours.len() as u32, 2 * (n - 1));
            for w in colours.windows(3) {
                prop_assert!(!(w[0] == w[1] && w[1] == w[2]), "team {} of {}: {:?}", t, n, colours);
            }
        }
    }
}
