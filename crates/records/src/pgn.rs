//! PGN of Chinese chess programs (the 象棋百科全书 / XQBase convention).
//!
//! ```text
//! [Game "Chinese Chess"]
//! [Event "2026 象甲联赛"]
//! [Round "3"]
//! [Board "1"]
//! [RedTeam "东城"]
//! [Red "赵一"]
//! [BlackTeam "西城"]
//! [Black "钱二"]
//! [Result "1-0"]
//! [Termination "checkmate"]
//! [Format "Chinese"]
//!
//! 1. 炮二平五 马８进７
//! 2. 马二进三 车９平８
//! 1-0
//! ```
//!
//! A game that did not start from the opening position has a `FEN` header; one where Black
//! moves first starts `1. ... 马８进７`; Black's file numbers are full-width digits. Reading accepts movetext in any of the three notations
//! (whatever `Format` says), move numbers (`1.`, `1...`, `1.炮二平五`), comments (`{…}`, `;…`),
//! variations (`(…)`, skipped: only the main line is kept), NAGs (`$1`) and `!`/`?` marks.

use std::fmt::Write as _;

use chuhe_rules::{Color, Move, Position};

use crate::{Game, GameResult, Notation, RecordError};

/// Writes one game with movetext in `notation`.
pub fn write(game: &Game, notation: Notation) -> Result<String, RecordError> {
    let positions = game.replay()?;
    let mut o = String::new();
    header(&mut o, "Game", "Chinese Chess");
    header(&mut o, "Event", &game.event);
    if !game.site.is_empty() {
        header(&mut o, "Site", &game.site);
    }
    if !game.date.is_empty() {
        header(&mut o, "Date", &game.date);
    }
    header(&mut o, "Round", &game.round);
    if !game.board.is_empty() {
        header(&mut o, "Board", &game.board);
    }
    if !game.red_team.is_empty() {
        header(&mut o, "RedTeam", &game.red_team);
    }
    header(&mut o, "Red", &game.red);
    if !game.black_team.is_empty() {
        header(&mut o, "BlackTeam", &game.black_team);
    }
    header(&mut o, "Black", &game.black);
    header(&mut o, "Result", game.result.as_pgn());
    if !game.reason.is_empty() {
        header(&mut o, "Termination", &game.reason);
    }
    if !game.opening.is_empty() {
        header(&mut o, "Opening", &game.opening);
    }
    if !game.from_start() {
        header(&mut o, "FEN", &game.fen);
    }
    header(&mut o, "Format", notation.format_name());
    for (k, v) in &game.extra {
        if is_header_name(k) && !RESERVED.contains(&k.as_str()) {
            header(&mut o, k, v);
        }
    }
    o.push('\n');
    let black_first = positions
        .first()
        .is_some_and(|p| p.side_to_move() == Color::Black);
    let mut n = 1u32;
    let mut i = 0;
    if black_first && !game.moves.is_empty() {
        let _ = writeln!(
            o,
            "1. ... {}",
            text(&positions[0], game.moves[0], notation)?
        );
        n = 2;
        i = 1;
    }
    while i < game.moves.len() {
        let _ = write!(o, "{n}. {}", text(&positions[i], game.moves[i], notation)?);
        if i + 1 < game.moves.len() {
            let _ = write!(
                o,
                " {}",
                text(&positions[i + 1], game.moves[i + 1], notation)?
            );
        }
        o.push('\n');
        i += 2;
        n += 1;
    }
    o.push_str(game.result.as_pgn());
    o.push('\n');
    Ok(o)
}

/// Headers the writer sets itself (an `extra` of that name is not written twice).
const RESERVED: [&str; 16] = [
    "Game",
    "Event",
    "Site",
    "Date",
    "Round",
    "Board",
    "RedTeam",
    "Red",
    "BlackTeam",
    "Black",
    "Result",
    "Termination",
    "Opening",
    "FEN",
    "Format",
    "",
];

fn is_header_name(k: &str) -> bool {
    !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn header(out: &mut String, key: &str, value: &str) {
    let v: String = value
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    let _ = writeln!(out, "[{key} \"{v}\"]");
}

fn text(pos: &Position, m: Move, n: Notation) -> Result<String, RecordError> {
    let r = match n {
        // Black's file numbers in full-width digits (马８进７), as the programs write them.
        Notation::Chinese => pos.to_chinese(m).map(|t| {
            t.chars()
                .map(|c| match c.to_digit(10) {
                    Some(d) => char::from_u32(0xFF10 + d).unwrap_or(c),
                    None => c,
                })
                .collect()
        }),
        Notation::Wxf => pos.to_wxf(m),
        Notation::Iccs => {
            let s = m.to_iccs().to_ascii_uppercase();
            return Ok(format!("{}-{}", &s[..2], &s[2..]));
        }
    };
    r.map_err(|e| RecordError::Unwritable(e.to_string()))
}

/// Decodes a PGN file's bytes: UTF-8 (a byte-order mark is dropped), else GB18030 (which
/// covers GBK and GB2312), the encoding Chinese chess programs write.
#[must_use]
pub fn decode(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => encoding_rs::GB18030
            .decode_without_bom_handling(bytes)
            .0
            .into_owned(),
    }
}

/// Reads one game (the input must hold exactly one).
pub fn parse(text: &str) -> Result<Game, RecordError> {
    let mut games = parse_all(text)?;
    match games.len() {
        1 => Ok(games.remove(0)),
        n => Err(RecordError::Syntax {
            place: "the input".to_string(),
            why: format!("{n} games where one was expected"),
        }),
    }
}

/// Reads every game of a PGN text. All or nothing: the first bad header or move anywhere is
/// the error, with its game, line and column.
pub fn parse_all(text: &str) -> Result<Vec<Game>, RecordError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lx = Lexer {
        chars: text.char_indices().peekable(),
        line: 1,
        col: 1,
    };
    let mut games = Vec::new();
    let mut cur = PgnGameDraft::default();
    while let Some(tok) = lx.next_token(games.len() + 1)? {
        match tok.kind {
            Tok::Header(k, v) => {
                if cur.in_moves {
                    games.push(cur.finish(games.len() + 1)?);
                    cur = PgnGameDraft::default();
                }
                cur.headers.push((k, v, tok.line));
            }
            Tok::Word(w) => {
                if let Some(r) = GameResult::from_pgn(&w) {
                    cur.end = Some(r);
                    games.push(cur.finish(games.len() + 1)?);
                    cur = PgnGameDraft::default();
                    continue;
                }
                cur.in_moves = true;
                let Some(w) = strip_number(&w) else { continue };
                if w.starts_with('$') || w.is_empty() {
                    continue;
                }
                let w = w.trim_end_matches(['!', '?']);
                if w.is_empty() {
                    continue;
                }
                cur.words.push((w.to_string(), tok.line, tok.col));
            }
        }
    }
    if !cur.headers.is_empty() || !cur.words.is_empty() {
        games.push(cur.finish(games.len() + 1)?);
    }
    if games.is_empty() {
        return Err(RecordError::Empty);
    }
    Ok(games)
}

/// Drops a leading move number (`12.`, `12...`, `...`); `None` when nothing is left.
fn strip_number(w: &str) -> Option<&str> {
    let digits = w.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = if digits.len() < w.len() && digits.starts_with('.') {
        digits.trim_start_matches(['.', '。'])
    } else if w.starts_with("..") {
        w.trim_start_matches('.')
    } else {
        w
    };
    if rest.is_empty() { None } else { Some(rest) }
}

/// One game of a PGN text as read so far: its headers and its movetext's words, with where
/// each stands, and its result when the movetext gave it.
#[derive(Default)]
struct PgnGameDraft {
    headers: Vec<(String, String, usize)>,
    words: Vec<(String, usize, usize)>,
    in_moves: bool,
    end: Option<GameResult>,
}

impl PgnGameDraft {
    fn finish(self, index: usize) -> Result<Game, RecordError> {
        let mut g = Game::default();
        let mut result_header = None;
        for (k, v, line) in self.headers {
            match k.as_str() {
                "Game" | "Format" => {}
                "FEN" => g.fen = v,
                "Result" => {
                    let r = GameResult::from_pgn(&v).ok_or_else(|| RecordError::Syntax {
                        place: format!("game {index}, line {line}"),
                        why: format!("{v:?} is not a result (1-0, 0-1, 1/2-1/2, 0-0 or *)"),
                    })?;
                    result_header = Some(r);
                }
                _ => g.set_header(&k, v),
            }
        }
        g.result = match (result_header, self.end) {
            (Some(r), _) | (None, Some(r)) => r,
            (None, None) => GameResult::Unknown,
        };
        let mut pos = g.start_position().map_err(|e| match e {
            RecordError::BadFen { fen, why } => RecordError::BadFen {
                fen,
                why: format!("game {index}: {why}"),
            },
            e => e,
        })?;
        let black_first = pos.side_to_move() == Color::Black;
        for (i, (w, line, col)) in self.words.into_iter().enumerate() {
            let m = pos.parse_move(&w).map_err(|e| RecordError::BadMove {
                number: number_of(i, black_first),
                side: pos.side_to_move(),
                text: w.clone(),
                place: format!("game {index}, line {line}, column {col}"),
                why: crate::notation_why(&e),
            })?;
            if let Err(e) = pos.play_mut(m) {
                return Err(RecordError::BadMove {
                    number: number_of(i, black_first),
                    side: pos.side_to_move(),
                    text: w,
                    place: format!("game {index}, line {line}, column {col}"),
                    why: e.reason.to_string(),
                });
            }
            g.moves.push(m);
        }
        Ok(g)
    }
}

/// The PGN move number of ply `i` (from 0).
pub(crate) fn number_of(i: usize, black_first: bool) -> u32 {
    let i = u32::try_from(i).unwrap_or(u32::MAX - 1);
    (i + u32::from(black_first)) / 2 + 1
}

enum Tok {
    Header(String, String),
    Word(String),
}

struct Token {
    kind: Tok,
    line: usize,
    col: usize,
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
    line: usize,
    col: usize,
}

impl Lexer<'_> {
    fn bump(&mut self) -> Option<char> {
        let (_, c) = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().map(|&(_, c)| c)
    }

    fn place(&self, game: usize) -> String {
        format!("game {game}, line {}, column {}", self.line, self.col)
    }

    fn next_token(&mut self, game: usize) -> Result<Option<Token>, RecordError> {
        loop {
            let Some(c) = self.peek() else {
                return Ok(None);
            };
            let (line, col) = (self.line, self.col);
            match c {
                c if c.is_whitespace() => {
                    self.bump();
                }
                '{' => {
                    let place = self.place(game);
                    self.bump();
                    self.skip_comment(&place)?;
                }
                ';' => {
                    while let Some(c) = self.bump() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                '(' => {
                    let place = self.place(game);
                    self.skip_variation(&place)?;
                }
                ')' => {
                    return Err(RecordError::Syntax {
                        place: self.place(game),
                        why: "a ')' closes no variation".to_string(),
                    });
                }
                '[' => {
                    let (k, v) = self.header(game)?;
                    return Ok(Some(Token {
                        kind: Tok::Header(k, v),
                        line,
                        col,
                    }));
                }
                _ => {
                    let mut w = String::new();
                    while let Some(c) = self.peek() {
                        if c.is_whitespace() || matches!(c, '{' | '(' | ')' | '[' | ';') {
                            break;
                        }
                        w.push(c);
                        self.bump();
                    }
                    return Ok(Some(Token {
                        kind: Tok::Word(w),
                        line,
                        col,
                    }));
                }
            }
        }
    }

    fn skip_comment(&mut self, opened: &str) -> Result<(), RecordError> {
        loop {
            match self.bump() {
                Some('}') => return Ok(()),
                Some(_) => {}
                None => {
                    return Err(RecordError::Truncated {
                        place: opened.to_string(),
                        why: "a comment '{' is never closed".to_string(),
                    });
                }
            }
        }
    }

    fn skip_variation(&mut self, opened: &str) -> Result<(), RecordError> {
        let mut depth = 0usize;
        loop {
            match self.bump() {
                Some('(') => depth += 1,
                Some(')') => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Some('{') => self.skip_comment(opened)?,
                Some(_) => {}
                None => {
                    return Err(RecordError::Truncated {
                        place: opened.to_string(),
                        why: "a variation '(' is never closed".to_string(),
                    });
                }
            }
        }
    }

    /// `[Key "value"]` (the value's `\"` and `\\` escaped).
    fn header(&mut self, game: usize) -> Result<(String, String), RecordError> {
        let start = self.place(game);
        self.bump(); // '['
        let bad = |why: &str| RecordError::Syntax {
            place: start.clone(),
            why: why.to_string(),
        };
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.bump();
        }
        let mut key = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                key.push(c);
                self.bump();
            } else {
                break;
            }
        }
        if key.is_empty() {
            return Err(bad("a header has no name (expected [Name \"value\"])"));
        }
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.bump();
        }
        if self.bump() != Some('"') {
            return Err(bad(&format!("header {key}: expected a quoted value")));
        }
        let mut value = String::new();
        loop {
            match self.bump() {
                Some('\\') => match self.bump() {
                    Some(c) => value.push(c),
                    None => {
                        return Err(RecordError::Truncated {
                            place: start,
                            why: format!("header {key} is never closed"),
                        });
                    }
                },
                Some('"') => break,
                Some('\n') | None => {
                    return Err(RecordError::Truncated {
                        place: start,
                        why: format!("header {key}: the value's quote is never closed"),
                    });
                }
                Some(c) => value.push(c),
            }
        }
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.bump();
        }
        if self.bump() != Some(']') {
            return Err(bad(&format!("header {key}: expected ']' after the value")));
        }
        Ok((key, value))
    }
}
