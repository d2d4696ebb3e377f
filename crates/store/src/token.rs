//! Opaque bearer tokens. The store owns generation and hashing so that every caller hashes the
//! same way: a token is 32 random bytes from the OS, shown once as 64 lowercase hex characters
//! prefixed `chuhe_`; only its SHA-256 ([`TokenHash`]) is stored.

use sha2::{Digest, Sha256};

use crate::error::StoreError;
use crate::types::TokenHash;

const PREFIX: &str = "chuhe_";

/// A freshly generated token: give `token` to its holder, store `hash`.
#[derive(Clone)]
pub struct GeneratedToken {
    pub token: String,
    pub hash: TokenHash,
}

impl std::fmt::Debug for GeneratedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        f.debug_struct("GeneratedToken")
            .field("hash", &self.hash)
            .finish_non_exhaustive()
    }
}

/// Generates a new random token from the operating system's random source.
pub fn generate_token() -> Result<GeneratedToken, StoreError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| StoreError::Corrupt(format!("no OS randomness available: {e}")))?;
    let mut token = String::with_capacity(PREFIX.len() + 64);
    token.push_str(PREFIX);
    for b in bytes {
        token.push(hex_digit(b >> 4));
        token.push(hex_digit(b & 0x0f));
    }
    let hash = hash_token(&token);
    Ok(GeneratedToken { token, hash })
}

fn hex_digit(n: u8) -> char {
    char::from(b"0123456789abcdef"[usize::from(n & 0x0f)])
}

/// Hashes a token as presented by a client. Any string can be hashed; an unknown token simply
/// matches nothing.
pub fn hash_token(token: &str) -> TokenHash {
    TokenHash(Sha256::digest(token.as_bytes()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_differ_and_hash_consistently() -> Result<(), StoreError> {
        let a = generate_token()?;
        let b = generate_token()?;
        assert_ne!(a.token, b.token);
        assert_eq!(a.token.len(), PREFIX.len() + 64);
        assert!(a.token.starts_with(PREFIX));
        assert_eq!(hash_token(&a.token), a.hash);
        assert_ne!(a.hash, b.hash);
        assert!(!format!("{a:?}").contains(&a.token));
        Ok(())
    }

    #[test]
    fn sha256_known_vector() {
        // FIPS 180-2 test vector for "abc".
        let h = hash_token("abc");
        assert_eq!(h.0[..4], [0xba, 0x78, 0x16, 0xbf]);
        assert_eq!(h.0[28..], [0xf2, 0x00, 0x15, 0xad]);
    }
}
