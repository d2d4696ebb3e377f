//! Errors a client can cause, each with its stable machine code and a sentence for people.
//! One place knows every code (the server sends them as `chuhe.v1.Error`).

use thiserror::Error;

/// A refused client request. The game is unchanged; the connection stays open.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ClientError {
    #[error("the frame could not be decoded: {0}")]
    MalformedFrame(String),
    #[error(
        "text frames are not accepted on a chuhe.v1.proto connection (and binary not on chuhe.v1.json)"
    )]
    WrongFrameType,
    #[error("the message carries no known kind")]
    UnknownMessage,
    #[error("the frame is {size} bytes; the limit is {limit}")]
    FrameTooLarge { size: usize, limit: usize },
    #[error("too many messages: at most {per_sec} per second")]
    RateLimited { per_sec: u32 },
    #[error("no game with id {0:?}")]
    GameNotFound(String),
    #[error("subscribe to the game first")]
    NotSubscribed,
    #[error("you are not a player in this game")]
    NotAPlayer,
    #[error("this needs an arbiter")]
    NotAnArbiter,
    #[error("it is not your turn")]
    NotYourTurn,
    #[error("ply {got} is stale: the next ply is {expected}")]
    StalePly { got: u32, expected: u32 },
    #[error("illegal move {mv:?}: {why}")]
    IllegalMove { mv: String, why: String },
    #[error("the game is finished")]
    GameFinished,
    #[error("the game is paused")]
    GamePaused,
    #[error(
        "the game has not started yet: its clocks start at the scheduled time or when both players have joined"
    )]
    GameNotStarted,
    #[error("no draw offer to answer")]
    NoDrawOffer,
    #[error("a draw can be offered only after your own move and before your opponent's")]
    DrawOfferNotAllowed,
    #[error("{0}")]
    InvalidArgument(String),
    #[error("the server is busy; retry")]
    Busy,
    #[error("the server could not store the request; nothing changed, retry")]
    StoreUnavailable,
    #[error("the server is shutting down")]
    ShuttingDown,
    #[error("game {0}'s stored record cannot be loaded; an arbiter or operator must look at it")]
    GameUnavailable(String),
    /// Several nodes: the node that runs the game did not answer in time (it may be failing
    /// over to another node). Retry: a move resent with its ply is played at most once.
    #[error("the game's node did not answer in time; retry (a resent move is played once)")]
    Unavailable,
    #[error("this game has no arbiter to call")]
    CallsNotAllowed,
    #[error("a call to the arbiter is open already (event {call_seq})")]
    CallOpen { call_seq: u64 },
    #[error("each side may call the arbiter at most {max} times in this game")]
    CallLimitReached { max: u32 },
    #[error("no call to the arbiter is open")]
    NoOpenCall,
    #[error("the call was taken by arbiter {by}")]
    CallTaken { by: String },
    #[error("messaging not allowed: {0}")]
    MessagingNotAllowed(String),
    #[error("the text has {chars} characters; at most {limit}")]
    MessageTooLong { chars: usize, limit: usize },
    #[error("one message per {interval_ms} ms")]
    MessageRateLimited { interval_ms: u64 },
}

impl ClientError {
    /// The stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            ClientError::MalformedFrame(_) => "malformed_frame",
            ClientError::WrongFrameType => "wrong_frame_type",
            ClientError::UnknownMessage => "unknown_message",
            ClientError::FrameTooLarge { .. } => "frame_too_large",
            ClientError::RateLimited { .. } => "rate_limited",
            ClientError::GameNotFound(_) => "game_not_found",
            ClientError::NotSubscribed => "not_subscribed",
            ClientError::NotAPlayer => "not_a_player",
            ClientError::NotAnArbiter => "permission_denied",
            ClientError::NotYourTurn => "not_your_turn",
            ClientError::StalePly { .. } => "stale_ply",
            ClientError::IllegalMove { .. } => "illegal_move",
            ClientError::GameFinished => "game_finished",
            ClientError::GamePaused => "game_paused",
            ClientError::GameNotStarted => "game_not_started",
            ClientError::NoDrawOffer => "no_draw_offer",
            ClientError::DrawOfferNotAllowed => "draw_offer_not_allowed",
            ClientError::InvalidArgument(_) => "invalid_argument",
            ClientError::Busy => "busy",
            ClientError::StoreUnavailable => "store_unavailable",
            ClientError::ShuttingDown => "shutting_down",
            ClientError::GameUnavailable(_) => "game_unavailable",
            ClientError::Unavailable => "unavailable",
            ClientError::CallsNotAllowed => "calls_not_allowed",
            ClientError::CallOpen { .. } => "call_open",
            ClientError::CallLimitReached { .. } => "call_limit_reached",
            ClientError::NoOpenCall => "no_open_call",
            ClientError::CallTaken { .. } => "call_taken",
            ClientError::MessagingNotAllowed(_) => "messaging_not_allowed",
            ClientError::MessageTooLong { .. } => "message_too_long",
            ClientError::MessageRateLimited { .. } => "message_rate_limited",
        }
    }

    /// Every code, for docs and tests.
    pub const ALL_CODES: &'static [&'static str] = &[
        "malformed_frame",
        "wrong_frame_type",
        "unknown_message",
        "frame_too_large",
        "rate_limited",
        "game_not_found",
        "not_subscribed",
        "not_a_player",
        "permission_denied",
        "not_your_turn",
        "stale_ply",
        "illegal_move",
        "game_finished",
        "game_paused",
        "game_not_started",
        "no_draw_offer",
        "draw_offer_not_allowed",
        "invalid_argument",
        "busy",
        "store_unavailable",
        "shutting_down",
        "game_unavailable",
        "unavailable",
        "calls_not_allowed",
        "call_open",
        "call_limit_reached",
        "no_open_call",
        "call_taken",
        "messaging_not_allowed",
        "message_too_long",
        "message_rate_limited",
    ];

    /// Server-side trouble is worth a warning; a client's mistake is debug.
    pub fn is_server_side(&self) -> bool {
        matches!(
            self,
            ClientError::StoreUnavailable
                | ClientError::Busy
                | ClientError::GameUnavailable(_)
                | ClientError::Unavailable
        )
    }
}
