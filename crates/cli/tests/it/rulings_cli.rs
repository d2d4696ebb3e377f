//! The repetition-ruling parts of `chuhe rules batch` and `chuhe rules explain`.
#![allow(clippy::unwrap_used)]

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

fn chuhe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chuhe"))
}

fn batch(input: &str) -> Vec<Value> {
    let mut child = chuhe()
        .args(["rules", "batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const CHASE: &str = "4k4/9/n8/9/9/9/9/9/2R6/3K5 w - - 0 1";

fn line(fen: &str, moves: &[&str], extra: &str) -> String {
    let moves: Vec<String> = moves.iter().map(|m| format!("\"{m}\"")).collect();
    format!(
        "{{\"fen\":\"{fen}\",\"moves\":[{}]{extra}}}\n",
        moves.join(",")
    )
}

fn lp(times: usize) -> Vec<&'static str> {
    ["c1a1", "a7c8", "a1c1", "c8a7"].repeat(times)
}

#[test]
fn warning_loss_engine_and_game_over() {
    let mut input = String::new();
    input += &line(CHASE, &lp(2), "");
    input += &line(CHASE, &lp(3), "");
    input += &line(CHASE, &lp(2), ",\"ruleset\":\"engine\"");
    let mut after = lp(3);
    after.push("c1a1");
    input += &line(CHASE, &after, "");
    input += &line(CHASE, &[], ",\"ruleset\":\"fide\"");
    let out = batch(&input);

    // Third occurrence: the game goes on with a warning to Red.
    assert_eq!(out[0]["result"], "ongoing");
    assert_eq!(out[0]["reason"], Value::Null);
    let w = &out[0]["warning"];
    assert_eq!(w["side"], "red");
    assert_eq!(w["reason"], "perpetual_chase");
    assert_eq!(w["article"], "24.3");
    assert_eq!(w["ply"], 8);
    assert_eq!(w["ruling"]["verdict"], "must_vary");
    assert_eq!(w["ruling"]["red"]["zh"], "长捉");
    assert_eq!(w["ruling"]["moves"][0]["chinese"], "车七平九");
    assert_eq!(w["ruling"]["moves"][0]["chased"][0]["square"], "a7");
    assert_eq!(w["ruling"]["moves"][0]["chased"][0]["name"], "马");
    assert!(out[0].get("ruling").is_none());

    // The same cycle once more: Red loses.
    assert_eq!(out[1]["result"], "black_wins");
    assert_eq!(out[1]["reason"], "perpetual_chase");
    assert_eq!(out[1]["article"], "24.3");
    assert_eq!(out[1]["ruling"]["after_warning"], true);
    assert_eq!(out[1]["ruling"]["side"], "red");
    assert_eq!(out[1]["legal"], serde_json::json!([]));
    assert!(out[1].get("warning").is_none());

    // Engine rules: perpetual chase of the same piece loses at once.
    assert_eq!(out[2]["result"], "black_wins");
    assert_eq!(out[2]["reason"], "perpetual_chase");
    assert_eq!(out[2]["article"], "engine");
    assert_eq!(out[2]["ruling"]["ruleset"], "engine");

    // A move after the end.
    assert_eq!(out[3]["error"]["code"], "game_over");
    assert_eq!(out[3]["error"]["ply"], 12);
    assert!(
        out[3]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ended after ply 12"),
        "{}",
        out[3]
    );

    assert_eq!(out[4]["error"]["code"], "bad_ruleset");
}

#[test]
fn draws_move_limit_and_dead_positions() {
    let mut input = String::new();
    // Both sides idle: drawn at the third occurrence.
    input += &line(
        "4k3r/9/9/9/9/9/9/9/9/R2K5 w - - 0 1",
        &[
            "d0d1", "e9f9", "d1d0", "f9e9", "d0d1", "e9f9", "d1d0", "f9e9",
        ],
        "",
    );
    // Perpetual check.
    input += &line(
        "4k4/9/9/9/9/9/9/9/R8/3K5 w - - 0 1",
        &[
            "a1a9", "e9e8", "a9a8", "e8e9", "a8a9", "e9e8", "a9a8", "e8e9", "a8a9",
        ],
        "",
    );
    // Move limit lowered to 2 moves.
    input += &line(
        "4k3r/9/9/9/9/9/9/9/9/R2K5 w - - 0 1",
        &["d0d1", "e9f9", "d1d2", "f9f8"],
        ",\"move_limit\":2",
    );
    // Dead position from the start.
    input += &line("2b1k4/4a4/9/9/9/9/9/9/4A4/2B1K4 w - - 0 1", &[], "");
    let out = batch(&input);
    assert_eq!(out[0]["result"], "draw");
    assert_eq!(out[0]["reason"], "repetition_draw");
    assert_eq!(out[0]["article"], "24.2");
    assert_eq!(out[0]["ruling"]["verdict"], "draw");
    assert_eq!(out[1]["result"], "black_wins");
    assert_eq!(out[1]["reason"], "perpetual_check");
    assert_eq!(out[1]["article"], "24.1");
    assert_eq!(out[1]["ruling"]["red"]["zh"], "长将");
    assert_eq!(out[2]["result"], "draw");
    assert_eq!(out[2]["reason"], "move_limit");
    assert_eq!(out[2]["article"], "4.2.4");
    assert!(out[2].get("ruling").is_none());
    assert_eq!(out[3]["result"], "draw");
    assert_eq!(out[3]["reason"], "dead_position");
    assert_eq!(out[3]["legal"], serde_json::json!([]));
}

#[test]
fn explain_prints_both_languages() {
    let mut args = vec!["rules".to_string(), "explain".into(), CHASE.into()];
    args.extend(lp(3).iter().map(ToString::to_string));
    let out = chuhe().args(&args).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("警告 / warning"), "{text}");
    assert!(text.contains("红方长捉"), "{text}");
    assert!(text.contains("must vary"), "{text}");
    assert!(text.contains("捉/chases 马a7"), "{text}");
    assert!(text.contains("经警告仍不变着"), "{text}");
    assert!(
        text.contains("black wins (perpetual chase, art. 24.3)"),
        "{text}"
    );

    // Chinese moves are accepted; a bad move is a clear error.
    let out = chuhe()
        .args([
            "rules",
            "explain",
            "startpos",
            "炮二平五",
            "马8进7",
            "--ruleset",
            "engine",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("no repetition ruling")
    );
    let out = chuhe()
        .args(["rules", "explain", "startpos", "炮二平九"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("move 1"), "{err}");
}

/// 29.4, 细则 7: the rook is the only guard of its king's file; "chasing" the horse and the
/// cannon in turn is idle (taking either lets Black mate by checks), so the cycle is a
/// repetition draw, not 长捉 with a warning. With a second guard on the file it is 长捉.
#[test]
fn a_false_chase_is_idle() {
    let lp = ["f4f5", "e9e8", "f5f4", "e8e9"].repeat(2);
    let mut input = String::new();
    input += &line("4k2r1/9/9/9/1c7/1n3R3/9/9/9/3p1K3 w - - 0 1", &lp, "");
    input += &line("4k2r1/9/9/9/1c7/1n3R3/9/5C3/9/3p1K3 w - - 0 1", &lp, "");
    let out = batch(&input);
    assert_eq!(out[0]["result"], "draw", "{}", out[0]);
    assert_eq!(out[0]["reason"], "repetition_draw");
    assert_eq!(out[0]["article"], "24.2");
    assert!(out[0].get("warning").is_none(), "{}", out[0]);
    let ruling = &out[0]["ruling"];
    assert_eq!(ruling["red"]["pattern"], "idle");
    assert_eq!(ruling["moves"][0]["iccs"], "f4f5");
    assert_eq!(ruling["moves"][0]["class"], "idle");
    assert_eq!(ruling["moves"][0]["chased"], serde_json::json!([]));

    assert_eq!(out[1]["result"], "ongoing", "{}", out[1]);
    assert_eq!(out[1]["warning"]["side"], "red");
    let ruling = &out[1]["warning"]["ruling"];
    assert_eq!(ruling["red"]["pattern"], "perpetual_chase");
    assert_eq!(ruling["moves"][0]["class"], "chase");
    assert_eq!(ruling["moves"][0]["chased"][0]["square"], "b5");
}

/// 4.2.4: the FEN's halfmove clock counts towards the natural move limit.
#[test]
fn the_fen_halfmove_clock_counts_for_the_move_limit() {
    let quiet = "4k4/9/9/9/9/9/9/9/9/R2K5";
    let mut input = String::new();
    input += &line(&format!("{quiet} w - - 119 60"), &["a0a1"], "");
    input += &line(&format!("{quiet} w - - 118 60"), &["a0a1"], "");
    input += &line(&format!("{quiet} w - - 120 61"), &[], "");
    input += &line(&format!("{quiet} w - - 120 61"), &["a0a1"], "");
    input += &line(
        &format!("{quiet} w - - 79 40"),
        &["a0a1"],
        ",\"move_limit\":40",
    );
    input += &line(
        &format!("{quiet} w - - 7 4"),
        &["a0a1"],
        ",\"move_limit\":4294967295",
    );
    input += &line(
        &format!("{quiet} w - - 4294967295 4"),
        &["a0a1"],
        ",\"move_limit\":0",
    );
    let out = batch(&input);
    assert_eq!(out.len(), 7);
    for i in [0, 2, 4] {
        assert_eq!(out[i]["result"], "draw", "{i}: {}", out[i]);
        assert_eq!(out[i]["reason"], "move_limit", "{i}");
        assert_eq!(out[i]["article"], "4.2.4", "{i}");
        assert_eq!(out[i]["legal"], serde_json::json!([]), "{i}");
    }
    let after = "4k4/9/9/9/9/9/9/9/R8/3K5";
    assert_eq!(out[0]["fen"], format!("{after} b - - 120 60"));
    assert_eq!(out[1]["result"], "ongoing");
    assert_eq!(out[1]["fen"], format!("{after} b - - 119 60"));
    assert_eq!(out[3]["error"]["code"], "game_over", "{}", out[3]);
    assert_eq!(out[3]["error"]["ply"], 0);
    assert_eq!(out[5]["result"], "ongoing", "{}", out[5]);
    assert_eq!(out[6]["result"], "ongoing", "{}", out[6]);
}

/// 长杀 (the cannon threatens mate from f2 and f4 in turn) against 长捉 (the rook chases it):
/// both forbidden, a draw (24.2, 26.3) with no warning, whichever colour threatens mate; the
/// ruling names both patterns, and `articles` adds the rule of art. 26.
#[test]
fn perpetual_mate_threat_against_chase_is_a_draw() {
    let red = "5P3/9/3P1kr2/9/9/5C2r/4N4/9/p2K1c3/3A5 w - - 0 1";
    let black = "3a5/P2k1C3/9/4n4/5c2R/9/9/3p1KR2/9/5p3 b - - 0 1";
    let mut input = String::new();
    input += &line(red, &["f4f2", "i4i2", "f2f4", "i2i4"].repeat(2), "");
    input += &line(black, &["f5f7", "i5i7", "f7f5", "i7i5"].repeat(2), "");
    let out = batch(&input);
    for (o, (threat, chase)) in out.iter().zip([("red", "black"), ("black", "red")]) {
        assert_eq!(o["result"], "draw", "{o}");
        assert_eq!(o["reason"], "repetition_draw");
        assert_eq!(o["article"], "24.2");
        assert!(o.get("warning").is_none(), "{o}");
        let r = &o["ruling"];
        assert_eq!(r["verdict"], "draw");
        assert_eq!(r["articles"], serde_json::json!(["24.2", "26.3"]));
        assert_eq!(r[threat]["pattern"], "perpetual_mate_threat");
        assert_eq!(r[threat]["zh"], "长杀");
        assert_eq!(r[threat]["forbidden"], true);
        assert_eq!(r[chase]["pattern"], "perpetual_chase");
        assert_eq!(r["moves"][0]["class"], "mate_threat");
        assert_eq!(r["moves"][1]["class"], "chase");
        let zh = r["text_zh"].as_str().unwrap();
        assert!(zh.contains("长杀") && zh.contains("第26.3条"), "{zh}");
        let en = r["text_en"].as_str().unwrap();
        assert!(
            en.contains("perpetual mate threat") && en.contains("26.3"),
            "{en}"
        );
    }

    // `chuhe rules explain` names 长杀 and 26.3.
    let mut args = vec!["rules".to_string(), "explain".into(), red.into()];
    args.extend(
        ["f4f2", "i4i2", "f2f4", "i2i4"]
            .repeat(2)
            .iter()
            .map(ToString::to_string),
    );
    let out = chuhe().args(&args).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("红方长杀，黑方长捉"), "{text}");
    assert!(text.contains("第24.2条、第26.3条"), "{text}");
    assert!(text.contains("perpetual mate threat"), "{text}");
    assert!(text.contains("(art. 24.2, 26.3)"), "{text}");
    assert!(text.contains("杀 mate_threat"), "{text}");
}

/// 长将 against 长杀: the checking side loses (24.1, 26.1), both colours.
#[test]
fn perpetual_check_against_mate_threat_loses() {
    let mut input = String::new();
    input += &line(
        "1r7/9/4k1P2/c8/9/2r6/9/9/9/1nB1CKC2 w - - 0 1",
        &["c0e2", "a6e6", "e2c0", "e6a6"].repeat(2),
        "",
    );
    input += &line(
        "1Nb1ckc2/9/9/9/2R6/9/C8/4K1p2/9/1R7 b - - 0 1",
        &["c9e7", "a3e3", "e7c9", "e3a3"].repeat(2),
        "",
    );
    let out = batch(&input);
    for (o, (checker, winner)) in out
        .iter()
        .zip([("red", "black_wins"), ("black", "red_wins")])
    {
        assert_eq!(o["result"], winner, "{o}");
        assert_eq!(o["reason"], "perpetual_check");
        let r = &o["ruling"];
        assert_eq!(r["side"], checker);
        assert_eq!(r[checker]["pattern"], "perpetual_check");
        let other = if checker == "red" { "black" } else { "red" };
        assert_eq!(r[other]["pattern"], "perpetual_mate_threat");
        assert_eq!(r["articles"], serde_json::json!(["24.1", "26.1"]));
    }
}
