//! The listener: accepts TCP connections under the connection caps (in all and per client
//! address), serves HTTP/1.1 on each — websocket upgrades included — with a handshake timeout,
//! and stops accepting at shutdown.
//!
//! A connection over a cap is answered at once with `503` and the JSON error
//! `too_many_connections`, never left waiting; a connection that has not sent a whole request
//! head within `Config::handshake_timeout` (a silent TCP connection, a websocket upgrade sent
//! half-way, an idle keep-alive connection) is closed. Both are counted in `/metrics` and logged
//! (at most one line per second for each, with the number since the last line).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tracing::{debug, warn};

use crate::env::Env;
use crate::metrics::Metrics;

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `Config::max_connections` connections are open.
    Total,
    /// `Config::max_connections_per_address` connections from this address are open.
    PerAddress,
}

/// The connection caps and the connections open, in all and per client address. Pure
/// bookkeeping: no IO.
#[derive(Debug)]
pub struct ConnLimits {
    max_total: usize,
    max_per_address: usize,
    /// Addresses without a per-address cap (a reverse proxy or load generator on this host).
    unlimited: Vec<IpAddr>,
    open: Mutex<Open>,
    metrics: Arc<Metrics>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    per_address: HashMap<IpAddr, usize>,
}

/// One admitted connection's place under the caps; freed when dropped. Shared (`Arc`) by the
/// HTTP connection and, after an upgrade, the websocket task, so an upgraded connection keeps
/// its place until the websocket closes.
#[derive(Debug)]
pub struct ConnSlot {
    limits: Arc<ConnLimits>,
    ip: IpAddr,
}

impl Drop for ConnSlot {
    fn drop(&mut self) {
        self.limits.release(self.ip);
    }
}

/// Places above the total cap kept for the unlimited (local) addresses: health probes and
/// operators on the host.
pub const LOCAL_HEADROOM: usize = 64;

/// What a websocket upgrade carries into its connection task (a request extension).
#[derive(Debug, Clone)]
pub struct SlotHold(pub Arc<ConnSlot>);

impl ConnLimits {
    pub fn new(
        max_total: usize,
        max_per_address: usize,
        unlimited: Vec<IpAddr>,
        metrics: Arc<Metrics>,
    ) -> ConnLimits {
        ConnLimits {
            max_total,
            max_per_address,
            unlimited,
            open: Mutex::new(Open::default()),
            metrics,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        // The counts are consistent after every statement; a panic elsewhere cannot break them.
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a place for a connection from `ip`, or says which cap refuses it. The unlimited
    /// addresses (this host) have [`LOCAL_HEADROOM`] places above the total cap, so a health
    /// probe or an operator on the host still gets in when clients have filled it.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<ConnSlot, Refusal> {
        let local = self.unlimited.contains(&ip);
        let mut open = self.lock();
        let cap = if local {
            self.max_total.saturating_add(LOCAL_HEADROOM)
        } else {
            self.max_total
        };
        if open.total >= cap {
            return Err(Refusal::Total);
        }
        let from = open.per_address.get(&ip).copied().unwrap_or(0);
        if from >= self.max_per_address && !local {
            return Err(Refusal::PerAddress);
        }
        open.total += 1;
        open.per_address.insert(ip, from + 1);
        self.metrics.tcp_connections.fetch_add(1, Ordering::Relaxed);
        Ok(ConnSlot {
            limits: self.clone(),
            ip,
        })
    }

    fn release(&self, ip: IpAddr) {
        let mut open = self.lock();
        open.total = open.total.saturating_sub(1);
        if let Some(n) = open.per_address.get_mut(&ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.per_address.remove(&ip);
            }
        }
        self.metrics.tcp_connections.fetch_sub(1, Ordering::Relaxed);
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.lock().total
    }
}

/// The connection cap when `Config::max_connections` is 0: the process's open-file limit less
/// 512 for the database, logs, the listener and the local headroom (at least 64); 10,000 when
/// the limit cannot be read.
pub fn default_max_connections() -> usize {
    let soft = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3))
                .and_then(|n| n.parse::<usize>().ok())
        });
    match soft {
        Some(n) => n.saturating_sub(512).max(64),
        None => 10_000,
    }
}

/// A log line at most once per second, saying how many events it stands for.
#[derive(Debug, Default)]
struct RareLog {
    last_second: AtomicU64,
    since: AtomicU64,
}

impl RareLog {
    /// Counts an event; `Some(n)` when a line is due (n events since the last line).
    fn hit(&self, now_second: u64) -> Option<u64> {
        let n = self.since.fetch_add(1, Ordering::Relaxed) + 1;
        let last = self.last_second.load(Ordering::Relaxed);
        if now_second > last
            && self
                .last_second
                .compare_exchange(last, now_second, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.since.fetch_sub(n, Ordering::Relaxed);
            return Some(n);
        }
        None
    }
}

/// At most this many refused connections wait (half a second) for their request to be read
/// and dropped, so the refusal is not lost to a reset; more are closed at once.
const MAX_DRAINING: usize = 512;

struct Listener {
    env: Env,
    app: Router,
    limits: Arc<ConnLimits>,
    refused_log: RareLog,
    error_log: RareLog,
    draining: Arc<AtomicUsize>,
}

/// Accepts connections until `shutdown` resolves, then returns (the listener is closed);
/// connections still open finish gracefully on their own tasks, which hold the server's
/// `tasks_done` sender until they end.
pub async fn run(
    listener: TcpListener,
    app: Router,
    env: Env,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let max_total = match env.config.max_connections {
        0 => default_max_connections(),
        n => n,
    };
    let limits = Arc::new(ConnLimits::new(
        max_total,
        env.config.max_connections_per_address,
        env.config.unlimited_addresses.clone(),
        env.metrics.clone(),
    ));
    let l = Listener {
        env,
        app,
        limits,
        refused_log: RareLog::default(),
        error_log: RareLog::default(),
        draining: Arc::new(AtomicUsize::new(0)),
    };
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => l.admit(tcp, peer.ip()),
                Err(e) => {
                    if let Some(n) = l.error_log.hit(l.env.time.now_ms() / 1000) {
                        warn!(error = %e, errors = n, "cannot accept connections");
                    }
                    // Out of file descriptors (or another passing failure): the pending
                    // connections wait in the backlog instead of spinning this loop.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
}

impl Listener {
    fn admit(&self, tcp: TcpStream, ip: IpAddr) {
        // Moves are small frames that must leave at once: without TCP_NODELAY, Nagle's
        // algorithm meets the peer's delayed ACK and adds ~40 ms to deliveries.
        if let Err(e) = tcp.set_nodelay(true) {
            debug!(error = %e, "could not set TCP_NODELAY");
        }
        match self.limits.admit(ip) {
            Ok(slot) => {
                tokio::spawn(serve_connection(
                    tcp,
                    Arc::new(slot),
                    self.app.clone(),
                    self.env.clone(),
                ));
            }
            Err(why) => self.refuse(tcp, ip, why),
        }
    }

    fn refuse(&self, tcp: TcpStream, ip: IpAddr, why: Refusal) {
        let m = &self.env.metrics;
        let (counter, message) = match why {
            Refusal::Total => (
                &m.refused_total_cap,
                "the server has as many connections open as it may; retry later",
            ),
            Refusal::PerAddress => (
                &m.refused_per_address,
                "too many connections from your address; close some and retry",
            ),
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if let Some(n) = self.refused_log.hit(self.env.time.now_ms() / 1000) {
            warn!(
                reason = ?why,
                %ip,
                refused = n,
                open = self.limits.open(),
                "connections refused: over the connection cap"
            );
        }
        let body = chuhe_proto::encode_json(&chuhe_proto::v1::ApiError {
            code: "too_many_connections".into(),
            message: message.into(),
        });
        let answer = format!(
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
             content-length: {}\r\nretry-after: 5\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        // A fresh socket's send buffer takes the short answer without waiting.
        let _ = tcp.try_write(answer.as_bytes());
        if self.draining.fetch_add(1, Ordering::Relaxed) >= MAX_DRAINING {
            self.draining.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        let draining = self.draining.clone();
        tokio::spawn(async move {
            let mut tcp = tcp;
            let _ = tcp.shutdown().await;
            let mut sink = [0u8; 1024];
            let _ = tokio::time::timeout(Duration::from_millis(500), async {
                while matches!(tcp.read(&mut sink).await, Ok(n) if n > 0) {}
            })
            .await;
            draining.fetch_sub(1, Ordering::Relaxed);
        });
    }
}

/// Serves HTTP/1.1 on one connection (and hands a websocket upgrade its place under the caps).
async fn serve_connection(tcp: TcpStream, slot: Arc<ConnSlot>, app: Router, env: Env) {
    let hold = SlotHold(slot);
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(hold.clone());
        let mut app = app.clone();
        async move { tower_service::Service::call(&mut app, req).await }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(env.config.handshake_timeout);
    let conn = builder
        .serve_connection(TokioIo::new(tcp), service)
        .with_upgrades();
    tokio::pin!(conn);
    let mut shutdown = env.shutdown.clone();
    let done = tokio::select! {
        r = conn.as_mut() => r,
        _ = async { shutdown.wait_for(|stop| *stop).await.map(|_| ()) } => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = done {
        if e.is_timeout() {
            env.metrics
                .handshake_timeouts_total
                .fetch_add(1, Ordering::Relaxed);
            debug!("closed a connection that sent no request in time");
        } else {
            debug!(error = %e, "connection error");
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn limits(total: usize, per: usize) -> Arc<ConnLimits> {
        Arc::new(ConnLimits::new(
            total,
            per,
            vec![IpAddr::from([127, 0, 0, 1])],
            Arc::new(Metrics::default()),
        ))
    }

    #[test]
    fn caps_count_in_all_and_per_address_and_free_on_drop() {
        let l = limits(3, 2);
        let a = IpAddr::from([10, 0, 0, 1]);
        let b = IpAddr::from([10, 0, 0, 2]);
        let s1 = l.admit(a).unwrap();
        let s2 = l.admit(a).unwrap();
        assert_eq!(l.admit(a).unwrap_err(), Refusal::PerAddress);
        let s3 = l.admit(b).unwrap();
        assert_eq!(l.admit(b).unwrap_err(), Refusal::Total);
        assert_eq!(l.open(), 3);
        drop(s1);
        assert_eq!(l.open(), 2);
        let s4 = l.admit(a).unwrap();
        drop((s2, s3, s4));
        assert_eq!(l.open(), 0);
        assert!(l.lock().per_address.is_empty());
        assert_eq!(l.metrics.tcp_connections.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn unlimited_addresses_have_only_the_total_cap_and_some_headroom() {
        let l = limits(3, 1);
        let other = IpAddr::from([10, 0, 0, 1]);
        let local = IpAddr::from([127, 0, 0, 1]);
        let mut slots: Vec<_> = (0..3).map(|_| l.admit(local).unwrap()).collect();
        assert_eq!(l.admit(other).unwrap_err(), Refusal::Total);
        slots.extend((0..LOCAL_HEADROOM).map(|_| l.admit(local).unwrap()));
        assert_eq!(l.admit(local).unwrap_err(), Refusal::Total);
        drop(slots);
        assert_eq!(l.open(), 0);
    }

    #[test]
    fn a_rare_log_says_how_many_it_stands_for() {
        let r = RareLog::default();
        assert_eq!(r.hit(1), Some(1));
        assert_eq!(r.hit(1), None);
        assert_eq!(r.hit(1), None);
        // The two left out, and this one.
        assert_eq!(r.hit(2), Some(3));
    }

    #[test]
    fn the_default_cap_leaves_room_under_the_file_limit() {
        let n = default_max_connections();
        assert!(n >= 64);
    }
}
