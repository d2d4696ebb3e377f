//! The small value types: colours, pieces, squares and moves.

use std::fmt;

/// A side. Red moves first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    /// Red (upper case in FEN, at the bottom of the diagram, ranks 0–4 are its half).
    Red = 0,
    /// Black (lower case in FEN, ranks 5–9 are its half).
    Black = 1,
}

impl Color {
    /// Both colours, Red first.
    pub const ALL: [Color; 2] = [Color::Red, Color::Black];

    /// The other side.
    #[inline]
    #[must_use]
    pub const fn other(self) -> Color {
        match self {
            Color::Red => Color::Black,
            Color::Black => Color::Red,
        }
    }

    /// 0 for Red, 1 for Black.
    #[inline]
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// `"red"` or `"black"`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Color::Red => "red",
            Color::Black => "black",
        }
    }
}

impl std::ops::Not for Color {
    type Output = Color;
    #[inline]
    fn not(self) -> Color {
        self.other()
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The seven kinds of piece (art. 1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PieceKind {
    /// 帅/将, FEN `K`.
    King = 0,
    /// 仕/士, FEN `A`.
    Advisor = 1,
    /// 相/象, FEN `B` (input also `E`).
    Elephant = 2,
    /// 马, FEN `N` (input also `H`).
    Horse = 3,
    /// 车, FEN `R`.
    Rook = 4,
    /// 炮, FEN `C`.
    Cannon = 5,
    /// 兵/卒, FEN `P`.
    Pawn = 6,
}

impl PieceKind {
    /// All kinds, in index order.
    pub const ALL: [PieceKind; 7] = [
        PieceKind::King,
        PieceKind::Advisor,
        PieceKind::Elephant,
        PieceKind::Horse,
        PieceKind::Rook,
        PieceKind::Cannon,
        PieceKind::Pawn,
    ];

    /// A side's back rank from Red's left at the start (art. 1.3): 车 马 相 仕 帅 仕 相 马 车.
    pub const BACK_RANK: [PieceKind; 9] = [
        PieceKind::Rook,
        PieceKind::Horse,
        PieceKind::Elephant,
        PieceKind::Advisor,
        PieceKind::King,
        PieceKind::Advisor,
        PieceKind::Elephant,
        PieceKind::Horse,
        PieceKind::Rook,
    ];

    /// 0..7 in the order of [`PieceKind::ALL`].
    #[inline]
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The upper-case FEN letter (`K A B N R C P`).
    #[must_use]
    pub const fn fen_char(self) -> char {
        match self {
            PieceKind::King => 'K',
            PieceKind::Advisor => 'A',
            PieceKind::Elephant => 'B',
            PieceKind::Horse => 'N',
            PieceKind::Rook => 'R',
            PieceKind::Cannon => 'C',
            PieceKind::Pawn => 'P',
        }
    }

    /// The kind for a FEN letter of either case; accepts `E`/`H` for elephant/horse.
    #[must_use]
    pub const fn from_fen_char(c: char) -> Option<PieceKind> {
        Some(match c.to_ascii_uppercase() {
            'K' => PieceKind::King,
            'A' => PieceKind::Advisor,
            'B' | 'E' => PieceKind::Elephant,
            'N' | 'H' => PieceKind::Horse,
            'R' => PieceKind::Rook,
            'C' => PieceKind::Cannon,
            'P' => PieceKind::Pawn,
            _ => return None,
        })
    }

    /// The most the rules allow of this kind per side (art. 1.2).
    #[must_use]
    pub const fn max_count(self) -> u32 {
        match self {
            PieceKind::King => 1,
            PieceKind::Pawn => 5,
            _ => 2,
        }
    }

    /// English name, lower case.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            PieceKind::King => "king",
            PieceKind::Advisor => "advisor",
            PieceKind::Elephant => "elephant",
            PieceKind::Horse => "horse",
            PieceKind::Rook => "rook",
            PieceKind::Cannon => "cannon",
            PieceKind::Pawn => "pawn",
        }
    }
}

impl fmt::Display for PieceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A coloured piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Whose piece.
    pub color: Color,
    /// What piece.
    pub kind: PieceKind,
}

impl Piece {
    /// A piece of `color` and `kind`.
    #[inline]
    #[must_use]
    pub const fn new(color: Color, kind: PieceKind) -> Piece {
        Piece { color, kind }
    }

    /// The FEN letter: upper case for Red, lower case for Black.
    #[must_use]
    pub const fn fen_char(self) -> char {
        let c = self.kind.fen_char();
        match self.color {
            Color::Red => c,
            Color::Black => c.to_ascii_lowercase(),
        }
    }

    /// [`Piece::fen_char`] as its one ASCII byte.
    #[must_use]
    pub const fn fen_byte(self) -> u8 {
        // Every FEN letter is ASCII.
        self.fen_char() as u8
    }

    /// The piece for a FEN letter (`E`/`H` accepted).
    #[must_use]
    pub const fn from_fen_char(c: char) -> Option<Piece> {
        match PieceKind::from_fen_char(c) {
            Some(kind) => Some(Piece {
                color: if c.is_ascii_uppercase() {
                    Color::Red
                } else {
                    Color::Black
                },
                kind,
            }),
            None => None,
        }
    }

    /// 0..14: `color * 7 + kind`.
    #[inline]
    #[must_use]
    pub const fn index(self) -> usize {
        self.color.index() * 7 + self.kind.index()
    }
}

impl fmt::Display for Piece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.fen_char())
    }
}

/// One of the 90 points, in ICCS coordinates: file `a`–`i` from Red's left, rank `0`–`9`
/// from Red's back rank. The index is `rank * 9 + file` (a0 = 0, i9 = 89).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    /// Number of points on the board.
    pub const COUNT: usize = 90;

    /// The square at `file` (0 = a … 8 = i) and `rank` (0 … 9); `None` off the board.
    #[inline]
    #[must_use]
    pub const fn new(file: u8, rank: u8) -> Option<Square> {
        if file < 9 && rank < 10 {
            Some(Square(rank * 9 + file))
        } else {
            None
        }
    }

    /// The square with index `index` (0..90).
    #[inline]
    #[must_use]
    pub const fn from_index(index: usize) -> Option<Square> {
        if index < 90 {
            Some(Square(index as u8))
        } else {
            None
        }
    }

    /// From a raw index the caller knows is below 90 (bitboard bits).
    #[inline]
    pub(crate) const fn from_raw(index: u8) -> Square {
        Square(index)
    }

    /// Index 0..90 (`rank * 9 + file`).
    #[inline]
    #[must_use]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// File 0..9 (a = 0).
    #[inline]
    #[must_use]
    pub const fn file(self) -> u8 {
        self.0 % 9
    }

    /// Rank 0..10 (Red's back rank = 0).
    #[inline]
    #[must_use]
    pub const fn rank(self) -> u8 {
        self.0 / 9
    }

    /// The square `df` files and `dr` ranks away, if on the board.
    #[inline]
    #[must_use]
    pub const fn offset(self, df: i8, dr: i8) -> Option<Square> {
        let f = self.file() as i8 + df;
        let r = self.rank() as i8 + dr;
        if f >= 0 && f < 9 && r >= 0 && r < 10 {
            Some(Square((r * 9 + f) as u8))
        } else {
            None
        }
    }

    /// The same point seen from the other side (rank `r` → `9 - r`, same file).
    #[inline]
    #[must_use]
    pub const fn flip_rank(self) -> Square {
        Square((9 - self.rank()) * 9 + self.file())
    }

    /// The point mirrored left–right (file `f` → `8 - f`).
    #[inline]
    #[must_use]
    pub const fn flip_file(self) -> Square {
        Square(self.rank() * 9 + (8 - self.file()))
    }

    /// Whether the point is on `color`'s half of the board (before the river).
    #[inline]
    #[must_use]
    pub const fn is_on_side(self, color: Color) -> bool {
        match color {
            Color::Red => self.rank() <= 4,
            Color::Black => self.rank() >= 5,
        }
    }

    /// Whether the point is in `color`'s palace (九宫).
    #[inline]
    #[must_use]
    pub const fn in_palace(self, color: Color) -> bool {
        let f = self.file();
        let r = self.rank();
        f >= 3
            && f <= 5
            && match color {
                Color::Red => r <= 2,
                Color::Black => r >= 7,
            }
    }

    /// All 90 squares in index order.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..90u8).map(Square)
    }

    /// Parses `"e0"` style coordinates (case-insensitive).
    #[must_use]
    pub fn from_iccs(s: &str) -> Option<Square> {
        let b = s.as_bytes();
        if b.len() != 2 {
            return None;
        }
        let f = b[0].to_ascii_lowercase();
        let r = b[1];
        if !(b'a'..=b'i').contains(&f) || !r.is_ascii_digit() {
            return None;
        }
        Square::new(f - b'a', r - b'0')
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.file()) as char, self.rank())
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A move: from one point to another. Captures are implied by the board. Two bytes.
///
/// A `Move` says nothing about legality; [`crate::Position::play`] checks it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move {
    from: Square,
    to: Square,
}

impl Move {
    /// A move from `from` to `to`.
    #[inline]
    #[must_use]
    pub const fn new(from: Square, to: Square) -> Move {
        Move { from, to }
    }

    /// Where the piece starts.
    #[inline]
    #[must_use]
    pub const fn from(self) -> Square {
        self.from
    }

    /// Where the piece lands.
    #[inline]
    #[must_use]
    pub const fn to(self) -> Square {
        self.to
    }

    /// The ICCS text, lower case without a dash: `h2e2`.
    #[must_use]
    pub fn to_iccs(self) -> String {
        let mut s = String::with_capacity(4);
        for c in self.iccs_chars() {
            s.push(c);
        }
        s
    }

    /// The four ICCS characters (file letter and rank digit of `from`, then of `to`).
    #[inline]
    fn iccs_chars(self) -> [char; 4] {
        let (f, t) = (self.from, self.to);
        [
            char::from(b'a' + f.file()),
            char::from(b'0' + f.rank()),
            char::from(b'a' + t.file()),
            char::from(b'0' + t.rank()),
        ]
    }

    /// The same move on the colour-mirrored board (ranks flipped).
    #[must_use]
    pub const fn flip_rank(self) -> Move {
        Move {
            from: self.from.flip_rank(),
            to: self.to.flip_rank(),
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write;
        for c in self.iccs_chars() {
            f.write_char(c)?;
        }
        Ok(())
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
