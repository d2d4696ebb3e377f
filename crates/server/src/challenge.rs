//! Casual games from the browser: open challenges. A signed-in player offers a game (any time
//! control the clocks accept — increments, move-count periods, 读秒 — and a colour, or random);
//! the challenge gets a link to share and stands in the open list; another player accepts it
//! and the game is created (as `POST /api/v1/games` creates one, its clocks starting when both
//! players have joined) for both.
//!
//! Challenges live in memory (`Challenges` in `Env`; the routes are in `challenge_http`): a restart drops the open ones (the games
//! created from accepted ones are ordinary games, stored and recovered as any other). With
//! several nodes they live on one node, the holder of the `challenges` lease: any other node
//! forwards the challenge routes there (`node::forward_challenges`), so every node lists and
//! accepts the same challenges; when that node stops or loses the lease, the next node asked
//! takes it, and the open challenges of the old one are gone (their creators offer again).
//! Each player has at most one open challenge; an open challenge expires after
//! [`EXPIRY_MS`]; an accepted one is kept [`KEEP_ACCEPTED_MS`] so that its creator's page
//! learns the game.

use std::collections::BTreeMap;
use std::sync::Mutex;

use axum::http::StatusCode;
use serde::Serialize;

use crate::persist::Account;

/// An open challenge expires after 30 minutes.
pub const EXPIRY_MS: u64 = 30 * 60_000;
/// An accepted challenge is kept 10 minutes (its creator's page follows it to the game).
pub const KEEP_ACCEPTED_MS: u64 = 10 * 60_000;
/// The time control when none is given.
pub const DEFAULT_TIME_CONTROL: &str = "15m+10s";
/// The longest time-control text taken.
const MAX_TC_LEN: usize = 100;

/// The creator's colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Colour {
    Red,
    Black,
    Random,
}

impl Colour {
    pub fn parse(s: &str) -> Option<Colour> {
        match s.trim().to_ascii_lowercase().as_str() {
            "red" => Some(Colour::Red),
            "black" => Some(Colour::Black),
            "" | "random" => Some(Colour::Random),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChallengeState {
    Open,
    /// Being accepted: the game is being created.
    Accepting,
    Accepted,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Challenge {
    pub id: String,
    pub creator_id: String,
    pub creator_name: String,
    pub time_control: String,
    pub colour: Colour,
    pub state: ChallengeState,
    pub created_at_ms: u64,
    pub expires_at_ms: u64,
    /// Once accepted: the game, its opponent and who has Red.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub game_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opponent_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub red_id: Option<String>,
}

/// Why a challenge operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChallengeError {
    #[error("no open challenge {0} (it was withdrawn, accepted or has expired)")]
    NotFound(u64),
    #[error("you already have an open challenge ({0}); withdraw it first")]
    Exists(u64),
    #[error("this is your own challenge")]
    Own,
    #[error("the challenge was just accepted by someone else")]
    Taken,
    #[error("only its creator may withdraw a challenge")]
    NotCreator,
    #[error("{0}")]
    Invalid(String),
}

impl ChallengeError {
    pub fn code(&self) -> &'static str {
        match self {
            ChallengeError::NotFound(_) => "challenge_not_found",
            ChallengeError::Exists(_) => "challenge_exists",
            ChallengeError::Own => "own_challenge",
            ChallengeError::Taken => "challenge_taken",
            ChallengeError::NotCreator => "permission_denied",
            ChallengeError::Invalid(_) => "invalid_argument",
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ChallengeError::NotFound(_) => StatusCode::NOT_FOUND,
            ChallengeError::Exists(_) | ChallengeError::Own | ChallengeError::Taken => {
                StatusCode::CONFLICT
            }
            ChallengeError::NotCreator => StatusCode::FORBIDDEN,
            ChallengeError::Invalid(_) => StatusCode::BAD_REQUEST,
        }
    }
}

/// Parses and checks a time control as the game's clock will.
pub fn check_time_control(text: &str) -> Result<String, ChallengeError> {
    let tc = text.trim();
    let tc = if tc.is_empty() {
        DEFAULT_TIME_CONTROL
    } else {
        tc
    };
    if tc.len() > MAX_TC_LEN {
        return Err(ChallengeError::Invalid(format!(
            "the time control is longer than {MAX_TC_LEN} characters"
        )));
    }
    tc.parse::<chuhe_clock::Controls>()
        .map_err(|e| ChallengeError::Invalid(format!("time control {tc:?}: {e}")))?;
    Ok(tc.to_string())
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    all: BTreeMap<u64, Challenge>,
}

/// The challenges of this node. Time is passed in.
#[derive(Debug, Default)]
pub struct Challenges {
    inner: Mutex<Inner>,
}

fn id_of(c: &Challenge) -> u64 {
    c.id.parse().unwrap_or(0)
}

impl Challenges {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave a challenge half-changed (every change
        // is one assignment), so a poisoned lock is still usable.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn prune(inner: &mut Inner, now: u64) {
        inner.all.retain(|_, c| match c.state {
            ChallengeState::Open | ChallengeState::Accepting => c.expires_at_ms > now,
            ChallengeState::Accepted => c.expires_at_ms + KEEP_ACCEPTED_MS > now,
        });
    }

    /// The open challenges, newest first.
    pub fn open(&self, now: u64) -> Vec<Challenge> {
        let mut g = self.lock();
        Self::prune(&mut g, now);
        g.all
            .values()
            .rev()
            .filter(|c| c.state == ChallengeState::Open)
            .cloned()
            .collect()
    }

    /// One challenge, open or accepted.
    pub fn get(&self, id: u64, now: u64) -> Result<Challenge, ChallengeError> {
        let mut g = self.lock();
        Self::prune(&mut g, now);
        g.all.get(&id).cloned().ok_or(ChallengeError::NotFound(id))
    }

    /// A new challenge by `creator` (at most one open per player).
    pub fn create(
        &self,
        creator: &Account,
        time_control: &str,
        colour: &str,
        now: u64,
    ) -> Result<Challenge, ChallengeError> {
        let time_control = check_time_control(time_control)?;
        let colour = Colour::parse(colour).ok_or_else(|| {
            ChallengeError::Invalid(format!("colour {colour:?}: use red, black or random"))
        })?;
        let mut g = self.lock();
        Self::prune(&mut g, now);
        let creator_id = creator.id.to_string();
        if let Some(c) = g
            .all
            .values()
            .find(|c| c.creator_id == creator_id && c.state != ChallengeState::Accepted)
        {
            return Err(ChallengeError::Exists(id_of(c)));
        }
        g.next += 1;
        let id = g.next;
        let c = Challenge {
            id: id.to_string(),
            creator_id,
            creator_name: creator.name.clone(),
            time_control,
            colour,
            state: ChallengeState::Open,
            created_at_ms: now,
            expires_at_ms: now + EXPIRY_MS,
            game_id: None,
            opponent_name: None,
            red_id: None,
        };
        g.all.insert(id, c.clone());
        Ok(c)
    }

    /// Reserves challenge `id` for `acceptor` (nobody else can take it meanwhile); answers
    /// the challenge with the colours decided: `(challenge, red is the creator)`.
    pub fn take(
        &self,
        id: u64,
        acceptor: &Account,
        now: u64,
        coin: bool,
    ) -> Result<(Challenge, bool), ChallengeError> {
        let mut g = self.lock();
        Self::prune(&mut g, now);
        let c = g.all.get_mut(&id).ok_or(ChallengeError::NotFound(id))?;
        if c.creator_id == acceptor.id.to_string() {
            return Err(ChallengeError::Own);
        }
        match c.state {
            ChallengeState::Open => {}
            ChallengeState::Accepting | ChallengeState::Accepted => {
                return Err(ChallengeError::Taken);
            }
        }
        c.state = ChallengeState::Accepting;
        let creator_red = match c.colour {
            Colour::Red => true,
            Colour::Black => false,
            Colour::Random => coin,
        };
        Ok((c.clone(), creator_red))
    }

    /// The game of a taken challenge was created.
    pub fn settle(&self, id: u64, game_id: &str, opponent: &Account, red_id: &str, now: u64) {
        let mut g = self.lock();
        if let Some(c) = g.all.get_mut(&id) {
            c.state = ChallengeState::Accepted;
            c.game_id = Some(game_id.to_string());
            c.opponent_name = Some(opponent.name.clone());
            c.red_id = Some(red_id.to_string());
            // Kept a while from now for the creator's page.
            c.expires_at_ms = now;
        }
    }

    /// The game of a taken challenge could not be created: it is open again.
    pub fn reopen(&self, id: u64) {
        let mut g = self.lock();
        if let Some(c) = g.all.get_mut(&id) {
            if c.state == ChallengeState::Accepting {
                c.state = ChallengeState::Open;
            }
        }
    }

    /// Its creator withdraws an open challenge.
    pub fn cancel(&self, id: u64, who: &Account, now: u64) -> Result<(), ChallengeError> {
        let mut g = self.lock();
        Self::prune(&mut g, now);
        let c = g.all.get(&id).ok_or(ChallengeError::NotFound(id))?;
        if c.creator_id != who.id.to_string() {
            return Err(ChallengeError::NotCreator);
        }
        if c.state != ChallengeState::Open {
            return Err(ChallengeError::Taken);
        }
        g.all.remove(&id);
        Ok(())
    }
}

// --- HTTP ---

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::persist::Role;

    fn acct(id: i64, name: &str) -> Account {
        Account {
            id,
            name: name.into(),
            role: Role::Player,
        }
    }

    #[test]
    fn every_clock_text_form_is_taken_and_nonsense_is_refused_in_words() {
        for tc in [
            "15m+10s",
            "30m|3x30s",
            "40/90m,10/15m",
            "red:5m;black:4m",
            "0|60s",
            "",
        ] {
            assert!(check_time_control(tc).is_ok(), "{tc}");
        }
        assert_eq!(check_time_control("").unwrap(), DEFAULT_TIME_CONTROL);
        let e = check_time_control("soon").unwrap_err();
        assert_eq!(e.code(), "invalid_argument");
        assert!(e.to_string().contains("soon"));
        assert!(check_time_control(&"1".repeat(200)).is_err());
    }

    #[test]
    fn one_open_challenge_per_player_expiry_and_withdrawal() {
        let r = Challenges::default();
        let a = acct(1, "甲");
        let c = r.create(&a, "30m|3x30s", "black", 1000).unwrap();
        assert_eq!(c.colour, Colour::Black);
        assert_eq!(
            r.create(&a, "10m", "red", 2000).unwrap_err(),
            ChallengeError::Exists(1)
        );
        assert_eq!(
            r.create(&a, "10m", "blue", 2000).unwrap_err().code(),
            "invalid_argument"
        );
        assert_eq!(r.open(2000).len(), 1);
        // Expired: gone from the list and from a direct look, and a new one may be made.
        assert!(r.open(1000 + EXPIRY_MS).is_empty());
        assert_eq!(
            r.get(1, 1000 + EXPIRY_MS).unwrap_err().code(),
            "challenge_not_found"
        );
        let c2 = r.create(&a, "", "random", 1000 + EXPIRY_MS).unwrap();
        // Only the creator withdraws it.
        assert_eq!(
            r.cancel(2, &acct(2, "乙"), 0).unwrap_err(),
            ChallengeError::NotCreator
        );
        r.cancel(2, &a, 1000 + EXPIRY_MS).unwrap();
        assert!(r.open(1000 + EXPIRY_MS).is_empty());
        assert_eq!(c2.time_control, DEFAULT_TIME_CONTROL);
    }

    #[test]
    fn accepting_reserves_then_settles_or_reopens() {
        let r = Challenges::default();
        let a = acct(1, "甲");
        let b = acct(2, "乙");
        r.create(&a, "10m+5s", "random", 0).unwrap();
        assert_eq!(r.take(1, &a, 1, true).unwrap_err(), ChallengeError::Own);
        let (_, creator_red) = r.take(1, &b, 1, false).unwrap();
        assert!(!creator_red, "random: the coin decides");
        // Nobody else while the game is being created; not in the open list.
        assert_eq!(
            r.take(1, &acct(3, "丙"), 1, true).unwrap_err(),
            ChallengeError::Taken
        );
        assert!(r.open(1).is_empty());
        r.reopen(1);
        assert_eq!(r.open(1).len(), 1);
        let (_, creator_red) = r.take(1, &b, 2, true).unwrap();
        assert!(creator_red);
        r.settle(1, "42", &b, "1", 3);
        let c = r.get(1, 3).unwrap();
        assert_eq!(c.state, ChallengeState::Accepted);
        assert_eq!(c.game_id.as_deref(), Some("42"));
        assert_eq!(c.opponent_name.as_deref(), Some("乙"));
        // The creator may offer again; the accepted one is kept a while, then dropped.
        r.create(&a, "10m", "red", 4).unwrap();
        assert!(r.get(1, 3 + KEEP_ACCEPTED_MS - 1).is_ok());
        assert!(r.get(1, 3 + KEEP_ACCEPTED_MS).is_err());
    }

    #[test]
    fn colours_parse() {
        assert_eq!(Colour::parse("RED"), Some(Colour::Red));
        assert_eq!(Colour::parse(""), Some(Colour::Random));
        assert_eq!(Colour::parse("green"), None);
    }
}
