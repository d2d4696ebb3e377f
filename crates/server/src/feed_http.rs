//! The public event feed over Server-Sent Events: `GET /api/v1/leagues/{id}/feed`.
//!
//! The league's public stream (the one `leagueSubscribe` follows on the websocket, with the
//! event's broadcast delay) as SSE: one event per public entry (`id:` its seq, `event:` its
//! kind — `round_paired`, `round_started`, `lineups_revealed`, `game_finished`, `board_set`, `match_forfeited`,
//! … — `data:` its JSON), then, after an entry that can change the standings, an event
//! `match_result` when it decided its match (once per match and connection) and an event
//! `standings` with the standings' JSON as `GET …/standings` answers it. A reconnecting client
//! sends `Last-Event-ID` (browsers do by themselves) or `?lastSeq=` and gets exactly the entries
//! after it. Read-only, no sign-in.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::Ordering;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chuhe_proto::Encoding;
use chuhe_proto::v1::client_message::Kind as Kind2;
use chuhe_proto::v1::server_message::Kind;

use crate::auth::api_error;
use crate::env::Env;
use crate::league::runner::LeagueHandle;
use crate::league::ws::{Derived, NEXT_FEED};
use crate::outbox::{Inbox, Out, Outbox};

pub fn router() -> Router<Env> {
    Router::new().route("/api/v1/leagues/{id}/feed", get(feed))
}

#[derive(serde::Deserialize)]
struct FeedQuery {
    #[serde(rename = "lastSeq")]
    last_seq: Option<u64>,
}

struct Feed {
    env: Env,
    id: String,
    h: Option<LeagueHandle>,
    conn: u64,
    inbox: Inbox,
    pending: VecDeque<Event>,
    done: bool,
    derive: Derived,
}

impl Drop for Feed {
    fn drop(&mut self) {
        // A relayed subscription (several nodes) ends when its outbox closes.
        if let Some(h) = &self.h {
            h.detach(self.conn);
        }
    }
}

async fn feed(
    State(env): State<Env>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(q): Query<FeedQuery>,
) -> Response {
    // Here, or (several nodes) on another node, which the websocket relay follows.
    let Some(league_id) = id.parse::<i64>().ok() else {
        return api_error(
            StatusCode::NOT_FOUND,
            "not_found",
            &format!("no league with id {id:?}"),
        );
    };
    let h = env.leagues.get(league_id);
    if h.is_none() && env.node.is_none() {
        return api_error(
            StatusCode::NOT_FOUND,
            "not_found",
            &format!("no league with id {id:?}"),
        );
    }
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .or(q.last_seq)
        .unwrap_or(0);
    let conn = NEXT_FEED.fetch_add(1, Ordering::Relaxed);
    let (out, inbox, _kick) = Outbox::new(conn, Encoding::Json, 1024);
    let who = crate::request::Principal { account: None };
    let sub = Kind2::LeagueSubscribe(chuhe_proto::v1::LeagueSubscribe {
        league_id: id.clone(),
        last_seq: last,
        feed: false,
    });
    crate::league::ws::on_message(&env, &who, &out, 0, sub).await;
    let st = Feed {
        env,
        id,
        h,
        conn,
        inbox,
        pending: VecDeque::new(),
        done: false,
        derive: Derived::default(),
    };
    let stream = futures_util::stream::unfold(st, |mut st| async move {
        loop {
            if let Some(e) = st.pending.pop_front() {
                return Some((Ok::<Event, Infallible>(e), st));
            }
            if st.done {
                return None;
            }
            let msg = match st.inbox.recv().await? {
                Out::Shared(f) => f.message().clone(),
                Out::Own(m) => *m,
            };
            match msg.kind {
                Some(Kind::League(u)) => {
                    let derived = st.derive.after(&st.env, &st.id, &u);
                    st.pending.push_back(
                        Event::default()
                            .id(u.seq.to_string())
                            .event(u.kind)
                            .data(u.json),
                    );
                    for (kind, data) in derived {
                        st.pending
                            .push_back(Event::default().event(kind).data(data));
                    }
                }
                Some(Kind::Reply(r)) => st.pending.push_back(
                    Event::default()
                        .event("subscribed")
                        .data(serde_json::json!({"seq": r.seq}).to_string()),
                ),
                Some(Kind::Error(e)) => {
                    st.pending.push_back(Event::default().event("error").data(
                        serde_json::json!({"code": e.code, "message": e.message}).to_string(),
                    ));
                    st.done = true;
                }
                _ => {}
            }
        }
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}
