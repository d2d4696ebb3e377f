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
