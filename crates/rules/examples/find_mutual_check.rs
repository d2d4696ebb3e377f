//! Searches for real-board mutual perpetual check (双方长将): a legal position and a cycle of
//! moves in which every move of both sides gives check and the start position recurs.
//!
//! The repetition suite (`tests/data/repetition_cases.txt`) takes its mutual-长将 cases from
//! here. Run it in release mode, bounded in time:
//!
//! ```text
//! nice -n 10 cargo run --release -p chuhe-rules --example find_mutual_check -- \
//!     --seconds 300 --seed 1 --max-plies 8
//! ```
//!
//! and verify one cycle (prints the check status of every ply and whether the start recurs):
//!
//! ```text
//! cargo run --release -p chuhe-rules --example find_mutual_check -- \
//!     --verify "5k3/9/9/9/9/9/6n2/9/3KA3c/5C3 w - - 0 1" e1f2 g3f1 f2e1 f1g3
//! ```
//!
//! How it searches: random positions (each king on a random palace point; each side 2–6 more
//! pieces from rooks, cannons, horses, advisors, elephants and pawns; with probability 0.7 a
//! piece is put on the file or rank of one of the kings, where checks and screens live; the
//! rest anywhere the piece can legally stand), validated by `Position::from_setup`, kept only
//! when the side to move is in check. From each, a depth-first search over non-capturing moves
//! that give check, up to `--max-plies` plies, looks for the start position (same hash, same
//! side to move) again. Each cycle found is printed with its signature: per ply, the moving
//! piece and the pieces giving check after it (`A>C` = the advisor moved and the cannon
//! checks). Only the first cycle of each signature is printed, so the output lists the
//! distinct mechanisms found.
//!
//! Why earlier random searches found nothing: the mechanism is specific. The simplest one found
//! (the "crossing cannon lines"): a black cannon's line to the red king and a red cannon's line
//! to the black king cross at one point X, both otherwise empty. A cannon checks with exactly
//! one screen, so a line checks iff an odd number (one) of the two toggling pieces stands on
//! it. The red piece toggles between a point of the black line and a point of the red line,
//! the black piece between X and a point off both lines; then exactly one king is in check in
//! each of the four positions of the cycle, and it is always the side to move.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use chuhe_rules::{Color, Move, Piece, PieceKind, Position, Setup, Square};

/// xorshift64* — a small deterministic generator (reproducible from `--seed`).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

struct Options {
    seconds: u64,
    seed: u64,
    max_plies: usize,
    verify: Option<(String, Vec<String>)>,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        seconds: 60,
        seed: 1,
        max_plies: 8,
        verify: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--seconds" => {
                o.seconds = value("--seconds")?
                    .parse()
                    .map_err(|_| "bad --seconds".to_string())?;
            }
            "--seed" => {
                o.seed = value("--seed")?
                    .parse()
                    .map_err(|_| "bad --seed".to_string())?;
            }
            "--max-plies" => {
                o.max_plies = value("--max-plies")?
                    .parse()
                    .map_err(|_| "bad --max-plies".to_string())?;
                if !(2..=12).contains(&o.max_plies) {
                    return Err("--max-plies must be 2..=12".into());
                }
            }
            "--verify" => {
                let fen = value("--verify")?;
                let moves: Vec<String> = args.by_ref().collect();
                o.verify = Some((fen, moves));
            }
            "-h" | "--help" => {
                return Err(
                    "usage: find_mutual_check [--seconds N] [--seed S] [--max-plies P] \
                     | --verify FEN MOVE..."
                        .into(),
                );
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if o.seed == 0 {
        o.seed = 0x9E37_79B9_7F4A_7C15; // xorshift must not start at zero
    }
    Ok(o)
}

const KINDS: [PieceKind; 6] = [
    PieceKind::Rook,
    PieceKind::Cannon,
    PieceKind::Horse,
    PieceKind::Advisor,
    PieceKind::Elephant,
    PieceKind::Pawn,
];

fn random_square(rng: &mut Rng, piece: Piece, kings: [Square; 2]) -> Option<Square> {
    for _ in 0..50 {
        let sq = if rng.chance(70) {
            // On the file or rank of a king.
            let k = kings[rng.below(2) as usize];
            if rng.chance(50) {
                Square::new(k.file(), rng.below(10) as u8)
            } else {
                Square::new(rng.below(9) as u8, k.rank())
            }
        } else {
            Square::from_index(rng.below(90) as usize)
        };
        if let Some(sq) = sq.filter(|&sq| Position::reachable(piece, sq)) {
            return Some(sq);
        }
    }
    None
}

fn random_position(rng: &mut Rng) -> Option<Position> {
    let mut s = Setup::empty();
    s.turn = if rng.chance(50) {
        Color::Red
    } else {
        Color::Black
    };
    let mut kings = [Square::from_index(0)?; 2];
    for c in Color::ALL {
        let king = Piece::new(c, PieceKind::King);
        loop {
            let sq = Square::from_index(rng.below(90) as usize)?;
            if Position::reachable(king, sq) {
                s.board[sq.index()] = Some(king);
                kings[c.index()] = sq;
                break;
            }
        }
    }
    for c in Color::ALL {
        let n = 2 + rng.below(5);
        let mut counts = [0u32; 7];
        for _ in 0..n {
            let kind = KINDS[rng.below(KINDS.len() as u64) as usize];
            if counts[kind.index()] >= kind.max_count() {
                continue;
            }
            let piece = Piece::new(c, kind);
            let free = random_square(rng, piece, kings).filter(|sq| s.board[sq.index()].is_none());
            if let Some(sq) = free {
                s.board[sq.index()] = Some(piece);
                counts[kind.index()] += 1;
            }
        }
    }
    Position::from_setup(&s).ok()
}

fn kind_char(pos: &Position, sq: Square) -> char {
    pos.piece_at(sq).map_or('?', Piece::fen_char)
}

/// Per ply: the moving piece and the pieces giving check after the move.
fn signature(start: &Position, moves: &[Move]) -> String {
    let mut pos = start.clone();
    let mut parts = Vec::new();
    for &m in moves {
        let mover = kind_char(&pos, m.from());
        pos.play_unchecked(m);
        let checkers: String = pos.checkers().map(|sq| kind_char(&pos, sq)).collect();
        parts.push(format!("{mover}>{checkers}"));
    }
    parts.join(" ")
}

/// Depth-first search for a cycle of checking, non-capturing moves back to `target`.
fn search(pos: &Position, target: u64, depth: usize, max: usize, path: &mut Vec<Move>) -> bool {
    if depth > 0 && depth % 2 == 0 && pos.hash() == target {
        return true;
    }
    if depth == max {
        return false;
    }
    for &m in pos.legal_moves().iter() {
        if pos.piece_at(m.to()).is_some() {
            continue;
        }
        let mut next = pos.clone();
        next.play_unchecked(m);
        if !next.is_check() {
            continue;
        }
        path.push(m);
        if search(&next, target, depth + 1, max, path) {
            return true;
        }
        path.pop();
    }
    false
}

fn verify(fen: &str, moves: &[String]) -> Result<(), String> {
    let start = Position::from_fen(fen).map_err(|e| e.to_string())?;
    println!("start: {fen} (in check: {})", start.is_check());
    let mut pos = start.clone();
    let mut all_check = true;
    for (i, m) in moves.iter().enumerate() {
        let mv = pos.parse_iccs(m).map_err(|e| format!("{m}: {e}"))?;
        pos = pos.play(mv).map_err(|e| format!("ply {}: {e}", i + 1))?;
        all_check &= pos.is_check();
        println!("ply {}: {m} check: {}", i + 1, pos.is_check());
    }
    let back = pos.hash() == start.hash();
    println!("every move checks: {all_check}; back at the start: {back}");
    if all_check && back {
        Ok(())
    } else {
        Err("not a mutual perpetual check cycle".into())
    }
}

fn main() {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if let Some((fen, moves)) = &o.verify {
        if let Err(e) = verify(fen, moves) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(o.seconds);
    let mut rng = Rng(o.seed);
    let mut seen = HashSet::new();
    let (mut tried, mut in_check, mut cycles) = (0u64, 0u64, 0u64);
    let mut path = Vec::new();
    while tried % 1024 != 0 || Instant::now() < deadline {
        tried += 1;
        let Some(pos) = random_position(&mut rng) else {
            continue;
        };
        if !pos.is_check() {
            continue;
        }
        in_check += 1;
        path.clear();
        if !search(&pos, pos.hash(), 0, o.max_plies, &mut path) {
            continue;
        }
        cycles += 1;
        let sig = signature(&pos, &path);
        if seen.insert(sig.clone()) {
            let moves: Vec<String> = path.iter().map(|m| m.to_iccs()).collect();
            println!(
                "{} plies | {sig} | {} | {}",
                path.len(),
                pos.to_fen(),
                moves.join(" ")
            );
        }
    }
    println!(
        "tried {tried} placements, {in_check} legal with the side to move in check, \
         {cycles} cycles, {} distinct signatures",
        seen.len()
    );
}
