//! The validated [`Position`]: legal moves, check, mate, 困毙, attacks, making moves.

use crate::bitboard::Bitboard;
use crate::movelist::MoveList;
use crate::setup::Setup;
use crate::tables::{
    self, ADVISOR, HORSE_ATTACKERS, KING, PAWN, PAWN_ATTACKERS, ZOBRIST, ZOBRIST_BLACK,
};
use crate::types::{Color, Move, Piece, PieceKind, Square};
use std::fmt;

/// A legal position: both kings present, piece counts and placements possible, the side not to
/// move not in check, kings not facing.
///
/// Cheap to clone (a few hundred bytes, no heap), `Send + Sync`. The Zobrist hash is kept
/// incrementally by every move.
#[derive(Clone)]
pub struct Position {
    board: [Option<Piece>; 90],
    by_color: [u128; 2],
    by_kind: [u128; 7],
    /// Occupancy in file-major order (bit `file * 10 + rank`).
    rot: u128,
    kings: [Square; 2],
    turn: Color,
    hash: u64,
    halfmoves: u32,
    fullmoves: u32,
}

/// One reason a [`Setup`] is not a legal position.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidReason {
    /// A side has no king.
    MissingKing(Color),
    /// A side has more pieces of a kind than the rules give it.
    TooMany {
        /// Whose pieces.
        color: Color,
        /// Which kind.
        kind: PieceKind,
        /// How many are on the board.
        count: u32,
    },
    /// A piece stands on a point it can never reach (king/advisor outside the palace or off its
    /// points, elephant off its seven points, pawn behind its start or beside it before the river).
    Unreachable {
        /// The piece.
        piece: Piece,
        /// Where it stands.
        square: Square,
    },
    /// The side not to move is in check (its opponent could take the king).
    OppositeCheck,
    /// The kings face each other on an open file.
    KingsFacing,
}

impl fmt::Display for InvalidReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidReason::MissingKing(c) => write!(f, "{c} has no king"),
            InvalidReason::TooMany { color, kind, count } => write!(
                f,
                "{color} has {count} {kind}s, at most {} allowed",
                kind.max_count()
            ),
            InvalidReason::Unreachable { piece, square } => write!(
                f,
                "{} {} on {square} is on a point it can never reach",
                piece.color, piece.kind
            ),
            InvalidReason::OppositeCheck => f.write_str("the side not to move is in check"),
            InvalidReason::KingsFacing => f.write_str("the kings face each other on an open file"),
        }
    }
}

/// A [`Setup`] that is not a legal position, with every reason found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("impossible position: {}", .reasons.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct PositionError {
    /// All reasons, in a stable order (never empty).
    pub reasons: Vec<InvalidReason>,
}

/// A FEN that could not be read or describes an impossible position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    /// The text is not a FEN.
    #[error("bad FEN: {0}")]
    Parse(#[from] crate::setup::ParseFenError),
    /// The FEN reads but the position cannot arise.
    #[error("{0}")]
    Invalid(#[from] PositionError),
}

/// A move that is not legal in the position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("illegal move {mv}: {reason}")]
pub struct PlayError {
    /// The move.
    pub mv: Move,
    /// Why.
    pub reason: IllegalReason,
}

/// Why a move is illegal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IllegalReason {
    /// There is no piece on the from-square.
    #[error("no piece on the from-square")]
    NoPiece,
    /// The piece on the from-square belongs to the side not to move.
    #[error("it is the other side's piece")]
    NotYourPiece,
    /// The piece cannot move like that (or its target holds one's own piece).
    #[error("the piece cannot move there")]
    CannotReach,
    /// The move would leave one's own king attacked or the kings facing.
    #[error("it leaves the king in check")]
    LeavesKingInCheck,
    /// The game is over: the side to move has no legal move.
    #[error("the game is over")]
    GameOver,
}

/// How a game ended on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// Who won.
    pub winner: Color,
    /// Why.
    pub reason: EndReason,
}

/// Why the side to move lost on the board (art. 3, 4.1.1, 4.1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EndReason {
    /// In check with no legal move (将死).
    Checkmate,
    /// Not in check but no legal move (困毙); a loss in Xiangqi.
    Stalemate,
}

impl EndReason {
    /// `"checkmate"` or `"stalemate"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            EndReason::Checkmate => "checkmate",
            EndReason::Stalemate => "stalemate",
        }
    }
}

/// Receives generated moves: collects them, counts them, or only notes that one exists.
trait Sink {
    /// All moves from `from` to each point of `targets`, already known legal.
    fn add(&mut self, from: Square, targets: u128);
    /// One legal move.
    fn one(&mut self, from: Square, to: Square);
    /// Whether the sink needs no more moves (generation may stop). Never for the list and the
    /// counter, so their generation compiles to the same code as without the query.
    #[inline]
    fn done(&self) -> bool {
        false
    }
}

impl Sink for MoveList {
    #[inline]
    fn add(&mut self, from: Square, targets: u128) {
        for to in Bitboard(targets) {
            self.push(Move::new(from, to));
        }
    }
    #[inline]
    fn one(&mut self, from: Square, to: Square) {
        self.push(Move::new(from, to));
    }
}

struct Counter(u64);

impl Sink for Counter {
    #[inline]
    fn add(&mut self, _from: Square, targets: u128) {
        self.0 += u64::from(targets.count_ones());
    }
    #[inline]
    fn one(&mut self, _from: Square, _to: Square) {
        self.0 += 1;
    }
}

/// Whether at least one legal move exists; done at the first.
struct AnyMove(bool);

impl Sink for AnyMove {
    #[inline]
    fn add(&mut self, _from: Square, targets: u128) {
        self.0 |= targets != 0;
    }
    #[inline]
    fn one(&mut self, _from: Square, _to: Square) {
        self.0 = true;
    }
    #[inline]
    fn done(&self) -> bool {
        self.0
    }
}

#[inline]
fn bit(sq: Square) -> u128 {
    1u128 << sq.index()
}

#[inline]
fn sq_from_index(i: u32) -> Square {
    // The bitboards only ever hold bits 0..90.
    Square::from_raw(i as u8)
}

/// The set bits of a raw mask as squares.
struct Squares(u128);

impl Iterator for Squares {
    type Item = Square;
    #[inline]
    fn next(&mut self) -> Option<Square> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros();
        self.0 &= self.0 - 1;
        Some(sq_from_index(i))
    }
}

impl Default for Position {
    /// The start position.
    fn default() -> Position {
        Position::new()
    }
}

impl PartialEq for Position {
    /// Same placement, side to move and counters.
    fn eq(&self, other: &Position) -> bool {
        self.board == other.board
            && self.turn == other.turn
            && self.halfmoves == other.halfmoves
            && self.fullmoves == other.fullmoves
    }
}
impl Eq for Position {}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", self.to_fen())
    }
}

impl fmt::Display for Position {
    /// The FEN.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_fen())
    }
}

impl std::str::FromStr for Position {
    type Err = FenError;
    fn from_str(s: &str) -> Result<Position, FenError> {
        Position::from_fen(s)
    }
}

impl Position {
    /// The start position.
    #[must_use]
    pub fn new() -> Position {
        Position::build(&Setup::start())
    }

    /// Builds the internal state without validating.
    fn build(setup: &Setup) -> Position {
        let mut pos = Position {
            board: setup.board,
            by_color: [0; 2],
            by_kind: [0; 7],
            rot: 0,
            kings: [Square::from_raw(4), Square::from_raw(85)],
            turn: setup.turn,
            hash: 0,
            halfmoves: setup.halfmoves,
            fullmoves: setup.fullmoves,
        };
        for sq in Square::all() {
            if let Some(p) = setup.board[sq.index()] {
                pos.by_color[p.color.index()] |= bit(sq);
                pos.by_kind[p.kind.index()] |= bit(sq);
                pos.rot |= tables::rot_bit(sq.index());
                if p.kind == PieceKind::King {
                    pos.kings[p.color.index()] = sq;
                }
            }
        }
        pos.hash = pos.compute_hash();
        pos
    }

    /// Validates a setup. The error lists every reason the position cannot arise.
    pub fn from_setup(setup: &Setup) -> Result<Position, PositionError> {
        let mut reasons = Vec::new();
        let mut counts = [[0u32; 7]; 2];
        for sq in Square::all() {
            if let Some(p) = setup.board[sq.index()] {
                counts[p.color.index()][p.kind.index()] += 1;
                if !Position::reachable(p, sq) {
                    reasons.push(InvalidReason::Unreachable {
                        piece: p,
                        square: sq,
                    });
                }
            }
        }
        for color in Color::ALL {
            if counts[color.index()][PieceKind::King.index()] == 0 {
                reasons.push(InvalidReason::MissingKing(color));
            }
            for kind in PieceKind::ALL {
                let count = counts[color.index()][kind.index()];
                if count > kind.max_count() {
                    reasons.push(InvalidReason::TooMany { color, kind, count });
                }
            }
        }
        if !reasons.is_empty() {
            // Without exactly one king each, check and facing are meaningless.
            return Err(PositionError { reasons });
        }
        let pos = Position::build(setup);
        let (rk, bk) = (pos.kings[0], pos.kings[1]);
        if rk.file() == bk.file() && tables::file_rook_attacks(rk.index(), pos.rot) & bit(bk) != 0 {
            reasons.push(InvalidReason::KingsFacing);
        } else if pos.is_attacked(pos.kings[(!pos.turn).index()], pos.turn) {
            reasons.push(InvalidReason::OppositeCheck);
        }
        if reasons.is_empty() {
            Ok(pos)
        } else {
            Err(PositionError { reasons })
        }
    }

    /// Whether `piece` can ever stand on `sq` (art. 2.2).
    #[must_use]
    pub fn reachable(piece: Piece, sq: Square) -> bool {
        let c = piece.color;
        // Work in Red's frame.
        let s = if c == Color::Red { sq } else { sq.flip_rank() };
        let (f, r) = (s.file(), s.rank());
        match piece.kind {
            PieceKind::King => s.in_palace(Color::Red),
            PieceKind::Advisor => matches!((f, r), (3 | 5, 0 | 2) | (4, 1)),
            PieceKind::Elephant => matches!((f, r), (2 | 6, 0 | 4) | (0 | 4 | 8, 2)),
            PieceKind::Pawn => r >= 5 || (r >= 3 && f % 2 == 0),
            PieceKind::Horse | PieceKind::Rook | PieceKind::Cannon => true,
        }
    }

    /// Reads and validates a FEN (see [`Setup::from_fen`]).
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        let setup = Setup::from_fen(fen)?;
        Ok(Position::from_setup(&setup)?)
    }

    /// The canonical six-field FEN.
    #[must_use]
    pub fn to_fen(&self) -> String {
        crate::setup::fen(
            &self.board,
            self.occ(),
            self.turn,
            self.halfmoves,
            self.fullmoves,
        )
    }

    /// Back to an unvalidated [`Setup`].
    #[must_use]
    pub fn to_setup(&self) -> Setup {
        Setup {
            board: self.board,
            turn: self.turn,
            halfmoves: self.halfmoves,
            fullmoves: self.fullmoves,
        }
    }

    /// The colour-mirrored position (ranks flipped, colours swapped, the other side to move).
    /// Always legal when `self` is.
    #[must_use]
    pub fn mirror(&self) -> Position {
        Position::build(&self.to_setup().mirror())
    }

    /// The side to move.
    #[inline]
    #[must_use]
    pub fn side_to_move(&self) -> Color {
        self.turn
    }

    /// The piece on `sq`.
    #[inline]
    #[must_use]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.board[sq.index()]
    }

    /// Where `color`'s king stands.
    #[inline]
    #[must_use]
    pub fn king_square(&self, color: Color) -> Square {
        self.kings[color.index()]
    }

    /// Every piece with its point, in square index order (a0, b0, … i9).
    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        Square::all().filter_map(|sq| self.board[sq.index()].map(|p| (sq, p)))
    }

    /// All occupied points.
    #[inline]
    #[must_use]
    pub fn occupied(&self) -> Bitboard {
        Bitboard(self.by_color[0] | self.by_color[1])
    }

    /// The points holding `color`'s pieces.
    #[inline]
    #[must_use]
    pub fn by_color(&self, color: Color) -> Bitboard {
        Bitboard(self.by_color[color.index()])
    }

    /// The points holding pieces of `kind` (both colours).
    #[inline]
    #[must_use]
    pub fn by_kind(&self, kind: PieceKind) -> Bitboard {
        Bitboard(self.by_kind[kind.index()])
    }

    /// The points holding `piece`.
    #[inline]
    #[must_use]
    pub fn by_piece(&self, piece: Piece) -> Bitboard {
        Bitboard(self.by_color[piece.color.index()] & self.by_kind[piece.kind.index()])
    }

    /// Plies since the last capture.
    #[must_use]
    pub fn halfmoves(&self) -> u32 {
        self.halfmoves
    }

    /// The move number (starts at 1, grows after each Black move).
    #[must_use]
    pub fn fullmoves(&self) -> u32 {
        self.fullmoves
    }

    /// The Zobrist hash of placement and side to move (not the counters), kept incrementally.
    #[inline]
    #[must_use]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The Zobrist hash recomputed from scratch (equal to [`Position::hash`]; for tests).
    #[must_use]
    pub fn compute_hash(&self) -> u64 {
        let mut h = if self.turn == Color::Black {
            ZOBRIST_BLACK
        } else {
            0
        };
        for sq in Square::all() {
            if let Some(p) = self.board[sq.index()] {
                h ^= ZOBRIST[p.index()][sq.index()];
            }
        }
        h
    }

    // ----- attacks -------------------------------------------------------------------------

    /// The points the piece on `sq` attacks: where it could capture an enemy piece standing
    /// there, given the other pieces as they are. Includes points held by its own side
    /// (protection). For a cannon: every point after its screen up to and including the next
    /// piece. The king's attacks are its steps in the palace (not the flying-general file).
    /// Empty if `sq` is empty.
    #[must_use]
    pub fn attacks_from(&self, sq: Square) -> Bitboard {
        match self.board[sq.index()] {
            None => Bitboard::EMPTY,
            Some(p) => self.piece_attacks(p, sq, self.occupied()),
        }
    }

    /// What `piece` on `sq` would attack with occupancy `occ` (the file-major occupancy is
    /// derived from `occ`).
    #[must_use]
    pub fn piece_attacks(&self, piece: Piece, sq: Square, occ: Bitboard) -> Bitboard {
        let i = sq.index();
        let occ = occ.0;
        Bitboard(match piece.kind {
            PieceKind::King => KING[i],
            PieceKind::Advisor => ADVISOR[i],
            PieceKind::Elephant => tables::elephant_attacks(i, occ),
            PieceKind::Horse => tables::horse_attacks(i, occ),
            PieceKind::Rook => tables::rook_attacks(i, occ, rotate(occ)),
            PieceKind::Cannon => tables::cannon_attacks(i, occ, rotate(occ)),
            PieceKind::Pawn => PAWN[piece.color.index()][i],
        })
    }

    /// The pieces of `color` attacking `sq` (in the sense of [`Position::attacks_from`]),
    /// whatever stands on `sq`.
    #[must_use]
    pub fn attackers_to(&self, sq: Square, color: Color) -> Bitboard {
        self.attackers_with(sq, color, self.occupied())
    }

    /// The pieces of `color` that would attack `sq` if the occupancy were `occ` (pieces not in
    /// `occ` are ignored). Use it for x-rays: remove a piece from `occ` and ask again.
    #[must_use]
    pub fn attackers_with(&self, sq: Square, color: Color, occ: Bitboard) -> Bitboard {
        let i = sq.index();
        let occ = occ.0;
        let them = self.by_color[color.index()] & occ;
        let k = &self.by_kind;
        let (rook, cannon) = tables::slider_attacks(i, occ, rotate(occ));
        let a = (rook & k[PieceKind::Rook.index()])
            | (cannon & k[PieceKind::Cannon.index()])
            | (tables::horse_attackers(i, occ) & k[PieceKind::Horse.index()])
            | (PAWN_ATTACKERS[color.index()][i] & k[PieceKind::Pawn.index()])
            | (KING[i] & k[PieceKind::King.index()])
            | (ADVISOR[i] & k[PieceKind::Advisor.index()])
            | (tables::elephant_attacks(i, occ) & k[PieceKind::Elephant.index()]);
        Bitboard(a & them)
    }

    /// Whether any piece of `color` attacks `sq`.
    #[must_use]
    pub fn is_attacked(&self, sq: Square, color: Color) -> bool {
        self.attackers_to(sq, color).any()
    }

    /// The pieces giving check to the side to move (including an enemy king facing it).
    #[must_use]
    pub fn checkers(&self) -> Bitboard {
        let us = self.turn;
        let ksq = self.kings[us.index()];
        let mut c = self.attackers_to(ksq, !us);
        let their_king = bit(self.kings[(!us).index()]);
        if tables::file_rook_attacks(ksq.index(), self.rot) & their_king != 0 {
            c |= Bitboard(their_king);
        }
        c
    }

    /// Whether the side to move is in check.
    #[inline]
    #[must_use]
    pub fn is_check(&self) -> bool {
        let us = self.turn;
        self.king_attacked(self.kings[us.index()], us, self.occ(), self.rot, 0)
    }

    #[inline]
    fn occ(&self) -> u128 {
        self.by_color[0] | self.by_color[1]
    }

    /// Whether `color`'s king on `ksq` would be attacked with occupancy `occ`/`rot`, ignoring
    /// enemy pieces on `captured` (a mask). Covers rook, cannon, horse, pawn and the facing king;
    /// enemy advisors and elephants can never reach a king.
    #[inline]
    fn king_attacked(
        &self,
        ksq: Square,
        color: Color,
        occ: u128,
        rot: u128,
        captured: u128,
    ) -> bool {
        let i = ksq.index();
        let them = self.by_color[(!color).index()] & !captured;
        let k = &self.by_kind;
        if PAWN_ATTACKERS[(!color).index()][i] & k[PieceKind::Pawn.index()] & them != 0 {
            return true;
        }
        if tables::horse_attackers(i, occ) & k[PieceKind::Horse.index()] & them != 0 {
            return true;
        }
        let (rook, cannon) = tables::slider_attacks(i, occ, rot);
        (rook & (k[PieceKind::Rook.index()] | k[PieceKind::King.index()])
            | cannon & k[PieceKind::Cannon.index()])
            & them
            != 0
    }

    /// Whether the move (pseudo-legal for the side to move) leaves its king safe.
    #[inline]
    fn safe_after(&self, from: Square, to: Square) -> bool {
        let us = self.turn;
        let fb = bit(from);
        let tb = bit(to);
        let occ = (self.occ() & !fb) | tb;
        let rot = (self.rot & !tables::rot_bit(from.index())) | tables::rot_bit(to.index());
        let ksq = if from == self.kings[us.index()] {
            to
        } else {
            self.kings[us.index()]
        };
        !self.king_attacked(ksq, us, occ, rot, tb)
    }

    // ----- move generation ------------------------------------------------------------------

    /// Own pieces whose leaving their point may expose the king, and empty points where a piece
    /// may become a cannon's screen against the king. Only valid when not in check.
    fn danger(&self) -> (u128, u128) {
        let us = self.turn;
        let them = self.by_color[(!us).index()];
        let own = self.by_color[us.index()];
        let ksq = self.kings[us.index()];
        let k = &self.by_kind;
        let rooks = k[PieceKind::Rook.index()] & them;
        let cannons = k[PieceKind::Cannon.index()] & them;
        let horses = k[PieceKind::Horse.index()] & them;
        let their_king = k[PieceKind::King.index()] & them;
        let mut pinned = 0u128;
        let mut bad_to = 0u128;
        for (dir, &(df, dr)) in tables::ORTHO.iter().enumerate() {
            let vertical = dir < 2;
            let mut first: Option<Square> = None;
            let mut second: Option<Square> = None;
            let mut empties = 0u128;
            let mut cur = ksq.offset(df, dr);
            while let Some(sq) = cur {
                let b = bit(sq);
                if self.board[sq.index()].is_some() {
                    match (first, second) {
                        (None, _) => {
                            if cannons & b != 0 {
                                // A piece landing in between would be its screen.
                                bad_to |= empties;
                            }
                            // (An adjacent enemy cannon may still screen for a cannon behind.)
                            first = Some(sq);
                        }
                        (Some(p1), None) => {
                            if rooks & b != 0 || (vertical && their_king & b != 0) {
                                pinned |= bit(p1) & own;
                                break;
                            }
                            second = Some(sq);
                        }
                        (Some(p1), Some(p2)) => {
                            if cannons & b != 0 {
                                pinned |= (bit(p1) | bit(p2)) & own;
                            }
                            break;
                        }
                    }
                } else if first.is_none() {
                    empties |= b;
                }
                cur = sq.offset(df, dr);
            }
        }
        for g in &HORSE_ATTACKERS[ksq.index()] {
            if g.block & own != 0 && g.targets & horses != 0 {
                pinned |= g.block;
            }
        }
        (pinned, bad_to)
    }

    /// Pseudo-legal targets of `kind` from `from` for the side to move (own pieces excluded).
    #[inline]
    fn targets(&self, kind: PieceKind, from: Square, occ: u128, rot: u128) -> u128 {
        let us = self.turn;
        let own = self.by_color[us.index()];
        let i = from.index();
        let t = match kind {
            PieceKind::King => KING[i],
            PieceKind::Advisor => ADVISOR[i],
            PieceKind::Elephant => tables::elephant_attacks(i, occ),
            PieceKind::Horse => tables::horse_attacks(i, occ),
            PieceKind::Rook => tables::rook_attacks(i, occ, rot),
            PieceKind::Cannon => {
                let (rook, cannon) = tables::slider_attacks(i, occ, rot);
                (rook & !occ) | (cannon & occ)
            }
            PieceKind::Pawn => PAWN[us.index()][i],
        };
        t & !own
    }

    /// Feeds every legal move to `sink`, stopping as soon as [`Sink::done`] says so.
    #[inline]
    fn generate<S: Sink>(&self, sink: &mut S) {
        let us = self.turn;
        let own = self.by_color[us.index()];
        let occ = self.occ();
        let rot = self.rot;
        let ksq = self.kings[us.index()];
        if self.king_attacked(ksq, us, occ, rot, 0) {
            for kind in PieceKind::ALL {
                for from in Squares(self.by_kind[kind.index()] & own) {
                    for to in Squares(self.targets(kind, from, occ, rot)) {
                        if self.safe_after(from, to) {
                            sink.one(from, to);
                            if sink.done() {
                                return;
                            }
                        }
                    }
                }
            }
            return;
        }
        let (pinned, bad_to) = self.danger();
        for kind in [
            PieceKind::Rook,
            PieceKind::Horse,
            PieceKind::Cannon,
            PieceKind::Pawn,
            PieceKind::Advisor,
            PieceKind::Elephant,
        ] {
            for from in Squares(self.by_kind[kind.index()] & own) {
                let t = self.targets(kind, from, occ, rot);
                if pinned & bit(from) != 0 {
                    for to in Squares(t) {
                        if self.safe_after(from, to) {
                            sink.one(from, to);
                            if sink.done() {
                                return;
                            }
                        }
                    }
                } else {
                    // Not pinned: every target off `bad_to` is legal as it stands.
                    sink.add(from, t & !bad_to);
                    if sink.done() {
                        return;
                    }
                    for to in Squares(t & bad_to) {
                        if self.safe_after(from, to) {
                            sink.one(from, to);
                            if sink.done() {
                                return;
                            }
                        }
                    }
                }
            }
        }
        for to in Squares(KING[ksq.index()] & !own) {
            if self.safe_after(ksq, to) {
                sink.one(ksq, to);
                if sink.done() {
                    return;
                }
            }
        }
    }

    /// All legal moves.
    #[must_use]
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate(&mut list);
        list
    }

    /// Appends all legal moves to `list` (which is not cleared).
    pub fn legal_moves_into(&self, list: &mut MoveList) {
        self.generate(list);
    }

    /// The number of legal moves, without listing them (fast; used by perft at the last ply).
    #[must_use]
    pub fn count_legal(&self) -> u64 {
        let mut c = Counter(0);
        self.generate(&mut c);
        c.0
    }

    /// Whether the side to move has at least one legal move (stops at the first one found).
    #[must_use]
    pub fn has_legal_move(&self) -> bool {
        let mut any = AnyMove(false);
        self.generate(&mut any);
        any.0
    }

    /// Why `m` is illegal, or `Ok(())`.
    pub fn check_move(&self, m: Move) -> Result<(), IllegalReason> {
        let (from, to) = (m.from(), m.to());
        let Some(p) = self.board[from.index()] else {
            return Err(IllegalReason::NoPiece);
        };
        if p.color != self.turn {
            return Err(IllegalReason::NotYourPiece);
        }
        let occ = self.occ();
        if self.targets(p.kind, from, occ, self.rot) & bit(to) == 0 {
            return Err(IllegalReason::CannotReach);
        }
        if !self.safe_after(from, to) {
            return Err(IllegalReason::LeavesKingInCheck);
        }
        Ok(())
    }

    /// Whether `m` is legal.
    #[must_use]
    pub fn is_legal(&self, m: Move) -> bool {
        self.check_move(m).is_ok()
    }

    /// Plays a legal move, returning the new position; the original is untouched.
    pub fn play(&self, m: Move) -> Result<Position, PlayError> {
        self.check_move(m)
            .map_err(|reason| PlayError { mv: m, reason })?;
        let mut next = self.clone();
        next.play_unchecked(m);
        Ok(next)
    }

    /// Plays a legal move in place; on error the position is unchanged.
    pub fn play_mut(&mut self, m: Move) -> Result<(), PlayError> {
        self.check_move(m)
            .map_err(|reason| PlayError { mv: m, reason })?;
        self.play_unchecked(m);
        Ok(())
    }

    /// Plays `m` in place WITHOUT checking legality (the fast path for search and perft).
    /// `m` must come from [`Position::legal_moves`] of this position; otherwise the resulting
    /// position is unspecified (it may break the invariants, but memory stays safe).
    /// Returns the captured piece, if any.
    #[inline]
    pub fn play_unchecked(&mut self, m: Move) -> Option<Piece> {
        let (from, to) = (m.from(), m.to());
        let piece = self.board[from.index()]?;
        let us = self.turn.index();
        let captured = self.board[to.index()];
        let fb = bit(from);
        let tb = bit(to);
        if let Some(cap) = captured {
            self.by_color[cap.color.index()] &= !tb;
            self.by_kind[cap.kind.index()] &= !tb;
            self.hash ^= ZOBRIST[cap.index()][to.index()];
            self.halfmoves = 0;
        } else {
            self.halfmoves = self.halfmoves.saturating_add(1);
        }
        self.board[to.index()] = Some(piece);
        self.board[from.index()] = None;
        self.by_color[us] ^= fb | tb;
        self.by_kind[piece.kind.index()] ^= fb | tb;
        self.rot = (self.rot & !tables::rot_bit(from.index())) | tables::rot_bit(to.index());
        self.hash ^= ZOBRIST[piece.index()][from.index()]
            ^ ZOBRIST[piece.index()][to.index()]
            ^ ZOBRIST_BLACK;
        if piece.kind == PieceKind::King {
            self.kings[us] = to;
        }
        if self.turn == Color::Black {
            self.fullmoves = self.fullmoves.saturating_add(1);
        }
        self.turn = !self.turn;
        captured
    }

    /// The legal moves of the piece on `from` (empty if none or not the side to move's).
    #[must_use]
    pub fn legal_moves_from(&self, from: Square) -> MoveList {
        let mut list = MoveList::new();
        for &m in self.legal_moves().iter() {
            if m.from() == from {
                list.push(m);
            }
        }
        list
    }

    /// Whether the legal move `m` gives check.
    #[must_use]
    pub fn gives_check(&self, m: Move) -> bool {
        let mut next = self.clone();
        next.play_unchecked(m);
        next.is_check()
    }

    /// The same placement with the other side to move (a "pass", e.g. to ask what the side that
    /// just moved would threaten if it could move again). Fails with
    /// [`InvalidReason::OppositeCheck`] when the side to move is in check, since passing would
    /// leave its king capturable.
    pub fn swap_turn(&self) -> Result<Position, PositionError> {
        if self.is_check() {
            return Err(PositionError {
                reasons: vec![InvalidReason::OppositeCheck],
            });
        }
        let mut next = self.clone();
        next.turn = !next.turn;
        next.hash ^= ZOBRIST_BLACK;
        Ok(next)
    }

    /// The result on the board: `None` while the side to move has a legal move; otherwise it
    /// lost by checkmate or 困毙 (stalemate), both losses in Xiangqi (art. 3, 4.1.1, 4.1.3).
    #[must_use]
    pub fn outcome(&self) -> Option<Outcome> {
        if self.has_legal_move() {
            return None;
        }
        Some(Outcome {
            winner: !self.turn,
            reason: if self.is_check() {
                EndReason::Checkmate
            } else {
                EndReason::Stalemate
            },
        })
    }

    /// Whether the side to move is checkmated.
    #[must_use]
    pub fn is_checkmate(&self) -> bool {
        self.is_check() && !self.has_legal_move()
    }

    /// Whether the side to move is not in check and has no legal move (困毙).
    #[must_use]
    pub fn is_stalemate(&self) -> bool {
        !self.is_check() && !self.has_legal_move()
    }
}

/// The file-major occupancy for a normal one.
fn rotate(occ: u128) -> u128 {
    let mut rot = 0;
    for sq in Squares(occ) {
        rot |= tables::rot_bit(sq.index());
    }
    rot
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn start_counts() {
        let pos = Position::new();
        assert_eq!(pos.legal_moves().len(), 44);
        assert_eq!(pos.count_legal(), 44);
        assert!(!pos.is_check());
        assert_eq!(pos.hash(), pos.compute_hash());
    }

    /// The FEN written from the position's occupancy mask is the one written from a mask taken
    /// from its points, for every position two and three plies from the start and for sparse
    /// boards.
    #[test]
    fn fen_from_the_mask_is_the_fen_from_the_points() {
        let mut positions = vec![
            Position::from_fen("3k5/9/9/9/9/9/9/9/9/4K4 w - - 0 1").unwrap(),
            Position::from_fen("3k5/9/2P6/2P3P2/2P3P2/4R4/9/4R4/9/5K3 b - - 12 40").unwrap(),
        ];
        let start = Position::new();
        for &a in start.legal_moves().iter() {
            let pa = start.play(a).unwrap();
            for &b in pa.legal_moves().iter() {
                let pb = pa.play(b).unwrap();
                for &c in pb.legal_moves().iter().take(3) {
                    positions.push(pb.play(c).unwrap());
                }
                positions.push(pb);
            }
        }
        for pos in &positions {
            assert_eq!(pos.to_fen(), pos.to_setup().to_fen());
        }
    }

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn position_is_send_sync_and_small() {
        assert_send_sync::<Position>();
        // Copy-make clones it at every node; keep it small and heap-free.
        assert!(
            std::mem::size_of::<Position>() <= 384,
            "{}",
            std::mem::size_of::<Position>()
        );
    }
}
