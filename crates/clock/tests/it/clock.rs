//! Scenario tests of the clock, driven by a fake time source (plain `Millis` values).
#![allow(clippy::unwrap_used, unused_must_use)]

use chuhe_clock::*;
use std::time::Duration;

const S: u64 = 1000;
const MIN: u64 = 60 * S;

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// A fake monotonic time source.
struct FakeTime(u64);
impl FakeTime {
    fn now(&self) -> Millis {
        Millis(self.0)
    }
    fn advance(&mut self, d: u64) -> Millis {
        self.0 += d;
        Millis(self.0)
    }
}

fn clock(spec: &str) -> Clock {
    Clock::new(spec.parse().unwrap(), LagConfig::disabled())
}

/// Move after `think` ms with no lag report.
fn play(c: &mut Clock, t: &mut FakeTime, think: u64) -> MoveClockReport {
    let now = t.advance(think);
    c.on_move(now, None, Duration::ZERO).unwrap()
}

#[test]
fn increment_only_if_in_time() {
    let mut t = FakeTime(0);
    let mut c = clock("1m+3s");
    c.start(t.now()).unwrap();
    let r = play(&mut c, &mut t, 10 * S);
    assert_eq!(r.increment_ms, 3 * S);
    assert_eq!(r.remaining_ms, MIN - 10 * S + 3 * S);
    assert_eq!(c.side_state(Side::Red).remaining_ms, 53 * S);
    // Black uses exactly its whole minute: out of time, no increment, move does not count.
    let r = play(&mut c, &mut t, MIN);
    assert_eq!(
        r.flag,
        Some(Flag {
            side: Side::Black,
            reason: FlagReason::Time
        })
    );
    assert_eq!(r.increment_ms, 0);
    assert_eq!(c.side_state(Side::Black).moves, 0);
    assert_eq!(c.side_state(Side::Black).remaining_ms, 0);
    assert_eq!(
        c.on_move(t.now(), None, Duration::ZERO),
        Err(ClockError::GameOver)
    );
}

#[test]
fn one_millisecond_before_the_flag_is_in_time() {
    let mut t = FakeTime(0);
    let mut c = clock("1m+3s");
    c.start(t.now()).unwrap();
    let r = play(&mut c, &mut t, MIN - 1);
    assert_eq!(r.flag, None);
    assert_eq!(r.remaining_ms, 1 + 3 * S);
}

#[test]
fn period_rollover_and_carry_over() {
    // Art. 6.1 shape, scaled down: 2 moves in 1 min, then 1 move per 30 s, repeating.
    let mut t = FakeTime(0);
    let mut c = clock("2/1m,1/30s");
    c.start(t.now()).unwrap();
    let mut red = Vec::new();
    for _ in 0..4 {
        red.push(play(&mut c, &mut t, 10 * S)); // Red
        play(&mut c, &mut t, S); // Black
    }
    assert_eq!(red[0].stage_bonus_ms, 0);
    assert_eq!(red[0].remaining_ms, 50 * S);
    // Second move completes the first stage: 40 s left carry over, plus 30 s.
    assert_eq!(red[1].stage_bonus_ms, 30 * S);
    assert_eq!(red[1].remaining_ms, 70 * S);
    // The last stage repeats.
    assert_eq!(red[2].stage_bonus_ms, 30 * S);
    assert_eq!(red[2].remaining_ms, 90 * S);
    assert_eq!(red[3].remaining_ms, 110 * S);
    let v = c.view(t.now());
    assert_eq!(v.red.stage, 1);
    assert_eq!(v.red.moves_to_go, Some(1));
    assert_eq!(v.red.moves, 4);
}

#[test]
fn loss_on_a_missed_move_count() {
    // 3 moves in 1 minute; Red makes 2 and then runs out (art. 4.1.4).
    let mut t = FakeTime(0);
    let mut c = clock("3/1m,1/30s");
    c.start(t.now()).unwrap();
    play(&mut c, &mut t, 20 * S);
    play(&mut c, &mut t, S);
    play(&mut c, &mut t, 20 * S);
    play(&mut c, &mut t, S);
    let v = c.view(t.now());
    assert_eq!(v.red.moves_to_go, Some(1));
    assert_eq!(v.red.remaining_ms, 20 * S);
    // The timer: the flag falls exactly 20 s into Red's turn.
    let deadline = c.flag_deadline().unwrap();
    assert_eq!(deadline, Millis(t.0 + 20 * S));
    assert_eq!(c.check_flag(Millis(deadline.0 - 1)), None);
    let flag = c.check_flag(deadline).unwrap();
    assert_eq!(
        flag,
        Flag {
            side: Side::Red,
            reason: FlagReason::MoveCount {
                made: 2,
                required: 3
            }
        }
    );
    assert_eq!(
        flag.to_string(),
        "red ran out of time having made 2 of the 3 moves required"
    );
    assert_eq!(c.flag(), Some(flag));
    assert_eq!(c.check_flag(Millis(deadline.0 + 5)), Some(flag));
    assert_eq!(c.flag_deadline(), None);
}

#[test]
fn missed_count_detected_on_the_late_move_too() {
    let mut t = FakeTime(0);
    let mut c = clock("2/1m,1/30s");
    c.start(t.now()).unwrap();
    play(&mut c, &mut t, 30 * S);
    play(&mut c, &mut t, S);
    let r = play(&mut c, &mut t, 30 * S);
    assert_eq!(
        r.flag,
        Some(Flag {
            side: Side::Red,
            reason: FlagReason::MoveCount {
                made: 1,
                required: 2
            }
        })
    );
}

#[test]
fn byoyomi_periods_consumed_correctly() {
    let mut t = FakeTime(0);
    let mut c = clock("1m|3x10s");
    c.start(t.now()).unwrap();
    // 65 s: main time gone, 5 s into the first period; a move within a period keeps it.
    let r = play(&mut c, &mut t, 65 * S);
    assert_eq!((r.remaining_ms, r.periods_used, r.periods_left), (0, 0, 3));
    play(&mut c, &mut t, S);
    let v = c.view(Millis(t.0 + 4 * S));
    assert_eq!(v.red.period_remaining_ms, Some(6 * S));
    assert_eq!(v.red.periods_left, 3);
    assert_eq!(v.red.time_left_ms, 26 * S);
    // 25 s: two periods used up, 5 s into the third.
    let r = play(&mut c, &mut t, 25 * S);
    assert_eq!((r.periods_used, r.periods_left), (2, 1));
    play(&mut c, &mut t, S);
    // Just inside the last period: kept.
    let r = play(&mut c, &mut t, 10 * S - 1);
    assert_eq!((r.periods_used, r.periods_left, r.flag), (0, 1, None));
    play(&mut c, &mut t, S);
    // The flag falls at exactly 10 s.
    assert_eq!(c.flag_deadline(), Some(Millis(t.0 + 10 * S)));
    let r = play(&mut c, &mut t, 10 * S);
    assert_eq!(
        r.flag,
        Some(Flag {
            side: Side::Red,
            reason: FlagReason::Time
        })
    );
}

#[test]
fn dushmiao_30_minutes_then_60_seconds_a_move() {
    // The 读秒 of seed 001: 30 min game time, then at most 60 s a move, else lose.
    let mut t = FakeTime(0);
    let mut c = clock("30m|60s");
    c.start(t.now()).unwrap();
    play(&mut c, &mut t, 30 * MIN); // Red uses all its game time plus nothing: in byo-yomi now
    play(&mut c, &mut t, S);
    for _ in 0..20 {
        let r = play(&mut c, &mut t, 59 * S);
        assert!(r.flag.is_none());
        assert_eq!(r.periods_left, 1);
        play(&mut c, &mut t, S);
    }
    assert_eq!(c.flag_deadline(), Some(Millis(t.0 + 60 * S)));
    assert!(play(&mut c, &mut t, 60 * S).is_flagged());
}

#[test]
fn armageddon_asymmetric_times() {
    let controls: Controls = "red:5m;black:4m".parse().unwrap();
    let mut t = FakeTime(0);
    let mut c = Clock::new(controls, LagConfig::disabled());
    let v = c.view(t.now());
    assert_eq!(
        (v.red.remaining_ms, v.black.remaining_ms),
        (5 * MIN, 4 * MIN)
    );
    c.start(t.now()).unwrap();
    assert_eq!(c.flag_deadline(), Some(Millis(5 * MIN)));
    play(&mut c, &mut t, S);
    assert_eq!(c.flag_deadline(), Some(Millis(S + 4 * MIN)));
    assert_eq!(
        c.check_flag(Millis(S + 4 * MIN)).map(|f| f.side),
        Some(Side::Black)
    );
}

#[test]
fn pause_and_resume() {
    let mut t = FakeTime(0);
    let mut c = clock("5m");
    c.start(t.now()).unwrap();
    t.advance(10 * S);
    c.pause(t.now()).unwrap();
    assert!(c.is_paused());
    assert_eq!(c.flag_deadline(), None);
    assert_eq!(
        c.on_move(t.now(), None, Duration::ZERO),
        Err(ClockError::Paused)
    );
    assert_eq!(c.pause(t.now()), Err(ClockError::NotRunning));
    t.advance(10 * MIN); // a long pause is nobody's time
    assert_eq!(c.view(t.now()).red.remaining_ms, 5 * MIN - 10 * S);
    c.resume(t.now()).unwrap();
    assert_eq!(c.resume(t.now()), Err(ClockError::NotPaused));
    assert_eq!(c.flag_deadline(), Some(Millis(t.0 + 5 * MIN - 10 * S)));
    let r = play(&mut c, &mut t, 5 * S);
    assert_eq!(r.elapsed_ms, 15 * S);
    assert_eq!(r.remaining_ms, 5 * MIN - 15 * S);
}

#[test]
fn pause_after_the_flag_fell_reports_the_flag() {
    let mut t = FakeTime(0);
    let mut c = clock("1m");
    c.start(t.now()).unwrap();
    t.advance(MIN);
    assert_eq!(
        c.pause(t.now()),
        Err(ClockError::Flagged(Flag {
            side: Side::Red,
            reason: FlagReason::Time
        }))
    );
    assert_eq!(c.resume(t.now()), Err(ClockError::GameOver));
}

#[test]
fn add_and_charge_time() {
    let mut t = FakeTime(0);
    let mut c = clock("10m");
    c.start(t.now()).unwrap();
    play(&mut c, &mut t, MIN); // Red, 9 min left
    // Arbiter adds 2 minutes to the waiting Red, and charges Black (to move) 5 minutes for a
    // false move-limit claim (art. 23.3).
    c.add_time(Side::Red, ms(2 * MIN), t.now()).unwrap();
    assert_eq!(c.view(t.now()).red.remaining_ms, 11 * MIN);
    t.advance(30 * S);
    assert_eq!(c.charge_time(Side::Black, ms(5 * MIN), t.now()), Ok(None));
    let v = c.view(t.now());
    assert_eq!(v.black.remaining_ms, 10 * MIN - 30 * S - 5 * MIN);
    assert_eq!(c.flag_deadline(), Some(Millis(t.0 + 5 * MIN - 30 * S)));
    let r = play(&mut c, &mut t, 30 * S);
    assert_eq!(r.charged_ms, 5 * MIN);
    assert_eq!(r.used_ms, 5 * MIN + MIN);
    assert_eq!(r.remaining_ms, 4 * MIN);
    assert_eq!(c.side_state(Side::Black).charged_ms, 5 * MIN);
    assert_eq!(c.side_state(Side::Red).added_ms, 2 * MIN);
    // Charging the waiting side: counted in its next turn.
    c.charge_time(Side::Black, ms(MIN), t.now()).unwrap();
    assert_eq!(c.view(t.now()).black.remaining_ms, 3 * MIN);
    play(&mut c, &mut t, S);
    assert_eq!(c.flag_deadline(), Some(Millis(t.0 + 3 * MIN)));
}

#[test]
fn a_charge_that_exhausts_the_time_loses_at_once() {
    let mut t = FakeTime(0);
    let mut c = clock("10m");
    c.start(t.now()).unwrap();
    t.advance(6 * MIN);
    let flag = c.charge_time(Side::Red, ms(5 * MIN), t.now()).unwrap();
    assert_eq!(
        flag,
        Some(Flag {
            side: Side::Red,
            reason: FlagReason::Time
        })
    );
    assert_eq!(c.flag(), flag);
    // The waiting side can be flagged by a charge too.
    let mut c = clock("4m");
    c.start(t.now()).unwrap();
    let flag = c.charge_time(Side::Black, ms(5 * MIN), t.now()).unwrap();
    assert_eq!(flag.map(|f| f.side), Some(Side::Black));
    assert_eq!(
        c.add_time(Side::Black, ms(MIN), t.now()),
        Err(ClockError::GameOver)
    );
}

#[test]
fn add_time_cannot_rescue_a_fallen_flag() {
    let mut t = FakeTime(0);
    let mut c = clock("1m");
    c.start(t.now()).unwrap();
    t.advance(MIN + 1);
    assert!(matches!(
        c.add_time(Side::Red, ms(MIN), t.now()),
        Err(ClockError::Flagged(_))
    ));
}

#[test]
fn lateness_start_at_the_scheduled_time() {
    // Game scheduled at 10:00 (t = 10 min). Red arrives 3 minutes late: its clock ran from the
    // scheduled time (art. 21.1). Black's clock starts at Red's first move.
    let sched = Millis(10 * MIN);
    let mut c = clock("15m");
    c.start_at(sched).unwrap();
    assert_eq!(c.start(sched), Err(ClockError::AlreadyStarted));
    // Before the scheduled time nothing runs.
    assert_eq!(c.view(Millis(5 * MIN)).red.remaining_ms, 15 * MIN);
    assert_eq!(c.flag_deadline(), Some(Millis(25 * MIN)));
    let r = c
        .on_move(Millis(13 * MIN + 2 * S), None, Duration::ZERO)
        .unwrap();
    assert_eq!(r.used_ms, 3 * MIN + 2 * S);
    assert_eq!(
        c.view(Millis(13 * MIN + 2 * S)).black.remaining_ms,
        15 * MIN
    );
    // A player who never turns up flags at scheduled + base.
    let mut absent = clock("15m");
    absent.start_at(sched).unwrap();
    assert_eq!(absent.check_flag(Millis(25 * MIN - 1)), None);
    assert!(absent.check_flag(Millis(25 * MIN)).is_some());
}

#[test]
fn both_late_each_charged_its_lateness() {
    // Art. 21.3 with the Lateness helper: scheduled at 0, limit 15 min. Red arrives at 3 min and
    // moves at 4; Black arrives at 7 min, its clock has run 3 min: 4 more are charged.
    let rule = Lateness {
        scheduled: Millis(0),
        limit: ms(15 * MIN),
    };
    let mut c = clock("30m");
    c.start_at(rule.scheduled).unwrap();
    let _ = c.on_move(Millis(4 * MIN), None, Duration::ZERO).unwrap();
    let now = Millis(7 * MIN);
    let extra = rule.late_charge(
        now,
        Some(Millis(3 * MIN)),
        c.time_on_clock(Side::Black, now),
    );
    assert_eq!(extra, ms(4 * MIN));
    assert_eq!(c.charge_time(Side::Black, extra, now), Ok(None));
    assert_eq!(c.view(now).black.remaining_ms, 23 * MIN);
    assert_eq!(
        rule.verdict(Some(Millis(3 * MIN)), Some(now), now),
        LatenessVerdict::Settled
    );
}

#[test]
fn first_move_starts_the_clock_when_not_started() {
    let mut t = FakeTime(0);
    let mut c = clock("5m");
    assert_eq!(c.flag_deadline(), None);
    t.advance(MIN);
    let r = c.on_move(t.now(), None, Duration::ZERO).unwrap();
    assert_eq!((r.side, r.used_ms), (Side::Red, 0));
    assert_eq!(c.to_move(), Some(Side::Black));
    assert_eq!(c.flag_deadline(), Some(Millis(MIN + 5 * MIN)));
}

#[test]
fn stop_freezes_the_clock() {
    let mut t = FakeTime(0);
    let mut c = clock("5m+2s");
    c.start(t.now()).unwrap();
    play(&mut c, &mut t, 10 * S);
    t.advance(20 * S);
    c.stop(t.now()).unwrap();
    assert_eq!(c.flag_deadline(), None);
    let v = c.view(Millis(t.0 + 10 * MIN));
    assert_eq!(v.black.remaining_ms, 5 * MIN - 20 * S);
    assert_eq!(v.red.remaining_ms, 5 * MIN - 8 * S);
    assert_eq!(c.stop(t.now()), Err(ClockError::GameOver));
    assert_eq!(
        c.on_move(t.now(), None, Duration::ZERO),
        Err(ClockError::GameOver)
    );
}

// ---- lag compensation ----

fn lag_clock(spec: &str) -> Clock {
    Clock::new(spec.parse().unwrap(), LagConfig::default())
}

#[test]
fn flag_falls_after_the_lag_grace() {
    let mut c = lag_clock("90m+30s"); // max gain 1 s, quota 3 s → grace min(3 s, 2 s) = 2 s
    c.start(Millis(0)).unwrap();
    assert_eq!(c.flag_deadline(), Some(Millis(90 * MIN + 2 * S)));
    let mut small = lag_clock("1m"); // gain 390 ms, quota 1170 ms → grace 1170 ms
    small.start(Millis(0)).unwrap();
    assert_eq!(small.flag_deadline(), Some(Millis(MIN + 1170)));
    assert_eq!(small.check_flag(Millis(MIN + 1169)), None);
    assert!(small.check_flag(Millis(MIN + 1170)).is_some());
}

#[test]
fn honest_lag_is_compensated_up_to_the_quota() {
    let mut c = lag_clock("90m+30s");
    c.start(Millis(0)).unwrap();
    // Server saw 10.4 s; the client thought for 10 s: 400 ms of lag, all compensated.
    let r = c
        .on_move(Millis(10_400), Some(ms(10_000)), ms(300))
        .unwrap();
    assert_eq!((r.lag_ms, r.compensation_ms, r.used_ms), (400, 400, 10_000));
    // Quota 3000 − 400 + min(1000, 300 + 140) = 3040.
    assert_eq!((r.quota_before_ms, r.quota_after_ms), (3000, 3040));
    // A huge lag spike is compensated only up to the quota.
    let r = c
        .on_move(Millis(10_400 + 9000), Some(ms(1000)), ms(300))
        .unwrap();
    assert_eq!((r.lag_ms, r.compensation_ms), (8000, 3000));
    assert_eq!(r.quota_after_ms, 440);
    assert_eq!(c.side_state(Side::Black).compensation_ms, 3000);
}

#[test]
fn compensation_can_save_a_move_within_the_grace() {
    let mut c = lag_clock("1m");
    c.start(Millis(0)).unwrap();
    // Arrives 500 ms after zero; the client thought 59.9 s: 600 ms lag ≤ quota 1170 → in time.
    let r = c
        .on_move(Millis(MIN + 500), Some(ms(MIN - 100)), ms(100))
        .unwrap();
    assert_eq!(r.flag, None);
    assert_eq!(r.used_ms, MIN - 100);
    // Without a think-time report there is no compensation: too late.
    let mut c = lag_clock("1m");
    c.start(Millis(0)).unwrap();
    assert!(
        c.on_move(Millis(MIN + 500), None, ms(100))
            .unwrap()
            .is_flagged()
    );
}

#[test]
fn lying_client_gains_nothing_beyond_the_measured_lag_cap() {
    // lichess #10300: a client reports zero think time on every move. The server measures a
    // 50 ms round trip. It can get back at most the starting quota plus (50 + 140) ms a move.
    let mut liar = lag_clock("90m+30s");
    liar.start(Millis(0)).unwrap();
    let mut now = 0;
    let mut total = 0;
    for i in 0..60 {
        now += 5 * S;
        let r = liar
            .on_move(Millis(now), Some(Duration::ZERO), ms(50))
            .unwrap();
        assert!(r.compensation_ms <= r.quota_before_ms);
        if r.side == Side::Red {
            total += r.compensation_ms;
        }
        if i == 0 {
            assert_eq!(r.compensation_ms, 3000); // the starting quota, once
        }
    }
    assert_eq!(total, 3000 + 29 * 190);
    assert_eq!(liar.side_state(Side::Red).compensation_ms, total);
}

// ---- snapshots ----

#[test]
fn restore_after_an_outage_charges_nobody() {
    let mut t = FakeTime(0);
    let mut c = clock("30m|3x30s");
    c.start(t.now()).unwrap();
    play(&mut c, &mut t, 20 * S); // Red
    t.advance(10 * S); // Black is 10 s into its turn when the server snapshots...
    let snap = c.snapshot(t.now());
    assert_eq!(
        snap.phase,
        SnapshotPhase::Running {
            side: Side::Black,
            turn_elapsed_ms: 10 * S,
            starts_in_ms: 0
        }
    );
    assert_eq!(snap.red.remaining_ms, 30 * MIN - 20 * S);
    // ...and the new process, on a new time line, restores it an hour later (its `now` is 5 s).
    let mut r = Clock::restore(&snap, Millis(5 * S)).unwrap();
    assert_eq!(r.to_move(), Some(Side::Black));
    assert_eq!(
        r.flag_deadline(),
        Some(Millis(5 * S + 30 * MIN + 90 * S - 10 * S))
    );
    let v = r.view(Millis(5 * S));
    assert_eq!(v.black.remaining_ms, 30 * MIN - 10 * S);
    assert_eq!(v.black.periods_left, 3);
    let rep = r.on_move(Millis(8 * S), None, Duration::ZERO).unwrap();
    assert_eq!(rep.elapsed_ms, 13 * S);
    assert_eq!(snap.view().unwrap().black.remaining_ms, 30 * MIN - 10 * S);
}

#[test]
fn restore_keeps_pauses_flags_and_scheduled_starts() {
    let mut c = clock("5m");
    c.start_at(Millis(MIN)).unwrap();
    let snap = c.snapshot(Millis(20 * S));
    assert_eq!(
        snap.phase,
        SnapshotPhase::Running {
            side: Side::Red,
            turn_elapsed_ms: 0,
            starts_in_ms: 40 * S
        }
    );
    let r = Clock::restore(&snap, Millis(0)).unwrap();
    assert_eq!(r.flag_deadline(), Some(Millis(40 * S + 5 * MIN)));

    let mut c = clock("5m");
    c.start(Millis(0)).unwrap();
    c.pause(Millis(7 * S)).unwrap();
    let r = Clock::restore(&c.snapshot(Millis(9 * S)), Millis(100)).unwrap();
    assert!(r.is_paused());
    assert_eq!(r.turn_elapsed(Millis(100)), Some((Side::Red, ms(7 * S))));

    let mut c = clock("5m");
    c.start(Millis(0)).unwrap();
    let flag = c.check_flag(Millis(5 * MIN)).unwrap();
    let r = Clock::restore(&c.snapshot(Millis(5 * MIN)), Millis(0)).unwrap();
    assert_eq!(r.flag(), Some(flag));
}

#[test]
fn a_snapshot_taken_after_time_ran_out_flags_on_restore() {
    let mut c = clock("1m");
    c.start(Millis(0)).unwrap();
    let snap = c.snapshot(Millis(2 * MIN)); // the server missed its timer, then crashed
    let mut r = Clock::restore(&snap, Millis(0)).unwrap();
    assert_eq!(r.flag_deadline(), Some(Millis(0)));
    assert!(r.check_flag(Millis(0)).is_some());
}

#[test]
fn corrupt_snapshots_are_refused() {
    let c = clock("40/90m,10/15m");
    let good = c.snapshot(Millis(0));
    let mut bad = good.clone();
    bad.red.stage = 2;
    assert!(matches!(
        Clock::restore(&bad, Millis(0)),
        Err(RestoreError::NoSuchStage { .. })
    ));
    let mut bad = good.clone();
    bad.black.moves_in_stage = 40;
    assert_eq!(
        Clock::restore(&bad, Millis(0)),
        Err(RestoreError::StageOverrun {
            side: Side::Black,
            made: 40,
            required: 40
        })
    );
    let mut bad = good.clone();
    bad.red.periods_left = 1;
    assert!(matches!(
        Clock::restore(&bad, Millis(0)),
        Err(RestoreError::TooManyPeriods { .. })
    ));
    let mut bad = good.clone();
    bad.red.lag_quota_ms = 1;
    assert!(matches!(
        Clock::restore(&bad, Millis(0)),
        Err(RestoreError::QuotaAboveCap { .. })
    ));
    let mut bad = good.clone();
    bad.red.moves = 3;
    assert!(matches!(
        Clock::restore(&bad, Millis(0)),
        Err(RestoreError::Phase(_))
    ));
    let mut bad = good;
    bad.phase = SnapshotPhase::Running {
        side: Side::Red,
        turn_elapsed_ms: 1,
        starts_in_ms: 1,
    };
    assert!(matches!(
        Clock::restore(&bad, Millis(0)),
        Err(RestoreError::Phase(_))
    ));
}

#[test]
fn early_move_before_a_scheduled_start_does_not_start_the_opponent_early() {
    let mut c = clock("5m");
    c.start_at(Millis(MIN)).unwrap();
    let r = c.on_move(Millis(10 * S), None, Duration::ZERO).unwrap();
    assert_eq!(r.used_ms, 0);
    assert_eq!(c.flag_deadline(), Some(Millis(MIN + 5 * MIN)));
    assert_eq!(c.pause(Millis(20 * S)), Err(ClockError::NotRunning));
}

#[test]
fn error_codes_are_stable() {
    assert_eq!(ClockError::Paused.code(), "clock_paused");
    assert_eq!(ClockError::GameOver.code(), "clock_game_over");
    let f = Flag {
        side: Side::Black,
        reason: FlagReason::Time,
    };
    assert_eq!(ClockError::Flagged(f).code(), "clock_flagged");
    assert_eq!(ClockError::Flagged(f).to_string(), "black ran out of time");
}
