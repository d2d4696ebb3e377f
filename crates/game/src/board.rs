//! The game's rules state: `chuhe_rules::rulings::Game` (position, move
//! limit, repetition referee), with conversion of its rulings to the game's events.
//! Pure.

use crate::types::{self as t, GameResult, Side};
use chuhe_rules::rulings::{
    self, EndCause, GameResult as RulesResult, MoveClass, MoveLimit, RulesConfig, Ruleset, Verdict,
};
use chuhe_rules::{Move, Position};

/// How the rules ended the game with a move.
#[derive(Debug, Clone)]
pub struct BoardEnd {
    pub result: GameResult,
    /// Stable reason code (see docs/protocol.md).
    pub reason: &'static str,
    pub explanation: String,
    /// The explanation as a code with its parameters.
    pub phrase: t::Phrase,
    /// The repetition ruling, if one decided.
    pub ruling: Option<t::Ruling>,
}

/// A move as applied, with everything the events need.
#[derive(Debug, Clone)]
pub struct Played {
    pub iccs: String,
    pub chinese: String,
    pub wxf: String,
    pub fen: String,
    pub check: bool,
    pub capture: bool,
    pub end: Option<BoardEnd>,
    /// A new must-vary warning (24.3).
    pub warning: Option<t::Ruling>,
}

#[derive(Debug)]
pub struct Board {
    game: rulings::Game,
}

impl Clone for Board {
    fn clone(&self) -> Self {
        Board {
            game: self.game.clone(),
        }
    }

    /// In the buffers this board already has: the state keeps the board a move replaced and
    /// copies the next one into it (see `State::board_copy`).
    fn clone_from(&mut self, source: &Self) {
        self.game.clone_from(&source.game);
    }
}

/// Parses a ruleset name: `cxa` (default; also `cxa-2011`) or `engine`.
pub fn ruleset(name: &str) -> Option<Ruleset> {
    let n = name.trim().to_ascii_lowercase();
    if n.is_empty() || n == "cxa" || n.starts_with("cxa-") {
        Some(Ruleset::Cxa)
    } else {
        Ruleset::from_code(&n)
    }
}

fn game_result(r: RulesResult) -> GameResult {
    match r {
        RulesResult::RedWins => GameResult::RedWins,
        RulesResult::BlackWins => GameResult::BlackWins,
        RulesResult::Draw => GameResult::Draw,
    }
}

/// A ruling as the game's events carry it, with its explanation and the cycle move by move.
pub fn event_ruling(r: &rulings::Ruling) -> t::Ruling {
    let (kind, side, result) = match r.verdict {
        Verdict::Loss { loser } => (
            t::RulingKind::Decision,
            Some(crate::side::from_color(loser)),
            Some(game_result(RulesResult::win_for(loser.other()))),
        ),
        Verdict::Draw => (t::RulingKind::Decision, None, Some(GameResult::Draw)),
        Verdict::MustVary { offender } => (
            t::RulingKind::Warning,
            Some(crate::side::from_color(offender)),
            None,
        ),
    };
    let (en, zh) = (r.text_en(), r.text_zh());
    t::Ruling {
        kind: Some(kind),
        side,
        result,
        article: r.article.to_string(),
        explanation: format!("{en} {zh}"),
        explanation_en: en,
        explanation_zh: zh,
        phrase: Some(crate::phrase::ruling(r)),
        cycle: r
            .moves
            .iter()
            .map(|m| t::RulingMove {
                ply: m.ply,
                iccs: m.iccs.clone(),
                chinese: m.chinese.clone(),
                class: Some(match m.class {
                    MoveClass::Idle => t::MoveClass::Idle,
                    MoveClass::Chase => t::MoveClass::Chase,
                    MoveClass::MateThreat => t::MoveClass::MateThreat,
                    MoveClass::Check => t::MoveClass::Check,
                }),
                chased: m.chased.iter().map(|c| c.square.to_string()).collect(),
            })
            .collect(),
        ply: r.ply,
    }
}

fn board_end(e: &rulings::GameEnd) -> BoardEnd {
    let result = game_result(e.result);
    let ruling = e.ruling.as_ref().map(event_ruling);
    let winner = match result {
        GameResult::RedWins => "Red",
        _ => "Black",
    };
    let loser = if winner == "Red" { "Black" } else { "Red" };
    let explanation = match e.cause {
        EndCause::Checkmate => format!("{loser} is checkmated (将死): {winner} wins (art. 4.1.1)."),
        EndCause::Stalemate => {
            format!("{loser} has no legal move (困毙) and loses: {winner} wins (art. 4.1.3).")
        }
        EndCause::MoveLimit => {
            "The natural move limit was reached without a capture: draw (art. 4.2.4).".into()
        }
        EndCause::DeadPosition => "Neither side can ever mate: draw (art. 4.2.1).".into(),
        EndCause::PerpetualCheck | EndCause::PerpetualChase | EndCause::RepetitionDraw => ruling
            .as_ref()
            .map(|r| r.explanation.clone())
            .unwrap_or_default(),
    };
    let loser_side = if result == GameResult::RedWins {
        Side::Black
    } else {
        Side::Red
    };
    let phrase = crate::phrase::board_end(e.cause, loser_side, ruling.as_ref());
    BoardEnd {
        result,
        reason: e.cause.code(),
        explanation,
        phrase,
        ruling,
    }
}

impl Board {
    /// `move_limit_plies`: plies without capture that draw (0 = off).
    pub fn new(fen: &str, ruleset_name: &str, move_limit_plies: u32) -> Result<Board, String> {
        let pos = Position::from_fen(fen).map_err(|e| e.to_string())?;
        let ruleset = ruleset(ruleset_name)
            .ok_or_else(|| format!("unknown ruleset {ruleset_name:?}: use cxa or engine"))?;
        let config = RulesConfig {
            ruleset,
            move_limit: MoveLimit {
                moves: move_limit_plies / 2,
                ..MoveLimit::default()
            },
        };
        Ok(Board {
            game: rulings::Game::new(pos, config),
        })
    }

    pub fn fen(&self) -> String {
        self.game.position().to_fen()
    }

    pub fn plies(&self) -> u32 {
        self.game.moves().len() as u32
    }

    pub fn to_move(&self) -> Side {
        crate::side::from_color(self.game.position().side_to_move())
    }

    pub fn position(&self) -> &Position {
        self.game.position()
    }

    /// Plies counted towards the natural move limit.
    pub fn move_limit_count(&self) -> u32 {
        self.game.move_limit_count()
    }

    /// The must-vary warning in force, if any.
    pub fn pending_warning(&self) -> Option<t::Ruling> {
        self.game.pending_warning().map(|w| event_ruling(&w.ruling))
    }

    /// Plays a move given in ICCS, Chinese or WXF notation. On error the board
    /// is unchanged and the text says why.
    pub fn play(&mut self, text: &str) -> Result<Played, String> {
        let m = self.parse(text)?;
        self.play_move(m)
    }

    /// Reads a move in ICCS, Chinese or WXF notation in the current position.
    pub fn parse(&self, text: &str) -> Result<Move, String> {
        self.game
            .position()
            .parse_move(text)
            .map_err(|e| e.to_string())
    }

    /// Plays a move read by [`Board::parse`]. On error the board is unchanged.
    pub fn play_move(&mut self, m: Move) -> Result<Played, String> {
        let pos = self.game.position();
        let (chinese, wxf) = pos.to_chinese_and_wxf(m).unwrap_or_default();
        let capture = pos.piece_at(m.to()).is_some();
        let played = self.game.play(m).map_err(|e| e.to_string())?;
        let pos = self.game.position();
        Ok(Played {
            iccs: m.to_iccs(),
            chinese,
            wxf,
            fen: pos.to_fen(),
            check: pos.is_check(),
            capture,
            end: played.end.as_ref().map(board_end),
            warning: played.warning.as_ref().map(|w| event_ruling(&w.ruling)),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn plays_in_any_notation() {
        let mut b = Board::new(chuhe_rules::START_FEN, "cxa", 120).unwrap();
        let p = b.play("h2e2").unwrap();
        assert_eq!(p.chinese, "炮二平五");
        assert_eq!(p.wxf, "C2=5");
        let p = b.play("马8进7").unwrap();
        assert_eq!(p.iccs, "h9g7");
        assert!(b.play("a0a5").is_err());
        assert_eq!(b.plies(), 2);
        assert!(Board::new(chuhe_rules::START_FEN, "fide", 120).is_err());
    }

    /// What a board shows of itself, to compare two boards.
    fn looks(b: &Board) -> (String, u32, u32, Option<String>) {
        (
            b.fen(),
            b.plies(),
            b.move_limit_count(),
            b.pending_warning().map(|w| w.explanation),
        )
    }

    #[test]
    fn an_unparsable_or_illegal_move_leaves_the_board_unchanged() {
        let mut b = Board::new(chuhe_rules::START_FEN, "cxa", 120).unwrap();
        b.play("h2e2").unwrap();
        let before = looks(&b);
        assert!(b.parse("zz99").is_err());
        assert!(b.play("a0a5").is_err());
        assert_eq!(looks(&b), before);
        let m = b.parse("h9g7").unwrap();
        b.play_move(m).unwrap();
        assert_ne!(looks(&b), before);
    }

    #[test]
    fn perpetual_check_loses_with_explanation() {
        // Red rook checks from a9/b9 side to side; Black king shuffles.
        let mut b = Board::new("3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1", "cxa", 120).unwrap();
        let mut end = None;
        for mv in [
            "a0a9", "d9d8", "a9a8", "d8d9", "a8a9", "d9d8", "a9a8", "d8d9", "a8a9",
        ] {
            let p = b.play(mv).unwrap();
            if p.end.is_some() {
                end = p.end;
                break;
            }
        }
        let end = end.expect("a ruling");
        assert_eq!(end.reason, "perpetual_check");
        assert_eq!(end.result, GameResult::BlackWins);
        let r = end.ruling.unwrap();
        assert!(!r.cycle.is_empty());
        assert!(!r.explanation.is_empty());
    }
}
