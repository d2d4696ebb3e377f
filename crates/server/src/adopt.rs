//! Putting a game on its shard: creating a new one (its first event is committed before the
//! shard runs it) or recovering a stored one by folding its log.

use chuhe_proto::v1::{self as w, GameInfo, StoredEvent};
use prost::Message as _;

use std::sync::Arc;

use crate::error::ClientError;
use crate::game_deps::GameDeps;
use crate::handle::GameHandle;
use crate::live::LiveGame;
use crate::persist::{Account, Persist, PersistError, StoredGame};
use crate::shard::Shards;
use chuhe_game::board::Board;
use chuhe_game::{self as game, Command, Decided, Event, FoldError, State};

/// What putting a game on its shard takes: what the game is given, the store (its log), the
/// shards.
#[derive(Clone)]
pub struct AdoptDeps {
    pub game: GameDeps,
    pub persist: Arc<dyn Persist>,
    pub shards: Arc<Shards>,
}

/// Everything needed to put a game on its shard.
pub struct GameSeed {
    pub row: StoredGame,
    pub red: Account,
    pub black: Account,
    /// Plies without a capture that draw (0: the default).
    pub move_limit_plies: u32,
    /// Whether (and how) the players of a game outside any league may call the arbiter; a
    /// league game has the event's settings whatever this says.
    pub calls: Option<w::CallSettings>,
}

/// Why a stored game could not be taken up.
#[derive(Debug, thiserror::Error)]
pub enum RecoverError {
    /// The store could not be read or written: retrying later may work.
    #[error(transparent)]
    Store(#[from] PersistError),
    /// A stored event is not a `StoredEvent` (or its clock snapshot is unreadable).
    #[error("game {game}: stored event {seq} cannot be decoded: {why}")]
    Decode { game: i64, seq: u64, why: String },
    /// The log does not describe a game the rules can rebuild.
    #[error("game {game}: {source}")]
    Log {
        game: i64,
        #[source]
        source: FoldError,
    },
    /// Creating a game whose first event was never committed failed.
    #[error("game {game}: {source}")]
    Create {
        game: i64,
        #[source]
        source: ClientError,
    },
}

impl RecoverError {
    /// What a client asking for the game is told.
    pub fn client_error(&self) -> ClientError {
        match self {
            RecoverError::Store(_) => ClientError::StoreUnavailable,
            RecoverError::Create { source, .. } => source.clone(),
            RecoverError::Decode { game, .. } | RecoverError::Log { game, .. } => {
                ClientError::GameUnavailable(game.to_string())
            }
        }
    }
}

/// The store's text of a start mode.
pub fn start_mode_text(m: w::StartMode) -> &'static str {
    match m {
        w::StartMode::Scheduled => "scheduled",
        w::StartMode::PlayersPresent => "players",
        w::StartMode::Now | w::StartMode::Unspecified => "now",
    }
}

/// A start mode from the store's text (anything unknown: at once).
pub fn start_mode_of(text: &str) -> w::StartMode {
    match text {
        "scheduled" => w::StartMode::Scheduled,
        "players" => w::StartMode::PlayersPresent,
        _ => w::StartMode::Now,
    }
}

/// The league board a game's key names (`league/{id}/r{round}/t{table}/b{board}/g{stage}/…`).
pub fn league_board(key: &str) -> Option<w::LeagueBoard> {
    let mut parts = key.split('/');
    if parts.next()? != "league" {
        return None;
    }
    let league_id = parts.next()?.to_string();
    let mut num =
        |prefix: char| -> Option<u32> { parts.next()?.strip_prefix(prefix)?.parse().ok() };
    Some(w::LeagueBoard {
        league_id,
        round: num('r')?,
        table: num('t')?,
        board: num('b')?,
        stage: num('g')?,
    })
}

/// The static description of a new game.
pub fn info_of(seed: &GameSeed) -> Result<GameInfo, ClientError> {
    let row = &seed.row;
    let board = Board::new(
        &row.start_fen,
        &row.ruleset,
        match seed.move_limit_plies {
            0 => game::DEFAULT_MOVE_LIMIT_PLIES,
            n => n,
        },
    )
    .map_err(ClientError::InvalidArgument)?;
    Ok(GameInfo {
        game_id: row.id.0.to_string(),
        red_id: row.red.0.to_string(),
        red_name: seed.red.name.clone(),
        black_id: row.black.0.to_string(),
        black_name: seed.black.name.clone(),
        time_control: row.time_control.clone(),
        ruleset: row.ruleset.clone(),
        initial_fen: board.fen(),
        event: row.event.clone().unwrap_or_default(),
        round: row.round.clone().unwrap_or_default(),
        board: row.board.map(|b| b.to_string()).unwrap_or_default(),
        delay: Some(w::BroadcastDelay {
            plies: row.broadcast_delay.moves,
            seconds: (row.broadcast_delay.millis / 1000) as u32,
        }),
        move_limit_plies: seed.move_limit_plies,
        created_at_ms: row.created_at_ms.max(0) as u64,
        start_mode: start_mode_of(&row.start_mode) as i32,
        scheduled_start_ms: row.scheduled_start_ms.unwrap_or(0).max(0) as u64,
        lateness_limit_ms: row.lateness_limit_ms.max(0) as u64,
        league: row.key.as_deref().and_then(league_board),
        calls: None,
    })
}

/// Creates a new game: commits its first event, then hands it to its shard.
pub async fn create(env: AdoptDeps, seed: GameSeed) -> Result<GameHandle, ClientError> {
    let mut info = info_of(&seed)?;
    info.calls = seed.calls;
    if let Some(board) = &info.league {
        // The event's call settings, fixed in the game's description (its log) at creation.
        let spec = board
            .league_id
            .parse::<i64>()
            .ok()
            .and_then(|id| env.game.leagues.arbiter_calls(id));
        info.calls = Some(crate::league::call_settings(spec.as_ref()));
    }
    let (st, decided) = game::create(&crate::game_wire::info_of(info), env.game.time.now_ms())?;
    let mut g = LiveGame::new(env.game.clone(), seed.row.id.0, st);
    commit_now(&env, &mut g, decided).await?;
    g.started(None);
    env.shards.adopt(g).await
}

/// Recovers a stored game (finished or not) by folding its log; an unfinished one resumes
/// with its clocks where they were (the outage is charged to nobody).
pub async fn recover(env: AdoptDeps, seed: GameSeed) -> Result<GameHandle, RecoverError> {
    let id = seed.row.id.0;
    let stored = env.persist.events(id).await?;
    if stored.is_empty() {
        // Created but its first event never committed: create it now.
        return create(env, seed)
            .await
            .map_err(|source| RecoverError::Create { game: id, source });
    }
    let mut events = Vec::with_capacity(stored.len());
    let mut wire = Vec::with_capacity(stored.len());
    for (seq, payload) in stored {
        let (event, clock) = decode_stored(id, seq, &payload)?;
        events.push(Event {
            event: crate::game_wire::event_of(event.clone()),
            clock,
            actor: None,
            reason: None,
        });
        wire.push(event);
    }
    let st = State::replay(&events).map_err(|source| RecoverError::Log { game: id, source })?;
    let mut g = LiveGame::new(env.game.clone(), id, st);
    g.replayed(wire);
    if !g.state().is_finished() {
        let now = env.game.time.now_ms();
        let downtime = now.saturating_sub(g.state().at_ms);
        let decided = game::decide(g.state(), &Command::Restart, &game::Actor::SERVER, now)
            .map_err(|source| RecoverError::Create { game: id, source })?;
        commit_now(&env, &mut g, decided)
            .await
            .map_err(|source| RecoverError::Create { game: id, source })?;
        g.started(Some(downtime));
    }
    env.shards
        .adopt(g)
        .await
        .map_err(|source| RecoverError::Create { game: id, source })
}

/// A stored event as the wire carries it, with the clock snapshot stored beside it.
pub(crate) fn decode_stored(
    game: i64,
    seq: u64,
    payload: &[u8],
) -> Result<(w::GameEvent, Option<chuhe_clock::ClockSnapshot>), RecoverError> {
    let bad = |why: String| RecoverError::Decode { game, seq, why };
    let s = StoredEvent::decode(payload).map_err(|e| bad(e.to_string()))?;
    let clock = crate::snapshot::stored_clock(&s).map_err(bad)?;
    let event = s.event.ok_or_else(|| bad("no event".into()))?;
    Ok((event, clock))
}

/// Commits a decision of a game not yet on its shard (its first events) and folds them. A
/// commit whose outcome is unknown is resolved against the store first.
async fn commit_now(
    env: &AdoptDeps,
    g: &mut LiveGame,
    decided: Decided,
) -> Result<(), ClientError> {
    let (op, mut staged) = g.stage(decided, false);
    let t = tokio::time::Instant::now();
    let r = env.persist.append(op.game, op.events, op.finish).await;
    env.game.metrics.commit_latency.observe(t.elapsed());
    let ok = match r {
        Ok(()) => true,
        Err(e) if e.outcome_unknown => {
            let op = g.append_of(&mut staged);
            let mut tries = 0;
            loop {
                match env.persist.resolve(op.clone()).await {
                    Ok(committed) => break committed,
                    Err(e) if e.is_client_error() || tries >= 20 => {
                        tracing::error!(game = op.game, error = %e, "first commit unresolved");
                        break false;
                    }
                    Err(_) => {
                        tries += 1;
                        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                    }
                }
            }
        }
        Err(_) => false,
    };
    g.conclude(staged, ok, None);
    if ok {
        Ok(())
    } else {
        Err(ClientError::StoreUnavailable)
    }
}
