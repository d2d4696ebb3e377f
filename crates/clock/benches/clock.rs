//! Cost of the clock operations a game server performs per move, and of parsing a control.
#![allow(clippy::unwrap_used, unused_must_use)]

use chuhe_clock::{Clock, LagConfig, Millis, TimeControl};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let tc: TimeControl = "40/90m,10/15m+30s".parse().unwrap();
    c.bench_function("100 moves (on_move + flag_deadline)", |b| {
        b.iter(|| {
            let mut clock = Clock::symmetric(tc.clone(), LagConfig::default());
            clock.start(Millis(0)).unwrap();
            let mut now = 0;
            let mut deadlines = 0;
            for _ in 0..100 {
                now += 20_000;
                let r = clock
                    .on_move(
                        Millis(now),
                        Some(Duration::from_millis(19_900)),
                        Duration::from_millis(60),
                    )
                    .unwrap();
                assert!(r.flag.is_none());
                deadlines += clock.flag_deadline().unwrap().as_ms() & 1;
            }
            black_box(deadlines)
        })
    });
    let mut clock = Clock::symmetric(tc.clone(), LagConfig::default());
    clock.start(Millis(0)).unwrap();
    c.bench_function("snapshot + restore", |b| {
        b.iter(|| {
            let snap = clock.snapshot(Millis(5_000));
            black_box(Clock::restore(&snap, Millis(10)).unwrap())
        })
    });
    c.bench_function("parse + print a control", |b| {
        b.iter(|| {
            let tc: TimeControl = black_box("40/90m,10/15m+30s").parse().unwrap();
            assert_eq!(tc.to_string().len(), 17);
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
