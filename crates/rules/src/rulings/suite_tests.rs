//! Runs the repetition case suite on the arena-level referee (the integration test in
//! `tests/` runs it again through the public `Game`).
#![allow(clippy::unwrap_used)]

use super::arena::{AMove, Arena, BLACK, RED, Side};
use super::casefile::{Case, Expect, mirror_case, parse_cases};
use super::judge::{RawVerdict, Ruleset};
use super::referee::{MoveLimit, RefEvent, Referee};

const CASES: &str = include_str!("../../tests/data/repetition_cases.txt");

fn hash(a: &Arena, side: Side) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ u64::from(side);
    for &c in &a.sq {
        h = (h ^ u64::from(c)).wrapping_mul(0x100_0000_01b3);
    }
    h
}

fn sq(s: &[u8]) -> Option<u8> {
    let f = s[0].checked_sub(b'a')?;
    let r = s[1].checked_sub(b'0')?;
    (f < 9 && r < 10).then_some(r * 9 + f)
}

#[derive(Debug, Default)]
struct Outcome {
    expect: Expect,
    warns: Vec<(String, u32)>,
    classes: Vec<String>,
}

fn side_name(s: Side) -> &'static str {
    if s == RED { "red" } else { "black" }
}

fn run(c: &Case, ruleset: Ruleset) -> Result<Outcome, String> {
    let mut a = Arena::from_placement(&c.fen).ok_or("bad fen")?;
    let mut side = match c.fen.split_whitespace().nth(1) {
        Some("w" | "r") => RED,
        Some("b") => BLACK,
        _ => return Err("bad side".into()),
    };
    if a.in_check(1 - side) || a.kings_facing() {
        return Err("illegal position".into());
    }
    let limit = MoveLimit {
        moves: c.limit.0,
        check_cap: c.limit.1,
    };
    let mut referee = Referee::new(a.clone(), hash(&a, side), 0, ruleset, limit);
    let mut out = Outcome {
        expect: Expect {
            result: "ongoing".into(),
            ..Expect::default()
        },
        ..Outcome::default()
    };
    let mut first_ruling = true;
    if referee.dead_position() {
        out.expect = Expect {
            result: "draw".into(),
            reason: Some("dead_position".into()),
            article: Some("4.2.1".into()),
            ply: Some(0),
        };
    }
    let mut legal = Vec::new();
    for (i, m) in c.moves.iter().enumerate() {
        let ply = i as u32 + 1;
        if out.expect.result != "ongoing" {
            return Err(format!("move {m} at ply {ply} after the game ended"));
        }
        let b = m.as_bytes();
        if b.len() != 4 {
            return Err(format!("bad move {m}"));
        }
        let mv = AMove {
            from: sq(&b[..2]).ok_or("bad move")?,
            to: sq(&b[2..]).ok_or("bad move")?,
        };
        a.legal_moves(side, &mut legal);
        if !legal.contains(&mv) {
            return Err(format!("illegal move {m} at ply {ply}"));
        }
        a.make(mv);
        side = 1 - side;
        let check = a.in_check(side);
        if !a.has_legal_move(side) {
            out.expect = Expect {
                result: format!("{}_wins", side_name(1 - side)),
                reason: Some(if check { "checkmate" } else { "stalemate" }.into()),
                article: Some(if check { "4.1.1" } else { "4.1.3" }.into()),
                ply: Some(ply),
            };
            continue;
        }
        match referee.record(mv, hash(&a, side), check) {
            None => {}
            Some(RefEvent::MoveLimit) => {
                out.expect = Expect {
                    result: "draw".into(),
                    reason: Some("move_limit".into()),
                    article: Some("4.2.4".into()),
                    ply: Some(ply),
                };
            }
            Some(RefEvent::DeadPosition) => {
                out.expect = Expect {
                    result: "draw".into(),
                    reason: Some("dead_position".into()),
                    article: Some("4.2.1".into()),
                    ply: Some(ply),
                };
            }
            Some(RefEvent::Ruling(r)) => {
                if first_ruling {
                    first_ruling = false;
                    let pawns = r.findings.pawns_count;
                    out.classes = r
                        .entries
                        .iter()
                        .map(|e| {
                            let cl = e.raw.class(pawns);
                            let mask = if pawns { e.raw.chased_with_pawns } else { e.raw.chased };
                            if cl == super::classify::MoveClass::Chase {
                                let mut v = Vec::new();
                                for s in 0..90u8 {
                                    if mask >> s & 1 == 1 {
                                        v.push(format!("{}{}", (b'a' + s % 9) as char, s / 9));
                                    }
                                }
                                format!("chase:{}", v.join(","))
                            } else {
                                cl.code().to_string()
                            }
                        })
                        .collect();
                }
                match r.verdict {
                    RawVerdict::Loss(s, reason, art) => {
                        out.expect = Expect {
                            result: format!("{}_wins", side_name(1 - s)),
                            reason: Some(reason.code().into()),
                            article: Some(art.into()),
                            ply: Some(ply),
                        };
                    }
                    RawVerdict::Draw(art) => {
                        out.expect = Expect {
                            result: "draw".into(),
                            reason: Some("repetition_draw".into()),
                            article: Some(art.into()),
                            ply: Some(ply),
                        };
                    }
                    RawVerdict::MustVary(s, _) => out.warns.push((side_name(s).into(), ply)),
                }
            }
        }
    }
    Ok(out)
}

fn check_case(c: &Case) -> Result<(), String> {
    let o = run(c, Ruleset::Cxa)?;
    let mut problems = Vec::new();
    if o.expect != c.expect {
        problems.push(format!("cxa: expected {:?}, got {:?}", c.expect, o.expect));
    }
    let want_warn: Vec<(String, u32)> = c.warn.iter().cloned().collect();
    if o.warns != want_warn {
        problems.push(format!("warnings: expected {want_warn:?}, got {:?}", o.warns));
    }
    for (i, want) in c.classes.iter().enumerate() {
        let got = o.classes.get(i).map_or("-", String::as_str);
        let ok = if want.contains(':') { got == want } else { got.split(':').next() == Some(want) };
        if !ok {
            problems.push(format!("classes: expected {:?}, got {:?}", c.classes, o.classes));
            break;
        }
    }
    let e = run(c, Ruleset::Engine)?;
    if e.expect != c.engine {
        problems.push(format!("engine: expected {:?}, got {:?}", c.engine, e.expect));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{} (classes {:?}): {}", c.id, o.classes, problems.join("; ")))
    }
}

#[test]
fn repetition_suite_on_the_arena() {
    let cases = parse_cases(CASES).unwrap();
    let mut failures = Vec::new();
    for c in &cases {
        for case in [c.clone(), mirror_case(c).unwrap()] {
            if let Err(e) = check_case(&case) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert!(cases.len() >= 60, "only {} cases", cases.len());
}
