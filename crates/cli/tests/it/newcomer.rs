//! What a newcomer meets: SQLite leaves only `chuhe.db` after one-shot admin commands and a
//! clean stop of `serve`; the demo's first start says it created the demo and recovers nothing;
//! and every error a newcomer can cause names its fix in a `tip:` line after the `error:` line,
//! as clap does (one test per tip).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_chuhe")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chuhe-newcomer-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `chuhe ARGS` in `dir`, with none of chuhe's variables set.
fn chuhe(dir: &Path) -> Command {
    let mut c = Command::new(exe());
    c.current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("CHUHE_") {
            c.env_remove(k);
        }
    }
    c
}

/// The files in `dir`, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A failed command's `error:` line and its tip (status 2, nothing on stdout, one error line,
/// a blank line and `  tip: …`, as clap prints its tips).
fn error_and_tip(out: &Output) -> (String, String) {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty(), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "an error line, a blank line, a tip: {err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    assert_eq!(lines[1], "", "{err}");
    let tip = lines[2]
        .strip_prefix("  tip: ")
        .unwrap_or_else(|| panic!("no tip: {err}"));
    (lines[0].to_string(), tip.to_string())
}

fn sigint(child: &Child) {
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -INT");
}

/// `chuhe serve ARGS` in `dir` on a free port until it listens; then Ctrl-C (SIGINT). Returns
/// its stderr (the logs) and stdout, and asserts it exited 0.
fn serve_and_stop(dir: &Path, args: &[&str]) -> (String, String) {
    let mut child = chuhe(dir)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut out = String::new();
    while !out.contains("chuhe serving on") {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "stdout: {out}");
        out.push_str(&line);
    }
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut err = String::new();
    while !err.contains(" listening") {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "stderr: {err}");
        err.push_str(&line);
    }
    sigint(&child);
    stderr.read_to_string(&mut err).unwrap();
    stdout.read_to_string(&mut out).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}: {err}");
    (err, out)
}

#[test]
fn sqlite_leaves_only_chuhe_db_after_admin_commands_and_a_clean_stop() {
    let dir = temp_dir("wal");
    let out = chuhe(&dir)
        .args(["admin", "create-player", "--name", "Alice"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(files(&dir), ["chuhe.db"], "after admin create-player");
    let out = chuhe(&dir)
        .args(["admin", "issue-token", "--player", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(files(&dir), ["chuhe.db"], "after admin issue-token");
    // A failed one-shot command closes the database too.
    let out = chuhe(&dir)
        .args(["admin", "issue-token", "--player", "9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(files(&dir), ["chuhe.db"], "after a refused admin command");
    serve_and_stop(&dir, &[]);
    assert_eq!(files(&dir), ["chuhe.db"], "after serve and Ctrl-C");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_demo_says_it_was_created_and_recovers_only_games_of_an_earlier_run() {
    let dir = temp_dir("demo");
    let (first, _) = serve_and_stop(&dir, &["--demo"]);
    assert!(first.contains("demo created"), "{first}");
    assert!(first.contains("new games started games=3"), "{first}");
    assert!(!first.contains("recovered"), "{first}");
    assert_eq!(files(&dir), ["chuhe.db"], "after serve --demo and Ctrl-C");
    let (second, _) = serve_and_stop(&dir, &["--demo"]);
    assert!(second.contains("demo found"), "{second}");
    assert!(!second.contains("demo created"), "{second}");
    assert!(
        second.contains("unfinished games recovered games=3"),
        "{second}"
    );
    assert!(!second.contains("new games started"), "{second}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_port_in_use_names_listen() {
    let dir = temp_dir("in-use");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = chuhe(&dir)
        .args(["serve", "--listen", &addr])
        .output()
        .unwrap();
    let (error, tip) = error_and_tip(&out);
    assert!(
        error.starts_with(&format!("error: binding {addr}: ")) && error.contains("in use"),
        "{error}"
    );
    assert!(
        tip.contains("--listen 127.0.0.1:") && tip.contains("CHUHE_LISTEN"),
        "{tip}"
    );
    // The database it opened first is closed again: no WAL left beside it.
    assert_eq!(files(&dir), ["chuhe.db"]);
    drop(taken);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_address_not_of_this_machine_names_listen() {
    let dir = temp_dir("foreign");
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): no machine has it.
    let out = chuhe(&dir)
        .args(["serve", "--listen", "192.0.2.1:8080"])
        .output()
        .unwrap();
    let (error, tip) = error_and_tip(&out);
    assert!(
        error.starts_with("error: binding 192.0.2.1:8080: "),
        "{error}"
    );
    assert!(
        tip.contains("--listen 127.0.0.1:8080") && tip.contains("--listen 0.0.0.0:8080"),
        "{tip}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_database_url_of_neither_kind_names_both() {
    let dir = temp_dir("url");
    let out = chuhe(&dir)
        .args(["admin", "--database-url", "mysql://x/chuhe", "list-players"])
        .output()
        .unwrap();
    let (error, tip) = error_and_tip(&out);
    assert!(error.contains("unsupported database URL"), "{error}");
    assert!(
        tip.contains("--database-url")
            && tip.contains("CHUHE_DATABASE_URL")
            && tip.contains("sqlite://FILE")
            && tip.contains("postgres://"),
        "{tip}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_sqlite_file_that_cannot_be_created_names_its_directory() {
    let dir = temp_dir("no-dir");
    let url = format!("sqlite://{}/missing/chuhe.db", dir.display());
    let out = chuhe(&dir)
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url", &url])
        .output()
        .unwrap();
    let (error, tip) = error_and_tip(&out);
    assert!(error.contains("unable to open database file"), "{error}");
    assert!(
        tip.contains("missing/chuhe.db")
            && tip.contains("directory must exist")
            && tip.contains("--database-url"),
        "{tip}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_file_that_is_not_a_database_says_so() {
    let dir = temp_dir("not-db");
    std::fs::write(
        dir.join("notes.db"),
        "these are my notes, not a database\n".repeat(40),
    )
    .unwrap();
    let out = chuhe(&dir)
        .args([
            "admin",
            "--database-url",
            "sqlite://notes.db",
            "list-players",
        ])
        .output()
        .unwrap();
    let (error, tip) = error_and_tip(&out);
    assert!(error.contains("not a database"), "{error}");
    assert!(
        tip.starts_with("notes.db is not an SQLite database") && tip.contains("--database-url"),
        "{tip}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn no_postgresql_at_the_url_names_the_sqlite_default() {
    let dir = temp_dir("no-pg");
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    let url = "postgres://chuhe@127.0.0.1:1/chuhe";
    let out = chuhe(&dir)
        .args(["admin", "--database-url", url, "list-players"])
        .output()
        .unwrap();
    let (error, tip) = error_and_tip(&out);
    assert!(error.contains("refused"), "{error}");
    assert!(
        tip.contains(url) && tip.contains("--database-url") && tip.contains("chuhe.db"),
        "{tip}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_unknown_player_id_names_list_players_which_lists_them() {
    let dir = temp_dir("player");
    let out = chuhe(&dir)
        .args([
            "admin",
            "create-player",
            "--name",
            "赛事组织者",
            "--role",
            "organizer",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = chuhe(&dir)
        .args(["admin", "issue-token", "--player", "3"])
        .output()
        .unwrap();
    let (error, tip) = error_and_tip(&out);
    assert_eq!(error, "error: player 3 not found");
    assert!(
        tip.contains("`chuhe admin list-players`") && tip.contains("sqlite://chuhe.db"),
        "{tip}"
    );
    // The command the tip names.
    let out = chuhe(&dir)
        .args(["admin", "list-players"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        r#"{"players":[{"displayName":"赛事组织者","id":"1","role":"ROLE_ORGANIZER"}]}"#
    );
    let out = chuhe(&dir)
        .args(["admin", "list-players", "--role", "player"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        r#"{"players":[]}"#
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_league_command_without_a_server_names_serve_and_server() {
    let dir = temp_dir("no-server");
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let out = chuhe(&dir)
        .args(["league", "event", "list", "--server"])
        .arg(format!("http://127.0.0.1:{port}"))
        .output()
        .unwrap();
    let (error, tip) = error_and_tip(&out);
    assert!(error.contains("cannot reach the server"), "{error}");
    assert!(
        tip.contains(&format!("127.0.0.1:{port}"))
            && tip.contains("`chuhe serve`")
            && tip.contains("--server")
            && tip.contains("CHUHE_SERVER"),
        "{tip}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_example_file_read_outside_the_repository_names_its_root() {
    let dir = temp_dir("examples");
    let out = chuhe(&dir)
        .args(["league", "event", "check", "examples/league-event.toml"])
        .output()
        .unwrap();
    let (error, tip) = error_and_tip(&out);
    assert!(
        error.starts_with("error: reading examples/league-event.toml: "),
        "{error}"
    );
    assert!(tip.contains("repository's root"), "{tip}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A server on a new database in `dir` with a player's token; killed when dropped.
struct Served {
    child: Child,
    url: String,
    player_token: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_with_a_player(dir: &Path) -> Served {
    let out = chuhe(dir)
        .args(["admin", "create-player", "--name", "Alice"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let out = chuhe(dir)
        .args(["admin", "issue-token", "--player", "1"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let player_token = v["token"].as_str().unwrap().to_string();
    let mut child = chuhe(dir)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .strip_prefix("chuhe serving on ")
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    Served {
        child,
        url,
        player_token,
    }
}

#[test]
fn league_refusals_name_the_token_flag_the_variable_and_the_list() {
    let dir = temp_dir("refusals");
    let s = serve_with_a_player(&dir);
    let event = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/league-event.toml");
    let event = event.to_str().unwrap();
    let league = |token: Option<&str>, args: &[&str]| {
        let mut c = chuhe(&dir);
        c.args(["league", "event"])
            .args(args)
            .args(["--server", &s.url]);
        if let Some(t) = token {
            c.args(["--token", t]);
        }
        c.output().unwrap()
    };

    // No token.
    let (error, tip) = error_and_tip(&league(None, &["create", event]));
    assert_eq!(
        error,
        "error: permission_denied: this needs an organizer token"
    );
    assert!(
        tip.starts_with("this needs a token")
            && tip.contains("--token")
            && tip.contains("CHUHE_TOKEN")
            && tip.contains("chuhe admin issue-token"),
        "{tip}"
    );

    // A token the server does not know.
    let (error, tip) = error_and_tip(&league(Some("chuhe_nonsense"), &["create", event]));
    assert!(error.starts_with("error: unauthenticated: "), "{error}");
    assert!(
        tip.contains("does not know this token") && tip.contains("chuhe admin issue-token"),
        "{tip}"
    );

    // A token whose holder may not.
    let (error, tip) = error_and_tip(&league(Some(&s.player_token), &["create", event]));
    assert!(error.starts_with("error: permission_denied: "), "{error}");
    assert!(
        tip.contains("may not do this") && tip.contains("organizer's token"),
        "{tip}"
    );

    // A league that is not there.
    let (error, tip) = error_and_tip(&league(None, &["show", "7"]));
    assert!(error.starts_with("error: not_found: no league"), "{error}");
    assert!(tip.contains("`chuhe league event list`"), "{tip}");
    drop(s);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_name_taken_names_list_players() {
    let dir = temp_dir("name-taken");
    let create = || {
        chuhe(&dir)
            .args(["admin", "create-player", "--name", "Alice"])
            .output()
            .unwrap()
    };
    assert!(create().status.success());
    let (error, tip) = error_and_tip(&create());
    assert_eq!(error, "error: a player named \"Alice\" already exists");
    assert!(
        tip.contains("`chuhe admin list-players`") && tip.contains("--name"),
        "{tip}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_missing_config_file_names_config() {
    let dir = temp_dir("config");
    let out = chuhe(&dir)
        .args(["serve", "--config", "chuhe.toml"])
        .output()
        .unwrap();
    let (error, tip) = error_and_tip(&out);
    assert!(
        error.starts_with("error: reading config file chuhe.toml: "),
        "{error}"
    );
    assert!(tip.contains("CHUHE_CONFIG"), "{tip}");
    assert!(files(&dir).is_empty(), "nothing opened: {:?}", files(&dir));
    let _ = std::fs::remove_dir_all(dir);
}
