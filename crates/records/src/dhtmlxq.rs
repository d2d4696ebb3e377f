//! DhtmlXQ, the UBB block Chinese Xiangqi forums and association sites paste to show a
//! replayable board (the DhtmlXQ viewer of dpxq.com reads it):
//!
//! ```text
//! [DhtmlXQ]
//! [DhtmlXQ_title]赵一 vs 钱二[/DhtmlXQ_title]
//! [DhtmlXQ_event]2026 象甲联赛[/DhtmlXQ_event]
//! [DhtmlXQ_round]3[/DhtmlXQ_round]
//! [DhtmlXQ_red]赵一[/DhtmlXQ_red]
//! [DhtmlXQ_black]钱二[/DhtmlXQ_black]
//! [DhtmlXQ_result]红胜[/DhtmlXQ_result]
//! [DhtmlXQ_movelist]77477062[/DhtmlXQ_movelist]
//! [/DhtmlXQ]
//! ```
//!
//! A move is four digits `x1 y1 x2 y2`: file 0–8 from Red's left, row 0–9 from Black's back
//! rank (ICCS `h2e2` is `7747`). `binit` (given when the game did not start from the opening
//! position) lists the 32 pieces in XQF's order (车 马 相 仕 帅 仕 相 马 车 炮 炮 兵×5, Red
//! then Black) as two digits each, `99` for a piece off the board.

use std::fmt::Write as _;

use chuhe_rules::{Color, Square};

use crate::xqf::SLOTS;
use crate::{Game, GameResult, RecordError};

fn xy(s: Square) -> (u8, u8) {
    (s.file(), 9 - s.rank())
}

fn clean(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() && *c != '[' && *c != ']')
        .collect()
}

/// The DhtmlXQ block of a game.
pub fn write(game: &Game) -> Result<String, RecordError> {
    let positions = game.replay()?;
    let start = &positions[0];
    let mut o = String::from("[DhtmlXQ]\n");
    let mut tag = |k: &str, v: &str| {
        if !v.is_empty() {
            let _ = writeln!(o, "[DhtmlXQ_{k}]{}[/DhtmlXQ_{k}]", clean(v));
        }
    };
    let title = if game.red.is_empty() && game.black.is_empty() {
        String::new()
    } else {
        format!("{} vs {}", game.red, game.black)
    };
    tag("title", &title);
    tag("event", &game.event);
    tag("date", &game.date);
    tag("place", &game.site);
    tag("round", &game.round);
    tag("table", &game.board);
    tag("red", &game.red);
    tag("redteam", &game.red_team);
    tag("black", &game.black);
    tag("blackteam", &game.black_team);
    tag("open", &game.opening);
    tag(
        "result",
        match game.result {
            GameResult::RedWins => "红胜",
            GameResult::BlackWins => "黑胜",
            GameResult::Draw => "和棋",
            GameResult::BothLose => "双方判负",
            GameResult::Unknown => "未知",
        },
    );
    tag("remark", &game.reason);
    if !game.from_start() {
        let mut slots = vec!["99".to_string(); 32];
        let mut used = [false; 32];
        for (s, p) in start.pieces() {
            let base = if p.color == Color::Red { 0 } else { 16 };
            let slot = (0..16)
                .find(|&i| SLOTS[i] == p.kind && !used[base + i])
                .ok_or_else(|| {
                    RecordError::Unwritable(format!("too many {}s for DhtmlXQ's slots", p.kind))
                })?;
            used[base + slot] = true;
            let (x, y) = xy(s);
            slots[base + slot] = format!("{x}{y}");
        }
        tag("binit", &slots.concat());
    }
    let mut list = String::with_capacity(game.moves.len() * 4);
    for m in &game.moves {
        let (a, b) = xy(m.from());
        let (c, d) = xy(m.to());
        let _ = write!(list, "{a}{b}{c}{d}");
    }
    tag("movelist", &list);
    o.push_str("[/DhtmlXQ]\n");
    Ok(o)
}
