//! `chuhe records import` through the built binary: check, convert PGN ⇄ XQF ⇄ DhtmlXQ, and
//! the first bad move named with nothing written.
#![allow(clippy::unwrap_used)]

use std::process::Command;

fn chuhe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chuhe"))
}

const PGN: &str = "[Game \"Chinese Chess\"]\n[Red \"许银川\"]\n[Black \"吕钦\"]\n[Result \"1-0\"]\n[Format \"Chinese\"]\n\n1. 炮二平五 马８进７\n2. 马二进三 车９平８\n1-0\n";

fn dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("chuhe-records-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn import_checks_and_converts() {
    let d = dir();
    let pgn = d.join("a.pgn");
    std::fs::write(&pgn, PGN).unwrap();
    let out = chuhe()
        .args(["records", "import"])
        .arg(&pgn)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["moves"],
        serde_json::json!(["h2e2", "h9g7", "h0g2", "i9h9"])
    );
    assert_eq!(v["result"], "1-0");
    // PGN → XQF → WXF PGN and DhtmlXQ.
    let xqf = d.join("a.xqf");
    let out = chuhe()
        .args(["records", "import"])
        .arg(&pgn)
        .args(["--to", "xqf", "-o"])
        .arg(&xqf)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read(&xqf).unwrap().starts_with(b"XQ"));
    let out = chuhe()
        .args(["records", "import"])
        .arg(&xqf)
        .args(["--to", "pgn-wxf"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("[Red \"许银川\"]"), "{text}");
    assert!(text.contains("1. C2=5 H8+7\n2. H2+3 R9=8\n1-0"), "{text}");
    let out = chuhe()
        .args(["records", "import"])
        .arg(&xqf)
        .args(["--to", "dhtmlxq"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("[DhtmlXQ_movelist]7747706279678070[/DhtmlXQ_movelist]"),
        "{text}"
    );
}

#[test]
fn a_bad_move_is_named_and_nothing_is_written() {
    let d = dir();
    let good = d.join("good.pgn");
    let bad = d.join("bad.pgn");
    std::fs::write(&good, PGN).unwrap();
    std::fs::write(&bad, "1. 炮二平五 马８进７\n2. 车一进九 *\n").unwrap();
    let target = d.join("out.pgn");
    let out = chuhe()
        .args(["records", "import"])
        .args([&good, &bad])
        .args(["--to", "pgn", "-o"])
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("bad.pgn: move 2 (red) \"车一进九\" at game 1, line 2, column 4"),
        "{err}"
    );
    assert!(err.contains("(bad_move)"), "{err}");
    assert!(!target.exists());
    let junk = d.join("junk.xqf");
    std::fs::write(&junk, b"XQ\x0a").unwrap();
    let out = chuhe()
        .args(["records", "import"])
        .arg(&junk)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("(truncated)")
    );
}

/// `chuhe records import … --league`: a board played over the board, its PGN loaded into the
/// event as the board's played game (the server's import route): shown in the match, its moves
/// exported from the server; a bad move named with nothing loaded, a second import refused.
#[test]
fn import_loads_a_played_board_into_an_event() {
    let s = crate::league_event::serve("records");
    let org = s.organizer.as_str();
    let spec = serde_json::json!({
        "name": "records test", "system": "round_robin", "legs": 1, "boards": 1,
        "result_chain": {"preset": "single", "time_control": "10m+5s"},
        "teams": [{"name": "东城", "players": ["赵一", "赵二"]}, {"name": "西城", "players": ["钱一", "钱二"]}],
        "schedule": {"first_round": "2030-01-01T10:00:00Z", "every": "1d"},
    });
    let file = s.dir.join("event.json");
    std::fs::write(&file, spec.to_string()).unwrap();
    let created: serde_json::Value =
        serde_json::from_str(&s.ok(Some(org), &["create", file.to_str().unwrap()])).unwrap();
    let id = created["id"].as_str().unwrap().to_string();
    s.ok(Some(org), &["publish", &id]);
    let pgn = s.dir.join("board1.pgn");
    let write = |red: &str, black: &str, result: &str, moves: &str| {
        // The players of the team named for each colour (东城's 赵一, 西城's 钱一).
        let player = |team: &str| if team == "西城" { "钱一" } else { "赵一" };
        std::fs::write(
            &pgn,
            format!(
                "[Game \"Chinese Chess\"]\n[RedTeam \"{red}\"]\n[BlackTeam \"{black}\"]\n[Red \"{}\"]\n[Black \"{}\"]\n[Result \"{result}\"]\n\n{moves} {result}\n",
                player(red),
                player(black)
            ),
        )
        .unwrap();
    };
    let run = |args: &[&str]| {
        chuhe()
            .args(["records", "import"])
            .arg(&pgn)
            .args(["--league", &id, "--round", "1", "--table", "1"])
            .args(args)
            .args(["--server", &s.url, "--token", org])
            .env_remove("CHUHE_SERVER")
            .env_remove("CHUHE_TOKEN")
            .output()
            .unwrap()
    };
    let game_points = || -> serde_json::Value {
        let m: serde_json::Value =
            serde_json::from_str(&s.ok(None, &["match", &id, "--round", "1", "--table", "1"]))
                .unwrap();
        m["gamePoints"].clone()
    };
    // Board 1's first team plays Red (13.2): a file saying otherwise is the server's refusal.
    write("西城", "东城", "0-1", "1. 炮二平五 马８进７");
    let out = run(&["--board", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        err.contains("the server refused (400): invalid_argument") && err.contains("wrong colours"),
        "{err}"
    );
    // An illegal move: named by the CLI's own check (file, move number), nothing loaded.
    write(
        "东城",
        "西城",
        "1-0",
        "1. 炮二平五 马８进７ 2. 车一进三 车９平８",
    );
    let out = run(&["--board", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        err.contains("board1.pgn") && err.contains("move 2"),
        "{err}"
    );
    // A file whose teams are not the match's: the server names the game.
    write("南城", "北城", "1-0", "1. 炮二平五 马８进７");
    let out = run(&["--board", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        err.contains("(422): team_unknown") && err.contains("game 1"),
        "{err}"
    );
    // 东城 had Red and won: the game with its moves.
    write(
        "东城",
        "西城",
        "1-0",
        "1. 炮二平五 马８进７ 2. 马二进三 车９平８",
    );
    let out = run(&["--board", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let game = answer["games"][0].as_str().unwrap().to_string();
    assert_eq!(game_points(), serde_json::json!(["2", "0"]));
    let out = chuhe()
        .args([
            "records", "export", "--server", &s.url, "--game", &game, "--format", "pgn-iccs",
        ])
        .env_remove("CHUHE_SERVER")
        .env_remove("CHUHE_TOKEN")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        text.contains("H2-E2") && text.contains("I9-H9") && text.contains("[Result \"1-0\"]"),
        "{text}"
    );
    // Once loaded, the board is refused.
    let out = run(&["--board", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("(409): board_not_empty"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `chuhe records export`: a game from a running server, as PGN (its FEN named) and as XQF
/// read back by `import`; an unknown game is the server's refusal.
#[test]
fn export_fetches_a_game_from_the_server() {
    let s = crate::league_event::serve("records-export");
    let db = format!("sqlite://{}", s.dir.join("l.db").display());
    let admin = |args: &[&str]| -> serde_json::Value {
        let out = chuhe()
            .args(["admin", "--database-url", &db])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let red = admin(&["create-player", "--name", "赵一"]);
    let black = admin(&["create-player", "--name", "钱二"]);
    let fen = "4k4/9/9/9/9/9/9/9/1R7/R2K5 w - - 0 1";
    let game = admin(&[
        "create-game",
        "--red",
        red["id"].as_str().unwrap(),
        "--black",
        black["id"].as_str().unwrap(),
        "--fen",
        fen,
    ]);
    let id = game["gameId"].as_str().unwrap();
    let export = |args: &[&str]| {
        chuhe()
            .args(["records", "export", "--server", &s.url, "--game", id])
            .args(args)
            .env_remove("CHUHE_SERVER")
            .env_remove("CHUHE_TOKEN")
            .output()
            .unwrap()
    };
    let out = export(&["--format", "pgn-iccs"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(&format!("[FEN \"{fen}\"]")), "{text}");
    assert!(
        text.contains("[Red \"赵一\"]") && text.contains("[Format \"ICCS\"]"),
        "{text}"
    );
    let out = export(&["--format", "xqf"]);
    assert_eq!(out.status.code(), Some(2), "XQF needs --out");
    let xqf = s.dir.join("g.xqf");
    let out = export(&["--format", "xqf", "-o", xqf.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = chuhe()
        .args(["records", "import"])
        .arg(&xqf)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["red"], "赵一");
    assert!(
        v["fen"]
            .as_str()
            .unwrap()
            .starts_with("4k4/9/9/9/9/9/9/9/1R7/R2K5 w")
    );
    let out = chuhe()
        .args(["records", "export", "--server", &s.url, "--game", "999999"])
        .env_remove("CHUHE_SERVER")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the server refused (404)"));
}
