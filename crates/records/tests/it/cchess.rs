//! An independent reader: the `cchess` Python package (PyPI) reads the PGN (in each notation)
//! and the XQF (plain and encrypted) that chuhe writes and must find the same moves. Skips with
//! one `skipped: …` line on stderr when Python or the package is missing. The Python is
//! `$CHUHE_CCHESS_PYTHON` if set, else `python3`; `.ci/run` installs the package in a venv and
//! sets the variable.

use std::process::Command;

use chuhe_records::xqf::{Keys, WriteOptions};
use chuhe_records::{Game, GameResult, Notation, pgn, xqf};
use chuhe_rules::{PieceKind, Position, START_FEN};

fn python() -> Option<String> {
    let py = std::env::var("CHUHE_CCHESS_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let ok = Command::new(&py)
        .args(["-c", "import cchess"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    ok.then_some(py)
}

fn random_game(fen: &str, seed: u64, plies: usize) -> Game {
    let mut pos = Position::from_fen(fen).unwrap();
    let mut moves = Vec::new();
    let mut s = seed | 1;
    for _ in 0..plies {
        let list = pos.legal_moves();
        if list.is_empty() {
            break;
        }
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let m = list.as_slice()[(s % list.len() as u64) as usize];
        pos.play_mut(m).unwrap();
        moves.push(m);
    }
    Game {
        event: "象甲联赛".into(),
        red: "赵一".into(),
        black: "钱二".into(),
        result: [GameResult::RedWins, GameResult::BlackWins, GameResult::Draw][(seed % 3) as usize],
        fen: fen.into(),
        moves,
        ..Game::default()
    }
}

#[test]
fn cchess_reads_our_pgn_and_xqf() {
    let Some(py) = python() else {
        // Straight to the stderr handle: libtest captures eprintln! but not the handle.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "skipped: cchess::cchess_reads_our_pgn_and_xqf (python3 with the cchess package, \
             pip install cchess, is not available)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let fens = [
        START_FEN,
        "3akab2/9/4b4/p3p3p/2p3p2/6P2/P1P1P3P/2N1C1N2/4A4/2BAK1B2 w - - 0 1",
    ];
    for seed in 1..13u64 {
        let fen = fens[(seed % 2) as usize];
        let g = random_game(fen, seed * 7919, 60 + (seed as usize % 5) * 10);
        for (i, n) in [Notation::Chinese, Notation::Wxf, Notation::Iccs]
            .into_iter()
            .enumerate()
        {
            // cchess reads only Chinese and ICCS movetext.
            if n == Notation::Wxf {
                continue;
            }
            let p = dir.path().join(format!("g{seed}-{i}.pgn"));
            std::fs::write(&p, pgn::write(&g, n).unwrap()).unwrap();
            files.push((p, g.clone()));
        }
        for (i, opts) in [
            WriteOptions::default(),
            WriteOptions {
                version: 0x12,
                keys: Keys {
                    mask: 0xEF,
                    or: [3, 9, 27, 81],
                    sum: 0,
                    xy: seed as u8 * 13,
                    xyf: seed as u8 * 7 + 1,
                    xyt: 200 - seed as u8,
                },
            },
        ]
        .into_iter()
        .enumerate()
        {
            let p = dir.path().join(format!("g{seed}-{i}.xqf"));
            std::fs::write(&p, xqf::write(&g, &opts).unwrap()).unwrap();
            files.push((p, g.clone()));
        }
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/it/cchess_reader.py");
    let out = Command::new(&py)
        .arg(script)
        .args(files.iter().map(|(p, _)| p))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cchess failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut gaps = 0;
    assert_eq!(lines.len(), files.len());
    for (line, (path, g)) in lines.iter().zip(&files) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let got: Vec<String> = v["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().to_string())
            .collect();
        let want: Vec<String> = g.moves.iter().map(|m| m.to_iccs()).collect();
        if got != want && path.extension().is_some_and(|e| e == "pgn") {
            // cchess's Chinese reader stops at (or misreads) two constructs it does not resolve: an advisor
            // or elephant whose file holds another of its kind (the direction tells them
            // apart, so no 前/后 is written), and pawns named by their place on a file
            // (前兵, 中卒). Such a difference is counted, not failed; any other difference fails.
            let k = got
                .iter()
                .zip(&want)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(want.len()));
            assert!(
                k < want.len() && cchess_gap(g, k),
                "{}: cchess differs at ply {}: {got:?} vs {want:?}",
                path.display(),
                k + 1
            );
            gaps += 1;
            continue;
        }
        assert_eq!(got, want, "{}", path.display());
        assert_eq!(
            v["result"].as_str().unwrap(),
            g.result.as_pgn(),
            "{}",
            path.display()
        );
    }
    // Most Chinese files are read whole; the XQF and ICCS ones all are (asserted above).
    assert!(
        gaps * 2 <= files.len() / 2,
        "{gaps} of {} files",
        files.len()
    );
    eprintln!(
        "cchess read {} files ({gaps} Chinese PGN up to a construct it does not resolve)",
        files.len()
    );
}

/// Whether ply `ply` of `g` is a move cchess's Chinese reader does not resolve.
fn cchess_gap(g: &Game, ply: usize) -> bool {
    let mut pos = Position::from_fen(&g.fen).unwrap();
    for &m in &g.moves[..ply] {
        pos.play_mut(m).unwrap();
    }
    let m = g.moves[ply];
    let p = pos.piece_at(m.from()).unwrap();
    match p.kind {
        PieceKind::Advisor | PieceKind::Elephant => pos
            .pieces()
            .any(|(s, q)| q == p && s != m.from() && s.file() == m.from().file()),
        PieceKind::Pawn => pos
            .pieces()
            .any(|(s, q)| q == p && s != m.from() && s.file() == m.from().file()),
        _ => false,
    }
}
