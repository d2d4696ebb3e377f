//! perft from the start position, single thread. Each run asserts its node count.
#![allow(clippy::unwrap_used)]

use chuhe_rules::{Position, perft};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

fn bench_perft(c: &mut Criterion) {
    let start = Position::new();
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(12));
    for (depth, nodes) in [(4u32, 3_290_240u64), (5, 133_312_995)] {
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(format!("startpos_{depth}"), |b| {
            b.iter(|| {
                let n = perft(black_box(&start), depth);
                assert_eq!(n, nodes, "perft({depth}) from the start");
                n
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_perft);
criterion_main!(benches);
