//! Perft against known counts: the start position from the issue (published counts, confirmed
//! by Fairy-Stockfish and Pikafish), and every position in `tests/data/*.perft` (counts from an
//! independent implementation, named in each file's `# Source:` header). Each position is also
//! checked colour-mirrored, which must give the same counts.
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

#[test]
fn start_position_depth_5() {
    // About a second in the opt-level 2 test profile (the bench times it).
    assert_eq!(perft(&Position::new(), 5), 133_312_995);
}

struct Case {
    id: String,
    fen: String,
    counts: Vec<(u32, u64)>,
}

fn load(path: &std::path::Path) -> Vec<Case> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.starts_with("# Source:"),
        "{} must start with a # Source: header",
        path.display()
    );
    let mut cases: Vec<Case> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, rest) = line.split_once(' ').unwrap();
        match key {
            "id" => cases.push(Case {
                id: rest.to_string(),
                fen: String::new(),
                counts: Vec::new(),
            }),
            "fen" => cases.last_mut().unwrap().fen = rest.to_string(),
            "perft" => {
                let (d, c) = rest.split_once(' ').unwrap();
                cases
                    .last_mut()
                    .unwrap()
                    .counts
                    .push((d.parse().unwrap(), c.parse().unwrap()));
            }
            _ => panic!("{}:{}: unknown line {line:?}", path.display(), n + 1),
        }
    }
    cases
}

#[test]
fn data_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut total = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("perft") {
            continue;
        }
        for case in load(&path) {
            let pos = Position::from_fen(&case.fen)
                .unwrap_or_else(|e| panic!("{}: {}: {e}", case.id, case.fen));
            let mirrored = pos.mirror();
            assert!(!case.counts.is_empty(), "{}: no counts", case.id);
            for &(depth, expected) in &case.counts {
                assert_eq!(perft(&pos, depth), expected, "{} depth {depth}", case.id);
                assert_eq!(
                    perft(&mirrored, depth),
                    expected,
                    "{} mirrored depth {depth}",
                    case.id
                );
            }
            total += 1;
        }
    }
    assert!(total >= 26, "only {total} positions in the data files");
}

/// Checks `has_legal_move() == (count_legal() > 0)` at every node of the tree to `depth`;
/// returns how many nodes had no legal move (mate or 困毙).
fn walk_has_legal_move(pos: &Position, depth: u32, id: &str) -> u64 {
    let n = pos.count_legal();
    assert_eq!(pos.has_legal_move(), n > 0, "{id}: {}", pos.to_fen());
    if n == 0 {
        assert!(
            pos.is_checkmate() || pos.is_stalemate(),
            "{id}: {}",
            pos.to_fen()
        );
        return 1;
    }
    if depth == 0 {
        return 0;
    }
    let mut terminal = 0;
    for &m in pos.legal_moves().iter() {
        let mut child = pos.clone();
        child.play_unchecked(m);
        terminal += walk_has_legal_move(&child, depth - 1, id);
    }
    terminal
}

/// The early-stopping `has_legal_move` against the full count, over the trees of every data
/// position (mates, 困毙, pins, cannon screens, checks) and their mirrors.
#[test]
fn has_legal_move_agrees_with_count_on_data_trees() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let (mut positions, mut terminal) = (0, 0);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("perft") {
            continue;
        }
        for case in load(&path) {
            let pos = Position::from_fen(&case.fen).unwrap();
            for p in [pos.mirror(), pos] {
                terminal += walk_has_legal_move(&p, 3, &case.id);
                positions += 1;
            }
        }
    }
    assert!(positions >= 52, "{positions}");
    // The trees reach positions without a legal move (the data has a mate and a 困毙 at
    // the root, and the endgames reach more).
    assert!(
        terminal >= 4,
        "only {terminal} positions without a legal move"
    );
}
