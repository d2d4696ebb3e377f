//! Errors a client can cause as the wire carries them (the errors and their codes are the game
//! core's [`ClientError`]), the websocket close codes the server uses, and the JSON error answer
//! every HTTP refusal uses.

use axum::response::{IntoResponse, Response};
use chuhe_proto::v1::ApiError;

pub use chuhe_game::ClientError;

/// Close codes (RFC 6455 plus application codes 4000–4999). Documented in
/// docs/protocol.md; stable.
pub mod close {
    /// The server is shutting down; reconnect after the hint in `Goodbye`.
    pub const GOING_AWAY: u16 = 1001;
    /// A frame above the hard size limit (the socket cannot stay in sync).
    pub const MESSAGE_TOO_BIG: u16 = 1009;
    /// The connection's write queue overflowed (client too slow); reconnect
    /// with the last seq seen.
    pub const TOO_SLOW: u16 = 4008;
    /// The client kept sending after being rate limited.
    pub const RATE_LIMITED: u16 = 4029;
    /// The token used by this connection was revoked.
    pub const TOKEN_REVOKED: u16 = 4001;
    /// Nothing arrived from the client (not even a pong) for the peer timeout: the peer is
    /// gone or stalled; reconnect with the last seq seen.
    pub const SILENT: u16 = 4002;
    /// Several nodes: this node cannot reach the node running the game the client asked for
    /// (the coordination service is down); after `goodbye` `owner_unreachable`, reconnect (to
    /// any node, or to the `owner_node` the goodbye names) with the last seq seen.
    pub const OWNER_UNREACHABLE: u16 = 4010;
}

/// A client error as the wire message `chuhe.v1.Error`.
pub trait ErrorToWire {
    /// The wire message answering request `request_id` about game `game_id`.
    fn to_wire(&self, request_id: u32, game_id: &str) -> chuhe_proto::v1::Error;
}

impl ErrorToWire for ClientError {
    fn to_wire(&self, request_id: u32, game_id: &str) -> chuhe_proto::v1::Error {
        chuhe_proto::v1::Error {
            request_id,
            code: self.code().to_string(),
            message: self.to_string(),
            game_id: game_id.to_string(),
        }
    }
}

/// A JSON error body `{"code": …, "message": …}` with a status.
pub fn api_error(status: axum::http::StatusCode, code: &str, message: &str) -> Response {
    let body = chuhe_proto::encode_json(&ApiError {
        code: code.into(),
        message: message.into(),
    });
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}
