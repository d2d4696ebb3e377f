//! The `result_chain` keys — one board's games, slow → colour-swapped fast → armageddon or any
//! other chain — as the server's event file and `chuhe league`'s results file write them, read
//! by one parser into a `chuhe-league` [`ResultChain`]. The two files differ only in their
//! defaults and in what a time control must be ([`ChainFile`]); every refusal names its field.

use chuhe_league::chain::{
    Chooser, CountBasis, DrawRule, ResultChain, Stage as ChainStage, StageColours,
};
use chuhe_league::colour::Colour;
use chuhe_league::entities::TimeControlText;
use serde::{Deserialize, Serialize};

use crate::refusal::{SpecError, bad, half_points};

/// A `result_chain`: `{"preset": "single", "time_control": …}`,
/// `{"preset": "slow-fast-armageddon", "time_controls": [slow, fast, armageddon]}`, or
/// `{"stages": [...]}`, with an optional `count_basis`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_control: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_controls: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<Vec<ChainStageSpec>>,
    /// `first_stage` (default) or `deciding_game`: which game the win/Black counts read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_basis: Option<String>,
}

/// One stage of a chain given by its `stages`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainStageSpec {
    pub name: String,
    pub time_control: String,
    /// `scheduled` (first stage), `swapped` (default after), `chosen_by_previous_black`,
    /// `chosen_by_previous_red`, `chosen_by_first`, `chosen_by_second`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub colours: Option<String>,
    /// `draw` (default), `black_wins`, `red_wins`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_draw: Option<String>,
    /// Board points `[winner, loser]` when the board is decided in this stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<[f64; 2]>,
    /// Results file only: whether the stage's games count for Elo (default: the first
    /// stage's only). An event rates its first stage and no other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rated: Option<bool>,
}

/// The file a chain is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainFile {
    /// The server's event file: a time control is one the clock runs (`90m+30s`); no chain is
    /// one game at `90m+30s`; the slow-fast-armageddon preset needs its three time controls;
    /// the first stage is rated and no other.
    Event,
    /// `chuhe league`'s results file: a time control is a label (`standard`, `20+10`); no
    /// chain is one game at `standard`; the preset's time controls default to `slow`, `fast`,
    /// `armageddon`; a stage may say whether it is `rated`.
    Results,
}

impl ChainFile {
    fn default_time_control(self) -> &'static str {
        match self {
            ChainFile::Event => "90m+30s",
            ChainFile::Results => "standard",
        }
    }

    /// A time control as this file needs it.
    fn time_control(self, field: &str, s: &str) -> Result<TimeControlText, SpecError> {
        if self == ChainFile::Event {
            // The clock must be able to run it, not only the league to name it.
            s.parse::<chuhe_clock::Controls>()
                .map_err(|e| bad(field, format!("{s:?}: {e}")))?;
        }
        TimeControlText::new(s).map_err(|e| bad(field, e.to_string()))
    }
}

/// The chain `c` (None: the file's default) as `chuhe-league` rules. `root`: its field
/// (`result_chain`, `tiebreak_chain`), which every refusal's field starts with.
pub fn parse(c: Option<&ChainSpec>, root: &str, file: ChainFile) -> Result<ResultChain, SpecError> {
    let Some(c) = c else {
        return Ok(ResultChain::single(
            file.time_control(root, file.default_time_control())?,
        ));
    };
    let basis = match c.count_basis.as_deref() {
        None | Some("first_stage") => CountBasis::FirstStage,
        Some("deciding_game") => CountBasis::DecidingGame,
        Some(other) => {
            return Err(bad(
                format!("{root}.count_basis"),
                format!("unknown {other:?} (use \"first_stage\" or \"deciding_game\")"),
            ));
        }
    };
    let mut chain = match (&c.preset, &c.stages) {
        (Some(_), Some(_)) => return Err(bad(root, "give \"preset\" or \"stages\", not both")),
        (None, None) => return Err(bad(root, "needs \"preset\" or \"stages\"")),
        (Some(p), None) => match p.as_str() {
            "single" => ResultChain::single(
                file.time_control(
                    &format!("{root}.time_control"),
                    c.time_control
                        .as_deref()
                        .unwrap_or(file.default_time_control()),
                )?,
            ),
            "slow-fast-armageddon" => {
                let tcs = match (&c.time_controls, file) {
                    (Some(t), _) => t.clone(),
                    (None, ChainFile::Results) => {
                        vec!["slow".into(), "fast".into(), "armageddon".into()]
                    }
                    (None, ChainFile::Event) => Vec::new(),
                };
                if tcs.len() != 3 {
                    return Err(bad(
                        format!("{root}.time_controls"),
                        "needs 3 time controls: slow, fast, armageddon",
                    ));
                }
                ResultChain::slow_fast_armageddon(
                    file.time_control(&format!("{root}.time_controls[0]"), &tcs[0])?,
                    file.time_control(&format!("{root}.time_controls[1]"), &tcs[1])?,
                    file.time_control(&format!("{root}.time_controls[2]"), &tcs[2])?,
                )
            }
            other => {
                return Err(bad(
                    format!("{root}.preset"),
                    format!(
                        "unknown preset {other:?} (use \"single\" or \"slow-fast-armageddon\")"
                    ),
                ));
            }
        },
        (None, Some(stages)) => {
            let mut out = Vec::with_capacity(stages.len());
            for (i, s) in stages.iter().enumerate() {
                out.push(stage(s, i, &format!("{root}.stages[{i}]"), file)?);
            }
            ResultChain::new(out, basis)
                .map_err(|e| bad(format!("{root}.stages"), e.to_string()))?
        }
    };
    chain.count_basis = basis;
    Ok(chain)
}

/// The `i`th stage (0-based) of a chain given by its stages; `f`: its field.
fn stage(s: &ChainStageSpec, i: usize, f: &str, file: ChainFile) -> Result<ChainStage, SpecError> {
    let colours = match s
        .colours
        .as_deref()
        .unwrap_or(if i == 0 { "scheduled" } else { "swapped" })
    {
        "scheduled" => StageColours::AsScheduled,
        "swapped" => StageColours::SwappedFromPrevious,
        "chosen_by_previous_black" => StageColours::ChosenBy(Chooser::PreviousBlack),
        "chosen_by_previous_red" => StageColours::ChosenBy(Chooser::PreviousRed),
        "chosen_by_first" => StageColours::ChosenBy(Chooser::FirstTeam),
        "chosen_by_second" => StageColours::ChosenBy(Chooser::SecondTeam),
        other => {
            return Err(bad(
                format!("{f}.colours"),
                format!(
                    "unknown {other:?} (scheduled, swapped, chosen_by_previous_black, chosen_by_previous_red, chosen_by_first, chosen_by_second)"
                ),
            ));
        }
    };
    let on_draw = match s.on_draw.as_deref().unwrap_or("draw") {
        "draw" => DrawRule::Draw,
        "black_wins" => DrawRule::WinFor(Colour::Black),
        "red_wins" => DrawRule::WinFor(Colour::Red),
        other => {
            return Err(bad(
                format!("{f}.on_draw"),
                format!("unknown {other:?} (draw, black_wins, red_wins)"),
            ));
        }
    };
    let decided_points = match s.points {
        None => None,
        Some([w, l]) => Some((
            half_points(&format!("{f}.points[0]"), w)?,
            half_points(&format!("{f}.points[1]"), l)?,
        )),
    };
    let rated = match (s.rated, file) {
        (None, _) => i == 0,
        (Some(r), ChainFile::Results) => r,
        (Some(_), ChainFile::Event) => {
            return Err(bad(
                format!("{f}.rated"),
                "an event rates its first stage and no other (a results file's key)",
            ));
        }
    };
    Ok(ChainStage {
        name: s.name.clone(),
        time_control: file.time_control(&format!("{f}.time_control"), &s.time_control)?,
        colours,
        on_draw,
        decided_points,
        rated,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn chain(v: serde_json::Value) -> ChainSpec {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn the_two_files_differ_only_in_defaults_and_time_controls() {
        let none = parse(None, "result_chain", ChainFile::Event).unwrap();
        assert_eq!(none.stages()[0].time_control.as_str(), "90m+30s");
        let none = parse(None, "result_chain", ChainFile::Results).unwrap();
        assert_eq!(none.stages()[0].time_control.as_str(), "standard");
        let sfa = chain(serde_json::json!({"preset": "slow-fast-armageddon"}));
        assert_eq!(
            parse(Some(&sfa), "result_chain", ChainFile::Results)
                .unwrap()
                .stages()
                .len(),
            3
        );
        let e = parse(Some(&sfa), "result_chain", ChainFile::Event).unwrap_err();
        assert_eq!(e.field, "result_chain.time_controls");
        // A label is a results file's time control, not one the clock runs.
        let label = chain(serde_json::json!({"preset": "single", "time_control": "standard"}));
        assert!(parse(Some(&label), "result_chain", ChainFile::Results).is_ok());
        let e = parse(Some(&label), "result_chain", ChainFile::Event).unwrap_err();
        assert_eq!(e.field, "result_chain.time_control");
    }

    #[test]
    fn every_refusal_names_its_field_under_the_root() {
        let stages = |extra: serde_json::Value| {
            let mut s = serde_json::json!({"name": "slow", "time_control": "20m+10s"});
            for (k, v) in extra.as_object().unwrap() {
                s[k] = v.clone();
            }
            chain(serde_json::json!({"stages": [s]}))
        };
        let cases = [
            (
                stages(serde_json::json!({"colours": "x"})),
                "tiebreak_chain.stages[0].colours",
            ),
            (
                stages(serde_json::json!({"on_draw": "x"})),
                "tiebreak_chain.stages[0].on_draw",
            ),
            (
                stages(serde_json::json!({"points": [0.3, 0]})),
                "tiebreak_chain.stages[0].points[0]",
            ),
            (
                stages(serde_json::json!({"time_control": ""})),
                "tiebreak_chain.stages[0].time_control",
            ),
            (
                chain(serde_json::json!({"preset": "x"})),
                "tiebreak_chain.preset",
            ),
            (chain(serde_json::json!({})), "tiebreak_chain"),
            (
                chain(serde_json::json!({"preset": "single", "count_basis": "x"})),
                "tiebreak_chain.count_basis",
            ),
        ];
        for (c, field) in cases {
            let e = parse(Some(&c), "tiebreak_chain", ChainFile::Results).unwrap_err();
            assert_eq!(e.field, field, "{e}");
        }
        let rated = stages(serde_json::json!({"rated": false}));
        assert!(
            !parse(Some(&rated), "result_chain", ChainFile::Results)
                .unwrap()
                .stages()[0]
                .rated
        );
        let e = parse(Some(&rated), "result_chain", ChainFile::Event).unwrap_err();
        assert_eq!(e.field, "result_chain.stages[0].rated");
    }
}
