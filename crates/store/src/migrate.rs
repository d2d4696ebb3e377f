//! The SQL migrations under `migrations/{sqlite,postgres}/`, embedded at compile time and run by
//! sqlx's migrator when a store opens (recorded in `_sqlx_migrations`; an edited, already
//! applied migration is refused by checksum).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};

/// (version, description, SQL)
type Embedded = &'static [(i64, &'static str, &'static str)];

pub(crate) const SQLITE: Embedded = &[
    (
        1,
        "initial",
        include_str!("../../../migrations/sqlite/0001_initial.sql"),
    ),
    (
        2,
        "last seq from the log",
        include_str!("../../../migrations/sqlite/0002_last_seq_from_the_log.sql"),
    ),
    (
        3,
        "recent events",
        include_str!("../../../migrations/sqlite/0003_recent_events.sql"),
    ),
    (
        4,
        "event keys",
        include_str!("../../../migrations/sqlite/0004_event_keys.sql"),
    ),
    (
        5,
        "key steps in slices",
        include_str!("../../../migrations/sqlite/0005_key_steps_in_slices.sql"),
    ),
    (
        6,
        "league",
        include_str!("../../../migrations/sqlite/0006_league.sql"),
    ),
    (
        7,
        "principal handles",
        include_str!("../../../migrations/sqlite/0007_principal_handles.sql"),
    ),
    (
        8,
        "fencing",
        include_str!("../../../migrations/sqlite/0008_fencing.sql"),
    ),
];

pub(crate) const POSTGRES: Embedded = &[
    (
        1,
        "initial",
        include_str!("../../../migrations/postgres/0001_initial.sql"),
    ),
    (
        2,
        "league",
        include_str!("../../../migrations/postgres/0002_league.sql"),
    ),
    (
        3,
        "principal handles",
        include_str!("../../../migrations/postgres/0003_principal_handles.sql"),
    ),
    (
        4,
        "fencing",
        include_str!("../../../migrations/postgres/0004_fencing.sql"),
    ),
    (
        5,
        "events without foreign key",
        include_str!("../../../migrations/postgres/0005_events_without_fk.sql"),
    ),
];

#[derive(Debug)]
struct Source(Embedded);

impl<'s> MigrationSource<'s> for Source {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 's>> {
        Box::pin(async move {
            Ok(self
                .0
                .iter()
                .map(|&(version, description, sql)| {
                    Migration::new(
                        version,
                        Cow::Borrowed(description),
                        MigrationType::Simple,
                        Cow::Borrowed(sql),
                        false,
                    )
                })
                .collect())
        })
    }
}

pub(crate) async fn migrator(
    migrations: Embedded,
) -> Result<Migrator, sqlx::migrate::MigrateError> {
    Migrator::new(Source(migrations)).await
}
