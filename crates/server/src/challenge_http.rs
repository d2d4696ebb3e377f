//! The open challenges' HTTP routes (the challenges themselves are [`crate::challenge`]).
//!
//! Routes (JSON; errors `{code, message}`):
//! - `GET /api/v1/challenges` — the open challenges, newest first (anybody).
//! - `POST /api/v1/challenges` `{timeControl, colour}` — a new one (players; `colour`: `red`,
//!   `black` or `random`, the creator's colour).
//! - `GET /api/v1/challenges/{id}` — one, open or accepted (with `gameId`).
//! - `POST /api/v1/challenges/{id}/accept` — accept it (another player): the game is created.
//! - `DELETE /api/v1/challenges/{id}` — its creator withdraws it.

use std::hash::{BuildHasher, Hasher};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chuhe_proto::v1::CreateGameRequest;
use serde::{Deserialize, Serialize};

use crate::auth::{api_error, authenticate, bearer};
use crate::challenge::*;
use crate::env::Env;
use crate::persist::{Account, Role};

/// The routes above; `http::router` merges them.
pub fn router() -> Router<Env> {
    Router::new()
        .route("/api/v1/challenges", get(list).post(create))
        .route("/api/v1/challenges/{id}", get(one).delete(cancel))
        .route("/api/v1/challenges/{id}/accept", post(accept))
}

fn refused(e: &ChallengeError) -> Response {
    api_error(e.status(), e.code(), &e.to_string())
}

fn ok<T: Serialize>(status: StatusCode, v: &T) -> Response {
    (status, axum::Json(v)).into_response()
}

/// The signed-in player asking, or the refusal.
async fn player(env: &Env, headers: &HeaderMap) -> Result<Account, Response> {
    let who = authenticate(env, bearer(headers, None)).await?;
    match who.account {
        None => Err(api_error(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "sign in with a player's token to play",
        )),
        Some(a) if a.role != Role::Player => Err(api_error(
            StatusCode::FORBIDDEN,
            "permission_denied",
            "only players play casual games",
        )),
        Some(a) => Ok(a),
    }
}

/// A challenge id from the path; a path that is not one is a challenge that does not exist.
fn path_id(s: &str) -> Result<u64, Box<Response>> {
    s.parse().map_err(|_| {
        Box::new(api_error(
            StatusCode::NOT_FOUND,
            "challenge_not_found",
            &format!("no challenge {s:?}"),
        ))
    })
}

#[derive(Serialize)]
struct List {
    challenges: Vec<Challenge>,
}

async fn list(State(env): State<Env>) -> Response {
    let challenges = env.challenges.open(env.time.now_ms());
    ok(StatusCode::OK, &List { challenges })
}

async fn one(State(env): State<Env>, Path(id): Path<String>) -> Response {
    let id = match path_id(&id) {
        Ok(i) => i,
        Err(r) => return *r,
    };
    match env.challenges.get(id, env.time.now_ms()) {
        Ok(c) => ok(StatusCode::OK, &c),
        Err(e) => refused(&e),
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct CreateBody {
    time_control: String,
    colour: String,
}

async fn create(State(env): State<Env>, headers: HeaderMap, b: Bytes) -> Response {
    let me = match player(&env, &headers).await {
        Ok(a) => a,
        Err(r) => return r,
    };
    let text = std::str::from_utf8(&b).unwrap_or("");
    let req: CreateBody = if text.trim().is_empty() {
        CreateBody::default()
    } else {
        match serde_json::from_str(text) {
            Ok(r) => r,
            Err(e) => return api_error(StatusCode::BAD_REQUEST, "malformed_body", &e.to_string()),
        }
    };
    match env
        .challenges
        .create(&me, &req.time_control, &req.colour, env.time.now_ms())
    {
        Ok(c) => ok(StatusCode::CREATED, &c),
        Err(e) => refused(&e),
    }
}

async fn cancel(State(env): State<Env>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let me = match player(&env, &headers).await {
        Ok(a) => a,
        Err(r) => return r,
    };
    let id = match path_id(&id) {
        Ok(i) => i,
        Err(r) => return *r,
    };
    match env.challenges.cancel(id, &me, env.time.now_ms()) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => refused(&e),
    }
}

/// A fair coin for `random` colours (std's per-process random hash keys; no dependency).
fn coin() -> bool {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    h.finish() & 1 == 1
}

async fn accept(State(env): State<Env>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let me = match player(&env, &headers).await {
        Ok(a) => a,
        Err(r) => return r,
    };
    let id = match path_id(&id) {
        Ok(i) => i,
        Err(r) => return *r,
    };
    let (c, creator_red) = match env.challenges.take(id, &me, env.time.now_ms(), coin()) {
        Ok(x) => x,
        Err(e) => return refused(&e),
    };
    let mine = me.id.to_string();
    let (red_id, black_id) = if creator_red {
        (c.creator_id.clone(), mine)
    } else {
        (mine, c.creator_id.clone())
    };
    let req = CreateGameRequest {
        red_id: red_id.clone(),
        black_id,
        time_control: c.time_control.clone(),
        // The clocks start when both players are at the board, not while the creator's page
        // is still on its way to the game.
        start_mode: chuhe_proto::v1::StartMode::PlayersPresent as i32,
        ..CreateGameRequest::default()
    };
    match crate::admin::create_game(&env, &req).await {
        Ok(info) => {
            env.challenges
                .settle(id, &info.game_id, &me, &red_id, env.time.now_ms());
            match env.challenges.get(id, env.time.now_ms()) {
                Ok(c) => ok(StatusCode::OK, &c),
                Err(e) => refused(&e),
            }
        }
        Err(e) => {
            env.challenges.reopen(id);
            api_error(e.status(), e.code(), &e.to_string())
        }
    }
}
