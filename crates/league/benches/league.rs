//! Benchmarks: Berger tables, a 64-team Swiss season, standings of a 16-team double round robin.
//! Each benchmark checks what it computed.

use chuhe_league::Points;
use chuhe_league::chain::{BoardRecord, GameResult, GameScoring, PlayedGame, ResultChain};
use chuhe_league::colour::{Side, side_colour};
use chuhe_league::entities::TimeControlText;
use chuhe_league::fixtures::{RoundRobinOptions, round_robin};
use chuhe_league::matches::{EventRules, MatchRecord, MatchScoring, evaluate_match};
use chuhe_league::standings::{StandingsInput, System, TeamMatch, chains, standings};
use chuhe_league::swiss::{SwissOptions, SwissRound, SwissTeam, pair_next_round};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn berger_1000(c: &mut Criterion) {
    c.bench_function("round_robin 1000 teams double", |b| {
        b.iter(|| {
            let r = round_robin(
                black_box(1000),
                RoundRobinOptions {
                    legs: 2,
                    ..Default::default()
                },
            );
            let n = r.map(|r| r.len()).unwrap_or(0);
            assert_eq!(n, 1998);
        })
    });
}

fn swiss_64(c: &mut Criterion) {
    let teams: Vec<SwissTeam> = (0..64)
        .map(|i| SwissTeam {
            seed: i + 1,
            unit: format!("u{}", i % 8),
            withdrawn: false,
        })
        .collect();
    c.bench_function("swiss 64 teams 9 rounds", |b| {
        b.iter(|| {
            let mut played: Vec<SwissRound> = Vec::new();
            for r in 0..9u32 {
                let p = match pair_next_round(&teams, &played, SwissOptions::default()) {
                    Ok(p) => p,
                    Err(e) => panic!("round {}: {e}", r + 1),
                };
                assert_eq!(p.tables.len(), 32);
                let pairings = p
                    .tables
                    .iter()
                    .enumerate()
                    .map(|(k, &(a, b))| {
                        let pts = match (k as u32 + r) % 3 {
                            0 => [Points::whole(2), Points::ZERO],
                            1 => [Points::whole(1), Points::whole(1)],
                            _ => [Points::ZERO, Points::whole(2)],
                        };
                        (a, b, pts)
                    })
                    .collect();
                played.push(SwissRound {
                    pairings,
                    bye: None,
                });
            }
            black_box(played)
        })
    });
}

fn standings_16_double(c: &mut Criterion) {
    let rules = EventRules {
        boards: 4,
        game_scoring: GameScoring::default(),
        chain: ResultChain::single(TimeControlText::new("60+30").unwrap_or_else(|e| panic!("{e}"))),
        match_scoring: MatchScoring::default(),
    };
    let rounds = round_robin(
        16,
        RoundRobinOptions {
            legs: 2,
            ..Default::default()
        },
    )
    .unwrap_or_default();
    let mut matches = Vec::new();
    for r in &rounds {
        for (k, p) in r.pairings.iter().enumerate() {
            let boards = (1..=4u32)
                .map(|b| {
                    let result = match (b + k as u32 + r.number) % 3 {
                        0 => GameResult::FirstWins,
                        1 => GameResult::Draw,
                        _ => GameResult::SecondWins,
                    };
                    BoardRecord::Played(vec![PlayedGame {
                        first_colour: side_colour(Side::First, b),
                        result,
                        fouls: [0, 0],
                    }])
                })
                .collect();
            let result = evaluate_match(&rules, &MatchRecord::Played(boards))
                .unwrap_or_else(|e| panic!("{e}"));
            matches.push(TeamMatch {
                round: r.number,
                first: p.first as usize - 1,
                second: p.second as usize - 1,
                result,
            });
        }
    }
    c.bench_function("standings 16 teams double round robin", |b| {
        b.iter(|| {
            let s = standings(StandingsInput {
                team_count: 16,
                system: System::RoundRobin { legs: 2 },
                rules: &rules,
                criteria: chains::ROUND_ROBIN_2011,
                matches: matches.clone(),
                byes: vec![],
                penalties: vec![],
                withdrawals: vec![],
                schedule: None,
            })
            .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(s.rows.len(), 16);
            black_box(s)
        })
    });
}

criterion_group!(benches, berger_1000, swiss_64, standings_16_double);
criterion_main!(benches);
