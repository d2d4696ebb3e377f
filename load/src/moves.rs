//! The moves simulated players play: a corpus file, or a synthetic line for the relay only.

use std::path::Path;
use std::sync::Arc;

/// Why a corpus could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("cannot read corpus {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("corpus line {line}: move {mv:?} is not a 4-character coordinate move like h2e2")]
    BadMove { line: usize, mv: String },
    #[error("corpus has no game of at least {plies} plies (longest: {longest})")]
    TooShort { plies: usize, longest: usize },
}

/// Where the players' moves come from.
#[derive(Clone, Debug)]
pub enum MoveSource {
    /// Games read from a corpus (one game per line, coordinate moves separated by spaces,
    /// `#` starts a comment line). Game `i` of a run plays corpus line `i mod n`.
    Corpus(Vec<Arc<[String]>>),
    /// Placeholder moves, never legal Xiangqi: only the relay, which does not read them, accepts
    /// them.
    Synthetic,
}

fn is_coordinate_move(m: &str) -> bool {
    let b = m.as_bytes();
    b.len() == 4
        && (b'a'..=b'i').contains(&b[0])
        && b[1].is_ascii_digit()
        && (b'a'..=b'i').contains(&b[2])
        && b[3].is_ascii_digit()
}

impl MoveSource {
    /// Parses a corpus text; keeps the games of at least `plies` plies.
    pub fn parse_corpus(text: &str, plies: usize) -> Result<Self, CorpusError> {
        let mut games = Vec::new();
        let mut longest = 0;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let moves: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
            if let Some(bad) = moves.iter().find(|m| !is_coordinate_move(m)) {
                return Err(CorpusError::BadMove {
                    line: i + 1,
                    mv: bad.clone(),
                });
            }
            longest = longest.max(moves.len());
            if moves.len() >= plies {
                games.push(Arc::from(&moves[..plies]));
            }
        }
        if games.is_empty() {
            return Err(CorpusError::TooShort { plies, longest });
        }
        Ok(Self::Corpus(games))
    }

    pub fn load(path: &Path, plies: usize) -> Result<Self, CorpusError> {
        let text = std::fs::read_to_string(path).map_err(|source| CorpusError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse_corpus(&text, plies)
    }

    /// Whether the moves are legal Xiangqi (what chuhe needs).
    pub fn is_legal(&self) -> bool {
        matches!(self, Self::Corpus(_))
    }

    /// The line game `index` plays, `plies` long.
    pub fn line(&self, index: usize, plies: usize) -> Arc<[String]> {
        match self {
            Self::Corpus(games) if !games.is_empty() => Arc::clone(&games[index % games.len()]),
            _ => (0..plies)
                .map(|i| {
                    let file = b"abcdefghi"[i % 9] as char;
                    format!("{file}{}{file}{}", i % 10, (i + 1) % 10)
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corpus() -> Result<(), CorpusError> {
        let text = "# Source: generated\nh2e2 h9g7 h0g2\n\nb2e2 b9c7\n";
        let src = MoveSource::parse_corpus(text, 3)?;
        assert!(src.is_legal());
        assert_eq!(&*src.line(0, 3), &["h2e2", "h9g7", "h0g2"]);
        assert_eq!(&*src.line(5, 3), &["h2e2", "h9g7", "h0g2"]);
        assert!(matches!(
            MoveSource::parse_corpus(text, 4),
            Err(CorpusError::TooShort {
                plies: 4,
                longest: 3
            })
        ));
        assert!(matches!(
            MoveSource::parse_corpus("h2e2 z9z9", 1),
            Err(CorpusError::BadMove { line: 1, .. })
        ));
        Ok(())
    }

    #[test]
    fn synthetic_lines_have_the_length_asked() {
        let l = MoveSource::Synthetic.line(3, 25);
        assert_eq!(l.len(), 25);
        assert!(l.iter().all(|m| is_coordinate_move(m)));
        assert!(!MoveSource::Synthetic.is_legal());
    }
}
