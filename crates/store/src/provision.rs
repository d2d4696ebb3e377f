//! Creating the PostgreSQL database a URL names when it does not exist yet, so that `chuhe serve
//! --database-url postgres://…/chuhe` works against a fresh PostgreSQL server (SQLite creates its
//! file by itself). Called by the binary before [`open`](crate::open); `open` itself never
//! creates databases.

use std::str::FromStr as _;

use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{ConnectOptions as _, Connection as _};

use crate::Result;

/// SQLSTATE `invalid_catalog_name`: the database does not exist.
const NO_SUCH_DATABASE: &str = "3D000";
/// SQLSTATE `duplicate_database`: someone created it in the meantime.
const DUPLICATE_DATABASE: &str = "42P04";
/// SQLSTATE `unique_violation`: two `CREATE DATABASE` of one name raced in the catalog.
const UNIQUE_VIOLATION: &str = "23505";

/// For a `postgres://` or `postgresql://` URL: connects to the database it names and, only if
/// PostgreSQL answers that it does not exist, connects with the same user and options to the
/// server's `postgres` database (`template1` if that one is missing too) and creates it, owned
/// by that user. Returns whether it created the database. Several processes doing this at once
/// all succeed (one creates it). Any other URL: `Ok(false)`, nothing done.
///
/// Errors are the server's (wrong password, no `CREATEDB` privilege, server down), as
/// [`StoreError::Database`](crate::StoreError::Database).
pub async fn create_postgres_database_if_missing(url: &str) -> Result<bool> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Ok(false);
    }
    let options = PgConnectOptions::from_str(url)?;
    match options.connect().await {
        Ok(conn) => {
            let _ = conn.close().await;
            return Ok(false);
        }
        Err(e) if sqlstate(&e).as_deref() == Some(NO_SUCH_DATABASE) => {}
        Err(e) => return Err(e.into()),
    }
    // Without a database in the URL PostgreSQL takes the user's name.
    let name = options
        .get_database()
        .unwrap_or(options.get_username())
        .to_owned();
    let mut admin = maintenance_connection(&options).await?;
    let created = match sqlx::query(&format!("CREATE DATABASE {}", quote_ident(&name)))
        .execute(&mut admin)
        .await
    {
        Ok(_) => true,
        Err(e)
            if matches!(
                sqlstate(&e).as_deref(),
                Some(DUPLICATE_DATABASE | UNIQUE_VIOLATION)
            ) =>
        {
            false
        }
        Err(e) => return Err(e.into()),
    };
    let _ = admin.close().await;
    if created {
        tracing::info!(database = %name, "created the PostgreSQL database");
    }
    Ok(created)
}

/// A connection to the server's `postgres` database, or `template1` where there is none.
async fn maintenance_connection(options: &PgConnectOptions) -> Result<PgConnection> {
    match options.clone().database("postgres").connect().await {
        Err(e) if sqlstate(&e).as_deref() == Some(NO_SUCH_DATABASE) => {
            Ok(options.clone().database("template1").connect().await?)
        }
        other => Ok(other?),
    }
}

fn sqlstate(e: &sqlx::Error) -> Option<String> {
    e.as_database_error()
        .and_then(|d| d.code())
        .map(|c| c.into_owned())
}

/// `name` as a quoted SQL identifier (any name a URL can carry, quotes doubled).
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted_with_inner_quotes_doubled() {
        assert_eq!(quote_ident("chuhe"), "\"chuhe\"");
        assert_eq!(quote_ident("Chu He"), "\"Chu He\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
    }

    #[tokio::test]
    async fn other_urls_are_left_alone() {
        for url in ["sqlite://chuhe.db", "sqlite:chuhe.db", "mysql://x/y"] {
            assert!(
                !create_postgres_database_if_missing(url)
                    .await
                    .unwrap_or(true)
            );
        }
    }
}
