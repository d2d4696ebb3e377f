//! Opening client websockets: loopback only, bounded connect concurrency, several source
//! addresses, and the file-descriptor limit.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::Semaphore;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::client::Request;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// A client's websocket.
pub type Ws = WebSocketStream<TcpStream>;

/// Why a connection could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("tcp connect: {0}")]
    Tcp(std::io::Error),
    #[error("bind {0}: {1}")]
    Bind(IpAddr, std::io::Error),
    #[error("websocket upgrade: {0}")]
    Upgrade(String),
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    #[error("shutting down")]
    Closed,
}

impl ConnectError {
    /// A stable code for the report's "errors by code".
    pub fn code(&self) -> &'static str {
        match self {
            Self::Tcp(_) => "connect_tcp",
            Self::Bind(..) => "connect_bind",
            Self::Upgrade(_) => "connect_upgrade",
            Self::Timeout(_) => "connect_timeout",
            Self::Closed => "connect_closed",
        }
    }
}

/// Why a target or source address is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AddrError {
    #[error("{0} is not a loopback address: the load generator only talks to 127.0.0.0/8 or ::1")]
    NotLoopback(IpAddr),
    #[error("bad source address range {0:?}: use 127.0.0.1 or 127.0.0.1-127.0.0.8")]
    Range(String),
    #[error("no server address to connect to")]
    NoTarget,
}

/// Refuses anything but loopback.
pub fn ensure_loopback(ip: IpAddr) -> Result<(), AddrError> {
    if ip.is_loopback() {
        Ok(())
    } else {
        Err(AddrError::NotLoopback(ip))
    }
}

/// Parses `127.0.0.1`, `127.0.0.1-127.0.0.8`, or a comma-separated list of those.
pub fn parse_sources(spec: &str) -> Result<Vec<IpAddr>, AddrError> {
    let mut out = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || AddrError::Range(part.to_owned());
        match part.split_once('-') {
            None => out.push(IpAddr::V4(part.parse::<Ipv4Addr>().map_err(|_| bad())?)),
            Some((a, b)) => {
                let a = u32::from(a.trim().parse::<Ipv4Addr>().map_err(|_| bad())?);
                let b = u32::from(b.trim().parse::<Ipv4Addr>().map_err(|_| bad())?);
                if b < a || b - a >= 256 {
                    return Err(bad());
                }
                out.extend((a..=b).map(|x| IpAddr::V4(Ipv4Addr::from(x))));
            }
        }
    }
    if out.is_empty() {
        return Err(AddrError::Range(spec.to_owned()));
    }
    for ip in &out {
        ensure_loopback(*ip)?;
    }
    Ok(out)
}

/// Raises the soft open-files limit to the hard limit; returns the new soft limit.
pub fn raise_fd_limit() -> std::io::Result<u64> {
    rlimit::increase_nofile_limit(u64::MAX)
}

/// The client websocket settings: small buffers, so ten thousand clients fit in one process.
pub fn client_ws_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(4 * 1024)
        .write_buffer_size(0)
        .max_write_buffer_size(64 * 1024)
        .max_message_size(Some(1 << 20))
        .max_frame_size(Some(1 << 20))
}

/// Opens client websockets to one loopback server.
pub struct Connector {
    /// The nodes; a request goes to the one its URL names (the first if it names none).
    targets: Vec<SocketAddr>,
    sources: Vec<IpAddr>,
    next_source: AtomicUsize,
    permits: Semaphore,
    timeout: Duration,
}

impl Connector {
    /// `concurrency` connects (TCP + upgrade) at most in flight; each takes at most `timeout`.
    pub fn new(
        target: SocketAddr,
        sources: Vec<IpAddr>,
        concurrency: usize,
        timeout: Duration,
    ) -> Result<Self, AddrError> {
        Self::nodes(vec![target], sources, concurrency, timeout)
    }

    /// As [`Connector::new`], to several nodes (at least one): each connect goes to the node
    /// its request's URL names.
    pub fn nodes(
        targets: Vec<SocketAddr>,
        sources: Vec<IpAddr>,
        concurrency: usize,
        timeout: Duration,
    ) -> Result<Self, AddrError> {
        let Some(first) = targets.first() else {
            return Err(AddrError::NoTarget);
        };
        ensure_loopback(first.ip())?;
        for t in &targets {
            ensure_loopback(t.ip())?;
        }
        for ip in &sources {
            ensure_loopback(*ip)?;
        }
        Ok(Self {
            targets,
            sources,
            next_source: AtomicUsize::new(0),
            permits: Semaphore::new(concurrency.max(1)),
            timeout,
        })
    }

    pub fn target(&self) -> SocketAddr {
        self.targets[0]
    }

    /// The node `request`'s URL names, if it is one of the targets; else the first.
    fn peer(&self, request: &Request) -> SocketAddr {
        if self.targets.len() > 1 {
            let uri = request.uri();
            let host = uri
                .host()
                .unwrap_or("")
                .trim_start_matches('[')
                .trim_end_matches(']');
            let ip = if host == "localhost" {
                Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
            } else {
                host.parse().ok()
            };
            if let (Some(ip), Some(port)) = (ip, uri.port_u16()) {
                let named = SocketAddr::new(ip, port);
                if self.targets.contains(&named) {
                    return named;
                }
            }
        }
        self.targets[0]
    }

    /// Opens a websocket with `request` (whose URL names the path; the TCP peer is the target).
    /// Also returns when the connect really started: after waiting for a permit, so connect
    /// latencies do not count the load generator's own queue.
    pub async fn connect(&self, request: Request) -> Result<(Ws, Instant), ConnectError> {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| ConnectError::Closed)?;
        let started = Instant::now();
        let ws = tokio::time::timeout(self.timeout, self.open(request))
            .await
            .map_err(|_| ConnectError::Timeout(self.timeout))??;
        Ok((ws, started))
    }

    async fn open(&self, request: Request) -> Result<Ws, ConnectError> {
        let target = self.peer(&request);
        let socket = match target {
            SocketAddr::V4(_) => TcpSocket::new_v4(),
            SocketAddr::V6(_) => TcpSocket::new_v6(),
        }
        .map_err(ConnectError::Tcp)?;
        if !self.sources.is_empty() && target.is_ipv4() {
            let i = self.next_source.fetch_add(1, Ordering::Relaxed) % self.sources.len();
            let ip = self.sources[i];
            socket
                .bind(SocketAddr::new(ip, 0))
                .map_err(|e| ConnectError::Bind(ip, e))?;
        }
        let stream = socket.connect(target).await.map_err(ConnectError::Tcp)?;
        let _ = stream.set_nodelay(true);
        let (ws, _resp) =
            tokio_tungstenite::client_async_with_config(request, stream, Some(client_ws_config()))
                .await
                .map_err(|e| ConnectError::Upgrade(e.to_string()))?;
        Ok(ws)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources() {
        assert_eq!(
            parse_sources("127.0.0.1-127.0.0.3, 127.0.1.1"),
            Ok(vec![
                "127.0.0.1"
                    .parse()
                    .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
                "127.0.0.2"
                    .parse()
                    .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
                "127.0.0.3"
                    .parse()
                    .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
                "127.0.1.1"
                    .parse()
                    .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
            ])
        );
        assert!(matches!(
            parse_sources("10.0.0.1"),
            Err(AddrError::NotLoopback(_))
        ));
        assert!(matches!(
            parse_sources("127.0.0.9-127.0.0.1"),
            Err(AddrError::Range(_))
        ));
        assert!(matches!(parse_sources(""), Err(AddrError::Range(_))));
        assert!(matches!(
            parse_sources("localhost"),
            Err(AddrError::Range(_))
        ));
    }

    #[test]
    fn only_loopback_targets() {
        let remote: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(192, 168, 1, 1)), 80);
        assert!(Connector::new(remote, vec![], 1, Duration::from_secs(1)).is_err());
        let local: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 80);
        assert!(Connector::new(local, vec![], 1, Duration::from_secs(1)).is_ok());
    }

    #[tokio::test]
    async fn connects_rotate_over_the_source_addresses() -> Result<(), Box<dyn std::error::Error>> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let target = listener.local_addr()?;
        let sources = parse_sources("127.0.0.2-127.0.0.3")?;
        let c = std::sync::Arc::new(Connector::new(
            target,
            sources.clone(),
            4,
            Duration::from_secs(5),
        )?);
        let url = format!("ws://{target}/");
        let mut seen = Vec::new();
        for _ in 0..4 {
            use tokio_tungstenite::tungstenite::client::IntoClientRequest;
            let request = url.as_str().into_client_request()?;
            let c = std::sync::Arc::clone(&c);
            let connect = tokio::spawn(async move { c.connect(request).await });
            // Accept and hang up: the upgrade fails; the source address is what this test is
            // about.
            let (stream, peer) = listener.accept().await?;
            drop(stream);
            assert!(matches!(connect.await?, Err(ConnectError::Upgrade(_))));
            seen.push(peer.ip());
        }
        assert_eq!(seen, [sources[0], sources[1], sources[0], sources[1]]);
        Ok(())
    }
}
