//! The repetition case-suite format (`tests/data/repetition_cases.txt`) and the colour
//! mirror used to run every case twice. Public so that tests and tools share one parser.
//!
//! A case is a block of `key: value` lines; blocks are separated by blank lines; `#` starts
//! a comment line. Keys:
//! - `id` (required), `source` (where the position comes from), `note`;
//! - `fen` (required);
//! - `prefix`, `loop`, `times` (default 2), `then`: the moves in ICCS — `prefix`, then
//!   `loop` repeated `times` times, then `then`;
//! - `limit`: `MOVES CHECK_CAP` for the natural move limit (default `60 10`);
//! - `expect`: `RESULT [REASON ARTICLE] @PLY` (e.g. `black_wins perpetual_check 24.1 @8`,
//!   `draw repetition_draw 24.2 @8`, `ongoing`);
//! - `engine`: the same for the `engine` ruleset (default: as `expect`);
//! - `warn`: `SIDE @PLY` — a must-vary warning is issued to SIDE at PLY (cxa);
//! - `classes`: the classes of the cycle's first moves (`check mate_threat chase idle`),
//!   a chase may name the chased squares: `chase:c7,e7`.

/// One case.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Case {
    /// Identifier.
    pub id: String,
    /// Where the position comes from.
    pub source: String,
    /// The starting FEN.
    pub fen: String,
    /// All moves in ICCS.
    pub moves: Vec<String>,
    /// Natural move limit (moves, check cap).
    pub limit: (u32, u32),
    /// Expected outcome under `cxa`.
    pub expect: Expect,
    /// Expected outcome under `engine`.
    pub engine: Expect,
    /// Expected warning under `cxa`: side and ply.
    pub warn: Option<(String, u32)>,
    /// Expected classes of the first cycle's first moves.
    pub classes: Vec<String>,
}

/// An expected outcome.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Expect {
    /// `red_wins`, `black_wins`, `draw` or `ongoing`.
    pub result: String,
    /// Reason code, if the game ended.
    pub reason: Option<String>,
    /// Article, if the game ended.
    pub article: Option<String>,
    /// Ply at which it ended.
    pub ply: Option<u32>,
}

fn parse_expect(s: &str) -> Result<Expect, String> {
    let parts: Vec<&str> = s.split_whitespace().collect();
    let mut e = Expect::default();
    let mut rest = Vec::new();
    for p in parts {
        if let Some(n) = p.strip_prefix('@') {
            e.ply = Some(n.parse().map_err(|_| format!("bad ply {p:?}"))?);
        } else {
            rest.push(p);
        }
    }
    match rest.as_slice() {
        [r] => e.result = (*r).to_string(),
        [r, reason, article] => {
            e.result = (*r).to_string();
            e.reason = Some((*reason).to_string());
            e.article = Some((*article).to_string());
        }
        _ => return Err(format!("bad expectation {s:?}")),
    }
    if !["red_wins", "black_wins", "draw", "ongoing"].contains(&e.result.as_str()) {
        return Err(format!("bad result {:?}", e.result));
    }
    Ok(e)
}

/// Parses a case file.
///
/// # Errors
/// A message naming the case and the problem.
pub fn parse_cases(text: &str) -> Result<Vec<Case>, String> {
    let mut cases = Vec::new();
    for block in text.split("\n\n") {
        let lines: Vec<&str> = block
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        if lines.is_empty() {
            continue;
        }
        let mut c = Case {
            limit: (60, 10),
            ..Case::default()
        };
        let (mut prefix, mut lp, mut then, mut times) = (Vec::new(), Vec::new(), Vec::new(), 2);
        let mut engine = None;
        for l in lines {
            let (k, v) = l
                .split_once(':')
                .ok_or_else(|| format!("line without key: {l:?}"))?;
            let v = v.trim();
            let words = || v.split_whitespace().map(str::to_string).collect::<Vec<_>>();
            match k.trim() {
                "id" => c.id = v.to_string(),
                "source" => c.source = v.to_string(),
                "note" => {}
                "fen" => c.fen = v.to_string(),
                "prefix" => prefix = words(),
                "loop" => lp = words(),
                "then" => then = words(),
                "times" => times = v.parse().map_err(|_| format!("{}: bad times", c.id))?,
                "limit" => {
                    let w: Vec<u32> = v
                        .split_whitespace()
                        .filter_map(|x| x.parse().ok())
                        .collect();
                    if w.len() != 2 {
                        return Err(format!("{}: bad limit", c.id));
                    }
                    c.limit = (w[0], w[1]);
                }
                "expect" => c.expect = parse_expect(v).map_err(|e| format!("{}: {e}", c.id))?,
                "engine" => engine = Some(parse_expect(v).map_err(|e| format!("{}: {e}", c.id))?),
                "warn" => {
                    let w: Vec<&str> = v.split_whitespace().collect();
                    match w.as_slice() {
                        [side, ply] => {
                            let ply = ply
                                .strip_prefix('@')
                                .and_then(|p| p.parse().ok())
                                .ok_or_else(|| format!("{}: bad warn", c.id))?;
                            c.warn = Some(((*side).to_string(), ply));
                        }
                        _ => return Err(format!("{}: bad warn", c.id)),
                    }
                }
                "classes" => c.classes = words(),
                other => return Err(format!("{}: unknown key {other:?}", c.id)),
            }
        }
        if c.id.is_empty() || c.fen.is_empty() {
            return Err(format!("case without id or fen near {block:?}"));
        }
        c.moves = prefix;
        for _ in 0..times {
            c.moves.extend(lp.iter().cloned());
        }
        c.moves.extend(then);
        c.engine = engine.unwrap_or_else(|| c.expect.clone());
        cases.push(c);
    }
    Ok(cases)
}

/// The colour mirror of a FEN: ranks flipped, colours swapped, the other side to move.
/// Returns `None` if the FEN has no placement or side field.
#[must_use]
pub fn mirror_fen(fen: &str) -> Option<String> {
    let mut fields = fen.split_whitespace();
    let placement = fields.next()?;
    let side = fields.next()?;
    let rows: Vec<String> = placement
        .split('/')
        .rev()
        .map(|r| {
            r.chars()
                .map(|c| {
                    if c.is_ascii_uppercase() {
                        c.to_ascii_lowercase()
                    } else {
                        c.to_ascii_uppercase()
                    }
                })
                .collect()
        })
        .collect();
    let side = match side {
        "w" | "r" => "b",
        "b" => "w",
        _ => return None,
    };
    let mut out = format!("{} {}", rows.join("/"), side);
    for f in fields {
        out.push(' ');
        out.push_str(f);
    }
    Some(out)
}

/// The colour mirror of an ICCS move (ranks flipped).
#[must_use]
pub fn mirror_iccs(mv: &str) -> Option<String> {
    let b = mv.as_bytes();
    if b.len() != 4 || !b[1].is_ascii_digit() || !b[3].is_ascii_digit() {
        return None;
    }
    Some(format!(
        "{}{}{}{}",
        b[0] as char,
        (b'9' - b[1] + b'0') as char,
        b[2] as char,
        (b'9' - b[3] + b'0') as char
    ))
}

/// The mirrored result code (`red_wins` ↔ `black_wins`) or side (`red` ↔ `black`).
#[must_use]
pub fn mirror_word(w: &str) -> String {
    match w {
        "red_wins" => "black_wins".into(),
        "black_wins" => "red_wins".into(),
        "red" => "black".into(),
        "black" => "red".into(),
        other => other.into(),
    }
}

/// The colour mirror of a case (FEN, moves, expectations; chased squares in `classes`).
#[must_use]
pub fn mirror_case(c: &Case) -> Option<Case> {
    let mirror_expect = |e: &Expect| Expect {
        result: mirror_word(&e.result),
        ..e.clone()
    };
    let classes = c
        .classes
        .iter()
        .map(|cl| match cl.split_once(':') {
            Some((k, sqs)) => {
                let m: Vec<String> = sqs
                    .split(',')
                    .map(|s| {
                        let b = s.as_bytes();
                        if b.len() == 2 && b[1].is_ascii_digit() {
                            format!("{}{}", b[0] as char, (b'9' - b[1] + b'0') as char)
                        } else {
                            s.to_string()
                        }
                    })
                    .collect();
                format!("{k}:{}", m.join(","))
            }
            None => cl.clone(),
        })
        .collect();
    Some(Case {
        id: format!("{} (mirrored)", c.id),
        fen: mirror_fen(&c.fen)?,
        moves: c
            .moves
            .iter()
            .map(|m| mirror_iccs(m))
            .collect::<Option<_>>()?,
        expect: mirror_expect(&c.expect),
        engine: mirror_expect(&c.engine),
        warn: c.warn.as_ref().map(|(s, p)| (mirror_word(s), *p)),
        classes,
        ..c.clone()
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn mirror_is_an_involution() {
        let fen = "3k5/9/9/3p5/9/9/9/9/R8/1R2K4 w - - 0 1";
        assert_eq!(mirror_fen(&mirror_fen(fen).unwrap()).unwrap(), fen);
        assert_eq!(
            mirror_fen(fen).unwrap(),
            "1r2k4/r8/9/9/9/9/3P5/9/9/3K5 b - - 0 1"
        );
        assert_eq!(mirror_iccs("h2e2").unwrap(), "h7e7");
        assert_eq!(mirror_iccs("x").as_deref(), None);
    }

    #[test]
    fn parses_blocks() {
        let text = "# c\nid: a\nfen: 4k4/9/9/9/9/9/9/9/9/3K5 w\nloop: d0d1 e9e8 d1d0 e8e9\ntimes: 2\nexpect: draw repetition_draw 24.2 @8\n\nid: b\nfen: x w\nexpect: ongoing\n";
        let cs = parse_cases(text).unwrap();
        assert_eq!(cs.len(), 2);
        assert_eq!(cs[0].moves.len(), 8);
        assert_eq!(cs[0].expect.ply, Some(8));
        assert!(parse_cases("id: z\nfen: f\nexpect: win").is_err());
        assert!(parse_cases("id: z\nfen: f\nbogus: 1").is_err());
    }
}
