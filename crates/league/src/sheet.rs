//! Score sheets (象棋比赛计分表, seed 001): one per match — round, date, table, and per board the
//! Red unit and player, the Black unit and player, points, forfeit marks and fouls — rendered as
//! CSV and as printable HTML (with the signature columns 签字 left blank for signing).

use crate::chain::ResultChain;
use crate::colour::{Colour, Side, side_colour};
use crate::matches::MatchResult;
use crate::points::Points;
use std::fmt::Write;

/// One board line of a sheet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SheetRow {
    /// Board (台次), 1-based.
    pub board: u32,
    /// Red's unit (team) and player (in the scheduled colours of the first game).
    pub red: (String, String),
    /// Black's unit and player.
    pub black: (String, String),
    /// Board points `[red, black]`.
    pub points: [Points; 2],
    /// Forfeit marks `[red, black]`: `"+"` won by forfeit, `"-"` lost by forfeit, `""` played.
    pub marks: [&'static str; 2],
    /// Fouls `[red, black]` over all games of the board.
    pub fouls: [u32; 2],
    /// How the board was decided: the deciding stage's name, `"draw"` or `"forfeit"`.
    pub decided_by: String,
}

/// A match score sheet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoreSheet {
    /// Event name.
    pub event: String,
    /// Round (第_轮).
    pub round: u32,
    /// Date as printed (年月日), e.g. "2026-11-29".
    pub date: String,
    /// Table (桌次) of the match in the round, if numbered.
    pub table: Option<u32>,
    /// Team names `[first, second]`.
    pub teams: [String; 2],
    /// Board lines.
    pub rows: Vec<SheetRow>,
    /// 局分 `[first, second]`.
    pub game_points: [Points; 2],
    /// 场分 `[first, second]`.
    pub match_points: [Points; 2],
}

/// The head of a sheet: event, round, date, table and the two teams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SheetHeader<'a> {
    /// Event name.
    pub event: &'a str,
    /// Round.
    pub round: u32,
    /// Date as printed.
    pub date: &'a str,
    /// Table (桌次), if numbered.
    pub table: Option<u32>,
    /// Team names `[first, second]`.
    pub teams: [&'a str; 2],
}

/// Why a sheet cannot be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{players} player pairs given for {boards} boards")]
pub struct SheetError {
    /// Player pairs given.
    pub players: usize,
    /// Boards in the result.
    pub boards: usize,
}

impl ScoreSheet {
    /// Builds the sheet of a match. `players[b]` are the `(first, second)` team's players on
    /// board `b + 1`.
    pub fn new(
        header: SheetHeader<'_>,
        players: &[(String, String)],
        result: &MatchResult,
        chain: &ResultChain,
    ) -> Result<ScoreSheet, SheetError> {
        let SheetHeader {
            event,
            round,
            date,
            table,
            teams,
        } = header;
        if players.len() != result.boards.len() {
            return Err(SheetError {
                players: players.len(),
                boards: result.boards.len(),
            });
        }
        let rows = result
            .boards
            .iter()
            .zip(players)
            .map(|(b, (p1, p2))| {
                let first_red = side_colour(Side::First, b.board) == Colour::Red;
                let (red, black) = if first_red {
                    (Side::First, Side::Second)
                } else {
                    (Side::Second, Side::First)
                };
                let who = |s: Side| {
                    (
                        teams[s.index()].to_string(),
                        if s == Side::First {
                            p1.clone()
                        } else {
                            p2.clone()
                        },
                    )
                };
                let mark = |s: Side| {
                    if b.forfeit[s.index()] {
                        "-"
                    } else if b.forfeit[s.other().index()] {
                        "+"
                    } else {
                        ""
                    }
                };
                let decided_by = if b.forfeit.iter().any(|&f| f) {
                    "forfeit".to_string()
                } else {
                    match b.decided_at {
                        Some(i) => chain
                            .stages()
                            .get(i)
                            .map_or_else(String::new, |s| s.name.clone()),
                        None => "draw".to_string(),
                    }
                };
                SheetRow {
                    board: b.board,
                    red: who(red),
                    black: who(black),
                    points: [b.points[red.index()], b.points[black.index()]],
                    marks: [mark(red), mark(black)],
                    fouls: [b.fouls[red.index()], b.fouls[black.index()]],
                    decided_by,
                }
            })
            .collect();
        Ok(ScoreSheet {
            event: event.to_string(),
            round,
            date: date.to_string(),
            table,
            teams: [teams[0].to_string(), teams[1].to_string()],
            rows,
            game_points: result.game_points,
            match_points: result.match_points,
        })
    }

    /// The CSV header.
    pub const CSV_HEADER: &'static str = "event,round,date,table,board,red_unit,red_player,black_unit,black_player,red_points,black_points,red_mark,black_mark,red_fouls,black_fouls,decided_by";

    /// RFC 4180 CSV, one line per board after a header. Text cells that a spreadsheet would
    /// read as a formula (starting with `=`, `+`, `-`, `@`) are prefixed with `'`.
    pub fn to_csv(&self) -> String {
        csv_document(std::slice::from_ref(self))
    }

    fn csv_rows(&self, out: &mut String) {
        for r in &self.rows {
            let fields = [
                text_cell(&self.event),
                self.round.to_string(),
                text_cell(&self.date),
                self.table.map(|t| t.to_string()).unwrap_or_default(),
                r.board.to_string(),
                text_cell(&r.red.0),
                text_cell(&r.red.1),
                text_cell(&r.black.0),
                text_cell(&r.black.1),
                r.points[0].to_decimal(),
                r.points[1].to_decimal(),
                r.marks[0].to_string(),
                r.marks[1].to_string(),
                r.fouls[0].to_string(),
                r.fouls[1].to_string(),
                text_cell(&r.decided_by),
            ];
            let line: Vec<String> = fields.iter().map(|f| csv_quote(f)).collect();
            out.push_str(&line.join(","));
            out.push_str("\r\n");
        }
    }

    /// A self-contained printable HTML page (A4 landscape when printed).
    pub fn to_html(&self) -> String {
        html_document(std::slice::from_ref(self))
    }

    /// The sheet as an HTML `<section>` (see [`html_document`]).
    pub fn html_section(&self) -> String {
        let e = html_escape;
        let mut h = String::new();
        h.push_str("<section class=\"sheet\">\n<h1>象棋比赛计分表</h1>\n");
        let table = self.table.map(|t| format!("桌次 {t}")).unwrap_or_default();
        let _ = writeln!(
            h,
            "<div class=\"meta\"><span>{}</span><span>第 {} 轮</span><span>{}</span><span>{}</span></div>",
            e(&self.event),
            self.round,
            e(&self.date),
            e(&table)
        );
        h.push_str(
            "<table>\n<thead>\n<tr><th rowspan=\"2\">台次</th><th colspan=\"5\">红方</th><th colspan=\"5\">黑方</th><th rowspan=\"2\">决出</th></tr>\n\
             <tr><th>单位</th><th>姓名</th><th>得分</th><th>犯规次数</th><th>签字</th><th>单位</th><th>姓名</th><th>得分</th><th>犯规次数</th><th>签字</th></tr>\n</thead>\n<tbody>\n",
        );
        for r in &self.rows {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td><td class=\"sign\"></td><td>{}</td><td>{}</td><td>{}{}</td><td>{}</td><td class=\"sign\"></td><td>{}</td></tr>",
                r.board,
                e(&r.red.0),
                e(&r.red.1),
                r.points[0],
                mark_html(r.marks[0]),
                r.fouls[0],
                e(&r.black.0),
                e(&r.black.1),
                r.points[1],
                mark_html(r.marks[1]),
                r.fouls[1],
                e(&r.decided_by),
            );
        }
        let _ = write!(
            h,
            "</tbody>\n<tfoot>\n<tr><td colspan=\"12\">局分 {} {} : {} {} &nbsp;&nbsp; 场分 {} : {}</td></tr>\n</tfoot>\n</table>\n\
             <p>裁判员签字：________________ &nbsp;&nbsp; 裁判长签字：________________</p>\n</section>\n",
            e(&self.teams[0]),
            self.game_points[0],
            self.game_points[1],
            e(&self.teams[1]),
            self.match_points[0],
            self.match_points[1],
        );
        h
    }
}

/// One CSV for many sheets: the header, then every sheet's board lines.
pub fn csv_document(sheets: &[ScoreSheet]) -> String {
    let mut out = String::new();
    out.push_str(ScoreSheet::CSV_HEADER);
    out.push_str("\r\n");
    for s in sheets {
        s.csv_rows(&mut out);
    }
    out
}

/// A printable HTML document with one sheet per printed page.
pub fn html_document(sheets: &[ScoreSheet]) -> String {
    let title = match sheets {
        [one] => format!(
            "{} 第{}轮 {} — {}",
            one.event, one.round, one.teams[0], one.teams[1]
        ),
        _ => "象棋比赛计分表".to_string(),
    };
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"zh\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n\
         body {{ font-family: sans-serif; margin: 1.5em; }}\n\
         h1 {{ text-align: center; font-size: 1.6em; letter-spacing: 0.3em; }}\n\
         .meta {{ display: flex; justify-content: space-between; margin-bottom: 0.8em; }}\n\
         table {{ border-collapse: collapse; width: 100%; }}\n\
         th, td {{ border: 1px solid #000; padding: 0.4em 0.5em; text-align: center; }}\n\
         td.sign {{ width: 6em; }}\n\
         tfoot td {{ font-weight: bold; }}\n\
         section.sheet {{ margin-bottom: 3em; }}\n\
         @media print {{ @page {{ size: A4 landscape; margin: 12mm; }} body {{ margin: 0; }} section.sheet {{ break-after: page; margin: 0; }} }}\n\
         </style>\n</head>\n<body>\n",
        html_escape(&title)
    );
    for s in sheets {
        h.push_str(&s.html_section());
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

fn text_cell(s: &str) -> String {
    if s.starts_with(['=', '+', '-', '@']) {
        format!("'{s}")
    } else {
        s.to_string()
    }
}

fn csv_quote(s: &str) -> String {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Escapes text for HTML element content and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::chain::{BoardRecord, GameResult, GameScoring, PlayedGame};
    use crate::entities::TimeControlText;
    use crate::matches::{EventRules, MatchRecord, MatchScoring, evaluate_match};

    fn sheet() -> ScoreSheet {
        let tc = |s: &str| TimeControlText::new(s).unwrap();
        let rules = EventRules {
            boards: 4,
            game_scoring: GameScoring::default(),
            chain: ResultChain::slow_fast_armageddon(tc("20+10"), tc("5+3"), tc("4+0")),
            match_scoring: MatchScoring::default(),
        };
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
        let players: Vec<(String, String)> = [
            ("王天一", "郑惟桐"),
            ("=cmd", "Li, \"Jr\""),
            ("赵鑫鑫", "缺席"),
            ("<b>x</b>", "孙勇征"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        ScoreSheet::new(
            SheetHeader {
                event: "象甲 2026",
                round: 3,
                date: "2026-11-29",
                table: Some(2),
                teams: ["杭州", "四川"],
            },
            &players,
            &res,
            &rules.chain,
        )
        .unwrap()
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
    fn html_sheet() {
        let html = sheet().to_html();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("象棋比赛计分表"));
        assert!(html.contains("<td>赵鑫鑫</td><td>2 (+)</td>"));
        assert!(html.contains("&lt;b&gt;x&lt;/b&gt;"));
        assert!(!html.contains("<b>x</b>"));
        assert!(html.contains("局分 杭州 5 : 4 四川"), "{html}");
        assert!(html.contains("场分 2 : 0"));
        assert!(html.contains("@media print"));
        assert_eq!(html.matches("<tr><td>").count(), 4);
    }

    #[test]
    fn player_count_must_match() {
        let s = sheet();
        let _ = s;
        let tc = TimeControlText::new("60").unwrap();
        let rules = EventRules {
            boards: 1,
            game_scoring: GameScoring::default(),
            chain: ResultChain::single(tc),
            match_scoring: MatchScoring::default(),
        };
        let res = evaluate_match(&rules, &MatchRecord::DoubleForfeit).unwrap();
        assert_eq!(
            ScoreSheet::new(
                SheetHeader {
                    event: "e",
                    round: 1,
                    date: "d",
                    table: None,
                    teams: ["a", "b"]
                },
                &[],
                &res,
                &rules.chain
            ),
            Err(SheetError {
                players: 0,
                boards: 1
            })
        );
    }
}
