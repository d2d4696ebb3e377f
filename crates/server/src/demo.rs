//! `chuhe serve --demo`: demo accounts, random-mover bots that keep casual games going, and a
//! small demo league (4 teams × 3 boards, double round robin, accelerated clocks) whose bot
//! captains submit lineups and choose armageddon colours and whose bot players play every board,
//! so a newcomer sees boards move, a team match with its score and a standings table at once.
//! One team's captain ([`HUMAN_TEAM`]) is left to a person: its bot submits a lineup only at the
//! last moment when the person has not.
//!
//! Everything is found again by name or key, so running the demo again on the same database
//! carries on where it stopped instead of piling up new accounts beside stale games:
//!
//! * accounts by name and role (`Demo Red`, `Random Bot 1`, …);
//! * the two humans' game by the key `demo/players/N`: the first N whose game is unfinished
//!   (its clocks start when both players have joined, so it never flags while nobody is there);
//! * each bot pair's game by the key `demo/bots/P/N` (the bots play it to its end, then the next
//!   N; a game left unfinished by a stop is resumed, its clocks credited for the outage);
//! * the demo league by its name (`chuhe demo league (season N)`): the newest season carries
//!   on (its unstarted rounds moved to just after the start when their time passed meanwhile);
//!   a finished season is followed by a new one. Never two at once.
//!
//! A bot is an in-process client: it talks to its game through the same requests and outbox a
//! websocket connection uses, and to the league through the league's handle, with the
//! account of the captain or player it stands for.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use chuhe_proto::v1::{game_event, server_message};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::admin;
pub use crate::config::{Demo, Pace, Started};
use crate::env::Env;
use crate::league::core::{BoardKey, ColourName, League, LeagueCommand, TeamSide};
use crate::league::runner::{self, LeagueHandle, account};
use crate::league::spec::EventSpec;
use crate::outbox::{Out, Outbox};
use crate::persist::{Account, NewGame, Persist, PersistError, Role};
use crate::request::{Body, Principal, Request};
use chuhe_game::Actor;

/// The `event` of the demo's casual games.
pub const CASUAL_EVENT: &str = "chuhe demo";
/// The demo league's name; each season's is this and its number.
pub const LEAGUE_NAME: &str = "chuhe demo league";
/// Bot pairs playing casual games.
const PAIRS: usize = 2;
/// The team whose captain is left to a person: its bot captain submits a lineup only when the
/// deadline is this close and nobody has.
pub const HUMAN_TEAM: usize = 0;
const HUMAN_GRACE_MS: u64 = 5_000;

/// Whether a league is a season of the demo league.
pub fn is_demo_league(name: &str) -> bool {
    name.starts_with(LEAGUE_NAME)
}

/// A demo account and a token issued for it at this start.
#[derive(Debug, Clone)]
pub struct Person {
    pub id: i64,
    pub name: String,
    pub token: String,
}

/// What the demo seeding found or created.
#[derive(Debug, Clone)]
pub struct DemoCast {
    pub red: Person,
    pub black: Person,
    pub arbiter: Person,
    pub organizer: Person,
    /// The humans' game (starts when both have joined).
    pub game_for_players: i64,
    /// Each bot pair's current game: (game, red, black).
    pub bot_games: Vec<(i64, i64, i64)>,
}

/// A demo game: the first of `{prefix}/1`, `{prefix}/2`, … that is not finished (created when
/// missing). Returns its id and the number in its key.
async fn current_game(
    p: &dyn Persist,
    prefix: &str,
    red: i64,
    black: i64,
    time_control: &str,
    start_mode: &str,
    now_ms: u64,
) -> Result<(i64, u32), PersistError> {
    let mut n = 1u32;
    loop {
        let key = format!("{prefix}/{n}");
        match p.game_by_key(&key).await? {
            Some(g) if g.is_finished() => n += 1,
            Some(g) => return Ok((g.id.0, n)),
            None => {
                let g = p
                    .create_game(NewGame {
                        red: chuhe_store::PrincipalId(red),
                        black: chuhe_store::PrincipalId(black),
                        time_control: time_control.into(),
                        ruleset: "cxa".into(),
                        start_fen: chuhe_rules::START_FEN.into(),
                        broadcast_delay: chuhe_store::BroadcastDelay::default(),
                        event: Some(CASUAL_EVENT.into()),
                        round: None,
                        board: None,
                        scheduled_start_ms: None,
                        created_at_ms: now_ms as i64,
                        start_mode: start_mode.into(),
                        lateness_limit_ms: 0,
                        key: Some(key),
                    })
                    .await?;
                return Ok((g.id.0, n));
            }
        }
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Finds or creates the demo accounts, issues their tokens, and finds or creates the humans'
/// game and each bot pair's game. Run before the server starts (it needs only the store).
pub async fn seed(p: &dyn Persist) -> Result<DemoCast, admin::AdminError> {
    let mut people = Vec::new();
    for (name, role) in [
        ("Demo Red", Role::Player),
        ("Demo Black", Role::Player),
        ("Demo Arbiter", Role::Arbiter),
        ("Demo Organizer", Role::Organizer),
    ] {
        let a = account(p, name, role).await?;
        let (token, _) = admin::issue_token(p, a.id, Some("demo".into())).await?;
        people.push(Person {
            id: a.id,
            name: a.name,
            token,
        });
    }
    let mut bots = Vec::new();
    for i in 1..=2 * PAIRS {
        bots.push(
            account(p, &format!("Random Bot {i}"), Role::Player)
                .await?
                .id,
        );
    }
    let now = now_ms();
    let (game_for_players, _) = current_game(
        p,
        "demo/players",
        people[0].id,
        people[1].id,
        "15m+10s",
        "players",
        now,
    )
    .await?;
    let mut bot_games = Vec::new();
    for (k, pair) in bots.chunks(2).enumerate() {
        let (red, black) = (pair[0], pair[1]);
        let (game, _) = current_game(p, &pair_prefix(k), red, black, CASUAL, "now", now).await?;
        bot_games.push((game, red, black));
    }
    let mut it = people.into_iter();
    let mut next = || {
        it.next().unwrap_or(Person {
            id: 0,
            name: String::new(),
            token: String::new(),
        })
    };
    Ok(DemoCast {
        red: next(),
        black: next(),
        arbiter: next(),
        organizer: next(),
        game_for_players,
        bot_games,
    })
}

/// The casual bot games' time control.
const CASUAL: &str = "5m+3s";

fn pair_prefix(k: usize) -> String {
    format!("demo/bots/{}", k + 1)
}

/// A tiny xorshift generator: demo moves need no cryptographic randomness.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    fn between(&mut self, (lo, hi): (u64, u64)) -> u64 {
        lo + self.below(hi.saturating_sub(lo) + 1)
    }
}

/// At server start, before the leagues' drivers start: the newest demo season whose next
/// round's time passed while the server was down gets its unstarted rounds moved to just after
/// now (as its organizer would), so they are played one after another instead of all at once.
pub async fn prepare(env: &Env, demo: &Demo) {
    let Some(id) = newest_season(env).await.map(|(id, _)| id) else {
        return;
    };
    let mut league = match runner::load(env.persist.as_ref(), id).await {
        Ok(l) => l,
        Err(e) => {
            warn!(league = id, error = %e, "demo league not readable");
            return;
        }
    };
    if !league.published || finished(&league) {
        return;
    }
    let now = env.time.now_ms();
    let unstarted: Vec<(u32, u64)> = league
        .rounds
        .iter()
        .filter(|r| {
            r.tables
                .iter()
                .all(|t| t.boards.iter().all(|b| b.games.is_empty()))
        })
        .map(|r| (r.number, r.start_ms))
        .collect();
    // Due before its games could be set up and its lineups submitted: moved.
    if unstarted
        .first()
        .is_none_or(|(_, start)| *start >= now + demo.pace.lead_ms / 2)
    {
        return;
    }
    let organizer = Actor {
        id: Some(demo.organizer),
        role: Some(Role::Organizer),
    };
    for (k, (round, _)) in unstarted.into_iter().enumerate() {
        let start_ms = now + demo.pace.lead_ms + k as u64 * demo.pace.every_ms;
        let cmd = LeagueCommand::Reschedule {
            round,
            start_ms,
            deadline_ms: start_ms.saturating_sub(demo.pace.deadline_before_ms),
        };
        if let Err(e) =
            runner::command_stopped(&env.league_deps(), &mut league, cmd, organizer, None).await
        {
            warn!(league = id, round, error = %e, "demo round not moved");
            return;
        }
    }
    info!(
        league = id,
        "demo league's remaining rounds moved to after the restart"
    );
}

/// The newest demo season in the store: (id, season number).
async fn newest_season(env: &Env) -> Option<(i64, u32)> {
    let list = match env.persist.competitions().await {
        Ok(l) => l,
        Err(e) => {
            warn!(error = %e, "cannot list leagues");
            return None;
        }
    };
    let seasons = list.iter().filter(|c| is_demo_league(&c.name));
    let count = seasons.clone().count() as u32;
    seasons.map(|c| c.id.0).max().map(|id| (id, count))
}

fn finished(l: &League) -> bool {
    !l.rounds.is_empty() && l.rounds.iter().all(|r| r.completed)
}

/// Starts the demo on a running server: the bot pairs' games, the demo league (the newest
/// season carries on; a new one when there is none or it has finished) and its bots.
pub async fn start(env: &Env, demo: Demo) {
    for (k, (red, black)) in demo.bot_pairs.iter().enumerate() {
        spawn_pair(env.clone(), k, *red, *black, demo.pace.casual_think_ms);
    }
    let league = match current_season(env, &demo).await {
        Ok(h) => h,
        Err(e) => {
            warn!(error = %e, "the demo league could not be started");
            return;
        }
    };
    if let Some(tx) = &demo.started {
        let captains = captain_tokens(env, &league).await;
        let _ = tx
            .send(Started {
                league: league.id,
                captains,
                human_team: HUMAN_TEAM,
            })
            .await;
    }
    spawn_league_bots(env.clone(), demo, league);
}

/// The running demo season, or a new one (created and published as an organizer does).
async fn current_season(env: &Env, demo: &Demo) -> Result<LeagueHandle, String> {
    let newest = newest_season(env).await;
    if let Some(h) = newest.and_then(|(id, _)| env.leagues.get(id)) {
        if !finished(&h.snapshot()) {
            publish(&h, demo).await?;
            return Ok(h);
        }
    }
    let season = newest.map_or(1, |(_, n)| n + 1);
    new_season(env, demo, season).await
}

async fn publish(h: &LeagueHandle, demo: &Demo) -> Result<(), String> {
    if h.snapshot().published {
        return Ok(());
    }
    let organizer = Actor {
        id: Some(demo.organizer),
        role: Some(Role::Organizer),
    };
    h.command(LeagueCommand::Publish, organizer, None)
        .await
        .map(|_| ())
        .map_err(|e| format!("publishing the demo league: {e}"))
}

/// The demo league's teams: name and players (3 boards and a substitute each).
const TEAMS: [(&str, &str); 4] = [
    ("楚 Chu", "Chu"),
    ("汉 Han", "Han"),
    ("魏 Wei", "Wei"),
    ("吴 Wu", "Wu"),
];

/// The event file of a season, as an organizer would write it.
pub fn season_spec(season: u32, first_round_ms: u64, pace: &Pace) -> Result<EventSpec, String> {
    let teams: Vec<serde_json::Value> = TEAMS
        .iter()
        .map(|(name, short)| {
            serde_json::json!({
                "name": name,
                "players": (1..=4).map(|i| format!("{short} {i}")).collect::<Vec<_>>(),
                "captains": [format!("{short} captain")],
            })
        })
        .collect();
    let ms = |v: u64| v.to_string();
    serde_json::from_value(serde_json::json!({
        "name": format!("{LEAGUE_NAME} (season {season})"),
        "system": "round_robin",
        "legs": 2,
        "boards": 3,
        "result_chain": {"preset": "slow-fast-armageddon", "time_controls": pace.time_controls},
        "lineup": {"system": "free_order", "deadline_before": ms(pace.deadline_before_ms)},
        "lateness": "0",
        "armageddon": {"choose_within": ms(pace.choose_within_ms)},
        "break_between_games": ms(pace.break_ms),
        "games_open_before": ms(pace.open_before_ms),
        "teams": teams,
        "arbiters": ["Demo Arbiter"],
        "schedule": {"first_round": ms(first_round_ms), "every": ms(pace.every_ms)},
    }))
    .map_err(|e| format!("the demo event file: {e}"))
}

async fn new_season(env: &Env, demo: &Demo, season: u32) -> Result<LeagueHandle, String> {
    let first = env.time.now_ms() + demo.pace.lead_ms;
    let spec = season_spec(season, first, &demo.pace)?;
    let h = runner::create(&env.league_deps(), spec, Some(demo.organizer))
        .await
        .map_err(|e| format!("creating the demo league: {e}"))?;
    publish(&h, demo).await?;
    info!(league = h.id, season, "demo league created and published");
    Ok(h)
}

/// A token for each team's captain (labelled like the organizer API's).
async fn captain_tokens(env: &Env, h: &LeagueHandle) -> Vec<(String, String, String)> {
    let l = h.snapshot();
    let mut out = Vec::new();
    for (i, t) in l.teams.iter().enumerate() {
        let Some(&captain) = t.accounts.captains.first() else {
            continue;
        };
        let name = l.spec.teams[i]
            .captains
            .first()
            .cloned()
            .unwrap_or_default();
        let label = Some(format!("league {} captain", l.id));
        match env.persist.issue_token(captain, label).await {
            Ok((token, _)) => out.push((t.name.clone(), name, token)),
            Err(e) => warn!(error = %e, "demo captain token not issued"),
        }
    }
    out
}

/// The league's bots: captains submit every lineup they owe, choosers choose the armageddon
/// colour, and every game of the league is played. When the season is over, the next one is
/// created (after `next_season_after_ms`) and played the same way.
fn spawn_league_bots(env: Env, demo: Demo, first: LeagueHandle) {
    let mut shutdown = env.shutdown.clone();
    tokio::spawn(async move {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ first.id as u64);
        let mut h = first;
        let mut done = Done::default();
        let mut state = h.state.clone();
        loop {
            let l = state.borrow_and_update().clone();
            act(&env, &demo, &h, &l, &mut done, &mut rng).await;
            if finished(&l) {
                let pause = Duration::from_millis(demo.pace.next_season_after_ms);
                tokio::select! {
                    _ = shutdown.changed() => return,
                    _ = tokio::time::sleep(pause) => {}
                }
                match current_season(&env, &demo).await {
                    Ok(next) => {
                        h = next;
                        state = h.state.clone();
                        done = Done::default();
                    }
                    Err(e) => warn!(error = %e, "next demo season not started"),
                }
                continue;
            }
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = state.changed() => {}
                // Deadlines and starts pass without a new entry.
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        }
    });
}

/// What the league's bots have done already.
#[derive(Default)]
struct Done {
    lineups: HashSet<(u32, u32, usize)>,
    choices: HashSet<(BoardKey, u32)>,
    games: HashSet<i64>,
}

async fn act(env: &Env, demo: &Demo, h: &LeagueHandle, l: &League, done: &mut Done, rng: &mut Rng) {
    let now = env.time.now_ms();
    for r in &l.rounds {
        for (k, t) in r.tables.iter().enumerate() {
            let table = k as u32 + 1;
            // The captains' lineups: any 3 of the 4, in any order (12.3 free order).
            for side in 0..2 {
                let team = t.teams[side];
                // The person captaining HUMAN_TEAM submits; the bot only stands in at the end.
                let human_waits = team == HUMAN_TEAM && now + HUMAN_GRACE_MS < r.deadline_ms;
                if t.revealed.is_some()
                    || t.submitted[side].is_some()
                    || now >= r.deadline_ms
                    || human_waits
                    || !done.lineups.insert((r.number, table, side))
                {
                    continue;
                }
                let Some(&captain) = l.teams[team].accounts.captains.first() else {
                    continue;
                };
                let mut names: Vec<String> = l.spec.teams[team]
                    .players
                    .iter()
                    .map(|p| p.name().to_string())
                    .collect();
                for i in (1..names.len()).rev() {
                    names.swap(i, rng.below(i as u64 + 1) as usize);
                }
                names.truncate(l.rules.event.boards as usize);
                let cmd = LeagueCommand::SubmitLineup {
                    round: r.number,
                    table,
                    team,
                    players: names,
                };
                if let Err(e) = h.command(cmd, player(captain), None).await {
                    warn!(league = l.id, round = r.number, table, error = %e, "demo lineup refused");
                }
            }
            for (bi, b) in t.boards.iter().enumerate() {
                let at = BoardKey {
                    round: r.number,
                    table,
                    board: bi as u32 + 1,
                };
                // The armageddon's chooser picks a colour.
                if let Some(c) = b.choice.as_ref().filter(|c| c.chooser_colour.is_none()) {
                    if done.choices.insert((at, c.stage)) {
                        choose(l, h, t, at, c.chooser, rng).await;
                    }
                }
                for g in &b.games {
                    if g.finished.is_none() && done.games.insert(g.game) {
                        let seed = rng.next();
                        spawn_league_game(
                            env.clone(),
                            g.game,
                            g.red,
                            g.black,
                            g.start_ms,
                            demo.pace.think_ms,
                            seed,
                        );
                    }
                }
            }
        }
    }
}

fn player(id: i64) -> Actor {
    Actor {
        id: Some(id),
        role: Some(Role::Player),
    }
}

async fn choose(
    l: &League,
    h: &LeagueHandle,
    t: &crate::league::core::state::Table,
    at: BoardKey,
    chooser: TeamSide,
    rng: &mut Rng,
) {
    let Some((id, _)) = l.player_of(t, chooser, at.board) else {
        return;
    };
    let colour = if rng.below(3) == 0 {
        ColourName::Red
    } else {
        ColourName::Black
    };
    let cmd = LeagueCommand::ChooseColour { at, colour };
    if let Err(e) = h.command(cmd, player(id), None).await {
        warn!(league = l.id, %at, error = %e, "demo colour choice refused");
    }
}

/// Plays a league game from its start to its end.
fn spawn_league_game(
    env: Env,
    game: i64,
    red: i64,
    black: i64,
    start_ms: u64,
    think: (u64, u64),
    seed: u64,
) {
    let mut shutdown = env.shutdown.clone();
    tokio::spawn(async move {
        let mut rng = Rng(seed | 1);
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = tokio::time::sleep_until(env.time.instant_at(start_ms)) => {}
        }
        tokio::select! {
            _ = shutdown.changed() => {}
            r = play(&env, game, red, black, think, &mut rng) => {
                if let Err(e) = r {
                    debug!(game, error = %e, "demo league game stopped");
                }
            }
        }
    });
}

/// Runs a bot pair's games forever (until shutdown): its current game (resumed if a stop left
/// it unfinished), then the next.
fn spawn_pair(env: Env, k: usize, red: i64, black: i64, think: (u64, u64)) {
    let mut shutdown = env.shutdown.clone();
    tokio::spawn(async move {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (k as u64 + 1));
        loop {
            tokio::select! {
                _ = shutdown.changed() => return,
                r = pair_game(&env, k, red, black, think, &mut rng) => {
                    if let Err(e) = r {
                        debug!(error = %e, "demo game stopped");
                    }
                }
            }
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = tokio::time::sleep(Duration::from_secs(3)) => {}
            }
        }
    });
}

async fn pair_game(
    env: &Env,
    k: usize,
    red: i64,
    black: i64,
    think: (u64, u64),
    rng: &mut Rng,
) -> Result<(), String> {
    let now = env.time.now_ms();
    let (game, _) = current_game(
        env.persist.as_ref(),
        &pair_prefix(k),
        red,
        black,
        CASUAL,
        "now",
        now,
    )
    .await
    .map_err(|e| e.to_string())?;
    info!(game, "demo bot game under way");
    play(env, game, red, black, think, rng).await
}

/// Plays both sides of a game with random legal moves until it ends, resuming from wherever
/// it stands.
async fn play(
    env: &Env,
    game: i64,
    red: i64,
    black: i64,
    think: (u64, u64),
    rng: &mut Rng,
) -> Result<(), String> {
    let handle = env
        .registry
        .get_or_load(game)
        .await
        .map_err(|e| e.to_string())?;
    let principal = |id: i64| {
        Arc::new(Principal {
            account: Some(Account {
                id,
                name: String::new(),
                role: Role::Player,
            }),
        })
    };
    let (red, black) = (principal(red), principal(black));
    let (out, mut rx, _kick) =
        Outbox::new(u64::MAX - game as u64, chuhe_proto::Encoding::Proto, 1024);
    let send = |body: Body, who: &Arc<Principal>| {
        handle
            .send(Request {
                req: 0,
                who: who.clone(),
                out: out.clone(),
                lag: Duration::ZERO,
                received: Instant::now(),
                body,
            })
            .map_err(|e| e.to_string())
    };
    // The position so far: the subscription's snapshot, then each move.
    let mut fen: Option<String> = None;
    let mut ply = 0u32;
    let subscribe = || {
        let body = Body::Subscribe {
            last_seq: 0,
            relay: None,
        };
        send(body, &red)
    };
    subscribe()?;
    loop {
        if let Some(f) = &fen {
            let pos = chuhe_rules::Position::from_fen(f).map_err(|e| e.to_string())?;
            if pos.outcome().is_none() {
                tokio::time::sleep(Duration::from_millis(rng.between(think))).await;
                let list: Vec<_> = pos.legal_moves().iter().copied().collect();
                if !list.is_empty() {
                    let m = list[rng.below(list.len() as u64) as usize];
                    let who = if pos.side_to_move() == chuhe_rules::Color::Red {
                        &red
                    } else {
                        &black
                    };
                    send(Body::mv(ply + 1, &m.to_iccs(), false), who)?;
                }
            }
        }
        // Wait for the move (or the end, or a fresh snapshot) to come back.
        loop {
            let Some(item) = rx.recv().await else {
                return Ok(());
            };
            let msg = match &item {
                Out::Shared(f) => f.message().clone(),
                Out::Own(m) => (**m).clone(),
            };
            match msg.kind {
                Some(server_message::Kind::Snapshot(s)) => {
                    if s.finished {
                        return Ok(());
                    }
                    fen = Some(s.fen);
                    ply = s.moves.len() as u32;
                    break;
                }
                Some(server_message::Kind::Event(e)) => match e.kind {
                    Some(game_event::Kind::Move(m)) => {
                        if let Some(r) = m.r#move {
                            fen = Some(r.fen);
                            ply = r.ply;
                        }
                        break;
                    }
                    Some(game_event::Kind::Ended(_)) => return Ok(()),
                    _ => {}
                },
                Some(server_message::Kind::Error(e)) => {
                    // Refused (not started yet, or our view is stale): look again shortly.
                    debug!(game, code = %e.code, "demo move refused");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    subscribe()?;
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::persist::MemoryPersist;

    #[tokio::test]
    async fn a_second_seeding_finds_the_same_accounts_and_games() {
        let p = MemoryPersist::default();
        let a = seed(&p).await.unwrap();
        let b = seed(&p).await.unwrap();
        for (x, y) in [
            (&a.red, &b.red),
            (&a.black, &b.black),
            (&a.arbiter, &b.arbiter),
            (&a.organizer, &b.organizer),
        ] {
            assert_eq!((x.id, &x.name), (y.id, &y.name));
            // A fresh token each start (the old ones stay valid).
            assert_ne!(x.token, y.token);
        }
        assert_eq!(a.game_for_players, b.game_for_players);
        assert_eq!(a.bot_games, b.bot_games);
        assert_eq!(a.bot_games.len(), PAIRS);
        // The humans' game waits for both players; the bots' games start at once.
        let g = p.game(a.game_for_players).await.unwrap().unwrap();
        assert_eq!(g.start_mode, "players");
        assert_eq!(g.key.as_deref(), Some("demo/players/1"));
        let g = p.game(a.bot_games[1].0).await.unwrap().unwrap();
        assert_eq!(
            (g.start_mode.as_str(), g.key.as_deref()),
            ("now", Some("demo/bots/2/1"))
        );
    }

    #[test]
    fn every_season_file_is_a_valid_double_round_robin() {
        let spec = season_spec(3, 1_800_000_000_000, &Pace::default()).unwrap();
        assert_eq!(spec.name, "chuhe demo league (season 3)");
        assert!(is_demo_league(&spec.name));
        let rules = spec.rules().unwrap();
        assert_eq!(
            rules.system,
            crate::league::spec::System::RoundRobin { legs: 2 }
        );
        assert_eq!(rules.event.boards, 3);
        assert_eq!(rules.lateness_ms, 0);
        let times = spec.round_times(&rules, 6).unwrap();
        assert_eq!(times[0], (1_800_000_000_000, 1_800_000_000_000 - 25_000));
        assert_eq!(times[5].0 - times[0].0, 5 * 360_000);
    }
}
