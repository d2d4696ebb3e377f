//! `chuhe records import` through the built binary: check, convert PGN ⇄ XQF ⇄ DhtmlXQ, and
//! the first bad move named with nothing written.
#![allow(clippy::unwrap_used)]

use std::process::Command;

fn chuhe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_chuhe"))
}

const PGN: &str = "[Game \"Chinese Chess\"]\n[Red \"许银川\"]\n[Black \"吕钦\"]\n[Result \"1-0\"]\n[Format \"Chinese\"]\n\n1. 炮二平五 马８进７\n2. 马二进三 车９平８\n1-0\n";

fn dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("chuhe-records-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn import_checks_and_converts() {
    let d = dir();
    let pgn = d.join("a.pgn");
    std::fs::write(&pgn, PGN).unwrap();
    let out = chuhe()
        .args(["records", "import"])
        .arg(&pgn)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["moves"],
        serde_json::json!(["h2e2", "h9g7", "h0g2", "i9h9"])
    );
    assert_eq!(v["result"], "1-0");
    // PGN → XQF → WXF PGN and DhtmlXQ.
    let xqf = d.join("a.xqf");
    let out = chuhe()
        .args(["records", "import"])
        .arg(&pgn)
        .args(["--to", "xqf", "-o"])
        .arg(&xqf)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read(&xqf).unwrap().starts_with(b"XQ"));
    let out = chuhe()
        .args(["records", "import"])
        .arg(&xqf)
        .args(["--to", "pgn-wxf"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("[Red \"许银川\"]"), "{text}");
    assert!(text.contains("1. C2=5 H8+7\n2. H2+3 R9=8\n1-0"), "{text}");
    let out = chuhe()
        .args(["records", "import"])
        .arg(&xqf)
        .args(["--to", "dhtmlxq"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("[DhtmlXQ_movelist]7747706279678070[/DhtmlXQ_movelist]"),
        "{text}"
    );
}

#[test]
fn a_bad_move_is_named_and_nothing_is_written() {
    let d = dir();
    let good = d.join("good.pgn");
    let bad = d.join("bad.pgn");
    std::fs::write(&good, PGN).unwrap();
    std::fs::write(&bad, "1. 炮二平五 马８进７\n2. 车一进九 *\n").unwrap();
    let target = d.join("out.pgn");
    let out = chuhe()
        .args(["records", "import"])
        .args([&good, &bad])
        .args(["--to", "pgn", "-o"])
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("bad.pgn: move 2 (red) \"车一进九\" at game 1, line 2, column 4"),
        "{err}"
    );
    assert!(err.contains("(bad_move)"), "{err}");
    assert!(!target.exists());
    let junk = d.join("junk.xqf");
    std::fs::write(&junk, b"XQ\x0a").unwrap();
    let out = chuhe()
        .args(["records", "import"])
        .arg(&junk)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("(truncated)")
    );
}
