//! `chuhe league …` for the records an arbiter prints and the rules added with them: two
//! withdrawn teams, forfeits as the 规程 sets them, 除名, sheets, tables, Elo, knockout rounds.

use super::league_cli::{chuhe, chuhe_stdin, failure, json, stdout};

/// Six teams by the Berger table (team order = draw numbers), one board.
fn six(extra: &str, matches: &str) -> String {
    format!(
        r#"{{"system": "round_robin", "boards": 1, "schedule": "berger", {extra}
  "teams": ["T1", "T2", "T3", "T4", "T5", "T6"],
  "matches": [{matches}]}}"#
    )
}

/// Rounds 1–3 of the six-team Berger table (1-6 2-5 3-4 / 6-4 5-3 1-2 / 2-6 3-1 4-5), all
/// won by the first-listed team.
const R1_3: &str = r#"
  {"round": 1, "first": "T1", "second": "T6", "boards": [{"games": [{"result": "first"}]}]},
  {"round": 1, "first": "T2", "second": "T5", "boards": [{"games": [{"result": "first"}]}]},
  {"round": 1, "first": "T3", "second": "T4", "boards": [{"games": [{"result": "first"}]}]},
  {"round": 2, "first": "T6", "second": "T4", "boards": [{"games": [{"result": "first"}]}]},
  {"round": 2, "first": "T5", "second": "T3", "boards": [{"games": [{"result": "first"}]}]},
  {"round": 2, "first": "T1", "second": "T2", "boards": [{"games": [{"result": "first"}]}]},
  {"round": 3, "first": "T2", "second": "T6", "boards": [{"games": [{"result": "first"}]}]},
  {"round": 3, "first": "T3", "second": "T1", "boards": [{"games": [{"result": "first"}]}]},
  {"round": 3, "first": "T4", "second": "T5", "boards": [{"games": [{"result": "first"}]}]}"#;

/// A round-4 or 5 match of the Berger table, won by the first-listed team.
fn later(round: u32, first: &str, second: &str) -> String {
    format!(
        r#",
  {{"round": {round}, "first": "{first}", "second": "{second}", "boards": [{{"games": [{{"result": "first"}}]}}]}}"#
    )
}

#[test]
fn two_withdrawn_teams_do_not_win_their_meeting() {
    // T4 and T5 both leave after round 3 (3 of 5 played: results stand). They met in round 3;
    // T5 and T6 meet in round 4 (6-5): T5 gone, T6 wins. Listed in either order: same table.
    // Rounds 4 (6-5 1-4 2-3) and 5 (3-6 4-2 5-1) played by the teams still in: the forfeits
    // count once their rounds are in the file (the table after round N holds rounds ≤ N).
    let to5 = format!("{R1_3}{}{}", later(4, "T2", "T3"), later(5, "T5", "T1"));
    let forward = six(
        r#""withdrawals": [{"team": "T4", "after_round": 3}, {"team": "T6", "after_round": 3}],"#,
        &to5,
    );
    let backward = six(
        r#""withdrawals": [{"team": "T6", "after_round": 3}, {"team": "T4", "after_round": 3}],"#,
        &to5,
    );
    // After round 3 only: nothing of rounds 4 and 5 yet.
    let after3 = json(&stdout(&chuhe_stdin(
        &["league", "standings", "-", "--format", "json"],
        &six(
            r#""withdrawals": [{"team": "T4", "after_round": 3}, {"team": "T6", "after_round": 3}],"#,
            R1_3,
        ),
    )));
    assert_eq!(after3["generated_forfeits"], json("[]"));
    let a = json(&stdout(&chuhe_stdin(
        &["league", "standings", "-", "--format", "json"],
        &forward,
    )));
    let b = json(&stdout(&chuhe_stdin(
        &["league", "standings", "-", "--format", "json"],
        &backward,
    )));
    assert_eq!(a["rows"], b["rows"]);
    // T4 and T6 met in round 2 (6-4); their other unplayed meetings go to the teams still in.
    let forfeits = a["generated_forfeits"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        forfeits
            .iter()
            .all(|f| [&f["winner"], &f["withdrawn"]] != ["T4", "T6"]
                && [&f["winner"], &f["withdrawn"]] != ["T6", "T4"]),
        "{forfeits:?}"
    );
    assert_eq!(forfeits.len(), 4, "{forfeits:?}");
    assert!(forfeits.iter().all(|f| f["round"].as_u64() > Some(3)));
}

#[test]
fn a_meeting_after_both_left_is_a_double_forfeit_and_unknown_rounds_are_refused() {
    // T1 and T5 leave after round 3: T5–T1 meet in round 5 (5-1) after both left: a forfeit
    // by both (20.3 均作弃权), 0 场分 each, played and lost by both.
    let to5 = format!(
        "{R1_3}{}{}{}",
        later(4, "T2", "T3"),
        later(5, "T3", "T6"),
        later(5, "T4", "T2")
    );
    let file = six(
        r#""withdrawals": [{"team": "T1", "after_round": 3}, {"team": "T5", "after_round": 3}],"#,
        &to5,
    );
    let v = json(&stdout(&chuhe_stdin(
        &["league", "standings", "-", "--format", "json"],
        &file,
    )));
    assert_eq!(v["void_meetings"], json("[]"));
    assert_eq!(
        v["double_forfeits"],
        json(r#"[{"teams": ["T1", "T5"], "round": 5}]"#)
    );
    for team in ["T1", "T5"] {
        let row = v["rows"]
            .as_array()
            .and_then(|r| r.iter().find(|x| x["team"] == team).cloned())
            .unwrap_or_default();
        assert_eq!(row["played"], 5, "{row}");
    }
    let t = stdout(&chuhe_stdin(&["league", "standings", "-"], &file));
    assert!(
        t.contains("双方均已退出，未赛对局均作弃权（20.3）：\n  T1 - : - T5（第5轮）"),
        "{t}"
    );
    // Different departures and no schedule: the rules cannot tell, so the file is refused.
    let file = six(
        r#""withdrawals": [{"team": "T1", "after_round": 3}, {"team": "T5", "after_round": 4}],"#,
        R1_3,
    )
    .replace(r#""schedule": "berger","#, "");
    let e = failure(&chuhe_stdin(&["league", "standings", "-"], &file));
    assert!(
        e.contains("teams \"T1\" and \"T5\" withdrew (after rounds 3 and 4) without meeting; give \"schedule\""),
        "{e}"
    );
}

#[test]
fn forfeit_scoring_is_an_event_setting_and_expulsion_is_its_own_penalty() {
    let season = r#"{"system": "round_robin", "boards": 2, "teams": ["A", "B", "C"], FORFEITS
      "matches": [
        {"round": 1, "first": "A", "second": "B", "forfeited_by": "second"},
        {"round": 2, "first": "C", "second": "A", "boards": [
          {"games": [{"result": "draw"}]}, {"games": [{"result": "draw"}]}]},
        {"round": 3, "first": "B", "second": "C", "boards": [
          {"games": [{"result": "second"}]}, {"games": [{"result": "draw"}]}]}
      ]}"#;
    let run = |forfeits: &str| {
        json(&stdout(&chuhe_stdin(
            &["league", "standings", "-", "--format", "json"],
            &season.replace("FORFEITS", forfeits),
        )))
    };
    // Default: the walkover counts every board as won (A: 4 + 2 局分).
    let v = run("");
    assert_eq!(v["rows"][0]["team"], "A");
    assert_eq!(v["rows"][0]["game_points"], 6.0);
    // The 规程 says a forfeited match counts 0–0 in 局分 (and a forfeited board 1–0): C played
    // two matches and now ranks above A on 总局分 (C: 2 + 3 = 5, A: 0 + 2 = 2).
    let v = run(r#""forfeits": {"board": [1, 0], "match_game_points": [0, 0]},"#);
    let row = |t: &str| {
        v["rows"]
            .as_array()
            .and_then(|r| r.iter().find(|x| x["team"] == t).cloned())
            .unwrap_or_default()
    };
    assert_eq!(row("A")["game_points"], 2.0);
    assert_eq!(row("C")["game_points"], 5.0);
    assert_eq!(v["rows"][0]["team"], "C");
    assert_eq!(v["rows"][1]["decided_by"], "game_points");
    let e = failure(&chuhe_stdin(
        &["league", "standings", "-"],
        &season.replace("FORFEITS", r#""forfeits": {"match_game_points": "half"},"#),
    ));
    assert!(
        e.contains("forfeits.match_game_points (line 1): unknown \"half\""),
        "{e}"
    );

    // 除名 (18.3): B expelled after round 1 (1 of 2 played: half, results stand).
    let expelled = season.replace(
        "FORFEITS",
        r#""penalties": [{"team": "B", "kind": "expulsion", "after_round": 1}],"#,
    );
    let cut = expelled
        .split("{\"round\": 3")
        .next()
        .map(|h| format!("{}]}}", h.trim_end().trim_end_matches(',')))
        .unwrap_or_default();
    let v = json(&stdout(&chuhe_stdin(
        &["league", "standings", "-", "--format", "json"],
        &cut,
    )));
    let b = v["rows"]
        .as_array()
        .and_then(|r| r.iter().find(|x| x["team"] == "B").cloned())
        .unwrap_or_default();
    assert_eq!(b["expelled"], true);
    assert_eq!(b["withdrawn"], "results_stand");
    assert_eq!(b["penalties"]["disqualifications"], 0);
    assert_eq!(v["generated_forfeits"][0]["winner"], "C");
    let t = stdout(&chuhe_stdin(&["league", "standings", "-"], &cut));
    assert!(t.contains("除名（18.3），成绩有效"), "{t}");
    let t = stdout(&chuhe_stdin(
        &["league", "standings", "-", "--lang", "en"],
        &cut,
    ));
    assert!(t.contains("expelled (除名, 18.3); results stand"), "{t}");
    let e = failure(&chuhe_stdin(
        &["league", "standings", "-"],
        &season.replace(
            "FORFEITS",
            r#""penalties": [{"team": "B", "kind": "expulsion"}],"#,
        ),
    ));
    assert!(
        e.contains("an expulsion (18.3) needs \"after_round\""),
        "{e}"
    );
    let _ = chuhe;
}

#[test]
fn standings_as_csv_and_html_with_crosstable_and_boards() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../league/examples/season.json"
    );
    let csv = stdout(&chuhe(&[
        "league",
        "standings",
        path,
        "--format",
        "csv",
        "--crosstable",
        "--boards",
        "--bom",
    ]));
    assert!(
        csv.starts_with("\u{feff}2026 城市象棋联赛\r\n排名办法（2011 14.5）："),
        "{csv}"
    );
    assert!(csv.contains("\r\n团体名次\r\n名次,队名,场次,胜,和,负,场分,局分,胜局,犯规,后走胜局,后走局数,直胜,决定名次\r\n"), "{csv}");
    assert!(
        csv.contains("\r\n1,成都,2,1,1,0,3,13,5,0,0,2,,总局分\r\n"),
        "{csv}"
    );
    assert!(csv.contains("\r\n循环赛成绩表\r\n名次,队名,1,2,3,4,场分,局分,决定名次\r\n1,成都,×,\"=\"\"5:5\"\"\",+,,3,13,总局分\r\n"), "{csv}");
    assert!(csv.contains("\r\n第1台\r\n"), "{csv}");
    let html = stdout(&chuhe(&[
        "league",
        "standings",
        path,
        "--format",
        "html",
        "--crosstable",
        "--lang",
        "en",
    ]));
    assert!(
        html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"),
        "{html}"
    );
    assert!(html.contains("<h1>2026 城市象棋联赛</h1>"));
    assert!(html.contains("<th>Decided by</th>"));
    assert!(html.contains("<td>game points</td>"), "{html}");
    assert!(html.contains("<h2>Crosstable</h2>"));
    let text = stdout(&chuhe(&["league", "standings", path, "--lang", "en"]));
    assert!(
        text.contains("Ranking (2011 14.5): match points > penalties > game points"),
        "{text}"
    );
}

#[test]
fn score_sheets_as_arbiters_use_them() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../league/examples/season.json"
    );
    // One match, as printed: the seed's labels, team columns, every game of the chain.
    let html = stdout(&chuhe(&[
        "league", "sheet", path, "--round", "1", "--table", "1", "--format", "html",
    ]));
    assert_eq!(html.matches("<section class=\"sheet\">").count(), 1);
    for label in [
        "象棋比赛计分表",
        "第 1 轮",
        "2026年11月1日",
        "桌次：1",
        "单位：杭州（浙江）（1、3台执红）",
        "单位：深圳（2、4台执红）",
        "<th>犯规次数</th>",
        "<th>签字</th>",
        "决出",
        "<td class=\"stage\">超快棋</td>",
        "黑（选色）",
        "和（判胜）",
        "局分 杭州（浙江） 7 : 3 深圳",
        "场分 2 : 0",
    ] {
        assert!(html.contains(label), "{label} missing: {html}");
    }
    assert!(html.contains("@page { size: A4 landscape;"));
    let en = stdout(&chuhe(&[
        "league", "sheet", path, "--round", "1", "--table", "1", "--format", "html", "--lang", "en",
    ]));
    assert!(
        en.contains("Team: 杭州（浙江） (Red on board 1, 3)"),
        "{en}"
    );
    assert!(!en.contains("签字"));
    // The form as CSV for Excel/WPS: BOM, Chinese labels, one block per match.
    let form = stdout(&chuhe(&[
        "league", "sheet", path, "--round", "2", "--format", "form-csv",
    ]));
    assert!(
        form.starts_with(
            "\u{feff}象棋比赛计分表\r\n2026 城市象棋联赛,第 2 轮,2026年11月8日,桌次：1\r\n"
        ),
        "{form}"
    );
    assert_eq!(form.matches("象棋比赛计分表").count(), 2);
    // The captains sign too; scores stay text in a spreadsheet (="…").
    assert_eq!(
        form.matches("\r\n双方队长签字,,,裁判员签字,,裁判长签字,\r\n")
            .count(),
        2
    );
    assert!(
        form.contains("局分,\"=\"\"2 : 6\"\"\",场分,\"=\"\"0 : 2\"\"\""),
        "{form}"
    );
    assert!(
        form.contains(",-,\"=\"\"0-\"\"\",0,,黑,赵三,+,\"=\"\"2+\"\"\","),
        "{form}"
    );
    // The data CSV stays as it was; --bom adds the mark.
    let csv = stdout(&chuhe(&["league", "sheet", path, "--round", "2", "--bom"]));
    assert!(
        csv.starts_with("\u{feff}event,round,date,table,board,red_unit"),
        "{csv}"
    );
    // A table that does not exist.
    let e = failure(&chuhe(&[
        "league", "sheet", path, "--round", "2", "--table", "9",
    ]));
    assert!(e.contains("no matches in round 2 on table 9"), "{e}");
}

#[test]
fn blank_sheets_before_a_round_is_played() {
    // Round 3 pending in the file (players known), round 4 only in the schedule.
    let file = r#"{"event": "E", "system": "round_robin", "boards": 2, "schedule": "berger",
      "result_chain": {"preset": "slow-fast-armageddon", "time_controls": ["20+10", "5+3", "4+0"]},
      "teams": ["A", "B", "C", "D"],
      "matches": [
        {"round": 1, "first": "A", "second": "D", "boards": [
          {"games": [{"result": "first"}]}, {"games": [{"result": "second"}]}]},
        {"round": 3, "date": "2026-12-06", "first": "B", "second": "D", "pending": true, "boards": [
          {"first_player": "b1", "second_player": "d1"}, {"first_player": "b2", "second_player": "d2"}]}
      ]}"#;
    let html = stdout(&chuhe_stdin(
        &["league", "sheet", "-", "--round", "3", "--format", "html"],
        file,
    ));
    assert!(html.contains("2026年12月6日"));
    assert!(
        html.contains("<td rowspan=\"3\" class=\"name\">b1</td>"),
        "{html}"
    );
    assert!(html.contains("局分 B ____ : ____ D"));
    assert!(!html.contains("class=\"r\">胜"));
    // The pending match does not count in the standings.
    let v = json(&stdout(&chuhe_stdin(
        &["league", "standings", "-", "--format", "json"],
        file,
    )));
    let played: u64 = v["rows"]
        .as_array()
        .map(|r| r.iter().filter_map(|x| x["played"].as_u64()).sum())
        .unwrap_or(0);
    assert_eq!(played, 2);
    // Round 2 is in neither: blank sheets from the schedule (4-3, 1-2), no names.
    let csv = stdout(&chuhe_stdin(
        &["league", "sheet", "-", "--round", "2"],
        file,
    ));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5, "{csv}");
    assert_eq!(lines[1], "E,2,,1,1,D,,C,,,,,,,,");
    assert_eq!(lines[3], "E,2,,2,1,A,,B,,,,,,,,");
    // A played match printed blank on request.
    let blank = stdout(&chuhe_stdin(
        &["league", "sheet", "-", "--round", "1", "--blank"],
        file,
    ));
    assert!(blank.contains("\nE,1,,1,1,A,,D,,,,,,,,"), "{blank}");
    // Results in a pending match, a bad date: refused with the path and line.
    let bad = file.replace(
        r#"{"first_player": "b1", "second_player": "d1"}"#,
        r#"{"first_player": "b1", "second_player": "d1", "games": [{"result": "first"}]}"#,
    );
    let e = failure(&chuhe_stdin(&["league", "sheet", "-"], &bad));
    assert!(
        e.contains("matches[1].boards[0] (line 8): a pending match has no results"),
        "{e}"
    );
    let bad = file.replace("2026-12-06", "6.12.2026");
    let e = failure(&chuhe_stdin(&["league", "sheet", "-"], &bad));
    assert!(
        e.contains("matches[1].date (line 7): \"6.12.2026\" is not a date of the form YYYY-MM-DD"),
        "{e}"
    );
}

#[test]
fn elo_rating_list_from_results() {
    // The published worked example (Wikipedia, "Elo rating system"): 1613 plays five rated
    // players, scores 2½, K = 32 → 1601. One board per match, single games.
    let file = r#"{"event": "Elo", "system": "round_robin", "boards": 1,
      "teams": ["T", "U1", "U2", "U3", "U4", "U5"],
      "matches": [
        {"round": 1, "first": "T", "second": "U1", "boards": [{"first_player": "A", "second_player": "B1", "games": [{"result": "second"}]}]},
        {"round": 2, "first": "T", "second": "U2", "boards": [{"first_player": "A", "second_player": "B2", "games": [{"result": "draw"}]}]},
        {"round": 3, "first": "T", "second": "U3", "boards": [{"first_player": "A", "second_player": "B3", "games": [{"result": "first"}]}]},
        {"round": 4, "first": "T", "second": "U4", "boards": [{"first_player": "A", "second_player": "B4", "games": [{"result": "first"}]}]},
        {"round": 5, "first": "T", "second": "U5", "boards": [{"first_player": "A", "second_player": "B5", "games": [{"result": "second"}]}]}
      ]}"#;
    let ratings = super::league_cli::write_temp(
        "ratings.csv",
        "name,rating,games\nA,1613,100\nB1,1609,100\nB2,1477,100\nB3,1388,100\nB4,1586,100\nB5,1720,100\n",
    );
    let r = ratings.to_string_lossy().into_owned();
    let v = json(&stdout(&chuhe_stdin(
        &[
            "league",
            "elo",
            "-",
            "--ratings",
            &r,
            "--k",
            "32",
            "--format",
            "json",
        ],
        file,
    )));
    let a = v["rows"]
        .as_array()
        .and_then(|rows| rows.iter().find(|x| x["player"] == "A").cloned())
        .unwrap_or_default();
    assert_eq!(a["before"], 1613);
    assert_eq!(a["after"], 1601);
    assert_eq!(a["score"], 2.5);
    assert_eq!(a["k"], 32);
    let text = stdout(&chuhe_stdin(
        &["league", "elo", "-", "--ratings", &r, "--k", "32"],
        file,
    ));
    assert!(
        text.contains("名次  姓名  队名  赛前   K  局数  得分  期望得分  表现分  增减  赛后"),
        "{text}"
    );
    assert!(
        text.contains("A     T     1613  32     5    2½      2.87    1556   -12  1601"),
        "{text}"
    );
    let csv = stdout(&chuhe_stdin(
        &[
            "league",
            "elo",
            "-",
            "--ratings",
            &r,
            "--k",
            "32",
            "--format",
            "csv",
            "--lang",
            "en",
        ],
        file,
    ));
    assert!(
        csv.contains("Rank,Player,Team,Before,K,Games,Score,Expected,Performance,Change,After\r\n"),
        "{csv}"
    );
    // Unrated players get a first rating from their performance once they have enough games.
    let v = json(&stdout(&chuhe_stdin(
        &["league", "elo", "-", "--format", "json", "--min-games", "5"],
        file,
    )));
    assert!(
        v["rows"]
            .as_array()
            .is_some_and(|r| r.iter().all(|x| x["after"].is_null()))
    );
    // Bad options and a bad rating list: typed errors with the line.
    let e = failure(&chuhe_stdin(&["league", "elo", "-", "--k", "big"], file));
    assert!(e.contains("--k: \"big\""), "{e}");
    let bad = super::league_cli::write_temp("bad-ratings.csv", "A,1613\nB1,strong\n");
    let e = failure(&chuhe_stdin(
        &["league", "elo", "-", "--ratings", &bad.to_string_lossy()],
        file,
    ));
    assert!(
        e.contains("--ratings: line 2: rating \"strong\" is not a whole number 0–4000"),
        "{e}"
    );
}

const KNOCKOUT: &str = r#"{"event": "杯赛", "system": "knockout", "boards": 2, "legs": 2, "third_place": true,
 "tiebreak_chain": {"preset": "slow-fast-armageddon", "time_controls": ["15+5", "5+3", "4+0"]},
 "teams": ["A", "B", "C", "D"],
 "matches": [
  {"round": 1, "first": "A", "second": "D", "boards": [{"games": [{"result": "first"}]}, {"games": [{"result": "draw"}]}]},
  {"round": 1, "first": "D", "second": "A", "boards": [{"games": [{"result": "draw"}]}, {"games": [{"result": "draw"}]}]},
  {"round": 1, "first": "B", "second": "C", "boards": [{"games": [{"result": "first"}]}, {"games": [{"result": "second"}]}]},
  {"round": 1, "first": "C", "second": "B", "boards": [{"games": [{"result": "draw"}]}, {"games": [{"result": "draw"}]}]},
  {"round": 1, "first": "C", "second": "B", "tiebreak": true, "boards": [
     {"games": [{"result": "draw"}, {"result": "draw"}, {"result": "draw", "first_colour": "red"}]},
     {"games": [{"result": "first"}]}]}
 ]}"#;

#[test]
fn knockout_rounds_after_the_first() {
    let v = json(&stdout(&chuhe_stdin(
        &["league", "knockout", "-"],
        KNOCKOUT,
    )));
    // A–D: 3:1 then 2:2, A through on 场分. B–C level after both legs (2:2, 2:2): the tiebreak
    // match under the chain goes to C 3:2 (board 1's armageddon drawn: Black, B, wins 2–1).
    assert_eq!(v["rounds"][0]["ties"][0]["winner"], "A");
    assert_eq!(v["rounds"][0]["ties"][0]["decided_by"], "match_points");
    assert_eq!(v["rounds"][0]["ties"][1]["winner"], "C");
    assert_eq!(v["rounds"][0]["ties"][1]["decided_by"], "tiebreak");
    assert_eq!(
        v["rounds"][0]["ties"][1]["tiebreak"]["game_points"],
        json("[3.0, 2.0]")
    );
    assert_eq!(
        v["next_round"],
        json(r#"{"round": 2, "pairings": [[1, 3]], "names": [["A", "C"]]}"#)
    );
    assert_eq!(v["third_place"]["names"], json(r#"["B", "D"]"#));
    assert_eq!(v["third_place"]["state"], "needs_leg");
    // The final and the third-place match played: a champion.
    let done = KNOCKOUT.replace(
        "\n ]}",
        r#",
  {"round": 2, "first": "C", "second": "A", "boards": [{"games": [{"result": "first"}]}, {"games": [{"result": "first"}]}]},
  {"round": 2, "first": "A", "second": "C", "boards": [{"games": [{"result": "draw"}]}, {"games": [{"result": "draw"}]}]},
  {"round": 2, "third_place": true, "first": "B", "second": "D", "forfeited_by": "second"}
 ]}"#,
    );
    let t = stdout(&chuhe_stdin(
        &["league", "knockout", "-", "--format", "table"],
        &done,
    ));
    assert!(t.contains("Champion: C (3)"), "{t}");
    assert!(
        t.contains("Third place\n  B (2) - D (4): B 4:0 D  → B (forfeit)"),
        "{t}"
    );
    // Level legs and no tiebreak yet: the tie waits for it; no next round.
    let level = KNOCKOUT.replace(r#"{"round": 1, "first": "C", "second": "B", "tiebreak": true"#, r#"{"round": 1, "pending": true, "first": "C", "second": "B", "tiebreak": true"#)
        .replace(r#"{"games": [{"result": "draw"}, {"result": "draw"}, {"result": "draw", "first_colour": "red"}]},
     {"games": [{"result": "first"}]}"#, r#"{}, {}"#);
    let v = json(&stdout(&chuhe_stdin(&["league", "knockout", "-"], &level)));
    assert_eq!(v["rounds"][0]["ties"][1]["state"], "needs_tiebreak");
    assert_eq!(v["next_round"], serde_json::Value::Null);
    // 13.5: the second match swaps who moves first; a match the bracket does not have.
    let same = KNOCKOUT.replace(
        r#""first": "D", "second": "A""#,
        r#""first": "A", "second": "D""#,
    );
    let e = failure(&chuhe_stdin(&["league", "knockout", "-"], &same));
    assert!(
        e.contains("in the second match seed 1 (\"A\") moves first again"),
        "{e}"
    );
    let e = failure(&chuhe_stdin(&["league", "standings", "-"], KNOCKOUT));
    assert!(e.contains("use `chuhe league knockout`"), "{e}");
}

#[test]
fn swiss_override_is_checked_and_logged_and_no_pairing_offers_options() {
    use super::league_cli::SWISS;
    // The engine pairs round 2 as B-A, E-C, bye D; the organiser wants A-E, B-C (B and C met
    // in round 1: refused), then A-E, C-B with the bye to D and a reason: accepted and logged.
    let e = failure(&chuhe_stdin(
        &[
            "league",
            "pair",
            "-",
            "--override",
            "1-5,3-2",
            "--bye",
            "4",
            "--reason",
            "travel",
        ],
        SWISS,
    ));
    assert!(
        e.contains("--override breaks the pairing rules: C and B have met already"),
        "{e}"
    );
    let e = failure(&chuhe_stdin(
        &[
            "league",
            "pair",
            "-",
            "--override",
            "1-5,1-2",
            "--bye",
            "4",
            "--reason",
            "x",
        ],
        SWISS,
    ));
    assert!(
        e.contains(
            "not a pairing of round 2: A appears twice; C is neither paired nor given the bye"
        ),
        "{e}"
    );
    let e = failure(&chuhe_stdin(
        &["league", "pair", "-", "--override", "1-4,2-5", "--bye", "3"],
        SWISS,
    ));
    assert!(e.contains("--override needs --reason"), "{e}");
    // A met D in round 1: a rematch too.
    let e = failure(&chuhe_stdin(
        &[
            "league",
            "pair",
            "-",
            "--override",
            "1-4,2-5",
            "--bye",
            "3",
            "--reason",
            "x",
        ],
        SWISS,
    ));
    assert!(e.contains("A and D have met already"), "{e}");
    let o = chuhe_stdin(
        &[
            "league",
            "pair",
            "-",
            "--override",
            "5-1,2-4",
            "--bye",
            "3",
            "--reason",
            "B travels",
            "--by",
            "裁判长",
        ],
        SWISS,
    );
    let v = json(&stdout(&o));
    assert_eq!(v["pairings"], json("[[5,1],[2,4]]"));
    assert_eq!(v["bye_name"], "C");
    assert_eq!(v["override"]["by"], "裁判长");
    assert_eq!(v["override"]["computed"], json("[[2,1],[5,3]]"));
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(
        log.contains("override: round 2 override by 裁判长: E-A, B-D, bye C (engine: B-A, E-C, bye D); accepted: nothing; reason: B travels"),
        "{log}"
    );
    // Two teams that met: no pairing; the least-bad options are printed, then the error.
    let two = r#"{"system": "swiss", "boards": 1, "teams": ["A", "B"],
      "matches": [{"round": 1, "first": "A", "second": "B", "boards": [{"games": [{"result": "draw"}]}]}]}"#;
    let o = chuhe_stdin(&["league", "pair", "-"], two);
    assert_eq!(o.status.code(), Some(2));
    let v = json(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(v["pairings"], serde_json::Value::Null);
    assert_eq!(v["options"][0]["problems"][0]["code"], "rematch");
    assert_eq!(v["options"][0]["override"], "2-1");
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("round 2 cannot be paired without a rematch"),
        "{e}"
    );
    // The organiser takes it knowingly.
    let o = chuhe_stdin(
        &[
            "league",
            "pair",
            "-",
            "--override",
            "2-1",
            "--allow-problems",
            "--reason",
            "last round",
        ],
        two,
    );
    let v = json(&stdout(&o));
    assert_eq!(v["override"]["computed"], serde_json::Value::Null);
    assert_eq!(v["override"]["accepted"][0]["code"], "rematch");
}
