//! The command line of `chuhe league`.

use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

/// League tools: schedules, standings, crosstables, score sheets, Swiss pairings, knockout
/// brackets and Elo rating lists, from results files (JSON; see crates/league/README.md); and
/// `event`: a league run on a server (docs/league.md).
#[derive(Debug, Args)]
pub struct LeagueArgs {
    #[command(subcommand)]
    pub(super) command: LeagueCommand,
}

#[derive(Debug, Subcommand)]
pub(super) enum LeagueCommand {
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
    /// Knockout bracket after the matches played: ties decided, the next round, third place.
    Knockout(KnockoutArgs),
    /// Rate the players of a results file (Elo): rating list with K, score, expectation, performance.
    Elo(EloArgs),
    /// A running server's league service: create an event from its file (TOML/JSON, rosters
    /// from CSV), publish, tokens, reschedule, lineups, arbiters' commands, standings, sheets.
    Event(super::event::EventArgs),
}

#[derive(Debug, Args)]
pub(super) struct KnockoutArgs {
    /// Results file of a knockout (`"system": "knockout"`); `-` reads standard input. Team
    /// order = seeds (seed 1 strongest).
    pub(super) file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ScheduleFormat::Json)]
    pub(super) format: ScheduleFormat,
}

#[derive(Debug, Args)]
pub(super) struct EloArgs {
    /// Results file (JSON); `-` reads standard input. Players are the boards' player names;
    /// only games of rated stages count (the slow game of the 象甲 chain).
    pub(super) file: PathBuf,
    /// Ratings before the event: CSV lines `name,rating[,games]` (header optional, empty rating
    /// = unrated). Without it everybody starts unrated.
    #[arg(long)]
    pub(super) ratings: Option<PathBuf>,
    /// K factor: `fide` (40 below 30 games, 20 below 2400, else 10) or one number for everybody.
    #[arg(long, default_value = "fide")]
    pub(super) k: String,
    /// First ratings for unrated players: `performance` (from their games against rated
    /// players, with --min-games), `none`, or a starting rating such as `1500`.
    #[arg(long, default_value = "performance")]
    pub(super) initial: String,
    /// Games against rated players needed for a first rating by performance.
    #[arg(long, default_value_t = 5)]
    pub(super) min_games: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub(super) format: OutFormat,
    /// Label language of text, csv and html.
    #[arg(long, value_enum, default_value_t = LangArg::Zh)]
    pub(super) lang: LangArg,
    /// Start the CSV with a UTF-8 byte order mark.
    #[arg(long)]
    pub(super) bom: bool,
}

#[derive(Debug, Args)]
pub(super) struct BracketArgs {
    /// Number of seeded teams (2–1000); seed 1 is the strongest. Top seeds get the byes.
    #[arg(long)]
    pub(super) teams: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ScheduleFormat::Json)]
    pub(super) format: ScheduleFormat,
}

#[derive(Debug, Args)]
pub(super) struct PairArgs {
    /// Results file of a Swiss (JSON); `-` reads standard input. Team order = draw numbers.
    pub(super) file: PathBuf,
    /// Round 1: how draw numbers split into halves.
    #[arg(long, value_enum, default_value_t = SplitArg::OddEven)]
    pub(super) split: SplitArg,
    /// Round 1: do not keep teams of the same unit apart.
    #[arg(long)]
    pub(super) no_unit_avoidance: bool,
    /// Round 1, the lot: which half moves first on table 1 (colours then alternate by table).
    #[arg(long, value_enum, default_value_t = LotArg::Upper)]
    pub(super) lot: LotArg,
    /// The organiser's pairing instead of the engine's: tables as draw numbers, first moving
    /// first, e.g. `2-1,5-3`. Checked (every team once, no rematch, colour limits); logged.
    #[arg(long = "override", value_name = "TABLES")]
    pub(super) r#override: Option<String>,
    /// With --override: the draw number given the bye.
    #[arg(long, requires = "override")]
    pub(super) bye: Option<String>,
    /// With --override: why (required; printed in the log line).
    #[arg(long, requires = "override")]
    pub(super) reason: Option<String>,
    /// With --override: who decided.
    #[arg(long, requires = "override", default_value = "organiser")]
    pub(super) by: String,
    /// With --override: accept a rematch, a colour-limit breach or a second bye knowingly (it
    /// is logged); without it such an override is refused.
    #[arg(long, requires = "override")]
    pub(super) allow_problems: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ScheduleFormat::Json)]
    pub(super) format: ScheduleFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(super) enum SplitArg {
    /// 1–2, 3–4, … (odd numbers upper half).
    OddEven,
    /// 1–(n/2+1), 2–(n/2+2), … .
    TopBottom,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(super) enum LotArg {
    /// The upper-half team moves first on table 1.
    Upper,
    /// The lower-half team moves first on table 1.
    Lower,
}

#[derive(Debug, Args)]
pub(super) struct ScheduleArgs {
    /// Number of teams (2–1000). With an odd number one team has a bye each round.
    #[arg(long)]
    pub(super) teams: u32,
    /// Double round robin: the second leg repeats the first with colours swapped (13.2).
    #[arg(long)]
    pub(super) double: bool,
    /// With --double: exchange the last two rounds of the first leg (FIDE's recommendation, so
    /// nobody has three games in a row with the same colour).
    #[arg(long, requires = "double")]
    pub(super) swap_last_two: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = RoundRobinFormat::Json)]
    pub(super) format: RoundRobinFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(super) enum RoundRobinFormat {
    /// The rounds alone: `[[[first,second],…],…]` (1-based; first = Red on board 1).
    Json,
    /// The rounds with their byes: `{"teams":N,"legs":L,"rounds":[…],"byes":[null|n,…]}`.
    JsonFull,
    /// One line per round: `Round 1: 1-4, 2-3`.
    Table,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(super) enum ScheduleFormat {
    /// JSON.
    Json,
    /// One line per round: `Round 1: 1-4, 2-3`.
    Table,
}

#[derive(Debug, Args)]
pub(super) struct StandingsArgs {
    /// Results file (JSON, see crates/league/README.md); `-` reads standard input.
    pub(super) file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub(super) format: OutFormat,
    /// Also print per-board tables (board prizes).
    #[arg(long)]
    pub(super) boards: bool,
    /// Minimum games on a board to be eligible for its board prize (with --boards).
    #[arg(long, default_value_t = 1, requires = "boards")]
    pub(super) min_board_games: u32,
    /// Also print the crosstable (text, csv, html): the round-robin grid of 局分 per meeting, or
    /// a Swiss's opponents round by round.
    #[arg(long)]
    pub(super) crosstable: bool,
    /// Label language of text, csv and html (names are printed as given).
    #[arg(long, value_enum, default_value_t = LangArg::Zh)]
    pub(super) lang: LangArg,
    /// Start the CSV with a UTF-8 byte order mark, so Excel and WPS keep the Chinese intact.
    #[arg(long)]
    pub(super) bom: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(super) enum OutFormat {
    /// Machine-readable JSON (the rows; a contract).
    Json,
    /// Aligned text tables.
    Text,
    /// CSV: one section per table, each under its title line.
    Csv,
    /// A printable HTML page (A4).
    Html,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(super) enum LangArg {
    /// Chinese labels (中文).
    Zh,
    /// English labels.
    En,
}

impl LangArg {
    pub(super) fn lang(self) -> chuhe_league::text::Lang {
        match self {
            LangArg::Zh => chuhe_league::text::Lang::Zh,
            LangArg::En => chuhe_league::text::Lang::En,
        }
    }
}

#[derive(Debug, Args)]
pub(super) struct SheetArgs {
    /// Results file (JSON); `-` reads standard input.
    pub(super) file: PathBuf,
    /// Only the matches of this round. A round the file has no matches for, but whose
    /// fixtures the file's "schedule" gives, prints blank sheets from the schedule.
    #[arg(long)]
    pub(super) round: Option<u32>,
    /// Only the match on this table (桌次) of the round (with --round).
    #[arg(long, requires = "round")]
    pub(super) table: Option<u32>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = SheetFormat::Csv)]
    pub(super) format: SheetFormat,
    /// Label language of html and form-csv.
    #[arg(long, value_enum, default_value_t = LangArg::Zh)]
    pub(super) lang: LangArg,
    /// Blank sheets: names, boards and colours filled in, no results (matches marked
    /// "pending" in the file are always blank).
    #[arg(long)]
    pub(super) blank: bool,
    /// Start the data CSV with a UTF-8 byte order mark (form-csv always has one).
    #[arg(long)]
    pub(super) bom: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(super) enum SheetFormat {
    /// Data CSV (RFC 4180), one line per board, English column names (a contract).
    Csv,
    /// Printable HTML, one A4 page (landscape) per match: the 计分表 form.
    Html,
    /// The 计分表 form as CSV for Excel/WPS (UTF-8 with BOM), one block per match.
    FormCsv,
}

#[cfg(test)]
mod tests {
    use super::LeagueArgs;
    use clap::{Args, Command};

    /// `chuhe league --help` lists every subcommand with a one-line description, and every
    /// argument of every subcommand is described — down to `chuhe league event command …`.
    #[test]
    fn every_subcommand_and_flag_is_described() {
        let cmd = LeagueArgs::augment_args(Command::new("league"));
        assert!(cmd.get_subcommands().count() >= 8);
        let mut checked = 0;
        let mut todo: Vec<(String, &Command)> = cmd
            .get_subcommands()
            .map(|c| (c.get_name().to_string(), c))
            .collect();
        while let Some((path, sub)) = todo.pop() {
            checked += 1;
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            assert!(!about.is_empty(), "{path} has no description");
            assert!(!about.contains('\n'), "{path}: one line");
            for arg in sub.get_arguments() {
                if arg.get_id() == "help" {
                    continue;
                }
                assert!(
                    arg.get_help().is_some_and(|h| !h.to_string().is_empty()),
                    "{path} {} has no description",
                    arg.get_id()
                );
            }
            todo.extend(
                sub.get_subcommands()
                    .filter(|c| c.get_name() != "help")
                    .map(|c| (format!("{path} {}", c.get_name()), c)),
            );
        }
        assert!(checked >= 25, "{checked} commands");
    }
}
