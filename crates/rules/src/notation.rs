//! Move notation in the context of a position: ICCS (`h2e2`), WXF (`C2=5`, `+R+2`, `27+1`) and
//! Chinese (炮二平五, 马8进7, 前车进一, 中兵平四, 一卒平5, 前兵七进一).
//!
//! Files are numbered from the mover's right: Red 一…九 (files i…a), Black 1…9 (files a…i).
//! 进/退 (`+`/`-`) give ranks moved for 车 炮 兵 帅 and the destination file for 马 相 仕;
//! 平 (`=`, also `.` on input) gives the destination file.

use crate::position::{IllegalReason, Position};
use crate::setup::push_u32;
use crate::types::{Color, Move, PieceKind, Square};

/// A move text that could not be read or does not name exactly one legal move.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotationError {
    /// The text is not in the notation's syntax.
    #[error("{text:?} is not a move in {notation} notation: {why}")]
    Syntax {
        /// The text as given.
        text: String,
        /// `"ICCS"`, `"WXF"`, `"Chinese"` or `"any"`.
        notation: &'static str,
        /// What was expected.
        why: String,
    },
    /// The text reads but names no piece of the side to move.
    #[error("{text:?}: {why}")]
    NoSuchPiece {
        /// The text as given.
        text: String,
        /// E.g. "red has no rook on file 2".
        why: String,
    },
    /// The text names a move that is impossible or illegal here.
    #[error("{text:?} ({mv}) is illegal: {reason}")]
    Illegal {
        /// The text as given.
        text: String,
        /// The move it names.
        mv: Move,
        /// Why it is illegal.
        reason: IllegalReason,
    },
    /// The text names a move no piece can make (e.g. a horse "moving" sideways).
    #[error("{text:?}: {why}")]
    Impossible {
        /// The text as given.
        text: String,
        /// Why.
        why: String,
    },
    /// More than one legal move fits the text.
    #[error("{text:?} is ambiguous: it fits {}", .candidates.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    Ambiguous {
        /// The text as given.
        text: String,
        /// The legal moves it fits.
        candidates: Vec<Move>,
    },
}

impl NotationError {
    /// Whether the error is about syntax (the text is not a move at all) rather than about the
    /// position.
    #[must_use]
    pub fn is_syntax(&self) -> bool {
        matches!(self, NotationError::Syntax { .. })
    }
}

impl Move {
    /// Reads ICCS syntax without a position: `h2e2`, `H2-E2` (case-insensitive, optional dash).
    pub fn from_iccs(text: &str) -> Result<Move, NotationError> {
        let t = text.trim();
        // The common form, four bytes without a dash, is read without copying it.
        if t.len() == 4 && t.is_ascii() {
            if let (Some(from), Some(to)) = (Square::from_iccs(&t[..2]), Square::from_iccs(&t[2..]))
            {
                return Ok(Move::new(from, to));
            }
        }
        let compact: String = t.chars().filter(|&c| c != '-').collect();
        let bad = || NotationError::Syntax {
            text: text.to_string(),
            notation: "ICCS",
            why: "expected from and to points like h2e2 (files a-i, ranks 0-9)".to_string(),
        };
        if compact.len() != 4 || !compact.is_ascii() || t.matches('-').count() > 1 {
            return Err(bad());
        }
        let from = Square::from_iccs(&compact[..2]).ok_or_else(bad)?;
        let to = Square::from_iccs(&compact[2..]).ok_or_else(bad)?;
        Ok(Move::new(from, to))
    }
}

impl Move {
    /// Reads Fairy-Stockfish's UCI coordinates, which number ranks 1–10 (`h3e3` = ICCS `h2e2`).
    pub fn from_fsf_uci(text: &str) -> Result<Move, NotationError> {
        let bad = || NotationError::Syntax {
            text: text.to_string(),
            notation: "Fairy-Stockfish UCI",
            why: "expected two points like h3e3 (files a-i, ranks 1-10)".to_string(),
        };
        let t = text.trim().as_bytes();
        let point = |i: usize| -> Option<(Square, usize)> {
            let file = *t.get(i)?;
            if !(b'a'..=b'i').contains(&file) {
                return None;
            }
            let digits = t[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 || digits > 2 {
                return None;
            }
            let rank: u8 = std::str::from_utf8(&t[i + 1..i + 1 + digits])
                .ok()?
                .parse()
                .ok()?;
            let sq = Square::new(file - b'a', rank.checked_sub(1)?)?;
            Some((sq, i + 1 + digits))
        };
        let (from, next) = point(0).ok_or_else(bad)?;
        let (to, end) = point(next).ok_or_else(bad)?;
        if end != t.len() {
            return Err(bad());
        }
        Ok(Move::new(from, to))
    }

    /// Writes Fairy-Stockfish's UCI coordinates (ranks 1–10).
    #[must_use]
    pub fn to_fsf_uci(self) -> String {
        format!(
            "{}{}{}{}",
            char::from(b'a' + self.from().file()),
            self.from().rank() + 1,
            char::from(b'a' + self.to().file()),
            self.to().rank() + 1
        )
    }
}

impl std::str::FromStr for Move {
    type Err = NotationError;
    /// ICCS syntax, see [`Move::from_iccs`].
    fn from_str(s: &str) -> Result<Move, NotationError> {
        Move::from_iccs(s)
    }
}

const RED_NUMERALS: [char; 9] = ['一', '二', '三', '四', '五', '六', '七', '八', '九'];

/// Direction of a move from the mover's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Forward,
    Backward,
    Sideways,
}

/// Which piece on a file, counted from the mover's front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PosWord {
    Front,
    Middle,
    Rear,
    /// 1-based from the front (pawns only, 4 or 5 on a file; also the WXF digit form).
    Nth(u8),
}

/// How the text picks the piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sel {
    /// By file number (mover's numbering, 1..=9).
    File(u8),
    /// By position on a file; the file is given or implied.
    Pos(PosWord, Option<u8>),
}

/// A parsed move text, before the position resolves it.
#[derive(Debug, Clone, Copy)]
struct Desc {
    kind: Option<PieceKind>,
    sel: Sel,
    op: Op,
    arg: u8,
}

/// The file number (1..=9) of `sq` for `color`: from that side's right.
fn file_number(color: Color, sq: Square) -> u8 {
    match color {
        Color::Red => 9 - sq.file(),
        Color::Black => sq.file() + 1,
    }
}

/// The board file (0..9) of file number `n` for `color`.
fn board_file(color: Color, n: u8) -> u8 {
    match color {
        Color::Red => 9 - n,
        Color::Black => n - 1,
    }
}

/// Ranks advanced by `from → to` from `color`'s point of view.
fn advance(color: Color, from: Square, to: Square) -> i8 {
    let d = to.rank() as i8 - from.rank() as i8;
    match color {
        Color::Red => d,
        Color::Black => -d,
    }
}

fn straight_mover(kind: PieceKind) -> bool {
    matches!(
        kind,
        PieceKind::Rook | PieceKind::Cannon | PieceKind::Pawn | PieceKind::King
    )
}

fn wxf_letter(kind: PieceKind) -> char {
    match kind {
        PieceKind::King => 'K',
        PieceKind::Advisor => 'A',
        PieceKind::Elephant => 'E',
        PieceKind::Horse => 'H',
        PieceKind::Rook => 'R',
        PieceKind::Cannon => 'C',
        PieceKind::Pawn => 'P',
    }
}

fn wxf_kind(c: char) -> Option<PieceKind> {
    Some(match c.to_ascii_uppercase() {
        'K' | 'G' => PieceKind::King,
        'A' => PieceKind::Advisor,
        'E' | 'B' => PieceKind::Elephant,
        'H' | 'N' => PieceKind::Horse,
        'R' => PieceKind::Rook,
        'C' => PieceKind::Cannon,
        'P' => PieceKind::Pawn,
        _ => return None,
    })
}

fn chinese_name(color: Color, kind: PieceKind) -> char {
    match (color, kind) {
        (_, PieceKind::Rook) => '车',
        (_, PieceKind::Horse) => '马',
        (_, PieceKind::Cannon) => '炮',
        (Color::Red, PieceKind::Elephant) => '相',
        (Color::Black, PieceKind::Elephant) => '象',
        (Color::Red, PieceKind::Advisor) => '仕',
        (Color::Black, PieceKind::Advisor) => '士',
        (Color::Red, PieceKind::King) => '帅',
        (Color::Black, PieceKind::King) => '将',
        (Color::Red, PieceKind::Pawn) => '兵',
        (Color::Black, PieceKind::Pawn) => '卒',
    }
}

fn chinese_kind(c: char) -> Option<PieceKind> {
    Some(match c {
        '车' | '車' | '俥' | '伡' => PieceKind::Rook,
        '马' | '馬' | '傌' | '㐷' => PieceKind::Horse,
        '炮' | '砲' | '包' => PieceKind::Cannon,
        '相' | '象' => PieceKind::Elephant,
        '仕' | '士' => PieceKind::Advisor,
        '帅' | '帥' | '将' | '將' => PieceKind::King,
        '兵' | '卒' => PieceKind::Pawn,
        _ => return None,
    })
}

/// A digit 1..=9 in any accepted form: ASCII, full-width, or a Chinese numeral.
fn numeral(c: char) -> Option<u8> {
    if let Some(i) = RED_NUMERALS.iter().position(|&n| n == c) {
        return Some(i as u8 + 1);
    }
    let c = match c {
        '１'..='９' => char::from_u32(c as u32 - '１' as u32 + '1' as u32)?,
        _ => c,
    };
    match c {
        '1'..='9' => Some(c as u8 - b'0'),
        _ => None,
    }
}

fn number_text(color: Color, n: u8) -> char {
    match color {
        Color::Red => RED_NUMERALS[(n - 1) as usize],
        Color::Black => char::from(b'0' + n),
    }
}

/// How a piece on a file with others of its kind is named.
#[derive(Debug, Clone, Copy)]
struct Tandem {
    /// 0-based index from the front.
    index: u8,
    /// How many of the kind stand on the file.
    count: u8,
    /// Whether another file also holds two or more (pawns: the file number is then kept).
    other_files: bool,
}

impl Position {
    /// Own pieces of `kind` on board file `file`, front first.
    fn on_file(&self, color: Color, kind: PieceKind, file: u8) -> Vec<Square> {
        let mut v: Vec<Square> = self
            .by_piece(crate::types::Piece::new(color, kind))
            .filter(|s| s.file() == file)
            .collect();
        v.sort_by_key(|s| match color {
            Color::Red => -(s.rank() as i8),
            Color::Black => s.rank() as i8,
        });
        v
    }

    /// Whether the piece on `from` needs front/rear naming, and how. Counts with the
    /// bitboard of the kind, without allocating.
    fn tandem(&self, color: Color, kind: PieceKind, from: Square) -> Option<Tandem> {
        if !matches!(
            kind,
            PieceKind::Rook | PieceKind::Horse | PieceKind::Cannon | PieceKind::Pawn
        ) {
            return None;
        }
        let pieces = self.by_piece(crate::types::Piece::new(color, kind));
        if !pieces.contains(from) {
            return None;
        }
        let mut per_file = [0u8; 9];
        // Pieces on `from`'s file in front of it (from the mover's side).
        let mut ahead = 0u8;
        for s in pieces {
            per_file[s.file() as usize] += 1;
            let in_front = match color {
                Color::Red => s.rank() > from.rank(),
                Color::Black => s.rank() < from.rank(),
            };
            if s.file() == from.file() && in_front {
                ahead += 1;
            }
        }
        let count = per_file[from.file() as usize];
        if count < 2 {
            return None;
        }
        let other_files = kind == PieceKind::Pawn
            && per_file
                .iter()
                .enumerate()
                .any(|(f, &n)| f != from.file() as usize && n >= 2);
        Some(Tandem {
            index: ahead,
            count,
            other_files,
        })
    }

    /// Op and argument of a legal move.
    fn op_arg(&self, color: Color, kind: PieceKind, m: Move) -> (Op, u8) {
        let adv = advance(color, m.from(), m.to());
        let op = match adv {
            0 => Op::Sideways,
            a if a > 0 => Op::Forward,
            _ => Op::Backward,
        };
        let arg = if op == Op::Sideways || !straight_mover(kind) {
            file_number(color, m.to())
        } else {
            adv.unsigned_abs()
        };
        (op, arg)
    }

    fn mover(&self, m: Move) -> Result<(Color, PieceKind), NotationError> {
        if let Err(reason) = self.check_move(m) {
            return Err(NotationError::Illegal {
                text: m.to_string(),
                mv: m,
                reason,
            });
        }
        let p = self
            .piece_at(m.from())
            .ok_or_else(|| NotationError::Illegal {
                text: m.to_string(),
                mv: m,
                reason: IllegalReason::NoPiece,
            })?;
        Ok((p.color, p.kind))
    }

    /// What both notations say of a legal move: who moves, which way and how far, and how it
    /// is told apart from others of its kind on its file.
    fn described(&self, m: Move) -> Result<Described, NotationError> {
        let (color, kind) = self.mover(m)?;
        let (op, arg) = self.op_arg(color, kind, m);
        Ok(Described {
            color,
            kind,
            m,
            op,
            arg,
            tandem: self.tandem(color, kind, m.from()),
        })
    }

    /// The WXF text of a legal move: `C2=5`, `H8+7`, `+R+2`, `-P=4`, `27+1`.
    pub fn to_wxf(&self, m: Move) -> Result<String, NotationError> {
        Ok(self.described(m)?.wxf())
    }

    /// The Chinese and the WXF text of a legal move ([`Position::to_chinese`],
    /// [`Position::to_wxf`]), with the move checked once.
    pub fn to_chinese_and_wxf(&self, m: Move) -> Result<(String, String), NotationError> {
        let d = self.described(m)?;
        Ok((d.chinese(), d.wxf()))
    }

    /// The Chinese text of a legal move: 炮二平五, 马8进7, 前车进一, 中兵平四, 一卒平5.
    pub fn to_chinese(&self, m: Move) -> Result<String, NotationError> {
        Ok(self.described(m)?.chinese())
    }

    /// Reads an ICCS move (`h2e2`, `H2-E2`) and checks it is legal here.
    pub fn parse_iccs(&self, text: &str) -> Result<Move, NotationError> {
        self.legal_as_read(text, Move::from_iccs(text)?)
    }

    /// `m`, read from `text`, if it is legal here.
    fn legal_as_read(&self, text: &str, m: Move) -> Result<Move, NotationError> {
        self.check_move(m)
            .map_err(|reason| NotationError::Illegal {
                text: text.to_string(),
                mv: m,
                reason,
            })?;
        Ok(m)
    }

    /// Reads a WXF move: `C2=5` (also `C2.5`), `H8+7`, tandem `+R+2`/`-R+1` (also `R++2`,
    /// `R-+1`), pawns by position and file `27+1`. Letters `K A E/B H/N R C P`, any case.
    pub fn parse_wxf(&self, text: &str) -> Result<Move, NotationError> {
        let desc = parse_wxf_desc(text)?;
        self.resolve(text, desc)
    }

    /// Reads a Chinese move: 炮二平五, 马8进7, 前车进一, 后马退四, 中兵平四, 一卒平5, 前兵七进一.
    /// Accepts both piece-name sets (车/車 马/馬 炮/砲 相/象 仕/士 兵/卒 帅/将), full-width
    /// digits and either numeral style for either side.
    pub fn parse_chinese(&self, text: &str) -> Result<Move, NotationError> {
        let desc = parse_chinese_desc(text)?;
        self.resolve(text, desc)
    }

    /// Reads a move in any of the three notations (tried as ICCS, then Chinese, then WXF).
    pub fn parse_move(&self, text: &str) -> Result<Move, NotationError> {
        let t = text.trim();
        if let Ok(m) = Move::from_iccs(t) {
            return self.legal_as_read(t, m);
        }
        if !t.is_ascii() {
            return self.parse_chinese(t);
        }
        match self.parse_wxf(t) {
            Err(NotationError::Syntax { .. }) => Err(NotationError::Syntax {
                text: text.to_string(),
                notation: "any",
                why: "not an ICCS, WXF or Chinese move".to_string(),
            }),
            other => other,
        }
    }

    /// Finds the one legal move a description names.
    fn resolve(&self, text: &str, d: Desc) -> Result<Move, NotationError> {
        let color = self.side_to_move();
        let no_piece = |why: String| NotationError::NoSuchPiece {
            text: text.to_string(),
            why,
        };
        let kinds: Vec<PieceKind> = match d.kind {
            Some(k) => vec![k],
            None => vec![PieceKind::Pawn],
        };
        let mut pieces: Vec<(PieceKind, Square)> = Vec::new();
        for &kind in &kinds {
            match d.sel {
                Sel::File(n) => {
                    for s in self.on_file(color, kind, board_file(color, n)) {
                        pieces.push((kind, s));
                    }
                }
                Sel::Pos(word, file) => {
                    let files: Vec<u8> = match file {
                        Some(n) => vec![board_file(color, n)],
                        None => (0..9)
                            .filter(|&f| self.on_file(color, kind, f).len() >= 2)
                            .collect(),
                    };
                    for f in files {
                        let same = self.on_file(color, kind, f);
                        let n = same.len();
                        let idx = match word {
                            PosWord::Front if n >= 2 => Some(0),
                            PosWord::Rear if n >= 2 => Some(n - 1),
                            PosWord::Middle if n == 3 => Some(1),
                            PosWord::Nth(k) if (k as usize) <= n && n >= 2 => Some(k as usize - 1),
                            _ => None,
                        };
                        if let Some(i) = idx {
                            pieces.push((kind, same[i]));
                        }
                    }
                }
            }
        }
        if pieces.is_empty() {
            let kind = kinds[0];
            return Err(no_piece(match d.sel {
                Sel::File(n) => format!("{color} has no {kind} on file {n}"),
                Sel::Pos(_, Some(n)) => {
                    format!("{color} has no {kind} in that position on file {n}")
                }
                Sel::Pos(..) => format!("{color} has no {kind} in that position on any file"),
            }));
        }
        let mut legal: Vec<Move> = Vec::new();
        let mut first_illegal: Option<NotationError> = None;
        for &(kind, from) in &pieces {
            match target(color, kind, from, d.op, d.arg) {
                None => {
                    if first_illegal.is_none() {
                        first_illegal = Some(NotationError::Impossible {
                            text: text.to_string(),
                            why: format!("the {kind} on {from} cannot move like that"),
                        });
                    }
                }
                Some(to) => {
                    let m = Move::new(from, to);
                    match self.check_move(m) {
                        Ok(()) => legal.push(m),
                        Err(reason) => {
                            if !matches!(first_illegal, Some(NotationError::Illegal { .. })) {
                                first_illegal = Some(NotationError::Illegal {
                                    text: text.to_string(),
                                    mv: m,
                                    reason,
                                });
                            }
                        }
                    }
                }
            }
        }
        match legal.len() {
            1 => Ok(legal[0]),
            0 => Err(first_illegal.unwrap_or_else(|| no_piece("no piece fits".to_string()))),
            _ => Err(NotationError::Ambiguous {
                text: text.to_string(),
                candidates: legal,
            }),
        }
    }
}

/// Where `kind` on `from` lands for an op and argument, if the geometry allows it.
fn target(color: Color, kind: PieceKind, from: Square, op: Op, arg: u8) -> Option<Square> {
    let fwd: i8 = match color {
        Color::Red => 1,
        Color::Black => -1,
    };
    if op == Op::Sideways {
        if !straight_mover(kind) || arg == 0 || arg > 9 {
            return None;
        }
        let to = Square::new(board_file(color, arg), from.rank())?;
        return if to == from { None } else { Some(to) };
    }
    let sign = if op == Op::Forward { fwd } else { -fwd };
    if straight_mover(kind) {
        return from.offset(0, sign * arg as i8);
    }
    if arg == 0 || arg > 9 {
        return None;
    }
    let df = board_file(color, arg) as i8 - from.file() as i8;
    let dr = match (kind, df.abs()) {
        (PieceKind::Horse, 1) => 2,
        (PieceKind::Horse, 2) => 1,
        (PieceKind::Elephant, 2) => 2,
        (PieceKind::Advisor, 1) => 1,
        _ => return None,
    };
    from.offset(df, sign * dr)
}

fn syntax(text: &str, notation: &'static str, why: &str) -> NotationError {
    NotationError::Syntax {
        text: text.to_string(),
        notation,
        why: why.to_string(),
    }
}

fn wxf_op(c: char) -> Option<Op> {
    match c {
        '+' => Some(Op::Forward),
        '-' => Some(Op::Backward),
        '=' | '.' => Some(Op::Sideways),
        _ => None,
    }
}

fn parse_wxf_desc(text: &str) -> Result<Desc, NotationError> {
    const WHY: &str = "expected e.g. C2=5, H8+7, +R+2, R++2 or 27+1";
    let c: Vec<char> = text.trim().chars().collect();
    let err = || syntax(text, "WXF", WHY);
    if c.len() != 4 {
        return Err(err());
    }
    let digit = |ch: char| {
        ch.to_digit(10)
            .filter(|d| (1..=9).contains(d))
            .map(|d| d as u8)
    };
    let op = wxf_op(c[2]).ok_or_else(err)?;
    let arg = digit(c[3]).ok_or_else(err)?;
    let tandem = |ch: char| match ch {
        '+' => Some(PosWord::Front),
        '-' => Some(PosWord::Rear),
        _ => None,
    };
    let (kind, sel) = if let (Some(k), Some(f)) = (wxf_kind(c[0]), digit(c[1])) {
        (Some(k), Sel::File(f))
    } else if let (Some(w), Some(k)) = (tandem(c[0]), wxf_kind(c[1])) {
        (Some(k), Sel::Pos(w, None))
    } else if let (Some(k), Some(w)) = (wxf_kind(c[0]), tandem(c[1])) {
        (Some(k), Sel::Pos(w, None))
    } else if let (Some(n), Some(f)) = (digit(c[0]), digit(c[1])) {
        (Some(PieceKind::Pawn), Sel::Pos(PosWord::Nth(n), Some(f)))
    } else {
        return Err(err());
    };
    Ok(Desc { kind, sel, op, arg })
}

fn normalize_chinese(text: &str) -> String {
    text.trim()
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match c {
            '進' => '进',
            '後' => '后',
            _ => c,
        })
        .collect()
}

fn parse_chinese_desc(text: &str) -> Result<Desc, NotationError> {
    const WHY: &str = "expected e.g. 炮二平五, 马8进7, 前车进一, 中兵平四 or 前兵七进一";
    let err = || syntax(text, "Chinese", WHY);
    let c: Vec<char> = normalize_chinese(text).chars().collect();
    if c.len() != 4 && c.len() != 5 {
        return Err(err());
    }
    let n = c.len();
    let op = match c[n - 2] {
        '进' => Op::Forward,
        '退' => Op::Backward,
        '平' => Op::Sideways,
        _ => return Err(err()),
    };
    let arg = numeral(c[n - 1]).ok_or_else(err)?;
    let word = |ch: char| match ch {
        '前' => Some(PosWord::Front),
        '中' => Some(PosWord::Middle),
        '后' => Some(PosWord::Rear),
        _ => numeral(ch).filter(|&k| k <= 5).map(PosWord::Nth),
    };
    let (kind, sel) = if n == 4 {
        if let (Some(k), Some(f)) = (chinese_kind(c[0]), numeral(c[1])) {
            (k, Sel::File(f))
        } else if let (Some(w), Some(k)) = (word(c[0]), chinese_kind(c[1])) {
            (k, Sel::Pos(w, None))
        } else {
            return Err(err());
        }
    } else if let (Some(w), Some(k), Some(f)) = (word(c[0]), chinese_kind(c[1]), numeral(c[2])) {
        (k, Sel::Pos(w, Some(f)))
    } else {
        return Err(err());
    };
    if let Sel::Pos(PosWord::Nth(_), _) = sel {
        if kind != PieceKind::Pawn {
            return Err(syntax(
                text,
                "Chinese",
                "only pawns are counted 一二三四五 from the front",
            ));
        }
    }
    Ok(Desc {
        kind: Some(kind),
        sel,
        op,
        arg,
    })
}

/// A legal move as the notations describe it ([`Position::to_chinese_and_wxf`]).
struct Described {
    color: Color,
    kind: PieceKind,
    m: Move,
    op: Op,
    arg: u8,
    tandem: Option<Tandem>,
}

impl Described {
    /// Its WXF text.
    fn wxf(&self) -> String {
        let op = match self.op {
            Op::Forward => '+',
            Op::Backward => '-',
            Op::Sideways => '=',
        };
        let mut s = String::with_capacity(4);
        match self.tandem {
            None => {
                s.push(wxf_letter(self.kind));
                push_u32(&mut s, file_number(self.color, self.m.from()).into());
            }
            Some(t) if self.kind == PieceKind::Pawn && (t.count >= 3 || t.other_files) => {
                push_u32(&mut s, (t.index + 1).into());
                push_u32(&mut s, file_number(self.color, self.m.from()).into());
            }
            Some(t) => {
                s.push(if t.index == 0 { '+' } else { '-' });
                s.push(wxf_letter(self.kind));
            }
        }
        s.push(op);
        push_u32(&mut s, self.arg.into());
        s
    }

    /// Its Chinese text.
    fn chinese(&self) -> String {
        let op = match self.op {
            Op::Forward => '进',
            Op::Backward => '退',
            Op::Sideways => '平',
        };
        let name = chinese_name(self.color, self.kind);
        let file = number_text(self.color, file_number(self.color, self.m.from()));
        // At most five characters of at most three bytes each.
        let mut s = String::with_capacity(15);
        match self.tandem {
            None => {
                s.push(name);
                s.push(file);
            }
            Some(t) => {
                s.push(match (t.count, t.index) {
                    (2, 0) | (3, 0) => '前',
                    (2, _) | (3, 2) => '后',
                    (3, _) => '中',
                    (_, i) => RED_NUMERALS[i as usize],
                });
                s.push(name);
                if t.other_files {
                    s.push(file);
                }
            }
        }
        s.push(op);
        s.push(number_text(self.color, self.arg));
        s
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn mv(s: &str) -> Move {
        Move::from_iccs(s).unwrap()
    }

    /// `tandem`, `to_wxf` and `to_chinese` as they were before they stopped allocating
    /// (a sorted `Vec` per file, `format!`): the reference the new ones must equal.
    fn reference_tandem(
        pos: &Position,
        color: Color,
        kind: PieceKind,
        from: Square,
    ) -> Option<Tandem> {
        if !matches!(
            kind,
            PieceKind::Rook | PieceKind::Horse | PieceKind::Cannon | PieceKind::Pawn
        ) {
            return None;
        }
        let same = pos.on_file(color, kind, from.file());
        if same.len() < 2 {
            return None;
        }
        let index = same.iter().position(|&s| s == from)? as u8;
        let other_files = kind == PieceKind::Pawn
            && (0..9u8).any(|f| f != from.file() && pos.on_file(color, kind, f).len() >= 2);
        Some(Tandem {
            index,
            count: same.len() as u8,
            other_files,
        })
    }

    fn reference_wxf(pos: &Position, m: Move) -> String {
        let (color, kind) = pos.mover(m).unwrap();
        let (op, arg) = pos.op_arg(color, kind, m);
        let op = match op {
            Op::Forward => '+',
            Op::Backward => '-',
            Op::Sideways => '=',
        };
        let head = match reference_tandem(pos, color, kind, m.from()) {
            None => format!("{}{}", wxf_letter(kind), file_number(color, m.from())),
            Some(t) if kind == PieceKind::Pawn && (t.count >= 3 || t.other_files) => {
                format!("{}{}", t.index + 1, file_number(color, m.from()))
            }
            Some(t) => format!(
                "{}{}",
                if t.index == 0 { '+' } else { '-' },
                wxf_letter(kind)
            ),
        };
        format!("{head}{op}{arg}")
    }

    fn reference_chinese(pos: &Position, m: Move) -> String {
        let (color, kind) = pos.mover(m).unwrap();
        let (op, arg) = pos.op_arg(color, kind, m);
        let op = match op {
            Op::Forward => '进',
            Op::Backward => '退',
            Op::Sideways => '平',
        };
        let name = chinese_name(color, kind);
        let file = number_text(color, file_number(color, m.from()));
        let head = match reference_tandem(pos, color, kind, m.from()) {
            None => format!("{name}{file}"),
            Some(t) => {
                let word = match (t.count, t.index) {
                    (2, 0) | (3, 0) => '前',
                    (2, _) | (3, 2) => '后',
                    (3, _) => '中',
                    (_, i) => RED_NUMERALS[i as usize],
                };
                if t.other_files {
                    format!("{word}{name}{file}")
                } else {
                    format!("{word}{name}")
                }
            }
        };
        format!("{head}{op}{}", number_text(color, arg))
    }

    #[test]
    fn move_texts_equal_the_reference() {
        // Pawn clusters, tandem pieces of every kind, and seeded random play from the start.
        let mut positions: Vec<Position> = [
            "3k5/9/4P4/4P4/4P4/4P4/4P4/9/9/4K4 w - - 0 1",
            "3k5/9/4P4/4P4/4P4/4P4/P8/9/9/4K4 w - - 0 1",
            "3k5/9/2P6/2P3P2/2P3P2/4R4/9/4R4/9/5K3 w - - 0 1",
            "3k5/9/9/2P1P4/2P1P4/9/4P4/9/9/5K3 w - - 0 1",
            "3k5/2N6/2N6/9/2C6/2C6/9/2R6/2R6/4K4 w - - 0 1",
        ]
        .iter()
        .map(|f| Position::from_fen(f).unwrap())
        .collect();
        let mut seed = 0x853c_49e6_748f_ea9bu64;
        for _ in 0..30 {
            let mut pos = Position::new();
            for _ in 0..120 {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                pos.play_unchecked(legal[(seed >> 11) as usize % legal.len()]);
                positions.push(pos.clone());
            }
        }
        let mut checked = 0;
        let mut tandems = 0;
        for pos in positions {
            for p in [pos.mirror(), pos] {
                for &m in p.legal_moves().iter() {
                    assert_eq!(p.to_wxf(m).unwrap(), reference_wxf(&p, m), "{}", p.to_fen());
                    assert_eq!(
                        p.to_chinese(m).unwrap(),
                        reference_chinese(&p, m),
                        "{}",
                        p.to_fen()
                    );
                    let piece = p.piece_at(m.from()).unwrap();
                    let t = p.tandem(piece.color, piece.kind, m.from());
                    let r = reference_tandem(&p, piece.color, piece.kind, m.from());
                    assert_eq!(
                        t.map(|t| (t.index, t.count, t.other_files)),
                        r.map(|t| (t.index, t.count, t.other_files)),
                        "{} {m}",
                        p.to_fen()
                    );
                    tandems += usize::from(t.is_some());
                    checked += 1;
                }
            }
        }
        assert!(checked > 50_000 && tandems > 1_000, "{checked} {tandems}");
    }

    #[test]
    fn fairy_stockfish_coordinates() {
        assert_eq!(Move::from_fsf_uci("h3e3").unwrap(), mv("h2e2"));
        assert_eq!(Move::from_fsf_uci("a10a9").unwrap(), mv("a9a8"));
        assert_eq!(mv("i9i0").to_fsf_uci(), "i10i1");
        for bad in ["h0e3", "h3e11", "h3", "j3e3", "h3e3x", ""] {
            assert!(Move::from_fsf_uci(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn opening_moves() {
        let pos = Position::new();
        assert_eq!(pos.to_chinese(mv("h2e2")).unwrap(), "炮二平五");
        assert_eq!(pos.to_wxf(mv("h2e2")).unwrap(), "C2=5");
        assert_eq!(pos.parse_chinese("炮二平五").unwrap(), mv("h2e2"));
        assert_eq!(pos.parse_wxf("C2=5").unwrap(), mv("h2e2"));
        assert_eq!(pos.parse_wxf("c2.5").unwrap(), mv("h2e2"));
        assert_eq!(pos.parse_chinese("馬二進三").unwrap(), mv("h0g2"));
        assert_eq!(pos.parse_chinese("砲２平５").unwrap(), mv("h2e2"));
        let pos = pos.play(mv("h2e2")).unwrap();
        assert_eq!(pos.to_chinese(mv("h9g7")).unwrap(), "马8进7");
        assert_eq!(pos.to_wxf(mv("h9g7")).unwrap(), "H8+7");
        assert_eq!(pos.parse_chinese("马8进7").unwrap(), mv("h9g7"));
        assert_eq!(pos.parse_chinese("馬８進７").unwrap(), mv("h9g7"));
    }

    #[test]
    fn tandem_rooks_and_pawns() {
        // Red rooks on e4 and e2, red pawns: three on file c (c5 c6 c7), two on g (g5 g6).
        let pos = Position::from_fen("3k5/9/2P6/2P3P2/2P3P2/4R4/9/4R4/9/5K3 w - - 0 1").unwrap();
        assert_eq!(pos.to_chinese(mv("e4e5")).unwrap(), "前车进一");
        assert_eq!(pos.to_wxf(mv("e4e5")).unwrap(), "+R+1");
        assert_eq!(pos.to_chinese(mv("e2e3")).unwrap(), "后车进一");
        assert_eq!(pos.parse_wxf("R++1").unwrap(), mv("e4e5"));
        assert_eq!(pos.parse_wxf("R-+1").unwrap(), mv("e2e3"));
        // Fairy-Stockfish names the file when only one of the two can make the move: accepted.
        assert_eq!(pos.parse_wxf("R5-2").unwrap(), mv("e2e0"));
        assert_eq!(pos.parse_chinese("车五退二").unwrap(), mv("e2e0"));
        assert_eq!(pos.to_chinese(mv("c6d6")).unwrap(), "中兵七平六");
        assert_eq!(pos.to_wxf(mv("c6d6")).unwrap(), "27=6");
        assert_eq!(pos.to_chinese(mv("g6g7")).unwrap(), "前兵三进一");
        assert_eq!(pos.parse_chinese("中兵七平六").unwrap(), mv("c6d6"));
        // Without the file, 前兵 names two pawns (files 七 and 三): say which.
        assert!(matches!(
            pos.parse_chinese("前兵进一"),
            Err(NotationError::Ambiguous { .. })
        ));
        // The file form is ambiguous for rooks on one file.
        assert!(matches!(
            pos.parse_chinese("车五进一"),
            Err(NotationError::Ambiguous { .. })
        ));
    }

    #[test]
    fn both_notations_at_once_are_each_alone() {
        let fens = [
            crate::START_FEN,
            "3k5/9/2P6/2P3P2/2P3P2/4R4/9/4R4/9/5K3 w - - 0 1",
            "3k5/9/2P6/2P3P2/2P3P2/4R4/9/4R4/9/5K3 b - - 0 1",
        ];
        for fen in fens {
            let pos = Position::from_fen(fen).unwrap();
            let moves = pos.legal_moves();
            assert!(!moves.is_empty());
            for &m in moves.iter() {
                assert_eq!(
                    pos.to_chinese_and_wxf(m).unwrap(),
                    (pos.to_chinese(m).unwrap(), pos.to_wxf(m).unwrap()),
                    "{fen} {m}"
                );
            }
        }
        let pos = Position::from_fen(crate::START_FEN).unwrap();
        assert!(pos.to_chinese_and_wxf(mv("a0a5")).is_err());
    }

    #[test]
    fn iccs_reads_the_same_with_or_without_the_short_path() {
        // Four ASCII bytes are read in place; anything else goes through the general reader.
        assert_eq!(mv("h2e2"), mv("H2E2"));
        assert_eq!(mv("h2e2"), mv("h2-e2"));
        assert_eq!(mv("h2e2"), mv(" h2e2 "));
        for bad in ["j2e2", "h2ex", "h-e2", "h2e", "h2e22", "炮2e", "炮e"] {
            let e = Move::from_iccs(bad).err();
            assert!(
                matches!(e, Some(NotationError::Syntax { .. })),
                "{bad}: {e:?}"
            );
        }
    }

    #[test]
    fn errors_say_why() {
        let pos = Position::new();
        assert!(pos.parse_chinese("炮二平").unwrap_err().is_syntax());
        assert!(matches!(
            pos.parse_chinese("车五进一"),
            Err(NotationError::NoSuchPiece { .. })
        ));
        assert!(matches!(
            pos.parse_chinese("马二平三"),
            Err(NotationError::Impossible { .. })
        ));
        assert!(matches!(
            pos.parse_chinese("车一进九"),
            Err(NotationError::Illegal { .. })
        ));
        assert!(matches!(
            pos.parse_iccs("h2h8"),
            Err(NotationError::Illegal { .. })
        ));
        assert!(pos.parse_iccs("z2e2").unwrap_err().is_syntax());
    }
}
