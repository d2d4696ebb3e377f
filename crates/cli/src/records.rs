//! `chuhe records …`: game records in the forms the Xiangqi world uses (`chuhe-records`).
//!
//! - `import FILE…`: reads PGN (Chinese, WXF or ICCS movetext; UTF-8 or GBK), XQF and DhtmlXQ
//!   blocks, checks
//!   every move with the rules, and either prints a JSON summary per game or, with `--to`,
//!   converts (PGN ⇄ XQF ⇄ DhtmlXQ), or, with `--league`, loads them into an event's board as
//!   played games (the server's import route). All or nothing: the first bad file, game or
//!   move is named (file, game, line and column or byte) and nothing is written.
//! - `export`: a game (`--game`) or an event, a round or a match (`--league`, `--round`,
//!   `--table`) from a running server's API, in the format asked for.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};
use chuhe_records::{Format, Game, Notation};
use clap::{Args, Subcommand};

use crate::league::client::{self, Server};

#[derive(Debug, Args)]
pub struct RecordsArgs {
    #[command(subcommand)]
    command: RecordsCommand,
}

#[derive(Debug, Subcommand)]
enum RecordsCommand {
    /// Read and check PGN, XQF or DhtmlXQ files: every move against the rules. Without `--to`, one JSON
    /// line per game (file, index, headers, moves in ICCS, result); with `--to`, the games
    /// converted. Exit status 1 (and nothing written) when a file is bad.
    Import(ImportArgs),
    /// A finished (or live, behind the broadcast delay) game, or every game of an event, a
    /// round or a match, from a running server.
    Export(ExportArgs),
}

#[derive(Debug, Args)]
struct ImportArgs {
    /// The files (`.pgn`, `.xqf`, `.ubb`/`.dhtmlxq`; others by `--format`). `-` reads standard
    /// input.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The input format when the extension does not say it: `pgn`, `xqf` or `dhtmlxq` (the
    /// forums' `[DhtmlXQ]` blocks; every block of the text is a game).
    #[arg(long)]
    format: Option<String>,
    /// Convert to `pgn` (Chinese movetext), `pgn-wxf`, `pgn-iccs`, `xqf` or `dhtmlxq`.
    #[arg(long)]
    to: Option<String>,
    /// Where to write the conversion: a file (PGN and DhtmlXQ hold every game; XQF one), or,
    /// for XQF and several games, a directory (one `N.xqf` per game). Default: standard output
    /// (not for XQF).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Load the games into this event as the board's played games (the server's
    /// `POST …/boards/{board}/import`, with the organizer's or an arbiter's `--token`): the
    /// files' games are the board's result chain in order; each game's RedTeam or BlackTeam
    /// names the match's first team. The server checks every move again and stores each game
    /// with its moves and result (its game page replays it); all or nothing, and refused on a
    /// board that has a game or a result.
    #[arg(long, conflicts_with = "to", requires_all = ["round", "table", "board"])]
    league: Option<String>,
    #[arg(long)]
    round: Option<u32>,
    #[arg(long)]
    table: Option<u32>,
    #[arg(long)]
    board: Option<u32>,
    /// The arbiter's reason recorded with the setting [default: "imported from <files>"].
    #[arg(long)]
    reason: Option<String>,
    /// The server (with `--league`).
    #[arg(long, env = "CHUHE_SERVER", default_value = "http://127.0.0.1:8080")]
    server: String,
    /// The organizer's or an arbiter's token (with `--league`).
    #[arg(long, env = "CHUHE_TOKEN")]
    token: Option<String>,
    /// Seconds to wait for the server.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
}

#[derive(Debug, Args)]
struct ExportArgs {
    /// The server, e.g. `http://127.0.0.1:8080`.
    #[arg(long, env = "CHUHE_SERVER", default_value = "http://127.0.0.1:8080")]
    server: String,
    /// A token (an organizer's or arbiter's sees live games live; without one, the broadcast
    /// delay applies).
    #[arg(long, env = "CHUHE_TOKEN")]
    token: Option<String>,
    /// One game by id.
    #[arg(long, conflicts_with = "league")]
    game: Option<String>,
    /// Every game of this event (with `--round`, of one round; with `--table` too, of one match).
    #[arg(long)]
    league: Option<String>,
    #[arg(long, requires = "league")]
    round: Option<u32>,
    #[arg(long, requires = "round")]
    table: Option<u32>,
    /// `pgn` (Chinese movetext), `pgn-wxf`, `pgn-iccs`, `xqf` (one game) or `dhtmlxq`.
    #[arg(long, default_value = "pgn")]
    format: String,
    /// Write to this file instead of standard output (XQF needs one).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Seconds to wait for the server.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
}

pub fn run(args: RecordsArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        RecordsCommand::Import(a) => import(&a),
        RecordsCommand::Export(a) => export(&a).map(|()| ExitCode::SUCCESS),
    }
}

fn format_arg(s: &str) -> anyhow::Result<Format> {
    Format::parse(s)
        .ok_or_else(|| anyhow!("format {s:?}: expected pgn, pgn-wxf, pgn-iccs, xqf or dhtmlxq"))
}

fn read_input(path: &Path) -> anyhow::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut b)?;
        Ok(b)
    } else {
        std::fs::read(path).with_context(|| format!("{}", path.display()))
    }
}

/// Reads one file: every game, or the first error (file and place named).
pub fn read_file(path: &Path, format: Option<Format>) -> Result<Vec<Game>, String> {
    let bytes = read_input(path).map_err(|e| format!("{e:#}"))?;
    let name = path.display().to_string();
    let format = format
        .or_else(|| Format::from_path(&name))
        .or_else(|| bytes.starts_with(b"XQ").then_some(Format::Xqf))
        .or_else(|| {
            let dhtml = bytes.windows(9).any(|w| w == b"[DhtmlXQ]");
            dhtml.then_some(Format::DhtmlXq)
        })
        .unwrap_or(Format::Pgn(Notation::Chinese));
    let games = match format {
        Format::Pgn(_) => chuhe_records::pgn::parse_all(&chuhe_records::pgn::decode(&bytes)),
        f => chuhe_records::import(f, &bytes),
    };
    games.map_err(|e| format!("{name}: {e} ({})", e.code()))
}

fn import(a: &ImportArgs) -> anyhow::Result<ExitCode> {
    let input = a.format.as_deref().map(format_arg).transpose()?;
    let to = a.to.as_deref().map(format_arg).transpose()?;
    let mut all: Vec<(String, Game)> = Vec::new();
    for f in &a.files {
        match read_file(f, input) {
            Ok(gs) => all.extend(gs.into_iter().map(|g| (f.display().to_string(), g))),
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(1));
            }
        }
    }
    if let Some(league) = &a.league {
        let games: Vec<Game> = all.into_iter().map(|(_, g)| g).collect();
        return load_into_event(a, league, &games).map(|()| ExitCode::SUCCESS);
    }
    let Some(to) = to else {
        let mut out = std::io::stdout().lock();
        for (i, (file, g)) in all.iter().enumerate() {
            let v = serde_json::json!({
                "file": file,
                "index": i + 1,
                "event": g.event, "round": g.round, "board": g.board,
                "red": g.red, "black": g.black,
                "redTeam": g.red_team, "blackTeam": g.black_team,
                "result": g.result.as_pgn(),
                "reason": g.reason,
                "fen": g.fen,
                "moves": g.moves.iter().map(|m| m.to_iccs()).collect::<Vec<_>>(),
            });
            writeln!(out, "{v}")?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    let games: Vec<Game> = all.into_iter().map(|(_, g)| g).collect();
    match (to, &a.out) {
        (Format::Xqf, None) => {
            bail!("XQF is binary: give --out FILE (or a directory for several games)")
        }
        (Format::Xqf, Some(out)) if games.len() > 1 => {
            std::fs::create_dir_all(out).with_context(|| format!("{}", out.display()))?;
            // Everything is converted before anything is written.
            let files = games
                .iter()
                .map(|g| chuhe_records::export(Format::Xqf, std::slice::from_ref(g)))
                .collect::<Result<Vec<_>, _>>()?;
            for (i, b) in files.iter().enumerate() {
                let p = out.join(format!("{}.xqf", i + 1));
                std::fs::write(&p, b).with_context(|| format!("{}", p.display()))?;
            }
        }
        (to, out) => {
            let bytes = match to {
                Format::DhtmlXq => {
                    let mut s = String::new();
                    for g in &games {
                        s.push_str(&chuhe_records::dhtmlxq::write(g)?);
                    }
                    s.into_bytes()
                }
                f => chuhe_records::export(f, &games)?,
            };
            match out {
                Some(p) => std::fs::write(p, &bytes).with_context(|| format!("{}", p.display()))?,
                None => std::io::stdout().lock().write_all(&bytes)?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn export(a: &ExportArgs) -> anyhow::Result<()> {
    let f = format_arg(&a.format)?;
    let path = match (&a.game, &a.league) {
        (Some(g), _) => format!("/api/v1/games/{g}/record?format={}", a.format),
        (None, Some(l)) => {
            let mut p = format!("/api/v1/leagues/{l}/records?format={}", a.format);
            if let Some(r) = a.round {
                p.push_str(&format!("&round={r}"));
            }
            if let Some(t) = a.table {
                p.push_str(&format!("&table={t}"));
            }
            p
        }
        (None, None) => bail!("give --game ID or --league ID"),
    };
    if f == Format::Xqf && a.out.is_none() {
        bail!("XQF is binary: give --out FILE");
    }
    let server = Server::parse(&a.server)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let answer = rt.block_on(client::request(
        &server,
        "GET",
        &path,
        a.token.as_deref().filter(|t| !t.trim().is_empty()),
        None,
        Duration::from_secs(a.timeout.max(1)),
    ))?;
    if !(200..300).contains(&answer.status) {
        let v: serde_json::Value = serde_json::from_slice(&answer.body).unwrap_or_default();
        bail!(
            "the server refused ({}): {} {}",
            answer.status,
            v["code"].as_str().unwrap_or(""),
            v["message"].as_str().unwrap_or("")
        );
    }
    match &a.out {
        Some(p) => std::fs::write(p, &answer.body).with_context(|| format!("{}", p.display()))?,
        None => std::io::stdout().lock().write_all(&answer.body)?,
    }
    Ok(())
}

/// The games sent to the server's import route as one PGN (ICCS movetext: what the files
/// said, move for move); the server checks them again and loads them as played games.
fn load_into_event(a: &ImportArgs, league: &str, games: &[Game]) -> anyhow::Result<()> {
    let (round, table, board) = match (a.round, a.table, a.board) {
        (Some(r), Some(t), Some(b)) => (r, t, b),
        _ => bail!("--league needs --round, --table and --board"),
    };
    let server = Server::parse(&a.server)?;
    let token = a.token.as_deref().filter(|t| !t.trim().is_empty());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let timeout = Duration::from_secs(a.timeout.max(1));
    let body = chuhe_records::export(Format::Pgn(Notation::Iccs), games)?;
    let reason = a.reason.clone().unwrap_or_else(|| {
        let names: Vec<String> = a.files.iter().map(|f| f.display().to_string()).collect();
        format!("imported from {}", names.join(", "))
    });
    let answer = rt.block_on(client::request(
        &server,
        "POST",
        &format!(
            "/api/v1/leagues/{}/rounds/{round}/tables/{table}/boards/{board}/import?format=pgn&reason={}",
            percent(league),
            percent(&reason)
        ),
        token,
        Some(body),
        timeout,
    ))?;
    if !(200..300).contains(&answer.status) {
        let v: serde_json::Value = serde_json::from_slice(&answer.body).unwrap_or_default();
        bail!(
            "the server refused ({}): {} {}",
            answer.status,
            v["code"].as_str().unwrap_or(""),
            v["message"].as_str().unwrap_or("")
        );
    }
    std::io::stdout().lock().write_all(&answer.body)?;
    println!();
    Ok(())
}

/// A query value, percent-encoded (RFC 3986 unreserved characters kept).
fn percent(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
