//! The `result_chain` of a results file and its board records, as `chuhe-league` values.

use super::file::{BoardJson, ColourJson, ForfeitJson, ResultJson};
use super::lines::Lines;
use anyhow::Result;
use chuhe_league::chain::{BoardRecord, GameResult, PlayedGame, ResultChain, StageColours};
use chuhe_league::colour::{Colour, Side, side_colour};
use chuhe_league_core::chain::{self, ChainFile, ChainSpec};

/// `root` is the field's path (`result_chain`, `tiebreak_chain`), for error messages. The
/// keys and their checks are the server's event file's ([`chuhe_league_core::chain`]).
pub(super) fn parse_chain(lines: &Lines, root: &str, c: Option<&ChainSpec>) -> Result<ResultChain> {
    chain::parse(c, root, ChainFile::Results).map_err(|e| lines.err(&e.field, e.why))
}

pub(super) fn parse_board(
    lines: &Lines,
    p: &str,
    chain: &ResultChain,
    board: u32,
    b: &BoardJson,
) -> Result<BoardRecord> {
    match (&b.games, b.forfeited_by) {
        (Some(_), Some(_)) => {
            Err(lines.err(p, "give either \"games\" or \"forfeited_by\", not both"))
        }
        (None, None) => Err(lines.err(p, "needs \"games\" or \"forfeited_by\"")),
        (None, Some(f)) => Ok(match f {
            ForfeitJson::First => BoardRecord::Forfeit {
                forfeited_by: Side::First,
            },
            ForfeitJson::Second => BoardRecord::Forfeit {
                forfeited_by: Side::Second,
            },
            ForfeitJson::Both => BoardRecord::DoubleForfeit,
        }),
        (Some(games), None) => {
            let mut out = Vec::with_capacity(games.len());
            let mut prev: Option<Colour> = None;
            for (k, g) in games.iter().enumerate() {
                let gp = format!("{p}.games[{k}]");
                let inferred = match chain.stages().get(k).map(|s| s.colours) {
                    Some(StageColours::AsScheduled) => Some(side_colour(Side::First, board)),
                    Some(StageColours::SwappedFromPrevious) => prev.map(Colour::opposite),
                    _ => None,
                };
                let given = g.first_colour.map(|c| match c {
                    ColourJson::Red => Colour::Red,
                    ColourJson::Black => Colour::Black,
                });
                let colour = match (given, inferred) {
                    (Some(c), _) => c,
                    (None, Some(c)) => c,
                    (None, None) => {
                        let stage = chain
                            .stages()
                            .get(k)
                            .map_or("(beyond the chain)", |s| s.name.as_str());
                        return Err(lines.err(
                            &format!("{gp}.first_colour"),
                            format!("required for stage {stage:?}: its colours are chosen, so say which colour the first team's player had (\"red\" or \"black\")"),
                        ));
                    }
                };
                prev = Some(colour);
                out.push(PlayedGame {
                    first_colour: colour,
                    result: match g.result {
                        ResultJson::First => GameResult::FirstWins,
                        ResultJson::Second => GameResult::SecondWins,
                        ResultJson::Draw => GameResult::Draw,
                    },
                    fouls: g.fouls,
                });
            }
            Ok(BoardRecord::Played(out))
        }
    }
}
