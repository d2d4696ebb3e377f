//! Recently checked bearer tokens, so a client that connects again (a reconnect, a page load,
//! the organizer's next request) is not a database round trip each time.
//!
//! Only tokens the store accepted are kept, each for at most `ttl` after the store said so:
//! a token revoked on this node is forgotten at once (the whole cache is cleared), one revoked
//! elsewhere (another node, `chuhe admin` on the database) stops working here within `ttl`.
//! An unknown or revoked token is never cached: a new token works at once, and refusals always
//! ask the store. Keyed by the token's SHA-256, so the cache holds no usable secret.
//!
//! Pure apart from its lock: the caller passes the time, so tests drive the clock.

use std::sync::{Mutex, MutexGuard};

use crate::persist::Account;

/// The bounded cache of accepted tokens (see the module docs).
#[derive(Debug)]
pub struct TokenCache {
    ttl_ms: u64,
    max: usize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    map: std::collections::HashMap<[u8; 32], Entry>,
    /// When expired entries are next swept out (at most once per `ttl`).
    sweep_at_ms: u64,
    /// Bumped by every [`TokenCache::clear`]: an answer read before a clear is not kept.
    generation: u64,
}

#[derive(Debug, Clone)]
struct Entry {
    account: Account,
    /// Until when the store's answer stands (exclusive).
    until_ms: u64,
}

/// The cache's key of a token: its SHA-256.
pub fn key_of(token: &str) -> [u8; 32] {
    chuhe_store::hash_token(token).0
}

impl TokenCache {
    /// Keeps at most `max` tokens, each for `ttl_ms` after the store accepted it; a `ttl_ms`
    /// of 0 keeps none (every check asks the store).
    pub fn new(ttl_ms: u64, max: usize) -> TokenCache {
        TokenCache {
            ttl_ms,
            max,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock only means a panic elsewhere mid-insert; the map is still a map.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The account of a token the store accepted less than `ttl` before `now_ms`.
    pub fn get(&self, key: &[u8; 32], now_ms: u64) -> Option<Account> {
        if self.ttl_ms == 0 {
            return None;
        }
        let g = self.lock();
        g.map
            .get(key)
            .filter(|e| now_ms < e.until_ms)
            .map(|e| e.account.clone())
    }

    /// The current generation, to pass to [`put`](Self::put): read before asking the store.
    pub fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// Remembers that the store accepted a token at `checked_ms` (the time the check began,
    /// so an answer that took long does not stand longer than `ttl` after it was read).
    /// `generation` is [`generation`](Self::generation) from before the store was asked: an
    /// answer that a revocation here may have overtaken (a clear since) is not kept.
    pub fn put(&self, key: [u8; 32], account: Account, checked_ms: u64, generation: u64) {
        if self.ttl_ms == 0 || self.max == 0 {
            return;
        }
        let until_ms = checked_ms.saturating_add(self.ttl_ms);
        let mut g = self.lock();
        if g.generation != generation {
            return;
        }
        if checked_ms >= g.sweep_at_ms || g.map.len() >= self.max {
            g.map.retain(|_, e| checked_ms < e.until_ms);
            g.sweep_at_ms = checked_ms.saturating_add(self.ttl_ms);
            if g.map.len() >= self.max {
                // Full of live entries: start over rather than track recency per lookup.
                g.map.clear();
            }
            if g.map.capacity() > 2 * g.map.len().max(64) {
                g.map.shrink_to_fit();
            }
        }
        g.map.insert(key, Entry { account, until_ms });
    }

    /// Forgets every token (one was revoked here: which one is not known by hash).
    pub fn clear(&self) {
        let mut g = self.lock();
        g.generation += 1;
        g.map.clear();
        g.map.shrink_to_fit();
    }

    /// Tokens held now (expired ones included until the next sweep).
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Whether no token is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persist::Role;

    fn acc(id: i64) -> Account {
        Account {
            id,
            name: format!("p{id}"),
            role: Role::Player,
        }
    }

    #[test]
    fn an_entry_stands_for_ttl_after_its_check_and_no_longer() {
        let c = TokenCache::new(10_000, 100);
        let k = key_of("chuhe_a");
        assert_eq!(c.get(&k, 1_000), None);
        c.put(k, acc(1), 1_000, 0);
        assert_eq!(c.get(&k, 1_000).map(|a| a.id), Some(1));
        assert_eq!(c.get(&k, 10_999).map(|a| a.id), Some(1));
        assert_eq!(c.get(&k, 11_000), None, "expired at checked + ttl");
        assert_eq!(c.get(&key_of("chuhe_b"), 1_000), None);
    }

    #[test]
    fn ttl_zero_keeps_nothing() {
        let c = TokenCache::new(0, 100);
        let k = key_of("chuhe_a");
        c.put(k, acc(1), 0, 0);
        assert_eq!(c.get(&k, 0), None);
        assert!(c.is_empty());
    }

    #[test]
    fn expired_entries_are_swept_and_the_size_is_bounded() {
        let c = TokenCache::new(1_000, 3);
        for i in 0..3 {
            c.put(key_of(&format!("t{i}")), acc(i), 0, 0);
        }
        assert_eq!(c.len(), 3);
        // Full of live entries: the cache starts over, never holding more than `max`.
        c.put(key_of("t3"), acc(3), 10, 0);
        assert_eq!(c.len(), 1);
        assert_eq!(c.get(&key_of("t3"), 10).map(|a| a.id), Some(3));
        // After a ttl, the next insert sweeps the expired ones out.
        c.put(key_of("t4"), acc(4), 500, 0);
        assert_eq!(c.len(), 2);
        c.put(key_of("t5"), acc(5), 2_000, 0);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn clear_forgets_everything_and_answers_read_before_it() {
        let c = TokenCache::new(10_000, 100);
        let before = c.generation();
        c.put(key_of("t"), acc(1), 0, before);
        c.clear();
        assert_eq!(c.get(&key_of("t"), 1), None);
        // An answer the store gave before the clear (a revocation here) is not kept.
        c.put(key_of("t"), acc(1), 2, before);
        assert_eq!(c.get(&key_of("t"), 3), None);
        c.put(key_of("t"), acc(1), 2, c.generation());
        assert_eq!(c.get(&key_of("t"), 3).map(|a| a.id), Some(1));
    }
}
