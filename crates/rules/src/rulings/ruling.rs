//! The self-explaining [`Ruling`]: result, reason, article, the cycle's moves in ICCS and
//! Chinese with each move's class and chased pieces, and one line of text in Chinese and
//! English.

use super::classify::MoveClass;
use super::judge::{Pattern, Reason, Ruleset};
use crate::{Color, Move, Piece, PieceKind, Square};
use std::fmt::Write as _;

/// The result of a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// Red won.
    RedWins,
    /// Black won.
    BlackWins,
    /// Drawn.
    Draw,
}

impl GameResult {
    /// `red_wins`, `black_wins` or `draw`.
    #[must_use]
    pub const fn code(self) -> &'static str {
        match self {
            GameResult::RedWins => "red_wins",
            GameResult::BlackWins => "black_wins",
            GameResult::Draw => "draw",
        }
    }

    /// The win for `winner`.
    #[must_use]
    pub const fn win_for(winner: Color) -> GameResult {
        match winner {
            Color::Red => GameResult::RedWins,
            Color::Black => GameResult::BlackWins,
        }
    }
}

/// What the ruling decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// `loser` loses at once.
    Loss {
        /// The side that loses.
        loser: Color,
    },
    /// The game is drawn.
    Draw,
    /// `offender` must vary (24.3); the game goes on, and it loses if the same cycle
    /// completes again.
    MustVary {
        /// The side that must vary.
        offender: Color,
    },
}

/// A piece chased by a move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChasedPiece {
    /// Where it stands (after the chasing move).
    pub square: Square,
    /// The piece.
    pub piece: Piece,
}

/// One move of the cycle, explained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleMove {
    /// The ply of the move in the game (1 = the first move played).
    pub ply: u32,
    /// Who played it.
    pub side: Color,
    /// The move.
    pub mv: Move,
    /// ICCS text.
    pub iccs: String,
    /// Chinese notation.
    pub chinese: String,
    /// Its class by its heaviest effect (27.4).
    pub class: MoveClass,
    /// The pieces it newly chases (with `class == Chase`; also listed under a heavier class
    /// when the move chases as well).
    pub chased: Vec<ChasedPiece>,
}

/// A repetition ruling, self-explaining.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ruling {
    /// What it decides.
    pub verdict: Verdict,
    /// Why (the machine reason code).
    pub reason: Reason,
    /// The article applied: `24.1` (长将), `24.2` (不变作和), `24.3` (must vary, and the loss
    /// after the warning), or `engine` under [`Ruleset::Engine`]. [`Ruling::articles`] adds
    /// the general rule of art. 26 behind it.
    pub article: &'static str,
    /// The rules used.
    pub ruleset: Ruleset,
    /// The ply that completed the cycle (the ruling point).
    pub ply: u32,
    /// The cycle's moves, from the first occurrence of the position to this one.
    pub moves: Vec<CycleMove>,
    /// What Red did over the cycle.
    pub red: Pattern,
    /// What Black did over the cycle.
    pub black: Pattern,
    /// Whether pawn attacks counted as chases (细则 11: both sides attack perpetually).
    pub pawns_count: bool,
    /// Whether this loss comes after a must-vary warning that was not heeded.
    pub after_warning: bool,
}

/// Chinese name of a piece (Red 车马炮相仕帅兵, Black 车马炮象士将卒).
#[must_use]
pub fn chinese_piece_name(p: Piece) -> &'static str {
    match (p.color, p.kind) {
        (_, PieceKind::Rook) => "车",
        (_, PieceKind::Horse) => "马",
        (_, PieceKind::Cannon) => "炮",
        (Color::Red, PieceKind::Elephant) => "相",
        (Color::Black, PieceKind::Elephant) => "象",
        (Color::Red, PieceKind::Advisor) => "仕",
        (Color::Black, PieceKind::Advisor) => "士",
        (Color::Red, PieceKind::King) => "帅",
        (Color::Black, PieceKind::King) => "将",
        (Color::Red, PieceKind::Pawn) => "兵",
        (Color::Black, PieceKind::Pawn) => "卒",
    }
}

const fn side_zh(c: Color) -> &'static str {
    match c {
        Color::Red => "红方",
        Color::Black => "黑方",
    }
}

const fn side_en(c: Color) -> &'static str {
    match c {
        Color::Red => "Red",
        Color::Black => "Black",
    }
}

impl Ruling {
    /// The result, if the ruling ends the game.
    #[must_use]
    pub const fn result(&self) -> Option<GameResult> {
        match self.verdict {
            Verdict::Loss { loser } => Some(GameResult::win_for(loser.other())),
            Verdict::Draw => Some(GameResult::Draw),
            Verdict::MustVary { .. } => None,
        }
    }

    /// The pattern of `side`.
    #[must_use]
    pub const fn pattern(&self, side: Color) -> Pattern {
        match side {
            Color::Red => self.red,
            Color::Black => self.black,
        }
    }

    /// Every article the ruling rests on: [`Ruling::article`] (art. 24, how a 待判局面 is
    /// decided) followed by the general rule of art. 26 that it applies — `26.1` for one-sided
    /// 长将, `26.2` when both sides' moves are allowed, `26.3` when both are forbidden
    /// (长杀 against 长捉, mutual 长将 …), `26.4` for forbidden against allowed. Under
    /// [`Ruleset::Engine`] only `engine` (or the 24.x article of a perpetual check).
    #[must_use]
    pub fn articles(&self) -> Vec<&'static str> {
        let general = match (self.ruleset, self.article) {
            (Ruleset::Engine, _) => None,
            (_, "24.1") => Some("26.1"),
            (_, "24.2") if self.red.forbidden() && self.black.forbidden() => Some("26.3"),
            (_, "24.2") => Some("26.2"),
            (_, "24.3") => Some("26.4"),
            _ => None,
        };
        let mut v = vec![self.article];
        v.extend(general);
        v
    }

    /// The articles in Chinese: `第24.2条、第26.3条`.
    fn articles_zh(&self) -> String {
        let v: Vec<String> = self.articles().iter().map(|a| format!("第{a}条")).collect();
        v.join("、")
    }

    /// The articles in English: `art. 24.2, 26.3`.
    fn articles_en(&self) -> String {
        format!("art. {}", self.articles().join(", "))
    }

    /// The pieces `side` chased over the cycle, in order of first appearance, each once.
    fn chased_by(&self, side: Color) -> Vec<ChasedPiece> {
        let mut out: Vec<ChasedPiece> = Vec::new();
        for m in self.moves.iter().filter(|m| m.side == side) {
            for c in &m.chased {
                if !out
                    .iter()
                    .any(|o| o.piece == c.piece && o.square == c.square)
                {
                    out.push(*c);
                }
            }
        }
        out
    }

    fn chased_zh(&self, side: Color) -> String {
        let v = self.chased_by(side);
        if v.is_empty()
            || !matches!(
                self.pattern(side).code(),
                "perpetual_chase" | "check_and_chase" | "mate_threat_and_chase" | "mixed_attack"
            )
        {
            return String::new();
        }
        let names: Vec<String> = v
            .iter()
            .map(|c| format!("{}({})", chinese_piece_name(c.piece), c.square))
            .collect();
        format!("（捉{}）", names.join("、"))
    }

    fn chased_en(&self, side: Color) -> String {
        let v = self.chased_by(side);
        if v.is_empty()
            || !matches!(
                self.pattern(side).code(),
                "perpetual_chase" | "check_and_chase" | "mate_threat_and_chase" | "mixed_attack"
            )
        {
            return String::new();
        }
        let names: Vec<String> = v
            .iter()
            .map(|c| format!("{} on {}", c.piece.kind.name(), c.square))
            .collect();
        format!(" (chasing the {})", names.join(", the "))
    }

    /// One line in Chinese.
    #[must_use]
    pub fn text_zh(&self) -> String {
        let who = |c: Color| {
            format!(
                "{}{}{}",
                side_zh(c),
                self.pattern(c).chinese(),
                self.chased_zh(c)
            )
        };
        let both = format!("{}，{}", who(Color::Red), who(Color::Black));
        match self.verdict {
            Verdict::Loss { loser } if self.after_warning => format!(
                "{both}：{}为禁止着法，经警告仍不变着（第26.4条），再次循环，判负（第24.3条）。",
                side_zh(loser)
            ),
            Verdict::Loss { loser }
                if self.ruleset == Ruleset::Engine && self.reason == Reason::PerpetualChase =>
            {
                format!("{both}：{}长捉同一子，判负（引擎规则）。", side_zh(loser))
            }
            Verdict::Loss { loser } => format!(
                "{both}：一方长将，{}判负（{}）。",
                side_zh(loser),
                self.articles_zh()
            ),
            Verdict::Draw => {
                let kind = if self.red.forbidden() && self.black.forbidden() {
                    "双方均为禁止着法"
                } else {
                    "双方均为允许着法"
                };
                if self.ruleset == Ruleset::Engine {
                    format!("{both}：不变作和（引擎规则）。")
                } else {
                    format!("{both}：{kind}，不变作和（{}）。", self.articles_zh())
                }
            }
            Verdict::MustVary { offender } => format!(
                "{both}：{}为禁止着法，必须变着，若再重复一次循环即判负（{}）。",
                side_zh(offender),
                self.articles_zh()
            ),
        }
    }

    /// One line in English.
    #[must_use]
    pub fn text_en(&self) -> String {
        let who = |c: Color| {
            format!(
                "{}: {}{}",
                side_en(c),
                self.pattern(c).english(),
                self.chased_en(c)
            )
        };
        let both = format!("{}; {}", who(Color::Red), who(Color::Black));
        match self.verdict {
            Verdict::Loss { loser } if self.after_warning => format!(
                "{both}. {} plays forbidden moves, was told to vary (art. 26.4), repeated the cycle again and loses (art. 24.3).",
                side_en(loser)
            ),
            Verdict::Loss { loser }
                if self.ruleset == Ruleset::Engine && self.reason == Reason::PerpetualChase =>
            {
                format!(
                    "{both}. {} chased the same piece perpetually and loses (engine rules).",
                    side_en(loser)
                )
            }
            Verdict::Loss { loser } => format!(
                "{both}. One-sided perpetual check: {} loses ({}).",
                side_en(loser),
                self.articles_en()
            ),
            Verdict::Draw => {
                let kind = if self.red.forbidden() && self.black.forbidden() {
                    "both sides' moves are forbidden"
                } else {
                    "both sides' moves are allowed"
                };
                if self.ruleset == Ruleset::Engine {
                    format!("{both}. Drawn by repetition (engine rules).")
                } else {
                    format!(
                        "{both}. As {kind}, the repetition is a draw ({}).",
                        self.articles_en()
                    )
                }
            }
            Verdict::MustVary { offender } => format!(
                "{both}. {} plays forbidden moves and must vary; repeating the cycle once more loses ({}).",
                side_en(offender),
                self.articles_en()
            ),
        }
    }

    /// A table for people: the verdict lines and one line per cycle move.
    #[must_use]
    pub fn explain(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{}", self.text_zh());
        let _ = writeln!(s, "{}", self.text_en());
        for m in &self.moves {
            let chased = if m.chased.is_empty() {
                String::new()
            } else {
                let v: Vec<String> = m
                    .chased
                    .iter()
                    .map(|c| format!("{}{}", chinese_piece_name(c.piece), c.square))
                    .collect();
                format!("  捉/chases {}", v.join(" "))
            };
            let _ = writeln!(
                s,
                "{:>4}. {} {} {:<8} {} {}{}",
                m.ply,
                side_zh(m.side),
                m.iccs,
                m.chinese,
                m.class.chinese(),
                m.class.code(),
                chased
            );
        }
        s
    }
}
