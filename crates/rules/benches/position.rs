//! The per-move work the game server does besides `Game::play`, on a middlegame position
//! (中炮对屏风马 after 12 plies): the legal-move test behind `outcome()`, FEN, and the move
//! texts (ICCS, WXF, Chinese).
#![allow(clippy::unwrap_used)]

use chuhe_rules::{Move, Position};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

const OPENING: &str = "h2e2 h9g7 h0g2 i9h9 i0h0 b9c7 c3c4 g6g5 h0h6 h7i7 h6g6 i7i8";

fn middlegame() -> Position {
    let mut pos = Position::new();
    for t in OPENING.split_whitespace() {
        let m = pos.parse_iccs(t).unwrap();
        pos.play_mut(m).unwrap();
    }
    pos
}

fn bench_position(c: &mut Criterion) {
    let pos = middlegame();
    let moves: Vec<Move> = pos.legal_moves().to_vec();
    // Black in check: the first of Red's legal moves that gives check.
    let checking = moves.iter().copied().find(|&m| pos.gives_check(m)).unwrap();
    let check = pos.play(checking).unwrap();
    assert!(check.is_check() && check.has_legal_move());
    let mut group = c.benchmark_group("position");
    group.bench_function("has_legal_move", |b| {
        b.iter(|| black_box(&pos).has_legal_move())
    });
    group.bench_function("has_legal_move_in_check", |b| {
        b.iter(|| black_box(&check).has_legal_move())
    });
    group.bench_function("count_legal", |b| b.iter(|| black_box(&pos).count_legal()));
    group.bench_function("outcome", |b| b.iter(|| black_box(&pos).outcome()));
    group.bench_function("to_fen", |b| b.iter(|| black_box(&pos).to_fen()));
    group.throughput(Throughput::Elements(moves.len() as u64));
    group.bench_function("to_chinese_all_moves", |b| {
        b.iter(|| {
            for &m in &moves {
                black_box(black_box(&pos).to_chinese(m).unwrap());
            }
        })
    });
    group.bench_function("to_wxf_all_moves", |b| {
        b.iter(|| {
            for &m in &moves {
                black_box(black_box(&pos).to_wxf(m).unwrap());
            }
        })
    });
    group.bench_function("to_iccs_all_moves", |b| {
        b.iter(|| {
            for &m in &moves {
                black_box(black_box(m).to_iccs());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_position);
criterion_main!(benches);
