//! Property tests: text form round trip, parser robustness, conservation of time, exact flag
//! instants, lag-compensation bounds, and snapshot/restore equivalence.
#![allow(clippy::unwrap_used, unused_must_use)]

use chuhe_clock::*;
use proptest::prelude::*;
use std::time::Duration;

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// Durations mostly in whole seconds (as people write them), sometimes with milliseconds.
fn duration(max_s: u64) -> impl Strategy<Value = Duration> {
    prop_oneof![
        (1..=max_s).prop_map(|s| ms(s * 1000)),
        (1..=max_s * 1000).prop_map(ms),
    ]
}

fn time_control() -> impl Strategy<Value = TimeControl> {
    (
        prop::collection::vec((1u32..50, duration(600)), 0..3),
        prop::option::of(duration(600)),
        prop::option::of(duration(20)),
        prop::option::of((1u32..5, duration(30))),
        any::<bool>(),
    )
        .prop_map(|(counted, last_sd, inc, byo, zero_last)| {
            let mut stages: Vec<Stage> = counted
                .into_iter()
                .map(|(m, t)| Stage {
                    moves: Some(m),
                    time: t,
                })
                .collect();
            let byoyomi = byo.map(|(periods, period)| Byoyomi { periods, period });
            match (last_sd, byoyomi.is_some()) {
                (Some(t), _) => stages.push(Stage {
                    moves: None,
                    time: t,
                }),
                (None, true) => stages.push(Stage {
                    moves: None,
                    time: if zero_last {
                        Duration::ZERO
                    } else {
                        ms(60_000)
                    },
                }),
                (None, false) if stages.is_empty() => stages.push(Stage {
                    moves: None,
                    time: ms(60_000),
                }),
                (None, false) => {}
            }
            if stages.len() == 1 && stages[0].time.is_zero() && byoyomi.is_none() {
                stages[0].time = ms(1000);
            }
            TimeControl::new(stages, inc.unwrap_or(Duration::ZERO), byoyomi).unwrap()
        })
}

#[derive(Clone, Debug)]
enum Op {
    /// Wait `after` ms, then move; the client reports `think` (a fraction of the elapsed time,
    /// in per mille; > 1000 means over-reporting) or nothing; the server measured `rtt`.
    Move {
        after: u64,
        think_permille: Option<u64>,
        rtt: u64,
    },
    /// Wait, then ask whether the flag fell.
    Wait { after: u64 },
    /// Wait, pause, stay paused for `paused`, resume.
    Pause { after: u64, paused: u64 },
    /// Arbiter adds time.
    Add { side: bool, amount: u64 },
    /// Arbiter charges time.
    Charge { side: bool, amount: u64 },
}

fn op() -> impl Strategy<Value = Op> {
    let after = prop_oneof![12 => 0u64..4_000, 3 => 0u64..30_000, 1 => 0u64..400_000];
    prop_oneof![
        6 => (after.clone(), prop::option::of(0u64..1200), 0u64..800)
            .prop_map(|(after, think_permille, rtt)| Op::Move { after, think_permille, rtt }),
        1 => after.clone().prop_map(|after| Op::Wait { after }),
        1 => (after, 0u64..1_000_000).prop_map(|(after, paused)| Op::Pause { after, paused }),
        1 => (any::<bool>(), 0u64..120_000).prop_map(|(side, amount)| Op::Add { side, amount }),
        1 => (any::<bool>(), 0u64..60_000).prop_map(|(side, amount)| Op::Charge { side, amount }),
    ]
}

fn side(red: bool) -> Side {
    if red { Side::Red } else { Side::Black }
}

/// Applies ops to a clock at times offset by `offset`, returning a log of observable results.
fn apply(c: &mut Clock, now: &mut u64, offset: u64, op: &Op) -> String {
    let t = |n: u64| Millis(n + offset);
    match *op {
        Op::Move {
            after,
            think_permille,
            rtt,
        } => {
            *now += after;
            let think = think_permille.map(|p| ms(after * p / 1000));
            format!("{:?}", c.on_move(t(*now), think, ms(rtt)))
        }
        Op::Wait { after } => {
            *now += after;
            format!("{:?}", c.check_flag(t(*now)))
        }
        Op::Pause { after, paused } => {
            *now += after;
            let p = c.pause(t(*now));
            *now += paused;
            let r = c.resume(t(*now));
            format!("{p:?}{r:?}")
        }
        Op::Add { side: s, amount } => format!("{:?}", c.add_time(side(s), ms(amount), t(*now))),
        Op::Charge { side: s, amount } => {
            format!("{:?}", c.charge_time(side(s), ms(amount), t(*now)))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn text_form_round_trips(tc in time_control()) {
        let text = tc.to_string();
        let back: TimeControl = text.parse().unwrap();
        prop_assert_eq!(&back, &tc, "{}", text);
        prop_assert_eq!(back.to_string(), text);
    }

    #[test]
    fn per_side_text_form_round_trips(red in time_control(), black in time_control()) {
        let c = Controls { red, black };
        let text = c.to_string();
        prop_assert_eq!(text.parse::<Controls>().unwrap(), c);
    }

    #[test]
    fn parser_never_panics(s in "[0-9hmsx/,+|:; redblackzq]{0,24}") {
        let _ = s.parse::<Controls>();
        if let Ok(tc) = s.parse::<TimeControl>() {
            prop_assert_eq!(tc.to_string().parse::<TimeControl>().unwrap(), tc);
        }
    }

    /// For any sequence of moves, pauses and arbiter actions:
    /// * each move's elapsed time is exactly the time the mover's clock ran (pauses excluded),
    ///   and elapsed + charges = used + compensation;
    /// * per side, base + increments/stage times + arbiter additions
    ///   = remaining + (elapsed − compensation) + settled charges (without byo-yomi; with it,
    ///   the periods make up the difference, so "≥"), and byo-yomi periods never grow;
    /// * main time never grows except by increment, stage reset or arbiter addition (and the live
    ///   display only by those, a byo-yomi period reset, or the lag refunded at a move);
    /// * compensation never exceeds the quota, the quota never exceeds its cap, and the total
    ///   compensation never exceeds the starting quota plus the per-move gains
    ///   (each ≤ measured lag + CPU allowance);
    /// * while running, the flag deadline is exactly now + time left + min(quota, 2 s).
    #[test]
    fn time_is_conserved(
        red in time_control(),
        black in time_control(),
        lag_on in any::<bool>(),
        scheduled in 0u64..5_000,
        ops in prop::collection::vec(op(), 0..100),
    ) {
        let controls = Controls { red, black };
        let cfg = if lag_on { LagConfig::default() } else { LagConfig::disabled() };
        let mut c = Clock::new(controls.clone(), cfg);
        c.start_at(Millis(scheduled)).unwrap();
        let mut now = 0u64;
        // Model: wall time per side, running since / paused.
        let mut wall = [0u64; 2];
        let mut gains_bound = [0u64; 2];
        let initial_quota = [c.side_state(Side::Red).lag_quota_ms, c.side_state(Side::Black).lag_quota_ms];
        for op in &ops {
            let before = [*c.side_state(Side::Red), *c.side_state(Side::Black)];
            let mover = c.to_move();
            let view_before = c.view(Millis(now));
            let t0 = now;
            let result = apply(&mut c, &mut now, 0, op);
            // Wall time the running side's clock ran during this op; a successful pause stops it.
            // No clock runs before the scheduled start.
            let eff = |a: u64, b: u64| b.saturating_sub(a.max(scheduled));
            let ran = match *op {
                Op::Move { after, .. } | Op::Wait { after } => eff(t0, t0 + after),
                Op::Pause { after, paused } => {
                    let mut r = eff(t0, t0 + after);
                    if !result.starts_with("Ok") {
                        r += eff(t0 + after, t0 + after + paused);
                    }
                    r
                }
                _ => 0,
            };
            if let Some(m) = mover {
                wall[m as usize] += ran;
            }
            if let Op::Move { rtt, .. } = op {
                if let (Some(m), true) = (mover, lag_on) {
                    if c.side_state(m).moves > before[m as usize].moves {
                        gains_bound[m as usize] += rtt + cfg.cpu_allowance_ms;
                    }
                }
            }
            for s in Side::ALL {
                let i = s as usize;
                let st = *c.side_state(s);
                let tc = controls.side(s);
                if c.flag().is_some_and(|f| f.side == s) {
                    continue;
                }
                // Elapsed on completed moves + current turn equals the modelled wall time.
                prop_assert_eq!(c.time_on_clock(s, Millis(now)).as_millis() as u64, wall[i]);
                // Conservation.
                let income = tc.base().as_millis() as u64 + st.earned_ms + st.added_ms;
                let spent = st.remaining_ms + st.elapsed_ms - st.compensation_ms
                    + (st.charged_ms - st.pending_charge_ms);
                if tc.byoyomi_periods().is_none() {
                    prop_assert_eq!(income, spent);
                } else {
                    prop_assert!(spent >= income);
                }
                prop_assert!(st.periods_left <= before[i].periods_left);
                // Main time grows only by increment / stage time / arbiter addition.
                let grew_by = (st.earned_ms - before[i].earned_ms) + (st.added_ms - before[i].added_ms);
                prop_assert!(st.remaining_ms <= before[i].remaining_ms + grew_by);
                // Lag bounds.
                prop_assert!(st.lag_quota_ms <= cfg.quota_cap(tc).as_millis() as u64);
                prop_assert!(st.compensation_ms <= initial_quota[i] + gains_bound[i]);
                if !lag_on {
                    prop_assert_eq!(st.compensation_ms, 0);
                }
                // The displayed time left never grows except by play income or arbiter action.
                let v_before = match s { Side::Red => view_before.red, Side::Black => view_before.black };
                let v_after = match s { Side::Red => c.view(Millis(now)).red, Side::Black => c.view(Millis(now)).black };
                let byo = tc.byoyomi_periods().map_or(0, |b| b.period.as_millis() as u64);
                // A period reset restores one period; reaching the last stage opens them all.
                let period_reset = if st.stage != before[i].stage {
                    byo * u64::from(tc.byoyomi_periods().map_or(0, |b| b.periods))
                } else {
                    byo
                };
                // (Live views count a turn's lag as used until the move; compensation refunds it.)
                let refund = st.compensation_ms - before[i].compensation_ms;
                prop_assert!(v_after.time_left_ms <= v_before.time_left_ms + grew_by + period_reset + refund);
            }
            if let Some(deadline) = c.flag_deadline() {
                let s = c.to_move().unwrap();
                let v = c.view(Millis(now));
                let sv = match s { Side::Red => v.red, Side::Black => v.black };
                let grace = if lag_on { c.side_state(s).lag_quota_ms.min(cfg.max_flag_grace_ms) } else { 0 };
                if now >= scheduled && now < deadline.0 {
                    if sv.time_left_ms > 0 {
                        prop_assert_eq!(deadline.0, now + sv.time_left_ms + grace);
                    } else {
                        // Within the grace: the display shows zero, the flag is yet to fall.
                        prop_assert!(deadline.0 - grace <= now);
                    }
                }
            }
            if c.flag().is_some() {
                break;
            }
        }
    }

    /// A move report is internally consistent and compensation never exceeds the quota.
    #[test]
    fn move_reports_are_consistent(
        tc in time_control(),
        ops in prop::collection::vec(op(), 0..40),
    ) {
        let mut c = Clock::symmetric(tc, LagConfig::default());
        c.start(Millis(0)).unwrap();
        let mut now = 0;
        for op in &ops {
            if let Op::Move { after, think_permille, rtt } = *op {
                now += after;
                let Ok(r) = c.on_move(Millis(now), think_permille.map(|p| ms(after * p / 1000)), ms(rtt)) else { break };
                prop_assert!(r.compensation_ms <= r.quota_before_ms);
                prop_assert!(r.compensation_ms <= r.lag_ms);
                prop_assert!(r.lag_ms <= r.elapsed_ms);
                prop_assert_eq!(r.used_ms + r.compensation_ms, r.elapsed_ms + r.charged_ms);
                if r.flag.is_none() {
                    prop_assert!(r.quota_after_ms <= r.quota_before_ms - r.compensation_ms + 1000);
                } else {
                    break;
                }
            } else {
                apply(&mut c, &mut now, 0, op);
            }
        }
    }

    /// Whatever a client reports as think time, over a game it gets back at most the starting
    /// quota plus, per move, the server-measured lag + CPU allowance (lichess #10300).
    #[test]
    fn lying_gains_nothing_beyond_the_cap(
        tc in time_control(),
        moves in prop::collection::vec((0u64..30_000, 0u64..400), 1..80),
    ) {
        let cfg = LagConfig::default();
        let run = |liar: bool| {
            let mut c = Clock::symmetric(tc.clone(), cfg);
            c.start(Millis(0)).unwrap();
            let mut now = 0;
            let mut bound = c.side_state(Side::Red).lag_quota_ms;
            let mut total = 0;
            for (i, &(after, rtt)) in moves.iter().enumerate() {
                now += after;
                // Honest clients report the true think time: elapsed minus the true lag (rtt).
                let think = if liar { Duration::ZERO } else { ms(after.saturating_sub(rtt)) };
                let Ok(r) = c.on_move(Millis(now), Some(think), ms(rtt)) else { break };
                if r.flag.is_some() { break; }
                if i % 2 == 0 {
                    total += r.compensation_ms;
                    bound += rtt + cfg.cpu_allowance_ms;
                }
            }
            (total, bound)
        };
        let (lied, bound) = run(true);
        let (honest, _) = run(false);
        prop_assert!(lied <= bound);
        prop_assert!(honest <= bound);
    }

    /// Restoring a snapshot at any instant (even on a new time line, after an outage) gives a
    /// clock that behaves exactly like the original would have without the outage.
    #[test]
    fn restore_resumes_exactly(
        red in time_control(),
        black in time_control(),
        lag_on in any::<bool>(),
        ops in prop::collection::vec(op(), 1..40),
        cut in 0usize..40,
        new_epoch in 0u64..10_000_000,
    ) {
        let cfg = if lag_on { LagConfig::default() } else { LagConfig::disabled() };
        let mut a = Clock::new(Controls { red, black }, cfg);
        a.start(Millis(0)).unwrap();
        let cut = cut.min(ops.len());
        let mut now = 0;
        for op in &ops[..cut] {
            apply(&mut a, &mut now, 0, op);
        }
        let snap = a.snapshot(Millis(now));
        let mut b = Clock::restore(&snap, Millis(new_epoch)).unwrap();
        let view_a = a.view(Millis(now));
        let view_b = b.view(Millis(new_epoch));
        prop_assert_eq!(ClockView { at: Millis(0), ..view_a }, ClockView { at: Millis(0), ..view_b });
        prop_assert_eq!(snap.view().unwrap(), view_a);
        // Drive both on: B on its own time line starting at new_epoch.
        let mut now_b = 0;
        let base = now;
        for op in &ops[cut..] {
            let ra = apply(&mut a, &mut now, 0, op);
            let rb = apply(&mut b, &mut now_b, new_epoch, op);
            prop_assert_eq!(ra, rb);
            prop_assert_eq!(now - base, now_b);
        }
        prop_assert_eq!(a.side_state(Side::Red), b.side_state(Side::Red));
        prop_assert_eq!(a.side_state(Side::Black), b.side_state(Side::Black));
    }
}
