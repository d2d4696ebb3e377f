//! An unvalidated position ([`Setup`]) and FEN.

use crate::types::{Color, Piece, PieceKind, Square};
use std::fmt;

/// The start position in FEN.
pub const START_FEN: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

/// What a FEN describes, not yet checked for legality: turn it into a [`crate::Position`]
/// with [`crate::Position::from_setup`].
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Setup {
    /// The pieces, indexed by [`Square::index`].
    pub board: [Option<Piece>; 90],
    /// The side to move.
    pub turn: Color,
    /// Plies since the last capture (FEN field 5).
    pub halfmoves: u32,
    /// The move number, starting at 1 and incremented after Black moves (FEN field 6).
    pub fullmoves: u32,
}

impl Default for Setup {
    /// The start position.
    fn default() -> Setup {
        Setup::start()
    }
}

impl fmt::Debug for Setup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Setup({})", self.to_fen())
    }
}

/// Why a FEN string could not be read. Ranks are named in ICCS terms (0 = Red's back rank, the
/// last FEN field-1 group).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseFenError {
    /// Nothing but whitespace.
    #[error("empty FEN")]
    Empty,
    /// The board field does not have 10 ranks separated by `/`.
    #[error("the board has {found} ranks, expected 10")]
    RankCount {
        /// Ranks found.
        found: usize,
    },
    /// A rank describes more or fewer than 9 files.
    #[error("rank {rank} has {files} files, expected 9")]
    FileCount {
        /// ICCS rank (0–9).
        rank: u8,
        /// Files the rank describes.
        files: u32,
    },
    /// A character in the board field that is neither a piece letter nor a digit 1–9.
    #[error("rank {rank} has an unknown piece {found:?}")]
    BadPiece {
        /// ICCS rank (0–9).
        rank: u8,
        /// The character.
        found: char,
    },
    /// The board is not followed by the side to move (it is never guessed).
    #[error("the side to move is missing: w or b must follow the board")]
    MissingTurn,
    /// The side-to-move field is not `w`, `r` or `b`.
    #[error("side to move {found:?} is not w, r or b")]
    BadTurn {
        /// The field as given.
        found: String,
    },
    /// Field 3 or 4 (castling/en passant in chess) is not `-`.
    #[error("field {field} is {found:?}, expected -")]
    BadPlaceholder {
        /// 3 or 4.
        field: u8,
        /// The field as given.
        found: String,
    },
    /// The halfmove clock is not a number.
    #[error("halfmove clock {found:?} is not a number")]
    BadHalfmoves {
        /// The field as given.
        found: String,
    },
    /// The move number is not a positive number.
    #[error("move number {found:?} is not a positive number")]
    BadFullmoves {
        /// The field as given.
        found: String,
    },
    /// More than six fields.
    #[error("FEN has {found} fields, at most 6 expected")]
    TooManyFields {
        /// Fields found.
        found: usize,
    },
}

impl Setup {
    /// The start position (art. 1.3).
    #[must_use]
    pub fn start() -> Setup {
        let mut board = [None; 90];
        for (f, kind) in PieceKind::BACK_RANK.into_iter().enumerate() {
            board[f] = Some(Piece::new(Color::Red, kind));
            board[81 + f] = Some(Piece::new(Color::Black, kind));
        }
        for f in [1, 7] {
            board[2 * 9 + f] = Some(Piece::new(Color::Red, PieceKind::Cannon));
            board[7 * 9 + f] = Some(Piece::new(Color::Black, PieceKind::Cannon));
        }
        for f in [0, 2, 4, 6, 8] {
            board[3 * 9 + f] = Some(Piece::new(Color::Red, PieceKind::Pawn));
            board[6 * 9 + f] = Some(Piece::new(Color::Black, PieceKind::Pawn));
        }
        Setup {
            board,
            turn: Color::Red,
            halfmoves: 0,
            fullmoves: 1,
        }
    }

    /// An empty board, Red to move.
    #[must_use]
    pub fn empty() -> Setup {
        Setup {
            board: [None; 90],
            turn: Color::Red,
            halfmoves: 0,
            fullmoves: 1,
        }
    }

    /// The piece on `sq`.
    #[must_use]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.board[sq.index()]
    }

    /// Reads a FEN. The board and the side to move are required; accepts `w`/`r`/`b` (or
    /// upper case) for the side to move, `E`/`H` for elephant/horse, and omitted trailing
    /// fields after the side to move (`- - 0 1` are assumed). Leading/trailing whitespace is
    /// ignored.
    pub fn from_fen(fen: &str) -> Result<Setup, ParseFenError> {
        let fields: Vec<&str> = fen.split_whitespace().collect();
        let Some(board_field) = fields.first() else {
            return Err(ParseFenError::Empty);
        };
        if fields.len() > 6 {
            return Err(ParseFenError::TooManyFields {
                found: fields.len(),
            });
        }
        let ranks: Vec<&str> = board_field.split('/').collect();
        if ranks.len() != 10 {
            return Err(ParseFenError::RankCount { found: ranks.len() });
        }
        let mut board = [None; 90];
        for (i, text) in ranks.iter().enumerate() {
            let rank = 9 - i as u8;
            let mut file: u32 = 0;
            for ch in text.chars() {
                if let Some(d) = ch.to_digit(10).filter(|d| (1..=9).contains(d)) {
                    file += d;
                } else if let Some(piece) = Piece::from_fen_char(ch) {
                    if file < 9 {
                        board[rank as usize * 9 + file as usize] = Some(piece);
                    }
                    file += 1;
                } else {
                    return Err(ParseFenError::BadPiece { rank, found: ch });
                }
            }
            if file != 9 {
                return Err(ParseFenError::FileCount { rank, files: file });
            }
        }
        let turn = match fields.get(1).copied() {
            None => return Err(ParseFenError::MissingTurn),
            Some("w" | "r" | "W" | "R") => Color::Red,
            Some("b" | "B") => Color::Black,
            Some(other) => {
                return Err(ParseFenError::BadTurn {
                    found: other.to_string(),
                });
            }
        };
        for field in [3u8, 4] {
            if let Some(&f) = fields.get(field as usize - 1) {
                if f != "-" {
                    return Err(ParseFenError::BadPlaceholder {
                        field,
                        found: f.to_string(),
                    });
                }
            }
        }
        let halfmoves = match fields.get(4) {
            None => 0,
            Some(f) => f.parse().map_err(|_| ParseFenError::BadHalfmoves {
                found: f.to_string(),
            })?,
        };
        let fullmoves = match fields.get(5) {
            None => 1,
            Some(f) => match f.parse::<u32>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(ParseFenError::BadFullmoves {
                        found: f.to_string(),
                    });
                }
            },
        };
        Ok(Setup {
            board,
            turn,
            halfmoves,
            fullmoves,
        })
    }

    /// The board field of the FEN (the first field).
    #[must_use]
    pub fn board_fen(&self) -> String {
        let mut s = String::with_capacity(BOARD_FEN_MAX);
        push_board(&mut s, &self.board, occupied_of(&self.board));
        s
    }

    /// The full six-field FEN, canonical: `w`/`b`, `B`/`N` letters.
    #[must_use]
    pub fn to_fen(&self) -> String {
        fen(
            &self.board,
            occupied_of(&self.board),
            self.turn,
            self.halfmoves,
            self.fullmoves,
        )
    }

    /// The colour-mirrored setup: ranks flipped, colours swapped, the other side to move.
    #[must_use]
    pub fn mirror(&self) -> Setup {
        let mut board = [None; 90];
        for sq in Square::all() {
            if let Some(p) = self.board[sq.index()] {
                board[sq.flip_rank().index()] = Some(Piece::new(!p.color, p.kind));
            }
        }
        Setup {
            board,
            turn: !self.turn,
            halfmoves: self.halfmoves,
            fullmoves: self.fullmoves,
        }
    }
}

/// The longest board field: 90 pieces and 9 slashes.
const BOARD_FEN_MAX: usize = 99;
/// The longest FEN: the board, ` w - - `, and two `u32` of up to 10 digits with a space between.
const FEN_MAX: usize = BOARD_FEN_MAX + 7 + 10 + 1 + 10;

/// The occupied points of `board` as a mask (bit `i`: the point of index `i`).
fn occupied_of(board: &[Option<Piece>; 90]) -> u128 {
    board
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_some())
        .fold(0u128, |mask, (i, _)| mask | (1u128 << i))
}

/// Appends `n` in decimal (the FEN counters, the numbers of WXF notation).
pub(crate) fn push_u32(s: &mut String, n: u32) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    let mut n = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Decimal digits are ASCII, so this never fails.
    if let Ok(text) = std::str::from_utf8(&digits[at..]) {
        s.push_str(text);
    }
}

/// Writes the board field of a FEN: ranks 9 down to 0, files a to i, runs of empty points as
/// digits, `/` between ranks. It visits the pieces of `occupied` (the board's occupied points
/// as a mask, [`occupied_of`]), not every point, and builds the text as bytes (every one ASCII)
/// appended once, as a board is written for every move.
fn push_board(s: &mut String, board: &[Option<Piece>; 90], occupied: u128) {
    let mut out = [0u8; BOARD_FEN_MAX];
    let mut len = 0;
    for rank in (0..10).rev() {
        let mut bits = (occupied >> (rank * 9)) & 0x1ff;
        let mut file = 0;
        while bits != 0 {
            let at = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if at > file {
                out[len] = b'0' + (at - file) as u8;
                len += 1;
            }
            // A position's mask and points always agree; were they not to, the point would
            // read as one empty point, never as a panic.
            out[len] = match board[rank * 9 + at] {
                Some(p) => p.fen_byte(),
                None => b'1',
            };
            len += 1;
            file = at + 1;
        }
        if file < 9 {
            out[len] = b'0' + (9 - file) as u8;
            len += 1;
        }
        if rank > 0 {
            out[len] = b'/';
            len += 1;
        }
    }
    // Every byte written above is ASCII, so this never fails.
    if let Ok(text) = std::str::from_utf8(&out[..len]) {
        s.push_str(text);
    }
}

/// The canonical six-field FEN of a placement (with its occupied points as a mask), side to
/// move and counters, built in one allocation.
pub(crate) fn fen(
    board: &[Option<Piece>; 90],
    occupied: u128,
    turn: Color,
    halfmoves: u32,
    fullmoves: u32,
) -> String {
    let mut s = String::with_capacity(FEN_MAX);
    push_board(&mut s, board, occupied);
    s.push_str(match turn {
        Color::Red => " w - - ",
        Color::Black => " b - - ",
    });
    push_u32(&mut s, halfmoves);
    s.push(' ');
    push_u32(&mut s, fullmoves);
    s
}

impl std::str::FromStr for Setup {
    type Err = ParseFenError;
    fn from_str(s: &str) -> Result<Setup, ParseFenError> {
        Setup::from_fen(s)
    }
}
