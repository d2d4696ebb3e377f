//! Publishable tables: team standings with the criterion that decided each rank, the
//! crosstable (循环赛成绩表 / per-round table of a Swiss) and per-board tables, each rendered as
//! aligned text, CSV (RFC 4180, optionally with a BOM for Excel/WPS) or a printable HTML page.
//! Pure: names come in, strings go out.

use crate::colour::Side;
use crate::entities::TeamIdx;
use crate::individual::BoardPrizeRow;
use crate::points::Points;
use crate::standings::{Standings, System, TeamCriterion, TeamMatch, TeamRow, WithdrawalEffect};
use crate::text::{Lang, csv_line, html_escape, keep_text, text_cell, width};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A titled table of text cells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// Title printed above the table (a CSV section's first line).
    pub title: String,
    /// Column labels.
    pub header: Vec<String>,
    /// Rows of cells (as many as the header).
    pub rows: Vec<Vec<String>>,
    /// Columns aligned left in text (the others align right, except the last).
    pub left: Vec<usize>,
    /// Columns holding points (`1½`), written as decimals (`1.5`) in CSV for spreadsheets.
    pub points: Vec<usize>,
    /// Lines printed under the table.
    pub notes: Vec<String>,
}

impl Table {
    /// Aligned columns, wide characters counted as two.
    pub fn to_text(&self) -> String {
        let cols = self.header.len();
        let mut w = vec![0usize; cols];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(cols) {
                w[i] = w[i].max(width(c));
            }
        }
        let mut out = String::new();
        for r in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate().take(cols) {
                let pad = " ".repeat(w[i] - width(c));
                if i > 0 {
                    line.push_str("  ");
                }
                if self.left.contains(&i) || i + 1 == cols {
                    line.push_str(c);
                    line.push_str(&pad);
                } else {
                    line.push_str(&pad);
                    line.push_str(c);
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        for n in &self.notes {
            out.push_str(n);
            out.push('\n');
        }
        out
    }

    /// The table as CSV: the header line, then the rows (text guarded against formulas, scores
    /// such as `3:1` kept as text: [`keep_text`]).
    pub fn to_csv(&self) -> String {
        let mut out = csv_line(&self.header.iter().map(|h| text_cell(h)).collect::<Vec<_>>());
        for r in &self.rows {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, c)| match c.parse::<Points>() {
                    Ok(p) if self.points.contains(&i) => p.to_decimal(),
                    // Scores such as `3:1` stay text (a spreadsheet would read a time).
                    _ => keep_text(c),
                })
                .collect();
            out.push_str(&csv_line(&cells));
        }
        out
    }

    /// The table as an HTML `<section>` with its title and notes.
    pub fn html_section(&self) -> String {
        let e = html_escape;
        let mut h = String::new();
        let _ = writeln!(
            h,
            "<section class=\"table\">\n<h2>{}</h2>\n<table>",
            e(&self.title)
        );
        h.push_str("<thead><tr>");
        for c in &self.header {
            let _ = write!(h, "<th>{}</th>", e(c));
        }
        h.push_str("</tr></thead>\n<tbody>\n");
        for r in &self.rows {
            h.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                let class = if self.left.contains(&i) {
                    " class=\"l\""
                } else {
                    ""
                };
                let _ = write!(h, "<td{class}>{}</td>", e(c));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</tbody>\n</table>\n");
        for n in &self.notes {
            let _ = writeln!(h, "<p class=\"note\">{}</p>", e(n));
        }
        h.push_str("</section>\n");
        h
    }
}

/// Several tables as one text: the heading lines, then each table under its title.
pub fn text_document(heading: &[String], tables: &[Table]) -> String {
    let mut out = String::new();
    for l in heading {
        out.push_str(l);
        out.push('\n');
    }
    for (i, t) in tables.iter().enumerate() {
        if i > 0 || !heading.is_empty() {
            out.push('\n');
        }
        if i > 0 {
            out.push_str(&t.title);
            out.push('\n');
        }
        out.push_str(&t.to_text());
    }
    out
}

/// Several tables as one CSV: the heading lines, then each table after its title line,
/// separated by empty lines (Excel and WPS show them one under the other).
pub fn csv_document(heading: &[String], tables: &[Table]) -> String {
    let mut out = String::new();
    for l in heading {
        out.push_str(&csv_line(&[text_cell(l)]));
    }
    for t in tables {
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        out.push_str(&csv_line(&[text_cell(&t.title)]));
        out.push_str(&t.to_csv());
        for n in &t.notes {
            out.push_str(&csv_line(&[text_cell(n)]));
        }
    }
    out
}

/// A printable HTML page (A4) of several tables under a title and heading lines.
pub fn html_document(title: &str, heading: &[String], tables: &[Table], lang: Lang) -> String {
    let e = html_escape;
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n\
         body {{ font-family: \"Noto Sans CJK SC\", \"Source Han Sans SC\", \"Microsoft YaHei\", sans-serif; margin: 1.5em; }}\n\
         h1 {{ font-size: 1.4em; text-align: center; }}\n\
         h2 {{ font-size: 1.1em; margin: 1.2em 0 0.4em; }}\n\
         p.head {{ text-align: center; margin: 0.2em; }}\n\
         table {{ border-collapse: collapse; }}\n\
         th, td {{ border: 1px solid #000; padding: 0.2em 0.5em; text-align: center; }}\n\
         td.l {{ text-align: left; }}\n\
         p.note {{ margin: 0.2em 0; font-size: 0.9em; }}\n\
         @media print {{ @page {{ size: A4; margin: 12mm; }} body {{ margin: 0; }} }}\n\
         </style>\n</head>\n<body>\n<h1>{}</h1>\n",
        lang.code(),
        e(title),
        e(title)
    );
    for l in heading {
        let _ = writeln!(h, "<p class=\"head\">{}</p>", e(l));
    }
    for t in tables {
        h.push_str(&t.html_section());
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// What the team tables need: the event, the team names and the computed standings.
#[derive(Clone, Copy, Debug)]
pub struct TeamReport<'a> {
    /// Event name (may be empty).
    pub event: &'a str,
    /// Team names by index.
    pub teams: &'a [String],
    /// The system (Swiss adds 对手分 and a per-round crosstable).
    pub system: System,
    /// The ranking chain applied.
    pub criteria: &'a [TeamCriterion],
    /// Its label, e.g. `2011 14.5`.
    pub ranking_label: &'a str,
    /// The computed standings.
    pub standings: &'a Standings,
    /// The matches the standings were computed from (for the crosstable).
    pub matches: &'a [TeamMatch],
    /// Swiss byes `(round, team)`.
    pub byes: &'a [(u32, TeamIdx)],
    /// Label language.
    pub lang: Lang,
}

impl TeamReport<'_> {
    fn name(&self, t: TeamIdx) -> &str {
        self.teams.get(t).map_or("?", String::as_str)
    }

    /// The line naming the ranking chain: `排名办法（2011 14.5）：场分 > 处分 > …`.
    pub fn ranking_line(&self) -> String {
        let chain: Vec<&str> = self
            .criteria
            .iter()
            .map(|&c| criterion_label(c, self.lang))
            .collect();
        match self.lang {
            Lang::Zh => format!("排名办法（{}）：{}", self.ranking_label, chain.join(" > ")),
            Lang::En => format!("Ranking ({}): {}", self.ranking_label, chain.join(" > ")),
        }
    }

    /// The heading lines of a standings printout: the event, then the ranking chain.
    pub fn heading(&self) -> Vec<String> {
        let mut h = Vec::new();
        if !self.event.is_empty() {
            h.push(self.event.to_string());
        }
        h.push(self.ranking_line());
        h
    }

    /// The standings with the criterion that decided each rank (and why a team is unranked).
    pub fn standings_table(&self) -> Table {
        let l = self.lang;
        let swiss = self.system == System::Swiss;
        let has_h2h = self.criteria.contains(&TeamCriterion::HeadToHead);
        let mut header: Vec<&str> = vec![
            l.pick("名次", "Rank"),
            l.pick("队名", "Team"),
            l.pick("场次", "P"),
            l.pick("胜", "W"),
            l.pick("和", "D"),
            l.pick("负", "L"),
            l.pick("场分", "MP"),
            l.pick("局分", "GP"),
        ];
        if swiss {
            header.push(l.pick("对手分", "OMP"));
        }
        header.extend([
            l.pick("胜局", "GW"),
            l.pick("犯规", "Fouls"),
            l.pick("后走胜局", "BW"),
            l.pick("后走局数", "BG"),
        ]);
        if has_h2h {
            header.push(l.pick("直胜", "H2H"));
        }
        header.push(l.pick("决定名次", "Decided by"));
        let s = self.standings;
        let rows = s
            .rows
            .iter()
            .map(|r| {
                let mut row = vec![
                    r.rank.map_or_else(|| "-".to_string(), |x| x.to_string()),
                    self.name(r.team).to_string(),
                    r.played.to_string(),
                    r.won.to_string(),
                    r.drawn.to_string(),
                    r.lost.to_string(),
                    r.match_points.to_string(),
                    r.game_points.to_string(),
                ];
                if swiss {
                    row.push(r.opponent_match_points.to_string());
                }
                row.extend([
                    r.game_wins.to_string(),
                    r.fouls.to_string(),
                    r.black_wins.to_string(),
                    r.black_games.to_string(),
                ]);
                if has_h2h {
                    row.push(r.head_to_head.map(|p| p.to_string()).unwrap_or_default());
                }
                let mut note = match (r.rank, r.decided_by) {
                    (None, _) => String::new(),
                    (Some(_), Some(c)) => criterion_label(c, l).to_string(),
                    (Some(_), None) if s.rows.len() > 1 => l.pick("并列", "tied (并列)").into(),
                    _ => String::new(),
                };
                let mut extra = Vec::new();
                if r.penalties != (0, 0) {
                    extra.push(match l {
                        Lang::Zh => format!(
                            "处分：取消当场比赛资格 {} 次，警告 {} 次（18.4）",
                            r.penalties.0, r.penalties.1
                        ),
                        Lang::En => format!(
                            "penalties: {} disqualification(s), {} warning(s)",
                            r.penalties.0, r.penalties.1
                        ),
                    });
                }
                let left = match (r.expelled, l) {
                    (true, Lang::Zh) => "除名（18.3）",
                    (true, Lang::En) => "expelled (除名, 18.3)",
                    (false, Lang::Zh) => "退出",
                    (false, Lang::En) => "withdrew",
                };
                match (r.withdrawal, l) {
                    (Some(WithdrawalEffect::Annulled), Lang::Zh) => {
                        extra.push(format!("{left}，已赛结果注销（20.3）"))
                    }
                    (Some(WithdrawalEffect::Annulled), Lang::En) => {
                        extra.push(format!("{left}; results annulled (20.3)"))
                    }
                    (Some(WithdrawalEffect::ResultsStand), Lang::Zh) => {
                        extra.push(format!("{left}，成绩有效"))
                    }
                    (Some(WithdrawalEffect::ResultsStand), Lang::En) => {
                        extra.push(format!("{left}; results stand"))
                    }
                    (None, _) => {}
                }
                if !extra.is_empty() {
                    if !note.is_empty() {
                        note.push_str("; ");
                    }
                    note.push_str(&extra.join("; "));
                }
                row.push(note);
                row
            })
            .collect();
        let mut notes = Vec::new();
        if !s.generated_forfeits.is_empty() {
            notes.push(String::new());
            notes.push(
                l.pick(
                    "退出后未赛对局作弃权，对方获胜（20.3）：",
                    "Forfeits after withdrawals (20.3):",
                )
                .to_string(),
            );
            for f in &s.generated_forfeits {
                notes.push(format!(
                    "  {} + : - {}{}",
                    self.name(f.winner),
                    self.name(f.withdrawn),
                    round_note(f.round, l)
                ));
            }
        }
        if !s.double_forfeits.is_empty() {
            notes.push(String::new());
            notes.push(
                l.pick(
                    "双方均已退出，未赛对局均作弃权（20.3）：",
                    "Both teams had withdrawn, a forfeit by both (20.3):",
                )
                .to_string(),
            );
            for v in &s.double_forfeits {
                notes.push(format!(
                    "  {} - : - {}{}",
                    self.name(v.teams[0]),
                    self.name(v.teams[1]),
                    round_note(v.round, l)
                ));
            }
        }
        let mut points = vec![6, 7];
        if swiss {
            points.push(8);
        }
        if has_h2h {
            points.push(header.len() - 2);
        }
        Table {
            title: l.pick("团体名次", "Team standings").to_string(),
            header: header.into_iter().map(str::to_string).collect(),
            rows,
            left: vec![1],
            points,
            notes,
        }
    }

    /// The crosstable. Round robin: a grid in rank order, each cell the 局分 of every meeting
    /// (`5:3`, both legs `5:3 4:4`), `+`/`-` for forfeits (20.3 forfeits included), `-` on both
    /// sides for a meeting both forfeited (two withdrawn teams), `×` on the diagonal. Swiss: one column
    /// per round, each cell the opponent's rank, 先/后 (first or second) and the 局分.
    pub fn crosstable(&self) -> Table {
        match self.system {
            System::RoundRobin { .. } => self.grid(),
            System::Swiss => self.per_round(),
        }
    }

    fn order(&self) -> Vec<TeamIdx> {
        self.standings.rows.iter().map(|r| r.team).collect()
    }

    fn result_cell(&self, m: &TeamMatch, side: Side) -> String {
        let i = side.index();
        let o = side.other().index();
        let r = &m.result;
        if r.match_forfeit[i] {
            "-".to_string()
        } else if r.match_forfeit[o] {
            "+".to_string()
        } else {
            format!("{}:{}", r.game_points[i], r.game_points[o])
        }
    }

    fn grid(&self) -> Table {
        let l = self.lang;
        let order = self.order();
        let pos: BTreeMap<TeamIdx, usize> =
            order.iter().enumerate().map(|(i, &t)| (t, i)).collect();
        let mut cells: BTreeMap<(TeamIdx, TeamIdx), Vec<(u32, String)>> = BTreeMap::new();
        for m in self.matches {
            if !pos.contains_key(&m.first) || !pos.contains_key(&m.second) {
                continue;
            }
            for side in Side::BOTH {
                let (me, opp) = match side {
                    Side::First => (m.first, m.second),
                    Side::Second => (m.second, m.first),
                };
                cells
                    .entry((me, opp))
                    .or_default()
                    .push((m.round, self.result_cell(m, side)));
            }
        }
        for f in &self.standings.generated_forfeits {
            let round = f.round.unwrap_or(u32::MAX);
            cells
                .entry((f.winner, f.withdrawn))
                .or_default()
                .push((round, "+".into()));
            cells
                .entry((f.withdrawn, f.winner))
                .or_default()
                .push((round, "-".into()));
        }
        for v in &self.standings.double_forfeits {
            let round = v.round.unwrap_or(u32::MAX);
            for (a, b) in [(v.teams[0], v.teams[1]), (v.teams[1], v.teams[0])] {
                cells.entry((a, b)).or_default().push((round, "-".into()));
            }
        }
        let columns: Vec<String> = (1..=order.len()).map(|i| i.to_string()).collect();
        self.result_grid(
            l.pick("循环赛成绩表", "Crosstable"),
            columns,
            |r, k| {
                let o = order[k];
                if o == r.team {
                    "×".to_string()
                } else {
                    let mut v = cells.get(&(r.team, o)).cloned().unwrap_or_default();
                    v.sort();
                    v.into_iter().map(|(_, c)| c).collect::<Vec<_>>().join(" ")
                }
            },
            l.pick(
                "格内为局分（本队:对方），+/- 弃权胜/负，双方均为 - 即双方弃权。",
                "Cells: game points (own:opponent); +/- forfeit won/lost; - on both sides: a forfeit by both.",
            ),
        )
    }

    /// A crosstable: rank, team, one column per opponent or round, then 场分 (对手分 for a
    /// Swiss), 局分 and the deciding criterion.
    fn result_grid(
        &self,
        title: &str,
        columns: Vec<String>,
        cell: impl Fn(&TeamRow, usize) -> String,
        note: &str,
    ) -> Table {
        let l = self.lang;
        let swiss = self.system == System::Swiss;
        let n = columns.len();
        let mut header = vec![
            l.pick("名次", "Rank").to_string(),
            l.pick("队名", "Team").to_string(),
        ];
        header.extend(columns);
        header.push(l.pick("场分", "MP").to_string());
        if swiss {
            header.push(l.pick("对手分", "OMP").to_string());
        }
        header.push(l.pick("局分", "GP").to_string());
        header.push(l.pick("决定名次", "Decided by").to_string());
        let rows = self
            .standings
            .rows
            .iter()
            .map(|r| {
                let mut row = vec![
                    r.rank.map_or_else(|| "-".to_string(), |x| x.to_string()),
                    self.name(r.team).to_string(),
                ];
                row.extend((0..n).map(|k| cell(r, k)));
                row.push(r.match_points.to_string());
                if swiss {
                    row.push(r.opponent_match_points.to_string());
                }
                row.push(r.game_points.to_string());
                row.push(
                    r.decided_by
                        .map(|c| criterion_label(c, l).to_string())
                        .unwrap_or_default(),
                );
                row
            })
            .collect();
        let points = (2 + n..header.len() - 1).collect();
        Table {
            title: title.to_string(),
            header,
            rows,
            left: vec![1],
            points,
            notes: vec![note.to_string()],
        }
    }

    fn per_round(&self) -> Table {
        let l = self.lang;
        let rank_of: BTreeMap<TeamIdx, String> = self
            .standings
            .rows
            .iter()
            .map(|r| {
                (
                    r.team,
                    r.rank.map_or_else(|| "-".to_string(), |x| x.to_string()),
                )
            })
            .collect();
        let last = self
            .matches
            .iter()
            .map(|m| m.round)
            .chain(self.byes.iter().map(|b| b.0))
            .filter(|&r| r != u32::MAX)
            .max()
            .unwrap_or(0);
        let mut cells: BTreeMap<(TeamIdx, u32), String> = BTreeMap::new();
        for m in self.matches {
            for side in Side::BOTH {
                let (me, opp) = match side {
                    Side::First => (m.first, m.second),
                    Side::Second => (m.second, m.first),
                };
                let colour = match (side, l) {
                    (Side::First, Lang::Zh) => "先",
                    (Side::Second, Lang::Zh) => "后",
                    (Side::First, Lang::En) => "f",
                    (Side::Second, Lang::En) => "s",
                };
                cells.insert(
                    (me, m.round),
                    format!(
                        "{}{} {}",
                        rank_of.get(&opp).map_or("?", String::as_str),
                        colour,
                        self.result_cell(m, side)
                    ),
                );
            }
        }
        for &(round, t) in self.byes {
            cells.insert((t, round), l.pick("轮空", "bye").to_string());
        }
        let columns: Vec<String> = (1..=last)
            .map(|r| match l {
                Lang::Zh => format!("第{r}轮"),
                Lang::En => format!("R{r}"),
            })
            .collect();
        self.result_grid(
            l.pick("积分编排制成绩表", "Crosstable by round"),
            columns,
            |r, k| {
                cells
                    .get(&(r.team, k as u32 + 1))
                    .cloned()
                    .unwrap_or_default()
            },
            l.pick(
                "格内为对手名次、先/后走及局分（本队:对方）。",
                "Cells: opponent's rank, f(irst)/s(econd) to move, game points (own:opponent).",
            ),
        )
    }
}

fn round_note(round: Option<u32>, l: Lang) -> String {
    match (round, l) {
        (Some(r), Lang::Zh) => format!("（第{r}轮）"),
        (Some(r), Lang::En) => format!(" (round {r})"),
        (None, _) => String::new(),
    }
}

/// A criterion's name in a printout: the rules' Chinese name, or its English one.
pub fn criterion_label(c: TeamCriterion, l: Lang) -> &'static str {
    match l {
        Lang::Zh => c.chinese(),
        Lang::En => c.english(),
    }
}

/// A per-board table (board prizes): rank, player, team, games, W/D/L, points; players below
/// `min_games` are marked not eligible.
pub fn board_table(board: u32, rows: &[BoardPrizeRow], min_games: u32, l: Lang) -> Table {
    let header = [
        l.pick("名次", "Rank"),
        l.pick("棋手", "Player"),
        l.pick("队名", "Team"),
        l.pick("局数", "G"),
        l.pick("胜", "W"),
        l.pick("和", "D"),
        l.pick("负", "L"),
        l.pick("得分", "Pts"),
        l.pick("备注", ""),
    ];
    Table {
        title: match l {
            Lang::Zh => format!("第{board}台"),
            Lang::En => format!("Board {board}"),
        },
        header: header.iter().map(|s| s.to_string()).collect(),
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    r.rank.to_string(),
                    r.player.clone(),
                    r.team.clone(),
                    r.games.to_string(),
                    r.wins.to_string(),
                    r.draws.to_string(),
                    r.losses.to_string(),
                    r.points.to_string(),
                    if r.eligible {
                        String::new()
                    } else {
                        match l {
                            Lang::Zh => format!("不足{min_games}局"),
                            Lang::En => format!("(< {min_games} games)"),
                        }
                    },
                ]
            })
            .collect(),
        left: vec![1, 2, 8],
        points: vec![7],
        notes: vec![],
    }
}
