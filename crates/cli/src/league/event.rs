//! `chuhe league event …`: the organizer's operations on a running server's league service
//! (docs/league.md), as a thin client of its HTTP API — create an event from its file (TOML
//! or JSON, rosters merged from CSV), publish, issue tokens, reschedule, submit a lineup, an
//! arbiter's command, and the reads (standings, a match, a score sheet, the log, the export).
//! `check` runs the server's own checks of an event file offline. A refusal prints the
//! server's `code: message` as one line and exits non-zero.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use chuhe_league_core::file::parse_event_file;
use chuhe_league_core::spec::{EventSpec, SpecError};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};

use super::client::{self, Server};

/// The organizer's league operations against a running server (`chuhe serve`), and `check`
/// offline. See docs/league.md.
#[derive(Debug, Args)]
pub struct EventArgs {
    /// The server: http://HOST:PORT (its plain HTTP address).
    #[arg(
        long,
        env = "CHUHE_SERVER",
        default_value = "http://127.0.0.1:8080",
        global = true
    )]
    server: String,
    /// Bearer token: the organizer's for create, publish, tokens and reschedule; a captain's for
    /// its lineup; an arbiter's for commands; none needed for reads.
    #[arg(long, env = "CHUHE_TOKEN", global = true, hide_env_values = true)]
    token: Option<String>,
    /// Seconds to wait for the server's answer.
    #[arg(long, default_value_t = 60, global = true)]
    timeout: u64,
    #[command(subcommand)]
    command: EventCommand,
}

#[derive(Debug, Subcommand)]
enum EventCommand {
    /// Check an event file (and roster CSV) as the server would, offline; print the JSON that
    /// `create` sends.
    Check(FileArgs),
    /// Create an event from its file (POST /api/v1/leagues); prints the new league.
    Create(FileArgs),
    /// List the server's leagues.
    List,
    /// A league: settings, teams, rounds with their matches (a captain's token also shows its
    /// own sealed lineups).
    Show {
        /// The league's id, as `list` shows it.
        league: String,
    },
    /// Publish: fix the fixtures and open lineups.
    Publish {
        /// The league's id, as `list` shows it.
        league: String,
    },
    /// Issue tokens to the event's captains, players and arbiters (printed once).
    Tokens {
        /// The league's id, as `list` shows it.
        league: String,
        /// Whose: captains, players, arbiters or all.
        #[arg(long = "for", value_enum, default_value_t = TokensFor::All)]
        r#for: TokensFor,
        /// Only this team's people (0-based index in the event file).
        #[arg(long)]
        team: Option<usize>,
    },
    /// Move a round that has not started (times: RFC 3339 or Unix ms).
    Reschedule {
        /// The league's id, as `list` shows it.
        league: String,
        /// The round (1-based).
        #[arg(long)]
        round: u32,
        /// The new start, e.g. 2027-03-13T14:00:00+08:00.
        #[arg(long)]
        start: String,
        /// The new lineup deadline [default: the event's `lineup.deadline_before` before the
        /// start].
        #[arg(long)]
        lineup_deadline: Option<String>,
    },
    /// Submit (or replace) a team's lineup for a match, in board order (a captain's token).
    Lineup {
        /// The league's id, as `list` shows it.
        league: String,
        /// The round (1-based).
        #[arg(long)]
        round: u32,
        /// The match: its table in the round (1-based, as `show` lists them).
        #[arg(long)]
        table: u32,
        /// The team (0-based index in the event file).
        #[arg(long)]
        team: usize,
        /// The players' names as registered, board 1 first.
        #[arg(required = true)]
        players: Vec<String>,
    },
    /// An arbiter's (or the organizer's) command; arbiters' decisions need --reason.
    Command {
        /// The league's id, as `list` shows it.
        league: String,
        /// Why (mandatory for an arbiter's decision; kept in the log with who and when).
        #[arg(long, global = true)]
        reason: Option<String>,
        #[command(subcommand)]
        command: ArbiterCommand,
    },
    /// Team standings with the criterion that decided each rank, and the crosstable.
    Standings {
        /// The league's id, as `list` shows it.
        league: String,
        /// An event in stages: this stage's (default: the stage being played).
        #[arg(long)]
        stage: Option<u32>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Label language.
        #[arg(long, value_enum, default_value_t = Lang::Zh)]
        lang: Lang,
    },
    /// The players' results per board (台次成绩), one table per board.
    Boards {
        /// The league's id, as `list` shows it.
        league: String,
        /// Games a player needs on a board to be ranked in its table.
        #[arg(long, default_value_t = 0)]
        min_games: u32,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Label language.
        #[arg(long, value_enum, default_value_t = Lang::Zh)]
        lang: Lang,
    },
    /// The event's Elo rating list (FIDE's K bands; the roster's ratings and rated games;
    /// first ratings from performance).
    Elo {
        /// The league's id, as `list` shows it.
        league: String,
        /// Rated games an unrated player needs for a first rating.
        #[arg(long, default_value_t = 5)]
        min_games: u32,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Label language.
        #[arg(long, value_enum, default_value_t = Lang::Zh)]
        lang: Lang,
    },
    /// A match: lineups (once revealed), every board's games and results, the score.
    Match {
        /// The league's id, as `list` shows it.
        league: String,
        /// The round (1-based).
        #[arg(long)]
        round: u32,
        /// The match: its table in the round (1-based, as `show` lists them).
        #[arg(long)]
        table: u32,
    },
    /// A match's score sheet (计分表), blank of names until the lineups are revealed.
    Sheet {
        /// The league's id, as `list` shows it.
        league: String,
        /// The round (1-based).
        #[arg(long)]
        round: u32,
        /// The match: its table in the round (1-based, as `show` lists them).
        #[arg(long)]
        table: u32,
        /// Output format.
        #[arg(long, value_enum, default_value_t = SheetFormat::Html)]
        format: SheetFormat,
        /// Label language.
        #[arg(long, value_enum, default_value_t = Lang::Zh)]
        lang: Lang,
    },
    /// The whole log (organizer and the event's arbiters): every entry with who, when, why.
    Log {
        /// The league's id, as `list` shows it.
        league: String,
    },
    /// The results so far as a `chuhe league` results file (standings, sheets, Elo offline).
    Export {
        /// The league's id, as `list` shows it.
        league: String,
        /// An event in stages: this stage, as its own results file (default 1).
        #[arg(long)]
        stage: Option<u32>,
    },
}

#[derive(Debug, Args)]
struct FileArgs {
    /// The event file: TOML (`.toml`) or JSON (anything else; `-` reads standard input).
    file: PathBuf,
    /// Rosters from CSV merged into the file first (columns team,name,role,tags,rating,unit:
    /// docs/league.md).
    #[arg(long)]
    roster: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum ArbiterCommand {
    /// Forfeit a whole match (21.4).
    ForfeitMatch {
        /// The round (1-based).
        #[arg(long)]
        round: u32,
        /// The match: its table in the round (1-based, as `show` lists them).
        #[arg(long)]
        table: u32,
        /// Who forfeits.
        #[arg(long, value_enum)]
        by: ForfeitBy,
    },
    /// Set or correct a board's result: its games in order (`--game COLOUR:RESULT`), or a
    /// forfeit (`--forfeit first|second|both`).
    SetBoard {
        #[command(flatten)]
        at: BoardAt,
        /// A game of the chain: the first-listed team's colour and the result from the first
        /// team's view, e.g. `red:draw`, `black:first`, `red:second:1,0` (fouls first,second).
        #[arg(
            long = "game",
            value_name = "COLOUR:RESULT[:FOULS]",
            conflicts_with = "forfeit"
        )]
        games: Vec<String>,
        /// The board is forfeited by this side.
        #[arg(long, value_enum)]
        forfeit: Option<ForfeitBy>,
    },
    /// Order a board played again (its games so far no longer count).
    ReplayBoard {
        #[command(flatten)]
        at: BoardAt,
    },
    /// A team withdraws (20.3) after a round, or is expelled (18.3 除名).
    Withdraw {
        /// The team (0-based index in the event file).
        #[arg(long)]
        team: usize,
        /// The last round it played (0: before the first).
        #[arg(long)]
        after_round: u32,
        /// Expelled (18.3 除名) rather than withdrawn.
        #[arg(long)]
        expelled: bool,
    },
    /// Pair the next Swiss round now (organizer).
    PairNextRound,
    /// Begin the next stage of an event in stages now that the current one is complete
    /// (organizer): seeded by the standings, or these teams in seed order (`--team 3 --team 1`).
    StartNextStage {
        /// A team of the next stage (0-based index in the event file), seed 1 first.
        #[arg(long = "team")]
        teams: Vec<usize>,
    },
    /// Any command as the API's JSON, e.g. '{"command":"publish"}'.
    Raw {
        /// The body, e.g. '{"command":"withdraw","team":2,"after_round":3}'.
        json: String,
    },
}

/// A board: `--round R --table T --board B` (all 1-based).
#[derive(Debug, Args)]
struct BoardAt {
    /// The round (1-based).
    #[arg(long)]
    round: u32,
    /// The match: its table in the round (1-based, as `show` lists them).
    #[arg(long)]
    table: u32,
    /// The board (1-based).
    #[arg(long)]
    board: u32,
}

impl BoardAt {
    fn json(&self) -> Value {
        json!({"round": self.round, "table": self.table, "board": self.board})
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum TokensFor {
    Captains,
    Players,
    Arbiters,
    All,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ForfeitBy {
    First,
    Second,
    Both,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
    Csv,
    Html,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SheetFormat {
    Html,
    Csv,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Lang {
    Zh,
    En,
}

fn value_name<T: ValueEnum>(v: T) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

/// Reads an event file (TOML or JSON) and merges a roster CSV into it.
pub fn load(file: &Path, roster: Option<&Path>) -> Result<EventSpec> {
    let text = super::read_input(file)?;
    let is_toml = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    let mut spec = parse_event_file(&text, Some(if is_toml { "toml" } else { "json" })).map_err(
        |e| match (is_toml, e.line, e.column) {
            // serde_json's message says where itself; TOML's is placed the same way.
            (true, Some(l), Some(c)) => anyhow!("{}: {e} at line {l} column {c}", file.display()),
            _ => anyhow!("{}: {e}", file.display()),
        },
    )?;
    if let Some(r) = roster {
        let csv = super::read_input(r)?;
        super::roster::merge(&mut spec, &csv, &r.display().to_string())?;
    }
    Ok(spec)
}

/// The server's checks of an event file: its rules and its round times.
pub fn check(spec: &EventSpec) -> Result<(), SpecError> {
    chuhe_league_core::file::check(spec).map(|_| ())
}

fn id_path(league: &str) -> Result<String> {
    if league.is_empty() || !league.bytes().all(|b| b.is_ascii_digit()) {
        bail!("league id {league:?}: a number, as `chuhe league event list` shows");
    }
    Ok(format!("/api/v1/leagues/{league}"))
}

fn parse_game(s: &str) -> Result<Value> {
    let bad = || {
        anyhow!(
            "--game {s:?}: COLOUR:RESULT[:FOULS] with COLOUR red|black (the first team's), \
             RESULT first|second|draw|both_lose, FOULS first,second (e.g. red:draw, black:first:0,1)"
        )
    };
    let mut parts = s.split(':');
    let colour = parts.next().ok_or_else(bad)?;
    let result = parts.next().ok_or_else(bad)?;
    if !matches!(colour, "red" | "black")
        || !matches!(result, "first" | "second" | "draw" | "both_lose")
    {
        return Err(bad());
    }
    let fouls = match parts.next() {
        None => [0, 0],
        Some(f) => {
            let (a, b) = f.split_once(',').ok_or_else(bad)?;
            [
                a.trim().parse::<u32>().map_err(|_| bad())?,
                b.trim().parse::<u32>().map_err(|_| bad())?,
            ]
        }
    };
    if parts.next().is_some() {
        return Err(bad());
    }
    Ok(json!({"first_colour": colour, "result": result, "fouls": fouls}))
}

fn arbiter_body(c: ArbiterCommand) -> Result<Value> {
    Ok(match c {
        ArbiterCommand::ForfeitMatch { round, table, by } => {
            json!({"command": "forfeit_match", "round": round, "table": table, "by": value_name(by)})
        }
        ArbiterCommand::SetBoard { at, games, forfeit } => {
            let setting = match (forfeit, games.is_empty()) {
                (Some(by), _) => json!({"forfeit": {"by": value_name(by)}}),
                (None, false) => json!({"games": {"games": games
                    .iter()
                    .map(|g| parse_game(g))
                    .collect::<Result<Vec<_>>>()?}}),
                (None, true) => bail!("set-board needs --game (one per game) or --forfeit"),
            };
            json!({"command": "set_board", "at": at.json(), "setting": setting})
        }
        ArbiterCommand::ReplayBoard { at } => {
            json!({"command": "replay_board", "at": at.json()})
        }
        ArbiterCommand::Withdraw {
            team,
            after_round,
            expelled,
        } => {
            json!({"command": "withdraw", "team": team, "after_round": after_round, "expelled": expelled})
        }
        ArbiterCommand::PairNextRound => json!({"command": "pair_next_round"}),
        ArbiterCommand::StartNextStage { teams } if teams.is_empty() => {
            json!({"command": "start_next_stage"})
        }
        ArbiterCommand::StartNextStage { teams } => {
            json!({"command": "start_next_stage", "teams": teams})
        }
        ArbiterCommand::Raw { json } => {
            let v: Value =
                serde_json::from_str(&json).map_err(|e| anyhow!("the command's JSON: {e}"))?;
            if !v.is_object() {
                bail!("the command's JSON is an object, e.g. {{\"command\":\"publish\"}}");
            }
            v
        }
    })
}

/// `body` with `key` set to `value` when there is one.
fn with<T: serde::Serialize>(mut body: Value, key: &str, value: Option<T>) -> Value {
    if let Some(v) = value {
        body[key] = json!(v);
    }
    body
}

/// What to send: method, path, body.
/// `GET …/boards` or `…/elo` (the players' printouts) with their query.
fn players_read(
    route: &str,
    league: &str,
    min_games: u32,
    format: Format,
    lang: Lang,
) -> Result<(&'static str, String, Option<Value>)> {
    Ok((
        "GET",
        format!(
            "{}/{route}?min_games={min_games}&format={}&lang={}",
            id_path(league)?,
            value_name(format),
            value_name(lang)
        ),
        None,
    ))
}

fn request_of(c: EventCommand) -> Result<(&'static str, String, Option<Value>)> {
    Ok(match c {
        EventCommand::Check(_) | EventCommand::Create(_) => {
            bail!("internal: check and create send the event file")
        }
        EventCommand::List => ("GET", "/api/v1/leagues".into(), None),
        EventCommand::Show { league } => ("GET", id_path(&league)?, None),
        EventCommand::Publish { league } => {
            ("POST", format!("{}/publish", id_path(&league)?), None)
        }
        EventCommand::Tokens {
            league,
            r#for,
            team,
        } => {
            let b = with(json!({"for": value_name(r#for)}), "team", team);
            ("POST", format!("{}/tokens", id_path(&league)?), Some(b))
        }
        EventCommand::Reschedule {
            league,
            round,
            start,
            lineup_deadline,
        } => {
            let b = with(json!({"start": start}), "lineup_deadline", lineup_deadline);
            (
                "POST",
                format!("{}/rounds/{round}/reschedule", id_path(&league)?),
                Some(b),
            )
        }
        EventCommand::Lineup {
            league,
            round,
            table,
            team,
            players,
        } => (
            "POST",
            format!("{}/lineups", id_path(&league)?),
            Some(json!({"round": round, "table": table, "team": team, "players": players})),
        ),
        EventCommand::Command {
            league,
            reason,
            command,
        } => {
            let b = with(arbiter_body(command)?, "reason", reason);
            ("POST", format!("{}/commands", id_path(&league)?), Some(b))
        }
        EventCommand::Standings {
            league,
            stage,
            format,
            lang,
        } => (
            "GET",
            format!(
                "{}/standings?format={}&lang={}{}",
                id_path(&league)?,
                value_name(format),
                value_name(lang),
                stage.map(|s| format!("&stage={s}")).unwrap_or_default()
            ),
            None,
        ),
        EventCommand::Boards {
            league,
            min_games,
            format,
            lang,
        } => players_read("boards", &league, min_games, format, lang)?,
        EventCommand::Elo {
            league,
            min_games,
            format,
            lang,
        } => players_read("elo", &league, min_games, format, lang)?,
        EventCommand::Match {
            league,
            round,
            table,
        } => (
            "GET",
            format!("{}/rounds/{round}/tables/{table}", id_path(&league)?),
            None,
        ),
        EventCommand::Sheet {
            league,
            round,
            table,
            format,
            lang,
        } => (
            "GET",
            format!(
                "{}/rounds/{round}/tables/{table}/sheet?format={}&lang={}",
                id_path(&league)?,
                value_name(format),
                value_name(lang)
            ),
            None,
        ),
        EventCommand::Log { league } => ("GET", format!("{}/log", id_path(&league)?), None),
        EventCommand::Export { league, stage } => (
            "GET",
            format!(
                "{}/export{}",
                id_path(&league)?,
                stage.map(|s| format!("?stage={s}")).unwrap_or_default()
            ),
            None,
        ),
    })
}

/// What to do about a refusal a newcomer meets: a missing or unknown token, a token that may
/// not do this, a league id that is not there.
fn refusal_tip(body: &[u8], token_given: bool) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let code = v["code"].as_str()?;
    let message = v["message"].as_str().unwrap_or_default();
    let issue = "`chuhe admin issue-token --player ID` (the organizer's; `chuhe admin \
                 list-players` shows the ids) on the server's database";
    Some(match (code, token_given) {
        ("unauthenticated" | "permission_denied", false) => format!(
            "this needs a token: pass it with `--token chuhe_…` or `export CHUHE_TOKEN=chuhe_…`; \
             {issue} prints one"
        ),
        ("unauthenticated", true) => format!(
            "the server does not know this token (mistyped, revoked, or issued on another \
             database): {issue} prints a new one"
        ),
        ("permission_denied", true) => "this token's holder may not do this: create, publish, \
             tokens and reschedule need the organizer's token, a lineup its captain's, a \
             command an arbiter's (docs/league.md, \"Who may do what\")"
            .to_string(),
        ("not_found", _) if message.starts_with("no league") => {
            "`chuhe league event list` lists this server's leagues with their ids".to_string()
        }
        _ => return None,
    })
}

/// The server's refusal as one line: `code: message`, with a refused lineup's reason codes
/// and an event file's field.
fn refusal(status: u16, body: &[u8]) -> String {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        let text = String::from_utf8_lossy(body);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        return format!(
            "HTTP {status}: {}",
            if text.is_empty() { "no body" } else { &text }
        );
    };
    let code = v["code"].as_str().unwrap_or("error");
    let message = v["message"].as_str().unwrap_or_default();
    let mut line = format!("{code}: {message}");
    if let Some(reasons) = v["reasons"].as_array() {
        let codes: Vec<&str> = reasons.iter().filter_map(|r| r["code"].as_str()).collect();
        line.push_str(&format!(" [{}]", codes.join(", ")));
    }
    line.replace(['\n', '\r'], " ")
}

pub fn run(args: EventArgs) -> Result<String> {
    let (method, path, body) = match args.command {
        EventCommand::Check(f) => {
            let spec = load(&f.file, f.roster.as_deref())?;
            check(&spec).map_err(|e| anyhow!("{}: {e}", f.file.display()))?;
            let mut s = serde_json::to_string_pretty(&spec)?;
            s.push('\n');
            return Ok(s);
        }
        EventCommand::Create(f) => {
            // Checked here first: a mistake is named with its file before anything is sent.
            let spec = load(&f.file, f.roster.as_deref())?;
            check(&spec).map_err(|e| anyhow!("{}: {e}", f.file.display()))?;
            let body = serde_json::to_value(&spec)?;
            ("POST", "/api/v1/leagues".to_string(), Some(body))
        }
        c => request_of(c)?,
    };
    let server = Server::parse(&args.server)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let token = args.token.as_deref().filter(|t| !t.trim().is_empty());
    let answer = rt.block_on(client::request(
        &server,
        method,
        &path,
        token,
        body.map(|b| b.to_string().into_bytes()),
        Duration::from_secs(args.timeout.max(1)),
    ))?;
    if !(200..300).contains(&answer.status) {
        let err = anyhow!("{}", refusal(answer.status, &answer.body));
        return Err(match refusal_tip(&answer.body, token.is_some()) {
            Some(t) => crate::tip(err, t),
            None => err,
        });
    }
    if answer.content_type.starts_with("application/json") {
        let v: Value = serde_json::from_slice(&answer.body).context("the server's answer")?;
        let mut s = serde_json::to_string_pretty(&v)?;
        s.push('\n');
        Ok(s)
    } else {
        String::from_utf8(answer.body.to_vec()).context("the server's answer is not UTF-8")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// The committed examples parse and pass every check the server makes, so they cannot go
    /// stale; the TOML and the JSON say the same.
    #[test]
    fn the_example_event_files_pass_the_servers_checks() {
        let toml = load(&root().join("examples/league-event.toml"), None).unwrap();
        let json = load(&root().join("examples/league-event.json"), None).unwrap();
        check(&toml).unwrap();
        assert_eq!(toml, json, "examples/league-event.toml and .json differ");
        assert_eq!(toml.teams.len(), 8);
        assert_eq!(toml.boards, 4);
        let rules = toml.rules().unwrap();
        assert_eq!(
            rules.event.chain.stages().len(),
            3,
            "slow, fast, armageddon"
        );
        let with_roster = load(
            &root().join("examples/league-event.toml"),
            Some(&root().join("examples/league-roster.csv")),
        )
        .unwrap();
        check(&with_roster).unwrap();
    }

    /// The two-stage example: a round robin of 4, then its first two in a final with its own
    /// chain.
    #[test]
    fn the_two_stage_example_passes_the_servers_checks() {
        let spec = load(&root().join("examples/league-two-stages.toml"), None).unwrap();
        check(&spec).unwrap();
        let rules = spec.rules().unwrap();
        assert_eq!(rules.stages.len(), 2);
        assert_eq!(rules.planned_rounds(), 4, "3 group rounds and the final");
        assert_eq!(rules.stages[1].event.chain.stages().len(), 3);
    }

    /// Every ```json block of docs/league.md that is an event file (it has "teams" and a
    /// "schedule" object) passes the checks; every ```csv block merges.
    #[test]
    fn the_docs_examples_pass_the_servers_checks() {
        let doc = std::fs::read_to_string(root().join("docs/league.md")).unwrap();
        let mut events = 0;
        let mut rosters = 0;
        let mut last_event = None;
        for (lang, block) in fenced(&doc) {
            match lang {
                "json" => {
                    let Ok(v) = serde_json::from_str::<Value>(block) else {
                        continue;
                    };
                    if v.get("teams").is_some() && v["schedule"].is_object() {
                        let spec: EventSpec = serde_json::from_value(v).unwrap();
                        check(&spec).unwrap();
                        last_event = Some(spec);
                        events += 1;
                    }
                }
                "toml" => {
                    let spec: EventSpec = toml::from_str(block).unwrap();
                    check(&spec).unwrap();
                    events += 1;
                }
                "csv" => {
                    let mut spec = last_event.clone().unwrap();
                    super::super::roster::merge(&mut spec, block, "docs/league.md").unwrap();
                    check(&spec).unwrap();
                    rosters += 1;
                }
                _ => {}
            }
        }
        assert!(
            events >= 1 && rosters >= 1,
            "{events} event files, {rosters} rosters"
        );
    }

    /// The page's websocket examples are what the server's protobuf JSON reads and writes, a
    /// public entry's `json` is a league event, and each `/commands` body is a command: read,
    /// written again, and compared (so a misspelt field, which the readers would ignore, fails).
    #[test]
    fn the_docs_messages_and_commands_are_what_the_server_reads() {
        use chuhe_league_core::{LeagueCommand, LeagueEvent};
        use chuhe_proto::v1::{ClientMessage, ServerMessage};
        let doc = std::fs::read_to_string(root().join("docs/league.md")).unwrap();
        let (mut messages, mut commands) = (0, 0);
        for (lang, block) in fenced(&doc) {
            let Ok(v) = serde_json::from_str::<Value>(block) else {
                continue;
            };
            if lang != "json" {
                continue;
            }
            if v.get("requestId").is_some() {
                let m: ClientMessage = chuhe_proto::decode_json(block).unwrap();
                same(&v, &json(&chuhe_proto::encode_json(&m)))
                    .unwrap_or_else(|e| panic!("{block}: {e}"));
                messages += 1;
            } else if ["reply", "error", "league"]
                .iter()
                .any(|k| v.get(*k).is_some())
            {
                let m: ServerMessage = chuhe_proto::decode_json(block).unwrap();
                same(&v, &json(&chuhe_proto::encode_json(&m)))
                    .unwrap_or_else(|e| panic!("{block}: {e}"));
                if let Some(inner) = v["league"]["json"].as_str() {
                    let e: LeagueEvent = serde_json::from_str(inner).unwrap();
                    assert_eq!(e.kind(), v["league"]["kind"]);
                    same(&json(inner), &serde_json::to_value(&e).unwrap()).unwrap();
                }
                messages += 1;
            } else if v.get("command").is_some() {
                let mut body = v.clone();
                body.as_object_mut().unwrap().remove("reason");
                let c: LeagueCommand =
                    serde_json::from_value(body.clone()).unwrap_or_else(|e| panic!("{block}: {e}"));
                same(&body, &serde_json::to_value(&c).unwrap())
                    .unwrap_or_else(|e| panic!("{block}: {e}"));
                commands += 1;
            }
        }
        assert!(
            messages >= 6 && commands >= 6,
            "{messages} messages, {commands} commands"
        );
    }

    fn json(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    /// `doc` says what `written` says: the same keys and values, except that `doc` may spell
    /// out a default (`0`, `"0"`, `""`, `false`, `null`) that `written` leaves out.
    fn same(doc: &Value, written: &Value) -> Result<(), String> {
        match (doc, written) {
            (Value::Object(d), Value::Object(w)) => {
                for (k, v) in d {
                    match w.get(k) {
                        Some(wv) => same(v, wv).map_err(|e| format!("{k}.{e}"))?,
                        None if matches!(v, Value::Null | Value::Bool(false))
                            || v == &json!(0)
                            || v == &json!("0")
                            || v == &json!("") => {}
                        None => return Err(format!("{k}: not read")),
                    }
                }
                match w.keys().find(|k| !d.contains_key(*k)) {
                    Some(k) => Err(format!("{k}: missing from the page")),
                    None => Ok(()),
                }
            }
            (Value::Array(d), Value::Array(w)) if d.len() == w.len() => {
                d.iter().zip(w).try_for_each(|(a, b)| same(a, b))
            }
            (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => Ok(()),
            _ if doc == written => Ok(()),
            _ => Err(format!(": {doc} on the page, {written} written")),
        }
    }

    fn fenced(doc: &str) -> Vec<(&str, &str)> {
        let mut out = Vec::new();
        let mut rest = doc;
        while let Some(i) = rest.find("\n```") {
            let after = &rest[i + 4..];
            let Some(eol) = after.find('\n') else { break };
            let lang = after[..eol].trim();
            let body = &after[eol + 1..];
            let Some(end) = body.find("\n```") else { break };
            out.push((lang, &body[..end + 1]));
            rest = &body[end + 4..];
        }
        out
    }

    /// The stage commands and reads become the API's requests.
    #[test]
    fn stages_reach_the_api() {
        let body = arbiter_body(ArbiterCommand::StartNextStage { teams: vec![3, 1] }).unwrap();
        assert_eq!(
            body,
            json!({"command": "start_next_stage", "teams": [3, 1]})
        );
        let body = arbiter_body(ArbiterCommand::StartNextStage { teams: vec![] }).unwrap();
        assert_eq!(body, json!({"command": "start_next_stage"}));
        let (_, path, _) = request_of(EventCommand::Standings {
            league: "4".into(),
            stage: Some(2),
            format: Format::Json,
            lang: Lang::En,
        })
        .unwrap();
        assert_eq!(
            path,
            "/api/v1/leagues/4/standings?format=json&lang=en&stage=2"
        );
        let (_, path, _) = request_of(EventCommand::Export {
            league: "4".into(),
            stage: Some(1),
        })
        .unwrap();
        assert_eq!(path, "/api/v1/leagues/4/export?stage=1");
    }

    #[test]
    fn games_parse_for_set_board() {
        assert_eq!(
            parse_game("red:second:1,0").unwrap(),
            json!({"first_colour": "red", "result": "second", "fouls": [1, 0]})
        );
        for bad in [
            "red",
            "green:draw",
            "red:won",
            "red:draw:1",
            "red:draw:1,x",
            "red:draw:0,0:x",
        ] {
            assert!(parse_game(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_refusal_is_one_line() {
        let body = br#"{"code":"lineup_refused","message":"lineup refused: a; b","reasons":[{"code":"unknown_player","message":"a"},{"code":"duplicate_player","message":"b"}]}"#;
        assert_eq!(
            refusal(400, body),
            "lineup_refused: lineup refused: a; b [unknown_player, duplicate_player]"
        );
        assert_eq!(
            refusal(502, b"<html>\nBad gateway\n</html>"),
            "HTTP 502: <html> Bad gateway </html>"
        );
    }
}
