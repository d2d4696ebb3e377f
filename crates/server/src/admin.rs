//! Organiser operations shared by the HTTP API and `chuhe admin`: create
//! players, issue and revoke tokens, create casual games.

use chuhe_proto::v1::{self as w, CreateGameRequest, GameInfo};

use axum::http::StatusCode;

use crate::persist::{Account, ErrorKind, NewGame, Persist, PersistError, Role, StoredGame};

/// A refused organiser request.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0} not found")]
    NotFound(String),
    /// Another principal of the same role already has this display name.
    #[error("a {role} named {name:?} already exists")]
    NameTaken { role: &'static str, name: String },
    /// A given stable id that is not letters, digits, `-` and `_` (or is digits only).
    #[error("invalid id {id:?}: {why}")]
    InvalidId { id: String, why: String },
    /// Another principal already has this stable id.
    #[error("the id {0:?} is taken")]
    IdTaken(String),
    #[error(transparent)]
    Store(#[from] PersistError),
}

impl AdminError {
    /// The stable machine code clients see.
    pub fn code(&self) -> &'static str {
        match self {
            AdminError::Invalid(_) => "invalid_argument",
            AdminError::NotFound(_) => "not_found",
            AdminError::NameTaken { .. } => "name_taken",
            AdminError::InvalidId { .. } => "invalid_id",
            AdminError::IdTaken(_) => "id_taken",
            AdminError::Store(e) => match e.kind {
                ErrorKind::Invalid => "invalid_argument",
                ErrorKind::NotFound => "not_found",
                ErrorKind::Conflict => "conflict",
                ErrorKind::Unavailable | ErrorKind::Internal | ErrorKind::Fenced => {
                    "store_unavailable"
                }
            },
        }
    }

    /// The HTTP status of the answer: the caller's mistakes are 4xx (retrying the same cannot
    /// work); only a failing store is 503.
    pub fn status(&self) -> StatusCode {
        match self {
            AdminError::Invalid(_) => StatusCode::BAD_REQUEST,
            AdminError::NotFound(_) => StatusCode::NOT_FOUND,
            AdminError::NameTaken { .. } | AdminError::IdTaken(_) => StatusCode::CONFLICT,
            AdminError::InvalidId { .. } => StatusCode::BAD_REQUEST,
            AdminError::Store(e) => match e.kind {
                ErrorKind::Invalid => StatusCode::BAD_REQUEST,
                ErrorKind::NotFound => StatusCode::NOT_FOUND,
                ErrorKind::Conflict => StatusCode::CONFLICT,
                ErrorKind::Unavailable | ErrorKind::Internal | ErrorKind::Fenced => {
                    StatusCode::SERVICE_UNAVAILABLE
                }
            },
        }
    }
}

pub fn wire_role(r: Role) -> w::Role {
    match r {
        Role::Player => w::Role::Player,
        Role::Arbiter => w::Role::Arbiter,
        Role::Organizer => w::Role::Organizer,
    }
}

pub async fn create_player(p: &dyn Persist, name: &str, role: Role) -> Result<Account, AdminError> {
    create_player_as(p, None, name, role).await
}

/// Creates a player, arbiter or organizer, with the stable id `id` when one is given
/// (letters, digits, `-`, `_`; not digits only: those are the generated ids).
pub async fn create_player_as(
    p: &dyn Persist,
    id: Option<&str>,
    name: &str,
    role: Role,
) -> Result<Account, AdminError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(AdminError::Invalid(
            "display name must be 1 to 100 characters".into(),
        ));
    }
    if let Some(id) = id {
        if let Err(e) = chuhe_store::check_handle(id) {
            let why = match e {
                chuhe_store::StoreError::Invalid(m) => m,
                other => other.to_string(),
            };
            return Err(AdminError::InvalidId {
                id: id.to_string(),
                why,
            });
        }
    }
    let made = match id {
        Some(id) => p.create_account_with_id(id, name, role).await,
        None => p.create_account(name, role).await,
    };
    match made {
        Ok(a) => Ok(a),
        Err(e) if e.kind == ErrorKind::Conflict => match id {
            Some(id) if p.account_by_given_id(id).await?.is_some() => {
                Err(AdminError::IdTaken(id.to_string()))
            }
            _ => Err(AdminError::NameTaken {
                role: role.as_str(),
                name: name.to_string(),
            }),
        },
        Err(e) => Err(e.into()),
    }
}

/// The account a player id of the organizer API names: a numeric id, or a stable id given at
/// creation. `what` names the field in the refusal.
pub async fn named_account(p: &dyn Persist, id: &str, what: &str) -> Result<Account, AdminError> {
    let id = id.trim();
    let found = match id.parse::<i64>() {
        Ok(n) => p.account(n).await?,
        Err(_) if chuhe_store::check_handle(id).is_ok() => p.account_by_given_id(id).await?,
        Err(_) => {
            return Err(AdminError::Invalid(format!(
                "{what} must be a player id, got {id:?}"
            )));
        }
    };
    found.ok_or_else(|| AdminError::NotFound(format!("player {id}")))
}

pub async fn issue_token(
    p: &dyn Persist,
    account: i64,
    label: Option<String>,
) -> Result<(String, i64), AdminError> {
    if p.account(account).await?.is_none() {
        return Err(AdminError::NotFound(format!("player {account}")));
    }
    Ok(p.issue_token(account, label).await?)
}

/// Validates a game request and stores the game row. The caller starts it
/// (the server spawns its actor; offline, the server starts it when it loads).
pub async fn create_game_row(
    p: &dyn Persist,
    req: &CreateGameRequest,
    now_ms: u64,
) -> Result<(StoredGame, Account, Account), AdminError> {
    let red = named_account(p, &req.red_id, "redId").await?;
    let black = named_account(p, &req.black_id, "blackId").await?;
    if red.id == black.id {
        return Err(AdminError::Invalid(
            "red and black must be different players".into(),
        ));
    }
    for a in [&red, &black] {
        if a.role != Role::Player {
            return Err(AdminError::Invalid(format!(
                "{} ({}) is not a player",
                a.name, a.id
            )));
        }
    }
    let tc = if req.time_control.trim().is_empty() {
        "15m+10s".to_string()
    } else {
        req.time_control.trim().to_string()
    };
    let controls: chuhe_clock::Controls = tc.parse().map_err(|e: chuhe_clock::ParseError| {
        AdminError::Invalid(format!("time control {tc:?}: {e}"))
    })?;
    let fen = if req.initial_fen.trim().is_empty() {
        chuhe_rules::START_FEN.to_string()
    } else {
        req.initial_fen.trim().to_string()
    };
    let pos = chuhe_rules::Position::from_fen(&fen)
        .map_err(|e| AdminError::Invalid(format!("initial FEN: {e}")))?;
    if pos.outcome().is_some() {
        return Err(AdminError::Invalid(
            "the initial position is already decided".into(),
        ));
    }
    let ruleset = if req.ruleset.trim().is_empty() {
        "cxa".to_string()
    } else {
        req.ruleset.trim().to_ascii_lowercase()
    };
    if chuhe_game::board::ruleset(&ruleset).is_none() {
        return Err(AdminError::Invalid(format!(
            "unknown ruleset {ruleset:?}: use cxa (Chinese Xiangqi Association rules) or engine"
        )));
    }
    let delay = req.delay.unwrap_or_default();
    let start_mode = w::StartMode::try_from(req.start_mode)
        .map_err(|_| AdminError::Invalid(format!("unknown startMode {}", req.start_mode)))?;
    let scheduled_start_ms = match start_mode {
        w::StartMode::Scheduled if req.scheduled_start_ms == 0 => {
            return Err(AdminError::Invalid(
                "startMode START_MODE_SCHEDULED needs scheduledStartMs (Unix ms)".into(),
            ));
        }
        w::StartMode::Scheduled => Some(req.scheduled_start_ms),
        _ if req.scheduled_start_ms != 0 => {
            return Err(AdminError::Invalid(
                "scheduledStartMs is only for startMode START_MODE_SCHEDULED".into(),
            ));
        }
        _ => None,
    };
    let row = NewGame {
        red: chuhe_store::PrincipalId(red.id),
        black: chuhe_store::PrincipalId(black.id),
        time_control: controls.to_string(),
        ruleset,
        start_fen: pos.to_fen(),
        broadcast_delay: chuhe_store::BroadcastDelay {
            moves: delay.plies,
            millis: u64::from(delay.seconds) * 1000,
        },
        event: non_empty(&req.event),
        round: non_empty(&req.round),
        board: req.board.trim().parse().ok(),
        scheduled_start_ms: scheduled_start_ms.map(|t| t.min(i64::MAX as u64) as i64),
        created_at_ms: now_ms as i64,
        start_mode: crate::adopt::start_mode_text(start_mode).to_string(),
        lateness_limit_ms: req.lateness_limit_ms.min(i64::MAX as u64) as i64,
        key: None,
    };
    let row = p.create_game(row).await?;
    Ok((row, red, black))
}

fn non_empty(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Creates and starts a game on a running server.
pub async fn create_game(
    env: &crate::env::Env,
    req: &CreateGameRequest,
) -> Result<GameInfo, AdminError> {
    let (row, red, black) = create_game_row(env.persist.as_ref(), req, env.time.now_ms()).await?;
    let seed = crate::adopt::GameSeed {
        row,
        red,
        black,
        move_limit_plies: if req.move_limit_plies > 0 {
            req.move_limit_plies
        } else {
            env.config.move_limit_plies
        },
        calls: req.calls,
    };
    env.registry
        .own_new(seed.row.id.0)
        .await
        .map_err(|e| AdminError::Invalid(e.to_string()))?;
    let h = crate::adopt::create(env.registry.adopt_deps().clone(), seed)
        .await
        .map_err(|e| AdminError::Invalid(e.to_string()))?;
    env.registry.insert(h.clone());
    let info = h
        .record(false)
        .await
        .map(|r| r.view.info)
        .unwrap_or_default();
    Ok(info)
}
