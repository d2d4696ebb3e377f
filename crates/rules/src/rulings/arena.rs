//! A small mailbox board for the rulings' analysis (attacks, protectors, exchanges, mate
//! threats). It works for either side regardless of whose turn it is — the rulings ask
//! "what could the mover do if it moved again?" — which the core `Position` (always
//! consistent about the side to move) deliberately does not offer.
//!
//! Squares are `u8` indices `rank * 9 + file` as in the core; kinds use the core's order
//! (king 0, advisor 1, elephant 2, horse 3, rook 4, cannon 5, pawn 6).

/// Side index: 0 Red, 1 Black.
pub(crate) type Side = u8;
pub(crate) const RED: Side = 0;
#[cfg(test)]
pub(crate) const BLACK: Side = 1;

pub(crate) const KING: u8 = 0;
pub(crate) const ADVISOR: u8 = 1;
pub(crate) const ELEPHANT: u8 = 2;
pub(crate) const HORSE: u8 = 3;
pub(crate) const ROOK: u8 = 4;
pub(crate) const CANNON: u8 = 5;
pub(crate) const PAWN: u8 = 6;

/// A piece code: 0 = empty, else `1 + side * 7 + kind`.
pub(crate) type Code = u8;

#[inline]
pub(crate) const fn code(side: Side, kind: u8) -> Code {
    1 + side * 7 + kind
}
#[inline]
pub(crate) const fn side_of(c: Code) -> Side {
    (c - 1) / 7
}
#[inline]
pub(crate) const fn kind_of(c: Code) -> u8 {
    (c - 1) % 7
}
#[inline]
pub(crate) const fn file(sq: u8) -> i8 {
    (sq % 9) as i8
}
#[inline]
pub(crate) const fn rank(sq: u8) -> i8 {
    (sq / 9) as i8
}
#[inline]
pub(crate) const fn at(f: i8, r: i8) -> Option<u8> {
    if f >= 0 && f < 9 && r >= 0 && r < 10 {
        Some((r * 9 + f) as u8)
    } else {
        None
    }
}
#[inline]
pub(crate) const fn in_palace(sq: u8, side: Side) -> bool {
    let f = file(sq);
    let r = rank(sq);
    f >= 3 && f <= 5 && if side == RED { r <= 2 } else { r >= 7 }
}
#[inline]
pub(crate) const fn own_half(sq: u8, side: Side) -> bool {
    if side == RED {
        rank(sq) <= 4
    } else {
        rank(sq) >= 5
    }
}
/// Whether a pawn of `side` on `sq` has crossed the river.
#[inline]
pub(crate) const fn crossed(sq: u8, side: Side) -> bool {
    !own_half(sq, side)
}
#[inline]
const fn forward(side: Side) -> i8 {
    if side == RED { 1 } else { -1 }
}

/// Material value for the rulings (art. 25.3): rook = two horses = two cannons = horse +
/// cannon; horse = cannon; advisor = elephant; a crossed pawn floats (1 here, and exchanges of
/// pieces against pawns never count as a gain, see [`crate::rulings`]). The king and an
/// uncrossed pawn are not 子力 (value 0 as targets); the king's value as a capturer is huge so
/// that no exchange ever "spends" it.
#[inline]
pub(crate) const fn value(kind: u8, sq: u8, side: Side) -> i32 {
    match kind {
        ROOK => 4,
        HORSE | CANNON => 2,
        ADVISOR | ELEPHANT => 1,
        PAWN => {
            if crossed(sq, side) {
                1
            } else {
                0
            }
        }
        _ => 1000,
    }
}

/// A plain move on the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct AMove {
    pub from: u8,
    pub to: u8,
}

/// What [`Arena::make`] needs to undo a move.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Undo {
    mv: AMove,
    captured: Code,
}

const ORTHO: [(i8, i8); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const DIAG: [(i8, i8); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
/// Horse jumps with their leg offsets.
const HORSE_JUMPS: [((i8, i8), (i8, i8)); 8] = [
    ((1, 2), (0, 1)),
    ((-1, 2), (0, 1)),
    ((1, -2), (0, -1)),
    ((-1, -2), (0, -1)),
    ((2, 1), (1, 0)),
    ((2, -1), (1, 0)),
    ((-2, 1), (-1, 0)),
    ((-2, -1), (-1, 0)),
];

/// The analysis board.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Arena {
    pub sq: [Code; 90],
    pub kings: [u8; 2],
}

impl std::fmt::Debug for Arena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.placement())
    }
}

const LETTERS: &[u8; 7] = b"KABNRCP";

impl Arena {
    /// An arena from the placement field of a FEN (or a whole FEN: the rest is ignored).
    #[cfg(test)]
    /// Returns `None` when the text is not a placement with exactly one king a side.
    pub fn from_placement(fen: &str) -> Option<Arena> {
        let placement = fen.split_whitespace().next()?;
        let mut sq = [0u8; 90];
        let rows: Vec<&str> = placement.split('/').collect();
        if rows.len() != 10 {
            return None;
        }
        for (i, row) in rows.iter().enumerate() {
            let r = 9 - i as i8;
            let mut f: i8 = 0;
            for ch in row.chars() {
                if let Some(d) = ch.to_digit(10) {
                    f += d as i8;
                } else {
                    let up = match ch.to_ascii_uppercase() {
                        'E' => 'B',
                        'H' => 'N',
                        c => c,
                    };
                    let kind = LETTERS.iter().position(|&l| l as char == up)? as u8;
                    let side = if ch.is_ascii_uppercase() { RED } else { BLACK };
                    let s = at(f, r)?;
                    sq[s as usize] = code(side, kind);
                    f += 1;
                }
                if f > 9 {
                    return None;
                }
            }
            if f != 9 {
                return None;
            }
        }
        Arena::from_squares(sq)
    }

    /// An arena from a 90-point array of piece codes.
    pub fn from_squares(sq: [Code; 90]) -> Option<Arena> {
        let mut kings = [u8::MAX; 2];
        for (i, &c) in sq.iter().enumerate() {
            if c != 0 && kind_of(c) == KING {
                if kings[side_of(c) as usize] != u8::MAX {
                    return None;
                }
                kings[side_of(c) as usize] = i as u8;
            }
        }
        if kings.contains(&u8::MAX) {
            return None;
        }
        Some(Arena { sq, kings })
    }

    /// The placement field of the FEN.
    pub fn placement(&self) -> String {
        let mut out = String::with_capacity(64);
        for r in (0..10).rev() {
            let mut empty = 0;
            for f in 0..9 {
                let c = self.sq[(r * 9 + f) as usize];
                if c == 0 {
                    empty += 1;
                } else {
                    if empty > 0 {
                        out.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    let l = LETTERS[kind_of(c) as usize] as char;
                    out.push(if side_of(c) == RED {
                        l
                    } else {
                        l.to_ascii_lowercase()
                    });
                }
            }
            if empty > 0 {
                out.push(char::from(b'0' + empty));
            }
            if r > 0 {
                out.push('/');
            }
        }
        out
    }

    #[inline]
    pub fn get(&self, s: u8) -> Code {
        self.sq[s as usize]
    }

    /// Plays a move (no legality check).
    #[inline]
    pub fn make(&mut self, mv: AMove) -> Undo {
        let c = self.sq[mv.from as usize];
        let captured = self.sq[mv.to as usize];
        self.sq[mv.to as usize] = c;
        self.sq[mv.from as usize] = 0;
        if c != 0 && kind_of(c) == KING {
            self.kings[side_of(c) as usize] = mv.to;
        }
        Undo { mv, captured }
    }

    /// Takes back [`Arena::make`].
    #[inline]
    pub fn unmake(&mut self, u: Undo) {
        let c = self.sq[u.mv.to as usize];
        self.sq[u.mv.from as usize] = c;
        self.sq[u.mv.to as usize] = u.captured;
        if c != 0 && kind_of(c) == KING {
            self.kings[side_of(c) as usize] = u.mv.from;
        }
    }

    /// Whether the two kings face each other on an open file.
    pub fn kings_facing(&self) -> bool {
        let a = self.kings[0];
        let b = self.kings[1];
        if file(a) != file(b) {
            return false;
        }
        let mut s = a + 9;
        while s < b {
            if self.sq[s as usize] != 0 {
                return false;
            }
            s += 9;
        }
        true
    }

    /// Whether `by` attacks point `s` (could capture a piece standing there), kings excluded
    /// from "facing" (see [`Arena::kings_facing`]) but included as palace attackers.
    pub fn attacked(&self, s: u8, by: Side) -> bool {
        let f = file(s);
        let r = rank(s);
        // Rook and cannon lines.
        for (df, dr) in ORTHO {
            let mut x = f + df;
            let mut y = r + dr;
            let mut screens = 0;
            while let Some(t) = at(x, y) {
                let c = self.sq[t as usize];
                if c != 0 {
                    if side_of(c) == by {
                        let k = kind_of(c);
                        if (screens == 0 && k == ROOK) || (screens == 1 && k == CANNON) {
                            return true;
                        }
                    }
                    screens += 1;
                    if screens > 1 {
                        break;
                    }
                }
                x += df;
                y += dr;
            }
        }
        // Horses: a horse at h attacks s when its leg (next to h, towards s) is empty.
        for ((df, dr), (lf, lr)) in HORSE_JUMPS {
            let hf = f - df;
            let hr = r - dr;
            if let Some(h) = at(hf, hr)
                && self.sq[h as usize] == code(by, HORSE)
                && let Some(leg) = at(hf + lf, hr + lr)
                && self.sq[leg as usize] == 0
            {
                return true;
            }
        }
        // Pawns.
        if let Some(p) = at(f, r - forward(by))
            && self.sq[p as usize] == code(by, PAWN)
        {
            return true;
        }
        for df in [-1, 1] {
            if let Some(p) = at(f + df, r)
                && self.sq[p as usize] == code(by, PAWN)
                && crossed(p, by)
            {
                return true;
            }
        }
        // King, advisors, elephants (only inside their own areas).
        if in_palace(s, by) {
            for (df, dr) in ORTHO {
                if let Some(k) = at(f + df, r + dr)
                    && self.sq[k as usize] == code(by, KING)
                {
                    return true;
                }
            }
            for (df, dr) in DIAG {
                if let Some(a) = at(f + df, r + dr)
                    && self.sq[a as usize] == code(by, ADVISOR)
                {
                    return true;
                }
            }
        }
        if own_half(s, by) {
            for (df, dr) in DIAG {
                if let (Some(e), Some(eye)) = (at(f + 2 * df, r + 2 * dr), at(f + df, r + dr))
                    && self.sq[e as usize] == code(by, ELEPHANT)
                    && self.sq[eye as usize] == 0
                {
                    return true;
                }
            }
        }
        false
    }

    /// Whether `side`'s king is attacked.
    #[inline]
    pub fn in_check(&self, side: Side) -> bool {
        self.attacked(self.kings[side as usize], 1 - side)
    }

    /// Whether the position after a move of `side` is legal for it: its king not attacked and
    /// the kings not facing.
    #[inline]
    pub fn legal_for(&self, side: Side) -> bool {
        !self.kings_facing() && !self.in_check(side)
    }

    /// Pseudo-legal moves of the piece on `from` (must belong to some side).
    pub fn piece_moves(&self, from: u8, out: &mut Vec<AMove>) {
        let c = self.sq[from as usize];
        if c == 0 {
            return;
        }
        let side = side_of(c);
        let f = file(from);
        let r = rank(from);
        let push = |to: u8, out: &mut Vec<AMove>| {
            let t = self.sq[to as usize];
            if t == 0 || side_of(t) != side {
                out.push(AMove { from, to });
            }
        };
        match kind_of(c) {
            KING => {
                for (df, dr) in ORTHO {
                    if let Some(t) = at(f + df, r + dr)
                        && in_palace(t, side)
                    {
                        push(t, out);
                    }
                }
            }
            ADVISOR => {
                for (df, dr) in DIAG {
                    if let Some(t) = at(f + df, r + dr)
                        && in_palace(t, side)
                    {
                        push(t, out);
                    }
                }
            }
            ELEPHANT => {
                for (df, dr) in DIAG {
                    if let (Some(t), Some(eye)) = (at(f + 2 * df, r + 2 * dr), at(f + df, r + dr))
                        && own_half(t, side)
                        && self.sq[eye as usize] == 0
                    {
                        push(t, out);
                    }
                }
            }
            HORSE => {
                for ((df, dr), (lf, lr)) in HORSE_JUMPS {
                    if let (Some(t), Some(leg)) = (at(f + df, r + dr), at(f + lf, r + lr))
                        && self.sq[leg as usize] == 0
                    {
                        push(t, out);
                    }
                }
            }
            ROOK => {
                for (df, dr) in ORTHO {
                    let (mut x, mut y) = (f + df, r + dr);
                    while let Some(t) = at(x, y) {
                        push(t, out);
                        if self.sq[t as usize] != 0 {
                            break;
                        }
                        x += df;
                        y += dr;
                    }
                }
            }
            CANNON => {
                for (df, dr) in ORTHO {
                    let (mut x, mut y) = (f + df, r + dr);
                    let mut screen = false;
                    while let Some(t) = at(x, y) {
                        let tc = self.sq[t as usize];
                        if !screen {
                            if tc == 0 {
                                out.push(AMove { from, to: t });
                            } else {
                                screen = true;
                            }
                        } else if tc != 0 {
                            if side_of(tc) != side {
                                out.push(AMove { from, to: t });
                            }
                            break;
                        }
                        x += df;
                        y += dr;
                    }
                }
            }
            _ => {
                if let Some(t) = at(f, r + forward(side)) {
                    push(t, out);
                }
                if crossed(from, side) {
                    for df in [-1, 1] {
                        if let Some(t) = at(f + df, r) {
                            push(t, out);
                        }
                    }
                }
            }
        }
    }

    /// All legal moves of `side` (whoever is "to move").
    pub fn legal_moves(&mut self, side: Side, out: &mut Vec<AMove>) {
        out.clear();
        let mut pseudo = Vec::with_capacity(64);
        for s in 0..90u8 {
            let c = self.sq[s as usize];
            if c != 0 && side_of(c) == side {
                self.piece_moves(s, &mut pseudo);
            }
        }
        for mv in pseudo {
            if self.is_legal(side, mv) {
                out.push(mv);
            }
        }
    }

    /// Whether the pseudo-legal `mv` of `side` leaves its king safe.
    #[inline]
    pub fn is_legal(&mut self, side: Side, mv: AMove) -> bool {
        let u = self.make(mv);
        let ok = self.legal_for(side);
        self.unmake(u);
        ok
    }

    /// Whether `side` has at least one legal move.
    pub fn has_legal_move(&mut self, side: Side) -> bool {
        let mut pseudo = Vec::with_capacity(64);
        for s in 0..90u8 {
            let c = self.sq[s as usize];
            if c != 0 && side_of(c) == side {
                pseudo.clear();
                self.piece_moves(s, &mut pseudo);
                for &mv in &pseudo {
                    if self.is_legal(side, mv) {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// The pieces of `by` that could legally capture on `target` (which holds a piece of the
    /// other side), as squares.
    pub fn legal_capturers(&mut self, target: u8, by: Side, out: &mut Vec<u8>) {
        out.clear();
        let mut moves = Vec::with_capacity(8);
        for s in 0..90u8 {
            let c = self.sq[s as usize];
            if c == 0 || side_of(c) != by {
                continue;
            }
            if !self.could_reach(s, target) {
                continue;
            }
            moves.clear();
            self.piece_moves(s, &mut moves);
            if moves.iter().any(|m| m.to == target)
                && self.is_legal(
                    by,
                    AMove {
                        from: s,
                        to: target,
                    },
                )
            {
                out.push(s);
            }
        }
    }

    /// A cheap filter: whether the piece on `s` could possibly move to `t` (same file or rank
    /// for sliders, near for the others).
    #[inline]
    fn could_reach(&self, s: u8, t: u8) -> bool {
        let c = self.sq[s as usize];
        let df = (file(s) - file(t)).abs();
        let dr = (rank(s) - rank(t)).abs();
        match kind_of(c) {
            ROOK | CANNON => df == 0 || dr == 0,
            _ => df <= 2 && dr <= 2,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const START: &str = "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1";

    fn perft(a: &mut Arena, side: Side, depth: u32) -> u64 {
        let mut moves = Vec::new();
        a.legal_moves(side, &mut moves);
        if depth == 1 {
            return moves.len() as u64;
        }
        let mut n = 0;
        for mv in moves {
            let u = a.make(mv);
            n += perft(a, 1 - side, depth - 1);
            a.unmake(u);
        }
        n
    }

    #[test]
    fn start_position_perft() {
        let mut a = Arena::from_placement(START).unwrap();
        assert_eq!(perft(&mut a, RED, 1), 44);
        assert_eq!(perft(&mut a, RED, 2), 1920);
        assert_eq!(perft(&mut a, RED, 3), 79666);
    }

    #[test]
    fn placement_round_trip() {
        let a = Arena::from_placement(START).unwrap();
        assert_eq!(a.placement(), START.split(' ').next().unwrap());
    }

    #[test]
    fn attacks() {
        let a = Arena::from_placement(START).unwrap();
        // The red cannon on h2 attacks h9 through the black horse? No: h7 black cannon is the
        // screen for nothing; b2 cannon attacks b9 via b7 screen.
        assert!(a.attacked(1 + 9 * 9, RED)); // b9 knight, through b7 cannon screen
        assert!(!a.in_check(RED));
        assert!(!a.kings_facing());
    }
}
