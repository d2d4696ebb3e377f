//! XQF, the binary game format of XQStudio (象棋演播室).
//!
//! Implemented from the published descriptions of the format: the field list of XQStudio's
//! `XQFRW.pas` header record (as quoted in the `cchess` Python package's reader, which names
//! it), and the elephantbase.net notes on XQF by Morning Yellow ("XQF 格式说明", the XQF→PGN
//! convertor's documentation). The facts used:
//!
//! - A 1024-byte header. Offsets: `0` the tag `XQ`; `2` the version; `3` KeyMask; `4..8`
//!   ProductId; `8..12` KeyOrA…D; `12` KeysSum; `13` KeyXY; `14` KeyXYf; `15` KeyXYt; `16..48`
//!   the 32 pieces' points; `48` the first move's number (u16); `50` who moves (0 Red, 1
//!   Black); `51` the result (0 unknown, 1 Red won, 2 Black won, 3 or 4 a draw); `64` the kind
//!   (0 whole game, 1 opening, 2 middle game, 3 ending). Pascal strings (a length byte, then
//!   GBK text) at `80` title (64), `208` event (64), `272` date (16), `288` site (16), `304`
//!   Red (16), `320` Black (16), `336` time rule (64), `400` Red's time (16), `416` Black's
//!   time (16), `464` commentator (16), `480` author (16).
//! - The pieces, in the order 车 马 相 仕 帅 仕 相 马 车 炮 炮 兵 兵 兵 兵 兵, Red's 16 then
//!   Black's 16; a point is `file * 10 + rank` (file 0–8 from Red's left, rank 0–9 from Red's
//!   back rank); more than 89 is a piece off the board.
//! - From offset 1024 the move tree in pre-order: records of four bytes (from, to, tag,
//!   reserved); the first is the root (no move; its comment is the game's). From is stored
//!   plus `0x18`, to plus `0x20`. Up to version 0x0A the tag's high nibble says "a next move
//!   follows", the low nibble "a variation follows", and every record is followed by a comment
//!   length (i32, little-endian) and the comment. From version 0x0B: tag `0x80` next move,
//!   `0x40` variation, `0x20` a comment follows (its length stored plus `KeyRMKSize`).
//! - Encryption, from version 0x0B: with `f(k) = (((((k·k)·3+9)·3+8)·2+1)·3+8)` (bytes,
//!   wrapping), `KeyXY = f(h.KeyXY)·h.KeyXY`, `KeyXYf = f(h.KeyXYf)·KeyXY`, `KeyXYt =
//!   f(h.KeyXYt)·KeyXYf`, `KeyRMKSize = (h.KeysSum·256 + h.KeyXY) mod 32000 + 767`. Piece
//!   points are stored plus `KeyXY`; from version 12 the 32 stored bytes are also rotated (the
//!   i-th stored byte is piece `(KeyXY + i + 1) mod 32`). Move from/to are stored plus
//!   `KeyXYf`/`KeyXYt` too. Every byte from offset 1024 on is stored plus `F32Keys[offset mod
//!   32]`, where `F32Keys[i]` is the i-th byte of `"[(C) Copyright Mr. Dong Shiwei.]"` AND
//!   `[KeysSum&KeyMask|KeyOrA, KeyXY&KeyMask|KeyOrB, KeyXYf&KeyMask|KeyOrC,
//!   KeyXYt&KeyMask|KeyOrD][i mod 4]` (the header's key bytes).
//!
//! Only the main line is read (variations are skipped). Texts chuhe keeps that XQF has no field
//! for (round, board, teams, the ruling's reason, a both-lose result, other headers, and any
//! text too long for its field) are written into the root comment as PGN header lines
//! (`[RedTeam "东城"]`), which this reader takes back; other readers show them as the comment.

use chuhe_rules::{Color, Move, PieceKind, Square};

use crate::{Game, GameResult, RecordError};

const HEADER: usize = 1024;
const COPYRIGHT: &[u8; 32] = b"[(C) Copyright Mr. Dong Shiwei.]";
/// Slot kinds, Red's order (Black's is the same): the back rank from the left, two cannons,
/// five pawns. DhtmlXQ's `binit` lists its pieces in the same order.
pub(crate) const SLOTS: [PieceKind; 16] = {
    let mut slots = [PieceKind::Pawn; 16];
    let mut i = 0;
    while i < PieceKind::BACK_RANK.len() {
        slots[i] = PieceKind::BACK_RANK[i];
        i += 1;
    }
    slots[9] = PieceKind::Cannon;
    slots[10] = PieceKind::Cannon;
    slots
};

/// The header's key bytes (all zero in an unencrypted file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Keys {
    /// KeyMask.
    pub mask: u8,
    /// KeyOrA…KeyOrD.
    pub or: [u8; 4],
    /// KeysSum.
    pub sum: u8,
    /// KeyXY.
    pub xy: u8,
    /// KeyXYf.
    pub xyf: u8,
    /// KeyXYt.
    pub xyt: u8,
}

/// How to write: the version (0x0A: plain; 0x0B and later: encrypted with `keys`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// The version byte.
    pub version: u8,
    /// The keys (used from version 0x0B; `sum` is replaced so that the four key bytes add up
    /// to a multiple of 256, as XQStudio's files have them).
    pub keys: Keys,
}

impl Default for WriteOptions {
    fn default() -> WriteOptions {
        WriteOptions {
            version: 0x0A,
            keys: Keys::default(),
        }
    }
}

/// The working keys derived from the header.
struct Derived {
    xy: u8,
    xyf: u8,
    xyt: u8,
    rmk: i64,
    f32: [u8; 32],
}

fn f(k: u8) -> u8 {
    let k2 = k.wrapping_mul(k);
    k2.wrapping_mul(3)
        .wrapping_add(9)
        .wrapping_mul(3)
        .wrapping_add(8)
        .wrapping_mul(2)
        .wrapping_add(1)
        .wrapping_mul(3)
        .wrapping_add(8)
}

fn derive(version: u8, k: &Keys) -> Derived {
    if version <= 0x0A {
        return Derived {
            xy: 0,
            xyf: 0,
            xyt: 0,
            rmk: 0,
            f32: [0; 32],
        };
    }
    let xy = f(k.xy).wrapping_mul(k.xy);
    let xyf = f(k.xyf).wrapping_mul(xy);
    let xyt = f(k.xyt).wrapping_mul(xyf);
    let rmk = (i64::from(k.sum) * 256 + i64::from(k.xy)) % 32000 + 767;
    let bytes = [
        (k.sum & k.mask) | k.or[0],
        (k.xy & k.mask) | k.or[1],
        (k.xyf & k.mask) | k.or[2],
        (k.xyt & k.mask) | k.or[3],
    ];
    let mut f32 = [0u8; 32];
    for (i, b) in f32.iter_mut().enumerate() {
        *b = COPYRIGHT[i] & bytes[i % 4];
    }
    Derived {
        xy,
        xyf,
        xyt,
        rmk,
        f32,
    }
}

fn keys_of(h: &[u8]) -> Keys {
    Keys {
        mask: h[3],
        or: [h[8], h[9], h[10], h[11]],
        sum: h[12],
        xy: h[13],
        xyf: h[14],
        xyt: h[15],
    }
}

fn pascal(h: &[u8], off: usize, size: usize) -> String {
    let n = usize::from(h[off]).min(size - 1);
    let raw = &h[off + 1..off + 1 + n];
    let raw = raw.split(|&b| b == 0).next().unwrap_or(raw);
    encoding_rs::GB18030
        .decode_without_bom_handling(raw)
        .0
        .trim()
        .to_string()
}

struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], RecordError> {
        if self.data.len() - self.at < n {
            return Err(RecordError::Truncated {
                place: format!("byte {}", HEADER + self.at),
                why: format!(
                    "{what} needs {n} bytes, {} are left",
                    self.data.len() - self.at
                ),
            });
        }
        let s = &self.data[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn comment(&mut self, minus: i64) -> Result<String, RecordError> {
        let place = HEADER + self.at;
        let b = self.take(4, "a comment's length")?;
        let n = i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])) - minus;
        if n == 0 {
            return Ok(String::new());
        }
        let left = self.data.len() - self.at;
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= left)
            .ok_or_else(|| RecordError::Syntax {
                place: format!("byte {place}"),
                why: format!("a comment of {n} bytes where {left} are left"),
            })?;
        let raw = self.take(n, "a comment")?;
        Ok(encoding_rs::GB18030
            .decode_without_bom_handling(raw)
            .0
            .into_owned())
    }
}

/// Reads an XQF file (any version; encrypted ones from 0x0B on): the header's texts and
/// pieces, and the main line, every move checked with the rules.
pub fn read(bytes: &[u8]) -> Result<Game, RecordError> {
    if bytes.len() < HEADER {
        if bytes.len() >= 2 && &bytes[..2] != b"XQ" {
            return Err(not_xqf());
        }
        return Err(RecordError::Truncated {
            place: format!("byte {}", bytes.len()),
            why: "an XQF header is 1024 bytes".to_string(),
        });
    }
    let h = &bytes[..HEADER];
    if &h[..2] != b"XQ" {
        return Err(not_xqf());
    }
    let version = h[2];
    let d = derive(version, &keys_of(h));

    // The pieces.
    let mut slots = [0xFFu8; 32];
    for (i, &b) in h[16..48].iter().enumerate() {
        let j = if version >= 12 {
            (usize::from(d.xy) + i + 1) & 31
        } else {
            i
        };
        slots[j] = b.wrapping_sub(d.xy);
    }
    let mut grid: [[Option<(Color, PieceKind)>; 9]; 10] = [[None; 9]; 10];
    for (i, &v) in slots.iter().enumerate() {
        if v > 89 {
            continue;
        }
        let (file, rank) = (usize::from(v / 10), usize::from(v % 10));
        let color = if i < 16 { Color::Red } else { Color::Black };
        if grid[rank][file].is_some() {
            return Err(RecordError::Syntax {
                place: format!("byte {}", 16 + i),
                why: format!("two pieces on one point ({})", point_name(v)),
            });
        }
        grid[rank][file] = Some((color, SLOTS[i % 16]));
    }

    // The move area, decrypted.
    let mut data = bytes[HEADER..].to_vec();
    for (i, b) in data.iter_mut().enumerate() {
        *b = b.wrapping_sub(d.f32[(HEADER + i) % 32]);
    }
    let mut c = Cursor { data: &data, at: 0 };
    let plain = version <= 0x0A;
    let mut raw_moves: Vec<(u8, u8, usize)> = Vec::new();
    let mut comment = String::new();
    let mut first = true;
    loop {
        let place = HEADER + c.at;
        let r = c.take(4, if first { "the root record" } else { "a move" })?;
        let (from, to, tag) = (r[0], r[1], r[2]);
        let (next, text) = if plain {
            (tag & 0xF0 != 0, c.comment(0)?)
        } else {
            let t = if tag & 0x20 != 0 {
                c.comment(d.rmk)?
            } else {
                String::new()
            };
            (tag & 0x80 != 0, t)
        };
        if first {
            comment = text;
            first = false;
        } else {
            let from = from.wrapping_sub(0x18).wrapping_sub(d.xyf);
            let to = to.wrapping_sub(0x20).wrapping_sub(d.xyt);
            raw_moves.push((from, to, place));
        }
        if !next {
            break;
        }
    }

    // The side to move: the first move's piece's, else the header's.
    let side = match raw_moves.first() {
        Some(&(from, _, _)) if from <= 89 => {
            match grid[usize::from(from % 10)][usize::from(from / 10)] {
                Some((c, _)) => c,
                None => header_side(h),
            }
        }
        _ => header_side(h),
    };
    let fen = fen_of(&grid, side);
    let mut game = Game {
        fen,
        ..Game::default()
    };
    let mut pos = game.start_position()?;
    let black_first = side == Color::Black;
    for (i, &(from, to, place)) in raw_moves.iter().enumerate() {
        let number = crate::pgn::number_of(i, black_first);
        let side = pos.side_to_move();
        let bad = |text: String, why: String| RecordError::BadMove {
            number,
            side,
            text,
            place: format!("byte {place}"),
            why,
        };
        let (Some(f), Some(t)) = (sq(from), sq(to)) else {
            return Err(bad(
                format!("{from:#04x}-{to:#04x}"),
                "not a point of the board".to_string(),
            ));
        };
        let m = Move::new(f, t);
        if let Err(e) = pos.play_mut(m) {
            return Err(bad(m.to_iccs(), e.reason.to_string()));
        }
        game.moves.push(m);
    }

    game.result = match h[51] {
        1 => GameResult::RedWins,
        2 => GameResult::BlackWins,
        3 | 4 => GameResult::Draw,
        _ => GameResult::Unknown,
    };
    game.event = pascal(h, 208, 64);
    game.date = pascal(h, 272, 16);
    game.site = pascal(h, 288, 16);
    game.red = pascal(h, 304, 16);
    game.black = pascal(h, 320, 16);
    for (off, size, key) in [
        (80, 64, "Title"),
        (336, 64, "TimeControl"),
        (400, 16, "RedTime"),
        (416, 16, "BlackTime"),
        (464, 16, "Annotator"),
        (480, 16, "Author"),
    ] {
        let v = pascal(h, off, size);
        if !v.is_empty() {
            game.set_header(key, v);
        }
    }
    let mut rest = Vec::new();
    for line in comment.lines() {
        match header_line(line) {
            Some((k, v)) if k == "Result" => {
                if let Some(r) = GameResult::from_pgn(&v) {
                    game.result = r;
                }
            }
            Some((k, v)) if k != "FEN" && k != "Game" && k != "Format" => game.set_header(&k, v),
            _ => rest.push(line),
        }
    }
    let rest = rest.join("\n");
    if !rest.trim().is_empty() {
        game.set_header("Comment", rest.trim().to_string());
    }
    Ok(game)
}

fn not_xqf() -> RecordError {
    RecordError::Syntax {
        place: "byte 0".to_string(),
        why: "not an XQF file (it does not start with \"XQ\")".to_string(),
    }
}

fn header_side(h: &[u8]) -> Color {
    if h[50] == 1 { Color::Black } else { Color::Red }
}

fn sq(v: u8) -> Option<Square> {
    if v > 89 {
        return None;
    }
    Square::new(v / 10, v % 10)
}

fn point_name(v: u8) -> String {
    sq(v).map_or_else(|| format!("{v}"), |s| s.to_string())
}

pub(crate) fn fen_of(grid: &[[Option<(Color, PieceKind)>; 9]; 10], side: Color) -> String {
    let mut s = String::new();
    for rank in (0..10).rev() {
        let mut empty = 0;
        for cell in &grid[rank] {
            match *cell {
                None => empty += 1,
                Some((c, k)) => {
                    if empty > 0 {
                        s.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    let ch = k.fen_char();
                    s.push(if c == Color::Red {
                        ch
                    } else {
                        ch.to_ascii_lowercase()
                    });
                }
            }
        }
        if empty > 0 {
            s.push(char::from(b'0' + empty));
        }
        if rank > 0 {
            s.push('/');
        }
    }
    s.push_str(if side == Color::Red {
        " w - - 0 1"
    } else {
        " b - - 0 1"
    });
    s
}

/// `[Key "value"]` on one line.
fn header_line(line: &str) -> Option<(String, String)> {
    let l = line.trim();
    let inner = l.strip_prefix('[')?.strip_suffix(']')?;
    let (k, v) = inner.split_once(' ')?;
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let v = v.trim().strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut it = v.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            out.push(it.next()?);
        } else {
            out.push(c);
        }
    }
    Some((k.to_string(), out))
}

/// GB18030 bytes of `s`, cut at a character so they fit `max` bytes; whether it was cut.
fn fit(s: &str, max: usize) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut buf = [0u8; 4];
    for ch in s.chars() {
        let e = encoding_rs::GB18030.encode(ch.encode_utf8(&mut buf)).0;
        if out.len() + e.len() > max {
            return (out, true);
        }
        out.extend_from_slice(&e);
    }
    (out, false)
}

/// Writes `v` as a Pascal string into the field; the header line to keep when it was cut.
fn field(h: &mut [u8], off: usize, size: usize, key: &str, v: &str) -> Option<(String, String)> {
    let (b, cut) = fit(v, size - 1);
    h[off] = u8::try_from(b.len()).unwrap_or(0);
    h[off + 1..off + 1 + b.len()].copy_from_slice(&b);
    cut.then(|| (key.to_string(), v.to_string()))
}

/// Writes a game as XQF (version and keys from `opts`).
pub fn write(game: &Game, opts: &WriteOptions) -> Result<Vec<u8>, RecordError> {
    let positions = game.replay()?;
    let start = &positions[0];
    let version = opts.version;
    let mut keys = if version <= 0x0A {
        Keys::default()
    } else {
        opts.keys
    };
    keys.sum = 0u8
        .wrapping_sub(keys.xy)
        .wrapping_sub(keys.xyf)
        .wrapping_sub(keys.xyt);
    let d = derive(version, &keys);
    let mut h = vec![0u8; HEADER];
    h[0] = b'X';
    h[1] = b'Q';
    h[2] = version;
    h[3] = keys.mask;
    h[8..12].copy_from_slice(&keys.or);
    h[12] = keys.sum;
    h[13] = keys.xy;
    h[14] = keys.xyf;
    h[15] = keys.xyt;

    // The pieces into their slots.
    let mut slots = [0xFFu8; 32];
    for (s, p) in start.pieces() {
        let base = if p.color == Color::Red { 0 } else { 16 };
        let slot = (0..16)
            .find(|&i| SLOTS[i] == p.kind && slots[base + i] == 0xFF)
            .ok_or_else(|| {
                RecordError::Unwritable(format!("too many {}s for XQF's piece slots", p.kind))
            })?;
        slots[base + slot] = s.file() * 10 + s.rank();
    }
    for (j, &slot) in slots.iter().enumerate() {
        let i = if version >= 12 {
            (j + 32 * 9 - usize::from(d.xy) - 1) % 32
        } else {
            j
        };
        h[16 + i] = slot.wrapping_add(d.xy);
    }
    h[48..50].copy_from_slice(&1u16.to_le_bytes());
    h[50] = u8::from(start.side_to_move() == Color::Black);
    h[51] = match game.result {
        GameResult::RedWins => 1,
        GameResult::BlackWins => 2,
        GameResult::Draw => 3,
        GameResult::BothLose | GameResult::Unknown => 0,
    };
    h[64] = if game.from_start() { 0 } else { 2 };

    // Texts: into their fields, and into the root comment what does not fit or has no field.
    let mut lines: Vec<(String, String)> = Vec::new();
    for (off, size, key, v) in [
        (208, 64, "Event", &game.event),
        (272, 16, "Date", &game.date),
        (288, 16, "Site", &game.site),
        (304, 16, "Red", &game.red),
        (320, 16, "Black", &game.black),
    ] {
        lines.extend(field(&mut h, off, size, key, v));
    }
    let mut comment_text = String::new();
    for (k, v) in &game.extra {
        match k.as_str() {
            "Title" => lines.extend(field(&mut h, 80, 64, k, v)),
            "TimeControl" => lines.extend(field(&mut h, 336, 64, k, v)),
            "RedTime" => lines.extend(field(&mut h, 400, 16, k, v)),
            "BlackTime" => lines.extend(field(&mut h, 416, 16, k, v)),
            "Annotator" => lines.extend(field(&mut h, 464, 16, k, v)),
            "Author" => lines.extend(field(&mut h, 480, 16, k, v)),
            "Comment" => comment_text.clone_from(v),
            _ => lines.push((k.clone(), v.clone())),
        }
    }
    for (k, v) in [
        ("Round", &game.round),
        ("Board", &game.board),
        ("RedTeam", &game.red_team),
        ("BlackTeam", &game.black_team),
        ("Termination", &game.reason),
        ("Opening", &game.opening),
    ] {
        if !v.is_empty() {
            lines.push((k.to_string(), v.clone()));
        }
    }
    if game.result == GameResult::BothLose {
        lines.push(("Result".to_string(), "0-0".to_string()));
    }
    let mut comment = String::new();
    for (k, v) in &lines {
        if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            let v: String = v.chars().filter(|c| !c.is_control()).collect();
            comment.push_str(&format!(
                "[{k} \"{}\"]\n",
                v.replace('\\', "\\\\").replace('"', "\\\"")
            ));
        }
    }
    comment.push_str(&comment_text);
    let comment = encoding_rs::GB18030.encode(&comment).0.into_owned();
    let comment_len = i64::try_from(comment.len())
        .ok()
        .and_then(|n| i32::try_from(n + d.rmk).ok())
        .ok_or_else(|| RecordError::Unwritable("the comment is too long".to_string()))?;

    // The move records: the root, then the main line.
    let plain = version <= 0x0A;
    let mut body = Vec::with_capacity(8 * (game.moves.len() + 1) + comment.len());
    let n = game.moves.len();
    let has_next = |i: usize| i < n;
    // Root.
    let tag = match (plain, has_next(0)) {
        (true, true) => 0xF0,
        (true, false) => 0,
        (false, next) => (if next { 0x80 } else { 0 }) | if comment.is_empty() { 0 } else { 0x20 },
    };
    body.extend_from_slice(&[
        0x18u8.wrapping_add(d.xyf),
        0x20u8.wrapping_add(d.xyt),
        tag,
        0,
    ]);
    if plain || !comment.is_empty() {
        body.extend_from_slice(&comment_len.to_le_bytes());
        body.extend_from_slice(&comment);
    }
    for (i, m) in game.moves.iter().enumerate() {
        let from = m.from().file() * 10 + m.from().rank();
        let to = m.to().file() * 10 + m.to().rank();
        let next = has_next(i + 1);
        let tag = match (plain, next) {
            (true, true) => 0xF0,
            (false, true) => 0x80,
            (_, false) => 0,
        };
        body.extend_from_slice(&[
            from.wrapping_add(0x18).wrapping_add(d.xyf),
            to.wrapping_add(0x20).wrapping_add(d.xyt),
            tag,
            0,
        ]);
        if plain {
            body.extend_from_slice(&0i32.to_le_bytes());
        }
    }
    for (i, b) in body.iter_mut().enumerate() {
        *b = b.wrapping_add(d.f32[(HEADER + i) % 32]);
    }
    h.extend_from_slice(&body);
    Ok(h)
}
