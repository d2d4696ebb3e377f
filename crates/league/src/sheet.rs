//! Score sheets (象棋比赛计分表, the form of seed 001: 第_轮 _年_月_日, 桌次, 红方单位 /
//! 黑方单位, 姓名, 得分, 犯规次数, 签字), one per match, as arbiters use them:
//!
//! - each team in its own column block, each board's colour marked (红/黑), so a team match's
//!   alternating colours read at a glance;
//! - every game of a board's chain on its own line (慢棋, 快棋, 超快棋 with the armageddon's
//!   colour choice) with its result, and the 决出 column saying which game decided the board;
//! - blank sheets for a round not yet played: names, boards and colours filled in, results empty;
//! - printable HTML, one A4 page (landscape) per match, labels in Chinese or English;
//! - CSV: the form laid out as on paper ([`form_csv_document`], with a UTF-8 BOM so Excel and
//!   WPS keep the Chinese), and the data CSV, one line per board ([`csv_document`], a contract).

use crate::chain::{Chooser, GameResult, ResultChain, StageColours};
use crate::colour::{Colour, Side, side_colour};
use crate::matches::MatchResult;
use crate::points::Points;
pub use crate::text::html_escape;
use crate::text::{BOM, Lang, csv_line, date_zh, keep_text, parse_date, text_cell};
use std::fmt::Write;

/// One board line of a sheet, in the colours of the board's first game (the data CSV).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SheetRow {
    /// Board (台次), 1-based.
    pub board: u32,
    /// Red's unit (team) and player (in the scheduled colours of the first game).
    pub red: (String, String),
    /// Black's unit and player.
    pub black: (String, String),
    /// Board points `[red, black]`; `None` on a blank sheet.
    pub points: Option<[Points; 2]>,
    /// Forfeit marks `[red, black]`: `"+"` won by forfeit, `"-"` lost by forfeit, `""` played.
    pub marks: [&'static str; 2],
    /// Fouls `[red, black]` over all games of the board.
    pub fouls: [u32; 2],
    /// How the board was decided: the deciding stage's name, `"draw"` or `"forfeit"` (empty on
    /// a blank sheet).
    pub decided_by: String,
}

/// How a board was decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decided {
    /// By the game of this stage (0-based index into the chain).
    Stage(usize),
    /// Drawn after the whole chain.
    Drawn,
    /// One side forfeited.
    Forfeit,
    /// Both sides forfeited.
    DoubleForfeit,
}

/// One game of a board's chain as the sheet lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SheetGame {
    /// Stage index (0-based) in the chain.
    pub stage: usize,
    /// The first team's player's colour; `None` on a blank sheet when the colour is chosen
    /// before the game (armageddon).
    pub first_colour: Option<Colour>,
    /// The result on the board; `None` on a blank sheet.
    pub result: Option<GameResult>,
    /// The result after the stage's draw rule (an armageddon draw is Black's win).
    pub scored: Option<GameResult>,
    /// Fouls `[first, second]` in this game.
    pub fouls: [u32; 2],
    /// The side that chose the colours of this game (stages with chosen colours).
    pub chosen_by: Option<Side>,
}

/// One board of the arbiter's form, in team columns (first team left).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SheetBoard {
    /// Board (台次), 1-based.
    pub board: u32,
    /// Players `[first, second]`.
    pub players: [String; 2],
    /// The first team's player's colour in the scheduled first game (13.2/13.3).
    pub first_colour: Colour,
    /// The games: on a blank sheet one empty line per stage of the chain.
    pub games: Vec<SheetGame>,
    /// Board points `[first, second]`; `None` on a blank sheet.
    pub points: Option<[Points; 2]>,
    /// Forfeit marks `[first, second]`: `"+"`, `"-"` or `""`.
    pub marks: [&'static str; 2],
    /// Fouls `[first, second]` over all games.
    pub fouls: [u32; 2],
    /// How the board was decided; `None` on a blank sheet.
    pub decided: Option<Decided>,
}

/// A match score sheet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoreSheet {
    /// Event name.
    pub event: String,
    /// Round (第_轮).
    pub round: u32,
    /// Date as given (`YYYY-MM-DD`, printed 年月日), or empty.
    pub date: String,
    /// Table (桌次) of the match in the round, if numbered.
    pub table: Option<u32>,
    /// Teams `[first, second]` as labelled ([`crate::text::team_label`]: the name, with the
    /// unit where it differs).
    pub teams: [String; 2],
    /// Board lines in red/black orientation (the data CSV).
    pub rows: Vec<SheetRow>,
    /// Boards in team columns with every game (the arbiter's form).
    pub boards: Vec<SheetBoard>,
    /// Stage names of the chain, for the game lines.
    pub stages: Vec<String>,
    /// 局分 `[first, second]`; `None` on a blank sheet.
    pub game_points: Option<[Points; 2]>,
    /// 场分 `[first, second]`; `None` on a blank sheet.
    pub match_points: Option<[Points; 2]>,
    /// A whole-match forfeit: the side that forfeited (both for a double forfeit).
    pub match_forfeit: [bool; 2],
}

/// The head of a sheet: event, round, date, table and the two teams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SheetHeader<'a> {
    /// Event name.
    pub event: &'a str,
    /// Round.
    pub round: u32,
    /// Date, `YYYY-MM-DD` or empty.
    pub date: &'a str,
    /// Table (桌次), if numbered.
    pub table: Option<u32>,
    /// Team names `[first, second]`.
    pub teams: [&'a str; 2],
}

/// Why a sheet cannot be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SheetError {
    /// The player list does not match the boards.
    #[error("{players} player pairs given for {boards} boards")]
    Players {
        /// Player pairs given.
        players: usize,
        /// Boards in the result.
        boards: usize,
    },
    /// The date is not `YYYY-MM-DD`.
    #[error("date {0:?} is not a date of the form YYYY-MM-DD")]
    Date(String),
}

impl ScoreSheet {
    /// Builds the sheet of a played (or forfeited) match. `players[b]` are the `(first,
    /// second)` team's players on board `b + 1`.
    pub fn new(
        header: SheetHeader<'_>,
        players: &[(String, String)],
        result: &MatchResult,
        chain: &ResultChain,
    ) -> Result<ScoreSheet, SheetError> {
        check(&header, players.len(), result.boards.len())?;
        let boards: Vec<SheetBoard> = result
            .boards
            .iter()
            .zip(players)
            .map(|(b, (p1, p2))| {
                let mark = |s: Side| {
                    if b.forfeit[s.index()] {
                        "-"
                    } else if b.forfeit[s.other().index()] {
                        "+"
                    } else {
                        ""
                    }
                };
                let decided = match (b.forfeit, b.decided_at) {
                    ([true, true], _) => Decided::DoubleForfeit,
                    ([true, _], _) | ([_, true], _) => Decided::Forfeit,
                    (_, Some(i)) => Decided::Stage(i),
                    (_, None) => Decided::Drawn,
                };
                let mut prev_red: Option<Side> = None;
                let games = b
                    .games
                    .iter()
                    .map(|g| {
                        let chosen_by = prev_red.and_then(|r| chain.chooser(g.stage, r));
                        prev_red = Some(if g.game.first_colour == Colour::Red {
                            Side::First
                        } else {
                            Side::Second
                        });
                        SheetGame {
                            stage: g.stage,
                            first_colour: Some(g.game.first_colour),
                            result: Some(g.game.result),
                            scored: Some(g.scored),
                            fouls: g.game.fouls,
                            chosen_by,
                        }
                    })
                    .collect();
                SheetBoard {
                    board: b.board,
                    players: [p1.clone(), p2.clone()],
                    first_colour: side_colour(Side::First, b.board),
                    games,
                    points: Some(b.points),
                    marks: [mark(Side::First), mark(Side::Second)],
                    fouls: b.fouls,
                    decided: Some(decided),
                }
            })
            .collect();
        Ok(Self::assemble(
            header,
            boards,
            chain,
            Some(result.game_points),
            Some(result.match_points),
            result.match_forfeit,
        ))
    }

    /// A blank sheet for a match not yet played: names, boards and scheduled colours filled in,
    /// one empty line per stage of the chain, no results.
    pub fn blank(
        header: SheetHeader<'_>,
        players: &[(String, String)],
        boards: u32,
        chain: &ResultChain,
    ) -> Result<ScoreSheet, SheetError> {
        check(&header, players.len(), boards as usize)?;
        let sheet_boards = (1..=boards)
            .zip(players)
            .map(|(board, (p1, p2))| {
                let first = side_colour(Side::First, board);
                let mut prev: Option<Colour> = None;
                let games = chain
                    .stages()
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        let colour = match s.colours {
                            StageColours::AsScheduled => Some(first),
                            StageColours::SwappedFromPrevious => prev.map(Colour::opposite),
                            StageColours::ChosenBy(_) => None,
                        };
                        let prev_red = prev.map(|c| {
                            if c == Colour::Red {
                                Side::First
                            } else {
                                Side::Second
                            }
                        });
                        let chosen_by = match s.colours {
                            StageColours::ChosenBy(Chooser::FirstTeam) => Some(Side::First),
                            StageColours::ChosenBy(Chooser::SecondTeam) => Some(Side::Second),
                            StageColours::ChosenBy(_) => prev_red.and_then(|r| chain.chooser(i, r)),
                            _ => None,
                        };
                        prev = colour;
                        SheetGame {
                            stage: i,
                            first_colour: colour,
                            result: None,
                            scored: None,
                            fouls: [0, 0],
                            chosen_by,
                        }
                    })
                    .collect();
                SheetBoard {
                    board,
                    players: [p1.clone(), p2.clone()],
                    first_colour: first,
                    games,
                    points: None,
                    marks: ["", ""],
                    fouls: [0, 0],
                    decided: None,
                }
            })
            .collect();
        Ok(Self::assemble(
            header,
            sheet_boards,
            chain,
            None,
            None,
            [false, false],
        ))
    }

    fn assemble(
        header: SheetHeader<'_>,
        boards: Vec<SheetBoard>,
        chain: &ResultChain,
        game_points: Option<[Points; 2]>,
        match_points: Option<[Points; 2]>,
        match_forfeit: [bool; 2],
    ) -> ScoreSheet {
        let SheetHeader {
            event,
            round,
            date,
            table,
            teams,
        } = header;
        let stages: Vec<String> = chain.stages().iter().map(|s| s.name.clone()).collect();
        let rows = boards
            .iter()
            .map(|b| {
                let (red, black) = if b.first_colour == Colour::Red {
                    (Side::First, Side::Second)
                } else {
                    (Side::Second, Side::First)
                };
                let who = |s: Side| (teams[s.index()].to_string(), b.players[s.index()].clone());
                SheetRow {
                    board: b.board,
                    red: who(red),
                    black: who(black),
                    points: b.points.map(|p| [p[red.index()], p[black.index()]]),
                    marks: [b.marks[red.index()], b.marks[black.index()]],
                    fouls: [b.fouls[red.index()], b.fouls[black.index()]],
                    decided_by: match &b.decided {
                        None => String::new(),
                        Some(Decided::Forfeit | Decided::DoubleForfeit) => "forfeit".into(),
                        Some(Decided::Drawn) => "draw".into(),
                        Some(Decided::Stage(i)) => stages.get(*i).cloned().unwrap_or_default(),
                    },
                }
            })
            .collect();
        ScoreSheet {
            event: event.to_string(),
            round,
            date: date.to_string(),
            table,
            teams: [teams[0].to_string(), teams[1].to_string()],
            rows,
            boards,
            stages,
            game_points,
            match_points,
            match_forfeit,
        }
    }

    /// Whether the sheet is blank (no results).
    pub fn is_blank(&self) -> bool {
        self.game_points.is_none()
    }

    /// The data CSV header.
    pub const CSV_HEADER: &'static str = "event,round,date,table,board,red_unit,red_player,black_unit,black_player,red_points,black_points,red_mark,black_mark,red_fouls,black_fouls,decided_by";

    /// The data CSV (RFC 4180), one line per board after a header. Text cells that a
    /// spreadsheet would read as a formula (starting with `=`, `+`, `-`, `@`) get a `'`.
    pub fn to_csv(&self) -> String {
        csv_document(std::slice::from_ref(self))
    }

    fn csv_rows(&self, out: &mut String) {
        for r in &self.rows {
            let pts = |i: usize| r.points.map(|p| p[i].to_decimal()).unwrap_or_default();
            let fouls = |i: usize| {
                if self.is_blank() {
                    String::new()
                } else {
                    r.fouls[i].to_string()
                }
            };
            out.push_str(&csv_line(&[
                text_cell(&self.event),
                self.round.to_string(),
                text_cell(&self.date),
                self.table.map(|t| t.to_string()).unwrap_or_default(),
                r.board.to_string(),
                text_cell(&r.red.0),
                text_cell(&r.red.1),
                text_cell(&r.black.0),
                text_cell(&r.black.1),
                pts(0),
                pts(1),
                r.marks[0].to_string(),
                r.marks[1].to_string(),
                fouls(0),
                fouls(1),
                text_cell(&r.decided_by),
            ]));
        }
    }

    /// A self-contained printable HTML page (Chinese labels).
    pub fn to_html(&self) -> String {
        html_document(std::slice::from_ref(self), Lang::Zh)
    }

    fn stage_label(&self, i: usize, l: Lang) -> String {
        stage_label(self.stages.get(i).map_or("", String::as_str), l)
    }

    fn decided_label(&self, d: &Option<Decided>, l: Lang) -> String {
        match d {
            None => String::new(),
            Some(Decided::Stage(i)) if self.stages.len() > 1 => self.stage_label(*i, l),
            Some(Decided::Stage(_)) => l.pick("胜负", "decided").into(),
            Some(Decided::Drawn) => l.pick("和棋", "drawn").into(),
            Some(Decided::Forfeit) => l.pick("弃权", "forfeit").into(),
            Some(Decided::DoubleForfeit) => l.pick("双方弃权", "double forfeit").into(),
        }
    }

    /// The labels of a team's column block: `单位：杭州（1、3台执红）`.
    fn unit_label(&self, side: Side, l: Lang) -> String {
        let red: Vec<String> = self
            .boards
            .iter()
            .filter(|b| side_colour(side, b.board) == Colour::Red)
            .map(|b| b.board.to_string())
            .collect();
        let team = &self.teams[side.index()];
        match l {
            Lang::Zh if red.is_empty() => format!("单位：{team}"),
            Lang::Zh => format!("单位：{team}（{}台执红）", red.join("、")),
            Lang::En if red.is_empty() => format!("Team: {team}"),
            Lang::En => format!("Team: {team} (Red on board {})", red.join(", ")),
        }
    }

    /// The cells of one game line for `side`: colour, result.
    fn game_cells(&self, b: &SheetBoard, g: &SheetGame, side: Side, l: Lang) -> [String; 2] {
        let colour = g
            .first_colour
            .map(|c| if side == Side::First { c } else { c.opposite() });
        let mut c = match colour {
            Some(Colour::Red) => l.pick("红", "Red").to_string(),
            Some(Colour::Black) => l.pick("黑", "Black").to_string(),
            None => l.pick("红/黑", "Red/Black").to_string(),
        };
        match (g.chosen_by == Some(side), colour.is_some()) {
            (true, true) => c.push_str(l.pick("（选色）", " (chose)")),
            (true, false) => c.push_str(l.pick("（选）", " (chooses)")),
            _ => {}
        }
        let _ = b;
        let result = match (g.result, g.scored) {
            (Some(r), Some(s)) => {
                let word = |r: GameResult| match r.winner() {
                    Some(w) if w == side => l.pick("胜", "W"),
                    Some(_) => l.pick("负", "L"),
                    None => l.pick("和", "D"),
                };
                if r == s {
                    word(r).to_string()
                } else {
                    // An armageddon draw scored as Black's win: 和（判胜）.
                    format!(
                        "{}{}",
                        word(r),
                        match s.winner() {
                            Some(w) if w == side => l.pick("（判胜）", " (scored W)"),
                            _ => l.pick("（判负）", " (scored L)"),
                        }
                    )
                }
            }
            _ => String::new(),
        };
        [c, result]
    }

    /// The sheet as an HTML `<section>` (one printed page; see [`html_document`]).
    pub fn html_section(&self, l: Lang) -> String {
        let e = html_escape;
        let multi = self.stages.len() > 1;
        let mut h = String::new();
        let _ = writeln!(
            h,
            "<section class=\"sheet\">\n<h1>{}</h1>",
            l.pick("象棋比赛计分表", "Xiangqi Score Sheet")
        );
        if !self.event.is_empty() {
            let _ = writeln!(h, "<p class=\"event\">{}</p>", e(&self.event));
        }
        let date = match l {
            Lang::Zh => date_zh(&self.date),
            Lang::En if self.date.is_empty() => "Date: __________".to_string(),
            Lang::En => format!("Date: {}", self.date),
        };
        let table = match (self.table, l) {
            (Some(t), Lang::Zh) => format!("桌次：{t}"),
            (Some(t), Lang::En) => format!("Table {t}"),
            (None, Lang::Zh) => "桌次：____".into(),
            (None, Lang::En) => "Table ____".into(),
        };
        let round = match l {
            Lang::Zh => format!("第 {} 轮", self.round),
            Lang::En => format!("Round {}", self.round),
        };
        let _ = writeln!(
            h,
            "<div class=\"meta\"><span>{}</span><span>{}</span><span>{}</span></div>",
            e(&round),
            e(&date),
            e(&table)
        );
        let team_cols = 6;
        // Column widths (mm) so every label fits on one line of an A4 landscape page; the
        // names take the rest.
        h.push_str("<table>\n<colgroup><col style=\"width:11mm\">");
        if multi {
            h.push_str("<col style=\"width:15mm\">");
        }
        for _ in Side::BOTH {
            h.push_str("<col style=\"width:24mm\"><col><col style=\"width:21mm\"><col style=\"width:12mm\"><col style=\"width:18mm\"><col style=\"width:19mm\">");
        }
        h.push_str("<col style=\"width:16mm\"></colgroup>\n<thead>\n<tr>");
        let _ = write!(
            h,
            "<th rowspan=\"2\" class=\"n\">{}</th>",
            l.pick("台次", "Board")
        );
        if multi {
            let _ = write!(h, "<th rowspan=\"2\">{}</th>", l.pick("局别", "Game"));
        }
        for side in Side::BOTH {
            let _ = write!(
                h,
                "<th colspan=\"{team_cols}\" class=\"unit\">{}</th>",
                e(&self.unit_label(side, l))
            );
        }
        let _ = writeln!(
            h,
            "<th rowspan=\"2\">{}</th></tr>",
            l.pick("决出", "Decided by")
        );
        h.push_str("<tr>");
        for _ in Side::BOTH {
            for label in team_labels(l) {
                let _ = write!(h, "<th>{label}</th>");
            }
        }
        h.push_str("</tr>\n</thead>\n<tbody>\n");
        for b in &self.boards {
            let lines: Vec<Option<&SheetGame>> = if b.games.is_empty() {
                vec![None]
            } else {
                b.games.iter().map(Some).collect()
            };
            let span = lines.len();
            let rs = if span > 1 {
                format!(" rowspan=\"{span}\"")
            } else {
                String::new()
            };
            for (k, g) in lines.iter().enumerate() {
                h.push_str(if k == 0 {
                    "<tr class=\"first\">"
                } else {
                    "<tr>"
                });
                if k == 0 {
                    let _ = write!(h, "<td{rs} class=\"n\">{}</td>", b.board);
                }
                if multi {
                    let label = match g {
                        Some(g) => self.stage_label(g.stage, l),
                        None => l.pick("弃权", "forfeit").to_string(),
                    };
                    let _ = write!(h, "<td class=\"stage\">{}</td>", e(&label));
                }
                for side in Side::BOTH {
                    let i = side.index();
                    let [colour, result] = match g {
                        Some(g) => self.game_cells(b, g, side, l),
                        None => {
                            let c = if side_colour(side, b.board) == Colour::Red {
                                l.pick("红", "Red")
                            } else {
                                l.pick("黑", "Black")
                            };
                            let r = match b.marks[i] {
                                "+" => l.pick("+ 弃权胜", "+ forfeit win"),
                                "-" => l.pick("− 弃权", "− forfeited"),
                                _ => "",
                            };
                            [c.to_string(), r.to_string()]
                        }
                    };
                    let _ = write!(h, "<td class=\"c\">{}</td>", e(&colour));
                    if k == 0 {
                        let _ = write!(h, "<td{rs} class=\"name\">{}</td>", e(&b.players[i]));
                    }
                    let _ = write!(h, "<td class=\"r\">{}</td>", e(&result));
                    if k == 0 {
                        let pts = b.points.map(|p| p[i].to_string()).unwrap_or_default();
                        let fouls = if b.points.is_some() {
                            b.fouls[i].to_string()
                        } else {
                            String::new()
                        };
                        let _ = write!(
                            h,
                            "<td{rs} class=\"p\">{}{}</td><td{rs} class=\"f\">{}</td><td{rs} class=\"sign\"></td>",
                            pts,
                            mark_html(b.marks[i]),
                            fouls
                        );
                    }
                }
                if k == 0 {
                    let _ = write!(
                        h,
                        "<td{rs} class=\"d\">{}</td>",
                        e(&self.decided_label(&b.decided, l))
                    );
                }
                h.push_str("</tr>\n");
            }
        }
        h.push_str("</tbody>\n</table>\n");
        let (gp, mp) = match (self.game_points, self.match_points) {
            (Some(g), Some(m)) => (
                format!("{} : {}", g[0], g[1]),
                format!("{} : {}", m[0], m[1]),
            ),
            _ => ("____ : ____".into(), "____ : ____".into()),
        };
        let forfeit = match (self.match_forfeit, l) {
            ([true, true], _) => l.pick("（双方弃权）", " (double forfeit)").to_string(),
            ([true, false], Lang::Zh) => format!("（{}弃权）", self.teams[0]),
            ([false, true], Lang::Zh) => format!("（{}弃权）", self.teams[1]),
            ([true, false], Lang::En) => format!(" ({} forfeited)", self.teams[0]),
            ([false, true], Lang::En) => format!(" ({} forfeited)", self.teams[1]),
            _ => String::new(),
        };
        let _ = writeln!(
            h,
            "<p class=\"total\">{} {} {gp} {} &nbsp;&nbsp;&nbsp; {} {mp}{}</p>",
            l.pick("局分", "Game points"),
            e(&self.teams[0]),
            e(&self.teams[1]),
            l.pick("场分", "Match points"),
            e(&forfeit)
        );
        let _ = writeln!(
            h,
            "<p class=\"signatures\">{}________________ &nbsp;&nbsp; {}________________ &nbsp;&nbsp; {}________________</p>\n</section>",
            l.pick("双方队长签字：", "Captains: "),
            l.pick("裁判员签字：", "Arbiter: "),
            l.pick("裁判长签字：", "Chief arbiter: ")
        );
        h
    }

    /// The form as CSV lines, laid out as on paper (see [`form_csv_document`]).
    fn form_csv(&self, l: Lang, out: &mut String) {
        let multi = self.stages.len() > 1;
        let title = l.pick("象棋比赛计分表", "Xiangqi Score Sheet");
        out.push_str(&csv_line(&[title.to_string()]));
        let date = match l {
            Lang::Zh => date_zh(&self.date),
            Lang::En => self.date.clone(),
        };
        out.push_str(&csv_line(&[
            text_cell(&self.event),
            match l {
                Lang::Zh => format!("第 {} 轮", self.round),
                Lang::En => format!("Round {}", self.round),
            },
            text_cell(&date),
            match l {
                Lang::Zh => format!(
                    "桌次：{}",
                    self.table.map(|t| t.to_string()).unwrap_or_default()
                ),
                Lang::En => format!(
                    "Table {}",
                    self.table.map(|t| t.to_string()).unwrap_or_default()
                ),
            },
        ]));
        let mut units = vec![String::new()];
        if multi {
            units.push(String::new());
        }
        for side in Side::BOTH {
            units.push(text_cell(&self.unit_label(side, l)));
            units.extend(std::iter::repeat_n(String::new(), 5));
        }
        units.push(String::new());
        out.push_str(&csv_line(&units));
        let mut header = vec![l.pick("台次", "Board").to_string()];
        if multi {
            header.push(l.pick("局别", "Game").to_string());
        }
        for _ in Side::BOTH {
            header.extend(team_labels(l).iter().map(|s| s.to_string()));
        }
        header.push(l.pick("决出", "Decided by").to_string());
        out.push_str(&csv_line(&header));
        for b in &self.boards {
            let lines: Vec<Option<&SheetGame>> = if b.games.is_empty() {
                vec![None]
            } else {
                b.games.iter().map(Some).collect()
            };
            for (k, g) in lines.iter().enumerate() {
                let first = k == 0;
                let mut row = vec![if first {
                    b.board.to_string()
                } else {
                    String::new()
                }];
                if multi {
                    row.push(match g {
                        Some(g) => self.stage_label(g.stage, l),
                        None => l.pick("弃权", "forfeit").to_string(),
                    });
                }
                for side in Side::BOTH {
                    let i = side.index();
                    let [colour, result] = match g {
                        Some(g) => self.game_cells(b, g, side, l),
                        None => [
                            if side_colour(side, b.board) == Colour::Red {
                                l.pick("红", "Red").to_string()
                            } else {
                                l.pick("黑", "Black").to_string()
                            },
                            b.marks[i].to_string(),
                        ],
                    };
                    row.push(colour);
                    row.push(if first {
                        text_cell(&b.players[i])
                    } else {
                        String::new()
                    });
                    row.push(result);
                    row.push(if first {
                        b.points
                            .map(|p| keep_text(&format!("{}{}", p[i].to_decimal(), b.marks[i])))
                            .unwrap_or_default()
                    } else {
                        String::new()
                    });
                    row.push(if first && b.points.is_some() {
                        b.fouls[i].to_string()
                    } else {
                        String::new()
                    });
                    row.push(String::new());
                }
                row.push(if first {
                    self.decided_label(&b.decided, l)
                } else {
                    String::new()
                });
                out.push_str(&csv_line(&row));
            }
        }
        let pair = |p: Option<[Points; 2]>| {
            p.map(|p| keep_text(&format!("{} : {}", p[0].to_decimal(), p[1].to_decimal())))
                .unwrap_or_default()
        };
        out.push_str(&csv_line(&[
            l.pick("局分", "Game points").to_string(),
            pair(self.game_points),
            l.pick("场分", "Match points").to_string(),
            pair(self.match_points),
        ]));
        out.push_str(&csv_line(&[
            l.pick("双方队长签字", "Captains").to_string(),
            String::new(),
            String::new(),
            l.pick("裁判员签字", "Arbiter").to_string(),
            String::new(),
            l.pick("裁判长签字", "Chief arbiter").to_string(),
            String::new(),
        ]));
    }
}

/// The column labels of a team's block, as on the seed's form (plus 执色 and 结果).
fn team_labels(l: Lang) -> [&'static str; 6] {
    [
        l.pick("执色", "Colour"),
        l.pick("姓名", "Name"),
        l.pick("结果", "Result"),
        l.pick("得分", "Points"),
        l.pick("犯规次数", "Fouls"),
        l.pick("签字", "Signature"),
    ]
}

fn check(header: &SheetHeader<'_>, players: usize, boards: usize) -> Result<(), SheetError> {
    if players != boards {
        return Err(SheetError::Players { players, boards });
    }
    if !header.date.is_empty() && parse_date(header.date).is_none() {
        return Err(SheetError::Date(header.date.to_string()));
    }
    Ok(())
}

/// A stage's label: the 象甲 stage names in Chinese (慢棋, 快棋, 超快棋), others as named.
pub fn stage_label(name: &str, l: Lang) -> String {
    match (name, l) {
        ("slow", Lang::Zh) => "慢棋".into(),
        ("fast", Lang::Zh) => "快棋".into(),
        ("armageddon", Lang::Zh) => "超快棋".into(),
        ("game", Lang::Zh) => "对局".into(),
        (n, _) => n.to_string(),
    }
}

/// The data CSV for many sheets: the header, then every sheet's board lines.
pub fn csv_document(sheets: &[ScoreSheet]) -> String {
    let mut out = String::new();
    out.push_str(ScoreSheet::CSV_HEADER);
    out.push_str("\r\n");
    for s in sheets {
        s.csv_rows(&mut out);
    }
    out
}

/// The arbiters' form as CSV, one block per match separated by an empty line, starting with a
/// UTF-8 BOM (Excel and WPS then open it with the Chinese intact).
pub fn form_csv_document(sheets: &[ScoreSheet], l: Lang) -> String {
    let mut out = BOM.to_string();
    for (i, s) in sheets.iter().enumerate() {
        if i > 0 {
            out.push_str("\r\n");
        }
        s.form_csv(l, &mut out);
    }
    out
}

/// A printable HTML document: one sheet per A4 page (landscape).
pub fn html_document(sheets: &[ScoreSheet], l: Lang) -> String {
    let title = match sheets {
        [one] => match l {
            Lang::Zh => format!(
                "{} 第{}轮 {} — {}",
                one.event, one.round, one.teams[0], one.teams[1]
            ),
            Lang::En => format!(
                "{} round {} {} — {}",
                one.event, one.round, one.teams[0], one.teams[1]
            ),
        },
        _ => l.pick("象棋比赛计分表", "Xiangqi Score Sheets").to_string(),
    };
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n\
         @page {{ size: A4 landscape; margin: 10mm; }}\n\
         html, body {{ margin: 0; padding: 0; }}\n\
         body {{ font-family: \"Noto Sans CJK SC\", \"Source Han Sans SC\", \"Microsoft YaHei\", \"SimSun\", sans-serif; font-size: 10.5pt; color: #000; }}\n\
         section.sheet {{ width: 277mm; height: 190mm; box-sizing: border-box; padding: 2mm 4mm; overflow: hidden; break-after: page; page-break-after: always; }}\n\
         section.sheet:last-child {{ break-after: auto; page-break-after: auto; }}\n\
         h1 {{ text-align: center; font-size: 18pt; letter-spacing: 0.4em; margin: 0 0 1mm; }}\n\
         p.event {{ text-align: center; margin: 0 0 2mm; font-size: 11pt; }}\n\
         .meta {{ display: flex; justify-content: space-between; margin: 0 0 2mm; font-size: 11pt; }}\n\
         table {{ border-collapse: collapse; width: 100%; table-layout: fixed; }}\n\
         th, td {{ border: 1px solid #000; padding: 1mm 1mm; text-align: center; height: 6mm; overflow: hidden; }}\n\
         th.unit {{ text-align: left; padding-left: 2mm; }}\n\
         tr.first td {{ border-top: 2px solid #000; }}\n\
         td.name {{ font-size: 11.5pt; }}\n\
         td.c, td.r {{ white-space: nowrap; }}\n\
         p.total {{ margin: 3mm 0 2mm; font-weight: bold; font-size: 11.5pt; }}\n\
         p.signatures {{ margin: 4mm 0 0; }}\n\
         @media screen {{ body {{ background: #eee; }} section.sheet {{ background: #fff; margin: 5mm auto; }} }}\n\
         </style>\n</head>\n<body>\n",
        l.code(),
        html_escape(&title)
    );
    for s in sheets {
        h.push_str(&s.html_section(l));
    }
    h.push_str("</body>\n</html>\n");
    h
}

fn mark_html(m: &str) -> String {
    if m.is_empty() {
        String::new()
    } else {
        format!(" ({m})")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::chain::{BoardRecord, GameResult, GameScoring, PlayedGame};
    use crate::entities::TimeControlText;
    use crate::matches::{EventRules, MatchRecord, MatchScoring, evaluate_match};

    fn rules() -> EventRules {
        let tc = |s: &str| TimeControlText::new(s).unwrap();
        EventRules {
            boards: 4,
            game_scoring: GameScoring::default(),
            chain: ResultChain::slow_fast_armageddon(tc("20+10"), tc("5+3"), tc("4+0")),
            match_scoring: MatchScoring::default(),
        }
    }

    fn players() -> Vec<(String, String)> {
        [
            ("王天一", "郑惟桐"),
            ("=cmd", "Li, \"Jr\""),
            ("赵鑫鑫", "缺席"),
            ("<b>x</b>", "孙勇征"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
    }

    fn header() -> SheetHeader<'static> {
        SheetHeader {
            event: "象甲 2026",
            round: 3,
            date: "2026-11-29",
            table: Some(2),
            teams: ["杭州", "四川"],
        }
    }

    fn sheet() -> ScoreSheet {
        let rules = rules();
        let g = |c, r, f| PlayedGame {
            first_colour: c,
            result: r,
            fouls: f,
        };
        use Colour::*;
        use GameResult::*;
        let res = evaluate_match(
            &rules,
            &MatchRecord::Played(vec![
                BoardRecord::Played(vec![g(Red, FirstWins, [0, 1])]),
                BoardRecord::Played(vec![
                    g(Black, Draw, [0, 0]),
                    g(Red, Draw, [0, 0]),
                    g(Red, Draw, [0, 0]),
                ]),
                BoardRecord::Forfeit {
                    forfeited_by: Side::Second,
                },
                BoardRecord::Played(vec![g(Black, SecondWins, [2, 0])]),
            ]),
        )
        .unwrap();
        ScoreSheet::new(header(), &players(), &res, &rules.chain).unwrap()
    }

    #[test]
    fn csv_sheet() {
        let csv = sheet().to_csv();
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert_eq!(lines[0], ScoreSheet::CSV_HEADER);
        assert_eq!(
            lines[1],
            "象甲 2026,3,2026-11-29,2,1,杭州,王天一,四川,郑惟桐,2,0,,,0,1,slow"
        );
        // Board 2: the first team has Black; the armageddon (first team Red) was drawn: Black (四川) wins 2–1.
        assert_eq!(
            lines[2],
            "象甲 2026,3,2026-11-29,2,2,四川,\"Li, \"\"Jr\"\"\",杭州,'=cmd,2,1,,,0,0,armageddon"
        );
        assert_eq!(
            lines[3],
            "象甲 2026,3,2026-11-29,2,3,杭州,赵鑫鑫,四川,缺席,2,0,+,-,0,0,forfeit"
        );
        assert_eq!(
            lines[4],
            "象甲 2026,3,2026-11-29,2,4,四川,孙勇征,杭州,<b>x</b>,2,0,,,0,2,slow"
        );
        assert_eq!(lines[5], "");
        assert_eq!(lines.len(), 6);
    }

    #[test]
    fn html_form_has_the_seed_labels_team_columns_and_every_game() {
        let html = sheet().to_html();
        assert!(html.starts_with("<!DOCTYPE html>"));
        for label in [
            "象棋比赛计分表",
            "第 3 轮",
            "2026年11月29日",
            "桌次：2",
            "台次",
            "姓名",
            "得分",
            "犯规次数",
            "签字",
            "决出",
            "执色",
        ] {
            assert!(html.contains(label), "{label} missing");
        }
        // Each team keeps its column; the colour of each board is marked.
        assert!(html.contains("单位：杭州（1、3台执红）"), "{html}");
        assert!(html.contains("单位：四川（2、4台执红）"));
        // Board 2: three games, the armageddon chosen by 四川 (Black in the fast game), drawn
        // on the board and scored as Black's win.
        assert!(
            html.contains("<td rowspan=\"3\" class=\"n\">2</td>"),
            "{html}"
        );
        assert!(html.contains("<td class=\"stage\">慢棋</td>"));
        assert!(html.contains("<td class=\"stage\">快棋</td>"));
        assert!(html.contains("<td class=\"stage\">超快棋</td>"));
        assert!(html.contains("<td class=\"c\">黑（选色）</td>"), "{html}");
        assert!(html.contains("和（判负）"));
        assert!(html.contains("和（判胜）"));
        assert!(html.contains("<td rowspan=\"3\" class=\"d\">超快棋</td>"));
        // The forfeit, escapes, totals, signatures, one A4 page per match.
        assert!(html.contains("2 (+)"));
        assert!(html.contains("&lt;b&gt;x&lt;/b&gt;"));
        assert!(!html.contains("<b>x</b>"));
        assert!(html.contains("局分 杭州 5 : 4 四川"), "{html}");
        assert!(html.contains("场分 2 : 0"));
        assert!(html.contains("裁判长签字"));
        assert!(html.contains("@page { size: A4 landscape;"));
        assert!(html.contains("break-after: page"));
    }

    #[test]
    fn english_labels() {
        let html = html_document(&[sheet()], Lang::En);
        assert!(html.contains("Xiangqi Score Sheet"));
        assert!(html.contains("Team: 杭州 (Red on board 1, 3)"));
        assert!(html.contains("Black (chose)"));
        assert!(html.contains("D (scored L)"));
        assert!(html.contains("Date: 2026-11-29"));
        assert!(!html.contains("签字"));
    }

    #[test]
    fn blank_sheet_fills_names_and_colours_only() {
        let s = ScoreSheet::blank(
            SheetHeader {
                date: "",
                ..header()
            },
            &players(),
            4,
            &rules().chain,
        )
        .unwrap();
        assert!(s.is_blank());
        let html = s.to_html();
        assert!(html.contains("____年__月__日"));
        assert!(html.contains("王天一"));
        assert!(html.contains("局分 杭州 ____ : ____ 四川"));
        assert!(!html.contains("（判"));
        // Three lines per board; the armageddon's colour left to the choice, chooser unknown.
        assert_eq!(html.matches("<td class=\"stage\">超快棋</td>").count(), 4);
        assert!(html.contains("<td class=\"c\">红/黑</td>"));
        assert!(html.contains("<td class=\"c\">红/黑（选）</td>"));
        // Fast game colours swapped from the slow game: board 1 first team Black in the fast game.
        let b1 = &s.boards[0];
        assert_eq!(b1.games[0].first_colour, Some(Colour::Red));
        assert_eq!(b1.games[1].first_colour, Some(Colour::Black));
        assert_eq!(b1.games[2].first_colour, None);
        // The first team had Black in board 1's fast game, so it chooses the armageddon colour.
        assert_eq!(b1.games[2].chosen_by, Some(Side::First));
        let csv = s.to_csv();
        assert!(
            csv.contains("\r\n象甲 2026,3,,2,1,杭州,王天一,四川,郑惟桐,,,,,,,\r\n"),
            "{csv}"
        );
    }

    #[test]
    fn form_csv_has_bom_and_layout() {
        let csv = form_csv_document(&[sheet(), sheet()], Lang::Zh);
        assert!(
            csv.starts_with(
                "\u{feff}象棋比赛计分表\r\n象甲 2026,第 3 轮,2026年11月29日,桌次：2\r\n"
            )
        );
        assert!(csv.contains("\r\n台次,局别,执色,姓名,结果,得分,犯规次数,签字,执色,姓名,结果,得分,犯规次数,签字,决出\r\n"));
        assert!(
            csv.contains("\r\n1,慢棋,红,王天一,胜,2,0,,黑,郑惟桐,负,0,1,,慢棋\r\n"),
            "{csv}"
        );
        assert!(
            csv.contains("\r\n,超快棋,红,,和（判负）,,,,黑（选色）,,和（判胜）,,,,\r\n"),
            "{csv}"
        );
        assert!(
            csv.contains(
                "\r\n3,弃权,红,赵鑫鑫,+,\"=\"\"2+\"\"\",0,,黑,缺席,-,\"=\"\"0-\"\"\",0,,弃权\r\n"
            ),
            "{csv}"
        );
        assert_eq!(csv.matches("象棋比赛计分表").count(), 2);
        assert_eq!(
            csv.matches("\r\n双方队长签字,,,裁判员签字,,裁判长签字,\r\n")
                .count(),
            2
        );
    }

    /// Two teams of one unit (浙江) are told apart everywhere the sheet names a team, blank or
    /// filled in; the date is written 2026年1月5日.
    #[test]
    fn two_teams_of_one_unit_are_told_apart() {
        use crate::text::team_label;
        let a = team_label("浙江一队", "浙江");
        let b = team_label("浙江二队", "浙江");
        let head = SheetHeader {
            date: "2026-01-05",
            teams: [&a, &b],
            ..header()
        };
        let blank = ScoreSheet::blank(head.clone(), &players(), 4, &rules().chain).unwrap();
        let html = blank.to_html();
        assert!(
            html.contains("单位：浙江一队（浙江）（1、3台执红）"),
            "{html}"
        );
        assert!(html.contains("单位：浙江二队（浙江）（2、4台执红）"));
        assert!(html.contains("局分 浙江一队（浙江） ____ : ____ 浙江二队（浙江）"));
        assert!(html.contains("2026年1月5日"));
        let form = form_csv_document(std::slice::from_ref(&blank), Lang::Zh);
        assert!(form.contains("2026年1月5日"));
        assert!(form.contains("单位：浙江一队（浙江）（1、3台执红）"));
        let data = blank.to_csv();
        assert!(
            data.contains(",浙江一队（浙江）,王天一,浙江二队（浙江）,"),
            "{data}"
        );
        let filled = sheet();
        let mut named = filled.clone();
        named.teams = [a.clone(), b.clone()];
        assert!(named.to_html().contains("浙江一队（浙江）"));
    }

    #[test]
    fn bad_input_is_refused() {
        let rules = rules();
        let res = evaluate_match(&rules, &MatchRecord::DoubleForfeit).unwrap();
        assert_eq!(
            ScoreSheet::new(header(), &[], &res, &rules.chain),
            Err(SheetError::Players {
                players: 0,
                boards: 4
            })
        );
        assert_eq!(
            ScoreSheet::blank(
                SheetHeader {
                    date: "29/11/2026",
                    ..header()
                },
                &players(),
                4,
                &rules.chain
            ),
            Err(SheetError::Date("29/11/2026".into()))
        );
    }
}
