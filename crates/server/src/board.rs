//! The game's rules state: the position plus what the rulings need. Pure; the
//! actor clones it, applies a move, and keeps the clone only once the events
//! are committed.

use chuhe_proto::v1::Side;
use chuhe_rules::{Color, Position};

/// A move as applied, with everything the event needs.
#[derive(Debug, Clone)]
pub struct Played {
    pub iccs: String,
    pub chinese: String,
    pub wxf: String,
    pub fen: String,
    pub check: bool,
    pub capture: bool,
    /// The side to move now has no legal move: (winner, "checkmate"|"stalemate").
    pub outcome: Option<(Side, &'static str)>,
}

#[derive(Debug, Clone)]
pub struct Board {
    pos: Position,
    plies: u32,
}

pub fn side_of(c: Color) -> Side {
    match c {
        Color::Red => Side::Red,
        Color::Black => Side::Black,
    }
}

impl Board {
    pub fn from_fen(fen: &str) -> Result<Board, String> {
        let pos = Position::from_fen(fen).map_err(|e| e.to_string())?;
        Ok(Board { pos, plies: 0 })
    }

    pub fn fen(&self) -> String {
        self.pos.to_fen()
    }

    pub fn plies(&self) -> u32 {
        self.plies
    }

    pub fn to_move(&self) -> Side {
        side_of(self.pos.side_to_move())
    }

    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// Plays a move given in ICCS, Chinese or WXF notation. On error the board
    /// is unchanged and the text says why.
    pub fn play(&mut self, text: &str) -> Result<Played, String> {
        let m = self.pos.parse_move(text).map_err(|e| e.to_string())?;
        let chinese = self.pos.to_chinese(m).unwrap_or_default();
        let wxf = self.pos.to_wxf(m).unwrap_or_default();
        let capture = self.pos.piece_at(m.to()).is_some();
        self.pos.play_mut(m).map_err(|e| e.to_string())?;
        self.plies += 1;
        let outcome = self
            .pos
            .outcome()
            .map(|o| (side_of(o.winner), o.reason.as_str()));
        Ok(Played {
            iccs: m.to_iccs(),
            chinese,
            wxf,
            fen: self.pos.to_fen(),
            check: self.pos.is_check(),
            capture,
            outcome,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn plays_in_any_notation_and_detects_mate() {
        let mut b = Board::from_fen(chuhe_rules::START_FEN).unwrap();
        let p = b.play("h2e2").unwrap();
        assert_eq!(p.chinese, "炮二平五");
        assert_eq!(p.wxf, "C2=5");
        let p = b.play("马8进7").unwrap();
        assert_eq!(p.iccs, "h9g7");
        assert!(b.play("a0a5").is_err());
        assert_eq!(b.plies(), 2);
    }
}
