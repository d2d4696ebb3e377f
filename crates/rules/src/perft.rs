//! Perft: counting move paths, the standard test of a move generator.

use crate::position::Position;
use crate::types::Move;

/// The number of move paths of length `depth` from `pos` (leaf nodes; bulk-counted at the last
/// ply). `perft(pos, 0) == 1`.
#[must_use]
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal(),
        _ => {
            let moves = pos.legal_moves();
            let mut total = 0;
            for &m in moves.iter() {
                let mut child = pos.clone();
                child.play_unchecked(m);
                total += perft(&child, depth - 1);
            }
            total
        }
    }
}

/// Perft split by first move: each legal move with the perft of `depth - 1` after it, in
/// ICCS order. Empty for `depth == 0`.
#[must_use]
pub fn perft_divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    let mut moves: Vec<Move> = pos.legal_moves().to_vec();
    moves.sort_by_key(|m| m.to_string());
    moves
        .into_iter()
        .map(|m| {
            let mut child = pos.clone();
            child.play_unchecked(m);
            (m, perft(&child, depth - 1))
        })
        .collect()
}
