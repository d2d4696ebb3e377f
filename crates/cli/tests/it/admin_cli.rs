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
    // A league-style game: clocks start at an instant whoever is there; lateness limit.
    let ids = [alice["id"].as_str().unwrap(), bo["id"].as_str().unwrap()];
    let game = |start: &str, lateness: &str| {
        chuhe(
            &db,
            &[
                "create-game",
                "--red",
                ids[0],
                "--black",
                ids[1],
                "--start",
                start,
                "--lateness",
                lateness,
            ],
        )
    };
    let (ok, out, err) = game("2030-01-01T08:00:00+08:00", "15m");
    assert!(ok, "{err}");
    let g = json(&out);
    assert_eq!(g["scheduledStartMs"], 1_893_456_000_000u64);
    assert_eq!(g["latenessLimitMs"], 900_000);
    let (ok, out, err) = game("players", "0");
    assert!(ok, "{err}");
    assert_eq!(json(&out)["start"], "players");
    let (ok, _, err) = game("tomorrow", "0");
    assert!(!ok);
    assert!(
        err.contains("--start must be now, players or an instant"),
        "{err}"
    );
    let (ok, _, err) = game("now", "soon");
    assert!(!ok);
    assert!(err.contains("--lateness must be a duration"), "{err}");
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
