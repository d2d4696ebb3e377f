//! Property tests of the decoders a client reaches in the server (issue 21): arbitrary bytes
//! into the websocket frame decoding, the HTTP API's JSON bodies and the league event file
//! never panic, and every refusal is a typed error with its code. (The protobuf and JSON
//! decoders of `chuhe-proto`, FEN and move text in `chuhe-rules`, and the frame scanner in
//! `frame_kinds` have their own.)

#![allow(clippy::unwrap_used)]

use axum::body::Bytes;
use axum::http::StatusCode;
use chuhe_proto::Encoding;
use chuhe_proto::v1::{
    ClientMessage, CreateGameRequest, CreatePlayerRequest, IssueTokenRequest, RevokeTokenRequest,
};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::conn::decode_client_frame;
use crate::error::ClientError;
use crate::league::spec::EventSpec;

/// Text that looks like JSON often enough to get past the first character.
fn jsonish() -> impl Strategy<Value = String> {
    prop_oneof![
        "[{}\\[\\]\":,0-9a-zA-Z_ .+\\-eE\\\\/\u{4e00}-\u{4e10}]{0,80}",
        any::<String>(),
        Just(String::new()),
    ]
}

/// An arbitrary JSON value, nested a little.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z0-9_:+\\-. /|;]{0,24}".prop_map(Value::String),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,12}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A client frame's refusal is one of the frame codes.
fn is_frame_error(e: &ClientError) -> bool {
    matches!(
        e.code(),
        "frame_too_large" | "wrong_frame_type" | "malformed_frame"
    )
}

fn check_body<M: serde::de::DeserializeOwned>(b: &[u8]) -> Result<(), TestCaseError> {
    if let Err(r) = crate::http::body::<M>(&Bytes::copy_from_slice(b)) {
        prop_assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    }
    Ok(())
}

/// A league event file of our own, valid, for mutation.
fn base_event() -> Value {
    json!({
        "name": "decoder test league",
        "system": "round_robin",
        "legs": 1,
        "boards": 2,
        "teams": [
            {"name": "North", "players": ["n1", "n2", "n3"]},
            {"name": "South", "players": ["s1", "s2"]},
            {"name": "East", "players": ["e1", "e2"]},
        ],
        "schedule": {"first_round": "2027-03-01T19:00:00+08:00", "every": "7d"}
    })
}

/// Sets `v` at a path of object keys and array indices (creating objects on the way).
fn set_at(doc: &mut Value, path: &[String], v: Value) {
    let Some((first, rest)) = path.split_first() else {
        *doc = v;
        return;
    };
    let next = match doc {
        Value::Array(items) if !items.is_empty() => {
            let i = first.len() % items.len();
            &mut items[i]
        }
        Value::Object(map) => map.entry(first.clone()).or_insert(Value::Null),
        other => {
            *other = json!({});
            match other {
                Value::Object(map) => map.entry(first.clone()).or_insert(Value::Null),
                _ => return,
            }
        }
    };
    set_at(next, rest, v);
}

/// Decodes an event file as the league API does and checks it as far as it goes.
fn check_event(bytes: &[u8]) {
    if let Ok(spec) = serde_json::from_slice::<EventSpec>(bytes) {
        if let Ok(rules) = spec.rules() {
            let _ = spec.round_times(&rules, 3);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_frame_bytes_decode_or_get_a_frame_code(
        data in prop::collection::vec(any::<u8>(), 0..600),
        is_text in any::<bool>(),
        json_conn in any::<bool>(),
    ) {
        let enc = if json_conn { Encoding::Json } else { Encoding::Proto };
        if let Err(e) = decode_client_frame(&data, is_text, enc, 512) {
            prop_assert!(is_frame_error(&e), "{e:?}");
        }
    }

    #[test]
    fn any_json_text_frame_decodes_or_is_malformed(text in jsonish()) {
        match decode_client_frame(text.as_bytes(), true, Encoding::Json, 4096) {
            Ok(m) => {
                // What decodes encodes back and decodes the same.
                let again: ClientMessage =
                    chuhe_proto::decode_json(&chuhe_proto::encode_json(&m)).unwrap();
                prop_assert_eq!(again, m);
            }
            Err(e) => prop_assert!(is_frame_error(&e), "{e:?}"),
        }
    }

    #[test]
    fn any_api_body_decodes_or_is_400(
        data in prop::collection::vec(any::<u8>(), 0..300),
        text in jsonish(),
        value in json_value(),
    ) {
        let value = value.to_string();
        for b in [&data[..], text.as_bytes(), value.as_bytes()] {
            check_body::<CreatePlayerRequest>(b)?;
            check_body::<IssueTokenRequest>(b)?;
            check_body::<RevokeTokenRequest>(b)?;
            check_body::<CreateGameRequest>(b)?;
        }
    }

    #[test]
    fn any_event_file_bytes_are_refused_without_panic(
        data in prop::collection::vec(any::<u8>(), 0..400),
        text in jsonish(),
    ) {
        check_event(&data);
        check_event(text.as_bytes());
    }

    #[test]
    fn a_mutated_event_file_is_checked_without_panic(
        path in prop::collection::vec(
            prop_oneof![
                Just("system".to_string()), Just("legs".to_string()), Just("boards".to_string()),
                Just("teams".to_string()), Just("players".to_string()), Just("name".to_string()),
                Just("schedule".to_string()), Just("first_round".to_string()),
                Just("every".to_string()), Just("result_chain".to_string()),
                Just("preset".to_string()), Just("time_controls".to_string()),
                Just("game_scoring".to_string()), Just("ranking".to_string()),
                Just("lineup".to_string()), Just("lateness".to_string()),
                "[a-z_]{1,10}",
            ],
            1..4,
        ),
        value in json_value(),
    ) {
        let mut doc = base_event();
        set_at(&mut doc, &path, value);
        check_event(doc.to_string().as_bytes());
    }
}

#[test]
fn the_base_event_file_is_valid() {
    let spec: EventSpec = serde_json::from_value(base_event()).unwrap();
    let rules = spec.rules().unwrap();
    assert_eq!(spec.round_times(&rules, 3).unwrap().len(), 3);
}
