//! SQLite: the group-commit writer never checkpoints in its own commits (its connection has
//! automatic checkpoints off); a background connection copies the WAL back into the database
//! file. Without that, the main file would not grow while the store is open and the WAL
//! would grow without bound.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chuhe_store::{BroadcastDelay, NewEvent, NewGame, NewPrincipal, Role, Store, StoreOptions};

const T0: i64 = 1_764_460_800_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_checkpoints_copy_the_wal_into_the_database_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ckpt.db");
    let url = format!("sqlite://{}", path.display());
    let store = chuhe_store::open(&url, &StoreOptions::default())
        .await
        .unwrap();
    let mut ids = Vec::new();
    for name in ["red", "black"] {
        let p = store
            .create_principal(NewPrincipal {
                role: Role::Player,
                name: name.into(),
                rating: None,
                created_at_ms: T0,
            })
            .await
            .unwrap();
        ids.push(p.id);
    }
    let game = store
        .create_game(NewGame {
            red: ids[0],
            black: ids[1],
            time_control: "90m+30s".into(),
            ruleset: "cxa-2011".into(),
            start_fen: "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w".into(),
            broadcast_delay: BroadcastDelay::default(),
            event: None,
            round: None,
            board: None,
            scheduled_start_ms: None,
            created_at_ms: T0,
        })
        .await
        .unwrap()
        .id;
    let start_len = std::fs::metadata(&path).unwrap().len();
    // Append 4 KiB events one commit at a time (each commit is an fsync, so real time passes)
    // until the main file has grown: a checkpoint copied pages into it. Bounded, no sleeps.
    let mut seq = 0u64;
    let grown = loop {
        seq += 1;
        let payload = vec![(seq % 251) as u8; 4096];
        store
            .append(
                game,
                vec![NewEvent::new(seq, "move", payload, T0 + seq as i64)],
            )
            .await
            .unwrap();
        if std::fs::metadata(&path).unwrap().len() > start_len {
            break true;
        }
        if seq >= 20_000 {
            break false;
        }
    };
    assert!(grown, "no checkpoint after {seq} commits");
    let events = store.events_since(game, 0, 100_000).await.unwrap();
    assert_eq!(events.len() as u64, seq);
    store.close().await;
}
