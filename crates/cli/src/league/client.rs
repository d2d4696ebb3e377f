//! The one HTTP request `chuhe league event …` makes to a running server: hyper's HTTP/1.1
//! client connection on a tokio TCP stream (hyper is in the tree already for the server),
//! one connection per command, bounded by a timeout. Plain `http://` only: the CLI talks to
//! the server's own address (on the host, or through an SSH tunnel); a TLS proxy in front of
//! it is for browsers.

use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;

/// Where the server is: `http://HOST[:PORT][/PREFIX]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    pub host: String,
    pub port: u16,
    /// The path the API's paths are appended to (no trailing `/`; empty for the root).
    pub prefix: String,
}

impl Server {
    pub fn parse(url: &str) -> Result<Server> {
        let u = url.trim();
        let rest = match u.split_once("://") {
            Some(("http", rest)) => rest,
            Some(("https", _)) => bail!(
                "--server {u:?}: https is not supported; give the server's own http:// address \
                 (on its host, or through an SSH tunnel)"
            ),
            Some((scheme, _)) => bail!("--server {u:?}: scheme {scheme:?} is not http"),
            None => u,
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        let (host, port) = match authority.rsplit_once(':') {
            // An IPv6 address in brackets without a port: `[::1]`.
            Some((h, p)) if !p.contains(']') => (
                h,
                p.parse::<u16>()
                    .map_err(|_| anyhow!("--server {u:?}: {p:?} is not a port number"))?,
            ),
            _ => (authority, 80),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            bail!("--server {u:?}: no host (e.g. http://127.0.0.1:8080)");
        }
        Ok(Server {
            host: host.to_string(),
            port,
            prefix: path.to_string(),
        })
    }

    fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// A server's answer: status, content type, body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub body: Bytes,
}

/// Sends one request and reads the whole answer, within `timeout`.
pub async fn request(
    server: &Server,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Vec<u8>>,
    timeout: Duration,
) -> Result<Answer> {
    let url = format!("http://{}{}{path}", server.authority(), server.prefix);
    tokio::time::timeout(timeout, send(server, method, path, token, body))
        .await
        .map_err(|_| anyhow!("{method} {url}: no answer within {}s", timeout.as_secs()))?
        .with_context(|| format!("{method} {url}"))
}

async fn send(
    server: &Server,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Vec<u8>>,
) -> Result<Answer> {
    let stream = match tokio::net::TcpStream::connect((server.host.as_str(), server.port)).await {
        Ok(stream) => stream,
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            let err = anyhow::Error::new(e).context("cannot reach the server");
            return Err(crate::tip(
                err,
                format!(
                    "no server listens at {}: start one with `chuhe serve` (in another \
                     terminal, or `chuhe serve &`), or name the one to use with `--server \
                     http://HOST:PORT` (or CHUHE_SERVER)",
                    server.authority()
                ),
            ));
        }
        Err(e) => return Err(anyhow::Error::new(e).context("cannot reach the server")),
    };
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    // The connection runs beside the request; it ends when the answer is read.
    let driver = tokio::spawn(conn);
    let mut req = hyper::Request::builder()
        .method(method)
        .uri(format!("{}{path}", server.prefix))
        .header(hyper::header::HOST, server.authority())
        .header(hyper::header::ACCEPT, "application/json, */*");
    if let Some(t) = token {
        req = req.header(hyper::header::AUTHORIZATION, format!("Bearer {t}"));
    }
    let body = match body {
        Some(b) => {
            req = req.header(hyper::header::CONTENT_TYPE, "application/json");
            Bytes::from(b)
        }
        None => Bytes::new(),
    };
    let res = sender.send_request(req.body(Full::new(body))?).await?;
    let status = res.status().as_u16();
    let content_type = res
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = res.into_body().collect().await?.to_bytes();
    drop(sender);
    driver.abort();
    Ok(Answer {
        status,
        content_type,
        body,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::Server;

    #[test]
    fn server_urls_parse() {
        let s = Server::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            (s.host.as_str(), s.port, s.prefix.as_str()),
            ("127.0.0.1", 8080, "")
        );
        let s = Server::parse("http://league.example/chuhe/").unwrap();
        assert_eq!(
            (s.host.as_str(), s.port, s.prefix.as_str()),
            ("league.example", 80, "/chuhe")
        );
        let s = Server::parse("localhost:9000").unwrap();
        assert_eq!((s.host.as_str(), s.port), ("localhost", 9000));
        let s = Server::parse("http://[::1]:8080").unwrap();
        assert_eq!(
            (s.host.as_str(), s.port, s.authority().as_str()),
            ("::1", 8080, "[::1]:8080")
        );
        for bad in ["https://x", "ftp://x", "http://:80", "http://x:port"] {
            assert!(Server::parse(bad).is_err(), "{bad}");
        }
    }
}
