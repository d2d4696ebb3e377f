//! What the league service stores (issues 17 and 19), on both backends: games' start modes,
//! lateness limits and idempotency keys, and competitions with their append-only logs.
//! SQLite always (a temp file per case); PostgreSQL with `CHUHE_TEST_DATABASE_URL` (a fresh
//! database, a schema per case).

use std::sync::Arc;

use chuhe_store::{
    AnyStore, CompetitionId, ErrorKind, GameFilter, NewCompetition, NewCompetitionEvent, NewGame,
    PrincipalId, Role, Store, StoreError,
};

use crate::conformance::{
    T0, TestResult, new_game, open, player, principal_of, run_on_postgres, run_on_sqlite,
};
use crate::{cases, check};

cases!(
    games_keep_start_mode_and_lateness,
    keyed_create_is_idempotent,
    concurrent_keyed_creates_store_one_game,
    a_batch_of_games_is_created_together,
    competitions_are_listed_oldest_first,
    competition_log_appends_gap_free,
    competition_seq_conflicts_store_nothing,
    competition_entries_are_checked,
    concurrent_competition_appends_take_turns,
    competition_log_survives_reopen,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_league_storage() -> TestResult {
    run_on_sqlite(CASES).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_league_storage() -> TestResult {
    run_on_postgres("postgres_league_storage", CASES).await
}

const KEY: &str = "league/7/r3/t2/b1/g0";

async fn two_players(s: &AnyStore) -> Result<(PrincipalId, PrincipalId), StoreError> {
    Ok((player(s, "red").await?, player(s, "black").await?))
}

fn keyed(red: PrincipalId, black: PrincipalId, key: &str) -> NewGame {
    NewGame {
        start_mode: "scheduled".into(),
        lateness_limit_ms: 900_000,
        scheduled_start_ms: Some(T0 + 3_600_000),
        key: Some(key.into()),
        ..new_game(red, black)
    }
}

fn entry(seq: u64) -> NewCompetitionEvent {
    NewCompetitionEvent::new(
        seq,
        "result",
        format!(r#"{{"board":{seq},"result":"1-0","名":"红方"}}"#),
        T0 + seq as i64,
    )
}

fn entries(range: std::ops::RangeInclusive<u64>) -> Vec<NewCompetitionEvent> {
    range.map(entry).collect()
}

async fn season(s: &AnyStore, name: &str) -> Result<CompetitionId, StoreError> {
    let c = s
        .create_competition(NewCompetition {
            name: name.into(),
            created_at_ms: T0,
            created_by: None,
        })
        .await?;
    Ok(c.id)
}

async fn seqs(s: &AnyStore, c: CompetitionId, after: u64) -> Result<Vec<u64>, StoreError> {
    Ok(s.competition_events(c, after)
        .await?
        .iter()
        .map(|e| e.seq)
        .collect())
}

// ---- games ---------------------------------------------------------------------------------

/// `create_games`: a round's games in one call, each as `create_game` would (a stored key
/// returns its game, a key repeated within the batch one game), in order; a refused game
/// stores none of them.
async fn a_batch_of_games_is_created_together(url: String) -> TestResult {
    let s = open(&url).await?;
    let (red, black) = two_players(&s).await?;
    let before = s.create_game(keyed(red, black, "b/0")).await?;
    let batch: Vec<NewGame> = ["b/1", "b/0", "b/2", "b/1"]
        .iter()
        .map(|k| keyed(red, black, k))
        .collect();
    let made = s.create_games(batch).await?;
    check!(made.len() == 4);
    check!(made[1] == before, "a stored key: its game");
    check!(made[3] == made[0], "a key twice in the batch: one game");
    check!(made[0].id != made[2].id && made[0].id != before.id);
    check!(
        made.iter().map(|g| g.key.clone()).collect::<Vec<_>>()
            == ["b/1", "b/0", "b/2", "b/1"].map(|k| Some(k.to_string()))
    );
    check!(s.game_by_key("b/2").await? == Some(made[2].clone()));
    let live = s.list_games(GameFilter::Live, 100).await?.len();
    check!(live == 3);
    // One refused (red plays itself): nothing of the batch is stored.
    let refused = s
        .create_games(vec![keyed(red, black, "c/1"), keyed(red, red, "c/2")])
        .await;
    check!(
        matches!(refused, Err(StoreError::Invalid(_))),
        "{refused:?}"
    );
    check!(s.game_by_key("c/1").await?.is_none());
    check!(s.create_games(Vec::new()).await?.is_empty());
    check!(s.list_games(GameFilter::Live, 100).await?.len() == live);
    s.close().await;
    Ok(())
}

/// The new fields round-trip; bad values are refused with `Invalid`.
async fn games_keep_start_mode_and_lateness(url: String) -> TestResult {
    let s = open(&url).await?;
    let (red, black) = two_players(&s).await?;
    let plain = s.create_game(new_game(red, black)).await?;
    check!(plain.start_mode == "now" && plain.lateness_limit_ms == 0 && plain.key.is_none());
    let mut players = new_game(red, black);
    players.start_mode = "players".into();
    players.lateness_limit_ms = 60_000;
    let g = s.create_game(players).await?;
    check!(g.start_mode == "players" && g.lateness_limit_ms == 60_000 && g.key.is_none());
    check!(s.game(g.id).await? == g);
    check!(s.list_games(GameFilter::Live, 10).await? == vec![plain, g]);

    let refused = |new: NewGame| {
        let s = &s;
        async move {
            let r = s.create_game(new).await;
            matches!(&r, Err(e @ StoreError::Invalid(_)) if e.kind() == ErrorKind::Invalid)
        }
    };
    for mode in ["", "  ", "a\0b"] {
        let mut new = new_game(red, black);
        new.start_mode = mode.into();
        check!(refused(new).await, "start mode {mode:?}");
    }
    let mut long = new_game(red, black);
    long.start_mode = "x".repeat(65);
    check!(refused(long).await);
    let mut late = new_game(red, black);
    late.lateness_limit_ms = -1;
    check!(refused(late).await);
    for key in [String::new(), " ".into(), "k\0".into(), "k".repeat(201)] {
        check!(refused(keyed(red, black, &key)).await, "key {key:?}");
    }
    check!(
        s.create_game(keyed(red, black, &"k".repeat(200)))
            .await?
            .key
            .is_some()
    );
    check!(matches!(
        s.game_by_key("a\0").await,
        Err(StoreError::Invalid(_))
    ));
    check!(s.list_games(GameFilter::Live, 10).await?.len() == 3);
    s.close().await;
    Ok(())
}

/// A key already stored creates nothing and returns the stored game as it is; games without a
/// key never collide.
async fn keyed_create_is_idempotent(url: String) -> TestResult {
    let s = open(&url).await?;
    let (red, black) = two_players(&s).await?;
    check!(s.game_by_key(KEY).await?.is_none());
    let g = s.create_game(keyed(red, black, KEY)).await?;
    check!(g.key.as_deref() == Some(KEY) && g.start_mode == "scheduled");
    check!(g.lateness_limit_ms == 900_000 && g.scheduled_start_ms == Some(T0 + 3_600_000));
    check!(s.game_by_key(KEY).await? == Some(g.clone()));

    // The same key again, created later and otherwise different: the stored game, unchanged.
    let mut again = keyed(black, red, KEY);
    again.created_at_ms = T0 + 5_000;
    again.start_mode = "now".into();
    again.lateness_limit_ms = 0;
    let same = s.create_game(again).await?;
    check!(same == g, "{same:?} != {g:?}");
    check!(s.list_games(GameFilter::Live, 10).await? == vec![g.clone()]);
    // Still checked first: a request that is bad in itself is refused, key or not.
    let mut ghost = keyed(red, black, KEY);
    ghost.black = PrincipalId(red.0 + 1000);
    let r = s.create_game(ghost).await;
    check!(matches!(r, Err(StoreError::PrincipalNotFound(_))), "{r:?}");

    // Another key is another game; unkeyed games are never the same game.
    let other = s
        .create_game(keyed(red, black, "league/7/r3/t2/b1/g1"))
        .await?;
    check!(other.id != g.id);
    let a = s.create_game(new_game(red, black)).await?;
    let b = s.create_game(new_game(red, black)).await?;
    check!(a.id != b.id && a.key.is_none() && b.key.is_none());
    check!(s.game_by_key("league/7/r3/t2/b1/g2").await?.is_none());
    check!(s.list_games(GameFilter::Live, 10).await?.len() == 4);
    // The key survives the game's end.
    s.finish(
        g.id,
        vec![],
        chuhe_store::Finish {
            result: "1-0".into(),
            reason: "resign".into(),
            at_ms: T0 + 10,
        },
    )
    .await?;
    let finished = s.create_game(keyed(red, black, KEY)).await?;
    check!(finished.id == g.id && finished.is_finished());
    s.close().await;
    Ok(())
}

/// Many creates with one key at once (on a pool of connections, so on PostgreSQL several
/// inserts are in flight together): every one answers the same game, and one row is stored.
async fn concurrent_keyed_creates_store_one_game(url: String) -> TestResult {
    let s = Arc::new(open(&url).await?);
    let (red, black) = two_players(&s).await?;
    for k in 0..5 {
        let key = format!("league/1/r1/t1/b{k}/g0");
        let tasks: Vec<_> = (0..8)
            .map(|i| {
                let s = Arc::clone(&s);
                let mut new = keyed(red, black, &key);
                new.created_at_ms = T0 + i;
                tokio::spawn(async move { s.create_game(new).await })
            })
            .collect();
        let mut ids = Vec::new();
        for t in tasks {
            ids.push(t.await??.id);
        }
        ids.dedup();
        check!(ids.len() == 1, "key {key}: games {ids:?}");
        let stored = s.game_by_key(&key).await?;
        check!(stored.map(|g| g.id) == Some(ids[0]));
    }
    check!(s.list_games(GameFilter::Live, 100).await?.len() == 5);
    s.close().await;
    Ok(())
}

// ---- competitions --------------------------------------------------------------------------

async fn competitions_are_listed_oldest_first(url: String) -> TestResult {
    let s = open(&url).await?;
    check!(s.competitions().await?.is_empty());
    let org = principal_of(&s, Role::Organiser, "League office").await?;
    let a = s
        .create_competition(NewCompetition {
            name: "象甲 2026".into(),
            created_at_ms: T0 + 1,
            created_by: Some(org),
        })
        .await?;
    check!(a.name == "象甲 2026" && a.created_at_ms == T0 + 1);
    check!(a.created_by == Some(org) && a.last_seq == 0);
    // Names need not be unique; a later one may carry an earlier time: listed by creation.
    let b = s
        .create_competition(NewCompetition {
            name: "象甲 2026".into(),
            created_at_ms: T0,
            created_by: None,
        })
        .await?;
    check!(b.id != a.id && b.created_by.is_none());
    check!(s.competitions().await? == vec![a.clone(), b.clone()]);
    check!(s.competition(a.id).await? == a);

    let missing = CompetitionId(b.id.0 + 1000);
    let r = s.competition(missing).await;
    check!(
        matches!(&r, Err(e @ StoreError::CompetitionNotFound(id)) if *id == missing && e.kind() == ErrorKind::NotFound),
        "{r:?}"
    );
    let ghost = PrincipalId(org.0 + 1000);
    let r = s
        .create_competition(NewCompetition {
            name: "x".into(),
            created_at_ms: T0,
            created_by: Some(ghost),
        })
        .await;
    check!(
        matches!(r, Err(StoreError::PrincipalNotFound(id)) if id == ghost),
        "{r:?}"
    );
    for name in [String::new(), "  ".into(), "a\0".into(), "n".repeat(201)] {
        let r = s
            .create_competition(NewCompetition {
                name: name.clone(),
                created_at_ms: T0,
                created_by: None,
            })
            .await;
        check!(
            matches!(r, Err(StoreError::Invalid(_))),
            "name {name:?}: {r:?}"
        );
    }
    check!(s.competitions().await?.len() == 2);
    s.close().await;
    Ok(())
}

async fn competition_log_appends_gap_free(url: String) -> TestResult {
    let s = open(&url).await?;
    let arbiter = principal_of(&s, Role::Arbiter, "arb").await?;
    let c = season(&s, "象甲 2026").await?;
    let other = season(&s, "乙级 2026").await?;
    check!(s.competition_events(c, 0).await?.is_empty());
    check!(s.append_competition(c, entries(1..=3)).await? == 3);
    check!(s.competition(c).await?.last_seq == 3);
    let decision = NewCompetitionEvent::new(4, "forfeit", r#"{"board":2}"#, T0 + 99).by(
        arbiter,
        Some("absent at the lateness limit (art. 21)".into()),
    );
    check!(s.append_competition(c, vec![decision.clone()]).await? == 4);
    // Each log counts from 1 on its own.
    check!(s.append_competition(other, entries(1..=1)).await? == 1);
    check!(s.competition(other).await?.last_seq == 1);

    let all = s.competition_events(c, 0).await?;
    check!(all.iter().map(|e| e.seq).collect::<Vec<_>>() == vec![1, 2, 3, 4]);
    for (stored, given) in all.iter().zip(entries(1..=3).into_iter().chain([decision])) {
        check!(stored.competition == c && stored.seq == given.seq);
        check!(stored.kind == given.kind && stored.payload == given.payload);
        check!(stored.at_ms == given.at_ms && stored.actor == given.actor);
        check!(stored.reason == given.reason, "{stored:?}");
    }
    check!(all[3].actor == Some(arbiter) && all[0].actor.is_none());
    check!(seqs(&s, c, 2).await? == vec![3, 4]);
    check!(seqs(&s, c, 4).await?.is_empty());
    check!(seqs(&s, c, 100).await?.is_empty());
    check!(seqs(&s, other, 0).await? == vec![1]);

    let missing = CompetitionId(other.0 + 1000);
    let r = s.competition_events(missing, 0).await;
    check!(
        matches!(r, Err(StoreError::CompetitionNotFound(id)) if id == missing),
        "{r:?}"
    );
    let r = s.append_competition(missing, entries(1..=1)).await;
    check!(
        matches!(r, Err(StoreError::CompetitionNotFound(id)) if id == missing),
        "{r:?}"
    );
    s.close().await;
    Ok(())
}

/// A duplicate, a gap, or a gap inside one append: a typed conflict, and nothing of the append
/// stored.
async fn competition_seq_conflicts_store_nothing(url: String) -> TestResult {
    let s = open(&url).await?;
    let c = season(&s, "s").await?;
    check!(s.append_competition(c, entries(1..=2)).await? == 2);
    let before = s.competition_events(c, 0).await?;
    for (append, expected, got) in [
        (entries(2..=3), 3, 2),           // the first already used
        (entries(1..=1), 3, 1),           // long used
        (entries(4..=4), 3, 4),           // a gap
        (vec![entry(3), entry(5)], 4, 5), // a gap inside the append
        (vec![entry(3), entry(3)], 4, 3), // a seq twice
    ] {
        let r = s.append_competition(c, append).await;
        check!(
            matches!(&r, Err(e @ StoreError::CompetitionSeqMismatch { competition, expected: x, got: y })
                if *competition == c && *x == expected && *y == got && e.kind() == ErrorKind::Conflict),
            "expected {expected}, got {got}: {r:?}"
        );
        check!(s.competition(c).await?.last_seq == 2);
        check!(s.competition_events(c, 0).await? == before);
    }
    check!(s.append_competition(c, entries(3..=4)).await? == 4);
    s.close().await;
    Ok(())
}

/// Bad entries are refused before anything is written.
async fn competition_entries_are_checked(url: String) -> TestResult {
    let s = open(&url).await?;
    let c = season(&s, "s").await?;
    let p = player(&s, "p").await?;
    let invalid = |r: Result<u64, StoreError>| matches!(r, Err(StoreError::Invalid(_)));
    check!(invalid(s.append_competition(c, vec![]).await));
    let bad = |f: fn(&mut NewCompetitionEvent)| {
        let mut e = entry(2);
        f(&mut e);
        vec![entry(1), e]
    };
    check!(invalid(
        s.append_competition(c, bad(|e| e.kind = String::new()))
            .await
    ));
    check!(invalid(
        s.append_competition(c, bad(|e| e.kind = "k".repeat(65)))
            .await
    ));
    check!(invalid(
        s.append_competition(c, bad(|e| e.kind = "a\0".into()))
            .await
    ));
    check!(invalid(
        s.append_competition(c, bad(|e| e.payload = "{\"a\":\"\0\"}".into()))
            .await
    ));
    check!(invalid(
        s.append_competition(c, bad(|e| e.reason = Some("\0".into())))
            .await
    ));
    check!(invalid(
        s.append_competition(c, bad(|e| e.seq = u64::MAX)).await
    ));
    let ghost = PrincipalId(p.0 + 1000);
    let mut by_ghost = entries(1..=2);
    by_ghost[1].actor = Some(ghost);
    let r = s.append_competition(c, by_ghost).await;
    check!(
        matches!(r, Err(StoreError::PrincipalNotFound(id)) if id == ghost),
        "{r:?}"
    );
    check!(s.competition(c).await?.last_seq == 0);
    check!(s.competition_events(c, 0).await?.is_empty());
    // The limits themselves are fine, and any text is kept as given.
    let mut edge = entry(1).by(p, Some(String::new()));
    edge.kind = "k".repeat(64);
    edge.payload = String::new();
    check!(s.append_competition(c, vec![edge.clone()]).await? == 1);
    let stored = s.competition_events(c, 0).await?;
    check!(stored.len() == 1 && stored[0].kind == edge.kind && stored[0].payload.is_empty());
    check!(stored[0].reason.as_deref() == Some("") && stored[0].actor == Some(p));
    s.close().await;
    Ok(())
}

/// Appenders racing on one log, each retrying with the next seq whenever another got there
/// first: every entry is stored exactly once, the log stays gap-free, and every refusal is the
/// typed conflict (never a database error from two writers taking one seq).
async fn concurrent_competition_appends_take_turns(url: String) -> TestResult {
    let s = Arc::new(open(&url).await?);
    let c = season(&s, "s").await?;
    const WRITERS: u64 = 6;
    const EACH: u64 = 8;
    let tasks: Vec<_> = (0..WRITERS)
        .map(|w| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                for i in 0..EACH {
                    let mut seq = s.competition(c).await?.last_seq + 1;
                    loop {
                        let e = NewCompetitionEvent::new(seq, "lineup", format!("{w}/{i}"), T0);
                        match s.append_competition(c, vec![e]).await {
                            Ok(last) if last == seq => break,
                            Ok(last) => {
                                return Err(format!("appended {seq}, answered {last}").into());
                            }
                            Err(StoreError::CompetitionSeqMismatch { expected, got, .. })
                                if got == seq && expected > seq =>
                            {
                                seq = expected;
                            }
                            Err(e) => return Err(e.into()),
                        }
                    }
                }
                TestResult::Ok(())
            })
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    let log = s.competition_events(c, 0).await?;
    check!(
        log.iter().map(|e| e.seq).collect::<Vec<_>>() == (1..=WRITERS * EACH).collect::<Vec<_>>()
    );
    let mut payloads: Vec<&str> = log.iter().map(|e| e.payload.as_str()).collect();
    payloads.sort_unstable();
    let mut want: Vec<String> = (0..WRITERS)
        .flat_map(|w| (0..EACH).map(move |i| format!("{w}/{i}")))
        .collect();
    want.sort_unstable();
    check!(payloads == want.iter().map(String::as_str).collect::<Vec<_>>());
    check!(s.competition(c).await?.last_seq == WRITERS * EACH);
    s.close().await;
    Ok(())
}

/// What was acknowledged is there after the store is closed and opened again.
async fn competition_log_survives_reopen(url: String) -> TestResult {
    let s = open(&url).await?;
    let (red, black) = two_players(&s).await?;
    let g = s.create_game(keyed(red, black, KEY)).await?;
    let c = season(&s, "s").await?;
    s.append_competition(c, entries(1..=3)).await?;
    let log = s.competition_events(c, 0).await?;
    let comp = s.competition(c).await?;
    s.close().await;

    let s = open(&url).await?;
    check!(s.competition(c).await? == comp);
    check!(s.competitions().await? == vec![comp]);
    check!(s.competition_events(c, 0).await? == log);
    check!(s.game_by_key(KEY).await? == Some(g.clone()));
    check!(s.create_game(keyed(red, black, KEY)).await?.id == g.id);
    check!(s.append_competition(c, entries(4..=4)).await? == 4);
    s.close().await;
    Ok(())
}
