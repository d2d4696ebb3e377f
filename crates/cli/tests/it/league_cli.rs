//! `chuhe league …` end to end: the real binary, real files, real exit codes.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

pub(crate) fn chuhe(args: &[&str]) -> Output {
    match Command::new(env!("CARGO_BIN_EXE_chuhe"))
        .args(args)
        .output()
    {
        Ok(o) => o,
        Err(e) => panic!("spawning chuhe: {e}"),
    }
}

pub(crate) fn chuhe_stdin(args: &[&str], input: &str) -> Output {
    let mut child = match Command::new(env!("CARGO_BIN_EXE_chuhe"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => panic!("spawning chuhe: {e}"),
    };
    if let Some(mut stdin) = child.stdin.take() {
        if let Err(e) = stdin.write_all(input.as_bytes()) {
            panic!("writing stdin: {e}");
        }
    }
    match child.wait_with_output() {
        Ok(o) => o,
        Err(e) => panic!("waiting for chuhe: {e}"),
    }
}

pub(crate) fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}, stderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn failure(o: &Output) -> String {
    assert!(
        !o.status.success(),
        "expected failure, got: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(o.status.code(), Some(2));
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub(crate) fn write_temp(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("league_cli");
    if let Err(e) = std::fs::create_dir_all(&dir) {
        panic!("creating {}: {e}", dir.display());
    }
    let p = dir.join(name);
    if let Err(e) = std::fs::write(&p, text) {
        panic!("writing {}: {e}", p.display());
    }
    p
}

pub(crate) fn json(s: &str) -> serde_json::Value {
    match serde_json::from_str(s) {
        Ok(v) => v,
        Err(e) => panic!("not JSON ({e}): {s}"),
    }
}

#[test]
fn schedule_json_is_the_berger_table() {
    let out = stdout(&chuhe(&["league", "schedule", "--teams", "4"]));
    assert_eq!(out, "[[[1,4],[2,3]],[[4,3],[1,2]],[[2,4],[3,1]]]\n");
    let full = stdout(&chuhe(&[
        "league",
        "schedule",
        "--teams",
        "4",
        "--format",
        "json-full",
    ]));
    assert_eq!(
        full,
        "{\"teams\":4,\"legs\":1,\"rounds\":[[[1,4],[2,3]],[[4,3],[1,2]],[[2,4],[3,1]]],\"byes\":[null,null,null]}\n"
    );
    // 6 teams, FIDE C.05 Annex 1: round 2 is 6-4, 5-3, 1-2.
    let v = json(&stdout(&chuhe(&[
        "league", "schedule", "--teams", "6", "--format", "json",
    ])));
    assert_eq!(v[1], json("[[6,4],[5,3],[1,2]]"));
    assert_eq!(v.as_array().map(Vec::len), Some(5));
}

#[test]
fn schedule_odd_double_and_table() {
    let v = json(&stdout(&chuhe(&[
        "league",
        "schedule",
        "--teams",
        "5",
        "--double",
        "--format",
        "json-full",
    ])));
    assert_eq!(v["legs"], 2);
    assert_eq!(v["rounds"].as_array().map(Vec::len), Some(10));
    assert_eq!(v["rounds"][0], json("[[2,5],[3,4]]"));
    assert_eq!(v["byes"][0], 1);
    // Second leg: colours swapped.
    assert_eq!(v["rounds"][5], json("[[5,2],[4,3]]"));
    let t = stdout(&chuhe(&[
        "league", "schedule", "--teams", "3", "--format", "table",
    ]));
    assert_eq!(
        t,
        "Round 1: 2-3 (bye: 1)\nRound 2: 1-2 (bye: 3)\nRound 3: 3-1 (bye: 2)\n"
    );
    let v = json(&stdout(&chuhe(&[
        "league",
        "schedule",
        "--teams",
        "4",
        "--double",
        "--swap-last-two",
    ])));
    assert_eq!(v[1], json("[[2,4],[3,1]]"));
}

#[test]
fn schedule_errors() {
    let e = failure(&chuhe(&["league", "schedule", "--teams", "1"]));
    assert!(
        e.contains("--teams: a round robin needs at least 2 teams, got 1"),
        "{e}"
    );
    let e = failure(&chuhe(&[
        "league", "schedule", "--teams", "4", "--format", "xml",
    ]));
    assert!(e.contains("xml"), "{e}");
    let e = failure(&chuhe(&["league", "schedule", "--teams", "four"]));
    assert!(e.contains("four"), "{e}");
    let e = failure(&chuhe(&["league", "schedule", "--teams", "5000"]));
    assert!(e.contains("at most 1000"), "{e}");
}

pub(crate) const SEASON: &str = r#"{
  "event": "Test league",
  "system": "round_robin",
  "boards": 2,
  "teams": ["A", "B", {"name": "C", "unit": "Club C"}],
  "matches": [
    {"round": 1, "first": "B", "second": "C", "boards": [
      {"first_player": "b1", "second_player": "c1", "games": [{"result": "first"}]},
      {"first_player": "b2", "second_player": "c2", "games": [{"result": "draw", "fouls": [1, 0]}]}
    ]},
    {"round": 2, "first": "C", "second": "A", "boards": [
      {"first_player": "c1", "second_player": "a1", "games": [{"result": "draw"}]},
      {"first_player": "c2", "second_player": "a2", "forfeited_by": "first"}
    ]},
    {"round": 3, "first": "A", "second": "B", "boards": [
      {"first_player": "a1", "second_player": "b1", "games": [{"result": "draw"}]},
      {"first_player": "a2", "second_player": "b2", "games": [{"result": "draw"}]}
    ]}
  ]
}"#;

#[test]
fn standings_json_and_text() {
    let p = write_temp("season.json", SEASON);
    let path = p.to_string_lossy().into_owned();
    let v = json(&stdout(&chuhe(&[
        "league",
        "standings",
        &path,
        "--format",
        "json",
    ])));
    let rows = v["rows"].as_array().cloned().unwrap_or_default();
    let teams: Vec<&str> = rows.iter().filter_map(|r| r["team"].as_str()).collect();
    // A: draw + win 3–1 = 3 场分, 5 局分; B: win 3–1 + draw = 3 场分, 5 局分; C: 0.
    // Equal on 场分, 局分, 胜场 and 胜局 (1 each); head-to-head drawn; B has the foul → A first.
    assert_eq!(teams, vec!["A", "B", "C"]);
    assert_eq!(rows[0]["match_points"], 3.0);
    assert_eq!(rows[1]["decided_by"], "fouls");
    assert_eq!(rows[1]["head_to_head"], 1.0);
    assert_eq!(rows[2]["decided_by"], "match_points");
    assert_eq!(v["criteria"][0], "match_points");
    let t = stdout(&chuhe(&["league", "standings", &path]));
    assert!(
        t.contains("排名办法（2011 14.5）：场分 > 处分 > 总局分"),
        "{t}"
    );
    let b_line = t.lines().find(|l| l.contains(" B ")).unwrap_or_default();
    assert!(b_line.trim_end().ends_with("犯规"), "{t}");
    // Standard input and board tables.
    let v = json(&stdout(&chuhe_stdin(
        &["league", "standings", "-", "--format", "json", "--boards"],
        SEASON,
    )));
    assert_eq!(v["board_tables"][0]["board"], 1);
    assert_eq!(v["board_tables"][0]["rows"][0]["player"], "b1");
}

#[test]
fn standings_withdrawal_and_swiss() {
    let with = SEASON.replace(
        "\"matches\": [",
        "\"withdrawals\": [{\"team\": \"C\", \"after_round\": 2}],\n  \"matches\": [",
    );
    // C played 2 of 2 scheduled matches (3 teams, single round robin): results stand.
    let v = json(&stdout(&chuhe_stdin(
        &["league", "standings", "-", "--format", "json"],
        &with,
    )));
    assert_eq!(v["rows"][2]["withdrawn"], "results_stand");
    let swiss = r#"{"system": "swiss", "boards": 1, "teams": ["A", "B", "C"],
      "matches": [{"round": 1, "first": "A", "second": "B", "boards": [{"games": [{"result": "first"}]}]}],
      "byes": [{"round": 1, "team": "C"}]}"#;
    let v = json(&stdout(&chuhe_stdin(
        &["league", "standings", "-", "--format", "json"],
        swiss,
    )));
    assert_eq!(v["ranking"], "2011 14.6");
    let c = v["rows"]
        .as_array()
        .and_then(|r| r.iter().find(|x| x["team"] == "C").cloned());
    assert_eq!(c.map(|c| c["match_points"].clone()), Some(json("2.0")));
}

#[test]
fn standings_errors_name_the_field_and_line() {
    let bad_team = SEASON.replace("\"second\": \"A\"", "\"second\": \"Z\"");
    let e = failure(&chuhe_stdin(&["league", "standings", "-"], &bad_team));
    assert!(
        e.contains("matches[1].second (line 11): unknown team \"Z\""),
        "{e}"
    );

    let bad_result = SEASON.replace("{\"result\": \"first\"}", "{\"result\": \"win\"}");
    let e = failure(&chuhe_stdin(&["league", "standings", "-"], &bad_result));
    assert!(
        e.contains("unknown variant `win`") && e.contains("line 8"),
        "{e}"
    );

    let three_boards = SEASON.replace("\"boards\": 2", "\"boards\": 3");
    let e = failure(&chuhe_stdin(&["league", "standings", "-"], &three_boards));
    assert!(
        e.contains("matches[0].boards (line 7): 2 boards given, the event has 3"),
        "{e}"
    );

    let e = failure(&chuhe_stdin(
        &["league", "standings", "-"],
        "{\"system\": \"round_robin\"",
    ));
    assert!(
        e.contains("invalid results file") && e.contains("line 1"),
        "{e}"
    );

    let unknown_field = SEASON.replace("\"event\"", "\"evnt\"");
    let e = failure(&chuhe_stdin(&["league", "standings", "-"], &unknown_field));
    assert!(e.contains("unknown field `evnt`"), "{e}");

    let chain = SEASON.replace(
        "\"boards\": 2,",
        "\"boards\": 2, \"result_chain\": {\"preset\": \"slow-fast-armageddon\", \"time_controls\": [\"20+10\", \"5+3\", \"4+0\"]},",
    );
    // A drawn slow game now needs its fast game.
    let e = failure(&chuhe_stdin(&["league", "standings", "-"], &chain));
    assert!(e.contains("matches[0] (line 7): board 2: game 1 was drawn, so stage \"fast\" is still to be played"), "{e}");

    // A team twice in one round: the second match is named.
    let twice = SEASON.replace(
        "{\"round\": 2, \"first\": \"C\"",
        "{\"round\": 1, \"first\": \"C\"",
    );
    let e = failure(&chuhe_stdin(&["league", "standings", "-"], &twice));
    assert!(
        e.contains("matches[1] (line 11): team \"C\" plays more than once in round 1"),
        "{e}"
    );

    let withdrawn = SEASON.replace(
        "\"matches\": [",
        "\"withdrawals\": [{\"team\": \"A\", \"after_round\": 2}],\n  \"matches\": [",
    );
    let e = failure(&chuhe_stdin(&["league", "standings", "-"], &withdrawn));
    assert!(
        e.contains("matches[2] (line 16): team \"A\" withdrew after round 2 but plays in round 3"),
        "{e}"
    );

    let e = failure(&chuhe(&["league", "standings", "/nonexistent/season.json"]));
    assert!(e.contains("reading /nonexistent/season.json"), "{e}");
}

#[test]
fn score_sheets_csv_and_html() {
    let csv = stdout(&chuhe_stdin(
        &["league", "sheet", "-", "--round", "2"],
        SEASON,
    ));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("event,round,date,table,board,red_unit,red_player"));
    // A team whose unit differs from its name is named with the unit in brackets.
    assert_eq!(
        lines[1],
        "Test league,2,,1,1,C（Club C）,c1,A,a1,1,1,,,0,0,draw"
    );
    assert_eq!(
        lines[2],
        "Test league,2,,1,2,A,a2,C（Club C）,c2,2,0,+,-,0,0,forfeit"
    );
    let html = stdout(&chuhe_stdin(
        &["league", "sheet", "-", "--format", "html"],
        SEASON,
    ));
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<section class=\"sheet\">").count(), 3);
    assert!(html.contains("break-after: page"));
    let e = failure(&chuhe_stdin(
        &["league", "sheet", "-", "--round", "9"],
        SEASON,
    ));
    assert!(e.contains("no matches in round 9"), "{e}");
}

#[test]
fn the_readme_example_season_works() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../league/examples/season.json"
    );
    let v = json(&stdout(&chuhe(&[
        "league",
        "standings",
        path,
        "--format",
        "json",
        "--boards",
    ])));
    let teams: Vec<&str> = v["rows"]
        .as_array()
        .map(|r| r.iter().filter_map(|x| x["team"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(teams, vec!["成都", "杭州", "北京", "深圳"]);
    assert_eq!(v["rows"][1]["decided_by"], "game_points");
    assert_eq!(v["rows"][3]["penalties"]["warnings"], 1);
    let csv = stdout(&chuhe(&["league", "sheet", path, "--round", "2"]));
    assert!(
        csv.contains("2026 城市象棋联赛,2,2026-11-08,2,1,杭州（浙江）,王一,成都（四川）,李一,2,1,,,0,0,armageddon"),
        "{csv}"
    );
}

pub(crate) const SWISS: &str = r#"{"system": "swiss", "boards": 2,
  "teams": [{"name": "A", "unit": "X"}, {"name": "B", "unit": "X"}, "C", "D", "E"],
  "matches": [
    {"round": 1, "first": "A", "second": "D", "boards": [{"games": [{"result": "first"}]}, {"games": [{"result": "draw"}]}]},
    {"round": 1, "first": "C", "second": "B", "boards": [{"games": [{"result": "draw"}]}, {"games": [{"result": "draw"}]}]}
  ],
  "byes": [{"round": 1, "team": "E"}]
}"#;

#[test]
fn pair_swiss_rounds() {
    // Round 1 from an empty file: 1–2 would be two teams of unit X, so 2 and 4 swap.
    let empty = SWISS.replace(
        "\"byes\": [{\"round\": 1, \"team\": \"E\"}]",
        "\"byes\": []",
    );
    let empty = empty
        .split("\"matches\"")
        .next()
        .map(|h| format!("{h}\"matches\": []}}"))
        .unwrap_or_default();
    let v = json(&stdout(&chuhe_stdin(&["league", "pair", "-"], &empty)));
    assert_eq!(v["round"], 1);
    assert_eq!(v["pairings"], json("[[1,4],[2,3]]"));
    assert_eq!(v["bye"], 5);
    // Round 2: A and E lead on 2; A–E would leave B–C, a rematch, so A meets B (B moves first:
    // it moved second in round 1), E meets C; D, lowest without a bye, sits out.
    let v = json(&stdout(&chuhe_stdin(&["league", "pair", "-"], SWISS)));
    assert_eq!(v["round"], 2);
    assert_eq!(v["pairings"], json("[[2,1],[5,3]]"));
    assert_eq!(v["names"][0], json("[\"B\",\"A\"]"));
    assert_eq!(v["bye_name"], "D");
    let t = stdout(&chuhe_stdin(
        &["league", "pair", "-", "--format", "table"],
        SWISS,
    ));
    assert!(t.starts_with("Round 2\n  table 1: B (2) - A (1)\n"), "{t}");
    // A withdrawn team is not paired.
    let w = SWISS.replace(
        "\"byes\"",
        "\"withdrawals\": [{\"team\": \"C\", \"after_round\": 1}], \"byes\"",
    );
    let v = json(&stdout(&chuhe_stdin(&["league", "pair", "-"], &w)));
    let flat: Vec<u64> = v["pairings"]
        .as_array()
        .map(|p| {
            p.iter()
                .flat_map(|x| x.as_array().cloned().unwrap_or_default())
                .filter_map(|n| n.as_u64())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(flat.len(), 4);
    assert!(!flat.contains(&3));
    assert_eq!(v["bye"], serde_json::Value::Null);
    // Not a Swiss.
    let e = failure(&chuhe_stdin(&["league", "pair", "-"], SEASON));
    assert!(e.contains("pair is for a Swiss"), "{e}");
}

#[test]
fn knockout_bracket() {
    let v = json(&stdout(&chuhe(&["league", "bracket", "--teams", "6"])));
    assert_eq!(v["size"], 8);
    assert_eq!(v["matches"], json("[[1,null],[4,5],[2,null],[3,6]]"));
    let t = stdout(&chuhe(&[
        "league", "bracket", "--teams", "4", "--format", "table",
    ]));
    assert_eq!(t, "Match 1: 1-4\nMatch 2: 2-3\n");
    let e = failure(&chuhe(&["league", "bracket", "--teams", "0"]));
    assert!(e.contains("--teams"), "{e}");
}
