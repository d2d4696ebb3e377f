//! The cost of the automatic rulings per move: `Game::play` against the bare core
//! (`Position::play_mut` + `outcome` + `is_check`, what any server must do anyway), on
//! real-looking games, and the cost of the move that reaches a ruling point.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chuhe_rules::rulings::casefile::parse_cases;
use chuhe_rules::rulings::{Game, RulesConfig};
use chuhe_rules::{Move, Position};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

/// Two well-known openings (中炮对屏风马, 仙人指路对卒底炮), continued by seeded random
/// legal moves that prefer captures and avoid giving up the game early: 24 games.
fn games() -> Vec<(Position, Vec<Move>)> {
    let openings = [
        "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 c3c4 g6g5 h0h6 h7i7 h6g6 i7i8",
        "c3c4 b7c7 b2e2 h9g7 b0c2 i9h9 h0g2 h7i7 i0h0 b9a7",
    ];
    let mut out = Vec::new();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for g in 0..24 {
        let mut pos = Position::new();
        let mut moves = Vec::new();
        for t in openings[g % 2].split_whitespace() {
            let m = pos.parse_iccs(t).expect("opening move");
            pos.play_mut(m).unwrap();
            moves.push(m);
        }
        while moves.len() < 160 && pos.outcome().is_none() {
            let legal: Vec<Move> = pos.legal_moves().iter().copied().collect();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let captures: Vec<Move> = legal
                .iter()
                .copied()
                .filter(|m| pos.piece_at(m.to()).is_some())
                .collect();
            let pool = if !captures.is_empty() && seed % 4 == 0 {
                &captures
            } else {
                &legal
            };
            let m = pool[(seed >> 8) as usize % pool.len()];
            pos.play_mut(m).unwrap();
            moves.push(m);
        }
        out.push((Position::new(), moves));
    }
    out
}

fn per_move(c: &mut Criterion) {
    let games = games();
    let total: u64 = games.iter().map(|(_, m)| m.len() as u64).sum();
    let mut group = c.benchmark_group("per_move");
    group.throughput(Throughput::Elements(total));
    group.bench_function("core_play_outcome_check", |b| {
        b.iter(|| {
            for (start, moves) in &games {
                let mut pos = start.clone();
                for &m in moves {
                    pos.play_mut(m).unwrap();
                    black_box(pos.outcome());
                    black_box(pos.is_check());
                }
            }
        });
    });
    group.bench_function("game_play", |b| {
        b.iter(|| {
            for (start, moves) in &games {
                let mut g = Game::new(start.clone(), RulesConfig::default());
                for &m in moves {
                    if g.end().is_some() {
                        break;
                    }
                    black_box(g.play(m).unwrap());
                }
            }
        });
    });
    // What the game server's `Board::play_move` does per move: the move texts before, then
    // `Game::play`, then the FEN and ICCS of the result.
    group.bench_function("server_play_move", |b| {
        b.iter(|| {
            for (start, moves) in &games {
                let mut g = Game::new(start.clone(), RulesConfig::default());
                for &m in moves {
                    if g.end().is_some() {
                        break;
                    }
                    let pos = g.position();
                    let chinese = pos.to_chinese(m).unwrap_or_default();
                    let wxf = pos.to_wxf(m).unwrap_or_default();
                    let capture = pos.piece_at(m.to()).is_some();
                    let played = g.play(m).unwrap();
                    let pos = g.position();
                    black_box((
                        m.to_iccs(),
                        chinese,
                        wxf,
                        pos.to_fen(),
                        pos.is_check(),
                        capture,
                        played,
                    ));
                }
            }
        });
    });
    group.finish();
}

fn ruling_points(c: &mut Criterion) {
    let cases = parse_cases(include_str!("../tests/data/repetition_cases.txt")).unwrap();
    let mut group = c.benchmark_group("ruling_point");
    for id in [
        "chase-rook-horse-warning",
        "chase-pinned-protector",
        "perpetual-mate-threat",
        "check-and-mate-threat",
        "mutual-chase",
        "check-rook-rank",
    ] {
        let case = cases.iter().find(|c| c.id == id).unwrap();
        let pos = Position::from_fen(&case.fen).unwrap();
        let moves: Vec<Move> = case
            .moves
            .iter()
            .map(|t| Move::from_iccs(t).unwrap())
            .collect();
        let ply = case.warn.as_ref().map(|w| w.1).or(case.expect.ply).unwrap() as usize;
        let mut before = Game::new(pos, RulesConfig::default());
        for &m in &moves[..ply - 1] {
            before.play(m).unwrap();
        }
        let last = moves[ply - 1];
        group.bench_function(id, |b| {
            b.iter_batched_ref(
                || before.clone(),
                |g| {
                    let p = g.play(last).unwrap();
                    assert!(p.end.is_some() || p.warning.is_some());
                    black_box(p);
                },
                BatchSize::SmallInput,
            );
        });
    }
    // Full boards: both sides shuffle (both idle) from the start position, and in a
    // middlegame of 中炮对屏风马 with open lines and checks available.
    for (name, prefix, shuffle) in [
        ("startpos-horse-shuffle", "", "h0g2 h9g7 g2h0 g7h9"),
        (
            "middlegame-advisor-shuffle",
            "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 c3c4 g6g5 h0h6 h7i7 h6g6 i7i8",
            "f0e1 d9e8 e1f0 e8d9",
        ),
    ] {
        let mut before = Game::new(Position::new(), RulesConfig::default());
        let moves: Vec<Move> = prefix
            .split_whitespace()
            .chain(shuffle.split_whitespace())
            .chain(shuffle.split_whitespace())
            .map(|t| Move::from_iccs(t).unwrap())
            .collect();
        let (last, rest) = moves.split_last().unwrap();
        for &m in rest {
            before.play(m).unwrap();
        }
        group.bench_function(name, |b| {
            b.iter_batched_ref(
                || before.clone(),
                |g| {
                    let p = g.play(*last).unwrap();
                    assert!(p.end.is_some());
                    black_box(p);
                },
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, per_move, ruling_points);
criterion_main!(benches);
