//! `chuhe league sheet`: score sheets (计分表) of the file's matches.

use super::season::Season;
use anyhow::Result;
use chuhe_league::sheet::{ScoreSheet, SheetHeader};
use std::collections::BTreeMap;

impl Season {
    pub(super) fn sheets(&self, round: Option<u32>) -> Result<Vec<ScoreSheet>> {
        let mut out = Vec::new();
        let mut table_in_round: BTreeMap<u32, u32> = BTreeMap::new();
        for m in &self.matches {
            let n = table_in_round.entry(m.round).or_default();
            *n += 1;
            if round.is_some_and(|r| r != m.round) {
                continue;
            }
            let sheet = ScoreSheet::new(
                SheetHeader {
                    event: &self.event,
                    round: m.round,
                    date: &m.date,
                    table: Some(m.table.unwrap_or(*n)),
                    teams: [&self.units[m.first], &self.units[m.second]],
                },
                &m.players,
                &m.result,
                &self.rules.chain,
            )?;
            out.push(sheet);
        }
        Ok(out)
    }
}
