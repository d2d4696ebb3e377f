//! The repetition-ruling parts of `chuhe rules`: the JSON shape of a ruling and a warning in
//! `chuhe rules batch`, and `chuhe rules explain`.

use anyhow::Context as _;
use chuhe_rules::rulings::{
    Game, GameEnd, MoveLimit, RulesConfig, Ruleset, Ruling, Verdict, Warning, chinese_piece_name,
};
use chuhe_rules::{Color, Position};
use clap::Args;
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// A ruling on the wire.
#[derive(Debug, Serialize)]
pub(crate) struct RulingJson {
    /// `loss`, `draw` or `must_vary`.
    pub verdict: &'static str,
    /// The side that loses (`loss`) or must vary (`must_vary`); `null` for a draw.
    pub side: Option<&'static str>,
    /// `perpetual_check`, `perpetual_chase` or `repetition_draw`.
    pub reason: &'static str,
    /// `24.1`, `24.2`, `24.3` or `engine`.
    pub article: &'static str,
    /// `article` followed by the general rule of art. 26 it applies (`26.1` one-sided 长将,
    /// `26.2` both allowed, `26.3` both forbidden, `26.4` forbidden against allowed), e.g.
    /// `["24.2", "26.3"]`; `["engine"]` under the engine rules.
    pub articles: Vec<&'static str>,
    /// `cxa` or `engine`.
    pub ruleset: &'static str,
    /// The ply that completed the cycle.
    pub ply: u32,
    /// What each side did over the cycle.
    pub red: SideJson,
    /// What each side did over the cycle.
    pub black: SideJson,
    /// Whether pawn attacks counted as chases (细则 11).
    pub pawns_count: bool,
    /// Whether this loss follows an ignored must-vary warning.
    pub after_warning: bool,
    /// The cycle's moves.
    pub moves: Vec<CycleMoveJson>,
    /// One line in Chinese.
    pub text_zh: String,
    /// One line in English.
    pub text_en: String,
}

/// One side's pattern.
#[derive(Debug, Serialize)]
pub(crate) struct SideJson {
    /// Machine code, e.g. `perpetual_chase`, `check_and_chase`, `idle`.
    pub pattern: &'static str,
    /// The Chinese term (长将, 长捉, 一将一捉, 闲着 …).
    pub zh: &'static str,
    /// Whether it is a 禁止着法.
    pub forbidden: bool,
}

/// One move of the cycle.
#[derive(Debug, Serialize)]
pub(crate) struct CycleMoveJson {
    /// Ply in the game (1 = first move played).
    pub ply: u32,
    /// `red` or `black`.
    pub side: &'static str,
    /// ICCS.
    pub iccs: String,
    /// Chinese notation.
    pub chinese: String,
    /// `check`, `mate_threat`, `chase` or `idle`.
    pub class: &'static str,
    /// The newly chased pieces.
    pub chased: Vec<ChasedJson>,
}

/// A chased piece.
#[derive(Debug, Serialize)]
pub(crate) struct ChasedJson {
    /// Its square (ICCS).
    pub square: String,
    /// FEN letter.
    pub piece: String,
    /// Chinese name.
    pub name: &'static str,
}

/// A pending must-vary warning on the wire.
#[derive(Debug, Serialize)]
pub(crate) struct WarningJson {
    /// The side that must vary.
    pub side: &'static str,
    /// What it loses for if it does not (`perpetual_chase`).
    pub reason: &'static str,
    /// `24.3`.
    pub article: &'static str,
    /// The ply of the ruling point that issued it.
    pub ply: u32,
    /// The ruling behind it.
    pub ruling: RulingJson,
}

const fn side(c: Color) -> &'static str {
    c.name()
}

pub(crate) fn ruling_json(r: &Ruling) -> RulingJson {
    let (verdict, s) = match r.verdict {
        Verdict::Loss { loser } => ("loss", Some(side(loser))),
        Verdict::Draw => ("draw", None),
        Verdict::MustVary { offender } => ("must_vary", Some(side(offender))),
    };
    let side_json = |c: Color| {
        let p = r.pattern(c);
        SideJson {
            pattern: p.code(),
            zh: p.chinese(),
            forbidden: p.forbidden(),
        }
    };
    RulingJson {
        verdict,
        side: s,
        reason: r.reason.code(),
        article: r.article,
        articles: r.articles(),
        ruleset: r.ruleset.code(),
        ply: r.ply,
        red: side_json(Color::Red),
        black: side_json(Color::Black),
        pawns_count: r.pawns_count,
        after_warning: r.after_warning,
        moves: r
            .moves
            .iter()
            .map(|m| CycleMoveJson {
                ply: m.ply,
                side: side(m.side),
                iccs: m.iccs.clone(),
                chinese: m.chinese.clone(),
                class: m.class.code(),
                chased: m
                    .chased
                    .iter()
                    .map(|c| ChasedJson {
                        square: c.square.to_string(),
                        piece: c.piece.fen_char().to_string(),
                        name: chinese_piece_name(c.piece),
                    })
                    .collect(),
            })
            .collect(),
        text_zh: r.text_zh(),
        text_en: r.text_en(),
    }
}

pub(crate) fn warning_json(w: &Warning) -> WarningJson {
    WarningJson {
        side: side(w.side),
        reason: w.reason.code(),
        article: w.article,
        ply: w.ply,
        ruling: ruling_json(&w.ruling),
    }
}

/// Parses a ruleset name.
pub(crate) fn parse_ruleset(s: &str) -> Result<Ruleset, String> {
    Ruleset::from_code(s).ok_or_else(|| format!("unknown ruleset {s:?}: use \"cxa\" or \"engine\""))
}

/// Arguments of `chuhe rules explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A FEN (quote it) or `startpos`.
    position: String,
    /// The moves from there, in ICCS (`h2e2`), Chinese (炮二平五) or WXF (`C2=5`).
    moves: Vec<String>,
    /// `cxa` (Chinese Xiangqi Association rules, the default) or `engine`.
    #[arg(long, default_value = "cxa", value_parser = parse_ruleset)]
    ruleset: Ruleset,
    /// Natural move limit in moves by both sides (0 = off).
    #[arg(long, default_value_t = 60)]
    move_limit: u32,
    /// Checks per side that count towards the move limit.
    #[arg(long, default_value_t = 10)]
    check_cap: u32,
}

fn end_lines(e: &GameEnd) -> (String, String) {
    let winner_zh = |r: &str| match r {
        "red_wins" => "红胜",
        "black_wins" => "黑胜",
        _ => "和棋",
    };
    let cause_zh = match e.cause.code() {
        "checkmate" => "将死",
        "stalemate" => "困毙",
        "move_limit" => "自然限着",
        "dead_position" => "双方均无可能取胜",
        "perpetual_check" => "长将",
        "perpetual_chase" => "长打不变",
        _ => "循环不变作和",
    };
    (
        format!(
            "第{}着后对局结束：{}（{}，第{}条）。",
            e.ply,
            winner_zh(e.result.code()),
            cause_zh,
            e.article
        ),
        format!(
            "The game ended after ply {}: {} ({}, art. {}).",
            e.ply,
            e.result.code().replace('_', " "),
            e.cause.code().replace('_', " "),
            e.article
        ),
    )
}

/// `chuhe rules explain`: plays the moves and prints every ruling for people.
pub fn explain(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let start = crate::rules::parse_position(&args.position)
        .with_context(|| format!("position {:?}", args.position))?;
    let mut game = Game::new(
        start,
        RulesConfig {
            ruleset: args.ruleset,
            move_limit: MoveLimit {
                moves: args.move_limit,
                check_cap: args.check_cap,
            },
        },
    );
    let mut out = std::io::stdout().lock();
    for (i, text) in args.moves.iter().enumerate() {
        let pos: &Position = game.position();
        let mv = pos
            .parse_move(text)
            .with_context(|| format!("move {} ({text:?})", i + 1))?;
        let played = game
            .play(mv)
            .with_context(|| format!("move {} ({text:?})", i + 1))?;
        if let Some(w) = &played.warning {
            writeln!(out, "第{}着 / ply {}: 警告 / warning", w.ply, w.ply)?;
            write!(out, "{}", w.ruling.explain())?;
            writeln!(out)?;
        }
    }
    match game.end() {
        Some(e) => {
            if let Some(r) = &e.ruling {
                writeln!(out, "第{}着 / ply {}: 裁决 / ruling", e.ply, e.ply)?;
                write!(out, "{}", r.explain())?;
            }
            let (zh, en) = end_lines(e);
            writeln!(out, "{zh}\n{en}")?;
        }
        None => {
            if let Some(w) = game.pending_warning() {
                writeln!(
                    out,
                    "对局继续，{}须变着（第24.3条）。\nThe game goes on; {} must vary (art. 24.3).",
                    if w.side == Color::Red {
                        "红方"
                    } else {
                        "黑方"
                    },
                    w.side.name()
                )?;
            } else {
                writeln!(
                    out,
                    "对局继续，无待判局面。\nThe game goes on; no repetition ruling is pending."
                )?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
