//! Contracts added for the server's hardening (issue 21), on both backends: resolving an append
//! whose outcome is unknown, typed conflicts for client mistakes, and the readiness probe.
//! SQLite always; PostgreSQL with `CHUHE_TEST_DATABASE_URL` (a fresh database per case).

use chuhe_store::{
    AnyStore, Append, ErrorKind, Finish, NewAudit, NewEvent, NewPrincipal, NewToken, PrincipalId,
    Resolution, Role, Store, StoreError, generate_token,
};

use crate::conformance::{T0, ev, evs, game_between, on_fresh_pg_database, open};

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// Runs `case` on a fresh SQLite file and, with `CHUHE_TEST_DATABASE_URL`, on a fresh
/// PostgreSQL database.
async fn on_both<F, Fut>(case: F) -> TestResult
where
    F: Fn(AnyStore) -> Fut,
    Fut: std::future::Future<Output = TestResult>,
{
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("contract.db").display());
    case(open(&url).await?)
        .await
        .map_err(|e| format!("sqlite: {e}"))?;
    let case = &case;
    on_fresh_pg_database(|url| async move {
        let store = open(&url).await?;
        case(store)
            .await
            .map_err(|e| format!("postgres: {e}").into())
    })
    .await
}

fn fin(result: &str) -> Finish {
    Finish {
        result: result.into(),
        reason: "resign".into(),
        at_ms: T0 + 50,
    }
}

/// `resolve_append` tells committed from not committed from a different event at the seq, for
/// appends and finishes, and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resolve_append_answers_from_the_log() -> TestResult {
    on_both(|s| async move {
        let g = game_between(&s, "a", "b").await?;
        s.append(g, evs(1..=3)).await?;
        let append = |events: Vec<NewEvent>, finish: Option<Finish>| Append {
            game: g,
            events,
            finish,
            fence: None,
        };
        // The last append, and one of several events: committed.
        let r = s.resolve_append(&append(vec![ev(3)], None)).await?;
        assert_eq!(r, Resolution::Committed { last_seq: 3 });
        let r = s.resolve_append(&append(evs(2..=3), None)).await?;
        assert_eq!(r, Resolution::Committed { last_seq: 3 });
        // The next seq: not committed, and the log ends at 3.
        let r = s.resolve_append(&append(evs(4..=5), None)).await?;
        assert_eq!(r, Resolution::NotCommitted { last_seq: 3 });
        // A different payload, kind, time or actor at a stored seq: a conflict at that seq.
        let mut other = ev(3);
        other.payload = b"something else".to_vec();
        let r = s.resolve_append(&append(vec![ev(2), other], None)).await;
        assert!(
            matches!(r, Err(StoreError::AppendConflict { game, seq: 3 }) if game == g),
            "{r:?}"
        );
        let by = ev(2).by(PrincipalId(1), None);
        let r = s.resolve_append(&append(vec![by], None)).await;
        assert!(
            matches!(r, Err(StoreError::AppendConflict { seq: 2, .. })),
            "{r:?}"
        );
        // Reaching past the log's end: not all of it is there, so not this append.
        let r = s.resolve_append(&append(evs(3..=4), None)).await;
        assert!(
            matches!(r, Err(StoreError::AppendConflict { seq: 4, .. })),
            "{r:?}"
        );
        assert!(r.as_ref().is_err_and(|e| e.is_client_error()));
        // Finishes: not yet, then committed; the same events with another result conflict.
        let r = s
            .resolve_append(&append(vec![ev(4)], Some(fin("1-0"))))
            .await?;
        assert_eq!(r, Resolution::NotCommitted { last_seq: 3 });
        s.finish(g, vec![ev(4)], fin("1-0")).await?;
        let r = s
            .resolve_append(&append(vec![ev(4)], Some(fin("1-0"))))
            .await?;
        assert_eq!(r, Resolution::Committed { last_seq: 4 });
        let r = s
            .resolve_append(&append(vec![ev(4)], Some(fin("0-1"))))
            .await;
        assert!(
            matches!(r, Err(StoreError::AppendConflict { seq: 5, .. })),
            "{r:?}"
        );
        let r = s.resolve_append(&append(vec![], Some(fin("1-0")))).await?;
        assert_eq!(r, Resolution::Committed { last_seq: 4 });
        let r = s.resolve_append(&append(vec![], Some(fin("0-1")))).await?;
        assert_eq!(r, Resolution::NotCommitted { last_seq: 4 });
        // An unknown game.
        let missing = Append {
            game: chuhe_store::GameId(g.0 + 1000),
            events: vec![ev(1)],
            finish: None,
            fence: None,
        };
        let r = s.resolve_append(&missing).await;
        assert!(matches!(r, Err(StoreError::GameNotFound(_))), "{r:?}");
        // Nothing changed.
        let rec = s.load_game(g).await?;
        assert_eq!(rec.game.last_seq, 4);
        assert_eq!(rec.game.finish, Some(fin("1-0")));
        s.close().await;
        Ok(())
    })
    .await
}

/// A client's mistakes against what is stored are typed conflicts (409-able), never database
/// failures (503): a taken name or token, an unknown actor in the audit log, a NUL character
/// (which PostgreSQL cannot store, and which in an append failed the whole batch).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_mistakes_are_typed_not_unavailable() -> TestResult {
    on_both(|s| async move {
        let new = |role, name: &str| NewPrincipal {
            role,
            name: name.into(),
            rating: None,
            created_at_ms: T0,
        };
        let alice = s.create_principal(new(Role::Player, "alice")).await?;
        let dup = s.create_principal(new(Role::Player, "alice")).await;
        assert!(matches!(&dup, Err(StoreError::NameTaken { .. })), "{dup:?}");
        let dup = dup.err().ok_or("duplicate accepted")?;
        assert_eq!(dup.kind(), ErrorKind::Conflict);
        assert!(dup.is_client_error());
        // Names are unique per role.
        s.create_principal(new(Role::Arbiter, "alice")).await?;

        let token = NewToken {
            hash: generate_token()?.hash,
            principal: alice.id,
            role: Role::Player,
            label: None,
            created_at_ms: T0,
        };
        s.insert_token(token.clone()).await?;
        let dup = s.insert_token(token).await.err().ok_or("token accepted")?;
        assert!(matches!(dup, StoreError::DuplicateToken), "{dup:?}");
        assert_eq!(dup.kind(), ErrorKind::Conflict);

        let ghost = PrincipalId(alice.id.0 + 1000);
        let audit = s
            .record_audit(NewAudit {
                at_ms: T0,
                actor: Some(ghost),
                action: "issue_token".into(),
                subject: None,
                reason: None,
            })
            .await;
        assert!(
            matches!(audit, Err(StoreError::PrincipalNotFound(p)) if p == ghost),
            "{audit:?}"
        );

        let nul = s.create_principal(new(Role::Player, "a\0b")).await;
        assert!(matches!(nul, Err(StoreError::Invalid(_))), "{nul:?}");
        let g = game_between(&s, "c", "d").await?;
        let h = game_between(&s, "e", "f").await?;
        let bad = ev(1).by(alice.id, Some("why\0".into()));
        let answers = s
            .append_many(vec![
                Append {
                    game: g,
                    events: vec![ev(1)],
                    finish: None,
                    fence: None,
                },
                Append {
                    game: h,
                    events: vec![bad],
                    finish: None,
                    fence: None,
                },
            ])
            .await;
        assert!(matches!(answers[0], Ok(1)), "{answers:?}");
        assert!(
            matches!(answers[1], Err(StoreError::Invalid(_))),
            "{answers:?}"
        );
        assert_eq!(s.game(h).await?.last_seq, 0);
        s.close().await;
        Ok(())
    })
    .await
}

/// The readiness probe answers on a working store and says `Closed` after `close`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_answers_until_closed() -> TestResult {
    on_both(|s| async move {
        s.ping().await?;
        s.close().await;
        let r = s.ping().await;
        assert!(matches!(r, Err(StoreError::Closed)), "{r:?}");
        Ok(())
    })
    .await
}
