//! Xiangqi game records in the forms the Xiangqi world uses.
//!
//! - **PGN** of Chinese chess programs (the 象棋百科全书 / XQBase convention):
//!   `[Game "Chinese Chess"]`, `[Format "Chinese"|"WXF"|"ICCS"]`, event, round, board, teams,
//!   players, result, the ruling's reason (`Termination`), `FEN` when the game did not start
//!   from the opening position; movetext in Chinese, WXF or ICCS ([`pgn`]).
//! - **XQF**, XQStudio's (象棋演播室) binary format: read (versions up to 0x0A plain, 0x0B and
//!   later encrypted) and write ([`xqf`]).
//! - **DhtmlXQ**, the UBB block forums paste to show a replayable board: write ([`dhtmlxq`]).
//!
//! Every importer checks every move with `chuhe-rules` and answers either whole games or a
//! typed [`RecordError`] naming the first bad place; nothing is half-imported. Pure: no IO.

use chuhe_rules::{Color, Move, NotationError, Position, START_FEN};

pub mod dhtmlxq;
pub mod pgn;
pub mod xqf;

/// How a game ended, as records write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GameResult {
    /// `1-0`.
    RedWins,
    /// `0-1`.
    BlackWins,
    /// `1/2-1/2`.
    Draw,
    /// `0-0`: both sides lose (a ruling of the competition rules).
    BothLose,
    /// `*`: not over, or not known.
    #[default]
    Unknown,
}

impl GameResult {
    /// The PGN text: `1-0`, `0-1`, `1/2-1/2`, `0-0`, `*`.
    #[must_use]
    pub const fn as_pgn(self) -> &'static str {
        match self {
            GameResult::RedWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
            GameResult::BothLose => "0-0",
            GameResult::Unknown => "*",
        }
    }

    /// Reads a PGN result (`1/2` and `½-½` are accepted for a draw).
    #[must_use]
    pub fn from_pgn(s: &str) -> Option<GameResult> {
        Some(match s.trim() {
            "1-0" => GameResult::RedWins,
            "0-1" => GameResult::BlackWins,
            "1/2-1/2" | "1/2" | "½-½" => GameResult::Draw,
            "0-0" => GameResult::BothLose,
            "*" => GameResult::Unknown,
            _ => return None,
        })
    }
}

/// One game: the headers the formats share, the start position and the main line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    /// The event (赛事).
    pub event: String,
    /// The round, as text (`"3"`).
    pub round: String,
    /// The board (台次) within the match, as text.
    pub board: String,
    /// Where.
    pub site: String,
    /// When (`YYYY.MM.DD` in PGN).
    pub date: String,
    /// Red's player.
    pub red: String,
    /// Black's player.
    pub black: String,
    /// Red's team.
    pub red_team: String,
    /// Black's team.
    pub black_team: String,
    /// The result.
    pub result: GameResult,
    /// Why it ended (the ruling's reason: `checkmate`, `time`, `resignation`, …).
    pub reason: String,
    /// The opening's name, if known.
    pub opening: String,
    /// The start position's FEN ([`START_FEN`] for a game from the opening position).
    pub fen: String,
    /// The main line.
    pub moves: Vec<Move>,
    /// Other headers, in order (kept through PGN and XQF).
    pub extra: Vec<(String, String)>,
}

impl Default for Game {
    fn default() -> Game {
        Game {
            event: String::new(),
            round: String::new(),
            board: String::new(),
            site: String::new(),
            date: String::new(),
            red: String::new(),
            black: String::new(),
            red_team: String::new(),
            black_team: String::new(),
            result: GameResult::Unknown,
            reason: String::new(),
            opening: String::new(),
            fen: START_FEN.to_string(),
            moves: Vec::new(),
            extra: Vec::new(),
        }
    }
}

impl Game {
    /// Whether the game starts from the opening position (compared as positions, so the move
    /// counters of the FEN do not matter).
    #[must_use]
    pub fn from_start(&self) -> bool {
        match Position::from_fen(&self.fen) {
            Ok(p) => {
                p.to_setup().board_fen() == Position::new().to_setup().board_fen()
                    && p.side_to_move() == Color::Red
            }
            Err(_) => false,
        }
    }

    /// The start position.
    pub fn start_position(&self) -> Result<Position, RecordError> {
        Position::from_fen(&self.fen).map_err(|e| RecordError::BadFen {
            fen: self.fen.clone(),
            why: e.to_string(),
        })
    }

    /// Replays the main line with the rules: the positions before each move, and the final one.
    /// The first illegal move is a [`RecordError::BadMove`] (its place is the ply).
    pub fn replay(&self) -> Result<Vec<Position>, RecordError> {
        let mut pos = self.start_position()?;
        let black_first = pos.side_to_move() == Color::Black;
        let mut out = Vec::with_capacity(self.moves.len() + 1);
        for (i, &m) in self.moves.iter().enumerate() {
            let next = pos.play(m).map_err(|e| RecordError::BadMove {
                number: pgn::number_of(i, black_first),
                side: pos.side_to_move(),
                text: m.to_iccs(),
                place: format!("ply {}", i + 1),
                why: e.reason.to_string(),
            })?;
            out.push(pos);
            pos = next;
        }
        out.push(pos);
        Ok(out)
    }

    /// A header's value by its PGN name (the shared fields and [`Game::extra`]).
    #[must_use]
    pub fn header(&self, key: &str) -> Option<&str> {
        let v = match key {
            "Event" => &self.event,
            "Round" => &self.round,
            "Board" => &self.board,
            "Site" => &self.site,
            "Date" => &self.date,
            "Red" => &self.red,
            "Black" => &self.black,
            "RedTeam" => &self.red_team,
            "BlackTeam" => &self.black_team,
            "Termination" => &self.reason,
            "Opening" => &self.opening,
            _ => {
                return self
                    .extra
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v.as_str());
            }
        };
        Some(v)
    }

    /// Sets a header by its PGN name; `Game`, `Format`, `Result` and `FEN` are the caller's.
    pub(crate) fn set_header(&mut self, key: &str, value: String) {
        match key {
            "Event" => self.event = value,
            "Round" => self.round = value,
            "Board" => self.board = value,
            "Site" => self.site = value,
            "Date" => self.date = value,
            "Red" => self.red = value,
            "Black" => self.black = value,
            "RedTeam" => self.red_team = value,
            "BlackTeam" => self.black_team = value,
            "Termination" => self.reason = value,
            "Opening" => self.opening = value,
            _ => {
                if let Some(e) = self.extra.iter_mut().find(|(k, _)| k == key) {
                    e.1 = value;
                } else {
                    self.extra.push((key.to_string(), value));
                }
            }
        }
    }
}

/// Move notation of PGN movetext.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Notation {
    /// 炮二平五 马8进7.
    Chinese,
    /// `C2=5 H8+7`.
    Wxf,
    /// `H2-E2 H9-G7`.
    Iccs,
}

impl Notation {
    /// The `Format` header's value: `Chinese`, `WXF`, `ICCS`.
    #[must_use]
    pub const fn format_name(self) -> &'static str {
        match self {
            Notation::Chinese => "Chinese",
            Notation::Wxf => "WXF",
            Notation::Iccs => "ICCS",
        }
    }

    /// Reads `chinese`/`zh`, `wxf`, `iccs` (any case).
    #[must_use]
    pub fn parse(s: &str) -> Option<Notation> {
        match s.to_ascii_lowercase().as_str() {
            "chinese" | "zh" | "cn" => Some(Notation::Chinese),
            "wxf" => Some(Notation::Wxf),
            "iccs" => Some(Notation::Iccs),
            _ => None,
        }
    }
}

/// A record that could not be read or written. Import errors name the first bad place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The input holds no game.
    #[error("no game in the input")]
    Empty,
    /// The text is not in the format's syntax.
    #[error("{place}: {why}")]
    Syntax {
        /// Where: `game 2, line 14, column 3` or `byte 1032`.
        place: String,
        /// What is wrong.
        why: String,
    },
    /// The start position cannot be read or is not a legal position.
    #[error("bad start position {fen:?}: {why}")]
    BadFen {
        /// The FEN as given (for XQF, the FEN of the piece placement).
        fen: String,
        /// Why.
        why: String,
    },
    /// A move that cannot be read or is illegal in its position.
    #[error("move {number} ({side}) {text:?} at {place}: {why}")]
    BadMove {
        /// The move number (Red's and Black's moves share one).
        number: u32,
        /// Whose move it is.
        side: Color,
        /// The move as written (ICCS for binary formats).
        text: String,
        /// Where: `game 1, line 12, column 9` or `byte 1048`.
        place: String,
        /// Why.
        why: String,
    },
    /// The input ends in the middle of something.
    #[error("the input ends early at {place}: {why}")]
    Truncated {
        /// Where.
        place: String,
        /// What was being read.
        why: String,
    },
    /// The game cannot be written in this format.
    #[error("cannot write the game: {0}")]
    Unwritable(String),
}

impl RecordError {
    /// A stable machine code: `empty`, `syntax`, `bad_fen`, `bad_move`, `truncated`,
    /// `unwritable`.
    #[must_use]
    pub const fn code(&self) -> &'static str {
        match self {
            RecordError::Empty => "empty",
            RecordError::Syntax { .. } => "syntax",
            RecordError::BadFen { .. } => "bad_fen",
            RecordError::BadMove { .. } => "bad_move",
            RecordError::Truncated { .. } => "truncated",
            RecordError::Unwritable(_) => "unwritable",
        }
    }
}

pub(crate) fn notation_why(e: &NotationError) -> String {
    e.to_string()
}

/// The record formats, for tools that pick one by name or file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// PGN with movetext in the given notation.
    Pgn(Notation),
    /// XQF (binary).
    Xqf,
    /// A DhtmlXQ/UBB block (export only).
    DhtmlXq,
}

impl Format {
    /// Reads `pgn` (Chinese), `pgn-wxf`, `pgn-iccs`, `chinese`, `wxf`, `iccs`, `xqf`, `dhtmlxq`
    /// (also `ubb`).
    #[must_use]
    pub fn parse(s: &str) -> Option<Format> {
        let s = s.to_ascii_lowercase();
        Some(match s.as_str() {
            "pgn" | "pgn-chinese" | "chinese-pgn" | "chinese" | "zh" => {
                Format::Pgn(Notation::Chinese)
            }
            "pgn-wxf" | "wxf" => Format::Pgn(Notation::Wxf),
            "pgn-iccs" | "iccs" => Format::Pgn(Notation::Iccs),
            "xqf" => Format::Xqf,
            "dhtmlxq" | "ubb" => Format::DhtmlXq,
            _ => return None,
        })
    }

    /// The format a file name's extension suggests (`.pgn` → Chinese PGN, `.xqf`, `.txt`/`.ubb`
    /// → DhtmlXQ).
    #[must_use]
    pub fn from_path(path: &str) -> Option<Format> {
        let ext = path.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "pgn" => Some(Format::Pgn(Notation::Chinese)),
            "xqf" => Some(Format::Xqf),
            "ubb" | "dhtmlxq" => Some(Format::DhtmlXq),
            _ => None,
        }
    }
}

/// Reads games from bytes in `format` (PGN and DhtmlXQ may hold several; XQF holds one).
/// [`RecordError::Unwritable`] is never returned here.
pub fn import(format: Format, bytes: &[u8]) -> Result<Vec<Game>, RecordError> {
    match format {
        Format::Pgn(_) => {
            let text = std::str::from_utf8(bytes).map_err(|e| RecordError::Syntax {
                place: format!("byte {}", e.valid_up_to()),
                why: "the PGN is not UTF-8".to_string(),
            })?;
            pgn::parse_all(text)
        }
        Format::Xqf => xqf::read(bytes).map(|g| vec![g]),
        Format::DhtmlXq => {
            let text = std::str::from_utf8(bytes).map_err(|e| RecordError::Syntax {
                place: format!("byte {}", e.valid_up_to()),
                why: "the DhtmlXQ text is not UTF-8".to_string(),
            })?;
            dhtmlxq::read(text)
        }
    }
}

/// Writes games in `format`: PGN holds them all (a blank line between games); XQF and DhtmlXQ
/// hold one each, so several games are an error there.
pub fn export(format: Format, games: &[Game]) -> Result<Vec<u8>, RecordError> {
    match format {
        Format::Pgn(n) => {
            let mut out = String::new();
            for (i, g) in games.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str(&pgn::write(g, n)?);
            }
            Ok(out.into_bytes())
        }
        Format::Xqf | Format::DhtmlXq => match games {
            [g] if format == Format::Xqf => xqf::write(g, &xqf::WriteOptions::default()),
            [g] => dhtmlxq::write(g).map(String::into_bytes),
            _ => Err(RecordError::Unwritable(format!(
                "{} games: this format holds one game per file",
                games.len()
            ))),
        },
    }
}

#[cfg(test)]
mod tests;
