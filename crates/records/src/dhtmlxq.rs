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
//!
//! [`read`] takes the blocks back: every `[DhtmlXQ]…[/DhtmlXQ]` of a text (a forum post may
//! hold several, and other text around them), each checked move by move. Variations
//! (`move_1_…` tags) and comments are not read: the main line is the game.

use std::fmt::Write as _;

use chuhe_rules::{Color, Square};

use crate::xqf::SLOTS;
use crate::{Game, GameResult, RecordError};

/// The value of `[DhtmlXQ_{key}]…[/DhtmlXQ_{key}]` in a block.
fn tag_of<'a>(block: &'a str, key: &str) -> Option<&'a str> {
    let open = format!("[DhtmlXQ_{key}]");
    let close = format!("[/DhtmlXQ_{key}]");
    let i = block.find(&open)? + open.len();
    let j = block[i..].find(&close)? + i;
    Some(block[i..j].trim())
}

/// Digits pairs `xy` as a point of the board (None: `99` or out of it).
fn point(x: u8, y: u8) -> Option<Square> {
    if x > 8 || y > 9 {
        return None;
    }
    Square::new(x, 9 - y)
}

/// Every DhtmlXQ block of a text as a game, in order; the first bad block, position or move
/// is named (`block 2`, the move's number).
pub fn read(text: &str) -> Result<Vec<Game>, RecordError> {
    let mut games = Vec::new();
    let mut rest = text;
    let mut n = 0;
    while let Some(i) = rest.find("[DhtmlXQ]") {
        n += 1;
        let body = &rest[i + "[DhtmlXQ]".len()..];
        let end = body
            .find("[/DhtmlXQ]")
            .ok_or_else(|| RecordError::Truncated {
                place: format!("block {n}"),
                why: "a [DhtmlXQ] block without its [/DhtmlXQ]".to_string(),
            })?;
        games.push(block(&body[..end], n)?);
        rest = &body[end..];
    }
    if games.is_empty() {
        return Err(RecordError::Empty);
    }
    Ok(games)
}

fn digits(v: &str, place: &str, what: &str) -> Result<Vec<u8>, RecordError> {
    v.bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .map(|b| {
            b.is_ascii_digit()
                .then(|| b - b'0')
                .ok_or_else(|| RecordError::Syntax {
                    place: place.to_string(),
                    why: format!("{what}: {:?} is not a digit", char::from(b)),
                })
        })
        .collect()
}

fn block(b: &str, n: usize) -> Result<Game, RecordError> {
    let place = format!("block {n}");
    let text = |k: &str| tag_of(b, k).map(str::to_string).unwrap_or_default();
    let mut game = Game {
        event: text("event"),
        round: text("round"),
        board: text("table"),
        site: text("place"),
        date: text("date"),
        red: text("red"),
        black: text("black"),
        red_team: text("redteam"),
        black_team: text("blackteam"),
        opening: text("open"),
        reason: text("remark"),
        result: match tag_of(b, "result").unwrap_or("") {
            "红胜" | "红先胜" | "1-0" => GameResult::RedWins,
            "黑胜" | "红先负" | "0-1" => GameResult::BlackWins,
            "和棋" | "红先和" | "1/2-1/2" => GameResult::Draw,
            "双方判负" | "0-0" => GameResult::BothLose,
            _ => GameResult::Unknown,
        },
        ..Game::default()
    };
    let list = digits(tag_of(b, "movelist").unwrap_or(""), &place, "movelist")?;
    if list.len() % 4 != 0 {
        return Err(RecordError::Syntax {
            place,
            why: format!("movelist: {} digits, not four per move", list.len()),
        });
    }
    if let Some(init) = tag_of(b, "binit") {
        let d = digits(init, &place, "binit")?;
        if d.len() != 64 {
            return Err(RecordError::Syntax {
                place,
                why: format!("binit: {} digits, not 64 (two per piece)", d.len()),
            });
        }
        let mut grid: [[Option<(Color, chuhe_rules::PieceKind)>; 9]; 10] = [[None; 9]; 10];
        for (i, xy) in d.chunks(2).enumerate() {
            let Some(s) = point(xy[0], xy[1]) else {
                continue;
            };
            let (file, rank) = (usize::from(s.file()), usize::from(s.rank()));
            if grid[rank][file].is_some() {
                return Err(RecordError::Syntax {
                    place,
                    why: format!("binit: two pieces on {s}"),
                });
            }
            let color = if i < 16 { Color::Red } else { Color::Black };
            grid[rank][file] = Some((color, SLOTS[i % 16]));
        }
        // The side to move: the first move's piece's (Red when there is none).
        let side = list
            .get(..2)
            .and_then(|xy| point(xy[0], xy[1]))
            .and_then(|s| grid[usize::from(s.rank())][usize::from(s.file())])
            .map_or(Color::Red, |(c, _)| c);
        game.fen = crate::xqf::fen_of(&grid, side);
    }
    let mut pos = game.start_position()?;
    let black_first = pos.side_to_move() == Color::Black;
    for (i, m) in list.chunks(4).enumerate() {
        let number = crate::pgn::number_of(i, black_first);
        let side = pos.side_to_move();
        let written: String = m.iter().map(|d| char::from(b'0' + d)).collect();
        let bad = |why: String| RecordError::BadMove {
            number,
            side,
            text: written.clone(),
            place: format!("{place}, move {}", i + 1),
            why,
        };
        let (Some(f), Some(t)) = (point(m[0], m[1]), point(m[2], m[3])) else {
            return Err(bad("not a point of the board".to_string()));
        };
        let mv = chuhe_rules::Move::new(f, t);
        pos.play_mut(mv).map_err(|e| bad(e.reason.to_string()))?;
        game.moves.push(mv);
    }
    Ok(game)
}

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
