//! SQLite's write-ahead log stays bounded under load and is emptied at close (issue 21, item
//! 10: it grew to 175 MB for a 14 MB database and never shrank).

use std::sync::Arc;

use chuhe_store::{Store, StoreOptions};

use crate::conformance::{T0, game_between};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

fn wal_len(db: &std::path::Path) -> u64 {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(wal).map_or(0, |m| m.len())
}

/// 16 games append 2 KiB events without pause (about 40 MiB in all) while readers keep reading
/// the logs: the WAL never grows much past `sqlite_wal_max`, and after `close` it is empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_wal_stays_bounded_under_load_and_is_emptied_at_close() -> TestResult {
    const GAMES: usize = 16;
    const MOVES: u64 = 1200;
    const WAL_MAX: u64 = 4 << 20;
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("wal.db");
    let url = format!("sqlite://{}", db.display());
    let options = StoreOptions {
        sqlite_wal_max: WAL_MAX,
        ..StoreOptions::default()
    };
    let s = Arc::new(chuhe_store::open(&url, &options).await?);
    let mut games = Vec::new();
    for g in 0..GAMES {
        games.push(game_between(&s, &format!("r{g}"), &format!("b{g}")).await?);
    }
    let largest = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut tasks = Vec::new();
    for (i, &game) in games.iter().enumerate() {
        let s = Arc::clone(&s);
        let (largest, db) = (Arc::clone(&largest), db.clone());
        tasks.push(tokio::spawn(async move {
            for seq in 1..=MOVES {
                let payload = vec![(seq % 251) as u8; 2048];
                let ev = chuhe_store::NewEvent::new(seq, "move", payload, T0 + seq as i64);
                s.append(game, vec![ev]).await?;
                if i == 0 {
                    largest.fetch_max(wal_len(&db), std::sync::atomic::Ordering::Relaxed);
                }
                // Every other game reads its log back now and then: readers hold snapshots
                // that a checkpoint must wait for.
                if i % 2 == 1 && seq % 50 == 0 {
                    s.events_since(game, seq.saturating_sub(40), 100).await?;
                }
            }
            Ok::<_, chuhe_store::StoreError>(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    let largest = largest.load(std::sync::atomic::Ordering::Relaxed);
    let at_end = wal_len(&db);
    s.close().await;
    let after_close = wal_len(&db);
    eprintln!(
        "sqlite WAL: largest {largest} bytes, {at_end} at the end of the load, {after_close} \
         after close (limit {WAL_MAX})"
    );
    // A batch or two may land between the checks that bound it.
    assert!(
        largest <= 3 * WAL_MAX,
        "the WAL grew to {largest} bytes (limit {WAL_MAX})"
    );
    assert_eq!(after_close, 0, "the WAL is not empty after close");
    Ok(())
}
