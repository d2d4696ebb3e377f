//! Plain data types of the store. No protocol or rules types: payloads are opaque bytes and the
//! texts (time control, ruleset, result, reason, event kind) are whatever the server writes.

use std::fmt;

use crate::error::StoreError;

macro_rules! id_newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id_newtype!(
    /// A player, arbiter or organiser.
    PrincipalId
);
id_newtype!(
    /// A game.
    GameId
);
id_newtype!(
    /// An issued bearer token (not the token itself, nor its hash).
    TokenId
);
id_newtype!(
    /// An entry of the administrative audit log.
    AuditId
);
id_newtype!(
    /// A competition (a league season) and its append-only log.
    CompetitionId
);

/// Unix time in milliseconds. The store never reads the clock: callers pass the time in.
pub type Millis = i64;

/// What a principal is, and the role a token grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Player,
    Arbiter,
    Organiser,
}

impl Role {
    /// The text stored in the database (`player`, `arbiter`, `organiser`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Player => "player",
            Role::Arbiter => "arbiter",
            Role::Organiser => "organiser",
        }
    }

    /// Parses the stored text; also accepts the American spelling `organizer`.
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "player" => Some(Role::Player),
            "arbiter" => Some(Role::Arbiter),
            "organiser" | "organizer" => Some(Role::Organiser),
            _ => None,
        }
    }

    /// Whether a principal of role `self` may hold a token granting `token_role`: each principal
    /// may hold tokens of its own role, and an organiser may also hold arbiter tokens.
    pub fn may_grant(self, token_role: Role) -> bool {
        self == token_role || (self == Role::Organiser && token_role == Role::Arbiter)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A principal to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPrincipal {
    pub role: Role,
    /// Display name, unique per role; 1 to 100 characters, not blank.
    pub name: String,
    /// Rating (players; `None` for arbiters and organisers, or unrated players).
    pub rating: Option<i64>,
    pub created_at_ms: Millis,
}

/// A stored principal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub id: PrincipalId,
    pub role: Role,
    pub name: String,
    pub rating: Option<i64>,
    pub created_at_ms: Millis,
}

/// The SHA-256 of an opaque bearer token: the only form in which a token is stored.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenHash(pub [u8; 32]);

impl fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Short prefix only: enough to tell hashes apart in logs.
        write!(f, "TokenHash(")?;
        for b in &self.0[..4] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "…)")
    }
}

/// A token to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewToken {
    pub hash: TokenHash,
    pub principal: PrincipalId,
    pub role: Role,
    /// Free text shown to admins ("laptop", "league 2026 arbiter").
    pub label: Option<String>,
    pub created_at_ms: Millis,
}

/// A stored token (its hash is not returned).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    pub id: TokenId,
    pub principal: PrincipalId,
    pub role: Role,
    pub label: Option<String>,
    pub created_at_ms: Millis,
    pub revoked_at_ms: Option<Millis>,
}

/// The result of authenticating a token: who, and with which role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authenticated {
    pub principal: Principal,
    pub token: TokenInfo,
}

/// How long spectators are held back. Both zero means live. The server enforces it; the store
/// only keeps the setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BroadcastDelay {
    /// Spectators see a move only after this many further moves have been played.
    pub moves: u32,
    /// Spectators see an event only this many milliseconds after it happened.
    pub millis: u64,
}

/// A game to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGame {
    pub red: PrincipalId,
    pub black: PrincipalId,
    /// Time control in the server's text form (opaque to the store).
    pub time_control: String,
    /// Ruleset name (opaque to the store).
    pub ruleset: String,
    /// Starting position as FEN.
    pub start_fen: String,
    pub broadcast_delay: BroadcastDelay,
    pub event: Option<String>,
    pub round: Option<String>,
    pub board: Option<u32>,
    pub scheduled_start_ms: Option<Millis>,
    pub created_at_ms: Millis,
    /// How the game's clock starts, as the server names it (`now`, `scheduled`, `players`);
    /// opaque to the store: 1 to 64 characters, not blank. Games stored before the column
    /// existed read back as `now`.
    pub start_mode: String,
    /// How late a player may be before the server forfeits them (art. 21); 0 when the game
    /// has no limit of its own. Not negative.
    pub lateness_limit_ms: Millis,
    /// An idempotency key (e.g. `league/7/r3/t2/b1/g0`), unique among games when present:
    /// creating a game with a key that is already stored creates nothing and returns the stored
    /// game as it is. 1 to 200 characters, not blank.
    pub key: Option<String>,
}

/// How a game ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finish {
    /// The result text (e.g. `1-0`, `0-1`, `1/2-1/2`).
    pub result: String,
    /// Why (e.g. `checkmate`, `flag`, `arbiter`).
    pub reason: String,
    pub at_ms: Millis,
}

/// A stored game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    pub id: GameId,
    pub red: PrincipalId,
    pub black: PrincipalId,
    pub time_control: String,
    pub ruleset: String,
    pub start_fen: String,
    pub broadcast_delay: BroadcastDelay,
    pub event: Option<String>,
    pub round: Option<String>,
    pub board: Option<u32>,
    pub scheduled_start_ms: Option<Millis>,
    pub created_at_ms: Millis,
    /// See [`NewGame::start_mode`] (`now` for games stored before it existed).
    pub start_mode: String,
    /// See [`NewGame::lateness_limit_ms`] (0 for games stored before it existed).
    pub lateness_limit_ms: Millis,
    /// See [`NewGame::key`].
    pub key: Option<String>,
    /// Highest stored event seq (0 when no event yet).
    pub last_seq: u64,
    /// `Some` once the game is finished.
    pub finish: Option<Finish>,
}

impl Game {
    pub fn is_finished(&self) -> bool {
        self.finish.is_some()
    }
}

/// Which games to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GameFilter {
    /// Unfinished games, oldest first.
    Live,
    /// Finished games, most recently finished first.
    Finished,
}

/// An event to append to a game's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEvent {
    /// Sequence number: the first event of a game is 1, and each append must continue exactly
    /// where the log ends.
    pub seq: u64,
    /// Short kind name chosen by the server (`move`, `draw_offer`, `arbiter_add_time`, ...).
    pub kind: String,
    /// Opaque bytes (the server stores the wire-encoded protobuf event).
    pub payload: Vec<u8>,
    /// Wall clock when the event happened.
    pub at_ms: Millis,
    /// Who caused it, when that matters for the audit trail (arbiter commands, claims).
    pub actor: Option<PrincipalId>,
    /// Why (free text, e.g. an arbiter's explanation).
    pub reason: Option<String>,
}

impl NewEvent {
    /// An event with no actor and no reason.
    pub fn new(seq: u64, kind: impl Into<String>, payload: Vec<u8>, at_ms: Millis) -> Self {
        NewEvent {
            seq,
            kind: kind.into(),
            payload,
            at_ms,
            actor: None,
            reason: None,
        }
    }

    /// Sets who caused the event and why.
    pub fn by(mut self, actor: PrincipalId, reason: Option<String>) -> Self {
        self.actor = Some(actor);
        self.reason = reason;
        self
    }
}

/// A stored event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub game: GameId,
    pub seq: u64,
    pub kind: String,
    pub payload: Vec<u8>,
    pub at_ms: Millis,
    pub actor: Option<PrincipalId>,
    pub reason: Option<String>,
}

/// What became of an append or finish whose answer was
/// [`StoreError::CommitUnknown`](crate::StoreError::CommitUnknown), as
/// [`Store::resolve_append`](crate::Store::resolve_append) found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// It committed: every event is in the log as given (and the game finished as given, for a
    /// finish). `last_seq` is what `append` would have answered: its last event's seq (for a
    /// finish without events, the game's last seq).
    Committed { last_seq: u64 },
    /// It did not commit, and nothing can commit it any more: the game's log ends at
    /// `last_seq`, before the append's first seq (or, for a finish without events, the game is
    /// not finished as given).
    NotCommitted { last_seq: u64 },
}

/// Everything needed to rebuild a game after a restart: its row and its whole event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRecord {
    pub game: Game,
    /// All events in seq order (1, 2, ..., `game.last_seq`).
    pub events: Vec<StoredEvent>,
}

/// An administrative action to log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAudit {
    pub at_ms: Millis,
    /// Who did it (`None`: the local `chuhe admin` command or the system).
    pub actor: Option<PrincipalId>,
    /// What (`create_player`, `issue_token`, `revoke_token`, ...).
    pub action: String,
    /// On what, as text (`player 12`, `token 7`).
    pub subject: Option<String>,
    /// Why.
    pub reason: Option<String>,
}

/// A stored audit entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub id: AuditId,
    pub at_ms: Millis,
    pub actor: Option<PrincipalId>,
    pub action: String,
    pub subject: Option<String>,
    pub reason: Option<String>,
}

/// A competition (a league season) to create: the owner of one append-only log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCompetition {
    /// Display name; 1 to 200 characters, not blank (not unique).
    pub name: String,
    pub created_at_ms: Millis,
    /// Who created it (`None`: the local `chuhe` command or the system).
    pub created_by: Option<PrincipalId>,
}

/// A stored competition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Competition {
    pub id: CompetitionId,
    pub name: String,
    pub created_at_ms: Millis,
    pub created_by: Option<PrincipalId>,
    /// Highest seq of its log (0 when the log is empty).
    pub last_seq: u64,
}

/// An entry to append to a competition's log: a lineup submission, a result, an arbiter's
/// decision, ... The store keeps it as given; what it means is the server's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCompetitionEvent {
    /// The first entry of a log is 1, and each append must continue exactly where it ends.
    pub seq: u64,
    /// Short kind name chosen by the server (`lineup`, `result`, `forfeit`, ...); 1 to 64
    /// characters, not blank.
    pub kind: String,
    /// JSON text, opaque to the store (stored and returned byte for byte); no NUL character.
    pub payload: String,
    /// When it happened.
    pub at_ms: Millis,
    /// Who did it (a captain, an arbiter, an organiser); `None` for the system.
    pub actor: Option<PrincipalId>,
    /// Why (an arbiter's reason).
    pub reason: Option<String>,
}

impl NewCompetitionEvent {
    /// An entry with no actor and no reason.
    pub fn new(
        seq: u64,
        kind: impl Into<String>,
        payload: impl Into<String>,
        at_ms: Millis,
    ) -> Self {
        NewCompetitionEvent {
            seq,
            kind: kind.into(),
            payload: payload.into(),
            at_ms,
            actor: None,
            reason: None,
        }
    }

    /// Sets who did it and why.
    pub fn by(mut self, actor: PrincipalId, reason: Option<String>) -> Self {
        self.actor = Some(actor);
        self.reason = reason;
        self
    }
}

/// A stored entry of a competition's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompetitionEvent {
    pub competition: CompetitionId,
    pub seq: u64,
    pub kind: String,
    pub payload: String,
    pub at_ms: Millis,
    pub actor: Option<PrincipalId>,
    pub reason: Option<String>,
}

pub(crate) const MAX_NAME_CHARS: usize = 100;
pub(crate) const MAX_KIND_CHARS: usize = 64;

/// An event kind (of a game's log or a competition's): 1 to [`MAX_KIND_CHARS`] characters, no
/// NUL.
pub(crate) fn check_kind(kind: &str) -> Result<(), StoreError> {
    if kind.is_empty() || kind.chars().count() > MAX_KIND_CHARS {
        return Err(StoreError::Invalid(format!(
            "event kind must be 1 to {MAX_KIND_CHARS} characters"
        )));
    }
    check_no_nul("event kind", kind)
}

/// Refuses a NUL character: PostgreSQL cannot store one in text (it would fail the statement,
/// and for an append the whole batch), so neither backend takes one.
pub(crate) fn check_no_nul(what: &str, s: &str) -> Result<(), StoreError> {
    if s.contains('\0') {
        return Err(StoreError::Invalid(format!(
            "{what} must not contain a NUL character"
        )));
    }
    Ok(())
}

/// [`check_no_nul`] for optional texts.
pub(crate) fn check_opt_no_nul(what: &str, s: Option<&str>) -> Result<(), StoreError> {
    s.map_or(Ok(()), |s| check_no_nul(what, s))
}

pub(crate) fn check_name(name: &str) -> Result<(), StoreError> {
    check_no_nul("name", name)?;
    if name.trim().is_empty() {
        return Err(StoreError::Invalid("name must not be blank".into()));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(StoreError::Invalid(format!(
            "name is longer than {MAX_NAME_CHARS} characters"
        )));
    }
    Ok(())
}

/// Longest stable id an organizer may give a principal.
pub const MAX_HANDLE_CHARS: usize = 64;

/// A stable id given by an organizer: 1 to [`MAX_HANDLE_CHARS`] ASCII letters, digits, `-` or
/// `_`, not digits only (those are the numeric ids the store generates).
pub fn check_handle(handle: &str) -> Result<(), StoreError> {
    if handle.is_empty() || handle.len() > MAX_HANDLE_CHARS {
        return Err(StoreError::Invalid(format!(
            "an id has 1 to {MAX_HANDLE_CHARS} characters"
        )));
    }
    if !handle
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(StoreError::Invalid(
            "an id has only letters, digits, '-' and '_'".into(),
        ));
    }
    if handle.bytes().all(|b| b.is_ascii_digit()) {
        return Err(StoreError::Invalid(
            "an id of digits only is reserved for the ids the server generates: include a letter, '-' or '_'".into(),
        ));
    }
    Ok(())
}

/// Converts a u64 for an i64 column, refusing values SQL cannot hold.
pub(crate) fn to_i64(what: &'static str, v: u64) -> Result<i64, StoreError> {
    i64::try_from(v).map_err(|_| StoreError::Invalid(format!("{what} {v} is too large")))
}

/// Converts an i64 read from the database to u64, treating a negative value as corruption.
pub(crate) fn to_u64(what: &'static str, v: i64) -> Result<u64, StoreError> {
    u64::try_from(v).map_err(|_| StoreError::Corrupt(format!("negative {what} {v}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_round_trip_and_grants() {
        for r in [Role::Player, Role::Arbiter, Role::Organiser] {
            assert_eq!(Role::parse(r.as_str()), Some(r));
            assert!(r.may_grant(r));
        }
        assert_eq!(Role::parse("organizer"), Some(Role::Organiser));
        assert_eq!(Role::parse("admin"), None);
        assert!(Role::Organiser.may_grant(Role::Arbiter));
        assert!(!Role::Player.may_grant(Role::Arbiter));
        assert!(!Role::Arbiter.may_grant(Role::Organiser));
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("王天一").is_ok());
        assert!(check_name(" ").is_err());
        assert!(check_name(&"x".repeat(MAX_NAME_CHARS + 1)).is_err());
        assert!(check_name("a\0b").is_err());
        assert!(check_opt_no_nul("reason", Some("\0")).is_err());
        assert!(check_opt_no_nul("reason", None).is_ok());
        assert!(to_i64("seq", u64::MAX).is_err());
        assert!(to_u64("seq", -1).is_err());
    }
}
