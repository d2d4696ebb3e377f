//! The moves simulated players play: legal games generated with the rules crate, or read from a
//! corpus file (checked with the rules crate).
//!
//! Generated games are random walks that never end early and never draw a ruling: a move is taken
//! only if the opponent still has a legal move afterwards (no checkmate, no 困毙), if the position
//! it leads to has not occurred before in the game (so no repetition ruling can apply), and if the
//! no-capture count stays at most 100 plies (well under the natural move limit).

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use chuhe_rules::{Move, Position, Square};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

/// Largest no-capture count a generated game reaches, in plies.
pub const MAX_QUIET_PLIES: u32 = 100;

/// Why a corpus could not be used or generated.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("cannot read corpus {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("corpus line {line}, ply {ply}: {mv:?} is not a coordinate move like h2e2")]
    BadMove { line: usize, ply: usize, mv: String },
    #[error("corpus line {line}, ply {ply}: {mv} is not legal in that position")]
    Illegal { line: usize, ply: usize, mv: String },
    #[error("corpus line {line}: the game is over after ply {ply}, before its last move")]
    Over { line: usize, ply: usize },
    #[error("corpus has no game of at least {plies} plies (longest: {longest})")]
    TooShort { plies: usize, longest: usize },
    #[error("could not generate a {plies}-ply game from seed {seed} (too long to avoid repeats?)")]
    Generate { plies: usize, seed: u64 },
}

/// Parses `h2e2`.
pub fn parse_move(s: &str) -> Option<Move> {
    if s.len() != 4 || !s.is_ascii() {
        return None;
    }
    Some(Move::new(
        Square::from_iccs(&s[..2])?,
        Square::from_iccs(&s[2..])?,
    ))
}

/// Generates one game of `plies` legal moves from the start position (see the module doc).
/// Deterministic in `seed`.
pub fn generate_game(seed: u64, plies: usize) -> Result<Vec<Move>, CorpusError> {
    // A random walk rarely paints itself into a corner; when it does, start again (bounded).
    for attempt in 0..64u64 {
        let mut rng = SmallRng::seed_from_u64(seed ^ attempt.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        if let Some(game) = walk(&mut rng, plies) {
            return Ok(game);
        }
    }
    Err(CorpusError::Generate { plies, seed })
}

fn walk(rng: &mut SmallRng, plies: usize) -> Option<Vec<Move>> {
    let mut pos = Position::new();
    let mut seen = HashSet::with_capacity(plies + 1);
    seen.insert(pos.hash());
    let mut game = Vec::with_capacity(plies);
    while game.len() < plies {
        let mut moves: Vec<Move> = pos.legal_moves().iter().copied().collect();
        let mut chosen = None;
        while !moves.is_empty() {
            let i = rng.random_range(0..moves.len());
            let m = moves.swap_remove(i);
            let Ok(next) = pos.play(m) else { continue };
            if next.has_legal_move()
                && !seen.contains(&next.hash())
                && next.halfmoves() <= MAX_QUIET_PLIES
            {
                chosen = Some((m, next));
                break;
            }
        }
        let (m, next) = chosen?;
        seen.insert(next.hash());
        game.push(m);
        pos = next;
    }
    Some(game)
}

/// Where the players' moves come from: legal games, game `i` of a run playing line `i mod n`.
#[derive(Clone, Debug)]
pub struct MoveSource {
    games: Vec<Arc<[String]>>,
}

impl MoveSource {
    /// `games` distinct generated games of `plies` plies (seeds `seed`, `seed + 1`, ...).
    pub fn generate(games: usize, plies: usize, seed: u64) -> Result<Self, CorpusError> {
        let games = (0..games.max(1) as u64)
            .map(|i| {
                generate_game(seed.wrapping_add(i), plies)
                    .map(|g| g.iter().map(|m| m.to_iccs()).collect::<Arc<[String]>>())
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { games })
    }

    /// Parses a corpus: one game per line, coordinate moves separated by spaces, `#` starts a
    /// comment line. Every line is replayed from the start position and must be legal and not
    /// end before its last move; lines shorter than `plies` are skipped, longer ones cut.
    pub fn parse_corpus(text: &str, plies: usize) -> Result<Self, CorpusError> {
        let mut games = Vec::new();
        let mut longest = 0;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let mut pos = Position::new();
            for (k, w) in words.iter().enumerate() {
                let m = parse_move(w).ok_or_else(|| CorpusError::BadMove {
                    line: i + 1,
                    ply: k + 1,
                    mv: (*w).to_owned(),
                })?;
                if k > 0 && !pos.has_legal_move() {
                    return Err(CorpusError::Over {
                        line: i + 1,
                        ply: k,
                    });
                }
                pos.play_mut(m).map_err(|_| CorpusError::Illegal {
                    line: i + 1,
                    ply: k + 1,
                    mv: (*w).to_owned(),
                })?;
            }
            longest = longest.max(words.len());
            if words.len() >= plies {
                games.push(words[..plies].iter().map(|w| (*w).to_owned()).collect());
            }
        }
        if games.is_empty() {
            return Err(CorpusError::TooShort { plies, longest });
        }
        Ok(Self { games })
    }

    pub fn load(path: &Path, plies: usize) -> Result<Self, CorpusError> {
        let text = std::fs::read_to_string(path).map_err(|source| CorpusError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse_corpus(&text, plies)
    }

    /// The corpus as text (what `chuhe-load corpus` prints).
    pub fn to_text(&self, header: &str) -> String {
        let mut s = String::new();
        for l in header.lines() {
            s.push_str("# ");
            s.push_str(l);
            s.push('\n');
        }
        for g in &self.games {
            s.push_str(&g.join(" "));
            s.push('\n');
        }
        s
    }

    pub fn len(&self) -> usize {
        self.games.len()
    }

    pub fn is_empty(&self) -> bool {
        self.games.is_empty()
    }

    /// The line game `index` plays.
    pub fn line(&self, index: usize) -> Arc<[String]> {
        match self.games.len() {
            0 => Arc::from(Vec::new()),
            n => Arc::clone(&self.games[index % n]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn replay(game: &[Move]) -> Result<Position, String> {
        let mut pos = Position::new();
        let mut seen = HashSet::new();
        seen.insert(pos.hash());
        for (i, m) in game.iter().enumerate() {
            pos.play_mut(*m)
                .map_err(|e| format!("ply {}: {e:?}", i + 1))?;
            if !seen.insert(pos.hash()) {
                return Err(format!("ply {}: repeated position", i + 1));
            }
            if pos.outcome().is_some() {
                return Err(format!("ply {}: game over", i + 1));
            }
            if pos.halfmoves() > MAX_QUIET_PLIES {
                return Err(format!("ply {}: {} quiet plies", i + 1, pos.halfmoves()));
            }
        }
        Ok(pos)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn generated_games_are_legal_and_never_end_or_repeat(seed in any::<u64>()) {
            let game = generate_game(seed, 160).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(game.len(), 160);
            replay(&game).map_err(TestCaseError::fail)?;
        }
    }

    #[test]
    fn generation_is_deterministic_and_varied() -> Result<(), CorpusError> {
        assert_eq!(generate_game(3, 40)?, generate_game(3, 40)?);
        assert_ne!(generate_game(3, 40)?, generate_game(4, 40)?);
        let src = MoveSource::generate(4, 30, 9)?;
        assert_eq!(src.len(), 4);
        assert_eq!(src.line(1), src.line(5));
        assert_ne!(src.line(0), src.line(1));
        Ok(())
    }

    #[test]
    fn corpus_round_trip() -> Result<(), CorpusError> {
        let src = MoveSource::generate(3, 20, 1)?;
        let text = src.to_text("Source: chuhe-load corpus --games 3 --plies 20 --seed 1");
        assert!(text.starts_with("# Source: "));
        let back = MoveSource::parse_corpus(&text, 12)?;
        assert_eq!(back.len(), 3);
        assert_eq!(&back.line(2)[..], &src.line(2)[..12]);
        Ok(())
    }

    #[test]
    fn bad_corpora_say_where() {
        let e = |t: &str, plies| MoveSource::parse_corpus(t, plies).map(|_| ());
        assert!(matches!(
            e("h2e2 h9g7 z9z9", 1),
            Err(CorpusError::BadMove {
                line: 1,
                ply: 3,
                ..
            })
        ));
        // h2e2 twice in a row: the second is Black's turn with a Red cannon's move.
        assert!(matches!(
            e("# c\nh2e2 h2e2", 1),
            Err(CorpusError::Illegal {
                line: 2,
                ply: 2,
                ..
            })
        ));
        assert!(matches!(
            e("h2e2 h9g7", 3),
            Err(CorpusError::TooShort {
                plies: 3,
                longest: 2
            })
        ));
        assert_eq!(parse_move("h2e2").map(|m| m.to_iccs()), Some("h2e2".into()));
        assert!(parse_move("h2e").is_none() && parse_move("j2e2").is_none());
    }
}
