//! The ruling over one cycle (art. 24, 26; 25.2 for what is forbidden).

use super::arena::{AMove, Side};
use super::classify::{MoveClass, RawClass};

/// Which rules decide repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Ruleset {
    /// The Chinese Xiangqi Association rules (1999 棋例, as `docs/rules.md` applies them):
    /// 长将 loses; both allowed or both forbidden draws; forbidden against allowed gets a
    /// must-vary warning (24.3) and loses when the same cycle completes again.
    #[default]
    Cxa,
    /// What engines (Fairy-Stockfish, Pikafish) do: at the third occurrence perpetual check
    /// loses, perpetual chase of one and the same piece loses, everything else is a draw.
    Engine,
}

impl Ruleset {
    /// `"cxa"` or `"engine"`.
    #[must_use]
    pub const fn code(self) -> &'static str {
        match self {
            Ruleset::Cxa => "cxa",
            Ruleset::Engine => "engine",
        }
    }

    /// Parses `"cxa"` / `"engine"`.
    #[must_use]
    pub fn from_code(s: &str) -> Option<Ruleset> {
        match s {
            "cxa" => Some(Ruleset::Cxa),
            "engine" => Some(Ruleset::Engine),
            _ => None,
        }
    }
}

/// What one side did over the cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// 长将: every move a check.
    PerpetualCheck,
    /// 长杀: every move a mate threat.
    PerpetualMateThreat,
    /// 长捉: every move a chase (of one piece or several, 28.12).
    PerpetualChase,
    /// 一将一杀: checks and mate threats only.
    CheckAndMateThreat,
    /// 一将一捉: checks and chases only.
    CheckAndChase,
    /// 一杀一捉: mate threats and chases only.
    MateThreatAndChase,
    /// 将、杀、捉 all mixed, no idle move.
    MixedAttack,
    /// Attacks with at least one idle move (数将一闲, 数捉一闲 …): allowed.
    AttacksWithIdle,
    /// Only idle moves: allowed.
    Idle,
}

impl Pattern {
    /// Whether the pattern is a 禁止着法 (25.2).
    #[must_use]
    pub const fn forbidden(self) -> bool {
        !matches!(self, Pattern::AttacksWithIdle | Pattern::Idle)
    }

    /// Stable machine code.
    #[must_use]
    pub const fn code(self) -> &'static str {
        match self {
            Pattern::PerpetualCheck => "perpetual_check",
            Pattern::PerpetualMateThreat => "perpetual_mate_threat",
            Pattern::PerpetualChase => "perpetual_chase",
            Pattern::CheckAndMateThreat => "check_and_mate_threat",
            Pattern::CheckAndChase => "check_and_chase",
            Pattern::MateThreatAndChase => "mate_threat_and_chase",
            Pattern::MixedAttack => "mixed_attack",
            Pattern::AttacksWithIdle => "attacks_with_idle",
            Pattern::Idle => "idle",
        }
    }

    /// The Chinese term.
    #[must_use]
    pub const fn chinese(self) -> &'static str {
        match self {
            Pattern::PerpetualCheck => "长将",
            Pattern::PerpetualMateThreat => "长杀",
            Pattern::PerpetualChase => "长捉",
            Pattern::CheckAndMateThreat => "一将一杀",
            Pattern::CheckAndChase => "一将一捉",
            Pattern::MateThreatAndChase => "一杀一捉",
            Pattern::MixedAttack => "将杀捉交替",
            Pattern::AttacksWithIdle => "打中有闲",
            Pattern::Idle => "闲着",
        }
    }

    /// The English term.
    #[must_use]
    pub const fn english(self) -> &'static str {
        match self {
            Pattern::PerpetualCheck => "perpetual check",
            Pattern::PerpetualMateThreat => "perpetual mate threat",
            Pattern::PerpetualChase => "perpetual chase",
            Pattern::CheckAndMateThreat => "alternating check and mate threat",
            Pattern::CheckAndChase => "alternating check and chase",
            Pattern::MateThreatAndChase => "alternating mate threat and chase",
            Pattern::MixedAttack => "uninterrupted attacks",
            Pattern::AttacksWithIdle => "attacks with idle moves",
            Pattern::Idle => "idle moves",
        }
    }

    fn of(classes: impl Iterator<Item = MoveClass>) -> Pattern {
        let (mut check, mut mate, mut chase, mut idle, mut n) = (0, 0, 0, 0, 0);
        for c in classes {
            n += 1;
            match c {
                MoveClass::Check => check += 1,
                MoveClass::MateThreat => mate += 1,
                MoveClass::Chase => chase += 1,
                MoveClass::Idle => idle += 1,
            }
        }
        if idle == n {
            Pattern::Idle
        } else if idle > 0 {
            Pattern::AttacksWithIdle
        } else if check == n {
            Pattern::PerpetualCheck
        } else if mate == n {
            Pattern::PerpetualMateThreat
        } else if chase == n {
            Pattern::PerpetualChase
        } else if chase == 0 {
            Pattern::CheckAndMateThreat
        } else if mate == 0 {
            Pattern::CheckAndChase
        } else if check == 0 {
            Pattern::MateThreatAndChase
        } else {
            Pattern::MixedAttack
        }
    }
}

/// Why the game ended or what the warning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// One-sided 长将 (24.1, 26.1).
    PerpetualCheck,
    /// Any other forbidden perpetual attack (长捉, 长杀, 一将一捉 …; 24.3, 26.4).
    PerpetualChase,
    /// The repetition is drawn (24.2, 26.2, 26.3).
    RepetitionDraw,
}

impl Reason {
    /// Stable machine code (the `reason` of `chuhe rules batch`).
    #[must_use]
    pub const fn code(self) -> &'static str {
        match self {
            Reason::PerpetualCheck => "perpetual_check",
            Reason::PerpetualChase => "perpetual_chase",
            Reason::RepetitionDraw => "repetition_draw",
        }
    }
}

/// The verdict over one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawVerdict {
    /// `Side` loses.
    Loss(Side, Reason, &'static str),
    /// Drawn.
    Draw(&'static str),
    /// `Side` must vary (24.3).
    MustVary(Side, Reason),
}

/// One move of a cycle for the judge.
#[derive(Debug, Clone)]
pub(crate) struct CycleEntry {
    pub side: Side,
    pub mv: AMove,
    pub raw: RawClass,
}

/// Per-side findings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Findings {
    /// Whether pawn attacks count as chases (细则 11: both sides attack perpetually).
    pub pawns_count: bool,
    pub patterns: [Pattern; 2],
    /// Engine ruleset: a piece (its square at the cycle start) chased by every move.
    pub same_piece: [Option<u8>; 2],
}

pub(crate) fn findings(entries: &[CycleEntry]) -> Findings {
    let pattern = |side: Side, pawns: bool| {
        Pattern::of(
            entries
                .iter()
                .filter(|e| e.side == side)
                .map(|e| e.raw.class(pawns)),
        )
    };
    let with_pawns = [pattern(0, true), pattern(1, true)];
    let pawns_count = with_pawns[0].forbidden() && with_pawns[1].forbidden();
    let patterns = if pawns_count {
        with_pawns
    } else {
        [pattern(0, false), pattern(1, false)]
    };
    Findings {
        pawns_count,
        patterns,
        same_piece: same_piece_chased(entries),
    }
}

/// For each side, a piece (named by its square at the start of the cycle) that every one of
/// its moves chases, if any (the engines' "perpetual chase of the same piece").
fn same_piece_chased(entries: &[CycleEntry]) -> [Option<u8>; 2] {
    // origin[sq] = where the piece now on sq stood at the start of the cycle.
    let mut origin: [u8; 90] = std::array::from_fn(|i| i as u8);
    let mut common: [u128; 2] = [u128::MAX >> 38, u128::MAX >> 38];
    let mut any = [false; 2];
    for e in entries {
        origin[e.mv.to as usize] = origin[e.mv.from as usize];
        let s = e.side as usize;
        any[s] = true;
        let mut ids = 0u128;
        if !e.raw.check {
            let mut m = e.raw.chased;
            while m != 0 {
                let sq = m.trailing_zeros() as usize;
                m &= m - 1;
                ids |= 1u128 << origin[sq];
            }
        }
        common[s] &= ids;
    }
    [0, 1].map(|s| (any[s] && common[s] != 0).then(|| common[s].trailing_zeros() as u8))
}

/// The ruling over a cycle under `ruleset`.
pub(crate) fn judge(f: &Findings, ruleset: Ruleset) -> RawVerdict {
    let [r, b] = f.patterns;
    let r_check = r == Pattern::PerpetualCheck;
    let b_check = b == Pattern::PerpetualCheck;
    match (r_check, b_check) {
        (true, false) => return RawVerdict::Loss(0, Reason::PerpetualCheck, "24.1"),
        (false, true) => return RawVerdict::Loss(1, Reason::PerpetualCheck, "24.1"),
        (true, true) => return RawVerdict::Draw("24.2"),
        _ => {}
    }
    match ruleset {
        Ruleset::Cxa => match (r.forbidden(), b.forbidden()) {
            (true, false) => RawVerdict::MustVary(0, Reason::PerpetualChase),
            (false, true) => RawVerdict::MustVary(1, Reason::PerpetualChase),
            _ => RawVerdict::Draw("24.2"),
        },
        Ruleset::Engine => match (f.same_piece[0].is_some(), f.same_piece[1].is_some()) {
            (true, false) => RawVerdict::Loss(0, Reason::PerpetualChase, "engine"),
            (false, true) => RawVerdict::Loss(1, Reason::PerpetualChase, "engine"),
            _ => RawVerdict::Draw("engine"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const I: u8 = 0;
    const X: u8 = 1; // chase of the piece on square 10
    const Y: u8 = 2; // chase of the piece on square 20
    const P: u8 = 3; // pawn-only chase of square 30
    const M: u8 = 4;
    const C: u8 = 5;

    /// A cycle from per-side move kinds (Red, Black alternating, Red first); no piece moves
    /// (from == to), so chased squares keep their identity.
    fn cycle(red: &[u8], black: &[u8]) -> Vec<CycleEntry> {
        let mut v = Vec::new();
        for (r, b) in red.iter().zip(black) {
            for (side, k) in [(0u8, *r), (1u8, *b)] {
                let mut raw = RawClass::default();
                match k {
                    X => {
                        raw.chased = 1 << 10;
                        raw.chased_with_pawns = 1 << 10;
                    }
                    Y => {
                        raw.chased = 1 << 20;
                        raw.chased_with_pawns = 1 << 20;
                    }
                    P => raw.chased_with_pawns = 1 << 30,
                    M => raw.mate_threat = true,
                    C => raw.check = true,
                    _ => {}
                }
                v.push(CycleEntry {
                    side,
                    mv: AMove { from: 0, to: 0 },
                    raw,
                });
            }
        }
        v
    }

    fn cxa(red: &[u8], black: &[u8]) -> RawVerdict {
        judge(&findings(&cycle(red, black)), Ruleset::Cxa)
    }
    fn engine(red: &[u8], black: &[u8]) -> RawVerdict {
        judge(&findings(&cycle(red, black)), Ruleset::Engine)
    }

    #[test]
    fn perpetual_check() {
        assert_eq!(
            cxa(&[C, C], &[I, I]),
            RawVerdict::Loss(0, Reason::PerpetualCheck, "24.1")
        );
        assert_eq!(
            cxa(&[I, I], &[C, C]),
            RawVerdict::Loss(1, Reason::PerpetualCheck, "24.1")
        );
        // 26.1/26.3: one-sided 长将 loses even against 长捉 or 长杀.
        assert_eq!(
            cxa(&[C, C], &[X, X]),
            RawVerdict::Loss(0, Reason::PerpetualCheck, "24.1")
        );
        assert_eq!(
            cxa(&[M, M], &[C, C]),
            RawVerdict::Loss(1, Reason::PerpetualCheck, "24.1")
        );
        // Mutual 长将: draw.
        assert_eq!(cxa(&[C, C], &[C, C]), RawVerdict::Draw("24.2"));
        assert_eq!(engine(&[C, C], &[C, C]), RawVerdict::Draw("24.2"));
        assert_eq!(
            engine(&[C, C], &[I, I]),
            RawVerdict::Loss(0, Reason::PerpetualCheck, "24.1")
        );
    }

    #[test]
    fn forbidden_mixtures_and_allowed_ones() {
        for red in [[X, X], [X, Y], [C, X], [C, M], [M, X], [M, M]] {
            assert_eq!(
                cxa(&red, &[I, I]),
                RawVerdict::MustVary(0, Reason::PerpetualChase),
                "{red:?}"
            );
            assert_eq!(cxa(&red, &[X, X]), RawVerdict::Draw("24.2"), "{red:?}");
        }
        // 数将一闲, 数捉一闲, 数杀一闲: allowed.
        for red in [[C, C, I], [X, X, I], [M, I, M], [C, X, I]] {
            assert_eq!(cxa(&red, &[I, I, I]), RawVerdict::Draw("24.2"), "{red:?}");
            assert_eq!(
                cxa(&red, &[X, X, X]),
                RawVerdict::MustVary(1, Reason::PerpetualChase),
                "{red:?}"
            );
        }
    }

    #[test]
    fn pawn_chases_count_only_in_mutual_attack() {
        // 27.2: a pawn's chases alone are idle.
        assert_eq!(cxa(&[P, P], &[I, I]), RawVerdict::Draw("24.2"));
        // 细则 11: against a perpetual attacker they count, so both are forbidden.
        let f = findings(&cycle(&[P, P], &[X, X]));
        assert!(f.pawns_count);
        assert_eq!(judge(&f, Ruleset::Cxa), RawVerdict::Draw("24.2"));
        // Against idle moves they do not.
        assert!(!findings(&cycle(&[P, P], &[X, I])).pawns_count);
    }

    #[test]
    fn engine_knows_only_the_same_piece() {
        assert_eq!(
            engine(&[X, X], &[I, I]),
            RawVerdict::Loss(0, Reason::PerpetualChase, "engine")
        );
        assert_eq!(engine(&[X, Y], &[I, I]), RawVerdict::Draw("engine"));
        assert_eq!(engine(&[C, X], &[I, I]), RawVerdict::Draw("engine"));
        assert_eq!(engine(&[M, M], &[I, I]), RawVerdict::Draw("engine"));
        assert_eq!(engine(&[X, X], &[Y, Y]), RawVerdict::Draw("engine"));
        assert_eq!(
            engine(&[I, I], &[Y, Y]),
            RawVerdict::Loss(1, Reason::PerpetualChase, "engine")
        );
    }

    #[test]
    fn patterns_and_codes() {
        assert_eq!(
            Pattern::of([MoveClass::Check, MoveClass::Chase].into_iter()),
            Pattern::CheckAndChase
        );
        assert_eq!(
            Pattern::of([MoveClass::Check, MoveClass::MateThreat].into_iter()),
            Pattern::CheckAndMateThreat
        );
        assert_eq!(
            Pattern::of([MoveClass::MateThreat, MoveClass::Chase].into_iter()),
            Pattern::MateThreatAndChase
        );
        assert_eq!(
            Pattern::of([MoveClass::Check, MoveClass::MateThreat, MoveClass::Chase].into_iter()),
            Pattern::MixedAttack
        );
        assert_eq!(
            Pattern::of([MoveClass::Check, MoveClass::Idle].into_iter()),
            Pattern::AttacksWithIdle
        );
        assert!(!Pattern::AttacksWithIdle.forbidden());
        assert!(Pattern::MixedAttack.forbidden());
        assert_eq!(Ruleset::from_code("engine"), Some(Ruleset::Engine));
        assert_eq!(Ruleset::from_code("x"), None);
        assert_eq!(Ruleset::default().code(), "cxa");
    }
}
