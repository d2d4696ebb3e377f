//! Fencing tokens (issue 23), on both backends: a claim bumps a game's or competition's token,
//! an append carrying a stale token is refused and stores nothing (without failing the other
//! appends of its batch), and a claim racing appends in flight never loses an acknowledged
//! append nor lets a stale one in. SQLite always (a temp file per case); PostgreSQL with
//! `CHUHE_TEST_DATABASE_URL` (a fresh database, a schema per case).

use std::sync::Arc;

use chuhe_store::{
    AnyStore, Append, CompetitionId, GameId, NewCompetition, NewCompetitionEvent, Store, StoreError,
};

use crate::conformance::{
    T0, TestResult, ev, evs, game_between, open, run_on_postgres, run_on_sqlite,
};
use crate::{cases, check};

cases!(
    claims_bump_the_token,
    a_stale_append_is_refused_and_stores_nothing,
    a_fenced_append_does_not_fail_its_batch,
    competition_appends_are_fenced,
    a_claim_racing_appends_loses_nothing_and_lets_nothing_stale_in,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_fencing() -> TestResult {
    run_on_sqlite(CASES).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_fencing() -> TestResult {
    run_on_postgres("postgres_fencing", CASES).await
}

fn fenced(game: GameId, events: Vec<chuhe_store::NewEvent>, fence: Option<u64>) -> Append {
    Append {
        game,
        events,
        finish: None,
        fence,
    }
}

/// One append through `append_many` (the way a fenced append is made).
async fn append(s: &AnyStore, a: Append) -> Result<u64, StoreError> {
    s.append_many(vec![a])
        .await
        .pop()
        .unwrap_or(Err(StoreError::Closed))
}

async fn seqs(s: &AnyStore, game: GameId) -> Result<Vec<u64>, StoreError> {
    Ok(s.events_since(game, 0, 10_000)
        .await?
        .iter()
        .map(|e| e.seq)
        .collect())
}

async fn season(s: &AnyStore, name: &str) -> Result<CompetitionId, StoreError> {
    Ok(s.create_competition(NewCompetition {
        name: name.into(),
        created_at_ms: T0,
        created_by: None,
    })
    .await?
    .id)
}

fn entries(range: std::ops::RangeInclusive<u64>) -> Vec<NewCompetitionEvent> {
    range
        .map(|seq| NewCompetitionEvent::new(seq, "result", "{}", T0 + seq as i64))
        .collect()
}

fn is_fenced(r: &Result<u64, StoreError>, token: u64) -> bool {
    matches!(r, Err(StoreError::Fenced { token: t, .. }) if *t == token)
}

async fn claims_bump_the_token(url: String) -> TestResult {
    let s = open(&url).await?;
    let g = game_between(&s, "red", "black").await?;
    let h = game_between(&s, "red2", "black2").await?;
    check!(s.claim_game(g, "node-a").await? == 1);
    check!(s.claim_game(g, "node-b").await? == 2);
    check!(s.claim_game(h, "node-a").await? == 1, "tokens are per game");
    let missing = s.claim_game(GameId(h.0 + 1000), "node-a").await;
    check!(
        matches!(missing, Err(StoreError::GameNotFound(_))),
        "{missing:?}"
    );
    let c = season(&s, "2026").await?;
    check!(s.claim_competition(c, "node-a").await? == 1);
    check!(s.claim_competition(c, "node-a").await? == 2);
    let missing = s.claim_competition(CompetitionId(c.0 + 1000), "n").await;
    check!(
        matches!(missing, Err(StoreError::CompetitionNotFound(_))),
        "{missing:?}"
    );
    let blank = s.claim_game(g, "").await;
    check!(matches!(blank, Err(StoreError::Invalid(_))), "{blank:?}");
    s.close().await;
    Ok(())
}

async fn a_stale_append_is_refused_and_stores_nothing(url: String) -> TestResult {
    let s = open(&url).await?;
    let g = game_between(&s, "red", "black").await?;
    // Unchecked before any claim, and a token other than the current (0) is refused.
    check!(append(&s, fenced(g, evs(1..=1), None)).await? == 1);
    let r = append(&s, fenced(g, evs(2..=2), Some(1))).await;
    check!(is_fenced(&r, 1), "{r:?}");
    let t1 = s.claim_game(g, "node-a").await?;
    check!(append(&s, fenced(g, evs(2..=3), Some(t1))).await? == 3);
    // The writer knows the game now: the one-statement path checks the token too.
    check!(append(&s, fenced(g, evs(4..=4), Some(t1))).await? == 4);
    let t2 = s.claim_game(g, "node-b").await?;
    let stale = append(&s, fenced(g, evs(5..=6), Some(t1))).await;
    check!(is_fenced(&stale, t1), "{stale:?}");
    check!(
        stale
            .as_ref()
            .is_err_and(|e| e.kind() == chuhe_store::ErrorKind::Fenced)
    );
    check!(
        seqs(&s, g).await? == vec![1, 2, 3, 4],
        "nothing of it stored"
    );
    // A stale finish is refused too, and the game stays open.
    let fin = chuhe_store::Finish {
        result: "1-0".into(),
        reason: "resign".into(),
        at_ms: T0,
    };
    let stale_finish = append(
        &s,
        Append {
            finish: Some(fin.clone()),
            ..fenced(g, vec![], Some(t1))
        },
    )
    .await;
    check!(is_fenced(&stale_finish, t1), "{stale_finish:?}");
    check!(s.game(g).await?.finish.is_none());
    // The new owner carries on where the log ends; an unfenced append is not checked.
    check!(append(&s, fenced(g, evs(5..=5), Some(t2))).await? == 5);
    check!(s.append(g, vec![ev(6)]).await? == 6);
    check!(
        append(
            &s,
            Append {
                finish: Some(fin),
                ..fenced(g, vec![], Some(t2))
            }
        )
        .await?
            == 6
    );
    check!(s.game(g).await?.finish.is_some());
    // The refusal survives a reopen (the token is stored, not remembered).
    s.close().await;
    let s = open(&url).await?;
    let h = game_between(&s, "red3", "black3").await?;
    let t = s.claim_game(h, "node-a").await?;
    s.close().await;
    let s = open(&url).await?;
    let r = append(&s, fenced(h, evs(1..=1), Some(t + 1))).await;
    check!(is_fenced(&r, t + 1), "{r:?}");
    check!(append(&s, fenced(h, evs(1..=1), Some(t))).await? == 1);
    s.close().await;
    Ok(())
}

async fn a_fenced_append_does_not_fail_its_batch(url: String) -> TestResult {
    let s = open(&url).await?;
    // Games committed by one writer, so one append_many is one transaction.
    let mut games = Vec::new();
    for i in 0..8 {
        let g = game_between(&s, &format!("r{i}"), &format!("b{i}")).await?;
        if games
            .first()
            .is_none_or(|&f| s.writer_of(f) == s.writer_of(g))
        {
            games.push(g);
        }
    }
    let [a, b, c, ..] = games[..] else {
        return Err("too few games of one writer".into());
    };
    let (ta, tb) = (s.claim_game(a, "n").await?, s.claim_game(b, "n").await?);
    // First the writer does not know the games (the locked path reads the tokens)…
    let answers = s
        .append_many(vec![
            fenced(a, evs(1..=1), Some(ta)),
            fenced(b, evs(1..=1), Some(tb)),
            fenced(c, evs(1..=1), None),
            fenced(b, evs(2..=2), Some(tb)),
        ])
        .await;
    check!(answers.iter().all(|r| r.is_ok()), "{answers:?}");
    // … then it does (the one-statement path, which a stale token makes write nothing, and
    // the locked path then refuses that append only).
    s.claim_game(a, "other").await?;
    let answers = s
        .append_many(vec![
            fenced(a, evs(2..=2), Some(ta)),
            fenced(b, evs(3..=3), Some(tb)),
            fenced(c, evs(2..=2), None),
            fenced(b, evs(4..=4), Some(tb)),
        ])
        .await;
    check!(is_fenced(&answers[0], ta), "{answers:?}");
    check!(answers[1].as_ref().ok() == Some(&3), "{answers:?}");
    check!(answers[2].as_ref().ok() == Some(&2), "{answers:?}");
    check!(answers[3].as_ref().ok() == Some(&4), "{answers:?}");
    // And once more, now that the writer knows b and c again but not a.
    let answers = s
        .append_many(vec![
            fenced(b, evs(5..=5), Some(tb)),
            fenced(a, evs(2..=2), Some(ta)),
            fenced(c, evs(3..=3), None),
        ])
        .await;
    check!(is_fenced(&answers[1], ta), "{answers:?}");
    check!(answers[0].is_ok() && answers[2].is_ok(), "{answers:?}");
    check!(seqs(&s, a).await? == vec![1]);
    check!(seqs(&s, b).await? == vec![1, 2, 3, 4, 5]);
    check!(seqs(&s, c).await? == vec![1, 2, 3]);
    s.close().await;
    Ok(())
}

async fn competition_appends_are_fenced(url: String) -> TestResult {
    let s = open(&url).await?;
    let c = season(&s, "2026").await?;
    check!(s.append_competition(c, entries(1..=1)).await? == 1);
    let t1 = s.claim_competition(c, "node-a").await?;
    check!(
        s.append_competition_fenced(c, entries(2..=3), Some(t1))
            .await?
            == 3
    );
    let t2 = s.claim_competition(c, "node-b").await?;
    let stale = s
        .append_competition_fenced(c, entries(4..=4), Some(t1))
        .await;
    check!(is_fenced(&stale, t1), "{stale:?}");
    check!(s.competition(c).await?.last_seq == 3, "nothing stored");
    check!(s.competition_events(c, 0).await?.len() == 3);
    check!(
        s.append_competition_fenced(c, entries(4..=4), Some(t2))
            .await?
            == 4
    );
    check!(
        s.append_competition(c, entries(5..=5)).await? == 5,
        "unchecked"
    );
    s.close().await;
    Ok(())
}

/// Node A appends to several games, one event after another, each with its token; node B
/// claims the games while A's appends are in flight and then reads each log. Every append A
/// saw acknowledged must be in what B read, A's appends must be refused from then on, and B
/// continues each log right after what it read. On PostgreSQL A and B are two stores (two
/// nodes' connections); on SQLite one store's writer and its pool.
async fn a_claim_racing_appends_loses_nothing_and_lets_nothing_stale_in(url: String) -> TestResult {
    const GAMES: usize = 6;
    let a = Arc::new(open(&url).await?);
    let b = if url.starts_with("sqlite:") {
        Arc::clone(&a)
    } else {
        Arc::new(open(&url).await?)
    };
    let (started, mut going) = tokio::sync::mpsc::unbounded_channel::<()>();
    // Set once B has claimed every game: A's next append must be refused.
    let claimed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut tasks = Vec::new();
    let mut games = Vec::new();
    for i in 0..GAMES {
        let g = game_between(&a, &format!("r{i}"), &format!("b{i}")).await?;
        games.push(g);
        let token = a.claim_game(g, "node-a").await?;
        let (a, started, claimed) = (Arc::clone(&a), started.clone(), Arc::clone(&claimed));
        tasks.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            for seq in 1..=1_000_000u64 {
                let after_claims = claimed.load(std::sync::atomic::Ordering::SeqCst);
                match append(&a, fenced(g, vec![ev(seq)], Some(token))).await {
                    Ok(_) => acked.push(seq),
                    Err(StoreError::Fenced { .. }) => return Ok(acked),
                    Err(e) => return Err(e),
                }
                if after_claims {
                    return Err(StoreError::Invalid(format!(
                        "game {g}: a stale append (seq {seq}) was stored"
                    )));
                }
                if seq == 3 {
                    let _ = started.send(());
                }
            }
            Err(StoreError::Invalid("node A was never fenced".into()))
        }));
    }
    drop(started);
    for _ in 0..GAMES {
        check!(going.recv().await.is_some(), "an appender ended early");
    }
    let mut read = Vec::new();
    for &g in &games {
        let token = b.claim_game(g, "node-b").await?;
        read.push((token, b.load_game(g).await?));
    }
    claimed.store(true, std::sync::atomic::Ordering::SeqCst);
    for ((task, &g), (token, record)) in tasks.into_iter().zip(&games).zip(read) {
        let acked = task.await??;
        let last = record.game.last_seq;
        check!(
            acked.last().is_some_and(|&s| s <= last),
            "game {g}: A's acknowledged {acked:?} beyond B's read {last}"
        );
        check!(acked.len() as u64 >= 3 && acked.len() as u64 <= last);
        for (i, e) in record.events.iter().enumerate() {
            check!(e.seq == i as u64 + 1 && e.payload == ev(e.seq).payload);
        }
        check!(append(&b, fenced(g, evs(last + 1..=last + 1), Some(token))).await? == last + 1);
        let stored = seqs(&b, g).await?;
        check!(
            stored == (1..=last + 1).collect::<Vec<_>>(),
            "game {g}: {stored:?}"
        );
    }
    if !Arc::ptr_eq(&a, &b) {
        b.close().await;
    }
    a.close().await;
    Ok(())
}

/// PostgreSQL: a claim that comes while an append's transaction holds the game's row (as the
/// writers' transactions do, `FOR UPDATE`) waits until that transaction has committed, and the
/// new owner's read after the claim sees what it wrote. The "append in flight" is a
/// transaction of the test's own connection, so the test decides when it commits; the claim
/// is seen waiting on the lock in `pg_stat_activity` before the commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_claim_waits_for_an_append_in_flight() -> TestResult {
    use sqlx::{Connection as _, Row as _};
    crate::conformance::on_fresh_pg_database(|url| async move {
        let s = Arc::new(open(&url).await?);
        let g = game_between(&s, "red", "black").await?;
        let t1 = s.claim_game(g, "node-a").await?;
        check!(append(&s, fenced(g, evs(1..=1), Some(t1))).await? == 1);
        let mut old_owner = sqlx::PgConnection::connect(&url).await?;
        let mut tx = old_owner.begin().await?;
        let token: i64 = sqlx::query("SELECT fence_token FROM games WHERE id = $1 FOR UPDATE")
            .bind(g.0)
            .fetch_one(&mut *tx)
            .await?
            .try_get(0)?;
        check!(token as u64 == t1, "the old owner's token is current");
        sqlx::query(
            "INSERT INTO game_events (game_id, seq, kind, payload, at_ms) VALUES ($1, 2, 'move', $2, 0)",
        )
        .bind(g.0)
        .bind(ev(2).payload)
        .execute(&mut *tx)
        .await?;
        sqlx::query("UPDATE games SET last_seq = 2 WHERE id = $1")
            .bind(g.0)
            .execute(&mut *tx)
            .await?;
        let claim = tokio::spawn({
            let s = Arc::clone(&s);
            async move { s.claim_game(g, "node-b").await }
        });
        // Wait (with a deadline) until the claim's backend is waiting on a lock.
        let mut watcher = sqlx::PgConnection::connect(&url).await?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let waiting: i64 = sqlx::query(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND wait_event_type = 'Lock' AND query LIKE 'UPDATE games SET fence_token%'",
            )
            .fetch_one(&mut watcher)
            .await?
            .try_get(0)?;
            if waiting > 0 {
                break;
            }
            check!(!claim.is_finished(), "the claim did not wait for the append in flight");
            check!(std::time::Instant::now() < deadline, "the claim never waited");
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        check!(!claim.is_finished());
        tx.commit().await?;
        let t2 = claim.await??;
        check!(t2 == t1 + 1);
        let record = s.load_game(g).await?;
        check!(record.game.last_seq == 2, "the new owner sees the append");
        let stale = append(&s, fenced(g, evs(3..=3), Some(t1))).await;
        check!(is_fenced(&stale, t1), "{stale:?}");
        check!(append(&s, fenced(g, evs(3..=3), Some(t2))).await? == 3);
        s.close().await;
        Ok(())
    })
    .await
}
