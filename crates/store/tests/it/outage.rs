//! PostgreSQL dies while appends are in flight (issue 21, item 1): a throwaway server of the
//! test's own is stopped abruptly (`pg_ctl stop -m immediate`) many times under load. After each
//! stop: every append answered `Ok` is in the log, every one answered with an error other than
//! `CommitUnknown` is not, and every `CommitUnknown` one is resolved by `resolve_append` to what
//! the log then holds. Skipped (one line) without the PostgreSQL binaries.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chuhe_store::testing::ThrowawayPg;
use chuhe_store::{
    AnyStore, Append, GameId, NewEvent, Resolution, Store, StoreError, StoreOptions,
};

use crate::conformance::game_between;

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

const GAMES: usize = 24;
/// Abrupt stops (`CHUHE_OUTAGE_CYCLES` overrides).
const CYCLES: usize = 30;

fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

/// The event a game appends at `seq` in `cycle`, attempt `attempt`: every attempt's payload
/// differs, so the log tells which attempt it holds.
fn event(game: GameId, seq: u64, cycle: usize, attempt: u32) -> NewEvent {
    NewEvent::new(
        seq,
        "move",
        format!("g{}-s{seq}-c{cycle}-a{attempt}", game.0).into_bytes(),
        seq as i64,
    )
}

/// What one game's task did in a cycle: the events acknowledged, and the append that failed
/// (every task appends until its first error).
struct Run {
    game: GameId,
    acked: Vec<NewEvent>,
    failed: Option<(NewEvent, StoreError)>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_answered_during_abrupt_postgres_stops_are_answered_truthfully() -> TestResult {
    let Some(pg) =
        blocking(|| ThrowawayPg::start_or_skip("appends_answered_during_abrupt_postgres_stops"))?
    else {
        return Ok(());
    };
    let cycles = std::env::var("CHUHE_OUTAGE_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CYCLES);
    let options = StoreOptions {
        pg_writers: 2,
        ..StoreOptions::default()
    };
    let store = Arc::new(chuhe_store::open(&pg.url(), &options).await?);
    let mut games = Vec::new();
    for g in 0..GAMES {
        games.push(game_between(&store, &format!("r{g}"), &format!("b{g}")).await?);
    }
    let mut next_seq: Vec<u64> = vec![1; GAMES];
    let mut attempts: u32 = 0;
    let (mut unknown_committed, mut unknown_not, mut not_committed, mut acked_total) =
        (0, 0, 0, 0usize);
    for cycle in 0..cycles {
        // Every game appends one event at a time until its first error; the server is stopped
        // once the cycle has some acknowledgements, while the appends go on.
        let acks = Arc::new(AtomicU64::new(0));
        let enough = Arc::new(tokio::sync::Notify::new());
        let target = 40 + 17 * cycle as u64;
        let mut tasks = Vec::new();
        for (i, &game) in games.iter().enumerate() {
            let store = Arc::clone(&store);
            let (acks, enough) = (Arc::clone(&acks), Arc::clone(&enough));
            let first = next_seq[i];
            attempts += 1;
            let attempt = attempts;
            tasks.push(tokio::spawn(async move {
                let mut run = Run {
                    game,
                    acked: Vec::new(),
                    failed: None,
                };
                for seq in first.. {
                    let ev = event(game, seq, cycle, attempt);
                    match store.append(game, vec![ev.clone()]).await {
                        Ok(last) if last == seq => {
                            run.acked.push(ev);
                            if acks.fetch_add(1, Ordering::SeqCst) + 1 == target {
                                enough.notify_one();
                            }
                        }
                        Ok(last) => {
                            let e = StoreError::Corrupt(format!("{seq} answered {last}"));
                            run.failed = Some((ev, e));
                            break;
                        }
                        Err(e) => {
                            run.failed = Some((ev, e));
                            break;
                        }
                    }
                }
                run
            }));
        }
        enough.notified().await;
        blocking(|| pg.kill())?;
        let mut runs = Vec::new();
        for t in tasks {
            runs.push(t.await?);
        }
        blocking(|| pg.start())?;

        for run in runs {
            let i = games.iter().position(|g| *g == run.game).ok_or("game")?;
            let (failed, error) = run.failed.ok_or("a task ended without an error")?;
            let resolved = if error.outcome_unknown() {
                let append = Append {
                    game: run.game,
                    events: vec![failed.clone()],
                    finish: None,
                    fence: None,
                };
                Some(
                    resolve(&store, &append)
                        .await
                        .map_err(|e| format!("resolve: {e}"))?,
                )
            } else {
                assert!(
                    matches!(error, StoreError::CommitFailed(_)),
                    "cycle {cycle}, game {}: unexpected error {error:?}",
                    run.game
                );
                None
            };
            // The log as it is once every outcome is settled.
            let log = store
                .events_since(run.game, 0, u32::MAX)
                .await
                .map_err(|e| format!("log: {e}"))?;
            let stored = |ev: &NewEvent| {
                log.iter()
                    .any(|s| s.seq == ev.seq && s.payload == ev.payload && s.kind == ev.kind)
            };
            for ev in &run.acked {
                assert!(
                    stored(ev),
                    "cycle {cycle}, game {}: acknowledged seq {} is not in the log",
                    run.game,
                    ev.seq
                );
            }
            let last = log.last().map_or(0, |e| e.seq);
            match resolved {
                None => {
                    not_committed += 1;
                    assert!(
                        !stored(&failed) && last == failed.seq - 1,
                        "cycle {cycle}, game {}: seq {} was answered {error:?} (not committed) \
                         but the log ends at {last}",
                        run.game,
                        failed.seq
                    );
                }
                Some(Resolution::Committed { last_seq }) => {
                    unknown_committed += 1;
                    assert!(
                        stored(&failed) && last == failed.seq && last_seq == failed.seq,
                        "cycle {cycle}, game {}: seq {} resolved committed, log ends at {last}",
                        run.game,
                        failed.seq
                    );
                }
                Some(Resolution::NotCommitted { last_seq }) => {
                    unknown_not += 1;
                    assert!(
                        !stored(&failed) && last == failed.seq - 1 && last_seq == last,
                        "cycle {cycle}, game {}: seq {} resolved not committed, log ends at \
                         {last}",
                        run.game,
                        failed.seq
                    );
                }
            }
            acked_total += run.acked.len();
            next_seq[i] = last + 1;
        }
    }
    store.close().await;
    eprintln!(
        "outage: {cycles} abrupt stops, {acked_total} appends acknowledged; of those answered \
         with an error, {not_committed} not committed, {unknown_committed} unknown and resolved \
         committed, {unknown_not} unknown and resolved not committed"
    );
    Ok(())
}

/// `resolve_append`, asked again while the server is still coming back (a connection of the
/// pool may be one from before the stop).
async fn resolve(store: &AnyStore, append: &Append) -> Result<Resolution, StoreError> {
    let mut tries = 0;
    loop {
        match store.resolve_append(append).await {
            Ok(r) => return Ok(r),
            Err(e) if tries < 5 && !e.is_client_error() => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// A hanging database (every PostgreSQL process stopped with SIGSTOP) and a stopped one: the
/// readiness probe and a login fail within their timeouts instead of hanging, with errors of
/// kind `Unavailable`, and both work again once the server is back. (The outer 60 s limit only
/// turns a hang into a failure; it does not measure speed.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_and_logins_fail_fast_while_postgres_hangs_or_is_down() -> TestResult {
    let Some(pg) = blocking(|| ThrowawayPg::start_or_skip("ping_and_logins_fail_fast"))? else {
        return Ok(());
    };
    let options = StoreOptions {
        acquire_timeout: std::time::Duration::from_millis(500),
        ping_timeout: std::time::Duration::from_millis(300),
        ..StoreOptions::default()
    };
    let store = chuhe_store::open(&pg.url(), &options).await?;
    let login = || store.authenticate(chuhe_store::hash_token("chuhe_nobody"));
    let bounded = |what: &'static str| {
        move |r: Result<Result<(), StoreError>, tokio::time::error::Elapsed>| {
            r.map_err(|_| format!("{what} hung"))
        }
    };
    store.ping().await?;
    assert_eq!(login().await?, None);

    blocking(|| pg.freeze())?;
    let ping = tokio::time::timeout(HANG, store.ping()).await;
    let ping = bounded("ping")(ping);
    let read = tokio::time::timeout(HANG, async { login().await.map(|_| ()) }).await;
    let read = bounded("login")(read);
    blocking(|| pg.thaw())?;
    let ping = ping?;
    assert!(matches!(ping, Err(StoreError::Timeout(_))), "{ping:?}");
    let read = read?
        .err()
        .ok_or("a login answered while the database hung")?;
    assert_eq!(read.kind(), chuhe_store::ErrorKind::Unavailable, "{read:?}");
    store.ping().await?;
    assert_eq!(login().await?, None);

    blocking(|| pg.kill())?;
    let ping = bounded("ping")(tokio::time::timeout(HANG, store.ping()).await)?;
    assert!(ping.is_err_and(|e| e.kind() == chuhe_store::ErrorKind::Unavailable));
    blocking(|| pg.start())?;
    // The pool drops the connections the stop broke as it finds them.
    let mut tries = 0;
    while let Err(e) = store.ping().await {
        tries += 1;
        assert!(tries < 10, "ping after the restart: {e}");
    }
    assert_eq!(login().await?, None);
    store.close().await;
    Ok(())
}

/// Longer than any timeout of the store under test: only a hang takes this long.
const HANG: std::time::Duration = std::time::Duration::from_secs(60);
