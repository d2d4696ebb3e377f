//! `chuhe rules perft` and `chuhe rules batch` through the built binary.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::process::{Command, Stdio};

fn chuhe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chuhe"))
}

#[test]
fn perft_prints_divide_then_total() {
    let out = chuhe()
        .args(["rules", "perft", "startpos", "3"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 45);
    assert_eq!(*lines.last().unwrap(), "79666");
    assert!(lines.contains(&"h2e2 1564"), "{text}");
    let sum: u64 = lines[..44]
        .iter()
        .map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 79666);
}

#[test]
fn perft_from_fen_and_errors() {
    let out = chuhe()
        .args(["rules", "perft", "3k5/R8/9/9/9/9/9/9/9/4K4 b - - 0 1", "2"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "0\n");
    let out = chuhe()
        .args(["rules", "perft", "not a fen", "2"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("the board has 1 ranks"), "{err}");
}

fn batch(input: &str) -> Vec<serde_json::Value> {
    batch_bytes(input.as_bytes())
}

fn batch_bytes(input: &[u8]) -> Vec<serde_json::Value> {
    let mut child = chuhe()
        .args(["rules", "batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn batch_answers_every_line_in_order() {
    let input = [
        r#"{"fen": "startpos", "moves": ["h2e2", "h9g7"]}"#,
        r#"not json"#,
        r#"{"fen": "rnbakabnr/9/1c5c1 w", "moves": []}"#,
        r#"{"fen": "startpos", "moves": ["h2e2", "h2-e2x"]}"#,
        r#"{"fen": "startpos", "moves": ["h2e2", "e9d9"]}"#,
        r#"{"fen": "3k5/R8/3R5/9/9/9/9/9/9/4K4 b - - 0 1", "moves": ["d9e9"]}"#,
        r#"{"fen": "3k5/R8/3R5/9/9/9/9/9/9/4K4 b - - 0 1"}"#,
        r#"{"fen": "3k5/R8/9/9/9/9/9/9/9/4K4 b - - 0 1", "moves": []}"#,
        r#"{"fen": "3k5/9/9/9/9/9/9/9/4R4/4K4 w", "moves": ["e1d1"]}"#,
        "",
        r#"{"fen": "startpos", "moves": ["H2-E2"]}"#,
    ]
    .join("\n");
    let out = batch(&input);
    assert_eq!(out.len(), 11);

    let first = &out[0];
    assert_eq!(
        first["fen"],
        "rnbakab1r/9/1c4nc1/p1p1p1p1p/9/9/P1P1P1P1P/1C2C4/9/RNBAKABNR w - - 2 2"
    );
    assert_eq!(first["wxf"], serde_json::json!(["C2=5", "H8+7"]));
    assert_eq!(first["chinese"], serde_json::json!(["炮二平五", "马8进7"]));
    assert_eq!(first["in_check"], false);
    assert_eq!(first["result"], "ongoing");
    assert_eq!(first["reason"], serde_json::Value::Null);
    let legal: Vec<&str> = first["legal"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(legal.len(), 35);
    let mut sorted = legal.clone();
    sorted.sort_unstable();
    assert_eq!(legal, sorted);

    let code = |i: usize| out[i]["error"]["code"].as_str().unwrap().to_string();
    let ply = |i: usize| out[i]["error"]["ply"].as_u64().unwrap();
    assert_eq!((code(1).as_str(), ply(1)), ("bad_json", 0));
    assert_eq!((code(2).as_str(), ply(2)), ("bad_fen", 0));
    assert_eq!((code(3).as_str(), ply(3)), ("bad_move_syntax", 1));
    assert_eq!((code(4).as_str(), ply(4)), ("illegal_move", 1));
    assert!(
        out[4]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("e9d9")
    );
    assert_eq!((code(5).as_str(), ply(5)), ("game_over", 0));

    assert_eq!(out[6]["result"], "red_wins");
    assert_eq!(out[6]["reason"], "checkmate");
    assert_eq!(out[6]["in_check"], true);
    assert_eq!(out[6]["legal"], serde_json::json!([]));
    assert_eq!(out[7]["result"], "red_wins");
    assert_eq!(out[7]["reason"], "stalemate");
    assert_eq!(out[7]["in_check"], false);
    // Red mates with the rook: black to move, in check.
    assert_eq!(out[8]["in_check"], true);
    assert_eq!(code(9), "bad_json");
    assert_eq!(out[10]["wxf"], serde_json::json!(["C2=5"]));
}

#[test]
fn batch_survives_bad_bytes_and_odd_input() {
    let mut input = b"{\"fen\": \"startpos\"}\r\n".to_vec();
    input.extend_from_slice(b"\xff\xfe\n");
    input.extend_from_slice(br#"{"fen": 42}"#);
    input.extend_from_slice(b"\n");
    input.extend_from_slice(br#"{"fen": "startpos", "moves": "h2e2"}"#);
    input.extend_from_slice(b"\n");
    input.extend_from_slice(br#"{"fen": "startpos", "moves": ["h2e2"], "extra": true}"#);
    let out = batch_bytes(&input);
    assert_eq!(out.len(), 5);
    assert_eq!(out[0]["legal"].as_array().unwrap().len(), 44);
    for v in &out[1..4] {
        assert_eq!(v["error"]["code"], "bad_json", "{v}");
    }
    assert_eq!(out[4]["chinese"], serde_json::json!(["炮二平五"]));
}

/// A FEN without the side to move is refused by every command that takes a FEN (it used to be
/// read as Red to move).
#[test]
fn a_fen_without_the_side_to_move_is_refused_everywhere() {
    let board = "4k4/9/9/9/9/9/9/9/9/R2K5";
    let input = [
        format!(r#"{{"fen": "{board}", "moves": []}}"#),
        format!(r#"{{"fen": "  {board}  ", "moves": ["a0a1"]}}"#),
        format!(r#"{{"fen": "{board} b", "moves": ["e9e8"]}}"#),
    ]
    .join("\n");
    let out = batch(&input);
    assert_eq!(out.len(), 3);
    for v in &out[..2] {
        assert_eq!(v["error"]["code"], "bad_fen", "{v}");
        assert_eq!(v["error"]["ply"], 0, "{v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains("side to move is missing"), "{message}");
    }
    assert_eq!(out[2]["fen"], "9/4k4/9/9/9/9/9/9/9/R2K5 w - - 1 2");

    for args in [
        vec!["rules", "perft", board, "1"],
        vec!["rules", "explain", board, "a0a1"],
    ] {
        let out = chuhe().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("side to move is missing"), "{args:?}: {err}");
    }
}
