//! `chuhe league …`: round-robin schedules, standings and score sheets.
//!
//! The JSON structs here are the edge: they convert to and from the `chuhe-league` domain types
//! (which do not derive serde). The results-file format is documented in
//! `crates/league/README.md`.

use anyhow::{Result, anyhow, bail};
use chuhe_league::chain::{
    BoardRecord, Chooser, CountBasis, DrawRule, GameResult, GameScoring, PlayedGame, ResultChain,
    Stage, StageColours,
};
use chuhe_league::colour::{Colour, Side, side_colour};
use chuhe_league::entities::TimeControlText;
use chuhe_league::fixtures::{RoundRobinOptions, knockout_first_round, round_robin};
use chuhe_league::individual::{BoardEntry, board_tables};
use chuhe_league::matches::{EventRules, MatchRecord, MatchResult, MatchScoring, evaluate_match};
use chuhe_league::points::Points;
use chuhe_league::sheet::{ScoreSheet, SheetHeader, csv_document, html_document};
use chuhe_league::standings::{
    Penalty, PenaltyKind, Standings, StandingsError, StandingsInput, System, TeamCriterion,
    TeamMatch, Withdrawal, WithdrawalEffect, chains, standings,
};
use chuhe_league::swiss::{FirstRoundSplit, SwissOptions, SwissRound, SwissTeam, pair_next_round};
use clap::{Args, Subcommand, ValueEnum};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct LeagueArgs {
    #[command(subcommand)]
    command: LeagueCommand,
}

#[derive(Debug, Subcommand)]
enum LeagueCommand {
    /// Print a round-robin schedule by the Berger tables (FIDE C.05 Annex 1, CXA 循环赛对局秩序表).
    Schedule(ScheduleArgs),
    /// Compute team standings (场分/局分 and the tie-break chain) from a results file.
    Standings(StandingsArgs),
    /// Print score sheets (计分表) for the matches of a results file.
    Sheet(SheetArgs),
    /// Pair the next round of a team Swiss (积分编排制, 定位编排) from a results file.
    Pair(PairArgs),
    /// Print the first round of a seeded knockout bracket (淘汰制).
    Bracket(BracketArgs),
}

#[derive(Debug, Args)]
struct BracketArgs {
    /// Number of seeded teams (2–1000); seed 1 is the strongest. Top seeds get the byes.
    #[arg(long)]
    teams: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ScheduleFormat::Json)]
    format: ScheduleFormat,
}

#[derive(Debug, Args)]
struct PairArgs {
    /// Results file of a Swiss (JSON); `-` reads standard input. Team order = draw numbers.
    file: PathBuf,
    /// Round 1: how draw numbers split into halves.
    #[arg(long, value_enum, default_value_t = SplitArg::OddEven)]
    split: SplitArg,
    /// Round 1: do not keep teams of the same unit apart.
    #[arg(long)]
    no_unit_avoidance: bool,
    /// Round 1, the lot: which half moves first on table 1 (colours then alternate by table).
    #[arg(long, value_enum, default_value_t = LotArg::Upper)]
    lot: LotArg,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ScheduleFormat::Json)]
    format: ScheduleFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SplitArg {
    /// 1–2, 3–4, … (odd numbers upper half).
    OddEven,
    /// 1–(n/2+1), 2–(n/2+2), … .
    TopBottom,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LotArg {
    /// The upper-half team moves first on table 1.
    Upper,
    /// The lower-half team moves first on table 1.
    Lower,
}

#[derive(Debug, Args)]
struct ScheduleArgs {
    /// Number of teams (2–1000). With an odd number one team has a bye each round.
    #[arg(long)]
    teams: u32,
    /// Double round robin: the second leg repeats the first with colours swapped (13.2).
    #[arg(long)]
    double: bool,
    /// With --double: exchange the last two rounds of the first leg (FIDE's recommendation, so
    /// nobody has three games in a row with the same colour).
    #[arg(long, requires = "double")]
    swap_last_two: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = RoundRobinFormat::Json)]
    format: RoundRobinFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum RoundRobinFormat {
    /// The rounds alone: `[[[first,second],…],…]` (1-based; first = Red on board 1).
    Json,
    /// The rounds with their byes: `{"teams":N,"legs":L,"rounds":[…],"byes":[null|n,…]}`.
    JsonFull,
    /// One line per round: `Round 1: 1-4, 2-3`.
    Table,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ScheduleFormat {
    /// JSON.
    Json,
    /// One line per round: `Round 1: 1-4, 2-3`.
    Table,
}

#[derive(Debug, Args)]
struct StandingsArgs {
    /// Results file (JSON, see crates/league/README.md); `-` reads standard input.
    file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    format: OutFormat,
    /// Also print per-board tables (board prizes).
    #[arg(long)]
    boards: bool,
    /// Minimum games on a board to be eligible for its board prize (with --boards).
    #[arg(long, default_value_t = 1, requires = "boards")]
    min_board_games: u32,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum OutFormat {
    /// Machine-readable JSON.
    Json,
    /// An aligned text table.
    Text,
}

#[derive(Debug, Args)]
struct SheetArgs {
    /// Results file (JSON); `-` reads standard input.
    file: PathBuf,
    /// Only the matches of this round.
    #[arg(long)]
    round: Option<u32>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = SheetFormat::Csv)]
    format: SheetFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SheetFormat {
    /// RFC 4180 CSV, one line per board.
    Csv,
    /// A printable HTML page, one sheet per printed page.
    Html,
}

pub fn run(args: LeagueArgs) -> Result<ExitCode> {
    let out = match args.command {
        LeagueCommand::Schedule(a) => schedule(&a)?,
        LeagueCommand::Bracket(a) => bracket(&a)?,
        LeagueCommand::Pair(a) => {
            let text = read_input(&a.file)?;
            let season = Season::parse(&text)?;
            season.pair(&a)?
        }
        LeagueCommand::Standings(a) => {
            let text = read_input(&a.file)?;
            let season = Season::parse(&text)?;
            let table = season.standings()?;
            match a.format {
                OutFormat::Json => {
                    let mut s = serde_json::to_string_pretty(
                        &season.standings_json(&table, a.boards.then_some(a.min_board_games)),
                    )?;
                    s.push('\n');
                    s
                }
                OutFormat::Text => {
                    season.standings_text(&table, a.boards.then_some(a.min_board_games))
                }
            }
        }
        LeagueCommand::Sheet(a) => {
            let text = read_input(&a.file)?;
            let season = Season::parse(&text)?;
            let sheets = season.sheets(a.round)?;
            if sheets.is_empty() {
                bail!(
                    "no matches{} in {}",
                    a.round
                        .map(|r| format!(" in round {r}"))
                        .unwrap_or_default(),
                    a.file.display()
                );
            }
            match a.format {
                SheetFormat::Csv => csv_document(&sheets),
                SheetFormat::Html => html_document(&sheets),
            }
        }
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn read_input(path: &PathBuf) -> Result<String> {
    if path.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| anyhow!("reading standard input: {e}"))?;
        Ok(s)
    } else {
        std::fs::read_to_string(path).map_err(|e| anyhow!("reading {}: {e}", path.display()))
    }
}

// ---------------------------------------------------------------------------------------------
// schedule

#[derive(Serialize)]
struct ScheduleJson {
    teams: u32,
    legs: u32,
    /// Round r's matches as `[first, second]` (1-based; first = Red on board 1).
    rounds: Vec<Vec<[u32; 2]>>,
    /// Round r's bye, or null.
    byes: Vec<Option<u32>>,
}

fn schedule(a: &ScheduleArgs) -> Result<String> {
    let legs = if a.double { 2 } else { 1 };
    let rounds = round_robin(
        a.teams,
        RoundRobinOptions {
            legs,
            swap_last_two_rounds_of_first_leg: a.swap_last_two,
        },
    )
    .map_err(|e| anyhow!("--teams: {e}"))?;
    Ok(match a.format {
        RoundRobinFormat::Json | RoundRobinFormat::JsonFull => {
            let j = ScheduleJson {
                teams: a.teams,
                legs,
                rounds: rounds
                    .iter()
                    .map(|r| r.pairings.iter().map(|p| [p.first, p.second]).collect())
                    .collect(),
                byes: rounds.iter().map(|r| r.bye).collect(),
            };
            let mut s = if matches!(a.format, RoundRobinFormat::Json) {
                serde_json::to_string(&j.rounds)?
            } else {
                serde_json::to_string(&j)?
            };
            s.push('\n');
            s
        }
        RoundRobinFormat::Table => {
            let mut s = String::new();
            for r in &rounds {
                let games: Vec<String> = r
                    .pairings
                    .iter()
                    .map(|p| format!("{}-{}", p.first, p.second))
                    .collect();
                s.push_str(&format!("Round {}: {}", r.number, games.join(", ")));
                if let Some(b) = r.bye {
                    s.push_str(&format!(" (bye: {b})"));
                }
                s.push('\n');
            }
            s
        }
    })
}

#[derive(Serialize)]
struct BracketJson {
    teams: u32,
    size: u32,
    /// First-round matches in bracket order: `[higher seed, lower seed]`, `null` for a bye.
    matches: Vec<(u32, Option<u32>)>,
}

fn bracket(a: &BracketArgs) -> Result<String> {
    let matches = knockout_first_round(a.teams).map_err(|e| anyhow!("--teams: {e}"))?;
    Ok(match a.format {
        ScheduleFormat::Json => {
            let mut s = serde_json::to_string(&BracketJson {
                teams: a.teams,
                size: a.teams.next_power_of_two(),
                matches,
            })?;
            s.push('\n');
            s
        }
        ScheduleFormat::Table => {
            let mut s = String::new();
            for (i, (hi, lo)) in matches.iter().enumerate() {
                match lo {
                    Some(lo) => s.push_str(&format!("Match {}: {hi}-{lo}\n", i + 1)),
                    None => s.push_str(&format!("Match {}: {hi} (bye)\n", i + 1)),
                }
            }
            s
        }
    })
}

// ---------------------------------------------------------------------------------------------
// results file (input)

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultsFile {
    #[serde(default)]
    event: String,
    system: SystemJson,
    #[serde(default)]
    legs: Option<u32>,
    #[serde(default)]
    ranking: Option<RankingJson>,
    boards: u32,
    #[serde(default)]
    game_scoring: Option<GameScoringJson>,
    #[serde(default)]
    match_points: Option<MatchPointsJson>,
    #[serde(default)]
    result_chain: Option<ChainJson>,
    teams: Vec<TeamJson>,
    #[serde(default)]
    matches: Vec<MatchJson>,
    #[serde(default)]
    byes: Vec<ByeJson>,
    #[serde(default)]
    penalties: Vec<PenaltyJson>,
    #[serde(default)]
    withdrawals: Vec<WithdrawalJson>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum SystemJson {
    RoundRobin,
    Swiss,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RankingJson {
    Preset(String),
    Criteria(Vec<String>),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum GameScoringJson {
    Preset(String),
    Custom(CustomScoringJson),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CustomScoringJson {
    win: f64,
    loss: f64,
    draw_red: f64,
    draw_black: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatchPointsJson {
    #[serde(default)]
    win: Option<f64>,
    #[serde(default)]
    draw: Option<f64>,
    #[serde(default)]
    loss: Option<f64>,
    #[serde(default)]
    forfeit_win: Option<f64>,
    #[serde(default)]
    forfeit_loss: Option<f64>,
    #[serde(default)]
    double_forfeit: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChainJson {
    #[serde(default)]
    preset: Option<String>,
    #[serde(default)]
    time_control: Option<String>,
    #[serde(default)]
    time_controls: Option<Vec<String>>,
    #[serde(default)]
    stages: Option<Vec<StageJson>>,
    #[serde(default)]
    count_basis: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StageJson {
    name: String,
    time_control: String,
    #[serde(default)]
    colours: Option<String>,
    #[serde(default)]
    on_draw: Option<String>,
    #[serde(default)]
    points: Option<[f64; 2]>,
    #[serde(default)]
    rated: Option<bool>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum TeamJson {
    Name(String),
    Full {
        name: String,
        #[serde(default)]
        unit: Option<String>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatchJson {
    round: u32,
    #[serde(default)]
    table: Option<u32>,
    #[serde(default)]
    date: Option<String>,
    first: String,
    second: String,
    #[serde(default)]
    boards: Option<Vec<BoardJson>>,
    #[serde(default)]
    forfeited_by: Option<ForfeitJson>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum ForfeitJson {
    First,
    Second,
    Both,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BoardJson {
    #[serde(default)]
    first_player: Option<String>,
    #[serde(default)]
    second_player: Option<String>,
    #[serde(default)]
    games: Option<Vec<GameJson>>,
    #[serde(default)]
    forfeited_by: Option<ForfeitJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GameJson {
    result: ResultJson,
    #[serde(default)]
    fouls: [u32; 2],
    #[serde(default)]
    first_colour: Option<ColourJson>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum ResultJson {
    First,
    Second,
    Draw,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum ColourJson {
    Red,
    Black,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ByeJson {
    round: u32,
    team: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PenaltyJson {
    team: String,
    kind: PenaltyKindJson,
    #[serde(default)]
    round: Option<u32>,
    #[serde(default)]
    note: Option<String>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum PenaltyKindJson {
    Warning,
    Disqualification,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WithdrawalJson {
    team: String,
    after_round: u32,
}

// ---------------------------------------------------------------------------------------------
// conversion to the domain

/// A parsed and validated results file.
struct Season {
    event: String,
    system: System,
    criteria: Vec<TeamCriterion>,
    criteria_label: String,
    rules: EventRules,
    teams: Vec<String>,
    /// Each team's unit (参赛单位) as printed on score sheets; defaults to the team name.
    units: Vec<String>,
    matches: Vec<ParsedMatch>,
    byes: Vec<(u32, usize)>,
    penalties: Vec<Penalty>,
    withdrawals: Vec<Withdrawal>,
    lines: Lines,
}

struct ParsedMatch {
    round: u32,
    table: Option<u32>,
    date: String,
    first: usize,
    second: usize,
    players: Vec<(String, String)>,
    result: MatchResult,
}

/// Maps JSON paths (`matches[2].boards[0]`) to the line where their value starts.
struct Lines(BTreeMap<String, usize>);

impl Lines {
    fn err(&self, path: &str, msg: impl std::fmt::Display) -> anyhow::Error {
        // The nearest enclosing path with a known line.
        let mut p = path.to_string();
        loop {
            if let Some(l) = self.0.get(&p) {
                return anyhow!("{path} (line {l}): {msg}");
            }
            match p.rfind(['.', '[']) {
                Some(i) => p.truncate(i),
                None => return anyhow!("{path}: {msg}"),
            }
        }
    }
}

fn half_points(lines: &Lines, path: &str, v: f64) -> Result<Points> {
    let h = v * 2.0;
    if !h.is_finite() || h.fract() != 0.0 || h.abs() > 1e6 {
        return Err(lines.err(path, format!("{v} is not a whole or half point")));
    }
    Ok(Points::from_halves(h as i32))
}

fn time_control(lines: &Lines, path: &str, s: &str) -> Result<TimeControlText> {
    TimeControlText::new(s).map_err(|e| lines.err(path, e))
}

impl Season {
    fn parse(text: &str) -> Result<Season> {
        let file: ResultsFile =
            serde_json::from_str(text).map_err(|e| anyhow!("invalid results file: {e}"))?;
        let lines = Lines(json_lines(text));
        if file.boards == 0 || file.boards > 64 {
            return Err(lines.err("boards", "must be 1–64"));
        }
        let system = match file.system {
            SystemJson::RoundRobin => {
                let legs = file.legs.unwrap_or(1);
                if !(1..=2).contains(&legs) {
                    return Err(lines.err("legs", "a round robin has 1 or 2 legs"));
                }
                System::RoundRobin { legs }
            }
            SystemJson::Swiss => {
                if file.legs.is_some() {
                    return Err(lines.err("legs", "only for round robins"));
                }
                System::Swiss
            }
        };
        let (criteria, criteria_label) = match (&file.ranking, file.system) {
            (None, SystemJson::RoundRobin) => {
                (chains::ROUND_ROBIN_2011.to_vec(), "2011 14.5".to_string())
            }
            (None, SystemJson::Swiss) => (chains::SWISS_2011.to_vec(), "2011 14.6".to_string()),
            (Some(RankingJson::Preset(p)), sys) => match (p.as_str(), sys) {
                ("2011", SystemJson::RoundRobin) => {
                    (chains::ROUND_ROBIN_2011.to_vec(), "2011 14.5".into())
                }
                ("2011", SystemJson::Swiss) => (chains::SWISS_2011.to_vec(), "2011 14.6".into()),
                ("1999", SystemJson::RoundRobin) => {
                    (chains::ROUND_ROBIN_1999.to_vec(), "1999 15.3".into())
                }
                ("1999", SystemJson::Swiss) => (chains::SWISS_1999.to_vec(), "1999 15.4".into()),
                ("2011-game-points", SystemJson::Swiss) => {
                    (chains::SWISS_2011_GAME_POINTS.to_vec(), "2011 14.7".into())
                }
                _ => {
                    return Err(lines.err(
                        "ranking",
                        format!("unknown preset {p:?} for this system (use \"2011\", \"1999\", \"2011-game-points\" for Swiss, or a list of criteria)"),
                    ));
                }
            },
            (Some(RankingJson::Criteria(list)), _) => {
                let mut v = Vec::new();
                for (i, c) in list.iter().enumerate() {
                    let crit = TeamCriterion::from_code(c).ok_or_else(|| {
                        lines.err(&format!("ranking[{i}]"), format!("unknown criterion {c:?}"))
                    })?;
                    v.push(crit);
                }
                if v.is_empty() {
                    return Err(lines.err("ranking", "needs at least one criterion"));
                }
                (v, "custom".into())
            }
        };
        let game_scoring = match &file.game_scoring {
            None => GameScoring::TWO_ONE_ZERO,
            Some(GameScoringJson::Preset(p)) => match p.as_str() {
                "2-1-0" => GameScoring::TWO_ONE_ZERO,
                "3-1-0" => GameScoring::THREE_ONE_ZERO,
                "3-0-asymmetric" => GameScoring::THREE_ZERO_ASYMMETRIC,
                "1-0.5-0" => GameScoring::ONE_HALF_ZERO,
                _ => {
                    return Err(lines.err(
                        "game_scoring",
                        format!("unknown preset {p:?} (use \"2-1-0\", \"3-1-0\", \"3-0-asymmetric\", \"1-0.5-0\" or an object)"),
                    ));
                }
            },
            Some(GameScoringJson::Custom(c)) => GameScoring {
                win: half_points(&lines, "game_scoring.win", c.win)?,
                loss: half_points(&lines, "game_scoring.loss", c.loss)?,
                draw_red: half_points(&lines, "game_scoring.draw_red", c.draw_red)?,
                draw_black: half_points(&lines, "game_scoring.draw_black", c.draw_black)?,
            },
        };
        let mut match_scoring = MatchScoring::default();
        if let Some(mp) = &file.match_points {
            let set = |v: Option<f64>, name: &str, slot: &mut Points| -> Result<()> {
                if let Some(v) = v {
                    *slot = half_points(&lines, &format!("match_points.{name}"), v)?;
                }
                Ok(())
            };
            set(mp.win, "win", &mut match_scoring.win)?;
            set(mp.draw, "draw", &mut match_scoring.draw)?;
            set(mp.loss, "loss", &mut match_scoring.loss)?;
            set(
                mp.forfeit_win,
                "forfeit_win",
                &mut match_scoring.forfeit_win,
            )?;
            set(
                mp.forfeit_loss,
                "forfeit_loss",
                &mut match_scoring.forfeit_loss,
            )?;
            set(
                mp.double_forfeit,
                "double_forfeit",
                &mut match_scoring.double_forfeit,
            )?;
        }
        let chain = parse_chain(&lines, file.result_chain.as_ref())?;
        let rules = EventRules {
            boards: file.boards,
            game_scoring,
            chain,
            match_scoring,
        };

        let mut teams: Vec<String> = Vec::new();
        let mut units: Vec<String> = Vec::new();
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        if file.teams.len() < 2 {
            return Err(lines.err("teams", "at least 2 teams are needed"));
        }
        for (i, t) in file.teams.iter().enumerate() {
            let (name, unit) = match t {
                TeamJson::Name(n) => (n, None),
                TeamJson::Full { name, unit } => (name, unit.as_ref()),
            };
            let name = name.trim().to_string();
            units.push(unit.map_or_else(|| name.clone(), |u| u.trim().to_string()));
            let path = format!("teams[{i}]");
            if name.is_empty() {
                return Err(lines.err(&path, "team name is empty"));
            }
            if index.insert(name.clone(), i).is_some() {
                return Err(lines.err(&path, format!("team {name:?} is listed twice")));
            }
            teams.push(name);
        }
        let team = |path: &str, name: &str| -> Result<usize> {
            index
                .get(name.trim())
                .copied()
                .ok_or_else(|| lines.err(path, format!("unknown team {name:?}")))
        };

        let mut matches = Vec::with_capacity(file.matches.len());
        for (i, m) in file.matches.iter().enumerate() {
            let p = format!("matches[{i}]");
            if m.round == 0 {
                return Err(lines.err(&format!("{p}.round"), "rounds start at 1"));
            }
            let first = team(&format!("{p}.first"), &m.first)?;
            let second = team(&format!("{p}.second"), &m.second)?;
            if first == second {
                return Err(lines.err(&p, "a team cannot play itself"));
            }
            let (record, players) = match (&m.boards, m.forfeited_by) {
                (Some(_), Some(_)) => {
                    return Err(
                        lines.err(&p, "give either \"boards\" or \"forfeited_by\", not both")
                    );
                }
                (None, None) => {
                    return Err(lines.err(
                        &p,
                        "needs \"boards\" (played) or \"forfeited_by\" (whole-match forfeit)",
                    ));
                }
                (None, Some(f)) => (
                    match f {
                        ForfeitJson::First => MatchRecord::Forfeit {
                            forfeited_by: Side::First,
                        },
                        ForfeitJson::Second => MatchRecord::Forfeit {
                            forfeited_by: Side::Second,
                        },
                        ForfeitJson::Both => MatchRecord::DoubleForfeit,
                    },
                    vec![(String::new(), String::new()); file.boards as usize],
                ),
                (Some(boards), None) => {
                    if boards.len() as u32 != file.boards {
                        return Err(lines.err(
                            &format!("{p}.boards"),
                            format!(
                                "{} boards given, the event has {}",
                                boards.len(),
                                file.boards
                            ),
                        ));
                    }
                    let mut recs = Vec::with_capacity(boards.len());
                    let mut players = Vec::with_capacity(boards.len());
                    for (j, b) in boards.iter().enumerate() {
                        let bp = format!("{p}.boards[{j}]");
                        recs.push(parse_board(&lines, &bp, &rules.chain, j as u32 + 1, b)?);
                        players.push((
                            b.first_player.clone().unwrap_or_default(),
                            b.second_player.clone().unwrap_or_default(),
                        ));
                    }
                    (MatchRecord::Played(recs), players)
                }
            };
            let result = evaluate_match(&rules, &record).map_err(|e| lines.err(&p, e))?;
            matches.push(ParsedMatch {
                round: m.round,
                table: m.table,
                date: m.date.clone().unwrap_or_default(),
                first,
                second,
                players,
                result,
            });
        }
        let mut byes = Vec::new();
        for (i, b) in file.byes.iter().enumerate() {
            let p = format!("byes[{i}]");
            if file.system == SystemJson::RoundRobin {
                return Err(lines.err(
                    &p,
                    "byes are only recorded in a Swiss (round-robin byes score nothing)",
                ));
            }
            byes.push((b.round, team(&format!("{p}.team"), &b.team)?));
        }
        let mut penalties = Vec::new();
        for (i, pj) in file.penalties.iter().enumerate() {
            let _ = (&pj.round, &pj.note);
            penalties.push(Penalty {
                team: team(&format!("penalties[{i}].team"), &pj.team)?,
                kind: match pj.kind {
                    PenaltyKindJson::Warning => PenaltyKind::Warning,
                    PenaltyKindJson::Disqualification => PenaltyKind::Disqualification,
                },
            });
        }
        let mut withdrawals = Vec::new();
        let mut withdrawn = BTreeMap::new();
        for (i, w) in file.withdrawals.iter().enumerate() {
            let p = format!("withdrawals[{i}]");
            let t = team(&format!("{p}.team"), &w.team)?;
            if withdrawn.insert(t, ()).is_some() {
                return Err(lines.err(&p, format!("team {:?} withdraws twice", w.team)));
            }
            withdrawals.push(Withdrawal {
                team: t,
                after_round: w.after_round,
            });
        }
        Ok(Season {
            event: file.event,
            system,
            criteria,
            criteria_label,
            rules,
            teams,
            units,
            matches,
            byes,
            penalties,
            withdrawals,
            lines,
        })
    }

    fn standings(&self) -> Result<Standings> {
        standings(StandingsInput {
            team_count: self.teams.len(),
            system: self.system,
            rules: &self.rules,
            criteria: &self.criteria,
            matches: self
                .matches
                .iter()
                .map(|m| TeamMatch {
                    round: m.round,
                    first: m.first,
                    second: m.second,
                    result: m.result.clone(),
                })
                .collect(),
            byes: self.byes.clone(),
            penalties: self.penalties.clone(),
            withdrawals: self.withdrawals.clone(),
        })
        .map_err(|e| self.standings_error(e))
    }

    /// A library error, with team names, the offending match's path and its line.
    fn standings_error(&self, e: StandingsError) -> anyhow::Error {
        let name = |t: usize| {
            self.teams
                .get(t)
                .map_or_else(|| t.to_string(), |n| format!("{n:?}"))
        };
        // The last match (in file order) satisfying `f`, as a path.
        let find = |f: &dyn Fn(&ParsedMatch) -> bool| {
            self.matches
                .iter()
                .rposition(f)
                .map_or_else(|| "matches".to_string(), |i| format!("matches[{i}]"))
        };
        match e {
            StandingsError::TwiceInRound { team, round } => {
                let in_matches = self
                    .matches
                    .iter()
                    .filter(|m| m.round == round && (m.first == team || m.second == team))
                    .count();
                let path = if in_matches >= 2 {
                    find(&|m| m.round == round && (m.first == team || m.second == team))
                } else {
                    self.byes
                        .iter()
                        .position(|&(r, t)| r == round && t == team)
                        .map_or_else(|| "byes".to_string(), |i| format!("byes[{i}]"))
                };
                self.lines.err(
                    &path,
                    format!("team {} plays more than once in round {round}", name(team)),
                )
            }
            StandingsError::TooManyMeetings { a, b, times, legs } => {
                let path =
                    find(&|m| (m.first == a && m.second == b) || (m.first == b && m.second == a));
                self.lines.err(
                    &path,
                    format!("teams {} and {} meet {times} times; a {legs}-leg round robin allows {legs}", name(a), name(b)),
                )
            }
            StandingsError::AfterWithdrawal {
                team,
                after_round,
                round,
            } => {
                let path = find(&|m| m.round == round && (m.first == team || m.second == team));
                self.lines.err(
                    &path,
                    format!(
                        "team {} withdrew after round {after_round} but plays in round {round}",
                        name(team)
                    ),
                )
            }
            other => anyhow!("{other}"),
        }
    }

    /// Pairs the next Swiss round.
    fn pair(&self, a: &PairArgs) -> Result<String> {
        if self.system != System::Swiss {
            bail!(
                "pair is for a Swiss (\"system\": \"swiss\"); a round robin's rounds come from `chuhe league schedule`"
            );
        }
        let last = self
            .matches
            .iter()
            .map(|m| m.round)
            .chain(self.byes.iter().map(|b| b.0))
            .max()
            .unwrap_or(0);
        let bye_points = evaluate_match(
            &self.rules,
            &MatchRecord::Forfeit {
                forfeited_by: Side::Second,
            },
        )?
        .match_points[0];
        let mut rounds = Vec::with_capacity(last as usize);
        for r in 1..=last {
            let pairings: Vec<_> = self
                .matches
                .iter()
                .filter(|m| m.round == r)
                .map(|m| (m.first, m.second, m.result.match_points))
                .collect();
            let byes: Vec<usize> = self.byes.iter().filter(|b| b.0 == r).map(|b| b.1).collect();
            if pairings.is_empty() && byes.is_empty() {
                bail!("round {r} has no matches: Swiss rounds must be recorded in order");
            }
            if byes.len() > 1 {
                bail!(
                    "round {r} has {} byes; a Swiss round has at most one",
                    byes.len()
                );
            }
            rounds.push(SwissRound {
                pairings,
                bye: byes.first().map(|&t| (t, bye_points)),
            });
        }
        let withdrawn: Vec<usize> = self.withdrawals.iter().map(|w| w.team).collect();
        let teams: Vec<SwissTeam> = self
            .units
            .iter()
            .enumerate()
            .map(|(i, u)| SwissTeam {
                seed: i as u32 + 1,
                unit: u.clone(),
                withdrawn: withdrawn.contains(&i),
            })
            .collect();
        let options = SwissOptions {
            split: match a.split {
                SplitArg::OddEven => FirstRoundSplit::OddEven,
                SplitArg::TopBottom => FirstRoundSplit::TopBottom,
            },
            avoid_same_unit_in_round_1: !a.no_unit_avoidance,
            upper_moves_first_on_table_1: matches!(a.lot, LotArg::Upper),
        };
        let p = pair_next_round(&teams, &rounds, options).map_err(|e| anyhow!("{e}"))?;
        let round = last + 1;
        Ok(match a.format {
            ScheduleFormat::Json => {
                let j = PairOut {
                    round,
                    pairings: p
                        .tables
                        .iter()
                        .map(|&(x, y)| [x as u32 + 1, y as u32 + 1])
                        .collect(),
                    names: p
                        .tables
                        .iter()
                        .map(|&(x, y)| [self.teams[x].clone(), self.teams[y].clone()])
                        .collect(),
                    bye: p.bye.map(|b| b as u32 + 1),
                    bye_name: p.bye.map(|b| self.teams[b].clone()),
                };
                let mut s = serde_json::to_string(&j)?;
                s.push('\n');
                s
            }
            ScheduleFormat::Table => {
                let mut s = format!("Round {round}\n");
                for (k, &(x, y)) in p.tables.iter().enumerate() {
                    s.push_str(&format!(
                        "  table {}: {} ({}) - {} ({})\n",
                        k + 1,
                        self.teams[x],
                        x + 1,
                        self.teams[y],
                        y + 1
                    ));
                }
                if let Some(b) = p.bye {
                    s.push_str(&format!("  bye: {} ({})\n", self.teams[b], b + 1));
                }
                s
            }
        })
    }

    fn sheets(&self, round: Option<u32>) -> Result<Vec<ScoreSheet>> {
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

    fn standings_json(&self, table: &Standings, boards: Option<u32>) -> StandingsOut {
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
                })
                .collect(),
            generated_forfeits: table
                .generated_forfeits
                .iter()
                .map(|&(w, x)| ForfeitOut {
                    winner: self.teams[w].clone(),
                    withdrawn: self.teams[x].clone(),
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

    fn standings_text(&self, table: &Standings, boards: Option<u32>) -> String {
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
            match r.withdrawal {
                Some(WithdrawalEffect::Annulled) => {
                    extra.push("withdrew; results annulled (20.3)".to_string())
                }
                Some(WithdrawalEffect::ResultsStand) => {
                    extra.push("withdrew; results stand".to_string())
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
            for &(w, x) in &table.generated_forfeits {
                out.push_str(&format!("  {} + : - {}\n", self.teams[w], self.teams[x]));
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
}

fn parse_chain(lines: &Lines, c: Option<&ChainJson>) -> Result<ResultChain> {
    let Some(c) = c else {
        return Ok(ResultChain::single(time_control(
            lines,
            "result_chain",
            "standard",
        )?));
    };
    let basis = match c.count_basis.as_deref() {
        None | Some("first_stage") => CountBasis::FirstStage,
        Some("deciding_game") => CountBasis::DecidingGame,
        Some(other) => {
            return Err(lines.err(
                "result_chain.count_basis",
                format!("unknown {other:?} (use \"first_stage\" or \"deciding_game\")"),
            ));
        }
    };
    match (&c.preset, &c.stages) {
        (Some(_), Some(_)) => {
            Err(lines.err("result_chain", "give \"preset\" or \"stages\", not both"))
        }
        (None, None) => Err(lines.err("result_chain", "needs \"preset\" or \"stages\"")),
        (Some(p), None) => {
            let mut chain = match p.as_str() {
                "single" => ResultChain::single(time_control(
                    lines,
                    "result_chain.time_control",
                    c.time_control.as_deref().unwrap_or("standard"),
                )?),
                "slow-fast-armageddon" => {
                    let tcs = c
                        .time_controls
                        .clone()
                        .unwrap_or_else(|| vec!["slow".into(), "fast".into(), "armageddon".into()]);
                    if tcs.len() != 3 {
                        return Err(lines.err(
                            "result_chain.time_controls",
                            "needs 3 time controls: slow, fast, armageddon",
                        ));
                    }
                    ResultChain::slow_fast_armageddon(
                        time_control(lines, "result_chain.time_controls[0]", &tcs[0])?,
                        time_control(lines, "result_chain.time_controls[1]", &tcs[1])?,
                        time_control(lines, "result_chain.time_controls[2]", &tcs[2])?,
                    )
                }
                other => {
                    return Err(lines.err(
                        "result_chain.preset",
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
                let p = format!("result_chain.stages[{i}]");
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
            ResultChain::new(out, basis).map_err(|e| lines.err("result_chain.stages", e))
        }
    }
}

fn parse_board(
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

// ---------------------------------------------------------------------------------------------
// output

#[derive(Serialize)]
struct PairOut {
    round: u32,
    /// `[first, second]` draw numbers (1-based, team order in the file); first moves first.
    pairings: Vec<[u32; 2]>,
    names: Vec<[String; 2]>,
    bye: Option<u32>,
    bye_name: Option<String>,
}

#[derive(Serialize)]
struct StandingsOut {
    event: String,
    system: &'static str,
    ranking: String,
    criteria: Vec<&'static str>,
    rows: Vec<RowOut>,
    generated_forfeits: Vec<ForfeitOut>,
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

/// Display width: CJK and other wide characters take two columns.
fn width(s: &str) -> usize {
    s.chars()
        .map(|c| {
            let u = c as u32;
            let wide = (0x1100..=0x115F).contains(&u)
                || (0x2E80..=0xA4CF).contains(&u)
                || (0xAC00..=0xD7A3).contains(&u)
                || (0xF900..=0xFAFF).contains(&u)
                || (0xFE30..=0xFE4F).contains(&u)
                || (0xFF00..=0xFF60).contains(&u)
                || (0xFFE0..=0xFFE6).contains(&u)
                || (0x20000..=0x3FFFD).contains(&u);
            if wide { 2 } else { 1 }
        })
        .sum()
}

/// Aligned columns; `left` lists the left-aligned columns (the rest align right).
fn render_table(header: &[String], rows: &[Vec<String>], left: &[usize]) -> String {
    let cols = header.len();
    let mut w = vec![0usize; cols];
    for r in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        for (i, c) in r.iter().enumerate().take(cols) {
            w[i] = w[i].max(width(c));
        }
    }
    let mut out = String::new();
    for r in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate().take(cols) {
            let pad = " ".repeat(w[i] - width(c));
            if i > 0 {
                line.push_str("  ");
            }
            if left.contains(&i) || i + 1 == cols {
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
    out
}

/// The line on which each JSON value starts, by path (`matches[0].boards[1]`). The text has
/// already been parsed by serde_json, so this scanner only needs to follow valid JSON; on
/// anything unexpected it stops and returns what it has.
fn json_lines(text: &str) -> BTreeMap<String, usize> {
    struct Scan<'a> {
        b: &'a [u8],
        i: usize,
        line: usize,
        out: BTreeMap<String, usize>,
    }
    impl Scan<'_> {
        fn ws(&mut self) {
            while let Some(&c) = self.b.get(self.i) {
                match c {
                    b'\n' => {
                        self.line += 1;
                        self.i += 1;
                    }
                    b' ' | b'\t' | b'\r' => self.i += 1,
                    _ => break,
                }
            }
        }
        fn string(&mut self) -> Option<String> {
            if self.b.get(self.i) != Some(&b'"') {
                return None;
            }
            self.i += 1;
            let start = self.i;
            while let Some(&c) = self.b.get(self.i) {
                match c {
                    b'\\' => self.i += 2,
                    b'"' => {
                        let s = String::from_utf8_lossy(&self.b[start..self.i]).into_owned();
                        self.i += 1;
                        return Some(s);
                    }
                    _ => self.i += 1,
                }
            }
            None
        }
        fn value(&mut self, path: &str, depth: usize) -> Option<()> {
            if depth > 128 {
                return None;
            }
            self.ws();
            self.out.insert(path.to_string(), self.line);
            match *self.b.get(self.i)? {
                b'{' => {
                    self.i += 1;
                    loop {
                        self.ws();
                        match *self.b.get(self.i)? {
                            b'}' => {
                                self.i += 1;
                                return Some(());
                            }
                            b',' => self.i += 1,
                            _ => {
                                let key_line = self.line;
                                let key = self.string()?;
                                let p = if path.is_empty() {
                                    key
                                } else {
                                    format!("{path}.{key}")
                                };
                                self.ws();
                                if self.b.get(self.i) != Some(&b':') {
                                    return None;
                                }
                                self.i += 1;
                                self.value(&p, depth + 1)?;
                                // Point errors about a field at its key's line.
                                self.out.insert(p, key_line);
                            }
                        }
                    }
                }
                b'[' => {
                    self.i += 1;
                    let mut n = 0;
                    loop {
                        self.ws();
                        match *self.b.get(self.i)? {
                            b']' => {
                                self.i += 1;
                                return Some(());
                            }
                            b',' => self.i += 1,
                            _ => {
                                self.value(&format!("{path}[{n}]"), depth + 1)?;
                                n += 1;
                            }
                        }
                    }
                }
                b'"' => self.string().map(|_| ()),
                _ => {
                    while let Some(&c) = self.b.get(self.i) {
                        if matches!(c, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                            break;
                        }
                        self.i += 1;
                    }
                    Some(())
                }
            }
        }
    }
    let mut s = Scan {
        b: text.as_bytes(),
        i: 0,
        line: 1,
        out: BTreeMap::new(),
    };
    let _ = s.value("", 0);
    s.out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_track_paths() {
        let text = "{\n  \"a\": 1,\n  \"m\": [\n    {\"x\": \"q\\\"[\"},\n    {\n      \"y\": [true]\n    }\n  ]\n}\n";
        let l = json_lines(text);
        assert_eq!(l.get("a"), Some(&2));
        assert_eq!(l.get("m[0]"), Some(&4));
        assert_eq!(l.get("m[1]"), Some(&5));
        assert_eq!(l.get("m[1].y"), Some(&6));
        assert_eq!(l.get("m[1].y[0]"), Some(&6));
    }

    #[test]
    fn widths() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("场分"), 4);
    }
}
