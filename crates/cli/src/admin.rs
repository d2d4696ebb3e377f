//! `chuhe admin`: players, tokens and casual games, straight on the database
//! (the organizer HTTP API does the same on a running server). Output: one
//! JSON object per command (proto3 canonical JSON of the API messages).

use anyhow::{Context, Result};
use chuhe_proto::v1::{self as w, BroadcastDelay, CreateGameRequest};
use chuhe_server::admin;
use chuhe_server::persist::{Persist, Role};

use crate::serve::{DEFAULT_DATABASE, open_persist};

#[derive(Debug, clap::Args)]
pub struct AdminArgs {
    /// Database URL: sqlite://FILE or postgres://… (a missing SQLite file or PostgreSQL
    /// database is created).
    #[arg(long, env = "CHUHE_DATABASE_URL", default_value = DEFAULT_DATABASE, global = true)]
    pub database_url: String,
    #[command(subcommand)]
    pub command: AdminCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum AdminCommand {
    /// Create a player (or an arbiter or organizer); prints it as JSON with its id.
    CreatePlayer {
        /// Display name (1–100 characters, unique per role).
        #[arg(long)]
        name: String,
        /// `player`, `arbiter` or `organizer`.
        #[arg(long, default_value = "player")]
        role: String,
    },
    /// List every account (players, arbiters, organizers) with its id, as JSON:
    /// `{"players":[{"id":"1","displayName":"Alice","role":"ROLE_PLAYER"},…]}`.
    ListPlayers {
        /// Only this role: `player`, `arbiter` or `organizer`.
        #[arg(long)]
        role: Option<String>,
    },
    /// Issue a bearer token for a player, arbiter or organizer (printed once with its id;
    /// stored hashed). The token has its holder's role.
    IssueToken {
        /// Id of the player, arbiter or organizer who gets the token.
        #[arg(long)]
        player: i64,
        /// Free text kept with the token (e.g. "laptop", "league 2026 arbiter").
        #[arg(long)]
        label: Option<String>,
    },
    /// Revoke a token by its id (the `tokenId` that issue-token printed).
    RevokeToken {
        /// The token's id.
        #[arg(long)]
        token_id: i64,
    },
    /// Create a casual game. A running server starts it (and its clock) when
    /// a client first names it; the HTTP API starts it at once.
    CreateGame {
        /// Id of the player with Red (moves first).
        #[arg(long)]
        red: i64,
        /// Id of the player with Black.
        #[arg(long)]
        black: i64,
        /// Time control, e.g. 15m+10s (Fischer), 30m|60s (byoyomi), 40/90m,30m+30s (stages).
        #[arg(long, default_value = "15m+10s")]
        time_control: String,
        /// Repetition rules: `cxa` (the official rulings, 棋例) or `engine` (what engines do:
        /// perpetual check or chase of one piece loses, everything else is drawn).
        #[arg(long, default_value = "cxa")]
        ruleset: String,
        /// Spectators see the game this many plies late.
        #[arg(long, default_value_t = 0)]
        delay_plies: u32,
        /// Spectators see each event this many seconds late.
        #[arg(long, default_value_t = 0)]
        delay_seconds: u32,
        /// Starting position (default: the standard one).
        #[arg(long)]
        fen: Option<String>,
        /// Event name for the game record.
        #[arg(long)]
        event: Option<String>,
        /// Round for the game record.
        #[arg(long)]
        round: Option<String>,
        /// Board for the game record.
        #[arg(long)]
        board: Option<String>,
        /// When the clocks start: `now`, `players` (when both players have joined), or an
        /// instant (RFC 3339 like 2026-12-03T14:00:00+08:00, or Unix ms) at which they start
        /// whether or not the players are there (a league round).
        #[arg(long, default_value = "now")]
        start: String,
        /// Art. 21: a player who has not joined this long after the start loses (e.g. 15m;
        /// `0`: no limit).
        #[arg(long, default_value = "0")]
        lateness: String,
    },
}

/// `--start`: the start mode and, for an instant, its Unix ms.
fn start_of(text: &str) -> Result<(w::StartMode, u64)> {
    use chuhe_league_core::datetime::parse_instant;
    Ok(match text.trim() {
        "now" => (w::StartMode::Now, 0),
        "players" => (w::StartMode::PlayersPresent, 0),
        other => {
            let at = parse_instant(other).with_context(|| {
                format!("--start must be now, players or an instant, not {other:?}")
            })?;
            (w::StartMode::Scheduled, at)
        }
    })
}

pub fn run(args: AdminArgs) -> Result<std::process::ExitCode> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let p = open_persist(&args.database_url, &chuhe_store::StoreOptions::default()).await?;
        let url = args.database_url.clone();
        let out = command(p.as_ref(), args.command)
            .await
            .map_err(|e| not_found_tip(e, &url));
        // Closed whatever the outcome (SQLite: the WAL checkpointed and removed).
        p.close().await;
        println!("{}", out?);
        Ok(std::process::ExitCode::SUCCESS)
    })
}

/// `player N not found` and `a player named … already exists`: where the ids are, and which
/// database this was.
fn not_found_tip(err: anyhow::Error, url: &str) -> anyhow::Error {
    let tip = match err.downcast_ref::<admin::AdminError>() {
        Some(admin::AdminError::NotFound(what)) if what.starts_with("player ") => format!(
            "`chuhe admin list-players` lists the accounts of this database ({url}) with their \
             ids (`create-player` prints the id it gives); a server's database is the one it \
             was started with (its `--database-url`, by default chuhe.db where it started)"
        ),
        Some(admin::AdminError::NameTaken { .. }) => format!(
            "a name is taken once per role: `chuhe admin list-players` shows that account's id \
             in this database ({url}); give the new one another `--name`"
        ),
        _ => return err,
    };
    crate::tip(err, tip)
}

async fn command(p: &dyn Persist, command: AdminCommand) -> Result<String> {
    Ok(match command {
        AdminCommand::CreatePlayer { name, role } => {
            let role = Role::parse(&role).with_context(|| {
                format!("role must be player, arbiter or organizer, not {role:?}")
            })?;
            let a = admin::create_player(p, &name, role).await?;
            chuhe_proto::encode_json(&w::Player {
                id: a.id.to_string(),
                display_name: a.name,
                role: admin::wire_role(a.role) as i32,
            })
        }
        AdminCommand::ListPlayers { role } => {
            let role = match role {
                None => None,
                Some(r) => Some(Role::parse(&r).with_context(|| {
                    format!("role must be player, arbiter or organizer, not {r:?}")
                })?),
            };
            let players = p
                .accounts()
                .await?
                .into_iter()
                .filter(|a| role.is_none_or(|r| a.role == r))
                .map(|a| w::Player {
                    id: a.id.to_string(),
                    display_name: a.name,
                    role: admin::wire_role(a.role) as i32,
                })
                .map(|pl| serde_json::from_str(&chuhe_proto::encode_json(&pl)))
                .collect::<Result<Vec<serde_json::Value>, _>>()?;
            serde_json::json!({ "players": players }).to_string()
        }
        AdminCommand::IssueToken { player, label } => {
            let (token, id) = admin::issue_token(p, player, label).await?;
            chuhe_proto::encode_json(&w::IssueTokenResponse {
                token,
                token_id: id.to_string(),
            })
        }
        AdminCommand::RevokeToken { token_id } => {
            if !p.revoke_token(token_id).await? {
                anyhow::bail!("no live token with id {token_id}");
            }
            format!("{{\"revoked\":\"{token_id}\"}}")
        }
        AdminCommand::CreateGame {
            red,
            black,
            time_control,
            ruleset,
            delay_plies,
            delay_seconds,
            fen,
            event,
            round,
            board,
            start,
            lateness,
        } => {
            let (start_mode, scheduled_start_ms) = start_of(&start)?;
            let lateness_limit_ms = chuhe_league_core::datetime::parse_duration(&lateness)
                .with_context(|| format!("--lateness must be a duration, not {lateness:?}"))?;
            let req = CreateGameRequest {
                red_id: red.to_string(),
                black_id: black.to_string(),
                time_control,
                ruleset,
                delay: Some(BroadcastDelay {
                    plies: delay_plies,
                    seconds: delay_seconds,
                }),
                initial_fen: fen.unwrap_or_default(),
                event: event.unwrap_or_default(),
                round: round.unwrap_or_default(),
                board: board.unwrap_or_default(),
                start_mode: start_mode as i32,
                scheduled_start_ms,
                lateness_limit_ms,
                ..CreateGameRequest::default()
            };
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)?
                .as_millis() as u64;
            let (row, _, _) = admin::create_game_row(p, &req, now).await?;
            serde_json::json!({
                "gameId": row.id.to_string(),
                "timeControl": row.time_control,
                "ruleset": row.ruleset,
                "start": start.trim(),
                "scheduledStartMs": scheduled_start_ms,
                "latenessLimitMs": lateness_limit_ms,
            })
            .to_string()
        }
    })
}
