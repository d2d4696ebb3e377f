//! An acknowledged append survives `kill -9` of the process (SQLite, `synchronous=NORMAL`, the
//! weaker of the two modes). The test re-runs its own binary as the child that writes; the child
//! prints each acknowledged seq, the parent kills it with SIGKILL mid-stream, reopens the file
//! and checks every acknowledged event is there.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;

use chuhe_store::{GameId, NewEvent, NewGame, NewPrincipal, Role, SqliteSync, Store, StoreOptions};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const CHILD_ENV: &str = "CHUHE_STORE_CRASH_CHILD_DB";
const GAMES: i64 = 4;

fn options() -> StoreOptions {
    StoreOptions {
        sqlite_sync: SqliteSync::Normal,
        // Key the recent events often and in small slices, so kills land before, during and
        // after the key steps, and between their slices.
        sqlite_recent_max: 16,
        sqlite_key_slice: 3,
        ..StoreOptions::default()
    }
}

#[test]
fn acknowledged_appends_survive_kill_9() -> TestResult {
    let rt = tokio::runtime::Runtime::new()?;
    if let Ok(url) = std::env::var(CHILD_ENV) {
        return rt.block_on(child(url));
    }
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("crash.db").display());
    rt.block_on(async {
        let s = chuhe_store::open(&url, &options()).await?;
        for g in 0..GAMES {
            let mut ids = Vec::new();
            for side in ["red", "black"] {
                let p = s
                    .create_principal(NewPrincipal {
                        role: Role::Player,
                        name: format!("{side}{g}"),
                        rating: None,
                        created_at_ms: 0,
                    })
                    .await?;
                ids.push(p.id);
            }
            s.create_game(NewGame {
                red: ids[0],
                black: ids[1],
                time_control: "10m".into(),
                ruleset: "cxa-2011".into(),
                start_fen: "startpos".into(),
                broadcast_delay: Default::default(),
                event: None,
                round: None,
                board: None,
                scheduled_start_ms: None,
                created_at_ms: 0,
                start_mode: "now".into(),
                lateness_limit_ms: 0,
                key: None,
            })
            .await?;
        }
        s.close().await;
        Ok::<_, chuhe_store::StoreError>(())
    })?;

    let exe = std::env::current_exe()?;
    let mut child = Command::new(exe)
        .args([
            "--exact",
            // The test's path in this binary (tests/it/main.rs, module crash).
            "crash::acknowledged_appends_survive_kill_9",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &url)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no child stdout")?;
    let mut acked = vec![0u64; GAMES as usize + 1];
    let mut count = 0;
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        let Some(rest) = line.strip_prefix("ACK ") else {
            continue;
        };
        let (g, seq) = rest.split_once(' ').ok_or("bad ACK line")?;
        let (g, seq): (usize, u64) = (g.parse()?, seq.parse()?);
        acked[g] = acked[g].max(seq);
        count += 1;
        if count == 400 {
            break;
        }
    }
    child.kill()?; // SIGKILL on Unix
    child.wait()?;
    assert!(count == 400, "child stopped early after {count} acks");

    rt.block_on(async {
        let s = chuhe_store::open(&url, &options()).await?;
        for g in 1..=GAMES {
            let r = s.load_game(GameId(g)).await?;
            let want = acked[g as usize];
            assert!(
                r.game.last_seq >= want,
                "game {g}: acknowledged seq {want} lost (stored up to {})",
                r.game.last_seq
            );
            assert_eq!(r.events.len() as u64, r.game.last_seq);
        }
        s.close().await;
        Ok::<_, chuhe_store::StoreError>(())
    })?;
    Ok(())
}

/// Appends to every game as fast as it can, printing each acknowledgement, until killed (or a
/// bound is reached, so a lost parent never leaves it running).
async fn child(url: String) -> TestResult {
    let s = Arc::new(chuhe_store::open(&url, &options()).await?);
    let mut tasks = Vec::new();
    for g in 1..=GAMES {
        let s = Arc::clone(&s);
        tasks.push(tokio::spawn(async move {
            for seq in 1..=100_000u64 {
                let ev = NewEvent::new(seq, "move", vec![7; 40], 0);
                s.append(GameId(g), vec![ev]).await?;
                println!("ACK {g} {seq}");
            }
            Ok::<_, chuhe_store::StoreError>(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(())
}
