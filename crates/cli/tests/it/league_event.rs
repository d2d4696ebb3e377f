//! `chuhe league event …` against a spawned `chuhe serve` on a temp SQLite file: an organizer
//! creates events from the committed example (TOML, roster CSV merged) and from a test file,
//! publishes, issues tokens; captains submit lineups; an arbiter decides; everyone reads
//! standings, a match, a sheet, the log and the export. A refusal is the server's
//! `code: message` on one stderr line and a non-zero exit.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_chuhe")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A `chuhe serve` child on a free port, killed when dropped.
pub(crate) struct Served {
    child: Child,
    pub(crate) url: String,
    pub(crate) organizer: String,
    pub(crate) dir: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(exe())
        .args(args)
        .env_remove("CHUHE_SERVER")
        .env_remove("CHUHE_TOKEN")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn json(s: &str) -> Value {
    serde_json::from_str(s.trim()).unwrap_or_else(|e| panic!("{e}: {s}"))
}

/// An organizer account and token made with `chuhe admin` on a new database, then the server
/// on it (it prints its address on stdout once it listens; if it fails, stdout closes).
pub(crate) fn serve(name: &str) -> Served {
    let dir =
        std::env::temp_dir().join(format!("chuhe-league-event-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}", dir.join("l.db").display());
    let (ok, out, err) = run(&[
        "admin",
        "--database-url",
        &db,
        "create-player",
        "--name",
        "赛事组织者",
        "--role",
        "organizer",
    ]);
    assert!(ok, "{err}");
    let id = json(&out)["id"].as_str().unwrap().to_string();
    let (ok, out, err) = run(&[
        "admin",
        "--database-url",
        &db,
        "issue-token",
        "--player",
        &id,
    ]);
    assert!(ok, "{err}");
    let organizer = json(&out)["token"].as_str().unwrap().to_string();
    let mut child = Command::new(exe())
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            &db,
            "--log",
            "warn",
        ])
        .env_remove("CHUHE_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Its address line, within a bound: a server that neither starts nor exits fails the test.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.strip_prefix("chuhe serving on ") {
                let _ = tx.send(rest.split_whitespace().next().map(str::to_string));
                break;
            }
        }
    });
    let url = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .ok()
        .flatten();
    let Some(url) = url else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the server did not say where it listens within 20 s");
    };
    Served {
        child,
        url,
        organizer,
        dir,
    }
}

impl Served {
    /// `chuhe league event --server … [--token …] ARGS`, run to its end.
    fn output(&self, token: Option<&str>, args: &[&str]) -> std::process::Output {
        let mut all = vec!["league", "event", "--server", &self.url, "--timeout", "20"];
        if let Some(t) = token {
            all.extend(["--token", t]);
        }
        all.extend(args);
        Command::new(exe())
            .args(&all)
            .env_remove("CHUHE_SERVER")
            .env_remove("CHUHE_TOKEN")
            .output()
            .unwrap()
    }

    /// Its stdout, after checking that it succeeded and said nothing on stderr.
    pub(crate) fn ok(&self, token: Option<&str>, args: &[&str]) -> String {
        let out = self.output(token, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: stderr {err}");
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// The refusal's one `error:` line (the command failed with status 2); at most a `tip:`
    /// follows it (`newcomer.rs` tests those).
    fn refused(&self, token: Option<&str>, args: &[&str]) -> String {
        let out = self.output(token, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        let mut lines = err.lines().filter(|l| !l.is_empty());
        let first = lines.next().unwrap_or_default().to_string();
        let rest: Vec<&str> = lines.collect();
        assert!(
            rest.len() <= 1 && rest.iter().all(|l| l.starts_with("  tip: ")),
            "{args:?}: {err}"
        );
        first
    }
}

/// A 4-team double round robin of 2 boards, far in the future (nothing starts by itself).
const EVENT: &str = r#"
name = "CLI 测试联赛"
system = "round_robin"
boards = 2
arbiters = ["CLI 裁判"]
result_chain = { preset = "slow-fast-armageddon", time_controls = ["60m+30s", "10m+5s", "red:5m;black:4m"] }

[schedule]
first_round = "2099-03-06T14:00:00+08:00"
every = "7d"

[[teams]]
name = "CLI 东"
players = ["CLI 东1", "CLI 东2", "CLI 东3"]

[[teams]]
name = "CLI 西"
players = ["CLI 西1", "CLI 西2", "CLI 西3"]
"#;

const ROSTER: &str = "team,name,role,tags,rating,unit\r\n\
    CLI 南,CLI 南1,,,2400,南区\r\n\
    CLI 南,CLI 南2,,W,,\r\n\
    CLI 南,CLI 南3,,,,\r\n\
    CLI 北,CLI 北1,,,,北区\r\n\
    CLI 北,\"CLI 北2, 替补\",,,,\r\n\
    CLI 北,CLI 北3,,,,\r\n\
    CLI 北,CLI 北队长,captain,,,\r\n";

#[test]
fn an_organizer_runs_an_event_through_the_cli() {
    let s = serve("run");
    let org = Some(s.organizer.as_str());

    // The committed example, TOML with its roster CSV merged: created as written.
    let example = root().join("examples/league-event.toml");
    let roster = root().join("examples/league-roster.csv");
    let created = json(&s.ok(
        org,
        &[
            "create",
            example.to_str().unwrap(),
            "--roster",
            roster.to_str().unwrap(),
        ],
    ));
    assert_eq!(
        created["teams"].as_array().unwrap().len(),
        9,
        "8 + 湖南队 from the CSV"
    );
    assert_eq!(created["boards"], 4);
    assert_eq!(created["chain"][2]["name"], "armageddon");
    let beijing = &created["teams"][0];
    assert_eq!(
        beijing["players"].as_array().unwrap().len(),
        7,
        "the CSV's roster"
    );
    assert_eq!(
        beijing["players"][2]["name"], "周海涛",
        "in the CSV's order"
    );

    // A test event from TOML and a roster CSV adding two teams.
    let file = s.dir.join("event.toml");
    std::fs::write(&file, EVENT).unwrap();
    let csv = s.dir.join("teams.csv");
    std::fs::write(&csv, ROSTER).unwrap();
    let (file, csv) = (file.to_str().unwrap(), csv.to_str().unwrap());
    let checked = json(&s.ok(None, &["check", file, "--roster", csv]));
    assert_eq!(checked["teams"][3]["players"][1], "CLI 北2, 替补");
    assert_eq!(checked["teams"][3]["captains"][0], "CLI 北队长");
    let created = json(&s.ok(org, &["create", file, "--roster", csv]));
    let id = created["id"].as_str().unwrap().to_string();
    let id = id.as_str();
    let list = json(&s.ok(None, &["list"]));
    assert_eq!(list["leagues"].as_array().unwrap().len(), 2);

    assert!(s.ok(org, &["publish", id]).contains("\"ok\": true"));
    let shown = json(&s.ok(None, &["show", id]));
    assert_eq!(shown["published"], true);
    assert_eq!(shown["rounds"].as_array().unwrap().len(), 6);

    // Tokens: every captain, then the arbiter.
    let caps = json(&s.ok(org, &["tokens", id, "--for", "captains"]));
    let caps = caps["tokens"].as_array().unwrap();
    assert_eq!(caps.len(), 4);
    assert_eq!(caps[3]["name"], "CLI 北队长");
    let cap = |team: u64| {
        caps.iter()
            .find(|c| c["team"] == team)
            .and_then(|c| c["token"].as_str())
            .unwrap()
            .to_string()
    };
    let arb = json(&s.ok(org, &["tokens", id, "--for", "arbiters"]));
    let arb = arb["tokens"][0]["token"].as_str().unwrap().to_string();

    // Round 1, table 1: both captains submit; the lineups are revealed together.
    let t1 = &shown["rounds"][0]["tables"][0];
    let (first, second) = (
        t1["first"]["team"].as_u64().unwrap(),
        t1["second"]["team"].as_u64().unwrap(),
    );
    let roster_of = |team: u64| -> Vec<String> {
        shown["teams"][team as usize]["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (fr, sr) = (roster_of(first), roster_of(second));
    let lineup = |team: u64, token: &str, players: &[String]| {
        let mut args = vec!["lineup", id, "--round", "1", "--table", "1", "--team"];
        let team = team.to_string();
        args.push(&team);
        args.extend(players.iter().map(String::as_str));
        s.ok(Some(token), &args)
    };
    lineup(first, &cap(first), &fr[..2]);
    let sealed = json(&s.ok(None, &["match", id, "--round", "1", "--table", "1"]));
    assert_eq!(
        sealed["lineups"][0],
        serde_json::json!({"revealed": false}),
        "sealed to others"
    );
    lineup(second, &cap(second), &[sr[0].clone(), sr[2].clone()]);
    let m = json(&s.ok(None, &["match", id, "--round", "1", "--table", "1"]));
    assert_eq!(m["lineups"][0]["revealed"], true);
    assert_eq!(m["lineups"][1]["players"][1], sr[2].as_str());

    // The organizer moves round 2; the arbiter decides round 1.
    let r = s.ok(
        org,
        &[
            "reschedule",
            id,
            "--round",
            "2",
            "--start",
            "2099-03-14T10:00:00+08:00",
        ],
    );
    assert!(r.contains("\"ok\": true"), "{r}");
    let shown = json(&s.ok(None, &["show", id]));
    assert_eq!(shown["rounds"][1]["startsAt"], "2099-03-14T02:00:00Z");
    let a = Some(arb.as_str());
    let base = ["command", id, "--reason", "CLI test"];
    // Each command's arguments as one line, split at spaces.
    let cmd = |rest: &str| {
        let mut v = base.to_vec();
        v.extend(rest.split(' '));
        s.ok(a, &v)
    };
    cmd("set-board --round 1 --table 1 --board 1 --game red:draw --game black:first");
    cmd("set-board --round 1 --table 1 --board 2 --forfeit second");
    cmd("forfeit-match --round 1 --table 2 --by second");
    let m = json(&s.ok(None, &["match", id, "--round", "1", "--table", "1"]));
    assert_eq!(m["gamePoints"], serde_json::json!(["4", "1"]));
    assert_eq!(m["matchPoints"], serde_json::json!(["2", "0"]));

    // Standings in every format; the export gives the same ranks offline.
    let st = json(&s.ok(None, &["standings", id, "--format", "json"]));
    assert_eq!(st["completedRounds"], 1);
    let ranked: Vec<&str> = st["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    let text = s.ok(None, &["standings", id, "--lang", "en"]);
    assert!(
        text.contains("Decided by") && text.contains(ranked[0]),
        "{text}"
    );
    let html = s.ok(None, &["standings", id, "--format", "html"]);
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    let csv = s.ok(None, &["standings", id, "--format", "csv"]);
    assert!(csv.starts_with('\u{feff}') && !csv[3..].starts_with('\u{feff}'));
    let export = s.ok(None, &["export", id]);
    let offline = s.dir.join("export.json");
    std::fs::write(&offline, &export).unwrap();
    let (ok, out, err) = run(&[
        "league",
        "standings",
        offline.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(ok, "{err}");
    let offline: Vec<String> = json(&out)["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["team"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        offline, ranked,
        "the server's standings and `chuhe league standings` of its export"
    );
    // The players' board tables and the Elo list: the server's equal `chuhe league`'s on the
    // export (a forfeited board has no rated game; the whole-match forfeit names no players).
    let export_path = s.dir.join("export.json");
    let export_path = export_path.to_str().unwrap();
    let boards = json(&s.ok(None, &["boards", id, "--format", "json"]));
    let (ok, out, err) = run(&[
        "league",
        "standings",
        export_path,
        "--boards",
        "--min-board-games",
        "0",
        "--format",
        "json",
    ]);
    assert!(ok, "{err}");
    assert_eq!(boards["boards"], json(&out)["board_tables"], "{boards}");
    assert_eq!(boards["boards"][0]["rows"][0]["player"], fr[0].as_str());
    let elo = json(&s.ok(None, &["elo", id, "--format", "json"]));
    let (ok, out, err) = run(&["league", "elo", export_path, "--format", "json"]);
    assert!(ok, "{err}");
    assert_eq!(elo["rows"], json(&out)["rows"], "{elo}");
    assert_eq!(
        elo["rows"].as_array().unwrap().len(),
        4,
        "table 1's players (board 2's with no rated game)"
    );
    let html = s.ok(None, &["elo", id, "--format", "html", "--lang", "en"]);
    assert!(
        html.starts_with("<!DOCTYPE html>") && html.contains(&fr[0]),
        "{html}"
    );
    let csv = s.ok(None, &["boards", id, "--format", "csv"]);
    assert!(csv.starts_with('\u{feff}') && csv.contains(&sr[0]), "{csv}");

    // The sheet, and the log with who and why.
    let sheet = s.ok(None, &["sheet", id, "--round", "1", "--table", "1"]);
    assert!(
        sheet.contains(&fr[0]) && sheet.contains("<html"),
        "names once revealed"
    );
    // For Excel and WPS: one byte order mark, then the form.
    let sheet = s.ok(
        None,
        &[
            "sheet", id, "--round", "1", "--table", "1", "--format", "csv",
        ],
    );
    assert!(sheet.starts_with('\u{feff}'), "{sheet}");
    assert!(
        !sheet[3..].starts_with('\u{feff}'),
        "two byte order marks: {sheet:?}"
    );
    assert!(sheet.contains(&fr[0]), "{sheet}");
    let log = json(&s.ok(a, &["log", id]));
    let set = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "board_set")
        .unwrap();
    assert_eq!(set["reason"], "CLI test");
    cmd("withdraw --team 3 --after-round 1");
    let st = json(&s.ok(None, &["standings", id, "--format", "json"]));
    assert!(
        st["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["withdrawn"] == true)
    );
}

#[test]
fn every_refusal_is_the_servers_code_and_message_on_one_line() {
    let s = serve("refuse");
    let org = Some(s.organizer.as_str());
    let file = s.dir.join("event.toml");
    std::fs::write(&file, EVENT).unwrap();
    let file = file.to_str().unwrap();
    let created = json(&s.ok(org, &["create", file]));
    let id = created["id"].as_str().unwrap().to_string();
    let id = id.as_str();

    assert_eq!(
        s.refused(None, &["create", file]),
        "error: permission_denied: this needs an organizer token"
    );
    assert!(
        s.refused(Some("chuhe_nonsense"), &["publish", id])
            .starts_with("error: unauthenticated: "),
    );
    assert!(
        s.refused(org, &["publish", "999"])
            .starts_with("error: not_found: ")
    );
    s.ok(org, &["publish", id]);
    assert_eq!(
        s.refused(org, &["publish", id]),
        "error: conflict: the event is published already"
    );
    // A captain's refused lineup: the message and every reason's code.
    let caps = json(&s.ok(org, &["tokens", id, "--for", "captains", "--team", "0"]));
    let cap = caps["tokens"][0]["token"].as_str().unwrap().to_string();
    let shown = json(&s.ok(None, &["show", id]));
    let table = shown["rounds"][0]["tables"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["first"]["team"] == 0 || t["second"]["team"] == 0)
        .unwrap()["table"]
        .to_string();
    let e = s.refused(
        Some(&cap),
        &[
            "lineup", id, "--round", "1", "--table", &table, "--team", "0", "CLI 东2", "CLI 东2",
        ],
    );
    assert!(
        e.starts_with("error: lineup_refused: ") && e.ends_with("[duplicate]"),
        "{e}"
    );
    assert!(
        s.refused(
            Some(&cap),
            &[
                "lineup", id, "--round", "1", "--table", &table, "--team", "1", "CLI 西1",
                "CLI 西2"
            ]
        )
        .starts_with("error: "),
    );
    // An arbiter's decision without a reason; the server's own commands.
    assert_eq!(
        s.refused(
            org,
            &[
                "command",
                id,
                "forfeit-match",
                "--round",
                "1",
                "--table",
                "1",
                "--by",
                "both"
            ]
        ),
        "error: invalid_argument: an arbiter's decision needs a reason"
    );
    assert_eq!(
        s.refused(org, &["command", id, "raw", r#"{"command":"tick"}"#]),
        "error: permission_denied: only the server records games and ticks"
    );
    assert_eq!(
        s.refused(
            org,
            &[
                "command",
                id,
                "--reason",
                "r",
                "replay-board",
                "--round",
                "9",
                "--table",
                "1",
                "--board",
                "1"
            ]
        ),
        "error: not_found: round 9 table 1 board 1 not found"
    );
    assert_eq!(
        s.refused(org, &["command", id, "pair-next-round"]),
        "error: conflict: only a Swiss is paired round by round"
    );
    assert!(
        s.refused(None, &["log", id])
            .starts_with("error: permission_denied: ")
    );
    assert!(
        s.refused(org, &["reschedule", id, "--round", "2", "--start", "soon"])
            .starts_with("error: invalid_argument: \"soon\" is not an instant")
    );
    assert!(
        s.refused(org, &["tokens", id, "--team", "9"])
            .starts_with("error: not_found: ")
    );
    // Mistakes in the file are named before anything is sent.
    let bad = s.dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"name":"x","system":"round_robin","boards":0,"teams":[],"schedule":{}}"#,
    )
    .unwrap();
    let e = s.refused(org, &["create", bad.to_str().unwrap()]);
    assert!(e.ends_with("bad.json: boards: must be 1 to 64"), "{e}");
    let e = s.refused(org, &["create", file, "--roster", bad.to_str().unwrap()]);
    assert!(
        e.contains("bad.json line 1: a quote inside an unquoted field"),
        "{e}"
    );
    let bad = s.dir.join("bad.csv");
    std::fs::write(&bad, "team,player\nCLI 东,CLI 东1\n").unwrap();
    let e = s.refused(org, &["create", file, "--roster", bad.to_str().unwrap()]);
    assert!(
        e.contains("bad.csv line 1: unknown column \"player\""),
        "{e}"
    );
    // No server there.
    let (ok, _, err) = run(&["league", "event", "--server", "http://127.0.0.1:9", "list"]);
    assert!(!ok && err.contains("cannot reach the server"), "{err}");
}
