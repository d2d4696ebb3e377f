//! The store's typed errors.

use crate::types::{GameId, PrincipalId, Role, TokenId};

/// Everything that can go wrong in the store. Variants other than `Database`, `Sqlite`, `Migrate`,
/// `CommitFailed`, `Corrupt` and `Closed` are the caller's mistake and leave the store unchanged.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("unsupported database URL {0:?}: expected sqlite://FILE or postgres://…")]
    UnsupportedUrl(String),
    #[error("invalid input: {0}")]
    Invalid(String),
    #[error("principal {0} not found")]
    PrincipalNotFound(PrincipalId),
    #[error("game {0} not found")]
    GameNotFound(GameId),
    #[error("token {0} not found")]
    TokenNotFound(TokenId),
    #[error("a {role} named {name:?} already exists")]
    NameTaken { role: Role, name: String },
    #[error("principal {principal} is a {actual}, not a {expected}")]
    WrongRole {
        principal: PrincipalId,
        expected: Role,
        actual: Role,
    },
    #[error("a {principal_role} cannot hold a {token_role} token")]
    RoleNotGrantable {
        principal_role: Role,
        token_role: Role,
    },
    #[error("a token with this hash already exists")]
    DuplicateToken,
    /// The appended events do not continue the log: `got` is the offending seq, `expected` the
    /// one that would have been accepted. `got < expected` is a duplicate (already stored),
    /// `got > expected` a gap. Nothing of that append was stored.
    #[error("game {game}: event seq {got} refused, expected {expected}")]
    SeqMismatch {
        game: GameId,
        expected: u64,
        got: u64,
    },
    #[error("game {0} is finished")]
    GameFinished(GameId),
    /// The batch transaction carrying this append failed (I/O error, lost connection, ...).
    /// Nothing of the batch was stored.
    #[error("commit failed: {0}")]
    CommitFailed(String),
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
    #[error("the store is closed")]
    Closed,
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// An error of the SQLite writer's own connection.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

impl StoreError {
    /// Whether the error is the caller's mistake (bad input or state), as opposed to a failure
    /// of the database or the store itself.
    pub fn is_client_error(&self) -> bool {
        !matches!(
            self,
            StoreError::Database(_)
                | StoreError::Sqlite(_)
                | StoreError::Migrate(_)
                | StoreError::CommitFailed(_)
                | StoreError::Corrupt(_)
                | StoreError::Closed
                | StoreError::UnsupportedUrl(_)
        )
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
