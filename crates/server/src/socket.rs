//! A websocket connection's TCP socket, shared by its connection task and the games that
//! write to it directly.
//!
//! A frame for an idle connection (nothing queued, nothing half-written) is written by the
//! game that sends it, in one non-blocking system call, instead of being queued and waking
//! the connection's task to write it (see [`crate::outbox::Outbox::send`]). The connection's
//! own writes (tungstenite's) go through [`SocketIo`], and both kinds of writer meet under one
//! lock, so the byte stream stays a sequence of whole websocket frames:
//!
//! - [`SocketIo::poll_write`] never reports a partial write: what the socket did not take is
//!   kept in the socket's `pending` bytes, and the whole buffer is reported written (tungstenite
//!   only ever hands over whole frames). Before anything new is written, `pending` is written
//!   first; while it cannot be, the write is `Pending` and tungstenite keeps its frames.
//! - A direct write ([`SharedSocket::try_frame`]) happens only while `pending` is empty; what
//!   the socket did not take of it becomes `pending`, for the connection's task to finish.
//!
//! The connection's task finishes `pending` on its next write or flush, which is how it
//! applies its write timeout to a slow reader.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, ready};

use axum::body::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The socket and the bytes accepted for it that it has not taken yet.
#[derive(Debug)]
pub struct SharedSocket {
    tcp: TcpStream,
    pending: Mutex<Pending>,
}

/// Accepted bytes not yet written: `buf[at..]`.
#[derive(Debug, Default)]
struct Pending {
    buf: Vec<u8>,
    at: usize,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.at >= self.buf.len()
    }
    fn keep(&mut self, rest: &[u8]) {
        if self.is_empty() {
            self.buf.clear();
            self.at = 0;
        }
        self.buf.extend_from_slice(rest);
    }
}

/// What a direct write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direct {
    /// The whole frame is on the socket.
    Written,
    /// The frame is accepted, part of it still pending: the connection's task must flush.
    Partly,
    /// Nothing was written (bytes pending, the socket full, or an error its task will see):
    /// queue the frame.
    Refused,
}

impl SharedSocket {
    pub fn new(tcp: TcpStream) -> Arc<SharedSocket> {
        Arc::new(SharedSocket {
            tcp,
            pending: Mutex::new(Pending::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Pending> {
        // A poisoned lock means a panic while copying bytes; the buffer is still whole frames.
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes one whole websocket frame now, if nothing is pending (see the module's doc).
    pub fn try_frame(&self, frame: &[u8]) -> Direct {
        let mut p = self.lock();
        if !p.is_empty() {
            return Direct::Refused;
        }
        match self.tcp.try_write(frame) {
            Ok(n) if n >= frame.len() => Direct::Written,
            Ok(n) => {
                p.keep(frame.get(n..).unwrap_or_default());
                Direct::Partly
            }
            Err(_) => Direct::Refused,
        }
    }

    /// Writes what is pending; `Ready(Ok)` once nothing is.
    fn poll_drain(&self, p: &mut Pending, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !p.is_empty() {
            match self.tcp.try_write(p.buf.get(p.at..).unwrap_or_default()) {
                Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Ok(n) => p.at += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    ready!(self.tcp.poll_write_ready(cx))?;
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        p.buf.clear();
        p.at = 0;
        Poll::Ready(Ok(()))
    }
}

/// The connection task's side of a [`SharedSocket`]: tokio's IO traits over it, with the bytes
/// an HTTP upgrade had already read served first.
#[derive(Debug)]
pub struct SocketIo {
    socket: Arc<SharedSocket>,
    read_ahead: Bytes,
}

impl SocketIo {
    pub fn new(socket: Arc<SharedSocket>, read_ahead: Bytes) -> SocketIo {
        // Even empty, what the upgrade hands over may be a slice of HTTP's whole read buffer:
        // an idle connection would keep it for its lifetime.
        let read_ahead = if read_ahead.is_empty() {
            Bytes::new()
        } else {
            Bytes::copy_from_slice(&read_ahead)
        };
        SocketIo { socket, read_ahead }
    }
}

impl AsyncRead for SocketIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.read_ahead.is_empty() {
            let n = self.read_ahead.len().min(buf.remaining());
            let head = self.read_ahead.split_to(n);
            buf.put_slice(&head);
            return Poll::Ready(Ok(()));
        }
        loop {
            ready!(self.socket.tcp.poll_read_ready(cx))?;
            let dst = buf.initialize_unfilled();
            let room = dst.len();
            match self.socket.tcp.try_read(dst) {
                Ok(n) => {
                    buf.advance(n);
                    if n > 0 && n < room {
                        // Fewer bytes than asked for: the socket's receive queue is empty now.
                        // Its readiness is cleared (no system call), so the next read waits for
                        // the next arrival instead of asking the kernel only to hear EAGAIN — one
                        // system call fewer per client frame. Data that arrived meanwhile has
                        // raised a newer readiness event, which this does not clear.
                        let _ = self.socket.tcp.try_io(tokio::io::Interest::READABLE, || {
                            Err::<(), _>(io::ErrorKind::WouldBlock.into())
                        });
                    }
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }
}

impl AsyncWrite for SocketIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let s = &self.socket;
        let mut p = s.lock();
        ready!(s.poll_drain(&mut p, cx))?;
        loop {
            match s.tcp.try_write(data) {
                Ok(n) => {
                    // Never a partial write: the rest is pending, written before anything else.
                    p.keep(data.get(n..).unwrap_or_default());
                    return Poll::Ready(Ok(data.len()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    ready!(s.tcp.poll_write_ready(cx))?;
                }
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let s = &self.socket;
        let mut p = s.lock();
        s.poll_drain(&mut p, cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // The socket closes when its last holder lets go; shutting down is flushing.
        self.poll_flush(cx)
    }
}

/// A server's websocket frame (FIN, unmasked) around `payload`: `binary` for protobuf, text
/// for JSON (RFC 6455 §5.2).
pub fn ws_frame(binary: bool, payload: &[u8]) -> Bytes {
    let mut f = Vec::with_capacity(payload.len() + 10);
    push_ws_header(&mut f, binary, payload.len());
    f.extend_from_slice(payload);
    Bytes::from(f)
}

/// Appends the header of an unmasked final frame of `n` payload bytes (text or binary) to `f`;
/// the payload is to follow it.
pub fn push_ws_header(f: &mut Vec<u8>, binary: bool, n: usize) {
    f.push(if binary { 0x82 } else { 0x81 });
    if n < 126 {
        f.push(n as u8);
    } else if let Ok(n16) = u16::try_from(n) {
        f.push(126);
        f.extend_from_slice(&n16.to_be_bytes());
    } else {
        f.push(127);
        f.extend_from_slice(&(n as u64).to_be_bytes());
    }
}

/// The payload of a frame [`ws_frame`] made (a slice of it, not a copy).
pub fn ws_payload(frame: &Bytes) -> Bytes {
    let header = match frame.get(1).map(|b| b & 0x7f) {
        Some(126) => 4,
        Some(127) => 10,
        _ => 2,
    };
    frame.slice(header.min(frame.len())..)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn pair() -> (Arc<SharedSocket>, TcpStream) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let client = TcpStream::connect(addr).await.unwrap();
        let (server, _) = l.accept().await.unwrap();
        (SharedSocket::new(server), client)
    }

    #[test]
    fn frames_carry_each_length_form_and_give_their_payload_back() {
        let f = ws_frame(true, b"abc");
        assert_eq!(&f[..], &[0x82, 3, b'a', b'b', b'c']);
        assert_eq!(&ws_payload(&f)[..], b"abc");
        let f = ws_frame(false, &[b'x'; 300]);
        assert_eq!(&f[..4], &[0x81, 126, 1, 44]);
        assert_eq!(f.len(), 304);
        assert_eq!(&ws_payload(&f)[..], &[b'x'; 300][..]);
        let big: Vec<u8> = (0..70_000u32).map(|i| i as u8).collect();
        let f = ws_frame(true, &big);
        assert_eq!(&f[..10], &[0x82, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70]);
        assert_eq!(f.len(), 70_010);
        assert_eq!(&ws_payload(&f)[..], &big[..]);
        assert!(ws_payload(&ws_frame(true, b"")).is_empty());
    }

    /// Direct writes and the task's writes interleave as whole units, in order, also when
    /// the socket fills: what one writer could not finish is finished before the next.
    #[tokio::test]
    async fn direct_and_task_writes_arrive_whole_and_in_order_when_the_socket_fills() {
        let (s, mut client) = pair().await;
        let mut io = SocketIo::new(s.clone(), Bytes::new());
        // Units of 256 KiB, numbered: more than the socket buffers hold while nobody reads.
        let unit = |i: u8| vec![i; 256 * 1024];
        let reader = tokio::spawn(async move {
            // Read nothing until the writers have filled the socket.
            tokio::task::yield_now().await;
            let mut all = Vec::new();
            client.read_to_end(&mut all).await.unwrap();
            all
        });
        let mut expect = Vec::new();
        let mut not_whole = 0;
        for i in 0..40u8 {
            if i % 2 == 0 {
                match s.try_frame(&unit(i)) {
                    Direct::Written => expect.extend(unit(i)),
                    Direct::Partly => {
                        not_whole += 1;
                        expect.extend(unit(i));
                    }
                    // Refused: the writer queues it instead; here the task writes it.
                    Direct::Refused => {
                        not_whole += 1;
                        io.write_all(&unit(i)).await.unwrap();
                        expect.extend(unit(i));
                    }
                }
            } else {
                io.write_all(&unit(i)).await.unwrap();
                expect.extend(unit(i));
            }
        }
        io.flush().await.unwrap();
        drop(io);
        drop(s);
        let got = reader.await.unwrap();
        assert!(
            not_whole > 0,
            "the socket never filled: the test proves nothing"
        );
        assert_eq!(got.len(), expect.len());
        assert!(
            got == expect,
            "the units arrived interleaved or out of order"
        );
    }

    #[tokio::test]
    async fn a_direct_write_is_refused_while_bytes_are_pending() {
        let (s, _client) = pair().await;
        // Fill the socket until a direct write is only partly taken.
        let big = vec![7u8; 256 * 1024];
        let mut outcome = s.try_frame(&big);
        while outcome == Direct::Written {
            outcome = s.try_frame(&big);
        }
        assert_eq!(outcome, Direct::Partly);
        assert_eq!(s.try_frame(b"next"), Direct::Refused);
    }

    #[tokio::test]
    async fn an_idle_connection_keeps_nothing_of_the_upgrades_read_buffer() {
        let (s, _client) = pair().await;
        let http_buffer = Bytes::from(vec![0u8; 8192]);
        let _io = SocketIo::new(s.clone(), http_buffer.slice(8192..));
        assert!(
            http_buffer.is_unique(),
            "an empty read-ahead holds the buffer"
        );
        let _io = SocketIo::new(s, http_buffer.slice(8000..));
        assert!(http_buffer.is_unique(), "a read-ahead holds the buffer");
    }

    /// A short read clears the socket's readiness; what arrives after it is still read, also
    /// when it arrives before the reader asks again.
    #[tokio::test]
    async fn what_arrives_after_a_short_read_is_read() {
        let (s, mut client) = pair().await;
        let mut io = SocketIo::new(s, Bytes::new());
        let mut got = [0u8; 64];
        for round in 0..50u8 {
            client.write_all(&[round; 3]).await.unwrap();
            let n = io.read(&mut got).await.unwrap();
            assert_eq!(&got[..n], &[round; 3][..n]);
            let mut have = n;
            while have < 3 {
                have += io.read(&mut got[have..]).await.unwrap();
            }
            // The next bytes land while nobody reads.
            client.write_all(&[round, round]).await.unwrap();
            tokio::task::yield_now().await;
            let wait = std::time::Duration::from_secs(5);
            let Ok(read) = tokio::time::timeout(wait, io.read(&mut got)).await else {
                panic!("bytes that arrived after a short read are never read");
            };
            let n = read.unwrap();
            assert!(n >= 1);
            if n < 2 {
                io.read_exact(&mut got[n..2]).await.unwrap();
            }
        }
    }

    #[tokio::test]
    async fn bytes_read_ahead_by_the_upgrade_come_first() {
        let (s, mut client) = pair().await;
        let mut io = SocketIo::new(s, Bytes::from_static(b"ahead:"));
        client.write_all(b"then").await.unwrap();
        let mut got = vec![0u8; 10];
        io.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ahead:then");
    }
}
