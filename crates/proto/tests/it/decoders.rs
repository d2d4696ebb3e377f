//! The wire decoders a client reaches, fed arbitrary input: `decode_proto` (binary websocket
//! frames) and `decode_json` (text frames, and the organiser API's bodies) for every message
//! a client sends — `ClientMessage` and the four organiser requests — and `ServerMessage`
//! (what our own clients read). None may panic; a refusal is a typed `DecodeError` with a
//! sentence; what decodes encodes back to the same message.
#![allow(clippy::unwrap_used)]

use chuhe_proto::v1::{
    AddTime, AnswerDraw, ArbiterCommand, ClientMessage, CreateGameRequest, CreatePlayerRequest,
    IssueTokenRequest, MakeMove, OverrideRuling, Ping, RevokeTokenRequest, ServerMessage,
    Subscribe, arbiter_command, client_message,
};
use chuhe_proto::{DecodeError, decode_json, decode_proto, encode_json, encode_proto};
use proptest::prelude::*;
use serde_json::Value;

/// What a decoder answered: a message that encodes and decodes back to itself (`again`), or
/// a refusal of the decoder's own kind (`own`) with a sentence.
fn check<M: PartialEq + std::fmt::Debug>(
    decoded: Result<M, DecodeError>,
    again: impl Fn(&M) -> Result<M, DecodeError>,
    own: fn(&DecodeError) -> bool,
) -> Result<(), TestCaseError> {
    match decoded {
        Ok(m) => prop_assert_eq!(again(&m).unwrap(), m),
        Err(e) => prop_assert!(own(&e) && !e.to_string().is_empty(), "{e:?}"),
    }
    Ok(())
}

/// Decodes `bytes` as protobuf `M`.
fn proto_as<M>(bytes: &[u8]) -> Result<(), TestCaseError>
where
    M: prost::Message + Default + PartialEq + std::fmt::Debug,
{
    check(
        decode_proto::<M>(bytes),
        |m| decode_proto::<M>(&encode_proto(m)),
        |e| matches!(e, DecodeError::Proto(_)),
    )
}

/// Decodes `text` as canonical JSON `M`.
fn json_as<M>(text: &str) -> Result<(), TestCaseError>
where
    M: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    check(
        decode_json::<M>(text),
        |m| decode_json::<M>(&encode_json(m)),
        |e| matches!(e, DecodeError::Json(_)),
    )
}

fn proto_all(bytes: &[u8]) -> Result<(), TestCaseError> {
    proto_as::<ClientMessage>(bytes)?;
    proto_as::<ServerMessage>(bytes)?;
    proto_as::<CreatePlayerRequest>(bytes)?;
    proto_as::<IssueTokenRequest>(bytes)?;
    proto_as::<RevokeTokenRequest>(bytes)?;
    proto_as::<CreateGameRequest>(bytes)
}

fn json_all(text: &str) -> Result<(), TestCaseError> {
    json_as::<ClientMessage>(text)?;
    json_as::<ServerMessage>(text)?;
    json_as::<CreatePlayerRequest>(text)?;
    json_as::<IssueTokenRequest>(text)?;
    json_as::<RevokeTokenRequest>(text)?;
    json_as::<CreateGameRequest>(text)
}

/// Good client messages of every kind, to be edited.
fn samples() -> Vec<ClientMessage> {
    use client_message::Kind as K;
    let arbiter = |action| {
        K::Arbiter(ArbiterCommand {
            game_id: "7".into(),
            reason: "clock fault".into(),
            action: Some(action),
        })
    };
    let kinds = vec![
        K::Subscribe(Subscribe {
            game_id: "12".into(),
            last_seq: u64::MAX,
        }),
        K::Move(MakeMove {
            game_id: "12".into(),
            ply: 3,
            r#move: "h2e2".into(),
            offer_draw: true,
            think_ms: 1500,
        }),
        K::AnswerDraw(AnswerDraw {
            game_id: "12".into(),
            accept: true,
        }),
        arbiter(arbiter_command::Action::AddTime(AddTime {
            side: 2,
            delta_ms: i64::MIN,
        })),
        arbiter(arbiter_command::Action::OverrideRuling(OverrideRuling {
            ruling_seq: 9,
            result: 3,
        })),
        K::Ping(Ping {
            client_time_ms: 1_764_460_000_000,
        }),
    ];
    kinds
        .into_iter()
        .enumerate()
        .map(|(i, k)| ClientMessage {
            request_id: i as u32 * 1000,
            kind: Some(k),
        })
        .collect()
}

/// Random edits (replace, insert, delete) of a byte string.
fn edit(mut bytes: Vec<u8>, edits: Vec<(usize, u8, u8)>) -> Vec<u8> {
    for (at, op, b) in edits {
        let i = at % (bytes.len() + 1);
        match op {
            0 if i < bytes.len() => bytes[i] = b,
            1 => bytes.insert(i, b),
            _ if i < bytes.len() => {
                bytes.remove(i);
            }
            _ => bytes.push(b),
        }
    }
    bytes
}

fn edits() -> impl Strategy<Value = Vec<(usize, u8, u8)>> {
    proptest::collection::vec((any::<usize>(), 0u8..3, any::<u8>()), 1..5)
}

fn push_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A protobuf field of any wire type (the invalid ones 6 and 7 too), with payloads that
/// sometimes lie about their length and nested messages two levels deep.
#[derive(Debug, Clone)]
enum Field {
    Varint(u32, u64),
    Overlong(u32),
    Len(u32, Option<u64>, Vec<Field>),
    Bytes(u32, Vec<u8>),
    Fixed(u32, u8, Vec<u8>),
}

fn field_number() -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => 1u32..21,
        1 => Just(0u32),
        1 => Just((1u32 << 29) - 1),
        1 => any::<u32>(),
    ]
}

fn field() -> impl Strategy<Value = Field> {
    let leaf = prop_oneof![
        (field_number(), any::<u64>()).prop_map(|(n, v)| Field::Varint(n, v)),
        field_number().prop_map(Field::Overlong),
        (
            field_number(),
            proptest::collection::vec(any::<u8>(), 0..12)
        )
            .prop_map(|(n, b)| Field::Bytes(n, b)),
        (
            field_number(),
            1u8..8,
            proptest::collection::vec(any::<u8>(), 0..9)
        )
            .prop_map(|(n, w, b)| Field::Fixed(n, w, b)),
    ];
    leaf.prop_recursive(2, 24, 4, |inner| {
        (
            field_number(),
            proptest::option::weighted(0.1, any::<u64>()),
            proptest::collection::vec(inner, 0..4),
        )
            .prop_map(|(n, len, fields)| Field::Len(n, len, fields))
    })
}

fn encode_fields(fields: &[Field], out: &mut Vec<u8>) {
    let key = |out: &mut Vec<u8>, n: u32, wire: u8| {
        push_varint(out, (u64::from(n) << 3) | u64::from(wire))
    };
    for f in fields {
        match f {
            Field::Varint(n, v) => {
                key(out, *n, 0);
                push_varint(out, *v);
            }
            Field::Overlong(n) => {
                key(out, *n, 0);
                out.extend_from_slice(&[0xff; 11]);
            }
            Field::Bytes(n, b) => {
                key(out, *n, 2);
                push_varint(out, b.len() as u64);
                out.extend_from_slice(b);
            }
            Field::Fixed(n, wire, b) => {
                key(out, *n, wire % 8);
                out.extend_from_slice(b);
            }
            Field::Len(n, len, inner) => {
                let mut body = Vec::new();
                encode_fields(inner, &mut body);
                key(out, *n, 2);
                push_varint(out, len.unwrap_or(body.len() as u64));
                out.extend_from_slice(&body);
            }
        }
    }
}

/// Every key the client messages and organiser requests have (both JSON spellings), and a
/// few they do not.
const KEYS: &[&str] = &[
    "requestId",
    "request_id",
    "subscribe",
    "unsubscribe",
    "listGames",
    "list_games",
    "move",
    "offerDraw",
    "offer_draw",
    "answerDraw",
    "resign",
    "claimMoveLimit",
    "requestRuling",
    "arbiter",
    "ping",
    "gameId",
    "game_id",
    "lastSeq",
    "ply",
    "thinkMs",
    "accept",
    "reason",
    "pause",
    "resume",
    "addTime",
    "recordFoul",
    "setResult",
    "overrideRuling",
    "side",
    "deltaMs",
    "delta_ms",
    "result",
    "rulingSeq",
    "clientTimeMs",
    "id",
    "displayName",
    "role",
    "playerId",
    "label",
    "tokenId",
    "redId",
    "blackId",
    "timeControl",
    "ruleset",
    "delay",
    "plies",
    "seconds",
    "initialFen",
    "event",
    "round",
    "board",
    "moveLimitPlies",
    "welcome",
    "error",
    "code",
    "",
    "unknown",
    "__proto__",
];

fn json_value() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        proptest::sample::select(vec![
            "0",
            "1",
            "-1",
            "12",
            " 5",
            "1e3",
            "0x10",
            "4294967296",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775809",
            "1.5",
            "NaN",
            "SIDE_RED",
            "SIDE_BLACK",
            "SIDE_UNSPECIFIED",
            "side_red",
            "RESULT_DRAW",
            "ROLE_ORGANIZER",
            "",
        ])
        .prop_map(String::from),
        "\\PC{0,8}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        proptest::sample::select(vec![0.5f64, -1.0, 1e300, 4_294_967_296.0, -0.0, 2.5e-8])
            .prop_map(Value::from),
        text.prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((proptest::sample::select(KEYS), inner), 0..6).prop_map(
                |kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            ),
        ]
    })
}

/// A JSON object with the messages' keys at the top.
fn json_object() -> impl Strategy<Value = String> {
    proptest::collection::vec((proptest::sample::select(KEYS), json_value()), 0..5).prop_map(|kv| {
        let map: serde_json::Map<String, Value> =
            kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        Value::Object(map).to_string()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn proto_of_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        proto_all(&bytes)?;
    }

    #[test]
    fn proto_built_field_by_field(fields in proptest::collection::vec(field(), 0..8)) {
        let mut bytes = Vec::new();
        encode_fields(&fields, &mut bytes);
        proto_all(&bytes)?;
    }

    #[test]
    fn proto_of_edited_good_frames(i in 0usize..6, e in edits()) {
        let good = encode_proto(&samples()[i]);
        proto_all(&edit(good, e))?;
    }

    #[test]
    fn json_of_any_text(text in "\\PC{0,200}") {
        json_all(&text)?;
    }

    #[test]
    fn json_of_any_bytes_read_as_utf8(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        json_all(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn json_objects_with_the_messages_keys(text in json_object()) {
        json_all(&text)?;
    }

    #[test]
    fn json_of_edited_good_frames(i in 0usize..6, e in edits()) {
        let good = encode_json(&samples()[i]).into_bytes();
        json_all(&String::from_utf8_lossy(&edit(good, e)))?;
    }
}

/// What the generators may not reach: deep nesting (serde_json's and prost's recursion
/// limits must answer, not the stack), lengths past the end, huge numbers.
#[test]
fn decoder_edges() {
    let deep_json = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_object = format!("{}1{}", r#"{"arbiter":"#.repeat(50_000), "}".repeat(50_000));
    for text in [
        deep_json.as_str(),
        deep_object.as_str(),
        "",
        "null",
        "[]",
        "{}",
        r#"{"requestId":4294967296}"#,
        r#"{"requestId":-1}"#,
        r#"{"requestId":"7"}"#,
        r#"{"subscribe":{"lastSeq":"18446744073709551616"}}"#,
        r#"{"subscribe":{"lastSeq":1e400}}"#,
        r#"{"arbiter":{"addTime":{"side":"SIDE_NOPE","deltaMs":"-9223372036854775809"}}}"#,
        r#"{"move":{},"ping":{}}"#,
        r#"{"move":null}"#,
        r#"{"requestId":1,"requestId":2}"#,
        "{\"gameId\":\"\\ud800\"}",
        r#"{"role":"ROLE_ORGANIZER","displayName":"x"}"#,
    ] {
        json_all(text).unwrap();
    }
    let nested = vec![0x0b; 100_000]; // field 1, start group, 100,000 times
    let mut deep_len = Vec::new();
    for _ in 0..200 {
        let mut outer = vec![0x9a, 0x01]; // field 19 (arbiter), length-delimited
        push_varint(&mut outer, deep_len.len() as u64);
        outer.extend_from_slice(&deep_len);
        deep_len = outer;
    }
    for bytes in [
        nested.as_slice(),
        deep_len.as_slice(),
        &[],
        &[0x08],
        &[
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ],
        &[0x6a, 0xff, 0xff, 0xff, 0xff, 0x0f],
        &[0x6a, 0x05, 0x0a, 0x7f],
        &[0x0f],
        &[0x00],
        &[0xff, 0xff, 0xff, 0xff, 0x7f],
    ] {
        proto_all(bytes).unwrap();
    }
}
