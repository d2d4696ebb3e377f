//! The league's HTTP API (JSON; bearer tokens): the organizer creates an event from its file,
//! publishes it, reschedules rounds and issues tokens; captains submit lineups; arbiters
//! decide; everyone reads fixtures, matches, standings, crosstables and score sheets (HTML and
//! CSV too). Documented with an example per route in docs/league.md.

// The helpers return the HTTP answer itself as their error, as every handler does.
#![allow(clippy::result_large_err)]

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chuhe_league::text::Lang;
use serde::Deserialize;
use serde_json::{Value, json};

use super::core::{ColourName, League, LeagueCommand, TeamSide, knockout_winner, match_result};
use super::datetime::{format_instant, parse_instant};
use super::render::{self, colour_name, is_official, table_json};
use super::runner::{self, LeagueHandle, RunError};
use super::spec::{EventSpec, System};
use crate::auth::{api_error, authenticate, bearer};
use crate::env::Env;
use crate::request::Principal;

pub fn router() -> Router<Env> {
    Router::new()
        .route("/api/v1/leagues", get(list).post(create))
        .route("/api/v1/leagues/{id}", get(overview))
        .route("/api/v1/leagues/{id}/publish", post(publish))
        .route("/api/v1/leagues/{id}/tokens", post(tokens))
        .route("/api/v1/leagues/{id}/lineups", post(lineup))
        .route("/api/v1/leagues/{id}/commands", post(command))
        .route(
            "/api/v1/leagues/{id}/rounds/{round}/reschedule",
            post(reschedule),
        )
        .route(
            "/api/v1/leagues/{id}/rounds/{round}/tables/{table}",
            get(table_view),
        )
        .route(
            "/api/v1/leagues/{id}/rounds/{round}/tables/{table}/sheet",
            get(sheet),
        )
        .route("/api/v1/leagues/{id}/standings", get(standings))
        .route("/api/v1/leagues/{id}/boards", get(boards))
        .route("/api/v1/leagues/{id}/elo", get(elo))
        .route("/api/v1/leagues/{id}/log", get(log))
        .route("/api/v1/leagues/{id}/export", get(export))
}

/// A 200 with a JSON body (also the match-day pages' API).
pub(super) fn ok(v: Value) -> Response {
    (StatusCode::OK, axum::Json(v)).into_response()
}

pub(super) fn run_err(e: RunError) -> Response {
    let status = match &e {
        RunError::League(l) => match l.code() {
            "permission_denied" => StatusCode::FORBIDDEN,
            "not_found" => StatusCode::NOT_FOUND,
            "message_rate_limited" => StatusCode::TOO_MANY_REQUESTS,
            "conflict" | "pairing_refused" | "stage_not_complete" | "seeding_refused"
            | "already_seeded" | "board_not_empty" => StatusCode::CONFLICT,
            _ => StatusCode::BAD_REQUEST,
        },
        RunError::NotFound(_) => StatusCode::NOT_FOUND,
        RunError::Store(_) | RunError::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
    };
    // A refused lineup carries every reason with its code.
    if let RunError::League(super::core::LeagueError::LineupRefused(reasons)) = &e {
        let body = json!({
            "code": e.code(),
            "message": e.to_string(),
            "reasons": reasons.iter().map(|(c, m)| json!({"code": c, "message": m})).collect::<Vec<_>>(),
        });
        return (status, axum::Json(body)).into_response();
    }
    api_error(status, e.code(), &e.to_string())
}

pub(super) async fn who(env: &Env, headers: &HeaderMap) -> Result<Principal, Response> {
    authenticate(env, bearer(headers, None)).await
}

/// The league with id `id` (a path segment), or a 404 `not_found`.
pub(crate) fn league(env: &Env, id: &str) -> Result<LeagueHandle, Response> {
    id.parse::<i64>()
        .ok()
        .and_then(|id| env.leagues.get(id))
        .ok_or_else(|| {
            api_error(
                StatusCode::NOT_FOUND,
                "not_found",
                &format!("no league with id {id:?}"),
            )
        })
}

fn parse_body<T: for<'de> Deserialize<'de>>(b: &Bytes) -> Result<T, Response> {
    serde_json::from_slice(b).map_err(|e| {
        api_error(
            StatusCode::BAD_REQUEST,
            "malformed_body",
            &format!("the body is not the expected JSON: {e}"),
        )
    })
}

async fn create(State(env): State<Env>, headers: HeaderMap, b: Bytes) -> Response {
    let p = match crate::auth::organizer(&env, &headers).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let spec: EventSpec = match parse_body(&b) {
        Ok(s) => s,
        Err(r) => return r,
    };
    match runner::create(&env.league_deps(), spec, p.id()).await {
        Ok(h) => {
            let l = h.snapshot();
            (StatusCode::CREATED, axum::Json(summary(&l, None))).into_response()
        }
        Err(runner::CreateError::Spec(e)) => {
            let body = json!({"code": "invalid_event", "message": e.to_string(), "field": e.field});
            (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
        }
        Err(runner::CreateError::Store(e)) if e.is_client_error() => {
            api_error(StatusCode::CONFLICT, "conflict", &e.to_string())
        }
        Err(runner::CreateError::Store(e)) => api_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            &e.to_string(),
        ),
    }
}

async fn list(State(env): State<Env>) -> Response {
    let all: Vec<Value> = env
        .leagues
        .all()
        .iter()
        .map(|h| {
            let l = h.snapshot();
            json!({
                "id": l.id.to_string(),
                "name": l.spec.name,
                "system": system_label(&l),
                "teams": l.teams.len(),
                "boards": l.rules.lineup.boards,
                "published": l.published,
                "rounds": l.rounds.len(),
                "completedRounds": l.rounds.iter().filter(|r| r.completed).count(),
                // A season of `--demo`'s league (the page opens on its live match).
                "demo": crate::demo::is_demo_league(&l.spec.name),
            })
        })
        .collect();
    ok(json!({ "leagues": all }))
}

/// The event's system: its one system's name, or `stages` for a multi-stage event.
fn system_label(l: &League) -> &str {
    if l.spec.system.is_empty() {
        "stages"
    } else {
        &l.spec.system
    }
}

fn system_name(s: System) -> &'static str {
    match s {
        System::RoundRobin { .. } => "round_robin",
        System::Swiss { .. } => "swiss",
        System::Knockout => "knockout",
    }
}

fn chain_json(chain: &chuhe_league::chain::ResultChain) -> Vec<Value> {
    chain
        .stages()
        .iter()
        .map(|s| json!({"name": s.name, "timeControl": s.time_control.as_str()}))
        .collect()
}

/// Every stage of the event: its system, chain, teams (once it has begun, seed order),
/// whether it is complete, and a knockout's winner.
fn stages_json(l: &League) -> Vec<Value> {
    l.rules
        .stages
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let stage = i as u32 + 1;
            json!({
                "stage": stage,
                "name": s.name,
                "system": system_name(s.system),
                "chain": chain_json(&s.event.chain),
                "teams": l.stages.get(i),
                "rounds": l.stage_rounds(stage).map(|r| r.number).collect::<Vec<_>>(),
                "complete": super::core::view::stage_complete(l, stage),
                "winner": knockout_winner(l, stage),
            })
        })
        .collect()
}

/// A team side's name in the league JSON (also the match-day pages' API).
pub(super) fn summary(l: &League, viewer: Option<&Principal>) -> Value {
    let teams: Vec<Value> = l
        .teams
        .iter()
        .enumerate()
        .map(|(i, t)| {
            json!({
                "team": i,
                "name": t.name,
                "unit": t.unit,
                "players": l.spec.teams[i].players.iter().zip(&t.accounts.players).map(|(p, id)| json!({"name": p.name(), "id": id.to_string()})).collect::<Vec<_>>(),
                "captainIds": t.accounts.captains.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
                "withdrawn": l.withdrawals.iter().find(|w| w.team == i).map(|w| json!({"afterRound": w.after_round, "expelled": w.expelled})),
            })
        })
        .collect();
    let rounds: Vec<Value> = l
        .rounds
        .iter()
        .map(|r| {
            json!({
                "round": r.number,
                "stage": r.stage,
                "startsAt": format_instant(r.start_ms),
                "lineupDeadline": format_instant(r.deadline_ms),
                "completed": r.completed,
                "byes": r.byes,
                "tables": (1..=r.tables.len() as u32).filter_map(|t| table_json(l, r.number, t, viewer)).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "id": l.id.to_string(),
        "name": l.spec.name,
        "system": system_label(l),
        "boards": l.rules.lineup.boards,
        // 12.4: every player against every player (boards²); else one a board.
        "gamesPerMatch": l.rules.event.boards,
        "chain": chain_json(&l.rules.event.chain),
        "stages": stages_json(l),
        "currentStage": l.current_stage(),
        "published": l.published,
        "arbiterIds": l.arbiters.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        "broadcastDelay": {"plies": l.rules.delay.plies, "seconds": l.rules.delay.seconds},
        "teams": teams,
        "rounds": rounds,
        "publicSeq": l.public_seq,
    })
}

async fn overview(State(env): State<Env>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let h = match league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let p = who(&env, &headers).await.ok();
    ok(summary(&h.snapshot(), p.as_ref()))
}

async fn table_view(
    State(env): State<Env>,
    Path((id, round, table)): Path<(String, u32, u32)>,
    headers: HeaderMap,
) -> Response {
    let h = match league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let p = who(&env, &headers).await.ok();
    match table_json(&h.snapshot(), round, table, p.as_ref()) {
        Some(v) => ok(v),
        None => api_error(
            StatusCode::NOT_FOUND,
            "not_found",
            &format!("no round {round} table {table}"),
        ),
    }
}

/// Runs a league command for the request's principal.
async fn run(
    env: &Env,
    id: &str,
    headers: &HeaderMap,
    cmd: LeagueCommand,
    reason: Option<String>,
) -> Response {
    let h = match league(env, id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let p = match who(env, headers).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    if p.account.is_none() {
        return api_error(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "this needs a token",
        );
    }
    match h.command(cmd, p.actor(), reason).await {
        // No log seq in the answer: it counts sealed lineups too.
        Ok(entries) => ok(
            json!({"ok": true, "entries": entries.iter().filter(|e| e.event.is_public()).count()}),
        ),
        Err(e) => run_err(e),
    }
}

async fn publish(State(env): State<Env>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    run(&env, &id, &headers, LeagueCommand::Publish, None).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LineupBody {
    round: u32,
    table: u32,
    team: usize,
    players: Vec<String>,
}

async fn lineup(
    State(env): State<Env>,
    Path(id): Path<String>,
    headers: HeaderMap,
    b: Bytes,
) -> Response {
    let body: LineupBody = match parse_body(&b) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let cmd = LeagueCommand::SubmitLineup {
        round: body.round,
        table: body.table,
        team: body.team,
        players: body.players,
    };
    run(&env, &id, &headers, cmd, None).await
}

#[derive(Deserialize)]
struct CommandBody {
    #[serde(flatten)]
    command: LeagueCommand,
    #[serde(default)]
    reason: Option<String>,
}

async fn command(
    State(env): State<Env>,
    Path(id): Path<String>,
    headers: HeaderMap,
    b: Bytes,
) -> Response {
    let body: CommandBody = match parse_body(&b) {
        Ok(v) => v,
        Err(r) => return r,
    };
    // The server's own commands are not for clients.
    if matches!(
        body.command,
        LeagueCommand::GameCreated { .. }
            | LeagueCommand::GameFinished { .. }
            | LeagueCommand::ImportBoard { .. }
            | LeagueCommand::Tick
    ) {
        return api_error(
            StatusCode::FORBIDDEN,
            "permission_denied",
            "only the server records games and ticks",
        );
    }
    run(&env, &id, &headers, body.command, body.reason).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RescheduleBody {
    start: String,
    #[serde(default)]
    lineup_deadline: Option<String>,
}

async fn reschedule(
    State(env): State<Env>,
    Path((id, round)): Path<(String, u32)>,
    headers: HeaderMap,
    b: Bytes,
) -> Response {
    let body: RescheduleBody = match parse_body(&b) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let h = match league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let start_ms = match parse_instant(&body.start) {
        Ok(t) => t,
        Err(e) => return api_error(StatusCode::BAD_REQUEST, "invalid_argument", &e.to_string()),
    };
    let deadline_ms = match body.lineup_deadline.as_deref().map(parse_instant) {
        None => start_ms.saturating_sub(h.snapshot().rules.deadline_before_ms),
        Some(Ok(t)) => t,
        Some(Err(e)) => {
            return api_error(StatusCode::BAD_REQUEST, "invalid_argument", &e.to_string());
        }
    };
    let cmd = LeagueCommand::Reschedule {
        round,
        start_ms,
        deadline_ms,
    };
    run(&env, &id, &headers, cmd, None).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TokensBody {
    /// `captains`, `players`, `arbiters` or `all`.
    #[serde(default = "all")]
    r#for: String,
    /// Only this team's people (0-based index).
    #[serde(default)]
    team: Option<usize>,
}

fn all() -> String {
    "all".into()
}

async fn tokens(
    State(env): State<Env>,
    Path(id): Path<String>,
    headers: HeaderMap,
    b: Bytes,
) -> Response {
    if let Err(r) = crate::auth::organizer(&env, &headers).await {
        return r;
    }
    let h = match league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let empty = Bytes::from_static(b"{}");
    let body: TokensBody = match parse_body(if b.is_empty() { &empty } else { &b }) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let l = h.snapshot();
    if !["captains", "players", "arbiters", "all"].contains(&body.r#for.as_str()) {
        return api_error(
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "for: captains, players, arbiters or all",
        );
    }
    if body.team.is_some_and(|t| t >= l.teams.len()) {
        return api_error(StatusCode::NOT_FOUND, "not_found", "no such team");
    }
    let mut people: Vec<(Option<usize>, &'static str, String, i64)> = Vec::new();
    for (i, t) in l.teams.iter().enumerate() {
        if body.team.is_some_and(|x| x != i) {
            continue;
        }
        if matches!(body.r#for.as_str(), "captains" | "all") {
            for (k, c) in t.accounts.captains.iter().enumerate() {
                let name = l.spec.teams[i]
                    .captains
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| format!("{} 领队", t.name));
                people.push((Some(i), "captain", name, *c));
            }
        }
        if matches!(body.r#for.as_str(), "players" | "all") {
            for (pl, id) in l.spec.teams[i].players.iter().zip(&t.accounts.players) {
                people.push((Some(i), "player", pl.name().to_string(), *id));
            }
        }
    }
    if matches!(body.r#for.as_str(), "arbiters" | "all") && body.team.is_none() {
        for (a, id) in l.spec.arbiters.iter().zip(&l.arbiters) {
            people.push((None, "arbiter", a.clone(), *id));
        }
    }
    let mut out = Vec::with_capacity(people.len());
    for (team, role, name, principal) in people {
        let label = Some(format!("league {} {role}", l.id));
        match env.persist.issue_token(principal, label).await {
            Ok((token, token_id)) => out.push(json!({
                "team": team,
                "role": role,
                "name": name,
                "principalId": principal.to_string(),
                "token": token,
                "tokenId": token_id.to_string(),
            })),
            Err(e) => {
                return api_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store_unavailable",
                    &e.to_string(),
                );
            }
        }
    }
    (StatusCode::CREATED, axum::Json(json!({ "tokens": out }))).into_response()
}

#[derive(Deserialize)]
struct FormatQuery {
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    lang: Option<String>,
}

fn lang_of(q: &FormatQuery) -> Lang {
    lang_named(q.lang.as_deref())
}

/// `?lang=en` is English; anything else Chinese (the printouts' own language).
fn lang_named(lang: Option<&str>) -> Lang {
    match lang {
        Some("en") => Lang::En,
        _ => Lang::Zh,
    }
}

fn typed(content_type: &'static str, body: String) -> Response {
    (StatusCode::OK, [(header::CONTENT_TYPE, content_type)], body).into_response()
}

/// `?stage=N` (default: the stage being played, or the last one before it with standings).
#[derive(Deserialize)]
struct StandingsQuery {
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    lang: Option<String>,
    #[serde(default)]
    stage: Option<u32>,
}

/// 12.5's standings: the teams by their entrants' rank sums, and the individual table they
/// come from — JSON, or the two tables as text, CSV or HTML.
fn total_score_standings(
    l: &League,
    t: super::core::TotalScoreTables,
    format: Option<&str>,
    lang: Lang,
) -> Response {
    let decided = render::decided_code;
    let zh = matches!(lang, Lang::Zh);
    let label = |z: &str, e: &str| if zh { z.to_string() } else { e.to_string() };
    let teams_table = chuhe_league::report::Table {
        title: label("团体名次（队员总分制）", "Teams (12.5 total score)"),
        header: vec![
            label("名次", "Rank"),
            label("队名", "Team"),
            label("个人名次总和", "Rank sum"),
            label("决定名次", "Decided by"),
        ],
        rows: t
            .rows
            .iter()
            .map(|r| {
                vec![
                    r.rank.to_string(),
                    l.teams[t.teams[r.team]].name.clone(),
                    r.rank_sum.to_string(),
                    decided(r.decided_by),
                ]
            })
            .collect(),
        left: vec![1],
        points: Vec::new(),
        notes: Vec::new(),
    };
    let players_table = chuhe_league::report::Table {
        title: label("个人名次", "Players"),
        header: vec![
            label("名次", "Rank"),
            label("姓名", "Player"),
            label("队名", "Team"),
            label("局数", "Games"),
            label("积分", "Points"),
            label("胜局", "Wins"),
            label("犯规", "Fouls"),
        ],
        rows: t
            .individual
            .iter()
            .map(|r| {
                let (team, name) = &t.players[r.player];
                vec![
                    r.rank.to_string(),
                    name.clone(),
                    l.teams[t.teams[*team]].name.clone(),
                    r.games.to_string(),
                    r.points.to_decimal(),
                    r.wins.to_string(),
                    r.fouls.to_string(),
                ]
            })
            .collect(),
        left: vec![1, 2],
        points: vec![4],
        notes: Vec::new(),
    };
    let heading = vec![
        l.spec.name.clone(),
        label(
            "队员总分制：个人名次总和少者列前，再比最高个人名次、次高个人名次……、全队犯规（1999 15.5，2011 14.8）",
            "12.5 total score: the lower sum of the entrants' individual ranks first, then the best individual rank, the second best, …, then fewer fouls (1999 15.5, 2011 14.8)",
        ),
    ];
    let tables = [teams_table, players_table];
    let format = format.unwrap_or("json");
    if format != "json" {
        return standings_document(format, &l.spec.name, &heading, &tables, lang);
    }
    ok(render::total_score_json(l, &t))
}

async fn standings(
    State(env): State<Env>,
    Path(id): Path<String>,
    Query(q): Query<StandingsQuery>,
) -> Response {
    let h = match league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    standings_of(&h.snapshot(), q)
}

/// The standings of `l` as `GET …/standings` answers them.
fn standings_of(l: &League, q: StandingsQuery) -> Response {
    let t = match render::standings_tables(l, q.stage) {
        Ok(render::Standings::TotalScore(t)) => {
            return total_score_standings(l, t, q.format.as_deref(), lang_named(q.lang.as_deref()));
        }
        Ok(render::Standings::Stage(t)) => t,
        Err(render::NoStandings::NoStage(s, n)) => {
            return api_error(
                StatusCode::NOT_FOUND,
                "not_found",
                &format!("no stage {s} (the event has {n})"),
            );
        }
        Err(render::NoStandings::NotBegun) => {
            return api_error(
                StatusCode::CONFLICT,
                "no_standings",
                "the stage has not begun",
            );
        }
        Err(render::NoStandings::Knockout) => {
            return api_error(
                StatusCode::CONFLICT,
                "no_standings",
                "a knockout has a bracket, not standings",
            );
        }
        Err(render::NoStandings::Failed(e)) => {
            return api_error(StatusCode::INTERNAL_SERVER_ERROR, "standings_failed", &e);
        }
    };
    // The stage's teams, in its own numbering.
    let names: Vec<String> = t.teams.iter().map(|i| l.teams[*i].name.clone()).collect();
    let rules = l.rules.stage(t.stage);
    let lang = lang_named(q.lang.as_deref());
    let label = match l.spec.ranking {
        Some(super::spec::RankingSpec::Preset(ref p)) => p.clone(),
        Some(super::spec::RankingSpec::Criteria(_)) => "custom".into(),
        None => "2011".into(),
    };
    let report = chuhe_league::report::TeamReport {
        event: &l.spec.name,
        teams: &names,
        system: match rules.system {
            System::Swiss { .. } => chuhe_league::standings::System::Swiss,
            System::RoundRobin { legs } => chuhe_league::standings::System::RoundRobin { legs },
            System::Knockout => chuhe_league::standings::System::RoundRobin { legs: 1 },
        },
        criteria: &rules.criteria,
        ranking_label: &label,
        standings: &t.standings,
        matches: &t.matches,
        byes: &t.byes,
        lang,
    };
    match q.format.as_deref().unwrap_or("json") {
        "json" => ok(render::stage_standings_json(l, &t)),
        other => standings_document(
            other,
            &l.spec.name,
            &report.heading(),
            &[report.standings_table(), report.crosstable()],
            lang,
        ),
    }
}

/// A standings printout in `format` other than JSON: HTML, CSV (with a byte order mark, for
/// Excel and WPS) or text; another format is refused.
fn standings_document(
    format: &str,
    name: &str,
    heading: &[String],
    tables: &[chuhe_league::report::Table],
    lang: Lang,
) -> Response {
    use chuhe_league::report::{csv_document, html_document, text_document};
    match format {
        "html" => typed(
            "text/html; charset=utf-8",
            html_document(name, heading, tables, lang),
        ),
        "csv" => typed(
            "text/csv; charset=utf-8",
            format!(
                "{}{}",
                chuhe_league::text::BOM,
                csv_document(heading, tables)
            ),
        ),
        "text" => typed("text/plain; charset=utf-8", text_document(heading, tables)),
        other => api_error(
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            &format!("format {other:?}: json, html, csv or text"),
        ),
    }
}

async fn sheet(
    State(env): State<Env>,
    Path((id, round, table)): Path<(String, u32, u32)>,
    Query(q): Query<FormatQuery>,
) -> Response {
    let h = match league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let l = h.snapshot();
    let (Some(r), Some(t)) = (l.round(round), l.table(round, table)) else {
        return api_error(
            StatusCode::NOT_FOUND,
            "not_found",
            &format!("no round {round} table {table}"),
        );
    };
    let date = format_instant(r.start_ms)[..10].to_string();
    // Each team by name, with its unit where that differs (two teams of one unit).
    let label = |i: usize| chuhe_league::text::team_label(&l.teams[i].name, &l.teams[i].unit);
    let names = [label(t.teams[0]), label(t.teams[1])];
    let header = chuhe_league::sheet::SheetHeader {
        event: &l.spec.name,
        round,
        date: &date,
        table: Some(table),
        teams: [&names[0], &names[1]],
    };
    // Names appear once the lineups are revealed; before, the sheet is blank of names too.
    let rules = &l.rules_of(round).event;
    let players: Vec<(String, String)> = (1..=rules.boards)
        .map(|b| {
            let name = |s: TeamSide| l.player_of(t, s, b).map(|p| p.1).unwrap_or_default();
            (name(TeamSide::First), name(TeamSide::Second))
        })
        .collect();
    let sheet = match match_result(&l, round, table) {
        Some(result) => {
            chuhe_league::sheet::ScoreSheet::new(header, &players, &result, &rules.chain)
        }
        None => {
            chuhe_league::sheet::ScoreSheet::blank(header, &players, rules.boards, &rules.chain)
        }
    };
    let sheet = match sheet {
        Ok(s) => s,
        Err(e) => {
            return api_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "sheet_failed",
                &e.to_string(),
            );
        }
    };
    let lang = lang_of(&q);
    match q.format.as_deref().unwrap_or("html") {
        "html" => typed(
            "text/html; charset=utf-8",
            chuhe_league::sheet::html_document(&[sheet], lang),
        ),
        // The form's CSV starts with its own byte order mark.
        "csv" => typed(
            "text/csv; charset=utf-8",
            chuhe_league::sheet::form_csv_document(&[sheet], lang),
        ),
        other => api_error(
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            &format!("format {other:?}: html or csv"),
        ),
    }
}

/// The whole log, for the organizer and the event's arbiters: every entry with who, when, why.
async fn log(State(env): State<Env>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let h = match league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let p = match who(&env, &headers).await {
        Ok(p) => p,
        Err(r) => return r,
    };
    let l = h.snapshot();
    if !is_official(&l, &p) {
        return api_error(
            StatusCode::FORBIDDEN,
            "permission_denied",
            "the log is for the organizer and the event's arbiters",
        );
    }
    match env.persist.competition_events(l.id, 0).await {
        Ok(events) => ok(json!({
            "entries": events.iter().map(|e| json!({
                "seq": e.seq,
                "at": format_instant(e.at_ms.max(0) as u64),
                "actorId": e.actor.map(|a| a.0.to_string()),
                "reason": e.reason,
                "kind": e.kind,
                "event": serde_json::from_str::<Value>(&e.payload).unwrap_or(Value::Null),
            })).collect::<Vec<_>>()
        })),
        Err(e) => api_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            &e.to_string(),
        ),
    }
}

/// The results so far as a `chuhe league` results file (standings, sheets and pairings
/// offline; the same rules give the same standings).
#[derive(Deserialize)]
struct ExportQuery {
    #[serde(default)]
    stage: Option<u32>,
}

/// `?stage=N` (default 1): a multi-stage event's stage N, as its own results file.
async fn export(
    State(env): State<Env>,
    Path(id): Path<String>,
    Query(q): Query<ExportQuery>,
) -> Response {
    let h = match league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let l = h.snapshot();
    let stage = q.stage.unwrap_or(1);
    if stage == 0 || stage > l.current_stage() {
        return api_error(
            StatusCode::NOT_FOUND,
            "not_found",
            &format!(
                "no stage {stage} begun (stages begun: {})",
                l.current_stage()
            ),
        );
    }
    ok(export_json(&l, stage))
}

/// A stage's results so far as a `chuhe league` results file: its teams, and its rounds
/// numbered from 1 (a single-system event's one stage is the whole event).
pub fn export_json(l: &Arc<League>, stage: u32) -> Value {
    let pts = |p: chuhe_league::Points| p.as_f64();
    let rules = l.rules.stage(stage);
    let gs = &rules.event.game_scoring;
    let entrants = l
        .stages
        .get(stage as usize - 1)
        .cloned()
        .unwrap_or_default();
    let names: Vec<String> = l.teams.iter().map(|t| t.name.clone()).collect();
    let rounds: Vec<_> = l.stage_rounds(stage).collect();
    let mut matches = Vec::new();
    let mut fixtures = Vec::new();
    for (ri, r) in rounds.iter().enumerate() {
        let number = ri as u32 + 1;
        for (k, t) in r.tables.iter().enumerate() {
            let table = k as u32 + 1;
            fixtures.push(
                json!({"round": number, "first": names[t.teams[0]], "second": names[t.teams[1]]}),
            );
            let mut m = json!({"round": number, "table": table, "first": names[t.teams[0]], "second": names[t.teams[1]]});
            let Some(record) = super::core::view::match_record(l, r.number, table) else {
                if t.teams
                    .iter()
                    .any(|&team| l.withdrawn_before(team, r.number))
                {
                    continue;
                }
                m["pending"] = json!(true);
                matches.push(m);
                continue;
            };
            use chuhe_league::chain::{BoardRecord, GameResult};
            use chuhe_league::matches::MatchRecord;
            let who = |s: chuhe_league::Side| match s {
                chuhe_league::Side::First => "first",
                chuhe_league::Side::Second => "second",
            };
            match record {
                MatchRecord::Forfeit { forfeited_by } => {
                    m["forfeited_by"] = json!(who(forfeited_by))
                }
                MatchRecord::DoubleForfeit => m["forfeited_by"] = json!("both"),
                MatchRecord::Played(boards) => {
                    let bs: Vec<Value> = boards
                        .iter()
                        .enumerate()
                        .map(|(bi, b)| {
                            let players = |s: TeamSide| l.player_of(t, s, bi as u32 + 1).map(|p| p.1);
                            let mut v = json!({"first_player": players(TeamSide::First), "second_player": players(TeamSide::Second)});
                            match b {
                                BoardRecord::Forfeit { forfeited_by } => v["forfeited_by"] = json!(who(*forfeited_by)),
                                BoardRecord::DoubleForfeit => v["forfeited_by"] = json!("both"),
                                BoardRecord::Played(games) => {
                                    v["games"] = json!(games.iter().map(|g| json!({
                                        "result": match g.result { GameResult::FirstWins => "first", GameResult::SecondWins => "second", GameResult::Draw => "draw" },
                                        "first_colour": colour_name(ColourName::of_league(g.first_colour)),
                                        "fouls": g.fouls,
                                    })).collect::<Vec<_>>());
                                }
                            }
                            v
                        })
                        .collect();
                    m["boards"] = json!(bs);
                }
            }
            matches.push(m);
        }
    }
    let chain: Vec<Value> = rules
        .event
        .chain
        .stages()
        .iter()
        .enumerate()
        .map(|(i, s)| {
            use chuhe_league::chain::{Chooser, DrawRule, StageColours};
            json!({
                "name": s.name,
                "time_control": s.time_control.as_str(),
                "colours": match s.colours {
                    StageColours::AsScheduled => "scheduled",
                    StageColours::SwappedFromPrevious => "swapped",
                    StageColours::ChosenBy(Chooser::PreviousBlack) => "chosen_by_previous_black",
                    StageColours::ChosenBy(Chooser::PreviousRed) => "chosen_by_previous_red",
                    StageColours::ChosenBy(Chooser::FirstTeam) => "chosen_by_first",
                    StageColours::ChosenBy(Chooser::SecondTeam) => "chosen_by_second",
                },
                "on_draw": match s.on_draw {
                    DrawRule::Draw => "draw",
                    DrawRule::WinFor(chuhe_league::Colour::Black) => "black_wins",
                    DrawRule::WinFor(chuhe_league::Colour::Red) => "red_wins",
                },
                "points": s.decided_points.map(|(w, lo)| [pts(w), pts(lo)]),
                "rated": s.rated || i == 0,
            })
        })
        .collect();
    let mut file = json!({
        "event": l.spec.name,
        "system": system_name(rules.system),
        "ranking": rules.criteria.iter().map(|c| c.code()).collect::<Vec<_>>(),
        "boards": rules.event.boards,
        "game_scoring": {"win": pts(gs.win), "loss": pts(gs.loss), "draw_red": pts(gs.draw_red), "draw_black": pts(gs.draw_black)},
        "result_chain": {"stages": chain, "count_basis": match rules.event.chain.count_basis {
            chuhe_league::chain::CountBasis::FirstStage => "first_stage",
            chuhe_league::chain::CountBasis::DecidingGame => "deciding_game",
        }},
        "teams": entrants.iter().map(|i| json!({"name": l.teams[*i].name, "unit": l.teams[*i].unit})).collect::<Vec<_>>(),
        "matches": matches,
        "withdrawals": l.withdrawals.iter().filter(|w| entrants.contains(&w.team)).map(|w| json!({
            "team": names[w.team],
            "after_round": rounds.iter().filter(|r| r.number <= w.after_round).count(),
        })).collect::<Vec<_>>(),
    });
    if l.rules.stages.len() > 1 {
        file["stage"] = json!(stage);
    }
    if let System::RoundRobin { legs } = rules.system {
        file["legs"] = json!(legs);
        file["schedule"] = json!(fixtures);
    }
    file
}

// ---- players: individual board tables and the Elo rating list ------------------------------

/// `?format=json|html|csv|text&lang=zh|en&min_games=N` for the players' printouts.
#[derive(Deserialize)]
struct PlayersQuery {
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    lang: Option<String>,
    /// Board tables: games a player needs on a board to be ranked there (default 0). Elo: rated
    /// games an unrated player needs for a first (performance) rating (default 5).
    #[serde(default)]
    min_games: Option<u32>,
}

/// One decided board of the league with its two players: (team index, player name) per side.
struct PlayedBoard {
    round: u32,
    players: [(usize, String); 2],
    result: chuhe_league::chain::BoardResult,
}

/// Every decided board whose two players are known (a match forfeited as a whole has none), in
/// round and table order.
fn played_boards(l: &League) -> Vec<PlayedBoard> {
    let mut out = Vec::new();
    for r in &l.rounds {
        for (k, t) in r.tables.iter().enumerate() {
            let Some(result) = match_result(l, r.number, k as u32 + 1) else {
                continue;
            };
            for b in result.boards {
                let first = l.player_of(t, TeamSide::First, b.board);
                let second = l.player_of(t, TeamSide::Second, b.board);
                if let (Some(first), Some(second)) = (first, second) {
                    out.push(PlayedBoard {
                        round: r.number,
                        players: [(t.teams[0], first.1), (t.teams[1], second.1)],
                        result: b,
                    });
                }
            }
        }
    }
    out
}

/// A printout in the asked format: JSON as given, else the tables as HTML, CSV (with a byte
/// order mark, for Excel and WPS) or text.
fn printout(
    q: &PlayersQuery,
    lang: Lang,
    title: &str,
    json_body: Value,
    tables: &[chuhe_league::report::Table],
) -> Response {
    use chuhe_league::report::{csv_document, html_document, text_document};
    let heading = vec![title.to_string()];
    match q.format.as_deref().unwrap_or("json") {
        "json" => ok(json_body),
        "html" => typed(
            "text/html; charset=utf-8",
            html_document(title, &[], tables, lang),
        ),
        "csv" => typed(
            "text/csv; charset=utf-8",
            format!(
                "{}{}",
                chuhe_league::text::BOM,
                csv_document(&heading, tables)
            ),
        ),
        "text" => typed("text/plain; charset=utf-8", text_document(&heading, tables)),
        other => api_error(
            StatusCode::BAD_REQUEST,
            "bad_format",
            &format!("format must be json, html, csv or text, not {other:?}"),
        ),
    }
}

/// `GET /api/v1/leagues/{id}/boards`: the individual results per board (台次成绩), one table
/// per board, as `chuhe league standings --boards` prints them.
async fn boards(
    State(env): State<Env>,
    Path(id): Path<String>,
    Query(q): Query<PlayersQuery>,
) -> Response {
    use chuhe_league::individual::{BoardEntry, board_tables};
    let h = match league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let l = h.snapshot();
    let min = q.min_games.unwrap_or(0);
    let entries: Vec<BoardEntry> = played_boards(&l)
        .into_iter()
        .map(|b| BoardEntry {
            round: b.round,
            board: b.result.board,
            players: b
                .players
                .map(|(team, name)| (name, l.teams[team].name.clone())),
            points: b.result.points,
            winner: b.result.winner,
            forfeit: b.result.forfeit,
        })
        .collect();
    let per_board = board_tables(&entries, min);
    let lang = lang_named(q.lang.as_deref());
    let tables: Vec<_> = per_board
        .iter()
        .map(|(board, rows)| chuhe_league::report::board_table(*board, rows, min, lang))
        .collect();
    let body = json!({
        "event": l.spec.name,
        "min_games": min,
        "boards": per_board.iter().map(|(board, rows)| json!({
            "board": board,
            "rows": rows.iter().map(|r| json!({
                "rank": r.rank,
                "player": r.player,
                "team": r.team,
                "games": r.games,
                "wins": r.wins,
                "draws": r.draws,
                "losses": r.losses,
                "points": r.points.as_f64(),
                "eligible": r.eligible,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    printout(&q, lang, &l.spec.name, body, &tables)
}

/// `GET /api/v1/leagues/{id}/elo`: the event's rating list (Elo as the seed's method: FIDE's K
/// bands, the roster's ratings and rated games before the event, first ratings from
/// performance after `min_games` rated games), as `chuhe league elo` prints it.
async fn elo(
    State(env): State<Env>,
    Path(id): Path<String>,
    Query(q): Query<PlayersQuery>,
) -> Response {
    use chuhe_league::elo::{
        EloOptions, InitialRating, RatedPlayer, rated_games_of_board, rating_list, rating_order,
        rating_table, to_rated_game,
    };
    let h = match league(&env, &id) {
        Ok(h) => h,
        Err(r) => return r,
    };
    let l = h.snapshot();
    let mut names: Vec<String> = Vec::new();
    let mut teams: Vec<String> = Vec::new();
    let mut players: Vec<RatedPlayer> = Vec::new();
    let mut index = std::collections::BTreeMap::<(usize, String), usize>::new();
    let mut games = Vec::new();
    for b in played_boards(&l) {
        let [x, y] = b.players.map(|(team, name)| {
            *index.entry((team, name.clone())).or_insert_with(|| {
                let registered = l.rules.rosters[team]
                    .players()
                    .iter()
                    .find(|p| p.name == name);
                players.push(RatedPlayer {
                    rating: registered.and_then(|p| p.rating),
                    games: registered.map_or(0, |p| p.rated_games),
                });
                names.push(name);
                teams.push(l.teams[team].name.clone());
                names.len() - 1
            })
        });
        for (colour, res) in rated_games_of_board(&l.rules_of(b.round).event.chain, &b.result) {
            games.push(to_rated_game(x, y, colour, res));
        }
    }
    let options = EloOptions {
        initial: InitialRating::Performance {
            min_games: q.min_games.unwrap_or(5),
        },
        ..EloOptions::default()
    };
    let rows = match rating_list(&players, &games, &options) {
        Ok(rows) => rows,
        Err(e) => {
            return api_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "rating_failed",
                &e.to_string(),
            );
        }
    };
    let lang = lang_named(q.lang.as_deref());
    let table = rating_table(&rows, &names, &teams, lang);
    let body = json!({
        "event": l.spec.name,
        "rows": rating_order(&rows, &names).iter().map(|r| json!({
            "player": names[r.player],
            "team": teams[r.player],
            "before": r.before,
            "initial": r.initial,
            "k": r.k,
            "games": r.games,
            "rated_games": r.rated_games,
            "score": r.score,
            "expected": r.expected,
            "performance": r.performance,
            "change": r.change,
            "after": r.after,
        })).collect::<Vec<_>>(),
    });
    printout(&q, lang, &l.spec.name, body, std::slice::from_ref(&table))
}
