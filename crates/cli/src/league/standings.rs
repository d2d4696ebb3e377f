//! `chuhe league standings`: the table as text or JSON (the JSON shape is a contract).

use super::args::{OutFormat, StandingsArgs};
use super::season::Season;
use chuhe_league::individual::{BoardEntry, board_tables};
use chuhe_league::points::Points;
use chuhe_league::report::{TeamReport, board_table, csv_document, html_document, text_document};
use chuhe_league::standings::{Standings, System, WithdrawalEffect};
use chuhe_league::text::BOM;
use serde::Serialize;

impl Season {
    fn board_entries(&self) -> Vec<BoardEntry> {
        let mut v = Vec::new();
        for m in &self.matches {
            let Some(result) = &m.result else { continue };
            for (b, (p1, p2)) in result.boards.iter().zip(&m.players) {
                if p1.is_empty() && p2.is_empty() {
                    continue;
                }
                v.push(BoardEntry {
                    round: m.round,
                    board: b.board,
                    players: [
                        (p1.clone(), self.teams[m.first].clone()),
                        (p2.clone(), self.teams[m.second].clone()),
                    ],
                    points: b.points,
                    winner: b.winner,
                    forfeit: b.forfeit,
                });
            }
        }
        v
    }

    pub(super) fn standings_json(&self, table: &Standings, boards: Option<u32>) -> StandingsOut {
        StandingsOut {
            event: self.event.clone(),
            system: match self.system {
                System::RoundRobin { .. } => "round_robin",
                System::Swiss => "swiss",
            },
            ranking: self.criteria_label.clone(),
            criteria: self.criteria.iter().map(|c| c.code()).collect(),
            rows: table
                .rows
                .iter()
                .map(|r| RowOut {
                    rank: r.rank,
                    team: self.teams[r.team].clone(),
                    played: r.played,
                    won: r.won,
                    drawn: r.drawn,
                    lost: r.lost,
                    match_points: r.match_points.as_f64(),
                    game_points: r.game_points.as_f64(),
                    game_wins: r.game_wins,
                    fouls: r.fouls,
                    black_wins: r.black_wins,
                    black_games: r.black_games,
                    opponent_match_points: r.opponent_match_points.as_f64(),
                    head_to_head: r.head_to_head.map(Points::as_f64),
                    penalties: PenaltiesOut {
                        disqualifications: r.penalties.0,
                        warnings: r.penalties.1,
                    },
                    decided_by: r.decided_by.map(|c| c.code()),
                    withdrawn: r.withdrawal.map(|w| match w {
                        WithdrawalEffect::Annulled => "annulled",
                        WithdrawalEffect::ResultsStand => "results_stand",
                    }),
                    expelled: r.expelled,
                })
                .collect(),
            generated_forfeits: table
                .generated_forfeits
                .iter()
                .map(|f| ForfeitOut {
                    winner: self.teams[f.winner].clone(),
                    withdrawn: self.teams[f.withdrawn].clone(),
                    round: f.round,
                })
                .collect(),
            void_meetings: Vec::new(),
            double_forfeits: table
                .double_forfeits
                .iter()
                .map(|v| VoidOut {
                    teams: [
                        self.teams[v.teams[0]].clone(),
                        self.teams[v.teams[1]].clone(),
                    ],
                    round: v.round,
                })
                .collect(),
            board_tables: boards.map(|min| {
                board_tables(&self.board_entries(), min)
                    .into_iter()
                    .map(|(board, rows)| BoardTableOut {
                        board,
                        rows: rows
                            .into_iter()
                            .map(|r| BoardRowOut {
                                rank: r.rank,
                                player: r.player,
                                team: r.team,
                                games: r.games,
                                wins: r.wins,
                                draws: r.draws,
                                losses: r.losses,
                                points: r.points.as_f64(),
                                eligible: r.eligible,
                            })
                            .collect(),
                    })
                    .collect()
            }),
        }
    }

    /// The standings (and with the flags the crosstable and board tables) as text, CSV or HTML,
    /// rendered by `chuhe-league`.
    pub(super) fn standings_printout(&self, table: &Standings, a: &StandingsArgs) -> String {
        let lang = a.lang.lang();
        let matches = self.team_matches();
        let report = TeamReport {
            event: &self.event,
            teams: &self.teams,
            system: self.system,
            criteria: &self.criteria,
            ranking_label: &self.criteria_label,
            standings: table,
            matches: &matches,
            byes: &self.byes,
            lang,
        };
        let mut tables = vec![report.standings_table()];
        if a.crosstable {
            tables.push(report.crosstable());
        }
        if a.boards {
            for (board, rows) in board_tables(&self.board_entries(), a.min_board_games) {
                tables.push(board_table(board, &rows, a.min_board_games, lang));
            }
        }
        let heading = report.heading();
        match a.format {
            OutFormat::Csv => {
                let csv = csv_document(&heading, &tables);
                if a.bom { format!("{BOM}{csv}") } else { csv }
            }
            OutFormat::Html => {
                let title = if self.event.is_empty() {
                    lang.pick("团体名次", "Team standings").to_string()
                } else {
                    self.event.clone()
                };
                html_document(&title, &heading[heading.len() - 1..], &tables, lang)
            }
            OutFormat::Text | OutFormat::Json => text_document(&heading, &tables),
        }
    }
    // ---------------------------------------------------------------------------------------------
    // output
}

#[derive(Serialize)]
pub(super) struct StandingsOut {
    event: String,
    system: &'static str,
    ranking: String,
    criteria: Vec<&'static str>,
    rows: Vec<RowOut>,
    generated_forfeits: Vec<ForfeitOut>,
    /// Always empty: a meeting due when both teams had withdrawn is a double forfeit (20.3
    /// 均作弃权), listed in `double_forfeits`. Kept so that readers of the field still parse.
    void_meetings: Vec<VoidOut>,
    /// Meetings due when both teams had withdrawn: a forfeit by both, 0 场分 each.
    double_forfeits: Vec<VoidOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    board_tables: Option<Vec<BoardTableOut>>,
}

#[derive(Serialize)]
struct RowOut {
    rank: Option<u32>,
    team: String,
    played: u32,
    won: u32,
    drawn: u32,
    lost: u32,
    match_points: f64,
    game_points: f64,
    game_wins: u32,
    fouls: u32,
    black_wins: u32,
    black_games: u32,
    opponent_match_points: f64,
    head_to_head: Option<f64>,
    penalties: PenaltiesOut,
    decided_by: Option<&'static str>,
    withdrawn: Option<&'static str>,
    /// 18.3 除名 (the effect on results is in `withdrawn`).
    expelled: bool,
}

#[derive(Serialize)]
struct PenaltiesOut {
    disqualifications: u32,
    warnings: u32,
}

#[derive(Serialize)]
struct ForfeitOut {
    winner: String,
    withdrawn: String,
    /// The round the meeting was due (when the file gives the schedule).
    round: Option<u32>,
}

#[derive(Serialize)]
struct VoidOut {
    teams: [String; 2],
    round: Option<u32>,
}

#[derive(Serialize)]
struct BoardTableOut {
    board: u32,
    rows: Vec<BoardRowOut>,
}

#[derive(Serialize)]
struct BoardRowOut {
    rank: u32,
    player: String,
    team: String,
    games: u32,
    wins: u32,
    draws: u32,
    losses: u32,
    points: f64,
    eligible: bool,
}
