//! Perft against known counts.
#![allow(clippy::unwrap_used)]

use chuhe_rules::{Position, perft};

#[test]
fn start_position_depths_1_to_4() {
    let pos = Position::new();
    let expected = [44u64, 1920, 79666, 3_290_240];
    for (d, &n) in expected.iter().enumerate() {
        assert_eq!(perft(&pos, d as u32 + 1), n, "depth {}", d + 1);
    }
}
