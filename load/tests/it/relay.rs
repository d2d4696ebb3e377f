//! The bare relay's contract, driven by plain websocket clients on 127.0.0.1.

use std::sync::Arc;
use std::time::Duration;

use chuhe_load::relay::{self, Control, RelayConfig, RelayStats};
use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::{Bytes, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type TestResult = Result<(), Box<dyn std::error::Error>>;
type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Longest wait for one frame; a test never waits longer for anything.
const WAIT: Duration = Duration::from_secs(10);

struct Relay {
    url: String,
    stats: Arc<RelayStats>,
    _stop: oneshot::Sender<()>,
}

async fn start(cfg: RelayConfig) -> Result<Relay, std::io::Error> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("ws://{}", listener.local_addr()?);
    let stats = Arc::new(RelayStats::default());
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(relay::serve(
        listener,
        async move {
            let _ = stopped.await;
        },
        cfg,
        Arc::clone(&stats),
    ));
    Ok(Relay {
        url,
        stats,
        _stop: stop,
    })
}

async fn connect(r: &Relay, path: &str) -> Result<Ws, Box<dyn std::error::Error>> {
    let (ws, _) = tokio_tungstenite::connect_async(format!("{}{path}", r.url)).await?;
    Ok(ws)
}

async fn next(ws: &mut Ws) -> Result<Message, Box<dyn std::error::Error>> {
    loop {
        match tokio::time::timeout(WAIT, ws.next()).await? {
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(m) => return Ok(m?),
            None => return Err("connection ended".into()),
        }
    }
}

async fn control(ws: &mut Ws) -> Result<Control, Box<dyn std::error::Error>> {
    match next(ws).await? {
        Message::Text(t) => Ok(serde_json::from_str(t.as_str())?),
        other => Err(format!("expected a control frame, got {other:?}").into()),
    }
}

fn joined(role: &str, players: &[&str]) -> Control {
    Control::Joined {
        role: role.into(),
        players: players.iter().map(|p| (*p).to_owned()).collect(),
    }
}

#[tokio::test]
async fn bad_paths_are_refused_before_the_upgrade() -> TestResult {
    let r = start(RelayConfig::default()).await?;
    for path in ["/", "/relay/g", "/relay/g/king", "/relay/a%20b/red", "/ws"] {
        let err = tokio_tungstenite::connect_async(format!("{}{path}", r.url))
            .await
            .err()
            .ok_or(format!("{path} was accepted"))?;
        match err {
            tokio_tungstenite::tungstenite::Error::Http(resp) => {
                assert_eq!(resp.status(), 400, "{path}");
            }
            other => return Err(format!("{path}: {other}").into()),
        }
    }
    assert_eq!(r.stats.snapshot().refused, 5);
    assert_eq!(r.stats.snapshot().connections, 0);
    Ok(())
}

#[tokio::test]
async fn frames_reach_everyone_unchanged() -> TestResult {
    let r = start(RelayConfig::default()).await?;
    let mut red = connect(&r, "/relay/g1/red").await?;
    assert_eq!(control(&mut red).await?, joined("red", &["red"]));
    let mut black = connect(&r, "/relay/g1/black").await?;
    assert_eq!(
        control(&mut black).await?,
        joined("black", &["red", "black"])
    );
    assert_eq!(
        control(&mut red).await?,
        Control::Peer {
            role: "black".into()
        }
    );
    let mut spectator = connect(&r, "/relay/g1/spectator").await?;
    assert_eq!(
        control(&mut spectator).await?,
        joined("spectator", &["red", "black"])
    );
    // Another game's spectator must see nothing of g1.
    let mut other = connect(&r, "/relay/g2/spectator").await?;
    assert_eq!(control(&mut other).await?, joined("spectator", &[]));

    let payload = Message::Binary(Bytes::from_static(&[0, 255, 1, 2, 3, 0]));
    red.send(payload.clone()).await?;
    assert_eq!(next(&mut red).await?, payload, "echo to the sender");
    assert_eq!(next(&mut black).await?, payload);
    assert_eq!(next(&mut spectator).await?, payload);
    let text = Message::text("{\"anything\": true}");
    black.send(text.clone()).await?;
    assert_eq!(next(&mut red).await?, text);
    assert_eq!(next(&mut black).await?, text);
    assert_eq!(next(&mut spectator).await?, text);
    // A spectator's frame is forwarded too (the relay reads nothing).
    let s = Message::Binary(Bytes::from_static(b"watching"));
    spectator.send(s.clone()).await?;
    assert_eq!(next(&mut red).await?, s);

    // g2 got nothing: its next frame is the one sent there now.
    let mine = Message::Binary(Bytes::from_static(b"g2"));
    other.send(mine.clone()).await?;
    assert_eq!(next(&mut other).await?, mine);
    let st = r.stats.snapshot();
    assert_eq!(st.frames_in, 4);
    assert_eq!(st.open, 4);
    Ok(())
}

#[tokio::test]
async fn a_reconnecting_player_takes_over_its_seat() -> TestResult {
    let r = start(RelayConfig::default()).await?;
    let mut red = connect(&r, "/relay/g/red").await?;
    control(&mut red).await?;
    let mut black = connect(&r, "/relay/g/black").await?;
    control(&mut black).await?;
    control(&mut red).await?; // peer black
    let mut black2 = connect(&r, "/relay/g/black").await?;
    assert_eq!(
        control(&mut black2).await?,
        joined("black", &["red", "black"])
    );
    assert_eq!(
        control(&mut red).await?,
        Control::Peer {
            role: "black".into()
        }
    );
    // The replaced connection is closed by the relay.
    match next(&mut black).await {
        Ok(Message::Close(Some(f))) => assert_eq!(u16::from(f.code), 1008),
        other => return Err(format!("old seat not closed: {other:?}").into()),
    }
    let m = Message::Binary(Bytes::from_static(b"m"));
    red.send(m.clone()).await?;
    assert_eq!(next(&mut black2).await?, m);
    Ok(())
}

#[tokio::test]
async fn a_spectator_that_does_not_read_is_dropped_not_buffered() -> TestResult {
    let r = start(RelayConfig {
        queue: 4,
        max_message: 64 * 1024,
    })
    .await?;
    let mut red = connect(&r, "/relay/slow/red").await?;
    control(&mut red).await?;
    let mut sleeper = connect(&r, "/relay/slow/spectator").await?;
    control(&mut sleeper).await?;
    // The sleeper never reads: once the kernel's socket buffers and its 4-frame queue are full,
    // the relay must drop it. 64 KiB frames fill loopback buffers within a few hundred frames;
    // the loop is bounded and red reads its echo so red itself is never the slow one.
    let big = Message::Binary(Bytes::from(vec![7u8; 60 * 1024]));
    let mut sent = 0;
    while r.stats.snapshot().slow_dropped == 0 {
        assert!(sent < 2_000, "no drop after {sent} frames");
        red.send(big.clone()).await?;
        assert_eq!(next(&mut red).await?, big);
        sent += 1;
    }
    assert_eq!(r.stats.snapshot().slow_dropped, 1);
    // Red still plays on.
    let m = Message::Binary(Bytes::from_static(b"after"));
    red.send(m.clone()).await?;
    assert_eq!(next(&mut red).await?, m);
    drop(sleeper);
    Ok(())
}
