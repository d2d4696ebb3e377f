//! `chuhe`: one binary, clap subcommands. Each subcommand group lives in its own module.

/// jemalloc instead of the system allocator (see the dependency's note in Cargo.toml).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use clap::{Parser, Subcommand};

mod admin;
mod league;
mod records;
mod rules;
mod rulings;
mod serve;

/// chuhe (楚河): a server for real-time online Xiangqi and team leagues.
#[derive(Debug, Parser)]
#[command(name = "chuhe", version, about, long_about = LONG_ABOUT)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

const LONG_ABOUT: &str = "chuhe (楚河): a server for real-time online Xiangqi and team leagues.

`chuhe serve --demo` runs the game server with demo players and bots on an SQLite file in the \
current directory (chuhe.db) and serves a page at http://127.0.0.1:8080/. `chuhe rules` and \
`chuhe league` are offline tools that read and write JSON, CSV or text; `chuhe league event` \
runs a league on a server (docs/league.md). `chuhe <COMMAND> --help` describes each command.";

#[derive(Debug, Subcommand)]
enum Command {
    /// Rules tools: perft counts, batch evaluation of positions and moves (JSON Lines), and
    /// repetition rulings explained.
    Rules(rules::RulesArgs),
    /// League tools: round-robin schedules, standings, crosstables, score sheets, Swiss
    /// pairings, knockout brackets and Elo lists from results files; `chuhe league event`
    /// runs an event on a server's league service (create from a TOML/JSON file, rosters from
    /// CSV, publish, tokens, reschedule, lineups, arbiters' commands, standings).
    League(league::LeagueArgs),
    /// Run the game server: websockets at /ws, the organizer HTTP API, game records, metrics
    /// and a live page at /.
    Serve(Box<serve::ServeArgs>),
    /// Administration straight on the database: players, tokens, casual games.
    Admin(admin::AdminArgs),
    /// Game records as the Xiangqi world keeps them: Chinese-program PGN (Chinese, WXF or ICCS
    /// movetext), XQF and DhtmlXQ. `import` checks and converts files; `export` fetches games
    /// from a running server.
    Records(records::RecordsArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Rules(args) => rules::run(args),
        Command::League(args) => league::run(args),
        Command::Serve(args) => serve::run(*args),
        Command::Admin(args) => admin::run(args),
        Command::Records(args) => records::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", error_chain(&err));
            if let Some(Tip(tip)) = err.downcast_ref::<Tip>() {
                eprintln!("\n  tip: {tip}");
            }
            std::process::ExitCode::from(2)
        }
    }
}

/// What to do about an error, printed after its `error:` line as clap prints its tips
/// (`  tip: …`): the flag, variable or command that fixes it. Attached as the error's context
/// ([`tip`]); its own text is empty, so the `error:` line does not change.
#[derive(Debug)]
pub struct Tip(pub String);

impl std::fmt::Display for Tip {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Ok(())
    }
}

/// `err` with a [`Tip`].
pub fn tip(err: impl Into<anyhow::Error>, tip: impl Into<String>) -> anyhow::Error {
    err.into().context(Tip(tip.into()))
}

/// The error and its causes joined by `: `, each text once. Many errors print their source in
/// their own message as well (sqlx's `error returned from database: …`, the store's
/// `database error: …`), so anyhow's `{:#}` would repeat the innermost text once per level; a
/// cause whose text already ends the message so far is left out.
pub fn error_chain(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if text.is_empty() || out.ends_with(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::error_chain;

    #[derive(Debug)]
    struct Leaf;
    impl std::fmt::Display for Leaf {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("database \"chuhe\" does not exist")
        }
    }
    impl std::error::Error for Leaf {}

    /// Says its source's text again, as sqlx's and the store's database errors do.
    #[derive(Debug)]
    struct Repeats(Box<dyn std::error::Error + Send + Sync>, &'static str);
    impl std::fmt::Display for Repeats {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{}: {}", self.1, self.0)
        }
    }
    impl std::error::Error for Repeats {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(self.0.as_ref())
        }
    }

    #[test]
    fn a_chain_that_repeats_its_sources_says_each_text_once() {
        let inner = Repeats(Box::new(Leaf), "error returned from database");
        let err = anyhow::Error::new(Repeats(Box::new(inner), "database error"))
            .context("opening database postgres://127.0.0.1/chuhe");
        assert_eq!(
            format!("{err:#}").matches("does not exist").count(),
            3,
            "the case this guards against"
        );
        assert_eq!(
            error_chain(&err),
            "opening database postgres://127.0.0.1/chuhe: database error: \
             error returned from database: database \"chuhe\" does not exist"
        );
    }

    #[test]
    fn a_tip_leaves_the_error_line_alone_and_is_found_under_more_context() {
        let err = super::tip(anyhow::anyhow!("player 3 not found"), "list them")
            .context("issuing a token");
        assert_eq!(error_chain(&err), "issuing a token: player 3 not found");
        assert_eq!(
            err.downcast_ref::<super::Tip>().map(|t| t.0.as_str()),
            Some("list them")
        );
    }

    #[test]
    fn a_chain_of_distinct_texts_keeps_them_all() {
        let err = anyhow::anyhow!("depth must be at least 1").context("perft");
        assert_eq!(error_chain(&err), "perft: depth must be at least 1");
    }
}
