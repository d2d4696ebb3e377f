//! The server under test: the bare relay or chuhe. A target knows its address, its framing layer
//! and how to make games the simulated clients can join.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio_tungstenite::tungstenite::http::Uri;

use chuhe_proto::Encoding;

use crate::chuhe::{ChuheProtocol, Organizer};
use crate::driver::{GameSpec, Protocol, RelayProtocol};
use crate::moves::MoveSource;
use crate::net::{AddrError, ensure_loopback};

/// Which server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    /// The bare websocket relay (`chuhe-load relay`).
    Relay,
    /// A chuhe game server.
    Chuhe,
}

/// Why a target cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("bad target url {url:?}: {reason}")]
    Url { url: String, reason: String },
    #[error(transparent)]
    Addr(#[from] AddrError),
    #[error("{0}")]
    Unsupported(String),
    #[error("setting up games on the target failed: {0}")]
    Setup(String),
}

impl TargetError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Url { .. } | Self::Addr(_) => "target_url",
            Self::Unsupported(_) => "target_unsupported",
            Self::Setup(_) => "target_setup",
        }
    }
}

/// Host and port of a `ws://` URL, which must be on this machine.
pub fn loopback_addr(url: &str) -> Result<SocketAddr, TargetError> {
    let bad = |reason: &str| TargetError::Url {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    let uri: Uri = url.parse().map_err(|_| bad("not a URL"))?;
    if uri.scheme_str() != Some("ws") {
        return Err(bad("only ws:// (plain websocket on loopback) is supported"));
    }
    let host = uri.host().ok_or_else(|| bad("no host"))?;
    let port = uri.port_u16().ok_or_else(|| bad("no port"))?;
    let ip: IpAddr = if host == "localhost" {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .map_err(|_| bad("the host must be an IP address or localhost"))?
    };
    ensure_loopback(ip)?;
    Ok(SocketAddr::new(ip, port))
}

/// A server to load.
#[derive(Clone)]
pub struct Target {
    kind: TargetKind,
    url: String,
    addr: SocketAddr,
    /// Every node's endpoint and address (the first is `url`/`addr`); one for the relay.
    nodes: Vec<(String, SocketAddr)>,
    protocol: Arc<dyn Protocol>,
    /// Distinguishes the games of this run from other runs' on the same server.
    run_id: String,
    chuhe: Option<Arc<ChuheSetup>>,
}

/// How games are made on a chuhe server.
#[derive(Clone, Debug)]
pub struct ChuheSetup {
    /// An organizer's bearer token (`chuhe admin` issues one).
    pub organizer_token: String,
    /// Time control of the games, e.g. `3h` (long enough that no flag falls during a run).
    pub time_control: String,
    /// Organizer API connections used in parallel while creating games.
    pub setup_concurrency: usize,
}

static RUNS: AtomicU64 = AtomicU64::new(0);

fn run_id() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!(
        "{:x}{:x}{}",
        t,
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    )
}

impl Target {
    /// The bare relay at `url` (`ws://127.0.0.1:PORT`).
    pub fn relay(url: &str) -> Result<Self, TargetError> {
        let addr = loopback_addr(url)?;
        Ok(Self {
            kind: TargetKind::Relay,
            url: url.to_owned(),
            addr,
            nodes: vec![(url.to_owned(), addr)],
            protocol: Arc::new(RelayProtocol::new(url)),
            run_id: run_id(),
            chuhe: None,
        })
    }

    /// A chuhe server whose websocket endpoint is `url` (`ws://127.0.0.1:PORT/ws`); games are
    /// created through its organizer API on the same host and port.
    pub fn chuhe(url: &str, encoding: Encoding, setup: ChuheSetup) -> Result<Self, TargetError> {
        Self::chuhe_nodes(&[url.to_owned()], encoding, setup)
    }

    /// Several nodes of one chuhe cluster (issue 23), given by their websocket endpoints: games
    /// are created through every node's organizer API in turn, and clients spread over the
    /// nodes as [`crate::chuhe::node_for`] says.
    pub fn chuhe_nodes(
        urls: &[String],
        encoding: Encoding,
        setup: ChuheSetup,
    ) -> Result<Self, TargetError> {
        let nodes = urls
            .iter()
            .map(|u| loopback_addr(u).map(|a| (u.clone(), a)))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(&(_, addr)) = nodes.first() else {
            return Err(TargetError::Unsupported(
                "the chuhe target needs at least one url".into(),
            ));
        };
        if setup.organizer_token.is_empty() {
            return Err(TargetError::Unsupported(
                "the chuhe target needs an organizer token to create players and games".into(),
            ));
        }
        Ok(Self {
            kind: TargetKind::Chuhe,
            url: urls.join(","),
            addr,
            nodes,
            protocol: Arc::new(ChuheProtocol::nodes(urls, encoding)),
            run_id: run_id(),
            chuhe: Some(Arc::new(setup)),
        })
    }

    pub fn kind(&self) -> TargetKind {
        self.kind
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every node's address (one for a single server).
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.nodes.iter().map(|(_, a)| *a).collect()
    }

    pub fn protocol(&self) -> Arc<dyn Protocol> {
        Arc::clone(&self.protocol)
    }

    /// chuhe checks every move; the relay reads none.
    pub fn needs_legal_moves(&self) -> bool {
        self.kind == TargetKind::Chuhe
    }

    /// Makes `n` games numbered from `first`, each to play `plies` moves from `moves`.
    pub async fn create_games(
        &self,
        n: usize,
        plies: usize,
        moves: &MoveSource,
        first: usize,
    ) -> Result<Vec<Arc<GameSpec>>, TargetError> {
        match self.kind {
            TargetKind::Relay => Ok((first..first + n)
                .map(|index| {
                    Arc::new(GameSpec {
                        index,
                        id: format!("load-{}-{index}", self.run_id),
                        red_token: String::new(),
                        black_token: String::new(),
                        spectator_token: String::new(),
                        moves: cut(moves.line(index), plies),
                    })
                })
                .collect()),
            TargetKind::Chuhe => {
                let setup = self.chuhe.clone().ok_or_else(|| {
                    TargetError::Unsupported("chuhe target without its setup".into())
                })?;
                self.create_chuhe_games(&setup, n, plies, moves, first)
                    .await
            }
        }
    }

    /// Two players with a token each and a game between them, per game; `setup_concurrency`
    /// organizer connections share the work.
    async fn create_chuhe_games(
        &self,
        setup: &Arc<ChuheSetup>,
        n: usize,
        plies: usize,
        moves: &MoveSource,
        first: usize,
    ) -> Result<Vec<Arc<GameSpec>>, TargetError> {
        let workers = setup.setup_concurrency.clamp(1, 64).min(n.max(1));
        let mut set = tokio::task::JoinSet::new();
        for w in 0..workers {
            let setup = Arc::clone(setup);
            // Worker w creates its games through node w mod nodes.
            let addr = self.nodes[w % self.nodes.len()].1;
            let run = self.run_id.clone();
            let lines: Vec<(usize, Arc<[String]>)> = (first..first + n)
                .skip(w)
                .step_by(workers)
                .map(|i| (i, cut(moves.line(i), plies)))
                .collect();
            set.spawn(async move {
                let mut api = Organizer::connect(addr, &setup.organizer_token).await?;
                let mut out = Vec::with_capacity(lines.len());
                for (index, line) in lines {
                    let (red, red_token) = api
                        .player_with_token(&format!("load-{run}-{index}-r"))
                        .await?;
                    let (black, black_token) = api
                        .player_with_token(&format!("load-{run}-{index}-b"))
                        .await?;
                    let id = api
                        .game(&red, &black, &setup.time_control, "chuhe-load", index)
                        .await?;
                    out.push(Arc::new(GameSpec {
                        index,
                        id,
                        red_token,
                        black_token,
                        spectator_token: String::new(),
                        moves: line,
                    }));
                }
                Ok::<_, crate::chuhe::ApiError>(out)
            });
        }
        let mut games = Vec::with_capacity(n);
        while let Some(r) = set.join_next().await {
            let part = r
                .map_err(|e| TargetError::Setup(e.to_string()))?
                .map_err(|e| TargetError::Setup(e.to_string()))?;
            games.extend(part);
        }
        games.sort_by_key(|g| g.index);
        Ok(games)
    }
}

/// The first `plies` moves of a line.
fn cut(line: Arc<[String]>, plies: usize) -> Arc<[String]> {
    if line.len() <= plies {
        line
    } else {
        Arc::from(&line[..plies])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert!(matches!(
            loopback_addr("ws://127.0.0.1:9001"),
            Ok(a) if a.port() == 9001
        ));
        assert!(matches!(
            loopback_addr("ws://localhost:80/ws"),
            Ok(a) if a.ip().is_loopback()
        ));
        assert!(loopback_addr("ws://[::1]:80").is_ok());
        for bad in [
            "ws://10.1.2.3:80",
            "ws://example.com:80",
            "wss://127.0.0.1:443",
            "ws://127.0.0.1",
            "127.0.0.1:80",
        ] {
            assert!(loopback_addr(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn relay_games_have_distinct_ids_and_lines() -> Result<(), TargetError> {
        let t = Target::relay("ws://127.0.0.1:1")?;
        let moves =
            MoveSource::generate(2, 12, 1).map_err(|e| TargetError::Setup(e.to_string()))?;
        let g = t.create_games(3, 10, &moves, 5).await?;
        assert_eq!(g.len(), 3);
        assert_eq!(g[0].index, 5);
        assert_ne!(g[0].id, g[1].id);
        assert!(g.iter().all(|s| s.moves.len() == 10));
        let other = Target::relay("ws://127.0.0.1:1")?;
        let h = other.create_games(1, 10, &moves, 5).await?;
        assert_ne!(h[0].id, g[0].id);
        Ok(())
    }
}
