//! Reads a websocket client's byte stream for tungstenite, marking each data frame that opens
//! a message as binary and remembering whether the client sent it as text.
//!
//! Why: tungstenite checks that a text message is UTF-8 and, when it is not, fails the read,
//! after which the stream ends — the socket closes with no status although the protocol
//! promises `malformed_frame` on a connection that stays usable. Seen as binary, every message
//! reaches the connection, which checks UTF-8 itself (`conn.rs`), answers a broken one and
//! reads on. The check that a JSON connection sends text and a protobuf one binary
//! (`wrong_frame_type`) uses the kind remembered here.
//!
//! Only the first byte of a frame head changes (the opcode of a text frame, 1, becomes 2; the
//! mask, lengths and payload are untouched); continuation and control frames pass as they are.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Where the scanner is in the client's frame stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Reading a frame head: `got` of its bytes seen (the first two kept in `head`), `need`
    /// in all once known (2 until the second byte says more).
    Head { got: usize, need: usize },
    /// Inside a payload: this many bytes to pass over.
    Payload(u64),
}

/// The frame scanner: pure, fed the bytes as they are read.
#[derive(Debug)]
pub struct FrameScan {
    at: At,
    /// The length bytes of the frame head being read (bytes 1..=9).
    head: [u8; 10],
    /// Per message opened (in order): true when the client sent it as text.
    kinds: VecDeque<bool>,
}

impl Default for FrameScan {
    fn default() -> Self {
        FrameScan {
            at: At::Head { got: 0, need: 2 },
            head: [0; 10],
            kinds: VecDeque::new(),
        }
    }
}

const OP_TEXT: u8 = 1;
const OP_BINARY: u8 = 2;

impl FrameScan {
    /// Scans `data` (the next bytes of the stream), rewriting text opcodes in place.
    pub fn scan(&mut self, data: &mut [u8]) {
        let mut i = 0;
        while i < data.len() {
            match self.at {
                At::Payload(left) => {
                    let n = usize::try_from(left)
                        .unwrap_or(usize::MAX)
                        .min(data.len() - i);
                    i += n;
                    let left = left - n as u64;
                    self.at = if left == 0 {
                        At::Head { got: 0, need: 2 }
                    } else {
                        At::Payload(left)
                    };
                }
                At::Head { got, need } => {
                    let b = data[i];
                    i += 1;
                    if got == 0 {
                        match b & 0x0f {
                            OP_TEXT => {
                                data[i - 1] = (b & 0xf0) | OP_BINARY;
                                self.kinds.push_back(true);
                            }
                            OP_BINARY => self.kinds.push_back(false),
                            _ => {}
                        }
                    } else if let Some(slot) = self.head.get_mut(got) {
                        *slot = b;
                    }
                    let got = got + 1;
                    let need = if got == 2 {
                        let ext = match b & 0x7f {
                            126 => 2,
                            127 => 8,
                            _ => 0,
                        };
                        let mask = if b & 0x80 != 0 { 4 } else { 0 };
                        2 + ext + mask
                    } else {
                        need
                    };
                    self.at = if got < need {
                        At::Head { got, need }
                    } else {
                        match self.payload_len() {
                            0 => At::Head { got: 0, need: 2 },
                            n => At::Payload(n),
                        }
                    };
                }
            }
        }
    }

    /// The payload length of the frame head just read.
    fn payload_len(&self) -> u64 {
        match self.head[1] & 0x7f {
            126 => u64::from(u16::from_be_bytes([self.head[2], self.head[3]])),
            127 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&self.head[2..10]);
                u64::from_be_bytes(b)
            }
            n => u64::from(n),
        }
    }

    /// Whether the next message (in the order they arrive) was sent as text.
    pub fn next_was_text(&mut self) -> bool {
        self.kinds.pop_front().unwrap_or(false)
    }
}

/// A client connection's byte stream with its [`FrameScan`] applied to everything read.
#[derive(Debug)]
pub struct ScannedIo<T> {
    inner: T,
    pub scan: FrameScan,
}

impl<T> ScannedIo<T> {
    pub fn new(inner: T) -> ScannedIo<T> {
        ScannedIo {
            inner,
            scan: FrameScan::default(),
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ScannedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = r {
            if let Some(new) = buf.filled_mut().get_mut(before..) {
                this.scan.scan(new);
            }
        }
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ScannedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A masked client frame.
    fn frame(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![(if fin { 0x80 } else { 0 }) | opcode];
        let n = payload.len();
        if n < 126 {
            f.push(0x80 | n as u8);
        } else if n <= 0xffff {
            f.push(0x80 | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        } else {
            f.push(0x80 | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
        let mask = [1, 2, 3, 4];
        f.extend_from_slice(&mask);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        f
    }

    fn stream() -> (Vec<u8>, Vec<u8>) {
        let frames = [
            frame(true, 1, b"{\"ping\":{}}"),
            frame(true, 9, b"p"),           // a ping
            frame(true, 2, &[0xff; 300]),   // a 16-bit length
            frame(false, 1, &[0xfe, 0xff]), // a fragmented text message, not UTF-8
            frame(true, 0, b"x"),
            frame(true, 2, &vec![7; 70_000]), // a 64-bit length
            frame(true, 1, b""),
        ];
        let mut s = Vec::new();
        let mut want = Vec::new();
        for f in frames {
            let mut w = f.clone();
            if f[0] & 0x0f == 1 {
                w[0] = (f[0] & 0xf0) | 2;
            }
            s.extend(f);
            want.extend(w);
        }
        (s, want)
    }

    #[test]
    fn text_heads_become_binary_and_kinds_are_kept_in_order() {
        let (mut s, want) = stream();
        let mut scan = FrameScan::default();
        scan.scan(&mut s);
        assert_eq!(s, want);
        let kinds: Vec<bool> = (0..5).map(|_| scan.next_was_text()).collect();
        assert_eq!(kinds, [true, false, true, false, true]);
        assert!(scan.kinds.is_empty());
        assert_eq!(scan.at, At::Head { got: 0, need: 2 });
    }

    proptest! {
        /// However the stream is cut into reads, the result is the same.
        #[test]
        fn any_split_of_the_stream_scans_the_same(cuts in proptest::collection::vec(0usize..80_000, 0..20)) {
            let (s, want) = stream();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % s.len()).collect();
            cuts.sort_unstable();
            let mut scan = FrameScan::default();
            let mut out = Vec::new();
            let mut from = 0;
            for c in cuts.into_iter().chain([s.len()]) {
                let mut piece = s[from..c.max(from)].to_vec();
                scan.scan(&mut piece);
                out.extend(piece);
                from = c.max(from);
            }
            prop_assert_eq!(out, want);
            prop_assert_eq!(scan.kinds.len(), 5);
        }

        /// Arbitrary bytes (a client that does not speak websocket) never panic the scanner.
        #[test]
        fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let mut scan = FrameScan::default();
            let mut d = data.clone();
            scan.scan(&mut d);
            prop_assert_eq!(d.len(), data.len());
        }
    }
}
