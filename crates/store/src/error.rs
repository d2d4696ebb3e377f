//! The store's typed errors.

use crate::types::{CompetitionId, GameId, PrincipalId, Role, TokenId};

/// Everything that can go wrong in the store, sorted into kinds by [`StoreError::kind`]: the
/// caller's mistakes (which leave the store unchanged) and failures of the database or store.
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
    #[error("competition {0} not found")]
    CompetitionNotFound(CompetitionId),
    #[error("a {role} named {name:?} already exists")]
    NameTaken { role: Role, name: String },
    #[error("the id {0:?} is taken")]
    HandleTaken(String),
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
    /// The entries appended to a competition's log do not continue it: `got` is the offending
    /// seq, `expected` the one that would have been accepted (`got < expected`: already used;
    /// `got > expected`: a gap). Nothing of that append was stored.
    #[error("competition {competition}: entry seq {got} refused, expected {expected}")]
    CompetitionSeqMismatch {
        competition: CompetitionId,
        expected: u64,
        got: u64,
    },
    #[error("game {0} is finished")]
    GameFinished(GameId),
    /// The batch transaction carrying this append failed before it could commit (I/O error,
    /// lost connection, ...): nothing of the batch was stored, and nothing of it ever will be.
    #[error("commit failed: {0}")]
    CommitFailed(String),
    /// The batch transaction carrying this append may or may not have committed: the
    /// connection was lost while the commit was in flight (PostgreSQL), `COMMIT` itself failed
    /// (SQLite), or the writer stopped before answering. Find out with
    /// [`Store::resolve_append`](crate::Store::resolve_append) before relying on either.
    #[error("commit outcome unknown: {0}")]
    CommitUnknown(String),
    /// The log already holds different events at the seqs of an append being resolved
    /// ([`Store::resolve_append`](crate::Store::resolve_append)): `seq` is the first that
    /// differs. Something else was committed there; the append itself was not.
    #[error("game {game}: the log holds a different event at seq {seq}")]
    AppendConflict { game: GameId, seq: u64 },
    #[error("stored data is inconsistent: {0}")]
    Corrupt(String),
    #[error("the store is closed")]
    Closed,
    /// The database did not answer in time: `0` says what waited ([`Store::ping`](crate::Store::ping)).
    #[error("the database did not answer in time: {0}")]
    Timeout(String),
    /// The append carried a fencing token older than the one the database holds for its game
    /// or competition: another node has claimed it since (`Store::claim_*`). Nothing of that
    /// append was stored; the writer is no longer the owner.
    #[error("{what}: fencing token {token} is stale; another node owns it now")]
    Fenced { what: String, token: u64 },
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
            self.kind(),
            ErrorKind::Unavailable | ErrorKind::Internal | ErrorKind::Fenced
        )
    }
}

/// What kind of failure a [`StoreError`] is, for a client-facing status: the HTTP status each
/// suggests is in brackets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad input: a blank or too long text, an empty append, a role that may not hold a token
    /// or play (400).
    Invalid,
    /// A principal, game, token or competition that does not exist (404).
    NotFound,
    /// The input conflicts with what is stored: a name or token hash already taken, a seq
    /// already used or out of turn, a finished game, other events at a seq being resolved
    /// (409). Retrying the same request cannot succeed.
    Conflict,
    /// The database or the store is failing or unreachable, or closed: nothing the caller did
    /// (503). The same request may succeed later. See [`StoreError::outcome_unknown`] for
    /// appends.
    Unavailable,
    /// The stored data or the schema is broken, or the store was configured wrong (500).
    Internal,
    /// The writer is no longer the owner of the game or competition (a stale fencing token,
    /// [`StoreError::Fenced`]): nothing was stored; the new owner carries on (409 to no one:
    /// the server re-routes).
    Fenced,
}

impl StoreError {
    /// The kind of failure (see [`ErrorKind`]). Every kind but `Unavailable` and `Internal` is
    /// the caller's mistake and changed nothing ([`is_client_error`](Self::is_client_error)).
    pub fn kind(&self) -> ErrorKind {
        match self {
            StoreError::Invalid(_)
            | StoreError::WrongRole { .. }
            | StoreError::RoleNotGrantable { .. } => ErrorKind::Invalid,
            StoreError::PrincipalNotFound(_)
            | StoreError::GameNotFound(_)
            | StoreError::TokenNotFound(_)
            | StoreError::CompetitionNotFound(_) => ErrorKind::NotFound,
            StoreError::NameTaken { .. }
            | StoreError::HandleTaken(_)
            | StoreError::DuplicateToken
            | StoreError::SeqMismatch { .. }
            | StoreError::CompetitionSeqMismatch { .. }
            | StoreError::GameFinished(_)
            | StoreError::AppendConflict { .. } => ErrorKind::Conflict,
            StoreError::Database(_)
            | StoreError::Sqlite(_)
            | StoreError::CommitFailed(_)
            | StoreError::CommitUnknown(_)
            | StoreError::Timeout(_)
            | StoreError::Closed => ErrorKind::Unavailable,
            StoreError::Fenced { .. } => ErrorKind::Fenced,
            StoreError::Corrupt(_) | StoreError::Migrate(_) | StoreError::UnsupportedUrl(_) => {
                ErrorKind::Internal
            }
        }
    }

    /// Whether an append or finish answered with this error may nonetheless have committed
    /// ([`StoreError::CommitUnknown`] only). Every other error of `append`, `finish` and
    /// `append_many` means the append was not stored and never will be.
    pub fn outcome_unknown(&self) -> bool {
        matches!(self, StoreError::CommitUnknown(_))
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;
