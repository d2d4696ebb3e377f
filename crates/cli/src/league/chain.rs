//! The `result_chain` of a results file and its board records, as `chuhe-league` values.

use super::file::{BoardJson, ChainJson, ColourJson, ForfeitJson, ResultJson};
use super::lines::Lines;
use super::season::{half_points, time_control};
use anyhow::Result;
use chuhe_league::chain::{
    BoardRecord, Chooser, CountBasis, DrawRule, GameResult, PlayedGame, ResultChain, Stage,
    StageColours,
};
use chuhe_league::colour::{Colour, Side, side_colour};

/// `root` is the field's path (`result_chain`, `tiebreak_chain`), for error messages.
pub(super) fn parse_chain(lines: &Lines, root: &str, c: Option<&ChainJson>) -> Result<ResultChain> {
    let Some(c) = c else {
        return Ok(ResultChain::single(time_control(lines, root, "standard")?));
    };
    let basis = match c.count_basis.as_deref() {
        None | Some("first_stage") => CountBasis::FirstStage,
        Some("deciding_game") => CountBasis::DecidingGame,
        Some(other) => {
            return Err(lines.err(
                &format!("{root}.count_basis"),
                format!("unknown {other:?} (use \"first_stage\" or \"deciding_game\")"),
            ));
        }
    };
    match (&c.preset, &c.stages) {
        (Some(_), Some(_)) => Err(lines.err(root, "give \"preset\" or \"stages\", not both")),
        (None, None) => Err(lines.err(root, "needs \"preset\" or \"stages\"")),
        (Some(p), None) => {
            let mut chain = match p.as_str() {
                "single" => ResultChain::single(time_control(
                    lines,
                    &format!("{root}.time_control"),
                    c.time_control.as_deref().unwrap_or("standard"),
                )?),
                "slow-fast-armageddon" => {
                    let tcs = c
                        .time_controls
                        .clone()
                        .unwrap_or_else(|| vec!["slow".into(), "fast".into(), "armageddon".into()]);
                    if tcs.len() != 3 {
                        return Err(lines.err(
                            &format!("{root}.time_controls"),
                            "needs 3 time controls: slow, fast, armageddon",
                        ));
                    }
                    ResultChain::slow_fast_armageddon(
                        time_control(lines, &format!("{root}.time_controls[0]"), &tcs[0])?,
                        time_control(lines, &format!("{root}.time_controls[1]"), &tcs[1])?,
                        time_control(lines, &format!("{root}.time_controls[2]"), &tcs[2])?,
                    )
                }
                other => {
                    return Err(lines.err(
                        &format!("{root}.preset"),
                        format!(
                            "unknown preset {other:?} (use \"single\" or \"slow-fast-armageddon\")"
                        ),
                    ));
                }
            };
            chain.count_basis = basis;
            Ok(chain)
        }
        (None, Some(stages)) => {
            let mut out = Vec::with_capacity(stages.len());
            for (i, s) in stages.iter().enumerate() {
                let p = format!("{root}.stages[{i}]");
                let colours = match s.colours.as_deref().unwrap_or(if i == 0 {
                    "scheduled"
                } else {
                    "swapped"
                }) {
                    "scheduled" => StageColours::AsScheduled,
                    "swapped" => StageColours::SwappedFromPrevious,
                    "chosen_by_previous_black" => StageColours::ChosenBy(Chooser::PreviousBlack),
                    "chosen_by_previous_red" => StageColours::ChosenBy(Chooser::PreviousRed),
                    "chosen_by_first" => StageColours::ChosenBy(Chooser::FirstTeam),
                    "chosen_by_second" => StageColours::ChosenBy(Chooser::SecondTeam),
                    other => {
                        return Err(lines.err(
                            &format!("{p}.colours"),
                            format!("unknown {other:?} (scheduled, swapped, chosen_by_previous_black, chosen_by_previous_red, chosen_by_first, chosen_by_second)"),
                        ));
                    }
                };
                let on_draw = match s.on_draw.as_deref().unwrap_or("draw") {
                    "draw" => DrawRule::Draw,
                    "black_wins" => DrawRule::WinFor(Colour::Black),
                    "red_wins" => DrawRule::WinFor(Colour::Red),
                    other => {
                        return Err(lines.err(
                            &format!("{p}.on_draw"),
                            format!("unknown {other:?} (draw, black_wins, red_wins)"),
                        ));
                    }
                };
                let decided_points = match s.points {
                    None => None,
                    Some([w, l]) => Some((
                        half_points(lines, &format!("{p}.points[0]"), w)?,
                        half_points(lines, &format!("{p}.points[1]"), l)?,
                    )),
                };
                out.push(Stage {
                    name: s.name.clone(),
                    time_control: time_control(
                        lines,
                        &format!("{p}.time_control"),
                        &s.time_control,
                    )?,
                    colours,
                    on_draw,
                    decided_points,
                    rated: s.rated.unwrap_or(i == 0),
                });
            }
            ResultChain::new(out, basis).map_err(|e| lines.err(&format!("{root}.stages"), e))
        }
    }
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
