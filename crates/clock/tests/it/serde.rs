//! Serialisation of snapshots and controls (feature `serde`).
#![cfg(feature = "serde")]
#![allow(clippy::unwrap_used, unused_must_use)]

use chuhe_clock::*;
use std::time::Duration;

#[test]
fn snapshot_json_round_trip() {
    let controls: Controls = "red:40/90m,10/15m;black:30m|3x30s".parse().unwrap();
    let mut c = Clock::new(controls, LagConfig::default());
    c.start(Millis(1000)).unwrap();
    c.on_move(
        Millis(5000),
        Some(Duration::from_millis(3900)),
        Duration::from_millis(80),
    )
    .unwrap();
    c.charge_time(Side::Red, Duration::from_secs(300), Millis(6000))
        .unwrap();
    let snap = c.snapshot(Millis(7000));
    let json = serde_json::to_string(&snap).unwrap();
    assert!(
        json.contains(r#""controls":"red:40/90m,10/15m;black:30m|3x30s""#),
        "{json}"
    );
    assert!(
        json.contains(
            r#""phase":{"phase":"running","side":"black","turn_elapsed_ms":2000,"starts_in_ms":0}"#
        ),
        "{json}"
    );
    let back: ClockSnapshot = serde_json::from_str(&json).unwrap();
    assert_eq!(back, snap);
    assert_eq!(
        Clock::restore(&back, Millis(0))
            .unwrap()
            .view(Millis(0))
            .black,
        c.view(Millis(7000)).black
    );
}

#[test]
fn bad_control_text_in_json_is_an_error() {
    let err = serde_json::from_str::<TimeControl>(r#""90""#).unwrap_err();
    assert!(err.to_string().contains("missing unit"), "{err}");
    let tc: TimeControl = serde_json::from_str(r#""90m+30s""#).unwrap();
    assert_eq!(serde_json::to_string(&tc).unwrap(), r#""90m+30s""#);
}

#[test]
fn lag_config_fills_defaults() {
    let cfg: LagConfig = serde_json::from_str(r#"{"max_flag_grace_ms":1000}"#).unwrap();
    assert_eq!(
        cfg,
        LagConfig {
            max_flag_grace_ms: 1000,
            ..LagConfig::default()
        }
    );
}

#[test]
fn reports_and_views_serialise() {
    let mut c = Clock::symmetric("5m".parse().unwrap(), LagConfig::disabled());
    c.start(Millis(0)).unwrap();
    let r = c.on_move(Millis(MIN_MS), None, Duration::ZERO).unwrap();
    let json = serde_json::to_value(r).unwrap();
    assert_eq!(json["used_ms"], 60_000);
    assert_eq!(json["flag"], serde_json::Value::Null);
    let v = serde_json::to_value(c.view(Millis(MIN_MS))).unwrap();
    assert_eq!(v["to_move"], "black");
    let f = Flag {
        side: Side::Red,
        reason: FlagReason::MoveCount {
            made: 39,
            required: 40,
        },
    };
    assert_eq!(
        serde_json::to_string(&f).unwrap(),
        r#"{"side":"red","reason":{"kind":"move_count","made":39,"required":40}}"#
    );
}

const MIN_MS: u64 = 60_000;

/// Snapshots are stored with every move: zero fields and default lag parameters are left out,
/// and a snapshot written in the full form (before this was so) still reads back the same.
#[test]
fn snapshot_json_is_compact_and_reads_the_full_form() {
    let controls: Controls = "90m+30s".parse().unwrap();
    let mut c = Clock::new(controls, LagConfig::default());
    c.start(Millis(1000)).unwrap();
    let snap = c.snapshot(Millis(1500));
    let json = serde_json::to_string(&snap).unwrap();
    assert!(!json.contains("\"lag\""), "{json}");
    assert!(!json.contains("charged_ms"), "{json}");
    assert!(json.contains("\"remaining_ms\":5400000"), "{json}");
    assert!(json.len() < 300, "{} bytes: {json}", json.len());
    assert_eq!(serde_json::from_str::<ClockSnapshot>(&json).unwrap(), snap);

    let full = serde_json::json!({
        "controls": "90m+30s",
        "lag": serde_json::to_value(LagConfig::default()).unwrap(),
        "red": serde_json::to_value(snap.red).unwrap(),
        "black": {"remaining_ms": 5400000, "stage": 0, "moves_in_stage": 0, "periods_left": 0,
                  "moves": 0, "pending_charge_ms": 0, "lag_quota_ms": snap.black.lag_quota_ms,
                  "elapsed_ms": 0, "compensation_ms": 0, "earned_ms": 0, "added_ms": 0,
                  "charged_ms": 0},
        "phase": serde_json::to_value(snap.phase).unwrap(),
        "taken_at": snap.taken_at.0,
    });
    assert_eq!(serde_json::from_value::<ClockSnapshot>(full).unwrap(), snap);

    // Non-default lag parameters are kept.
    let lag = LagConfig {
        enabled: false,
        ..LagConfig::default()
    };
    let mut c = Clock::new("90m+30s".parse().unwrap(), lag);
    c.start(Millis(0)).unwrap();
    let json = serde_json::to_string(&c.snapshot(Millis(0))).unwrap();
    assert!(json.contains("\"lag\""), "{json}");
    assert_eq!(
        serde_json::from_str::<ClockSnapshot>(&json).unwrap().lag,
        lag
    );
}
