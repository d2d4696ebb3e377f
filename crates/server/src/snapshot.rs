//! The clock snapshot stored with a game's events, as protobuf (`chuhe.v1.ClockSnapshot`),
//! converted to and from `chuhe_clock::ClockSnapshot`. Servers before this form stored the
//! snapshot as JSON (`StoredEvent.clock_snapshot`); [`stored_clock`] reads either.

use axum::body::Bytes;
use chuhe_clock::{
    ClockSnapshot, Controls, Flag, FlagReason, LagConfig, Millis, Side, SideSnapshot, SnapshotPhase,
};
use chuhe_proto::v1 as w;

fn side_to(s: Side) -> i32 {
    crate::game_wire::side(chuhe_game::side::from_clock(s)) as i32
}

fn side_from(s: i32, what: &str) -> Result<Side, String> {
    crate::game_wire::side_of(s)
        .map(chuhe_game::side::to_clock)
        .ok_or_else(|| format!("clock snapshot: {what} has no side"))
}

/// Conversions both ways between two structs with the same fields, from one list of them.
macro_rules! mirror {
    ($to:ident, $from:ident, $a:path, $b:path, [$($f:ident),* $(,)?]) => {
        fn $to(s: &$a) -> $b {
            $b { $($f: s.$f),* }
        }
        fn $from(s: &$b) -> $a {
            $a { $($f: s.$f),* }
        }
    };
}

mirror!(
    side_snap_to,
    side_snap_of,
    SideSnapshot,
    w::SideSnapshot,
    [
        remaining_ms,
        stage,
        moves_in_stage,
        periods_left,
        moves,
        pending_charge_ms,
        lag_quota_ms,
        elapsed_ms,
        compensation_ms,
        earned_ms,
        added_ms,
        charged_ms,
    ]
);

mirror!(
    lag_params_of,
    lag_config_of,
    LagConfig,
    w::LagParams,
    [
        enabled,
        max_gain_cap_ms,
        gain_base_ms,
        gain_per_estimated_second_ms,
        estimate_moves,
        initial_quota_moves,
        quota_cap_moves,
        cpu_allowance_ms,
        max_flag_grace_ms,
    ]
);

fn side_snap_from(s: Option<&w::SideSnapshot>) -> SideSnapshot {
    side_snap_of(s.unwrap_or(&w::SideSnapshot::default()))
}

fn lag_to(l: &LagConfig) -> Option<w::LagParams> {
    (!l.is_default()).then(|| lag_params_of(l))
}

fn lag_from(l: Option<&w::LagParams>) -> LagConfig {
    l.map(lag_config_of).unwrap_or_default()
}

/// The stored (protobuf) form of a clock snapshot.
pub fn to_wire(s: &ClockSnapshot) -> w::ClockSnapshot {
    to_wire_as(s, s.controls.to_string())
}

/// The text form of a game's time controls, kept from one snapshot to the next: a game's
/// controls seldom change (an arbiter's adjustment at most), and formatting them for the
/// snapshot stored with every move showed in the profiles.
#[derive(Debug, Default)]
pub struct ControlsText {
    of: Option<Controls>,
    text: String,
}

impl ControlsText {
    /// `controls` as text, formatted again only when they differ from the last ones.
    pub fn of(&mut self, controls: &Controls) -> &str {
        if self.of.as_ref() != Some(controls) {
            self.text = controls.to_string();
            self.of = Some(controls.clone());
        }
        &self.text
    }
}

/// As [`to_wire`], with the controls' text from `cache`.
pub fn to_wire_cached(s: &ClockSnapshot, cache: &mut ControlsText) -> w::ClockSnapshot {
    to_wire_as(s, cache.of(&s.controls).to_string())
}

fn to_wire_as(s: &ClockSnapshot, controls: String) -> w::ClockSnapshot {
    let mut out = w::ClockSnapshot {
        controls,
        lag: lag_to(&s.lag),
        red: Some(side_snap_to(&s.red)),
        black: Some(side_snap_to(&s.black)),
        taken_at_ms: s.taken_at.0,
        ..w::ClockSnapshot::default()
    };
    match s.phase {
        SnapshotPhase::NotStarted => out.phase = w::ClockPhase::NotStarted as i32,
        SnapshotPhase::Running {
            side,
            turn_elapsed_ms,
            starts_in_ms,
        } => {
            out.phase = w::ClockPhase::Running as i32;
            out.side = side_to(side);
            out.turn_elapsed_ms = turn_elapsed_ms;
            out.starts_in_ms = starts_in_ms;
        }
        SnapshotPhase::Paused {
            side,
            turn_elapsed_ms,
        } => {
            out.phase = w::ClockPhase::Paused as i32;
            out.side = side_to(side);
            out.turn_elapsed_ms = turn_elapsed_ms;
        }
        SnapshotPhase::Stopped => out.phase = w::ClockPhase::Stopped as i32,
        SnapshotPhase::Flagged { flag } => {
            out.phase = w::ClockPhase::Flagged as i32;
            let (made, required) = match flag.reason {
                FlagReason::Time => (0, 0),
                FlagReason::MoveCount { made, required } => (made, required),
            };
            out.flag = Some(w::FlagSnapshot {
                side: side_to(flag.side),
                made,
                required,
            });
        }
    }
    out
}

/// A clock snapshot from its stored (protobuf) form; Err says what is wrong with it.
pub fn from_wire(s: &w::ClockSnapshot) -> Result<ClockSnapshot, String> {
    let controls: Controls = s
        .controls
        .parse()
        .map_err(|e| format!("clock snapshot: controls {:?}: {e}", s.controls))?;
    let phase = match w::ClockPhase::try_from(s.phase) {
        Ok(w::ClockPhase::NotStarted) => SnapshotPhase::NotStarted,
        Ok(w::ClockPhase::Running) => SnapshotPhase::Running {
            side: side_from(s.side, "a running clock")?,
            turn_elapsed_ms: s.turn_elapsed_ms,
            starts_in_ms: s.starts_in_ms,
        },
        Ok(w::ClockPhase::Paused) => SnapshotPhase::Paused {
            side: side_from(s.side, "a paused clock")?,
            turn_elapsed_ms: s.turn_elapsed_ms,
        },
        Ok(w::ClockPhase::Stopped) => SnapshotPhase::Stopped,
        Ok(w::ClockPhase::Flagged) => {
            let f = s
                .flag
                .as_ref()
                .ok_or("clock snapshot: a flagged clock without its flag")?;
            SnapshotPhase::Flagged {
                flag: Flag {
                    side: side_from(f.side, "a flag")?,
                    reason: if f.required == 0 {
                        FlagReason::Time
                    } else {
                        FlagReason::MoveCount {
                            made: f.made,
                            required: f.required,
                        }
                    },
                },
            }
        }
        Err(_) => return Err(format!("clock snapshot: unknown phase {}", s.phase)),
    };
    Ok(ClockSnapshot {
        controls,
        lag: lag_from(s.lag.as_ref()),
        red: side_snap_from(s.red.as_ref()),
        black: side_snap_from(s.black.as_ref()),
        phase,
        taken_at: Millis(s.taken_at_ms),
    })
}

/// The clock snapshot a stored event carries, in either stored form (None: it has none).
pub fn stored_clock(ev: &w::StoredEvent) -> Result<Option<ClockSnapshot>, String> {
    if let Some(c) = &ev.clock {
        return from_wire(c).map(Some);
    }
    if ev.clock_snapshot.is_empty() {
        return Ok(None);
    }
    serde_json::from_str(&ev.clock_snapshot)
        .map(Some)
        .map_err(|e| format!("clock snapshot: {e}"))
}

/// An event's stored form (`StoredEvent { event, clock }`) and the websocket frame clients get
/// (`ServerMessage { event }`, binary), with the event encoded once for both. The stored bytes
/// are exactly what prost's `encode_to_vec` of the `StoredEvent` gives (field 1, then field 3;
/// the empty `clock_snapshot` is left out), and the frame's payload exactly what it gives for the
/// `ServerMessage`; prost itself measures each nested message once more per level it is nested
/// in, which made this a tenth of a move's instructions.
pub(crate) fn stored_event(
    event: &w::GameEvent,
    clock: Option<&w::ClockSnapshot>,
) -> (Vec<u8>, Bytes) {
    use prost::Message as _;
    use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint};
    const SERVER_EVENT: u32 = 4;
    let len = event.encoded_len();
    let clock_len = clock.map(prost::Message::encoded_len);
    let mut stored = Vec::with_capacity(
        2 + encoded_len_varint(len as u64)
            + len
            + clock_len.map_or(0, |n| encoded_len_varint(n as u64) + n),
    );
    encode_key(1, WireType::LengthDelimited, &mut stored);
    encode_varint(len as u64, &mut stored);
    let body = stored.len()..stored.len() + len;
    event.encode_raw(&mut stored);
    if let (Some(c), Some(n)) = (clock, clock_len) {
        encode_key(3, WireType::LengthDelimited, &mut stored);
        encode_varint(n as u64, &mut stored);
        c.encode_raw(&mut stored);
    }
    let payload = 1 + encoded_len_varint(len as u64) + len;
    let mut frame = Vec::with_capacity(payload + 10);
    crate::socket::push_ws_header(&mut frame, true, payload);
    encode_key(SERVER_EVENT, WireType::LengthDelimited, &mut frame);
    encode_varint(len as u64, &mut frame);
    frame.extend_from_slice(&stored[body]);
    (stored, Bytes::from(frame))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use chuhe_clock::{Clock, Controls, LagConfig};
    use prost::Message as _;
    use std::time::Duration;

    /// Snapshots of clocks in every phase: a fresh one, running with moves made, byo-yomi,
    /// paused, stopped, flagged on time and flagged for a stage's move count, non-default lag.
    fn snapshots() -> Vec<ClockSnapshot> {
        let mut out = Vec::new();
        let c: Controls = "40/90m,30m+30s".parse().unwrap();
        let mut clock = Clock::new(c.clone(), LagConfig::default());
        out.push(clock.snapshot(Millis(0)));
        clock.start(Millis(1_000)).unwrap();
        out.push(clock.snapshot(Millis(1_500)));
        for i in 0..7u64 {
            let _ = clock.on_move(
                Millis(2_000 + i * 3_000),
                None,
                Duration::from_millis(40 * i),
            );
        }
        out.push(clock.snapshot(Millis(30_000)));
        clock.pause(Millis(31_000)).unwrap();
        out.push(clock.snapshot(Millis(32_000)));
        clock.resume(Millis(33_000)).unwrap();
        clock.stop(Millis(34_000)).unwrap();
        out.push(clock.snapshot(Millis(35_000)));
        // Flagged for the move count: 40 moves in 90 minutes not made.
        let mut stage = Clock::new(c, LagConfig::default());
        stage.start(Millis(0)).unwrap();
        let _ = stage.check_flag(Millis(91 * 60_000));
        out.push(stage.snapshot(Millis(91 * 60_000)));
        // Flagged on time in byo-yomi, with lag compensation off.
        let lag = LagConfig {
            enabled: false,
            ..LagConfig::default()
        };
        let mut byo = Clock::new("1m|2x10s".parse().unwrap(), lag);
        byo.start(Millis(0)).unwrap();
        let _ = byo.on_move(Millis(65_000), None, Duration::ZERO);
        out.push(byo.snapshot(Millis(66_000)));
        let _ = byo.check_flag(Millis(10 * 60_000));
        out.push(byo.snapshot(Millis(10 * 60_000)));
        out
    }

    #[test]
    fn every_phase_round_trips_through_the_stored_form() {
        let all = snapshots();
        let phases: Vec<&str> = all
            .iter()
            .map(|s| match s.phase {
                SnapshotPhase::NotStarted => "not_started",
                SnapshotPhase::Running { .. } => "running",
                SnapshotPhase::Paused { .. } => "paused",
                SnapshotPhase::Stopped => "stopped",
                SnapshotPhase::Flagged { flag } => match flag.reason {
                    FlagReason::Time => "flag_time",
                    FlagReason::MoveCount { .. } => "flag_moves",
                },
            })
            .collect();
        for want in [
            "not_started",
            "running",
            "paused",
            "stopped",
            "flag_time",
            "flag_moves",
        ] {
            assert!(phases.contains(&want), "no {want} snapshot in {phases:?}");
        }
        for s in all {
            let bytes = to_wire(&s).encode_to_vec();
            let back = from_wire(&w::ClockSnapshot::decode(bytes.as_slice()).unwrap()).unwrap();
            assert_eq!(back, s);
        }
    }

    #[test]
    fn the_cached_controls_text_follows_the_controls() {
        let mut cache = ControlsText::default();
        let all = snapshots();
        for s in all.iter().chain(all.iter().rev()) {
            assert_eq!(to_wire_cached(s, &mut cache), to_wire(s));
        }
        let a: Controls = "90m+30s".parse().unwrap();
        let b: Controls = "red:5m;black:4m".parse().unwrap();
        assert_eq!(cache.of(&a), "90m+30s");
        assert_eq!(cache.of(&b), b.to_string());
        assert_eq!(cache.of(&a), "90m+30s");
    }

    #[test]
    fn the_stored_form_is_much_smaller_than_the_json() {
        for s in snapshots() {
            let proto = to_wire(&s).encode_to_vec().len();
            let json = serde_json::to_string(&s).unwrap().len();
            assert!(
                proto * 3 < json,
                "{proto} bytes of protobuf, {json} of JSON"
            );
        }
    }

    #[test]
    fn events_stored_by_older_servers_read_back() {
        for s in snapshots() {
            let old = w::StoredEvent {
                event: None,
                clock_snapshot: serde_json::to_string(&s).unwrap(),
                clock: None,
            };
            assert_eq!(stored_clock(&old).unwrap(), Some(s.clone()));
            let new = w::StoredEvent {
                event: None,
                clock_snapshot: String::new(),
                clock: Some(to_wire(&s)),
            };
            assert_eq!(stored_clock(&new).unwrap(), Some(s));
        }
        assert_eq!(stored_clock(&w::StoredEvent::default()).unwrap(), None);
    }

    #[test]
    fn broken_stored_forms_are_errors() {
        let good = to_wire(&snapshots()[2]);
        let cases = [
            w::ClockSnapshot {
                controls: "ninety minutes".into(),
                ..good.clone()
            },
            w::ClockSnapshot {
                phase: 99,
                ..good.clone()
            },
            w::ClockSnapshot {
                side: 0,
                ..good.clone()
            },
            w::ClockSnapshot {
                phase: w::ClockPhase::Flagged as i32,
                flag: None,
                ..good
            },
        ];
        for c in cases {
            assert!(from_wire(&c).is_err(), "{c:?}");
        }
        let bad_json = w::StoredEvent {
            clock_snapshot: "{\"controls\":".into(),
            ..w::StoredEvent::default()
        };
        assert!(stored_clock(&bad_json).is_err());
    }

    /// The stored form and frame made with the event encoded once are byte for byte prost's
    /// encodings of the `StoredEvent` and of the `ServerMessage` (short and long events, with
    /// and without a clock).
    #[test]
    fn an_event_encoded_once_is_stored_and_framed_as_prost_encodes_it() {
        use w::{GameEvent, MovePlayed, ServerMessage, StoredEvent, game_event, server_message};
        let long = "炮二平五".repeat(40);
        for (chinese, clock) in [
            ("炮二平五".to_string(), None),
            ("炮二平五".to_string(), snapshots().pop()),
            (long.clone(), snapshots().first().cloned()),
            (long, None),
        ] {
            let ev = GameEvent {
                game_id: "42".into(),
                seq: 7,
                at_ms: 1_764_460_800_000,
                kind: Some(game_event::Kind::Move(MovePlayed {
                    r#move: Some(w::MoveRecord {
                        ply: 3,
                        iccs: "h2e2".into(),
                        chinese,
                        ..w::MoveRecord::default()
                    }),
                    ..MovePlayed::default()
                })),
            };
            let clock = clock.as_ref().map(to_wire);
            let (stored, frame) = stored_event(&ev, clock.as_ref());
            let want = StoredEvent {
                event: Some(ev.clone()),
                clock_snapshot: String::new(),
                clock,
            }
            .encode_to_vec();
            assert_eq!(stored, want);
            let msg = ServerMessage {
                kind: Some(server_message::Kind::Event(ev)),
            }
            .encode_to_vec();
            assert_eq!(frame, crate::socket::ws_frame(true, &msg));
        }
    }
}
