//! Move classification for the repetition rulings: 将 / 杀 / 捉 (with the chased pieces) / 闲,
//! by the heaviest effect (art. 27.4).
//!
//! Every question is asked on the analysis board (`Arena`) "as if the mover moved again": the rules define
//! a chase or a mate threat by what the mover could do next (28.2, 28.3).

use super::arena::{AMove, Arena, Code, KING, PAWN, Side, kind_of, side_of, value};

/// How many checking moves the mover may use in a 杀 (mate threat, 28.2): mate at once, or by
/// a forced run of at most this many checks in all.
pub const MATE_THREAT_CHECKS: u32 = 2;

/// The classes of a move, lightest first; a move is named by its heaviest effect (27.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MoveClass {
    /// 闲: no attack (including 兑, 献, 拦, 跟, and the exempt king-alone / pawn-alone chases).
    Idle,
    /// 捉: newly threatens to win a piece (28.3, 29).
    Chase,
    /// 杀: threatens mate, at once or by a short forced run of checks (28.2).
    MateThreat,
    /// 将: check (28.1).
    Check,
}

impl MoveClass {
    /// Stable machine code: `idle`, `chase`, `mate_threat`, `check`.
    #[must_use]
    pub const fn code(self) -> &'static str {
        match self {
            MoveClass::Idle => "idle",
            MoveClass::Chase => "chase",
            MoveClass::MateThreat => "mate_threat",
            MoveClass::Check => "check",
        }
    }

    /// The Chinese term: 闲 捉 杀 将.
    #[must_use]
    pub const fn chinese(self) -> &'static str {
        match self {
            MoveClass::Idle => "闲",
            MoveClass::Chase => "捉",
            MoveClass::MateThreat => "杀",
            MoveClass::Check => "将",
        }
    }

    /// Whether the move is an attack (打, 28.4).
    #[must_use]
    pub const fn is_attack(self) -> bool {
        !matches!(self, MoveClass::Idle)
    }
}

/// The arena-level classification of one move.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RawClass {
    /// The move gives check.
    pub check: bool,
    /// The move creates a mate threat (only looked at when it is not a check).
    pub mate_threat: bool,
    /// Squares (after the move) of the newly chased pieces, pawn-alone attacks not counted.
    pub chased: u128,
    /// The same with pawn attacks counted (细则 11: when both sides attack perpetually).
    pub chased_with_pawns: u128,
}

impl RawClass {
    /// The class, with or without pawn attacks counted as chases.
    pub fn class(&self, pawns_count: bool) -> MoveClass {
        if self.check {
            MoveClass::Check
        } else if self.mate_threat {
            MoveClass::MateThreat
        } else if (if pawns_count {
            self.chased_with_pawns
        } else {
            self.chased
        }) != 0
        {
            MoveClass::Chase
        } else {
            MoveClass::Idle
        }
    }
}

/// Every victim square: no mask.
const ALL: u128 = !0;

/// Classifies `mv`, played by `mover` from `before` (which must be the position before the
/// move; the move must be legal and must not capture — captures never lie inside a cycle, but
/// they are classified the same way if asked).
pub(crate) fn classify(before: &Arena, mv: AMove) -> RawClass {
    let mut a = before.clone();
    let mover = side_of(a.get(mv.from));
    let opp = 1 - mover;
    let mut out = RawClass::default();
    let u = a.make(mv);
    if a.in_check(opp) {
        out.check = true;
        return out;
    }
    let (t0_after, t1_after) = threats(&mut a, mover, ALL);
    let mates_after = mates_by_checks(&mut a, mover, MATE_THREAT_CHECKS);
    a.unmake(u);
    // 29.2: only a threat that was not there before the move is new, so only the pieces
    // threatened after it need a look before it (they stand on the same points: the mover's
    // piece is the only one that moved).
    let (t0_before, t1_before) = threats(&mut a, mover, t1_after);
    out.chased = t0_after & !t0_before;
    out.chased_with_pawns = t1_after & !t1_before;
    out.mate_threat = mates_after && !mates_by_checks(&mut a, mover, MATE_THREAT_CHECKS);
    if out.chased == 0 && !out.mate_threat {
        // 28.3, 29.1: winning a piece by a check first (a fork, a discovered check). Only
        // looked at for otherwise idle moves: a heavier class already decides.
        let u = a.make(mv);
        let via_after = threats_via_check(&mut a, mover, !t0_after);
        a.unmake(u);
        if via_after != 0 {
            let not_before = via_after & !threats(&mut a, mover, via_after).0;
            if not_before != 0 {
                let new = not_before & !threats_via_check(&mut a, mover, not_before);
                out.chased |= new;
                out.chased_with_pawns |= new;
            }
        }
    }
    out
}

/// The pieces `s` would win by giving a check first (it moves again): some checking move
/// after which every legal reply leaves the piece won (28.3 连续照将, 29.1; one check). Only
/// the victims in `mask` are looked at.
fn threats_via_check(a: &mut Arena, s: Side, mask: u128) -> u128 {
    let opp = 1 - s;
    let mut checks = Vec::with_capacity(8);
    checking_moves(a, s, &mut checks);
    let mut out = 0u128;
    let mut replies = Vec::with_capacity(16);
    for c in checks {
        if a.get(c.to) != 0 {
            continue; // A capture with check wins its piece directly.
        }
        let u = a.make(c);
        a.legal_moves(opp, &mut replies);
        let mut common = if replies.is_empty() { 0 } else { mask & !out };
        for &r in &replies {
            if common == 0 {
                break;
            }
            let ur = a.make(r);
            common &= threats(a, s, common).0;
            a.unmake(ur);
        }
        a.unmake(u);
        out |= common;
    }
    out
}

/// The pieces of `opp` (= not `s`) that `s` threatens to win if it moved next: returns the
/// victims' squares as masks, first without and then with pawn attacks counted. Only the
/// victims on the points of `mask` are looked at.
pub(crate) fn threats(a: &mut Arena, s: Side, mask: u128) -> (u128, u128) {
    let opp = 1 - s;
    let mut t0 = 0u128;
    let mut t1 = 0u128;
    let mut capturers = Vec::with_capacity(8);
    for v in 0..90u8 {
        let vc = a.get(v);
        if vc == 0 || side_of(vc) != opp || mask >> v & 1 == 0 {
            continue;
        }
        let vk = kind_of(vc);
        if vk == KING || value(vk, v, opp) == 0 {
            continue; // 25.3: the king and an uncrossed pawn are not 子力.
        }
        a.legal_capturers(v, s, &mut capturers);
        let mut by_piece = false;
        let mut by_pawn = false;
        for &from in &capturers {
            let ak = kind_of(a.get(from));
            if ak == KING {
                continue; // 27.1: the king alone attacking is idle.
            }
            if ak == PAWN && by_pawn {
                continue;
            }
            if by_piece {
                break;
            }
            if ak == vk && can_take_back(a, v, from, opp) {
                continue; // 28.5: 兑, like pieces that can take each other.
            }
            if see(a, from, v, s) <= 0 {
                continue;
            }
            if mated_after(a, AMove { from, to: v }, s) {
                continue; // 29.4, 细则 7: a false chase.
            }
            if ak == PAWN {
                by_pawn = true;
            } else {
                by_piece = true;
            }
        }
        let bit = 1u128 << v;
        if by_piece {
            t0 |= bit;
            t1 |= bit;
        } else if by_pawn {
            t1 |= bit;
        }
    }
    (t0, t1)
}

/// Whether the piece on `v` (of `opp`) could legally capture the piece on `attacker`.
fn can_take_back(a: &mut Arena, v: u8, attacker: u8, opp: Side) -> bool {
    let mut moves = Vec::with_capacity(16);
    a.piece_moves(v, &mut moves);
    moves.iter().any(|m| m.to == attacker)
        && a.is_legal(
            opp,
            AMove {
                from: v,
                to: attacker,
            },
        )
}

/// Static exchange on `to`: `s` takes with the piece on `from`, then both sides recapture
/// with their least valuable legal capturer while it pays. Returns `s`'s material balance.
/// Played on the real board, so pins, the flying general and cannon screens are exact.
pub(crate) fn see(a: &mut Arena, from: u8, to: u8, s: Side) -> i32 {
    let mut gains = [0i32; 32];
    let mut undos = Vec::with_capacity(16);
    let victim = a.get(to);
    gains[0] = value(kind_of(victim), to, side_of(victim));
    let mut on_square_value = piece_value_at(a.get(from), to);
    undos.push(a.make(AMove { from, to }));
    let mut side = 1 - s;
    let mut depth = 1;
    let mut capturers = Vec::with_capacity(8);
    while depth < gains.len() {
        a.legal_capturers(to, side, &mut capturers);
        let Some(&best) = capturers
            .iter()
            .min_by_key(|&&c| piece_value_at(a.get(c), to))
        else {
            break;
        };
        gains[depth] = on_square_value - gains[depth - 1];
        on_square_value = piece_value_at(a.get(best), to);
        undos.push(a.make(AMove { from: best, to }));
        side = 1 - side;
        depth += 1;
    }
    while let Some(u) = undos.pop() {
        a.unmake(u);
    }
    while depth > 1 {
        depth -= 1;
        gains[depth - 1] = -std::cmp::max(-gains[depth - 1], gains[depth]);
    }
    gains[0]
}

#[inline]
fn piece_value_at(c: Code, sq: u8) -> i32 {
    value(kind_of(c), sq, side_of(c))
}

/// Whether, after `s` plays the capture `mv`, the other side mates it at once (29.4, 细则 7:
/// "一旦吃子立即会被对方将死"): with its next move, or by a forced run of checks that starts
/// with it (连将杀, as in 杀, 28.2), of at most [`MATE_THREAT_CHECKS`] checks. Such a capture
/// is only a chase in form (a false chase, 假捉), and the move is idle.
fn mated_after(a: &mut Arena, mv: AMove, s: Side) -> bool {
    let u = a.make(mv);
    let r = mates_by_checks(a, 1 - s, MATE_THREAT_CHECKS);
    a.unmake(u);
    r
}

/// The legal moves of `side` that give check.
fn checking_moves(a: &mut Arena, side: Side, out: &mut Vec<AMove>) {
    out.clear();
    let opp = 1 - side;
    let mut pseudo = Vec::with_capacity(64);
    for s in 0..90u8 {
        let c = a.get(s);
        if c != 0 && side_of(c) == side {
            a.piece_moves(s, &mut pseudo);
        }
    }
    for mv in pseudo {
        if !may_check(a, mv, opp) {
            continue;
        }
        let u = a.make(mv);
        if a.in_check(opp) && a.legal_for(side) {
            out.push(mv);
        }
        a.unmake(u);
    }
}

/// Whether `side` (to move) mates by a forced run of at most `checks` checking moves.
pub(crate) fn mates_by_checks(a: &mut Arena, side: Side, checks: u32) -> bool {
    if checks == 0 {
        return false;
    }
    let opp = 1 - side;
    let mut moves = Vec::with_capacity(16);
    checking_moves(a, side, &mut moves);
    let mut replies = Vec::with_capacity(16);
    for mv in moves {
        let u = a.make(mv);
        let wins = if checks == 1 {
            // The last check must mate: no reply at all (stops at the first one found).
            !a.has_legal_move(opp)
        } else {
            a.legal_moves(opp, &mut replies);
            replies.iter().all(|&r| {
                let ur = a.make(r);
                let w = mates_by_checks(a, side, checks - 1);
                a.unmake(ur);
                w
            })
        };
        a.unmake(u);
        if wins {
            return true;
        }
    }
    false
}

/// A cheap filter: can `mv` possibly check the king of `king_side`? (It must land on or
/// leave the king's file or rank, or come or go near the king — horses, pawns and legs.)
#[inline]
fn may_check(a: &Arena, mv: AMove, king_side: Side) -> bool {
    use super::arena::{file, rank};
    let k = a.kings[king_side as usize];
    let (kf, kr) = (file(k), rank(k));
    let near = |s: u8| (file(s) - kf).abs() <= 2 && (rank(s) - kr).abs() <= 2;
    file(mv.to) == kf
        || rank(mv.to) == kr
        || file(mv.from) == kf
        || rank(mv.from) == kr
        || near(mv.to)
        || near(mv.from)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sq(s: &str) -> u8 {
        let b = s.as_bytes();
        (b[1] - b'0') * 9 + (b[0] - b'a')
    }
    fn mv(s: &str) -> AMove {
        AMove {
            from: sq(&s[..2]),
            to: sq(&s[2..]),
        }
    }
    fn cls(fen: &str, m: &str) -> RawClass {
        classify(&Arena::from_placement(fen).unwrap(), mv(m))
    }
    fn bits(squares: &[&str]) -> u128 {
        squares.iter().fold(0, |b, s| b | 1u128 << sq(s))
    }

    #[test]
    fn rook_chases_unprotected_horse() {
        // Red rook a0 goes to a7? Black horse c7 alone on rank 7.
        let c = cls("4k4/9/2n6/9/9/9/9/9/9/R2K5 w", "a0a7");
        assert_eq!(c.class(false), MoveClass::Chase);
        assert_eq!(c.chased, bits(&["c7"]));
    }

    #[test]
    fn rook_vs_protected_horse_is_idle_but_horse_vs_protected_rook_chases() {
        // Black horse c7 protected by the rook c9.
        let c = cls("2r1k4/9/2n6/9/9/9/9/9/9/R2K5 w", "a0a7");
        assert_eq!(c.class(false), MoveClass::Idle);
        // Red horse attacks black rook c9 (protected by the king? no: by the advisor d8? no).
        let c = cls("2r1k4/4a4/3r5/9/9/9/9/9/3N5/4K4 w", "d1e3");
        assert_eq!(c.class(false), MoveClass::Idle);
    }

    #[test]
    fn check_is_heaviest() {
        let c = cls("4k4/9/2n6/9/9/9/9/9/9/R2K5 w", "a0a9");
        assert_eq!(c.class(false), MoveClass::Check);
    }

    #[test]
    fn like_pieces_offering_exchange_is_idle() {
        // Red rook to c-file facing the black rook c7 that can take it back: 兑.
        let c = cls("4k4/9/2r6/9/9/9/9/9/9/R2K5 w", "a0c0");
        assert_eq!(c.class(false), MoveClass::Idle);
    }

    #[test]
    fn mate_threat() {
        // Red rooks: one on the 8th rank would mate with the other on the 9th.
        let c = cls("3k5/9/9/3p5/9/9/9/9/R8/1R2K4 w", "b0b8");
        assert_eq!(c.class(false), MoveClass::MateThreat);
    }
}
