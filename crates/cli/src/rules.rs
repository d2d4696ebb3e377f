//! `chuhe rules …`: perft and the JSON Lines batch interface.

use anyhow::Context as _;
use chuhe_rules::rulings::{Game, RulesConfig, Ruleset};
use chuhe_rules::{NotationError, Position, perft_divide};
use clap::{Args, Subcommand};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    command: RulesCommand,
}

#[derive(Debug, Subcommand)]
enum RulesCommand {
    /// Count move paths: one line per legal move with its count, then the total alone on the
    /// last line.
    Perft {
        /// A FEN (quote it) or `startpos`.
        position: String,
        /// Depth in plies (1 or more).
        depth: u32,
    },
    /// JSON Lines on stdin, one JSON line per input line on stdout (see the rules crate
    /// README): `{"fen": "<FEN>|startpos", "moves": ["h2e2", ...]}` in, the position after the
    /// moves with its legal moves, check, result and the moves in WXF and Chinese out, or
    /// `{"error": {"code", "message", "ply"}}`. A bad line never stops the batch.
    Batch,
    /// Play moves from a position and explain every repetition ruling (and how the game
    /// ended) for people, in Chinese and English.
    Explain(crate::rulings::ExplainArgs),
}

/// Reads `startpos` or a FEN.
pub(crate) fn parse_position(text: &str) -> Result<Position, chuhe_rules::FenError> {
    if text.trim() == "startpos" {
        Ok(Position::new())
    } else {
        Position::from_fen(text)
    }
}

pub fn run(args: RulesArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        RulesCommand::Perft { position, depth } => {
            let pos =
                parse_position(&position).with_context(|| format!("position {position:?}"))?;
            if depth == 0 {
                anyhow::bail!("depth must be at least 1");
            }
            let mut out = std::io::stdout().lock();
            let mut total = 0u64;
            for (m, n) in perft_divide(&pos, depth) {
                writeln!(out, "{m} {n}")?;
                total += n;
            }
            writeln!(out, "{total}")?;
            Ok(ExitCode::SUCCESS)
        }
        RulesCommand::Batch => {
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout().lock();
            batch(stdin, stdout)?;
            Ok(ExitCode::SUCCESS)
        }
        RulesCommand::Explain(args) => crate::rulings::explain(args),
    }
}

/// One input line of `chuhe rules batch`. Unknown fields are ignored.
#[derive(Debug, Deserialize)]
pub(crate) struct BatchInput {
    /// A FEN or `startpos`.
    pub fen: String,
    /// ICCS moves played from `fen`, in order (default: none).
    #[serde(default)]
    pub moves: Vec<String>,
    /// Repetition rules: `cxa` (default) or `engine`.
    #[serde(default)]
    pub ruleset: Option<String>,
    /// Natural move limit in moves by both sides (default 60; 0 = off).
    #[serde(default)]
    pub move_limit: Option<u32>,
}

/// The answer for a good line. Field order is the wire order; new fields are only ever added.
#[derive(Debug, Serialize)]
pub(crate) struct BatchOutput {
    /// The FEN after the moves.
    pub fen: String,
    /// The legal moves there, ICCS, sorted.
    pub legal: Vec<String>,
    /// Whether the side to move is in check.
    pub in_check: bool,
    /// `ongoing`, `red_wins`, `black_wins` or `draw`.
    pub result: &'static str,
    /// `null` while ongoing; `checkmate` or `stalemate` (困毙) on the board;
    /// `perpetual_check`, `perpetual_chase`, `repetition_draw` (with `ruling`),
    /// `move_limit` or `dead_position`.
    pub reason: Option<&'static str>,
    /// The article applied when the game ended (`4.1.1`, `24.1`, `24.3`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub article: Option<&'static str>,
    /// The repetition ruling that ended the game.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ruling: Option<crate::rulings::RulingJson>,
    /// A must-vary warning in force (the game goes on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<crate::rulings::WarningJson>,
    /// The input moves in WXF.
    pub wxf: Vec<String>,
    /// The input moves in Chinese notation.
    pub chinese: Vec<String>,
}

/// A line that could not be evaluated.
#[derive(Debug, Serialize)]
pub(crate) struct BatchError {
    /// `bad_json`, `bad_fen`, `bad_ruleset`, `bad_move_syntax`, `illegal_move` or
    /// `game_over`.
    pub code: &'static str,
    /// A human sentence.
    pub message: String,
    /// The 0-based index in `moves` of the move that failed (0 for `bad_json`/`bad_fen`).
    pub ply: usize,
}

#[derive(Serialize)]
struct ErrorLine<'a> {
    error: &'a BatchError,
}

fn batch_error(code: &'static str, message: String, ply: usize) -> BatchError {
    BatchError { code, message, ply }
}

/// Evaluates one batch request.
pub(crate) fn evaluate(input: &BatchInput) -> Result<BatchOutput, BatchError> {
    let pos = parse_position(&input.fen).map_err(|e| batch_error("bad_fen", e.to_string(), 0))?;
    let ruleset = match &input.ruleset {
        None => Ruleset::default(),
        Some(r) => {
            crate::rulings::parse_ruleset(r).map_err(|e| batch_error("bad_ruleset", e, 0))?
        }
    };
    let mut config = RulesConfig {
        ruleset,
        ..RulesConfig::default()
    };
    if let Some(n) = input.move_limit {
        config.move_limit.moves = n;
    }
    let mut game = Game::new(pos, config);
    let mut wxf = Vec::with_capacity(input.moves.len());
    let mut chinese = Vec::with_capacity(input.moves.len());
    for (ply, text) in input.moves.iter().enumerate() {
        let mv = chuhe_rules::Move::from_iccs(text)
            .map_err(|e| batch_error("bad_move_syntax", e.to_string(), ply))?;
        if let Some(end) = game.end() {
            return Err(batch_error(
                "game_over",
                format!(
                    "move {text:?} at ply {ply}: the game ended after ply {}, {} by {}",
                    end.ply,
                    end.result.code(),
                    end.cause.code()
                ),
                ply,
            ));
        }
        let pos = game.position();
        let notation = |r: Result<String, NotationError>| {
            r.map_err(|e| batch_error("illegal_move", format!("ply {ply}: {e}"), ply))
        };
        // Both notations check legality first, so an illegal move fails here.
        wxf.push(notation(pos.to_wxf(mv))?);
        chinese.push(notation(pos.to_chinese(mv))?);
        game.play(mv)
            .map_err(|e| batch_error("illegal_move", format!("ply {ply}: {e}"), ply))?;
    }
    let pos = game.position();
    let end = game.end();
    let mut legal: Vec<String> = if end.is_some() {
        Vec::new()
    } else {
        pos.legal_moves().iter().map(ToString::to_string).collect()
    };
    legal.sort_unstable();
    let (result, reason, article) = match end {
        None => ("ongoing", None, None),
        Some(e) => (e.result.code(), Some(e.cause.code()), Some(e.article)),
    };
    Ok(BatchOutput {
        fen: pos.to_fen(),
        legal,
        in_check: pos.is_check(),
        result,
        reason,
        article,
        ruling: end
            .and_then(|e| e.ruling.as_ref())
            .map(crate::rulings::ruling_json),
        warning: game.pending_warning().map(crate::rulings::warning_json),
        wxf,
        chinese,
    })
}

/// Evaluates one raw line into its output line (without the newline).
pub(crate) fn batch_line(line: &[u8]) -> String {
    let answer = match std::str::from_utf8(line) {
        Err(e) => Err(batch_error(
            "bad_json",
            format!("line is not UTF-8: {e}"),
            0,
        )),
        Ok(text) => match serde_json::from_str::<BatchInput>(text) {
            Err(e) => Err(batch_error("bad_json", e.to_string(), 0)),
            Ok(input) => evaluate(&input),
        },
    };
    let json = match &answer {
        Ok(out) => serde_json::to_string(out),
        Err(error) => serde_json::to_string(&ErrorLine { error }),
    };
    json.unwrap_or_else(|e| format!(r#"{{"error":{{"code":"internal","message":"{e}","ply":0}}}}"#))
}

/// Runs the batch over a reader and writer until end of input.
pub(crate) fn batch(mut input: impl BufRead, mut output: impl Write) -> anyhow::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        writeln!(output, "{}", batch_line(&line))?;
        output.flush()?;
    }
    Ok(())
}
