//! `chuhe league sheet`: score sheets (计分表) of the file's matches, filled in or blank.

use super::season::Season;
use anyhow::Result;
use chuhe_league::sheet::{ScoreSheet, SheetHeader};
use chuhe_league::text::team_label;
use std::collections::BTreeMap;

impl Season {
    /// The sheets of the file's matches (of `round`, if given); blank for pending matches and
    /// with `blank`. A round without matches in the file but in its schedule gives blank sheets
    /// from the schedule (tables in schedule order, names left empty).
    pub(super) fn sheets(&self, round: Option<u32>, blank: bool) -> Result<Vec<ScoreSheet>> {
        let mut out = Vec::new();
        let mut table_in_round: BTreeMap<u32, u32> = BTreeMap::new();
        // Each team by name, with its unit where that differs (two teams of one unit).
        let labels: Vec<String> = self
            .teams
            .iter()
            .zip(&self.units)
            .map(|(n, u)| team_label(n, u))
            .collect();
        for m in &self.matches {
            let n = table_in_round.entry(m.round).or_default();
            *n += 1;
            if round.is_some_and(|r| r != m.round) {
                continue;
            }
            let header = SheetHeader {
                event: &self.event,
                round: m.round,
                date: &m.date,
                table: Some(m.table.unwrap_or(*n)),
                teams: [&labels[m.first], &labels[m.second]],
            };
            let sheet = match &m.result {
                Some(result) if !blank => {
                    ScoreSheet::new(header, &m.players, result, &self.rules.chain)?
                }
                _ => ScoreSheet::blank(header, &m.players, self.rules.boards, &self.rules.chain)?,
            };
            out.push(sheet);
        }
        if let (Some(r), true, Some(fixtures)) = (round, out.is_empty(), &self.schedule) {
            let players = vec![(String::new(), String::new()); self.rules.boards as usize];
            for (k, f) in fixtures.iter().filter(|f| f.round == r).enumerate() {
                out.push(ScoreSheet::blank(
                    SheetHeader {
                        event: &self.event,
                        round: r,
                        date: "",
                        table: Some(k as u32 + 1),
                        teams: [&labels[f.first], &labels[f.second]],
                    },
                    &players,
                    self.rules.boards,
                    &self.rules.chain,
                )?);
            }
        }
        Ok(out)
    }
}
