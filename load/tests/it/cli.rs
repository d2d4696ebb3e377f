//! The `chuhe-load` binary end to end: a scenario that starts its own relay child process and
//! prints JSON, the corpus command, and refusals with exit status 1. Every run is capped by
//! `--max-duration`; all traffic is on 127.0.0.1.

use std::process::{Command, Output};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn load(args: &[&str]) -> std::io::Result<Output> {
    Command::new(env!("CARGO_BIN_EXE_chuhe-load"))
        .args(args)
        .env_remove("CHUHE_LOAD_TARGET")
        .env_remove("CHUHE_LOAD_RELAY_URL")
        .output()
}

#[test]
fn games_against_a_relay_it_starts_itself() -> TestResult {
    let dir = tempfile::tempdir()?;
    let probe_dir = dir.path().display().to_string();
    let out = load(&[
        "games",
        "--disk-probe",
        &probe_dir,
        "--disk-probe-every",
        "1ms",
        "--games",
        "3",
        "--spectators",
        "1",
        "--plies",
        "10",
        "--corpus-games",
        "2",
        "--max-duration",
        "60s",
        "--progress",
        "0",
        "--json",
        "-",
    ])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(report["target"], "relay");
    assert_eq!(report["scenario"]["scenario"], "games");
    assert_eq!(report["counts"]["moves_acked"], 30);
    assert_eq!(report["counts"]["deliveries"], 60);
    assert_eq!(report["counts"]["missing"], 0);
    // The relay child was sampled as the server.
    assert!(report["server"]["pid"].as_u64().is_some_and(|p| p > 0));
    assert!(report["latency"]["move_ack"]["p99_ms"].as_f64().is_some());
    // The disk was probed beside the run, and the probe's file is gone.
    assert!(
        report["disk_flush"]["flush"]["count"]
            .as_u64()
            .is_some_and(|n| n >= 1)
    );
    assert_eq!(report["disk_flush"]["dir"], probe_dir.as_str());
    // Every move sample is either outside the disk's stalls or counted as overlapping one.
    let o = &report["disk_flush"]["outside_stalls"];
    let acks = report["latency"]["move_ack"]["count"].as_u64();
    let split = o["move_ack"]["count"]
        .as_u64()
        .zip(o["move_ack_overlapping"].as_u64())
        .map(|(a, b)| a + b);
    assert!(acks.is_some_and(|n| n > 0) && split == acks, "{o}");
    assert_eq!(o["not_kept"], 0);
    assert_eq!(std::fs::read_dir(dir.path())?.count(), 0);
    Ok(())
}

#[test]
fn corpus_prints_legal_games_with_a_source_line() -> TestResult {
    let out = load(&["corpus", "--games", "3", "--plies", "12", "--seed", "4"])?;
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout)?;
    assert!(text.starts_with("# Source: chuhe-load corpus --games 3 --plies 12 --seed 4\n"));
    let games: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(games.len(), 3);
    let src = chuhe_load::moves::MoveSource::parse_corpus(&text, 12)?;
    assert_eq!(src.len(), 3);
    Ok(())
}

#[test]
fn refusals_exit_with_status_1_and_say_why() -> TestResult {
    for (args, why) in [
        (
            &["games", "--relay-url", "ws://10.0.0.1:9001"][..],
            "not a loopback address",
        ),
        (&["games", "--target", "chuhe"][..], "--chuhe-url"),
        (
            &[
                "games",
                "--target",
                "chuhe",
                "--chuhe-url",
                "ws://127.0.0.1:1/ws",
            ][..],
            "--organizer-token",
        ),
        (&["relay", "--listen", "0.0.0.0:0"][..], "loopback only"),
        (&["games", "--games", "0"][..], "at least one game"),
        (&["games", "--think", "soon"][..], "bad duration"),
        (
            &["games", "--disk-probe", "/nonexistent/dir"][..],
            "disk probe in /nonexistent/dir: creating the probe file",
        ),
        (
            &["games", "--disk-probe", "/tmp", "--disk-probe-every", "0"][..],
            "--disk-probe-every must be at least 1ms",
        ),
    ] {
        let out = load(args)?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    }
    Ok(())
}
