//! The automatic referee behind [`super::Game`]: repetition ruling points, the must-vary
//! warning of 24.3, the natural move limit and dead positions. It sees moves on the analysis
//! analysis board and position hashes from the caller (the core's Zobrist keys), and does the
//! expensive work (classifying the cycle's moves) only at a ruling point.

use super::arena::{AMove, Arena, CANNON, HORSE, PAWN, ROOK, Side, kind_of, side_of};
use super::classify::{RawClass, classify};
use super::judge::{CycleEntry, Findings, RawVerdict, Reason, Ruleset, findings, judge};

/// The natural move limit (4.2.4, 23.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MoveLimit {
    /// Moves by both sides (one move = two plies) without a capture that draw; 60 by
    /// default, an event may lower it; 0 turns the limit off.
    pub moves: u32,
    /// Of each side's checks in the span only this many count (23.3: 10); a reply to an
    /// uncounted check does not count either.
    pub check_cap: u32,
}

impl Default for MoveLimit {
    fn default() -> Self {
        MoveLimit {
            moves: 60,
            check_cap: 10,
        }
    }
}

/// Plies reserved for the span since the last capture (the vectors are cleared, not freed, at
/// each capture, so they grow at most once or twice per game beyond this).
const SPAN_RESERVE: usize = 64;

/// A must-vary warning in force.
#[derive(Debug, Clone)]
pub(crate) struct WarningState {
    pub side: Side,
    pub reason: Reason,
    /// Hash of the position of the ruling point.
    pub hash: u64,
    /// Index (since base) of the ruling point.
    pub index: usize,
    /// Hashes of the positions of the warned loop.
    pub loop_hashes: Vec<u64>,
}

/// A ruling as the referee found it (arena terms; the game layer adds notation).
#[derive(Debug, Clone)]
pub(crate) struct RawRuling {
    pub verdict: RawVerdict,
    pub findings: Findings,
    /// Index since base of the cycle's first position.
    pub start: usize,
    /// The cycle's moves (from `start`).
    pub entries: Vec<CycleEntry>,
    /// Whether this loss follows an ignored warning (24.3).
    pub after_warning: bool,
}

/// What a recorded move led to.
#[derive(Debug, Clone)]
pub(crate) enum RefEvent {
    Ruling(RawRuling),
    MoveLimit,
    DeadPosition,
}

/// The referee's state. Cloned with room for more plies (see [`super::game::roomy`]).
#[derive(Debug)]
pub(crate) struct Referee {
    pub ruleset: Ruleset,
    pub limit: MoveLimit,
    /// Position at the last capture (or the start).
    base: Arena,
    /// Game ply of `base`.
    pub base_ply: u32,
    /// Current position.
    pub arena: Arena,
    /// hashes[i]: the position i plies after base.
    hashes: Vec<u64>,
    moves: Vec<AMove>,
    classes: Vec<Option<RawClass>>,
    counted: u32,
    checks: [u32; 2],
    reply_uncounted: bool,
    pub warning: Option<WarningState>,
}

impl Clone for Referee {
    fn clone(&self) -> Self {
        use super::game::roomy;
        Referee {
            ruleset: self.ruleset,
            limit: self.limit,
            base: self.base.clone(),
            base_ply: self.base_ply,
            arena: self.arena.clone(),
            hashes: roomy(&self.hashes),
            moves: roomy(&self.moves),
            classes: roomy(&self.classes),
            counted: self.counted,
            checks: self.checks,
            reply_uncounted: self.reply_uncounted,
            warning: self.warning.clone(),
        }
    }

    /// In the buffers this referee already has (see `Game::clone_from`).
    fn clone_from(&mut self, source: &Self) {
        // Every field named, so a new one cannot be left out.
        let Referee {
            ruleset,
            limit,
            base,
            base_ply,
            arena,
            hashes,
            moves,
            classes,
            counted,
            checks,
            reply_uncounted,
            warning,
        } = source;
        self.ruleset = *ruleset;
        self.limit = *limit;
        self.base.clone_from(base);
        self.base_ply = *base_ply;
        self.arena.clone_from(arena);
        self.hashes.clone_from(hashes);
        self.moves.clone_from(moves);
        self.classes.clone_from(classes);
        self.counted = *counted;
        self.checks = *checks;
        self.reply_uncounted = *reply_uncounted;
        self.warning.clone_from(warning);
    }
}

impl Referee {
    /// A referee from `arena` (whose key is `hash`) at game ply `ply`; `halfmoves`: the plies
    /// already counted towards the move limit (a FEN's halfmove clock: the history before it
    /// is unknown, so every one of them counts and none of them was a check).
    pub fn new(
        arena: Arena,
        hash: u64,
        ply: u32,
        ruleset: Ruleset,
        limit: MoveLimit,
        halfmoves: u32,
    ) -> Referee {
        let mut hashes = Vec::with_capacity(SPAN_RESERVE + 1);
        hashes.push(hash);
        Referee {
            ruleset,
            limit,
            base: arena.clone(),
            base_ply: ply,
            arena,
            hashes,
            moves: Vec::with_capacity(SPAN_RESERVE),
            classes: Vec::with_capacity(SPAN_RESERVE),
            counted: halfmoves,
            checks: [0; 2],
            reply_uncounted: false,
            warning: None,
        }
    }

    /// Whether the plies counted reach the natural move limit (4.2.4; never when it is off).
    pub fn move_limit_reached(&self) -> bool {
        self.limit.moves > 0 && u64::from(self.counted) >= 2 * u64::from(self.limit.moves)
    }

    /// Whether the material can never mate (4.2.1; see the crate README for the list).
    pub fn dead_position(&self) -> bool {
        dead_material(&self.arena)
    }

    /// Plies counted towards the natural move limit so far.
    pub fn counted_plies(&self) -> u32 {
        self.counted
    }

    /// Records a legal move (already known not to end the game by mate or 困毙). `check`:
    /// the move gives check; `hash`: the key of the position after it.
    pub fn record(&mut self, mv: AMove, hash: u64, check: bool) -> Option<RefEvent> {
        let capture = self.arena.get(mv.to) != 0;
        let mover = side_of(self.arena.get(mv.from));
        self.arena.make(mv);
        if capture {
            self.base = self.arena.clone();
            self.base_ply += self.moves.len() as u32 + 1;
            self.hashes.clear();
            self.hashes.push(hash);
            self.moves.clear();
            self.classes.clear();
            self.counted = 0;
            self.checks = [0; 2];
            self.reply_uncounted = false;
            self.warning = None;
            if dead_material(&self.arena) {
                return Some(RefEvent::DeadPosition);
            }
            return None;
        }
        self.hashes.push(hash);
        self.moves.push(mv);
        self.classes.push(None);
        // Natural move limit.
        let mut counts = !self.reply_uncounted;
        self.reply_uncounted = false;
        if check {
            self.checks[mover as usize] += 1;
            if self.checks[mover as usize] > self.limit.check_cap {
                counts = false;
                self.reply_uncounted = true;
            }
        }
        if counts {
            // Saturating: a FEN's clock may say up to u32::MAX with the limit off.
            self.counted = self.counted.saturating_add(1);
        }
        let ruling = self.repetition();
        if let Some(RefEvent::Ruling(r)) = &ruling
            && !matches!(r.verdict, RawVerdict::MustVary(..))
        {
            return ruling; // A repetition that ends the game comes first.
        }
        if self.move_limit_reached() {
            return Some(RefEvent::MoveLimit); // Ends the game; a warning would be moot.
        }
        ruling
    }

    /// The warning in force while the game is still on the warned loop.
    pub fn pending_warning(&self) -> Option<&WarningState> {
        let h = *self.hashes.last()?;
        self.warning.as_ref().filter(|w| w.loop_hashes.contains(&h))
    }

    fn repetition(&mut self) -> Option<RefEvent> {
        let n = self.hashes.len() - 1;
        let h = self.hashes[n];
        let mut prev = None;
        let mut prev2 = None;
        let mut j = n;
        while j >= 2 {
            j -= 2;
            if self.hashes[j] == h {
                if prev.is_none() {
                    prev = Some(j);
                } else {
                    prev2 = Some(j);
                    break;
                }
            }
        }
        let prev = prev?;
        if let Some(w) = &self.warning
            && w.hash == h
            && prev >= w.index
        {
            let side = w.side;
            let reason = w.reason;
            let mut r = self.rule(prev, n);
            if r.verdict == RawVerdict::MustVary(side, reason) {
                r.verdict = RawVerdict::Loss(side, reason, "24.3");
                r.after_warning = true;
            }
            return self.issue(r, h, prev, n);
        }
        let first = prev2?;
        let r = self.rule(first, n);
        if let (RawVerdict::MustVary(side, _), Some(w)) = (r.verdict, &self.warning)
            && w.side == side
            && w.loop_hashes.contains(&h)
        {
            return None; // The same warned loop, one position further: already warned.
        }
        self.issue(r, h, prev, n)
    }

    fn issue(&mut self, r: RawRuling, h: u64, prev: usize, n: usize) -> Option<RefEvent> {
        if let RawVerdict::MustVary(side, reason) = r.verdict {
            self.warning = Some(WarningState {
                side,
                reason,
                hash: h,
                index: n,
                loop_hashes: self.hashes[prev..=n].to_vec(),
            });
        }
        Some(RefEvent::Ruling(r))
    }

    /// Classifies the moves from position `start` to position `end` and judges them.
    fn rule(&mut self, start: usize, end: usize) -> RawRuling {
        let mut a = self.base.clone();
        for &mv in &self.moves[..start] {
            a.make(mv);
        }
        let mut entries = Vec::with_capacity(end - start);
        for i in start..end {
            let mv = self.moves[i];
            // The same move from the same position (the cycle's second loop) is classified
            // once.
            let known = (0..self.classes.len())
                .find(|&j| {
                    self.classes[j].is_some()
                        && self.moves[j] == mv
                        && self.hashes[j] == self.hashes[i]
                })
                .and_then(|j| self.classes[j].clone());
            let raw = match known {
                Some(c) => c,
                None => classify(&a, mv),
            };
            self.classes[i] = Some(raw.clone());
            entries.push(CycleEntry {
                side: side_of(a.get(mv.from)),
                mv,
                raw,
            });
            a.make(mv);
        }
        let f = findings(&entries);
        RawRuling {
            verdict: judge(&f, self.ruleset),
            findings: f,
            start,
            entries,
            after_warning: false,
        }
    }
}

/// 4.2.1, conservatively: neither side has a rook, horse, cannon or pawn.
///
/// Why that is certainly dead. Advisors and elephants never leave their own half and the king
/// never leaves its palace, so no piece can ever attack the other king (the kings facing is an
/// illegal move, not a check): no checkmate. And no 困毙, point by point for the king: at the
/// back corners (d9) it keeps the step along its file (d8 holds no advisor or elephant, and if
/// that file were open to the enemy king the king would already be facing it); in the centre
/// (e8) it has four neighbours, two of them (d8, f8) never occupied by its own pieces and only
/// one closable by the enemy king; elsewhere (e9, d8, e7 …) all its free neighbours can be
/// closed only with both advisors on the other neighbours and the enemy king on the last one's
/// open file — and then an advisor can step onto that file (or away) legally. So the side to
/// move always has a legal move. Anything with a pawn is left to play on.
pub(crate) fn dead_material(a: &Arena) -> bool {
    !a.sq
        .iter()
        .any(|&c| c != 0 && matches!(kind_of(c), ROOK | HORSE | CANNON | PAWN))
}
