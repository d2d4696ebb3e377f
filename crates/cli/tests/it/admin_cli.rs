//! `chuhe admin` on a temp SQLite database: players, tokens, games, and clear errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn chuhe(db: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_chuhe"))
        .arg("admin")
        .args(["--database-url", db])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s.trim()).unwrap()
}

#[test]
fn players_tokens_and_games() {
    let dir = std::env::temp_dir().join(format!("chuhe-admin-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}", dir.join("a.db").display());
    let (ok, out, err) = chuhe(&db, &["create-player", "--name", "Alice"]);
    assert!(ok, "{err}");
    let alice = json(&out);
    assert_eq!(alice["role"], "ROLE_PLAYER");
    let (ok, out, _) = chuhe(&db, &["create-player", "--name", "Bo"]);
    assert!(ok);
    let bo = json(&out);
    let (ok, out, err) = chuhe(
        &db,
        &["issue-token", "--player", alice["id"].as_str().unwrap()],
    );
    assert!(ok, "{err}");
    let tok = json(&out);
    assert!(tok["token"].as_str().unwrap().len() > 20);
    let (ok, _, err) = chuhe(
        &db,
        &[
            "revoke-token",
            "--token-id",
            tok["tokenId"].as_str().unwrap(),
        ],
    );
    assert!(ok, "{err}");
    let (ok, out, err) = chuhe(
        &db,
        &[
            "create-game",
            "--red",
            alice["id"].as_str().unwrap(),
            "--black",
            bo["id"].as_str().unwrap(),
            "--time-control",
            "30m|3x60s",
            "--delay-plies",
            "2",
        ],
    );
    assert!(ok, "{err}");
    assert!(json(&out)["gameId"].as_str().is_some());
    // Bad input: a clear error and a non-zero exit.
    let (ok, _, err) = chuhe(&db, &["create-player", "--name", "X", "--role", "king"]);
    assert!(!ok);
    assert!(err.contains("role must be"), "{err}");
    let (ok, _, err) = chuhe(
        &db,
        &[
            "create-game",
            "--red",
            alice["id"].as_str().unwrap(),
            "--black",
            bo["id"].as_str().unwrap(),
            "--time-control",
            "soon",
        ],
    );
    assert!(!ok);
    assert!(err.contains("time control"), "{err}");
    let (ok, _, err) = chuhe(&db, &["issue-token", "--player", "9999"]);
    assert!(!ok);
    assert!(err.contains("not found"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
