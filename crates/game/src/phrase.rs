//! Explanations as a code with parameters ([`Phrase`](t::Phrase), `chuhe.v1.Phrase` on the wire), so that each client words them
//! in its own language; the English `explanation` strings stay beside them. The codes and their
//! parameters are listed in docs/protocol.md ("Phrases"). Pure.

use crate::types::{self as t, Side};
use chuhe_rules::Color;
use chuhe_rules::rulings::{self, Reason, Ruleset, Verdict};

/// A phrase with its parameters (values already text).
pub fn phrase(code: &str, params: &[(&str, String)]) -> t::Phrase {
    t::Phrase {
        code: code.into(),
        params: params
            .iter()
            .map(|(name, value)| t::PhraseParam {
                name: (*name).into(),
                value: value.clone(),
            })
            .collect(),
    }
}

/// "red" or "black".
pub fn side_code(s: Side) -> String {
    match s {
        Side::Red => "red",
        Side::Black => "black",
    }
    .into()
}

fn color_code(c: Color) -> String {
    match c {
        Color::Red => "red",
        Color::Black => "black",
    }
    .into()
}

/// The pieces `side` chased over the cycle, each once: FEN letter and square, e.g. "Rc6,nd4".
fn chased(r: &rulings::Ruling, side: Color) -> String {
    let mut out: Vec<String> = Vec::new();
    for m in r.moves.iter().filter(|m| m.side == side) {
        for c in &m.chased {
            let s = format!("{}{}", c.piece.fen_char(), c.square);
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out.join(",")
}

/// A repetition ruling as a phrase: `ruling.loss`, `ruling.loss_after_warning`,
/// `ruling.loss_engine_chase`, `ruling.draw`, `ruling.draw_engine` or `ruling.must_vary`, with
/// `red` and `black` (each side's pattern code), `red_chased`/`black_chased`, `side` (the losing
/// or warned side), `forbidden` (`both` or `none`, for a draw) and `article`.
pub fn ruling(r: &rulings::Ruling) -> t::Phrase {
    let mut params = vec![
        ("red", r.red.code().to_string()),
        ("black", r.black.code().to_string()),
        ("red_chased", chased(r, Color::Red)),
        ("black_chased", chased(r, Color::Black)),
        ("article", r.article.to_string()),
    ];
    let code = match r.verdict {
        Verdict::Loss { loser } => {
            params.push(("side", color_code(loser)));
            if r.after_warning {
                "ruling.loss_after_warning"
            } else if r.ruleset == Ruleset::Engine && r.reason == Reason::PerpetualChase {
                "ruling.loss_engine_chase"
            } else {
                "ruling.loss"
            }
        }
        Verdict::Draw => {
            let both = r.red.forbidden() && r.black.forbidden();
            params.push(("forbidden", if both { "both" } else { "none" }.into()));
            if r.ruleset == Ruleset::Engine {
                "ruling.draw_engine"
            } else {
                "ruling.draw"
            }
        }
        Verdict::MustVary { offender } => {
            params.push(("side", color_code(offender)));
            "ruling.must_vary"
        }
    };
    phrase(code, &params)
}

/// The end of a game by the rules of the board (mate, 困毙, move limit, dead position; a
/// repetition ending is its ruling's phrase).
pub fn board_end(cause: rulings::EndCause, loser: Side, ruling: Option<&t::Ruling>) -> t::Phrase {
    use rulings::EndCause as E;
    let sides = || {
        vec![
            ("side", side_code(loser)),
            ("winner", side_code(crate::side::other(loser))),
        ]
    };
    match cause {
        E::Checkmate => {
            let mut p = sides();
            p.push(("article", "4.1.1".into()));
            phrase("ended.checkmate", &p)
        }
        E::Stalemate => {
            let mut p = sides();
            p.push(("article", "4.1.3".into()));
            phrase("ended.stalemate", &p)
        }
        E::MoveLimit => phrase("ended.move_limit", &[("article", "4.2.4".into())]),
        E::DeadPosition => phrase("ended.dead_position", &[("article", "4.2.1".into())]),
        E::PerpetualCheck | E::PerpetualChase | E::RepetitionDraw => ruling
            .and_then(|r| r.phrase.clone())
            .unwrap_or_else(|| phrase("ended.repetition", &[])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_keep_their_order_and_text() {
        let p = phrase("ended.resign", &[("side", side_code(Side::Black))]);
        assert_eq!(p.code, "ended.resign");
        assert_eq!(p.params.len(), 1);
        assert_eq!(p.params[0].name, "side");
        assert_eq!(p.params[0].value, "black");
    }

    #[test]
    fn a_mate_names_loser_winner_and_article() {
        let p = board_end(rulings::EndCause::Checkmate, Side::Black, None);
        let get = |n: &str| {
            p.params
                .iter()
                .find(|x| x.name == n)
                .map(|x| x.value.clone())
        };
        assert_eq!(p.code, "ended.checkmate");
        assert_eq!(get("side").as_deref(), Some("black"));
        assert_eq!(get("winner").as_deref(), Some("red"));
        assert_eq!(get("article").as_deref(), Some("4.1.1"));
    }
}
