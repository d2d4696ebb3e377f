//! `chuhe league elo`: a rating list from an event's results (Elo, seed 001).

use super::args::{EloArgs, OutFormat};
use super::season::Season;
use anyhow::{Result, anyhow, bail};
use chuhe_league::elo::{
    EloOptions, InitialRating, KRule, RatedPlayer, parse_rating_list, rated_games_of_board,
    rating_list, rating_order, rating_table, to_rated_game,
};
use chuhe_league::report::{csv_document, html_document, text_document};
use chuhe_league::text::BOM;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize)]
struct EloOut {
    event: String,
    rows: Vec<EloRowOut>,
}

#[derive(Serialize)]
struct EloRowOut {
    player: String,
    team: String,
    before: Option<i32>,
    /// The rating before was given by --initial (first rating).
    initial: bool,
    k: Option<u32>,
    games: u32,
    rated_games: u32,
    score: f64,
    expected: f64,
    performance: Option<f64>,
    change: f64,
    after: Option<i32>,
}

impl Season {
    pub(super) fn elo(&self, a: &EloArgs, ratings: Option<&str>) -> Result<String> {
        let k = match a.k.as_str() {
            "fide" => KRule::default(),
            n => match n.parse::<u32>() {
                Ok(k) if (1..=100).contains(&k) => KRule {
                    bands: vec![],
                    otherwise: k,
                },
                _ => bail!("--k: {n:?} is neither \"fide\" nor a number 1–100"),
            },
        };
        let initial = match a.initial.as_str() {
            "performance" => InitialRating::Performance {
                min_games: a.min_games,
            },
            "none" => InitialRating::Unrated,
            r => match r.parse::<i32>() {
                Ok(v) if (0..=4000).contains(&v) => InitialRating::Fixed(v),
                _ => bail!("--initial: {r:?} is not \"performance\", \"none\" or a rating 0–4000"),
            },
        };
        let list = match ratings {
            Some(text) => parse_rating_list(text).map_err(|e| anyhow!("--ratings: {e}"))?,
            None => vec![],
        };
        let known: BTreeMap<&str, (Option<i32>, u32)> = list
            .iter()
            .map(|e| (e.name.as_str(), (e.rating, e.games)))
            .collect();
        let mut names: Vec<String> = Vec::new();
        let mut teams: Vec<String> = Vec::new();
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        let mut id = |name: &str, team: &str| -> usize {
            *index.entry(name.to_string()).or_insert_with(|| {
                names.push(name.to_string());
                teams.push(team.to_string());
                names.len() - 1
            })
        };
        let mut games = Vec::new();
        for m in &self.matches {
            let Some(result) = &m.result else { continue };
            for (b, (p1, p2)) in result.boards.iter().zip(&m.players) {
                let (p1, p2) = (p1.trim(), p2.trim());
                if p1.is_empty() || p2.is_empty() {
                    continue;
                }
                let x = id(p1, &self.teams[m.first]);
                let y = id(p2, &self.teams[m.second]);
                for (colour, res) in rated_games_of_board(&self.rules.chain, b) {
                    games.push(to_rated_game(x, y, colour, res));
                }
            }
        }
        if names.is_empty() {
            bail!("no rated games: the matches name no players on their boards");
        }
        let players: Vec<RatedPlayer> = names
            .iter()
            .map(|n| {
                let (rating, games) = known.get(n.as_str()).copied().unwrap_or((None, 0));
                RatedPlayer { rating, games }
            })
            .collect();
        let rows = rating_list(&players, &games, &EloOptions { k, initial })?;
        let lang = a.lang.lang();
        Ok(match a.format {
            OutFormat::Json => {
                let out = EloOut {
                    event: self.event.clone(),
                    rows: rating_order(&rows, &names)
                        .into_iter()
                        .map(|r| {
                            let i = r.player;
                            EloRowOut {
                                player: names[i].clone(),
                                team: teams[i].clone(),
                                before: r.before,
                                initial: r.initial,
                                k: r.k,
                                games: r.games,
                                rated_games: r.rated_games,
                                score: r.score,
                                expected: r.expected,
                                performance: r.performance,
                                change: r.change,
                                after: r.after,
                            }
                        })
                        .collect(),
                };
                let mut s = serde_json::to_string_pretty(&out)?;
                s.push('\n');
                s
            }
            f => {
                let table = rating_table(&rows, &names, &teams, lang);
                let heading: Vec<String> = if self.event.is_empty() {
                    vec![]
                } else {
                    vec![self.event.clone()]
                };
                match f {
                    OutFormat::Csv if a.bom => {
                        format!(
                            "{BOM}{}",
                            csv_document(&heading, std::slice::from_ref(&table))
                        )
                    }
                    OutFormat::Csv => csv_document(&heading, std::slice::from_ref(&table)),
                    OutFormat::Html => html_document(
                        if self.event.is_empty() {
                            &table.title
                        } else {
                            &self.event
                        },
                        &[],
                        std::slice::from_ref(&table),
                        lang,
                    ),
                    _ => text_document(&heading, std::slice::from_ref(&table)),
                }
            }
        })
    }
}
