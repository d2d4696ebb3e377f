//! Publishable tables: standings with the deciding criterion, crosstables, board tables, as
//! text, CSV and HTML.
#![allow(clippy::unwrap_used)]

use chuhe_league::Side;
use chuhe_league::chain::*;
use chuhe_league::colour::side_colour;
use chuhe_league::entities::TimeControlText;
use chuhe_league::individual::{BoardEntry, board_tables};
use chuhe_league::matches::*;
use chuhe_league::report::*;
use chuhe_league::standings::*;
use chuhe_league::text::Lang;

fn rules() -> EventRules {
    EventRules {
        boards: 2,
        game_scoring: GameScoring::default(),
        chain: ResultChain::single(TimeControlText::new("60+30").unwrap()),
        match_scoring: MatchScoring::default(),
    }
}

fn m(r: &EventRules, round: u32, first: usize, second: usize, results: &str) -> TeamMatch {
    let record = if results == "F" {
        MatchRecord::Forfeit {
            forfeited_by: Side::Second,
        }
    } else {
        MatchRecord::Played(
            results
                .chars()
                .enumerate()
                .map(|(i, c)| {
                    BoardRecord::Played(vec![PlayedGame {
                        first_colour: side_colour(Side::First, i as u32 + 1),
                        result: match c {
                            'W' => GameResult::FirstWins,
                            'L' => GameResult::SecondWins,
                            _ => GameResult::Draw,
                        },
                        fouls: [0, 0],
                    }])
                })
                .collect(),
        )
    };
    TeamMatch {
        round,
        first,
        second,
        result: evaluate_match(r, &record).unwrap(),
    }
}

fn teams() -> Vec<String> {
    ["杭州", "成都", "=HYPERLINK(\"x\")", "<北京>"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Four teams, one leg: 杭州 1–0 … with a walkover and a team that left.
fn season() -> (Vec<TeamMatch>, Standings) {
    let r = rules();
    let matches = vec![
        m(&r, 1, 0, 3, "WW"),
        m(&r, 1, 1, 2, "WD"),
        m(&r, 2, 3, 2, "DD"),
        m(&r, 2, 0, 1, "DD"),
        m(&r, 3, 1, 3, "F"),
    ];
    let s = standings(StandingsInput {
        team_count: 4,
        system: System::RoundRobin { legs: 1 },
        rules: &r,
        criteria: chains::ROUND_ROBIN_2011,
        matches: matches.clone(),
        byes: vec![],
        penalties: vec![Penalty {
            team: 2,
            kind: PenaltyKind::Warning,
        }],
        withdrawals: vec![Withdrawal {
            team: 2,
            after_round: 2,
            expelled: false,
        }],
        schedule: None,
    })
    .unwrap();
    (matches, s)
}

fn report<'a>(
    teams: &'a [String],
    matches: &'a [TeamMatch],
    s: &'a Standings,
    lang: Lang,
) -> TeamReport<'a> {
    TeamReport {
        event: "2026 联赛",
        teams,
        system: System::RoundRobin { legs: 1 },
        criteria: chains::ROUND_ROBIN_2011,
        ranking_label: "2011 14.5",
        standings: s,
        matches,
        byes: &[],
        lang,
    }
}

#[test]
fn standings_table_names_the_deciding_criterion() {
    let (ms, s) = season();
    let t = teams();
    let r = report(&t, &ms, &s, Lang::Zh);
    let table = r.standings_table();
    // 杭州: 4–0 over 北京, 2–2 with 成都, and the withdrawn team's unplayed meeting (20.3):
    // 5 场分, 10 局分. 成都: 3–1, 2–2, walkover over 北京: 5 场分, 9 局分.
    let names: Vec<&str> = table.rows.iter().map(|x| x[1].as_str()).collect();
    assert_eq!(names[..2], ["杭州", "成都"]);
    let last = table.header.len() - 1;
    assert_eq!(table.header[last], "决定名次");
    assert_eq!(table.rows[0][last], "总局分");
    assert_eq!(table.rows[1][last], "总局分");
    let text = r.ranking_line();
    assert_eq!(
        text,
        "排名办法（2011 14.5）：场分 > 处分 > 总局分 > 胜场 > 胜局 > 直胜 > 犯规 > 后走胜局 > 后走局数"
    );
    let hyper = table.rows.iter().find(|x| x[1].starts_with('=')).unwrap();
    assert!(
        hyper[last].contains("处分：取消当场比赛资格 0 次，警告 1 次（18.4）"),
        "{hyper:?}"
    );
    assert!(hyper[last].contains("退出，成绩有效"), "{hyper:?}");
    // The 20.3 forfeit of the withdrawn team's last meeting is listed under the table.
    assert!(
        table.notes.iter().any(|n| n.contains("20.3")),
        "{:?}",
        table.notes
    );
    let en = report(&t, &ms, &s, Lang::En).standings_table();
    assert_eq!(en.header[last], "Decided by");
    assert_eq!(en.rows[0][last], "game points");
}

#[test]
fn csv_and_html_are_escaped_and_numeric() {
    let (ms, s) = season();
    let t = teams();
    let r = report(&t, &ms, &s, Lang::Zh);
    let tables = vec![r.standings_table(), r.crosstable()];
    let csv = csv_document(&r.heading(), &tables);
    let lines: Vec<&str> = csv.split("\r\n").collect();
    assert_eq!(lines[0], "2026 联赛");
    assert!(lines[1].starts_with("排名办法（2011 14.5）"));
    assert_eq!(lines[2], "");
    assert_eq!(lines[3], "团体名次");
    assert_eq!(
        lines[4],
        "名次,队名,场次,胜,和,负,场分,局分,胜局,犯规,后走胜局,后走局数,直胜,决定名次"
    );
    // A formula-looking team name is neutralised and quoted; points are plain numbers.
    assert!(csv.contains(",\"'=HYPERLINK(\"\"x\"\")\","), "{csv}");
    assert!(lines[5].starts_with("1,杭州,3,2,1,0,5,10,"), "{}", lines[5]);
    let html = html_document("2026 联赛", &r.heading(), &tables, Lang::Zh);
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"zh\">"));
    assert!(html.contains("<meta charset=\"utf-8\">"));
    assert!(html.contains("&lt;北京&gt;"));
    assert!(!html.contains("<北京>"));
    assert!(html.contains("<th>决定名次</th>"));
    assert!(html.contains("@page { size: A4;"));
    assert_eq!(html.matches("<section class=\"table\">").count(), 2);
}

#[test]
fn crosstable_grid_shows_every_meeting() {
    let (ms, s) = season();
    let t = teams();
    let x = report(&t, &ms, &s, Lang::Zh).crosstable();
    let pos = |name: &str| x.rows.iter().position(|r| r[1] == name).unwrap();
    let col = |name: &str| 2 + pos(name);
    let (cd, hz, bj) = (pos("成都"), pos("杭州"), pos("<北京>"));
    // The diagonal.
    assert_eq!(x.rows[cd][col("成都")], "×");
    // 杭州 beat 北京 4–0; the draw with 成都 2–2; 北京 lost to 成都 by walkover.
    assert_eq!(x.rows[hz][col("<北京>")], "4:0");
    assert_eq!(x.rows[bj][col("杭州")], "0:4");
    assert_eq!(x.rows[hz][col("成都")], "2:2");
    assert_eq!(x.rows[cd][col("<北京>")], "+");
    assert_eq!(x.rows[bj][col("成都")], "-");
    // The withdrawn team's unplayed meeting with 杭州 (20.3): a forfeit win for 杭州.
    let hyper = "=HYPERLINK(\"x\")";
    assert_eq!(x.rows[hz][col(hyper)], "+");
    assert_eq!(x.rows[pos(hyper)][col("杭州")], "-");
    let text = x.to_text();
    assert!(text.lines().count() >= 5, "{text}");
}

#[test]
fn swiss_crosstable_by_round() {
    let r = rules();
    let ms = vec![m(&r, 1, 0, 1, "WW"), m(&r, 2, 2, 0, "DL")];
    let s = standings(StandingsInput {
        team_count: 3,
        system: System::Swiss,
        rules: &r,
        criteria: chains::SWISS_2011,
        matches: ms.clone(),
        byes: vec![(1, 2), (2, 1)],
        penalties: vec![],
        withdrawals: vec![],
        schedule: None,
    })
    .unwrap();
    let names: Vec<String> = ["A", "B", "C"].iter().map(|s| s.to_string()).collect();
    let rep = TeamReport {
        system: System::Swiss,
        criteria: chains::SWISS_2011,
        ranking_label: "2011 14.6",
        byes: &[(1, 2), (2, 1)],
        ..report(&names, &ms, &s, Lang::Zh)
    };
    let x = rep.crosstable();
    assert_eq!(x.header[2], "第1轮");
    let a = x.rows.iter().find(|r| r[1] == "A").unwrap();
    let b_rank = s.rows.iter().find(|r| r.team == 1).unwrap().rank.unwrap();
    assert_eq!(a[2], format!("{b_rank}先 4:0"));
    let c = x.rows.iter().find(|r| r[1] == "C").unwrap();
    assert_eq!(c[2], "轮空");
    assert!(c[3].contains("先 1:3"), "{c:?}");
}

#[test]
fn board_tables_render() {
    let entries = vec![BoardEntry {
        round: 1,
        board: 1,
        players: [
            ("王一".into(), "杭州".into()),
            ("李一".into(), "成都".into()),
        ],
        points: [
            chuhe_league::Points::from_halves(3),
            chuhe_league::Points::HALF,
        ],
        winner: Some(Side::First),
        forfeit: [false, false],
    }];
    let tables = board_tables(&entries, 2);
    let t = board_table(1, &tables[&1], 2, Lang::Zh);
    assert_eq!(t.title, "第1台");
    assert_eq!(t.rows[0][1], "王一");
    assert_eq!(t.rows[0][7], "1½");
    assert_eq!(t.rows[0][8], "不足2局");
    let csv = t.to_csv();
    assert!(csv.contains("1,王一,杭州,1,1,0,0,1.5,不足2局\r\n"), "{csv}");
}
