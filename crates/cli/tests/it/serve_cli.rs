//! `chuhe serve` as a process: logs on stderr (never stdout), no colour codes when stderr is not
//! a terminal, `--log-format json`; a missing PostgreSQL database is created; a failure is one
//! `error:` line that says each cause once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("chuhe-serve-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Starts `chuhe serve` on a free port with `extra` flags, waits for its stdout line
/// `chuhe serving on …` and its `listening` log line, kills it, and returns (stdout lines,
/// stderr lines) up to then.
fn serve_until_listening(db: &str, extra: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_chuhe"))
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url", db])
        .args(extra)
        .env_remove("CHUHE_LOG")
        .env_remove("CHUHE_LOG_FORMAT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = Vec::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let done = line.starts_with("chuhe serving on http://127.0.0.1:");
        out.push(line);
        if done {
            break;
        }
    }
    let mut err = Vec::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        let done = line.contains("listening");
        err.push(line);
        if done {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        out.last()
            .is_some_and(|l| l.starts_with("chuhe serving on")),
        "stdout: {out:?}\nstderr: {err:?}"
    );
    assert!(
        err.last().is_some_and(|l| l.contains("listening")),
        "no `listening` log line on stderr: {err:?}"
    );
    (out, err)
}

#[test]
fn text_logs_go_to_stderr_without_colour_codes_when_it_is_not_a_terminal() {
    let dir = temp_dir("text");
    let db = format!("sqlite://{}", dir.join("s.db").display());
    let (out, err) = serve_until_listening(&db, &[]);
    assert_eq!(out.len(), 1, "stdout has only the address line: {out:?}");
    assert!(
        err.iter().all(|l| !l.contains('\u{1b}')),
        "ANSI escape in logs to a pipe: {err:?}"
    );
    assert!(
        err.iter().any(|l| l.contains(" INFO chuhe_server")),
        "{err:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn json_logs_are_one_object_per_line_on_stderr() {
    let dir = temp_dir("json");
    let db = format!("sqlite://{}", dir.join("s.db").display());
    let (out, err) = serve_until_listening(&db, &["--log-format", "json"]);
    assert_eq!(out.len(), 1, "stdout has only the address line: {out:?}");
    for line in &err {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert!(
            v["level"].is_string() && v["fields"]["message"].is_string(),
            "{line}"
        );
    }
    let last: serde_json::Value = serde_json::from_str(err.last().unwrap()).unwrap();
    assert_eq!(last["fields"]["message"], "listening");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_bad_log_format_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_chuhe"))
        .args(["serve", "--log-format", "xml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim(),
        "error: log_format must be text or json, not \"xml\""
    );
}

/// sqlx's connection errors repeat their source's text, and the store's database error repeats
/// sqlx's: the message must still say each once, on one line.
#[test]
fn a_database_error_is_one_line_that_says_each_cause_once() {
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    let out = Command::new(env!("CARGO_BIN_EXE_chuhe"))
        .args([
            "admin",
            "--database-url",
            "postgres://chuhe@127.0.0.1:1/chuhe",
        ])
        .args(["create-player", "--name", "A"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    // One error line; the tip after it is newcomer.rs's.
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error:")).count(),
        1,
        "{err}"
    );
    assert!(
        err.starts_with("error: opening database postgres://chuhe@127.0.0.1:1/chuhe: "),
        "{err}"
    );
    assert_eq!(err.matches("refused").count(), 1, "{err}");
}

/// `chuhe admin` (and `serve`, through the same opening) on a PostgreSQL database that does not
/// exist creates it; the next run finds it with what the first one stored.
#[test]
fn a_missing_postgres_database_is_created() {
    let Ok(base) = std::env::var("CHUHE_TEST_DATABASE_URL") else {
        // Straight to the stderr handle: libtest captures eprintln! but not the handle.
        let _ = writeln!(
            std::io::stderr(),
            "skipped: serve_cli::a_missing_postgres_database_is_created \
             (CHUHE_TEST_DATABASE_URL is not set)"
        );
        return;
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let name = format!("chuhe_test_{}_{nanos}", std::process::id());
    let (server, query) = match base.split_once('?') {
        Some((s, q)) => (s, format!("?{q}")),
        None => (base.as_str(), String::new()),
    };
    let server = server.rsplit_once('/').map_or(server, |(s, _)| s);
    let url = format!("{server}/{name}{query}");
    let admin = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_chuhe"))
            .args(["admin", "--database-url", &url])
            .args(args)
            .output()
            .unwrap()
    };
    let first = admin(&["create-player", "--name", "Alice"]);
    let second = admin(&["create-player", "--name", "Alice"]);
    // Drop the database before judging, whatever happened.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dropped = rt.block_on(async {
        use sqlx::Connection as _;
        let mut c = sqlx::PgConnection::connect(&base).await?;
        sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .execute(&mut c)
            .await
    });
    let first_err = String::from_utf8_lossy(&first.stderr);
    assert!(first.status.success(), "{first_err}");
    assert_eq!(
        String::from_utf8_lossy(&first.stdout).trim(),
        r#"{"id":"1","displayName":"Alice","role":"ROLE_PLAYER"}"#
    );
    // The second run opened the same database: Alice is there already.
    let second_err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{second_err}");
    assert!(second_err.contains("already exists"), "{second_err}");
    dropped.unwrap();
}

/// `--redis-url` with SQLite is refused before anything starts, saying why.
#[test]
fn several_nodes_on_sqlite_are_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_chuhe"))
        .args(["serve", "--redis-url", "redis://127.0.0.1:6379"])
        .args(["--database-url", "sqlite://never-created.db"])
        .env_remove("CHUHE_CONFIG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("several nodes need PostgreSQL"), "{err}");
}

/// A node whose Redis cannot be reached does not start: one `error:` line naming the Redis,
/// a non-zero exit, within seconds (before the database is even opened).
#[test]
fn an_unreachable_redis_stops_the_node_at_start() {
    let started = std::time::Instant::now();
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    let out = Command::new(env!("CARGO_BIN_EXE_chuhe"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(["--redis-url", "redis://127.0.0.1:1"])
        .args(["--database-url", "postgres://chuhe@127.0.0.1:1/chuhe"])
        .env_remove("CHUHE_CONFIG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: connecting to Redis at redis://127.0.0.1:1 (redis_url): "),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

/// With `CHUHE_TEST_DATABASE_URL` and `CHUHE_TEST_REDIS_URL`: `chuhe serve --redis-url` starts
/// as a node of a cluster (its id and prefix printed), on a fresh database dropped afterwards.
#[test]
fn a_node_of_a_cluster_starts_and_says_so() {
    let (Ok(base), Ok(redis)) = (
        std::env::var("CHUHE_TEST_DATABASE_URL"),
        std::env::var("CHUHE_TEST_REDIS_URL"),
    ) else {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: serve_cli::a_node_of_a_cluster_starts_and_says_so \
             (CHUHE_TEST_DATABASE_URL or CHUHE_TEST_REDIS_URL is not set)"
        );
        return;
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let name = format!("chuhe_test_node_{}_{nanos}", std::process::id());
    let (server, query) = match base.split_once('?') {
        Some((s, q)) => (s, format!("?{q}")),
        None => (base.as_str(), String::new()),
    };
    let server = server.rsplit_once('/').map_or(server, |(s, _)| s);
    let url = format!("{server}/{name}{query}");
    let prefix = format!("t{nanos}");
    let (out, _) = serve_until_listening(
        &url,
        &[
            "--redis-url",
            &redis,
            "--node-id",
            "node-7",
            "--lease-ttl",
            "2s",
            "--redis-prefix",
            &prefix,
        ],
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dropped = rt.block_on(async {
        use sqlx::Connection as _;
        let mut c = sqlx::PgConnection::connect(&base).await?;
        sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .execute(&mut c)
            .await
    });
    let line = out.last().unwrap();
    assert!(
        line.contains(&format!(
            "node node-7 of the cluster on {redis}, prefix {prefix}"
        )),
        "{line}"
    );
    dropped.unwrap();
}
