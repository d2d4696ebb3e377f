//! `chuhe league standings`: the table as text or JSON (the JSON shape is a contract).

use super::render::render_table;
use super::season::Season;
use chuhe_league::individual::{BoardEntry, board_tables};
use chuhe_league::points::Points;
use chuhe_league::standings::{Standings, System, TeamCriterion, WithdrawalEffect};
use serde::Serialize;

impl Season {
    fn board_entries(&self) -> Vec<BoardEntry> {
        let mut v = Vec::new();
        for m in &self.matches {
            for (b, (p1, p2)) in m.result.boards.iter().zip(&m.players) {
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
            void_meetings: table
                .void_meetings
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

    pub(super) fn standings_text(&self, table: &Standings, boards: Option<u32>) -> String {
        let swiss = self.system == System::Swiss;
        let has_h2h = self.criteria.contains(&TeamCriterion::HeadToHead);
        let mut out = String::new();
        let chain: Vec<&str> = self.criteria.iter().map(|c| c.chinese()).collect();
        if !self.event.is_empty() {
            out.push_str(&self.event);
            out.push('\n');
        }
        out.push_str(&format!(
            "Ranking ({}): {}\n\n",
            self.criteria_label,
            chain.join(" > ")
        ));
        let mut header = vec!["Rank", "Team", "P", "W", "D", "L", "场分", "局分"];
        if swiss {
            header.push("对手分");
        }
        header.extend(["胜局", "犯规", "后走胜局", "后走局数"]);
        if has_h2h {
            header.push("直胜");
        }
        header.push("Decided by");
        let mut rows: Vec<Vec<String>> = Vec::new();
        for r in &table.rows {
            let mut row = vec![
                r.rank.map_or_else(|| "-".to_string(), |x| x.to_string()),
                self.teams[r.team].clone(),
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
                (Some(_), Some(c)) => c.chinese().to_string(),
                (Some(_), None) if table.rows.len() > 1 => "tied (并列)".to_string(),
                _ => String::new(),
            };
            let mut extra = Vec::new();
            if r.penalties != (0, 0) {
                extra.push(format!(
                    "penalties: {} disqualification(s), {} warning(s)",
                    r.penalties.0, r.penalties.1
                ));
            }
            let left = if r.expelled {
                "expelled (除名, 18.3)"
            } else {
                "withdrew"
            };
            match r.withdrawal {
                Some(WithdrawalEffect::Annulled) => {
                    extra.push(format!("{left}; results annulled (20.3)"))
                }
                Some(WithdrawalEffect::ResultsStand) => {
                    extra.push(format!("{left}; results stand"))
                }
                None => {}
            }
            if !extra.is_empty() {
                if !note.is_empty() {
                    note.push_str("; ");
                }
                note.push_str(&extra.join("; "));
            }
            row.push(note);
            rows.push(row);
        }
        let header: Vec<String> = header.iter().map(|s| s.to_string()).collect();
        out.push_str(&render_table(&header, &rows, &[1]));
        if !table.generated_forfeits.is_empty() {
            out.push_str("\nForfeits after withdrawals (20.3):\n");
            for f in &table.generated_forfeits {
                out.push_str(&format!(
                    "  {} + : - {}{}\n",
                    self.teams[f.winner],
                    self.teams[f.withdrawn],
                    f.round.map(|r| format!(" (round {r})")).unwrap_or_default()
                ));
            }
        }
        if !table.void_meetings.is_empty() {
            out.push_str("\nNot played, both teams had withdrawn (no result):\n");
            for v in &table.void_meetings {
                out.push_str(&format!(
                    "  {} - {}{}\n",
                    self.teams[v.teams[0]],
                    self.teams[v.teams[1]],
                    v.round.map(|r| format!(" (round {r})")).unwrap_or_default()
                ));
            }
        }
        if let Some(min) = boards {
            for (board, rows) in board_tables(&self.board_entries(), min) {
                out.push_str(&format!("\nBoard {board}\n"));
                let header: Vec<String> = ["Rank", "Player", "Team", "G", "W", "D", "L", "Pts", ""]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                let body: Vec<Vec<String>> = rows
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
                                format!("(< {min} games)")
                            },
                        ]
                    })
                    .collect();
                out.push_str(&render_table(&header, &body, &[1, 2, 8]));
            }
        }
        out
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
    void_meetings: Vec<VoidOut>,
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
