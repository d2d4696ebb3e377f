//! [`Game`]: the game-facing value the server keeps — push a move, get the new state and any
//! ruling or warning, cheaply on every move.

use super::arena::{AMove, Arena, code};
use super::judge::RawVerdict;
use super::judge::{Reason, Ruleset};
use super::referee::{MoveLimit, RawRuling, RefEvent, Referee};
use super::ruling::{ChasedPiece, CycleMove, GameResult, Ruling, Verdict};
use crate::{Color, EndReason, Move, PlayError, Position, Square};

/// How an event applies the automatic rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RulesConfig {
    /// Repetition rules.
    pub ruleset: Ruleset,
    /// Natural move limit.
    pub move_limit: MoveLimit,
}

/// Why a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndCause {
    /// 将死 (4.1.1).
    Checkmate,
    /// 困毙 (4.1.3).
    Stalemate,
    /// One-sided 长将 (24.1).
    PerpetualCheck,
    /// Another forbidden perpetual attack (24.3 after the warning; or engine rules).
    PerpetualChase,
    /// Repetition drawn (24.2).
    RepetitionDraw,
    /// Natural move limit (4.2.4).
    MoveLimit,
    /// Neither side can ever mate (4.2.1).
    DeadPosition,
}

impl EndCause {
    /// Stable machine code (the `reason` of `chuhe rules batch`).
    #[must_use]
    pub const fn code(self) -> &'static str {
        match self {
            EndCause::Checkmate => "checkmate",
            EndCause::Stalemate => "stalemate",
            EndCause::PerpetualCheck => "perpetual_check",
            EndCause::PerpetualChase => "perpetual_chase",
            EndCause::RepetitionDraw => "repetition_draw",
            EndCause::MoveLimit => "move_limit",
            EndCause::DeadPosition => "dead_position",
        }
    }
}

/// How and when a game ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameEnd {
    /// The result.
    pub result: GameResult,
    /// Why.
    pub cause: EndCause,
    /// The article applied (`4.1.1`, `4.1.3`, `24.1`, `24.2`, `24.3`, `4.2.4`, `4.2.1`, or
    /// `engine`).
    pub article: &'static str,
    /// The ply that ended it (0: the starting position itself).
    pub ply: u32,
    /// The repetition ruling, for the repetition causes.
    pub ruling: Option<Ruling>,
}

/// A must-vary warning (24.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The side that must vary.
    pub side: Color,
    /// What it would lose for (`perpetual_chase`).
    pub reason: Reason,
    /// Always `24.3`.
    pub article: &'static str,
    /// The ply of the ruling point that issued it.
    pub ply: u32,
    /// The ruling that issued it.
    pub ruling: Ruling,
}

/// What [`Game::play`] reports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Played {
    /// The game ended with this move.
    pub end: Option<GameEnd>,
    /// This move brought a new must-vary warning.
    pub warning: Option<Warning>,
}

/// A move the game refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The game is already over.
    #[error("the game is over since ply {ply}: {}", .result.code())]
    GameOver {
        /// The ply at which it ended.
        ply: u32,
        /// Its result.
        result: GameResult,
    },
    /// The move is illegal.
    #[error(transparent)]
    Illegal(#[from] PlayError),
}

/// A game under the automatic rules: the position, the moves, and the referee.
#[derive(Debug)]
pub struct Game {
    start: Position,
    position: Position,
    moves: Vec<Move>,
    referee: Referee,
    config: RulesConfig,
    end: Option<GameEnd>,
    warnings: Vec<Warning>,
}

/// Moves reserved per game: most games end before this many plies.
const GAME_MOVES_RESERVE: usize = 256;

/// A copy of `v` with room for a few more: a game is cloned to try a move on the copy (the
/// server's pure core does, once a move), and a copy without room would move its whole history
/// to a larger allocation on the next push.
pub(crate) fn roomy<T: Clone>(v: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(v.len() + 16);
    out.extend_from_slice(v);
    out
}

impl Clone for Game {
    fn clone(&self) -> Self {
        Game {
            start: self.start.clone(),
            position: self.position.clone(),
            moves: roomy(&self.moves),
            referee: self.referee.clone(),
            config: self.config,
            end: self.end.clone(),
            warnings: self.warnings.clone(),
        }
    }

    /// Overwrites this game with `source` in the buffers it already has: a server that keeps
    /// the game a move replaced copies the next one into it, with no allocation once its
    /// buffers are large enough.
    fn clone_from(&mut self, source: &Self) {
        // Every field named, so a new one cannot be left out.
        let Game {
            start,
            position,
            moves,
            referee,
            config,
            end,
            warnings,
        } = source;
        self.start.clone_from(start);
        self.position.clone_from(position);
        self.moves.clone_from(moves);
        self.referee.clone_from(referee);
        self.config = *config;
        self.end.clone_from(end);
        self.warnings.clone_from(warnings);
    }
}

pub(crate) fn arena_of(pos: &Position) -> Arena {
    let mut sq = [0u8; 90];
    for s in Square::all() {
        if let Some(p) = pos.piece_at(s) {
            sq[s.index()] = code(p.color.index() as u8, p.kind.index() as u8);
        }
    }
    // A validated position has one king a side.
    Arena::from_squares(sq).unwrap_or(Arena { sq, kings: [0, 0] })
}

#[inline]
fn amove(m: Move) -> AMove {
    AMove {
        from: m.from().index() as u8,
        to: m.to().index() as u8,
    }
}

impl Game {
    /// A game from `start` under `config`. The start's halfmove clock (plies since the last
    /// capture, from its FEN) counts towards the natural move limit. A start that is already
    /// over (mate, 困毙, dead material, or a halfmove clock at or past the move limit) is
    /// ended at ply 0.
    #[must_use]
    pub fn new(start: Position, config: RulesConfig) -> Game {
        let referee = Referee::new(
            arena_of(&start),
            start.hash(),
            0,
            config.ruleset,
            config.move_limit,
            start.halfmoves(),
        );
        let mut g = Game {
            position: start.clone(),
            start,
            // Room for a long game up front instead of growing on the way (a Move is 2 bytes).
            moves: Vec::with_capacity(GAME_MOVES_RESERVE),
            referee,
            config,
            end: None,
            warnings: Vec::new(),
        };
        if let Some(o) = g.position.outcome() {
            g.end = Some(board_end(o.winner, o.reason, 0));
        } else if g.referee.dead_position() {
            g.end = Some(dead_end(0));
        } else if g.referee.move_limit_reached() {
            g.end = Some(move_limit_end(0));
        }
        g
    }

    /// A game rebuilt from its start and moves (e.g. from storage), with the same rulings and
    /// warnings as when it was played.
    ///
    /// # Errors
    /// The index of the first move that could not be played, and why.
    pub fn replay(
        start: Position,
        config: RulesConfig,
        moves: &[Move],
    ) -> Result<Game, (usize, GameError)> {
        let mut g = Game::new(start, config);
        for (i, &m) in moves.iter().enumerate() {
            g.play(m).map_err(|e| (i, e))?;
        }
        Ok(g)
    }

    /// The current position.
    #[must_use]
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The starting position.
    #[must_use]
    pub fn start(&self) -> &Position {
        &self.start
    }

    /// The moves played.
    #[must_use]
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The rules in force.
    #[must_use]
    pub fn config(&self) -> RulesConfig {
        self.config
    }

    /// How the game ended, if it did.
    #[must_use]
    pub fn end(&self) -> Option<&GameEnd> {
        self.end.as_ref()
    }

    /// The must-vary warning in force while the game is still on the warned cycle (the
    /// offender has not varied yet).
    #[must_use]
    pub fn pending_warning(&self) -> Option<&Warning> {
        if self.end.is_some() {
            return None;
        }
        let w = self.referee.pending_warning()?;
        let ply = self.referee.base_ply + w.index as u32;
        self.warnings.iter().rev().find(|x| x.ply == ply)
    }

    /// Every warning issued so far.
    #[must_use]
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Plies counted towards the natural move limit so far (the start's halfmove clock
    /// included, until the first capture).
    #[must_use]
    pub fn move_limit_count(&self) -> u32 {
        self.referee.counted_plies()
    }

    /// Plays a move: checks it, makes it, and applies mate/困毙, the repetition rulings, the
    /// move limit and dead positions, in that order.
    ///
    /// # Errors
    /// [`GameError::GameOver`] after the end, [`GameError::Illegal`] for an illegal move; the
    /// game is unchanged then.
    pub fn play(&mut self, mv: Move) -> Result<Played, GameError> {
        if let Some(e) = &self.end {
            return Err(GameError::GameOver {
                ply: e.ply,
                result: e.result,
            });
        }
        self.position.play_mut(mv)?;
        self.moves.push(mv);
        let ply = self.moves.len() as u32;
        if let Some(o) = self.position.outcome() {
            let end = board_end(o.winner, o.reason, ply);
            self.end = Some(end.clone());
            return Ok(Played {
                end: Some(end),
                warning: None,
            });
        }
        let check = self.position.is_check();
        let Some(ev) = self.referee.record(amove(mv), self.position.hash(), check) else {
            return Ok(Played::default());
        };
        let mut played = Played::default();
        match ev {
            RefEvent::MoveLimit => played.end = Some(move_limit_end(ply)),
            RefEvent::DeadPosition => played.end = Some(dead_end(ply)),
            RefEvent::Ruling(raw) => {
                let ruling = self.explain(&raw, ply);
                match ruling.verdict {
                    Verdict::MustVary { offender } => {
                        let w = Warning {
                            side: offender,
                            reason: ruling.reason,
                            article: "24.3",
                            ply,
                            ruling,
                        };
                        self.warnings.push(w.clone());
                        played.warning = Some(w);
                    }
                    Verdict::Loss { .. } | Verdict::Draw => {
                        played.end = Some(GameEnd {
                            result: ruling.result().unwrap_or(GameResult::Draw),
                            cause: match ruling.reason {
                                Reason::PerpetualCheck => EndCause::PerpetualCheck,
                                Reason::PerpetualChase => EndCause::PerpetualChase,
                                Reason::RepetitionDraw => EndCause::RepetitionDraw,
                            },
                            article: ruling.article,
                            ply,
                            ruling: Some(ruling),
                        });
                    }
                }
            }
        }
        self.end.clone_from(&played.end);
        Ok(played)
    }

    /// Builds the public ruling from the referee's findings (notation needs the positions).
    fn explain(&self, raw: &RawRuling, ply: u32) -> Ruling {
        let first_ply = self.referee.base_ply + raw.start as u32; // moves before the cycle
        let mut pos = self.start.clone();
        for &m in &self.moves[..first_ply as usize] {
            pos.play_unchecked(m);
        }
        let pawns = raw.findings.pawns_count;
        let mut moves = Vec::with_capacity(raw.entries.len());
        for (i, e) in raw.entries.iter().enumerate() {
            let mv = self.moves[first_ply as usize + i];
            let chinese = pos.to_chinese(mv).unwrap_or_else(|_| mv.to_string());
            let side = pos.side_to_move();
            pos.play_unchecked(mv);
            let mask = if pawns {
                e.raw.chased_with_pawns
            } else {
                e.raw.chased
            };
            let mut chased = Vec::new();
            let mut m = mask;
            while m != 0 {
                let s = m.trailing_zeros() as usize;
                m &= m - 1;
                if let Some(square) = Square::from_index(s)
                    && let Some(piece) = pos.piece_at(square)
                {
                    chased.push(ChasedPiece { square, piece });
                }
            }
            moves.push(CycleMove {
                ply: first_ply + i as u32 + 1,
                side,
                mv,
                iccs: mv.to_string(),
                chinese,
                class: e.raw.class(pawns),
                chased,
            });
        }
        let (verdict, reason, article) = match raw.verdict {
            RawVerdict::Loss(s, r, a) => (Verdict::Loss { loser: color(s) }, r, a),
            RawVerdict::Draw(a) => (Verdict::Draw, Reason::RepetitionDraw, a),
            RawVerdict::MustVary(s, r) => (Verdict::MustVary { offender: color(s) }, r, "24.3"),
        };
        Ruling {
            verdict,
            reason,
            article,
            ruleset: self.config.ruleset,
            ply,
            moves,
            red: raw.findings.patterns[0],
            black: raw.findings.patterns[1],
            pawns_count: pawns,
            after_warning: raw.after_warning,
        }
    }
}

const fn color(s: u8) -> Color {
    if s == 0 { Color::Red } else { Color::Black }
}

fn board_end(winner: Color, reason: EndReason, ply: u32) -> GameEnd {
    let (cause, article) = match reason {
        EndReason::Checkmate => (EndCause::Checkmate, "4.1.1"),
        _ => (EndCause::Stalemate, "4.1.3"),
    };
    GameEnd {
        result: GameResult::win_for(winner),
        cause,
        article,
        ply,
        ruling: None,
    }
}

fn move_limit_end(ply: u32) -> GameEnd {
    GameEnd {
        result: GameResult::Draw,
        cause: EndCause::MoveLimit,
        article: "4.2.4",
        ply,
        ruling: None,
    }
}

fn dead_end(ply: u32) -> GameEnd {
    GameEnd {
        result: GameResult::Draw,
        cause: EndCause::DeadPosition,
        article: "4.2.1",
        ply,
        ruling: None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::rulings::arena::AMove;
    use crate::rulings::classify::classify;

    /// Positions from seeded random play from the start.
    fn positions() -> Vec<Position> {
        let mut out = Vec::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..12 {
            let mut pos = Position::new();
            for ply in 0..90 {
                let legal: Vec<Move> = pos.legal_moves().iter().copied().collect();
                if legal.is_empty() {
                    break;
                }
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                pos.play_mut(legal[(seed >> 11) as usize % legal.len()])
                    .unwrap();
                if ply % 15 == 14 {
                    out.push(pos.clone());
                }
            }
        }
        out
    }

    /// `clone_from` into a game at any other point gives the game `clone` gives: the same
    /// state, and the same answers to the same next moves (a game with idle repetitions, so
    /// the referee holds a history and a warning state, then seeded random play).
    #[test]
    fn a_game_copied_into_another_is_the_game_cloned() {
        let mut g = Game::new(Position::new(), RulesConfig::default());
        let mut snaps = vec![g.clone()];
        for iccs in ["b0c2", "b9c7", "c2b0", "c7b9"].iter().cycle().take(6) {
            if g.play(Move::from_iccs(iccs).unwrap()).is_err() {
                break;
            }
            snaps.push(g.clone());
        }
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..60 {
            let legal: Vec<Move> = g.position().legal_moves().iter().copied().collect();
            if legal.is_empty() || g.end().is_some() {
                break;
            }
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if g.play(legal[(seed >> 11) as usize % legal.len()]).is_err() {
                break;
            }
            snaps.push(g.clone());
        }
        assert!(snaps.len() > 30, "{} snapshots", snaps.len());
        let next = |g: &mut Game| {
            let legal: Vec<Move> = g.position().legal_moves().iter().copied().collect();
            legal.first().map(|&m| format!("{:?}", g.play(m)))
        };
        for (i, into) in snaps.iter().enumerate().step_by(3) {
            for (j, source) in snaps.iter().enumerate().step_by(2) {
                let mut copied = into.clone();
                copied.clone_from(source);
                let mut cloned = source.clone();
                assert_eq!(format!("{copied:?}"), format!("{cloned:?}"), "{i} <- {j}");
                assert_eq!(next(&mut copied), next(&mut cloned), "{i} <- {j}");
                assert_eq!(
                    format!("{copied:?}"),
                    format!("{cloned:?}"),
                    "{i} <- {j}, then"
                );
            }
        }
    }

    #[test]
    fn arena_moves_agree_with_the_core() {
        for pos in positions() {
            let mut a = arena_of(&pos);
            let side = pos.side_to_move().index() as u8;
            let mut ours: Vec<AMove> = Vec::new();
            a.legal_moves(side, &mut ours);
            let mut ours: Vec<Move> = ours
                .iter()
                .map(|m| {
                    Move::new(
                        Square::from_index(m.from as usize).unwrap(),
                        Square::from_index(m.to as usize).unwrap(),
                    )
                })
                .collect();
            let mut core: Vec<Move> = pos.legal_moves().iter().copied().collect();
            ours.sort();
            core.sort();
            assert_eq!(ours, core, "{}", pos.to_fen());
            assert_eq!(a.in_check(side), pos.is_check(), "{}", pos.to_fen());
        }
    }

    #[test]
    fn classification_is_colour_symmetric() {
        let flip = |s: u8| (9 - s / 9) * 9 + s % 9;
        let flip_mask = |m: u128| {
            let mut out = 0u128;
            for s in 0..90u8 {
                if m >> s & 1 == 1 {
                    out |= 1 << flip(s);
                }
            }
            out
        };
        let mut classified = 0;
        for pos in positions().into_iter().take(10) {
            let mirror = pos.mirror();
            let (a, b) = (arena_of(&pos), arena_of(&mirror));
            for m in pos.legal_moves().iter() {
                if pos.piece_at(m.to()).is_some() {
                    continue;
                }
                let mv = AMove {
                    from: m.from().index() as u8,
                    to: m.to().index() as u8,
                };
                let mm = AMove {
                    from: flip(mv.from),
                    to: flip(mv.to),
                };
                let (x, y) = (classify(&a, mv), classify(&b, mm));
                assert_eq!(x.check, y.check, "{} {m}", pos.to_fen());
                assert_eq!(x.mate_threat, y.mate_threat, "{} {m}", pos.to_fen());
                assert_eq!(flip_mask(x.chased), y.chased, "{} {m}", pos.to_fen());
                assert_eq!(
                    flip_mask(x.chased_with_pawns),
                    y.chased_with_pawns,
                    "{} {m}",
                    pos.to_fen()
                );
                classified += 1;
            }
        }
        assert!(classified > 200, "{classified}");
    }
}
