//! chuhe game server.
