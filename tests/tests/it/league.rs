//! Issue 19's must-show league tests, over real websockets and HTTP:
//!
//! * [`a_season_runs_live_end_to_end`]: a 4-team double round robin with 4 boards, accelerated
//!   clocks, scripted captains and players — drawn slow games that go to the colour-swapped
//!   fast game and to the armageddon (drawn: Black wins), a missing lineup (registered order),
//!   a player forfeited for lateness, a withdrawal — whose final standings equal
//!   `chuhe-league`'s on the same results, with the server killed (`kill -9`) and restarted in
//!   the middle of a round without anything lost or doubled.
//! * [`nobody_learns_a_sealed_lineup`], [`lineups_close_at_the_deadline`] and
//!   [`every_role_acts_only_within_its_rights`]: the authorisation rules, each refusal with
//!   its stable code.
//!
//! The season is scripted by [`plan`] (what happens on every board) and checked against what
//! `chuhe-league` makes of the same plan; a director ([`Season`]) follows the league's public
//! stream as a spectator and plays every game the league sets up, one task per game.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;

use anyhow::{Context, Result, bail, ensure};
use chuhe_e2e::*;
use chuhe_league::chain::{BoardRecord, GameResult, GameScoring, PlayedGame, ResultChain};
use chuhe_league::colour::side_colour;
use chuhe_league::entities::TimeControlText;
use chuhe_league::matches::{EventRules, MatchRecord, MatchScoring, evaluate_match};
use chuhe_league::standings::{
    Fixture, StandingsInput, System, TeamMatch, Withdrawal, chains, standings,
};
use chuhe_league::{Colour, Side};
use chuhe_proto::Encoding;
use chuhe_proto::v1::{self as w, client_message, game_event};
use chuhe_server::Config;
use serde_json::{Value, json};
use tokio::task::JoinSet;

const EXE: &str = env!("CARGO_BIN_EXE_chuhe-e2e-server");

const TEAMS: [&str; 4] = ["A", "B", "C", "D"];
const BOARDS: u32 = 4;
const ROUNDS: u32 = 6;
const TIME_CONTROLS: [&str; 3] = ["5m+2s", "3m+2s", "red:2m;black:90s"];
/// The moves every scripted game plays, in order (legal from the start position).
const OPENING: [&str; 6] = ["h2e2", "h9g7", "h0g2", "i9h9", "b0c2", "b9c7"];

/// The round in which the server is killed, and the team that withdraws after round 4.
const KILL_ROUND: u32 = 3;
const WITHDRAWN: usize = 3;
const WITHDRAWN_AFTER: u32 = 4;
/// The match whose second team submits no lineup (round, table).
const MISSING: (u32, u32) = (2, 1);

/// A `#[tokio::test]` running `body` on every backend (SQLite; PostgreSQL when
/// `CHUHE_TEST_DATABASE_URL` is set), naming the backend on failure.
macro_rules! on_every_backend {
    ($(#[$doc:meta])* $test:ident, $body:ident) => {
        $(#[$doc])*
        #[tokio::test]
        async fn $test() -> Result<()> {
            for b in backends() {
                $body(b).await.with_context(|| format!("on {b}"))?;
            }
            Ok(())
        }
    };
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The event file: 4 teams of 5 (4 boards and a substitute), slow → fast → armageddon at
/// seconds-scale settings. Every round is far in the future; the tests move each one to "now"
/// when they are ready for it (the organizer's reschedule).
fn spec(name: &str) -> Value {
    let base = now_ms() + 3_600_000;
    json!({
        "name": name,
        "system": "round_robin",
        "legs": 2,
        "boards": BOARDS,
        "result_chain": {"preset": "slow-fast-armageddon", "time_controls": TIME_CONTROLS},
        "lineup": {"deadline_before": "30m"},
        "lateness": "6s",
        "armageddon": {"choose_within": "5s"},
        "break_between_games": "500ms",
        "games_open_before": "1m",
        "teams": TEAMS.iter().map(|t| json!({
            "name": format!("队{t}"),
            "players": (1..=5).map(|k| format!("{t}{k}")).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "arbiters": ["裁判长"],
        "schedule": {
            "rounds_at": (0..ROUNDS as u64).map(|r| (base + r * 3_600_000).to_string()).collect::<Vec<_>>(),
        },
    })
}

/// A created, published league with everyone's tokens.
struct LeagueSetup {
    id: String,
    org: String,
    arbiter: String,
    captains: Vec<String>,
    /// principal → token
    tokens: HashMap<i64, String>,
}

impl LeagueSetup {
    async fn create(addr: SocketAddr, org: &str, name: &str) -> Result<LeagueSetup> {
        let (id, issued) = published_league(addr, org, &spec(name)).await?;
        let mut captains = vec![String::new(); TEAMS.len()];
        let mut arbiter = String::new();
        let mut tokens = HashMap::new();
        for t in &issued {
            let token = t["token"].as_str().context("token")?.to_string();
            let pid: i64 = t["principalId"].as_str().context("principalId")?.parse()?;
            match t["role"].as_str() {
                Some("captain") => captains[t["team"].as_u64().context("team")? as usize] = token,
                Some("arbiter") => arbiter = token,
                Some("player") => {
                    tokens.insert(pid, token);
                }
                other => bail!("unexpected role {other:?}"),
            }
        }
        ensure!(captains.iter().all(|c| !c.is_empty()) && !arbiter.is_empty());
        Ok(LeagueSetup {
            id,
            org: org.to_string(),
            arbiter,
            captains,
            tokens,
        })
    }

    fn path(&self, rest: &str) -> String {
        format!("/api/v1/leagues/{}{rest}", self.id)
    }

    /// The organizer moves round `r`: its lineup deadline and start this far from now.
    async fn reschedule(
        &self,
        addr: SocketAddr,
        r: u32,
        deadline_in: u64,
        start_in: u64,
    ) -> Result<()> {
        let now = now_ms();
        self.reschedule_at(addr, r, now + deadline_in, now + start_in)
            .await
    }

    async fn reschedule_at(
        &self,
        addr: SocketAddr,
        r: u32,
        deadline: u64,
        start: u64,
    ) -> Result<()> {
        let body = json!({"start": start.to_string(), "lineup_deadline": deadline.to_string()});
        let (s, v) = http_json(
            addr,
            "POST",
            &self.path(&format!("/rounds/{r}/reschedule")),
            Some(&self.org),
            Some(&body),
        )
        .await?;
        ensure!(s == 200, "reschedule round {r}: {s} {v}");
        Ok(())
    }
}

/// The teams of each round's tables, as `chuhe-league` pairs a 4-team double round robin.
fn fixtures() -> Vec<Vec<[usize; 2]>> {
    chuhe_league::fixtures::round_robin(
        TEAMS.len() as u32,
        chuhe_league::fixtures::RoundRobinOptions {
            legs: 2,
            ..Default::default()
        },
    )
    .expect("a round robin of 4")
    .iter()
    .map(|r| {
        r.pairings
            .iter()
            .map(|p| [p.first as usize - 1, p.second as usize - 1])
            .collect()
    })
    .collect()
}

/// A team's lineup in a round: its first four, or (now and then) its substitute on board 4.
fn lineup(round: u32, team: usize) -> Vec<String> {
    let t = TEAMS[team];
    let last = if (round as usize + team) % 3 == 0 {
        5
    } else {
        4
    };
    [1, 2, 3, last].iter().map(|k| format!("{t}{k}")).collect()
}

/// What happens on a board, in the first (listed) team's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// The slow game is won by this side.
    Slow(Side),
    /// The slow game is drawn; the colour-swapped fast game is won by this side.
    Fast(Side),
    /// Slow and fast drawn; the fast game's Black player picks this colour for itself (None:
    /// lets the time to choose pass, and gets the default, Black); the armageddon is drawn,
    /// so Black wins the board.
    Armageddon(Option<Colour>),
    /// This side's player never comes to the slow game: it loses by lateness (art. 21), the
    /// board is forfeited.
    Late(Side),
}

use Side::{First as F, Second as S};

fn plan(round: u32, table: u32, board: u32) -> Plan {
    use Plan::*;
    let t: [Plan; 4] = match (round, table) {
        (1, 1) => [Armageddon(Some(Colour::Black)), Fast(F), Slow(S), Slow(F)],
        (1, 2) => [Slow(F), Slow(F), Slow(S), Fast(S)],
        (2, 1) => [Slow(S), Slow(F), Late(F), Slow(S)],
        (2, 2) => [Slow(F), Armageddon(Some(Colour::Red)), Slow(F), Late(S)],
        (3, 1) => [Slow(F), Slow(S), Fast(F), Slow(F)],
        (3, 2) => [Slow(S), Slow(S), Slow(F), Fast(S)],
        (4, 1) => [Armageddon(None), Slow(F), Slow(S), Slow(F)],
        (4, 2) => [Slow(F), Slow(S), Slow(S), Slow(F)],
        (5, _) => [Slow(F), Slow(F), Slow(S), Slow(F)],
        _ => [Slow(S), Fast(F), Slow(F), Slow(S)],
    };
    t[board as usize - 1]
}

/// The boards of the kill round that end before the kill (table, board); the others are
/// stopped after two moves and finish after the restart.
const DONE_BEFORE_KILL: [(u32, u32); 3] = [(1, 1), (1, 2), (2, 2)];

fn other(s: Side) -> Side {
    match s {
        F => S,
        S => F,
    }
}

fn colour_of(side: Side, first_colour: Colour) -> Colour {
    match side {
        F => first_colour,
        S => first_colour.opposite(),
    }
}

/// The first team's colour in a stage's game: 13.2 on the slow game, swapped on the fast
/// game; in the armageddon the fast game's Black chooses its own.
fn first_colour(round: u32, table: u32, board: u32, stage: u32) -> Colour {
    let slow = side_colour(F, board);
    match stage {
        0 => slow,
        1 => slow.opposite(),
        _ => {
            let chooser = chooser(board);
            let pick = match plan(round, table, board) {
                Plan::Armageddon(p) => p.unwrap_or(Colour::Black),
                _ => Colour::Black,
            };
            // The chooser took `pick` for itself.
            colour_of(chooser, pick)
        }
    }
}

/// The armageddon's chooser: the team that had Black in the fast game.
fn chooser(board: u32) -> Side {
    if side_colour(F, board).opposite() == Colour::Red {
        S
    } else {
        F
    }
}

fn win(s: Side) -> GameResult {
    match s {
        F => GameResult::FirstWins,
        S => GameResult::SecondWins,
    }
}

/// The board's record as the plan makes it.
fn record(round: u32, table: u32, board: u32) -> BoardRecord {
    let g = |stage: u32, result: GameResult| PlayedGame {
        first_colour: first_colour(round, table, board, stage),
        result,
        fouls: [0, 0],
    };
    match plan(round, table, board) {
        Plan::Slow(w) => BoardRecord::Played(vec![g(0, win(w))]),
        Plan::Fast(w) => BoardRecord::Played(vec![g(0, GameResult::Draw), g(1, win(w))]),
        Plan::Armageddon(_) => BoardRecord::Played(vec![
            g(0, GameResult::Draw),
            g(1, GameResult::Draw),
            g(2, GameResult::Draw),
        ]),
        Plan::Late(s) => BoardRecord::Forfeit { forfeited_by: s },
    }
}

fn rules() -> EventRules {
    let tc = |s: &str| TimeControlText::new(s).expect("a time control");
    EventRules {
        boards: BOARDS,
        game_scoring: GameScoring::TWO_ONE_ZERO,
        chain: ResultChain::slow_fast_armageddon(
            tc(TIME_CONTROLS[0]),
            tc(TIME_CONTROLS[1]),
            tc(TIME_CONTROLS[2]),
        ),
        match_scoring: MatchScoring::default(),
    }
}

fn withdrawn_from(round: u32, teams: [usize; 2]) -> bool {
    round > WITHDRAWN_AFTER && teams.contains(&WITHDRAWN)
}

/// How a scripted game ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// This colour resigns.
    Resign(Colour),
    /// The side to move plays with a draw offer; the other accepts.
    Draw,
    /// This colour never comes; the other waits for the lateness forfeit.
    Absent(Colour),
    /// Both stop after the moves (the kill comes).
    Pause,
}

/// What a stage's game of a board comes to.
fn ending(p: Plan, stage: u32, first: Colour) -> End {
    let resign = |winner: Side| End::Resign(colour_of(other(winner), first));
    match (p, stage) {
        (Plan::Slow(w), _) => resign(w),
        (Plan::Fast(_), 0) => End::Draw,
        (Plan::Fast(w), _) => resign(w),
        (Plan::Armageddon(_), _) => End::Draw,
        (Plan::Late(s), _) => End::Absent(colour_of(s, first)),
    }
}

/// The plies a game ends with (a draw offer comes with one more move).
fn plies_of(end: End, before_end: usize) -> usize {
    match end {
        End::Draw => before_end + 1,
        End::Absent(_) => 0,
        _ => before_end,
    }
}

/// One player's connection to its game: joined (subscribed with its token), with the snapshot.
async fn join(addr: SocketAddr, token: &str, game: &str) -> Result<(Client, w::GameSnapshot)> {
    let mut c = Client::connect(addr, Some(token), Encoding::Json).await?;
    c.subscribe(game, 0).await?;
    let snap = c.expect(snapshot).await?;
    Ok((c, snap))
}

fn started(e: &w::GameEvent) -> Option<()> {
    matches!(e.kind, Some(game_event::Kind::Started(_))).then_some(())
}

/// A scripted game: both players join (or one stays away), play the opening up to `plies`
/// (after a restart: checking that the moves played before it are all there, once), then end
/// it as `end` says.
async fn play(
    addr: SocketAddr,
    game: String,
    red: String,
    black: String,
    plies: usize,
    end: End,
) -> Result<()> {
    let r: Result<()> = async {
        if let End::Absent(c) = end {
            let here = if c == Colour::Red { &black } else { &red };
            let (mut p, _) = join(addr, here, &game).await?;
            let (result, reason) = p.event(ended).await?;
            ensure!(reason == "lateness", "ended by {reason}");
            let want = if c == Colour::Red {
                w::Result::BlackWins
            } else {
                w::Result::RedWins
            };
            ensure!(result == want, "{result:?}");
            p.close().await;
            return Ok(());
        }
        let (mut rc, snap) = join(addr, &red, &game).await?;
        let (mut bc, _) = join(addr, &black, &game).await?;
        ensure!(
            !snap.finished,
            "finished before it was played: {}",
            snap.end_reason
        );
        let so_far: Vec<&str> = snap.moves.iter().map(|m| m.iccs.as_str()).collect();
        ensure!(
            so_far == OPENING[..so_far.len()],
            "the moves so far: {so_far:?}"
        );
        let running = snap.clock.as_ref().map_or(0, |c| c.running);
        if running == w::Side::Unspecified as i32 {
            rc.event(started).await?;
        }
        for (ply, mv) in OPENING.iter().enumerate().take(plies).skip(so_far.len()) {
            let c = if ply % 2 == 0 { &mut rc } else { &mut bc };
            c.play(&game, ply as u32 + 1, mv).await?;
        }
        match end {
            End::Pause | End::Absent(_) => return Ok(()),
            End::Resign(c) => {
                let p = if c == Colour::Red { &mut rc } else { &mut bc };
                let req = p
                    .send(client_message::Kind::Resign(w::Resign {
                        game_id: game.clone(),
                    }))
                    .await?;
                p.reply(req).await?;
            }
            End::Draw => {
                let (mover, answer) = if plies % 2 == 0 {
                    (&mut rc, &mut bc)
                } else {
                    (&mut bc, &mut rc)
                };
                let req = mover
                    .send(client_message::Kind::Move(w::MakeMove {
                        game_id: game.clone(),
                        ply: plies as u32 + 1,
                        r#move: OPENING[plies].into(),
                        offer_draw: true,
                        think_ms: 0,
                    }))
                    .await?;
                mover.reply(req).await?;
                let req = answer
                    .send(client_message::Kind::AnswerDraw(w::AnswerDraw {
                        game_id: game.clone(),
                        accept: true,
                    }))
                    .await?;
                answer.reply(req).await?;
            }
        }
        let (result, reason) = rc.event(ended).await?;
        let want = match end {
            End::Resign(Colour::Red) => (w::Result::BlackWins, "resign"),
            End::Resign(Colour::Black) => (w::Result::RedWins, "resign"),
            _ => (w::Result::Draw, "draw_agreed"),
        };
        ensure!(
            (result, reason.as_str()) == want,
            "ended {result:?} by {reason}"
        );
        rc.close().await;
        bc.close().await;
        Ok(())
    }
    .await;
    r.with_context(|| format!("game {game} ({end:?})"))
}

/// A board's game as the league's stream announced it.
#[derive(Debug, Clone)]
struct GameSeen {
    game: i64,
    red: i64,
    black: i64,
}

type Key = (u32, u32, u32);

fn key(v: &Value) -> Result<Key> {
    let n = |f: &str| {
        v[f].as_u64()
            .map(|x| x as u32)
            .with_context(|| format!("{f} in {v}"))
    };
    Ok((n("round")?, n("table")?, n("board")?))
}

/// The test's director: follows the league's public stream as a spectator and plays every
/// game the league sets up, as the plan says.
struct Season {
    addr: SocketAddr,
    l: LeagueSetup,
    watch: Client,
    /// Every public entry seen live, in order.
    seen: Vec<(u64, String, Value)>,
    games: BTreeMap<(Key, u32), GameSeen>,
    /// game → (outcome, reason)
    finished: BTreeMap<i64, (String, String)>,
    revealed: BTreeMap<(u32, u32), Value>,
    completed: BTreeSet<u32>,
    /// Kill round: its games are stopped after two moves (but those that end before the kill).
    pausing: bool,
    paused: Vec<(Key, u32)>,
    jobs: JoinSet<Result<()>>,
}

impl Season {
    fn token(&self, id: i64) -> Result<String> {
        self.l
            .tokens
            .get(&id)
            .cloned()
            .with_context(|| format!("no token for {id}"))
    }

    fn on_update(&mut self, seq: u64, kind: String, v: Value) -> Result<()> {
        ensure!(
            seq == self.seen.len() as u64 + 1,
            "public seq {seq} after {}: an entry lost or doubled",
            self.seen.len()
        );
        self.seen.push((seq, kind.clone(), v.clone()));
        match kind.as_str() {
            "game_created" => {
                let (round, table, board) = key(&v["at"])?;
                let stage = v["stage"].as_u64().context("stage")? as u32;
                let g = GameSeen {
                    game: v["game"].as_i64().context("game")?,
                    red: v["red"].as_i64().context("red")?,
                    black: v["black"].as_i64().context("black")?,
                };
                let fc = match v["first_colour"].as_str() {
                    Some("red") => Colour::Red,
                    _ => Colour::Black,
                };
                let want = first_colour(round, table, board, stage);
                ensure!(
                    fc == want,
                    "round {round} table {table} board {board} stage {stage}: first team has {fc:?}, not {want:?}"
                );
                let at = (round, table, board);
                ensure!(
                    self.games.insert((at, stage), g.clone()).is_none(),
                    "a second game for {at:?} stage {stage}"
                );
                let p = plan(round, table, board);
                let mut end = ending(p, stage, fc);
                if self.pausing && stage == 0 && !DONE_BEFORE_KILL.contains(&(table, board)) {
                    end = End::Pause;
                    self.paused.push((at, stage));
                }
                let (red, black) = (self.token(g.red)?, self.token(g.black)?);
                self.jobs
                    .spawn(play(self.addr, g.game.to_string(), red, black, 2, end));
            }
            "choice_requested" => {
                let (round, table, board) = key(&v["at"])?;
                let side = match v["chooser"].as_str() {
                    Some("first") => F,
                    _ => S,
                };
                ensure!(side == chooser(board), "chooser {side:?} on board {board}");
                let fast = self
                    .games
                    .get(&((round, table, board), 1))
                    .context("a choice without a fast game")?
                    .clone();
                if let Plan::Armageddon(Some(pick)) = plan(round, table, board) {
                    let (chooser, opponent) = (self.token(fast.black)?, self.token(fast.red)?);
                    let (addr, id) = (self.addr, self.l.id.clone());
                    self.jobs.spawn(async move {
                        let choose = |colour: Colour| {
                            client_message::Kind::LeagueChooseColour(w::LeagueChooseColour {
                                league_id: id.clone(),
                                round,
                                table,
                                board,
                                colour: match colour {
                                    Colour::Red => w::Side::Red as i32,
                                    Colour::Black => w::Side::Black as i32,
                                },
                            })
                        };
                        // The other player of the board cannot choose for the chooser.
                        let mut o = Client::connect(addr, Some(&opponent), Encoding::Proto).await?;
                        let req = o.send(choose(Colour::Black)).await?;
                        ensure!(o.error_code(req).await? == "permission_denied");
                        o.close().await;
                        let mut c = Client::connect(addr, Some(&chooser), Encoding::Proto).await?;
                        let req = c.send(choose(pick)).await?;
                        c.reply(req).await.context("the chooser's colour")?;
                        c.close().await;
                        Ok(())
                    });
                }
            }
            "colour_chosen" => {
                let (round, table, board) = key(&v["at"])?;
                let Plan::Armageddon(pick) = plan(round, table, board) else {
                    bail!("a colour chosen on {round}/{table}/{board}");
                };
                ensure!(v["by_default"].as_bool() == Some(pick.is_none()), "{v}");
                let want = match pick.unwrap_or(Colour::Black) {
                    Colour::Red => "red",
                    Colour::Black => "black",
                };
                ensure!(v["chooser_colour"] == want, "{v}");
            }
            "game_finished" => {
                let game = v["game"].as_i64().context("game")?;
                let outcome = v["outcome"].as_str().unwrap_or_default().to_string();
                let reason = v["reason"].as_str().unwrap_or_default().to_string();
                ensure!(
                    self.finished.insert(game, (outcome, reason)).is_none(),
                    "game {game} finished twice"
                );
            }
            "lineups_revealed" => {
                let round = v["round"].as_u64().context("round")? as u32;
                let table = v["table"].as_u64().context("table")? as u32;
                ensure!(
                    self.revealed
                        .insert((round, table), v["lineups"].clone())
                        .is_none()
                );
            }
            "round_completed" => {
                self.completed
                    .insert(v["round"].as_u64().context("round")? as u32);
            }
            _ => {}
        }
        Ok(())
    }

    /// Follows the stream (and the games' players) until `done` holds; a failed player fails
    /// the test at once.
    async fn until(&mut self, what: &str, done: impl Fn(&Season) -> bool) -> Result<()> {
        while !done(self) {
            tokio::select! {
                u = self.watch.league_next() => {
                    let (seq, kind, v) = u.with_context(|| format!("waiting for {what}"))?;
                    self.on_update(seq, kind, v)?;
                }
                Some(j) = self.jobs.join_next() => j??,
            }
        }
        Ok(())
    }

    /// Every player's script run to its end.
    async fn drain(&mut self) -> Result<()> {
        while let Some(j) = self.jobs.join_next().await {
            j??;
        }
        Ok(())
    }

    /// The captains submit round `r`'s lineups (table 1 over HTTP, table 2 over the
    /// websocket), but the missing one, the withdrawn team's matches, and `skip`.
    async fn lineups(&self, r: u32, skip: &[(u32, Side)]) -> Result<()> {
        for (k, teams) in fixtures()[r as usize - 1].iter().enumerate() {
            let table = k as u32 + 1;
            if withdrawn_from(r, *teams) {
                continue;
            }
            for (side, team) in [(F, teams[0]), (S, teams[1])] {
                if (r, table) == MISSING && side == S || skip.contains(&(table, side)) {
                    continue;
                }
                submit(self.addr, &self.l, r, table, team, table == 2).await?;
            }
        }
        Ok(())
    }

    /// Round `r`: its lineups while it is still far off, then the organizer brings it to
    /// now (the deadline in 200 ms: the missing lineup's; the start in 1.2 s).
    async fn round(&mut self, r: u32) -> Result<()> {
        self.lineups(r, &[]).await?;
        self.l.reschedule(self.addr, r, 200, 1200).await?;
        self.until(&format!("round {r} completed"), |s| {
            s.completed.contains(&r)
        })
        .await
    }
}

/// A captain's lineup (its team's, as [`lineup`] says), over HTTP or the websocket.
async fn submit(
    addr: SocketAddr,
    l: &LeagueSetup,
    r: u32,
    table: u32,
    team: usize,
    ws: bool,
) -> Result<()> {
    let players = lineup(r, team);
    if ws {
        let mut c = Client::connect(addr, Some(&l.captains[team]), Encoding::Json).await?;
        let req = c
            .send(client_message::Kind::LeagueLineup(w::LeagueLineup {
                league_id: l.id.clone(),
                round: r,
                table,
                team: team as u32,
                players,
            }))
            .await?;
        let rep = c
            .reply(req)
            .await
            .with_context(|| format!("lineup r{r} t{table} team {team}"))?;
        // No seq: the league's log counts sealed lineups too.
        ensure!(rep.seq == 0, "a lineup's reply carries seq {}", rep.seq);
        c.close().await;
    } else {
        let body = json!({"round": r, "table": table, "team": team, "players": players});
        let (s, v) = http_json(
            addr,
            "POST",
            &l.path("/lineups"),
            Some(&l.captains[team]),
            Some(&body),
        )
        .await?;
        ensure!(s == 200, "lineup r{r} t{table} team {team}: {s} {v}");
    }
    Ok(())
}

/// The standings `chuhe-league` computes from the plan's results, as the server's JSON rows.
fn expected_standings() -> Vec<Value> {
    let rules = rules();
    let mut matches = Vec::new();
    let mut schedule = Vec::new();
    for (k, tables) in fixtures().iter().enumerate() {
        let round = k as u32 + 1;
        for (i, t) in tables.iter().enumerate() {
            schedule.push(Fixture {
                round,
                first: t[0],
                second: t[1],
            });
            if withdrawn_from(round, *t) {
                continue;
            }
            let rec = MatchRecord::Played(
                (1..=BOARDS)
                    .map(|b| record(round, i as u32 + 1, b))
                    .collect(),
            );
            let result = evaluate_match(&rules, &rec).expect("the plan's match evaluates");
            matches.push(TeamMatch {
                round,
                first: t[0],
                second: t[1],
                result,
            });
        }
    }
    let st = standings(StandingsInput {
        team_count: TEAMS.len(),
        system: System::RoundRobin { legs: 2 },
        rules: &rules,
        criteria: chains::ROUND_ROBIN_2011,
        matches,
        byes: Vec::new(),
        penalties: Vec::new(),
        withdrawals: vec![Withdrawal {
            team: WITHDRAWN,
            after_round: WITHDRAWN_AFTER,
            expelled: false,
        }],
        schedule: Some(schedule),
    })
    .expect("standings");
    st.rows
        .iter()
        .map(|r| {
            json!({
                "team": r.team,
                "rank": r.rank,
                "decidedBy": r.decided_by.map(|c| c.code()),
                "played": r.played,
                "won": r.won,
                "drawn": r.drawn,
                "lost": r.lost,
                "matchPoints": r.match_points.to_decimal(),
                "gamePoints": r.game_points.to_decimal(),
                "gameWins": r.game_wins,
                "blackWins": r.black_wins,
                "blackGames": r.black_games,
                "withdrawn": r.withdrawal.is_some(),
            })
        })
        .collect()
}

fn server_rows(v: &Value) -> Vec<Value> {
    let keys = [
        "team",
        "rank",
        "decidedBy",
        "played",
        "won",
        "drawn",
        "lost",
        "matchPoints",
        "gamePoints",
        "gameWins",
        "blackWins",
        "blackGames",
        "withdrawn",
    ];
    v["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    Value::Object(
                        keys.iter()
                            .map(|k| (k.to_string(), r[*k].clone()))
                            .collect(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

on_every_backend!(a_season_runs_live_end_to_end, season);

async fn season(backend: &str) -> Result<()> {
    let began = std::time::Instant::now();
    let (db, server, cast) = start_child_seeded(backend, EXE).await?;
    let addr = server.addr;
    let l = LeagueSetup::create(addr, &cast.organizer, "e2e 象甲").await?;
    let mut watch = Client::connect(addr, None, Encoding::Json).await?;
    watch.league_subscribe(&l.id, 0).await?;
    let mut s = Season {
        addr,
        l,
        watch,
        seen: Vec::new(),
        games: BTreeMap::new(),
        finished: BTreeMap::new(),
        revealed: BTreeMap::new(),
        completed: BTreeSet::new(),
        pausing: false,
        paused: Vec::new(),
        jobs: JoinSet::new(),
    };
    // The fixtures: chuhe-league's, in the stream.
    let want = fixtures();
    s.until("the fixtures", |s| {
        s.seen.iter().filter(|e| e.1 == "round_paired").count() == ROUNDS as usize
    })
    .await?;
    for (k, (_, _, v)) in s.seen.iter().filter(|e| e.1 == "round_paired").enumerate() {
        let tables: Vec<[usize; 2]> = serde_json::from_value(v["tables"].clone())?;
        assert_eq!(tables, want[k], "round {} pairings", k + 1);
    }

    s.round(1).await?;
    s.round(2).await?;

    // Round 3: the server is killed with its games half played (some already over), and a
    // sealed lineup of round 4 in its log.
    s.pausing = true;
    s.lineups(KILL_ROUND, &[]).await?;
    s.l.reschedule(addr, KILL_ROUND, 200, 1200).await?;
    s.until("round 3's games", |s| {
        s.games
            .keys()
            .filter(|(k, st)| k.0 == KILL_ROUND && *st == 0)
            .count()
            == 8
    })
    .await?;
    s.drain().await?;
    let r4 = &fixtures()[3];
    submit(addr, &s.l, 4, 1, r4[0][0], false).await?;
    let before_kill = s.seen.len();
    server.kill9().await?;

    // Restarted on the single-threaded scheduler (`chuhe serve` on one CPU), the season goes on.
    let server = ChildServer::start_on(EXE, &db.url, "single").await?;
    let addr = server.addr;
    s.addr = addr;
    s.pausing = false;
    s.watch = Client::connect(addr, None, Encoding::Json).await?;
    let top = s
        .watch
        .league_subscribe(&s.l.id, s.seen.len() as u64)
        .await?;
    ensure!(
        top >= before_kill as u64,
        "the stream restarted at {top}, {before_kill} were seen"
    );
    for (at, stage) in std::mem::take(&mut s.paused) {
        let g = s.games[&(at, stage)].clone();
        let end = ending(
            plan(at.0, at.1, at.2),
            stage,
            first_colour(at.0, at.1, at.2, stage),
        );
        let (red, black) = (s.token(g.red)?, s.token(g.black)?);
        s.jobs
            .spawn(play(addr, g.game.to_string(), red, black, 4, end));
    }
    s.until("round 3 completed", |s| s.completed.contains(&KILL_ROUND))
        .await?;

    // Round 4: the lineup sealed before the kill is the one revealed.
    s.lineups(4, &[(1, F)]).await?;
    s.l.reschedule(addr, 4, 200, 1200).await?;
    s.until("round 4 completed", |s| s.completed.contains(&4))
        .await?;
    let r4t1 = &s.revealed[&(4, 1)];
    assert_eq!(
        r4t1[0]["submitted"]["players"],
        json!(lineup(4, r4[0][0])),
        "{r4t1}"
    );

    // Team D withdraws after round 4: its later matches are not played.
    let body = json!({"command": "withdraw", "team": WITHDRAWN, "after_round": WITHDRAWN_AFTER, "reason": "the team withdrew (20.3)"});
    let (st, v) = http_json(
        addr,
        "POST",
        &s.l.path("/commands"),
        Some(&s.l.arbiter),
        Some(&body),
    )
    .await?;
    ensure!(st == 200, "withdraw: {st} {v}");
    s.round(5).await?;
    s.round(6).await?;
    s.drain().await?;

    check_results(&s).await?;
    check_nothing_lost_or_doubled(&s).await?;
    // Every game of the season as Chinese PGN, XQF and DhtmlXQ, read back (tests/it/records.rs).
    let exported = crate::records::season_round_trip(s.addr, &s.l.id, &s.l.org).await?;
    assert_eq!(exported, s.games.len());

    server.kill9().await?;
    db.drop_db().await;
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &s.seen {
        *kinds.entry(e.1.as_str()).or_default() += 1;
    }
    // Each entry as often as the season makes it.
    let games = s.games.len();
    let want: BTreeMap<&str, usize> = [
        ("created", 1),
        ("published", 1),
        ("round_paired", ROUNDS as usize),
        ("round_rescheduled", ROUNDS as usize),
        // The withdrawn team's matches of rounds 5 and 6: a forfeit each, nothing revealed.
        ("lineups_revealed", 2 * ROUNDS as usize - 2),
        ("match_forfeited", 2),
        ("game_created", games),
        ("game_finished", games),
        ("choice_requested", 3),
        ("colour_chosen", 3),
        ("withdrawn", 1),
        ("round_started", ROUNDS as usize),
        ("round_completed", ROUNDS as usize),
    ]
    .into_iter()
    .collect();
    assert_eq!(kinds, want, "the public entries by kind");
    eprintln!(
        "league e2e on {backend}: {} public entries {kinds:?}, {} games, {:.1} s",
        s.seen.len(),
        s.games.len(),
        began.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Every match as the plan made it, the missing lineup filled by the registered order, the
/// lateness forfeits, and the standings equal to `chuhe-league`'s.
async fn check_results(s: &Season) -> Result<()> {
    let rules = rules();
    for (k, tables) in fixtures().iter().enumerate() {
        let round = k as u32 + 1;
        for (i, teams) in tables.iter().enumerate() {
            let table = i as u32 + 1;
            let (st, v) = http_json(
                s.addr,
                "GET",
                &s.l.path(&format!("/rounds/{round}/tables/{table}")),
                None,
                None,
            )
            .await?;
            ensure!(st == 200, "{st} {v}");
            if withdrawn_from(round, *teams) {
                // 20.3: the withdrawn team's match became its forfeit when the round came —
                // no lineup revealed, no games, every board `+`/`-`, 局分 and 场分 as a walkover.
                let by = if teams[0] == WITHDRAWN { F } else { S };
                let m = evaluate_match(&rules, &MatchRecord::Forfeit { forfeited_by: by })
                    .expect("evaluates");
                ensure!(!s.revealed.contains_key(&(round, table)), "revealed: {v}");
                ensure!(
                    v["boards"]
                        .as_array()
                        .is_some_and(|b| b.iter().all(|b| b["games"] == json!([]))),
                    "{v}"
                );
                assert_eq!(
                    v["forfeit"],
                    json!(if by == F { "first" } else { "second" })
                );
                assert_eq!(v["finished"], json!(true), "{v}");
                assert_eq!(
                    (v["gamePoints"].clone(), v["matchPoints"].clone()),
                    (
                        json!([m.game_points[0].to_decimal(), m.game_points[1].to_decimal()]),
                        json!([
                            m.match_points[0].to_decimal(),
                            m.match_points[1].to_decimal()
                        ])
                    ),
                    "round {round} table {table}"
                );
                ensure!(
                    v["lineups"]
                        .as_array()
                        .is_some_and(|l| l.iter().all(|l| l["revealed"] == json!(false))),
                    "{v}"
                );
                continue;
            }
            let lineups = &s.revealed[&(round, table)];
            for (side, team) in [(0, teams[0]), (1, teams[1])] {
                let missing = (round, table) == MISSING && side == 1;
                let how = if missing {
                    "registered_order"
                } else {
                    "submitted"
                };
                let players: Vec<String> = if missing {
                    (1..=4).map(|n| format!("{}{n}", TEAMS[team])).collect()
                } else {
                    lineup(round, team)
                };
                assert_eq!(
                    lineups[side][how]["players"],
                    json!(players),
                    "round {round} table {table}: {lineups}"
                );
            }
            let rec = MatchRecord::Played((1..=BOARDS).map(|b| record(round, table, b)).collect());
            let m = evaluate_match(&rules, &rec).expect("evaluates");
            assert_eq!(
                (v["gamePoints"].clone(), v["matchPoints"].clone()),
                (
                    json!([m.game_points[0].to_decimal(), m.game_points[1].to_decimal()]),
                    json!([
                        m.match_points[0].to_decimal(),
                        m.match_points[1].to_decimal()
                    ])
                ),
                "round {round} table {table}"
            );
            // Its score sheet (计分表) at once: one BOM (Excel opens it as UTF-8), the players.
            let (st, csv) = http(
                s.addr,
                "GET",
                &s.l.path(&format!("/rounds/{round}/tables/{table}/sheet?format=csv")),
                None,
                None,
            )
            .await?;
            ensure!(st == 200, "{st} {csv}");
            ensure!(
                csv.starts_with('\u{feff}') && !csv[3..].starts_with('\u{feff}'),
                "round {round} table {table}: the sheet starts {:?}",
                csv.chars().take(8).collect::<String>()
            );
            for p in lineups[0]["submitted"]["players"]
                .as_array()
                .into_iter()
                .flatten()
            {
                ensure!(
                    csv.contains(p.as_str().unwrap_or("?")),
                    "{p} not on the sheet: {csv}"
                );
            }
            for b in 1..=BOARDS {
                let board = &v["boards"][b as usize - 1];
                match plan(round, table, b) {
                    Plan::Late(_) => {
                        let g = &s.games[&((round, table, b), 0)];
                        assert_eq!(s.finished[&g.game].1, "lateness");
                    }
                    // The drawn armageddon is Black's: 2 board points to 1 after a chain.
                    Plan::Armageddon(_) => {
                        let black = if first_colour(round, table, b, 2) == Colour::Black {
                            ("first", ["2", "1"])
                        } else {
                            ("second", ["1", "2"])
                        };
                        assert_eq!(
                            (&board["winner"], &board["points"]),
                            (&json!(black.0), &json!(black.1)),
                            "round {round} table {table} board {b}: {board}"
                        );
                        let last = &board["games"][2]["result"];
                        assert_eq!(last["outcome"], "draw", "{board}");
                    }
                    _ => {}
                }
            }
        }
    }
    // The export (a `chuhe league` results file) says the same, board by board.
    let (st, export) = http_json(s.addr, "GET", &s.l.path("/export"), None, None).await?;
    ensure!(st == 200, "{st} {export}");
    assert_eq!(
        export["matches"],
        json!(expected_export(s)),
        "the exported matches"
    );
    assert_eq!(
        export["withdrawals"],
        json!([{"team": format!("队{}", TEAMS[WITHDRAWN]), "after_round": WITHDRAWN_AFTER}])
    );
    let (st, v) = http_json(s.addr, "GET", &s.l.path("/standings"), None, None).await?;
    ensure!(st == 200, "{st} {v}");
    assert_eq!(server_rows(&v), expected_standings(), "standings");
    assert_eq!(v["completedRounds"], json!(ROUNDS));
    Ok(())
}

/// The export's matches as the plan makes them (the withdrawn team's later ones forfeited).
fn expected_export(s: &Season) -> Vec<Value> {
    let side = |x: Side| match x {
        F => "first",
        S => "second",
    };
    let mut out = Vec::new();
    for (k, tables) in fixtures().iter().enumerate() {
        let round = k as u32 + 1;
        for (i, teams) in tables.iter().enumerate() {
            let table = i as u32 + 1;
            if withdrawn_from(round, *teams) {
                out.push(json!({
                    "round": round,
                    "table": table,
                    "first": format!("队{}", TEAMS[teams[0]]),
                    "second": format!("队{}", TEAMS[teams[1]]),
                    "forfeited_by": if teams[0] == WITHDRAWN { "first" } else { "second" },
                }));
                continue;
            }
            let lineups = &s.revealed[&(round, table)];
            let player = |x: usize, b: u32| {
                let l = &lineups[x];
                let how = if l["submitted"].is_null() {
                    "registered_order"
                } else {
                    "submitted"
                };
                l[how]["players"][b as usize - 1].clone()
            };
            let boards: Vec<Value> = (1..=BOARDS)
                .map(|b| {
                    let mut v =
                        json!({"first_player": player(0, b), "second_player": player(1, b)});
                    match record(round, table, b) {
                        BoardRecord::Played(games) => {
                            v["games"] = games
                                .iter()
                                .map(|g| {
                                    json!({
                                        "result": match g.result {
                                            GameResult::FirstWins => "first",
                                            GameResult::SecondWins => "second",
                                            GameResult::Draw => "draw",
                                        },
                                        "first_colour": match g.first_colour {
                                            Colour::Red => "red",
                                            Colour::Black => "black",
                                        },
                                        "fouls": g.fouls,
                                    })
                                })
                                .collect();
                        }
                        BoardRecord::Forfeit { forfeited_by } => {
                            v["forfeited_by"] = json!(side(forfeited_by))
                        }
                        BoardRecord::DoubleForfeit => v["forfeited_by"] = json!("both"),
                    }
                    v
                })
                .collect();
            out.push(json!({
                "round": round,
                "table": table,
                "first": format!("队{}", TEAMS[teams[0]]),
                "second": format!("队{}", TEAMS[teams[1]]),
                "boards": boards,
            }));
        }
    }
    out
}

/// The stream, the log and the games after the kill: each entry once, in order, each game once
/// with every move played.
async fn check_nothing_lost_or_doubled(s: &Season) -> Result<()> {
    // The public stream from its start equals what was seen live, across the restart.
    let mut fresh = Client::connect(s.addr, None, Encoding::Proto).await?;
    let top = fresh.league_subscribe(&s.l.id, 0).await?;
    assert_eq!(top, s.seen.len() as u64, "the stream's length");
    for want in &s.seen {
        let got = fresh.league_next().await?;
        assert_eq!(&got, want);
    }
    // The whole log: seqs without gaps, one game per board and stage, one end per game, the
    // sealed lineups there (never in the public stream).
    let (st, v) = http_json(s.addr, "GET", &s.l.path("/log"), Some(&s.l.org), None).await?;
    ensure!(st == 200, "{st} {v}");
    let entries = v["entries"].as_array().context("entries")?;
    let mut created = BTreeMap::new();
    let mut ended = BTreeMap::new();
    let mut sealed = 0;
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(e["seq"], json!(i + 1), "log seq");
        match e["kind"].as_str() {
            Some("game_created") => {
                let at = key(&e["event"]["at"])?;
                *created
                    .entry((at, e["event"]["stage"].clone().to_string()))
                    .or_insert(0) += 1;
            }
            Some("game_finished") => *ended.entry(e["event"]["game"].as_i64()).or_insert(0) += 1,
            Some("lineup_submitted") => sealed += 1,
            _ => {}
        }
    }
    ensure!(
        created.values().all(|n| *n == 1),
        "games doubled: {created:?}"
    );
    ensure!(
        ended.values().all(|n| *n == 1),
        "game ends doubled: {ended:?}"
    );
    assert_eq!(created.len(), s.games.len());
    assert_eq!(ended.len(), s.games.len(), "every game ended once");
    assert_eq!(
        entries.len(),
        s.seen.len() + sealed,
        "the log is the public stream and the sealed lineups"
    );
    assert!(s.seen.iter().all(|e| e.1 != "lineup_submitted"));
    // Every game has exactly the moves its players played, once.
    for ((at, stage), g) in &s.games {
        let p = plan(at.0, at.1, at.2);
        let end = ending(p, *stage, first_colour(at.0, at.1, at.2, *stage));
        let resumed =
            at.0 == KILL_ROUND && *stage == 0 && !DONE_BEFORE_KILL.contains(&(at.1, at.2));
        let plies = plies_of(end, if resumed { 4 } else { 2 });
        let (st, v) = http_json(
            s.addr,
            "GET",
            &format!("/api/v1/games/{}", g.game),
            None,
            None,
        )
        .await?;
        ensure!(st == 200, "{st} {v}");
        let moves: Vec<&str> = v["moves"]
            .as_array()
            .map(|m| m.iter().filter_map(|m| m["iccs"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(moves, OPENING[..plies], "the moves of {at:?} stage {stage}");
    }
    fresh.close().await;
    Ok(())
}

// ---- authorisation ----

/// Everything a reader can fetch about a league over HTTP (status and body of each).
async fn readable(
    addr: SocketAddr,
    l: &LeagueSetup,
    token: Option<&str>,
) -> Result<Vec<(String, u16, String)>> {
    let mut out = Vec::new();
    for rest in [
        "",
        "/rounds/1/tables/1",
        "/rounds/1/tables/2",
        "/rounds/1/tables/1/sheet",
        "/rounds/1/tables/1/sheet?format=csv",
        "/standings",
        "/standings?format=html",
        "/standings?format=csv",
        "/export",
    ] {
        let path = l.path(rest);
        let (status, body) = http(addr, "GET", &path, token, None).await?;
        out.push((path, status, body));
    }
    let (status, body) = http(addr, "GET", "/api/v1/leagues", token, None).await?;
    out.push(("/api/v1/leagues".into(), status, body));
    Ok(out)
}

/// Fails on the first read that differs from before, showing where it differs.
fn same_reads(who: &str, before: &[(String, u16, String)], after: &[(String, u16, String)]) {
    assert_eq!(before.len(), after.len());
    for ((path, s0, b0), (_, s1, b1)) in before.iter().zip(after) {
        if (s0, b0) != (s1, b1) {
            let at = b0
                .chars()
                .zip(b1.chars())
                .take_while(|(x, y)| x == y)
                .count();
            let around = |b: &str| {
                b.chars()
                    .skip(at.saturating_sub(60))
                    .take(160)
                    .collect::<String>()
            };
            panic!(
                "{who}: {path} changed ({s0} → {s1}) at char {at}:\n before: …{}…\n after:  …{}…",
                around(b0),
                around(b1)
            );
        }
    }
}

/// League updates among `msgs`.
fn updates(msgs: &[w::ServerMessage]) -> Vec<(u64, String, Value)> {
    msgs.iter().filter_map(league_update).collect()
}

fn lineup_ws(
    l: &LeagueSetup,
    round: u32,
    table: u32,
    team: usize,
    players: Vec<String>,
) -> client_message::Kind {
    client_message::Kind::LeagueLineup(w::LeagueLineup {
        league_id: l.id.clone(),
        round,
        table,
        team: team as u32,
        players,
    })
}

/// The in-process server on a fresh database, a published league on it, and a spectator
/// following the league's stream.
struct Arena {
    db: TestDb,
    server: Server,
    cast: Cast,
    addr: SocketAddr,
    l: LeagueSetup,
    fan: Client,
}

impl Arena {
    async fn new(backend: &str, name: &str) -> Result<Arena> {
        let (db, server, cast) = start_seeded(backend, Config::default()).await?;
        let addr = server.addr;
        let l = LeagueSetup::create(addr, &cast.organizer, name).await?;
        let mut fan = Client::connect(addr, None, Encoding::Json).await?;
        fan.league_subscribe(&l.id, 0).await?;
        Ok(Arena {
            db,
            server,
            cast,
            addr,
            l,
            fan,
        })
    }

    async fn end(self) -> Result<()> {
        self.fan.close().await;
        self.server.stop().await?;
        self.db.drop_db().await;
        Ok(())
    }
}

on_every_backend!(
    /// A captain learns nothing of the other side's sealed lineup — not from any read, an error,
    /// a websocket message or a "submitted" flag — and neither does a spectator; the reveal
    /// brings both lineups together.
    nobody_learns_a_sealed_lineup,
    sealed
);

async fn sealed(backend: &str) -> Result<()> {
    let mut ar = Arena::new(backend, "sealed").await?;
    let (addr, l, fan) = (ar.addr, &ar.l, &mut ar.fan);
    let [a, b] = fixtures()[0][0];
    l.reschedule(addr, 1, 60_000, 120_000).await?;
    // Captain A and a spectator follow the league; each has read the stream so far.
    let mut a_ws = Client::connect(addr, Some(&l.captains[a]), Encoding::Json).await?;
    let top = a_ws.league_subscribe(&l.id, 0).await?;
    for c in [&mut a_ws, &mut *fan] {
        let seen = updates(&c.until_pong().await?);
        ensure!(
            seen.last().map(|u| u.0) == Some(top),
            "the stream so far: {top}, {seen:?}"
        );
    }
    let a_before = readable(addr, l, Some(&l.captains[a])).await?;
    let fan_before = readable(addr, l, None).await?;
    // What A is told when it tries B's lineup, and what the refusals of its own say.
    let for_b = json!({"round": 1, "table": 1, "team": b, "players": lineup(1, b)});
    let wrong_b = http(
        addr,
        "POST",
        &l.path("/lineups"),
        Some(&l.captains[a]),
        Some(&for_b.to_string()),
    )
    .await?;
    assert_eq!(wrong_b.0, 403, "{}", wrong_b.1);
    let bad_own = json!({"round": 1, "table": 1, "team": a, "players": ["nobody"]});
    let refused_own = http(
        addr,
        "POST",
        &l.path("/lineups"),
        Some(&l.captains[a]),
        Some(&bad_own.to_string()),
    )
    .await?;
    assert_eq!(refused_own.0, 400, "{}", refused_own.1);

    // B submits its lineup.
    submit(addr, l, 1, 1, b, false).await?;

    // Nothing reached A or the spectator; every read is as it was, byte for byte; the refusals
    // are the same.
    assert_eq!(
        updates(&a_ws.until_pong().await?),
        vec![],
        "captain A's stream"
    );
    assert_eq!(
        updates(&fan.until_pong().await?),
        vec![],
        "the spectator's stream"
    );
    same_reads(
        "captain A",
        &a_before,
        &readable(addr, l, Some(&l.captains[a])).await?,
    );
    same_reads("a spectator", &fan_before, &readable(addr, l, None).await?);
    assert_eq!(
        http(
            addr,
            "POST",
            &l.path("/lineups"),
            Some(&l.captains[a]),
            Some(&for_b.to_string())
        )
        .await?,
        wrong_b
    );
    assert_eq!(
        http(
            addr,
            "POST",
            &l.path("/lineups"),
            Some(&l.captains[a]),
            Some(&bad_own.to_string())
        )
        .await?,
        refused_own
    );
    let req = a_ws.send(lineup_ws(l, 1, 1, b, lineup(1, b))).await?;
    assert_eq!(a_ws.error_code(req).await?, "permission_denied");
    // The log (with the sealed lineups) is for officials only.
    let (st, v) = http_json(addr, "GET", &l.path("/log"), Some(&l.captains[a]), None).await?;
    assert_eq!((st, v["code"].as_str()), (403, Some("permission_denied")));
    // B's captain does see its own: the reads can tell, they just do not tell A.
    let (_, mine) = http_json(
        addr,
        "GET",
        &l.path("/rounds/1/tables/1"),
        Some(&l.captains[b]),
        None,
    )
    .await?;
    assert_eq!(mine["lineups"][1]["submitted"], json!(true), "{mine}");
    assert_eq!(mine["lineups"][1]["players"], json!(lineup(1, b)));
    let (_, theirs) = http_json(
        addr,
        "GET",
        &l.path("/rounds/1/tables/1"),
        Some(&l.captains[a]),
        None,
    )
    .await?;
    assert_eq!(theirs["lineups"][1], json!({"revealed": false}));

    // A submits (over the websocket): both are in, both revealed together, live.
    let req = a_ws.send(lineup_ws(l, 1, 1, a, lineup(1, a))).await?;
    assert_eq!(a_ws.reply(req).await?.seq, 0);
    let (_, kind, v) = fan.league_next().await?;
    assert_eq!(kind, "lineups_revealed");
    assert_eq!(v["lineups"][0]["submitted"]["players"], json!(lineup(1, a)));
    assert_eq!(v["lineups"][1]["submitted"]["players"], json!(lineup(1, b)));
    // Now it is final.
    let req = a_ws.send(lineup_ws(l, 1, 1, a, lineup(1, a))).await?;
    assert_eq!(a_ws.error_code(req).await?, "lineup_refused");
    a_ws.close().await;
    ar.end().await
}

on_every_backend!(
    /// Lineups are taken until the deadline (to the millisecond) and refused after it with
    /// `deadline_passed`; a captain cannot submit for a match its team does not play.
    lineups_close_at_the_deadline,
    deadline
);

async fn deadline(backend: &str) -> Result<()> {
    let mut ar = Arena::new(backend, "deadline").await?;
    let (addr, l, fan) = (ar.addr, &ar.l, &mut ar.fan);
    let r2 = &fixtures()[1];
    // Not this team's match.
    let body = json!({"round": 2, "table": 1, "team": r2[1][0], "players": lineup(2, r2[1][0])});
    let (st, v) = http_json(
        addr,
        "POST",
        &l.path("/lineups"),
        Some(&l.captains[r2[1][0]]),
        Some(&body),
    )
    .await?;
    assert_eq!(
        (st, v["code"].as_str()),
        (400, Some("invalid_argument")),
        "{v}"
    );
    // A deadline later in the same second as the submission is still ahead: the lineup is
    // taken. (When this second is nearly over, the test waits for the next one: under a
    // second, so that the submission surely comes in the deadline's second.)
    let mut now = now_ms();
    if now % 1000 > 500 {
        tokio::time::sleep(std::time::Duration::from_millis(1000 - now % 1000)).await;
        now = now_ms();
    }
    let deadline = now - now % 1000 + 999;
    l.reschedule_at(addr, 2, deadline, deadline + 60_000)
        .await?;
    let first = r2[0][0];
    let body = json!({"round": 2, "table": 1, "team": first, "players": lineup(2, first)});
    let (st, v) = http_json(
        addr,
        "POST",
        &l.path("/lineups"),
        Some(&l.captains[first]),
        Some(&body),
    )
    .await?;
    ensure!(
        now_ms() < deadline,
        "the submission came after the deadline: the machine is too slow for this check"
    );
    assert_eq!(
        st,
        200,
        "a lineup {} ms before the deadline: {v}",
        deadline.saturating_sub(now_ms())
    );
    // At the deadline both matches are revealed (the missing lineups: registered order).
    let mut revealed = 0;
    while revealed < 2 {
        let (_, kind, v) = fan.league_next().await?;
        if kind == "lineups_revealed" && v["round"] == 2 {
            revealed += 1;
        }
    }
    // After it, nothing is taken, over HTTP or the websocket.
    let second = r2[0][1];
    let body = json!({"round": 2, "table": 1, "team": second, "players": lineup(2, second)});
    let (st, v) = http_json(
        addr,
        "POST",
        &l.path("/lineups"),
        Some(&l.captains[second]),
        Some(&body),
    )
    .await?;
    assert_eq!(
        (st, v["code"].as_str()),
        (400, Some("lineup_refused")),
        "{v}"
    );
    assert_eq!(v["reasons"][0]["code"], "deadline_passed", "{v}");
    let mut c = Client::connect(addr, Some(&l.captains[second]), Encoding::Proto).await?;
    let req = c
        .send(lineup_ws(l, 2, 1, second, lineup(2, second)))
        .await?;
    assert_eq!(c.error_code(req).await?, "lineup_refused");
    c.close().await;
    ar.end().await
}

/// A request and the refusal it must get: (who, token, method, path, body, status, code).
type Check<'a> = (
    &'a str,
    Option<&'a str>,
    &'a str,
    String,
    Option<Value>,
    u16,
    &'a str,
);

on_every_backend!(
    /// Players act only on their own board's game, spectators only read, and the organizer's and
    /// arbiters' routes refuse everyone else, each with its stable code.
    every_role_acts_only_within_its_rights,
    rights
);

async fn rights(backend: &str) -> Result<()> {
    let mut ar = Arena::new(backend, "rights").await?;
    let (addr, l, fan, cast) = (ar.addr, &ar.l, &mut ar.fan, &ar.cast);
    // Round 1's lineups in: its games are set up (their clocks start later).
    l.reschedule(addr, 1, 20_000, 30_000).await?;
    let r1 = &fixtures()[0];
    for (k, t) in r1.iter().enumerate() {
        for team in t {
            submit(addr, l, 1, k as u32 + 1, *team, false).await?;
        }
    }
    let mut games: BTreeMap<Key, GameSeen> = BTreeMap::new();
    while games.len() < 8 {
        let (_, kind, v) = fan.league_next().await?;
        if kind == "game_created" {
            let g = GameSeen {
                game: v["game"].as_i64().context("game")?,
                red: v["red"].as_i64().context("red")?,
                black: v["black"].as_i64().context("black")?,
            };
            games.insert(key(&v["at"])?, g);
        }
    }
    let (one, two) = (&games[&(1, 1, 1)], &games[&(1, 1, 2)]);
    let player = l.tokens[&one.red].clone();
    let (mine, theirs) = (one.game.to_string(), two.game.to_string());

    // A player on another board's game: not its player, whatever it tries.
    let mut p = Client::connect(addr, Some(&player), Encoding::Json).await?;
    let tries = |game: &str| {
        vec![
            client_message::Kind::Move(w::MakeMove {
                game_id: game.into(),
                ply: 1,
                r#move: "h2e2".into(),
                offer_draw: false,
                think_ms: 0,
            }),
            client_message::Kind::Resign(w::Resign {
                game_id: game.into(),
            }),
            client_message::Kind::OfferDraw(w::OfferDraw {
                game_id: game.into(),
            }),
            client_message::Kind::ClaimMoveLimit(w::ClaimMoveLimit {
                game_id: game.into(),
            }),
        ]
    };
    for t in tries(&theirs) {
        let req = p.send(t.clone()).await?;
        assert_eq!(p.error_code(req).await?, "not_a_player", "{t:?}");
    }
    // On its own game it is a player (the game has not started: that is the only refusal).
    let req = p.send(tries(&mine)[0].clone()).await?;
    assert_eq!(p.error_code(req).await?, "game_not_started");
    // Nor can a player submit its team's lineup (its captain does).
    let team = r1[0][0];
    let t2 = fixtures()[1]
        .iter()
        .position(|t| t.contains(&team))
        .context("team in round 2")? as u32
        + 1;
    let req = p.send(lineup_ws(l, 2, t2, team, lineup(2, team))).await?;
    assert_eq!(p.error_code(req).await?, "permission_denied");
    p.close().await;

    // A spectator reads everything public, and acts on nothing.
    let mut s = Client::connect(addr, None, Encoding::Proto).await?;
    s.subscribe(&mine, 0).await?;
    s.expect(snapshot).await?;
    for t in tries(&mine) {
        let req = s.send(t.clone()).await?;
        assert_eq!(s.error_code(req).await?, "not_a_player", "{t:?}");
    }
    let req = s.send(lineup_ws(l, 2, t2, team, lineup(2, team))).await?;
    assert_eq!(s.error_code(req).await?, "permission_denied");
    s.close().await;
    for (path, status, body) in readable(addr, l, None).await? {
        assert_eq!(status, 200, "{path}: {body}");
    }
    let (st, _) = http(addr, "GET", &format!("/api/v1/games/{mine}"), None, None).await?;
    assert_eq!(st, 200);
    // A game's event log (arbiters'): the event's arbiter reads it, an arbiter of no event not.
    let log = format!("/api/v1/games/{mine}/events");
    let (st, _) = http(addr, "GET", &log, Some(l.arbiter.as_str()), None).await?;
    assert_eq!(st, 200, "the event's arbiter");
    let (st, body) = http(addr, "GET", &log, Some(cast.arbiter.as_str()), None).await?;
    assert_eq!(st, 403, "an arbiter of no event: {body}");

    // An arbiter's command on a board's game: refused to its players, a captain, a spectator
    // and an arbiter of no event (it was let through to the game before).
    let captain = l.captains[team].as_str();
    let pause = client_message::Kind::Arbiter(w::ArbiterCommand {
        game_id: mine.clone(),
        reason: "a reason".into(),
        action: Some(w::arbiter_command::Action::Pause(w::PauseGame {})),
    });
    for (who, tok) in [
        ("its player", Some(player.as_str())),
        ("a captain", Some(captain)),
        ("a spectator", None),
        ("an arbiter of no event", Some(cast.arbiter.as_str())),
    ] {
        let mut c = Client::connect(addr, tok, Encoding::Json).await?;
        let req = c.send(pause.clone()).await?;
        assert_eq!(c.error_code(req).await?, "permission_denied", "{who}");
        c.close().await;
    }

    // The organizer's and arbiters' routes.
    let other_arbiter = cast.arbiter.as_str(); // an arbiter, but not of this event
    let event_arbiter = l.arbiter.as_str();
    let reason = "a reason";
    let board = json!({"round": 1, "table": 1, "board": 1});
    let arbiter_cmds = [
        json!({"command": "set_board", "at": board, "setting": {"forfeit": {"by": "first"}}, "reason": reason}),
        json!({"command": "forfeit_match", "round": 1, "table": 1, "by": "second", "reason": reason}),
        json!({"command": "withdraw", "team": 0, "after_round": 1, "reason": reason}),
        json!({"command": "replay_board", "at": board, "reason": reason}),
    ];
    let spec_body = spec("another");
    let reschedule = json!({"start": (now_ms() + 7_200_000).to_string()});
    let mut checks: Vec<Check> = Vec::new();
    let outsiders = [
        ("captain", Some(captain)),
        ("player", Some(player.as_str())),
        ("other arbiter", Some(other_arbiter)),
        ("anonymous", None),
        ("bad token", Some("not-a-token")),
    ];
    for (who, tok) in outsiders {
        // Anonymous: a route that needs someone says so (401), one that needs a role refuses.
        let (anon_status, anon_code) = match tok {
            None => (401, "unauthenticated"),
            Some("not-a-token") => (401, "unauthenticated"),
            Some(_) => (403, "permission_denied"),
        };
        let role_refusal = if tok == Some("not-a-token") {
            (401, "unauthenticated")
        } else {
            (403, "permission_denied")
        };
        checks.push((
            who,
            tok,
            "POST",
            "/api/v1/leagues".into(),
            Some(spec_body.clone()),
            role_refusal.0,
            role_refusal.1,
        ));
        checks.push((
            who,
            tok,
            "POST",
            l.path("/tokens"),
            Some(json!({})),
            role_refusal.0,
            role_refusal.1,
        ));
        checks.push((
            who,
            tok,
            "GET",
            l.path("/log"),
            None,
            role_refusal.0,
            role_refusal.1,
        ));
        checks.push((
            who,
            tok,
            "POST",
            l.path("/publish"),
            None,
            anon_status,
            anon_code,
        ));
        checks.push((
            who,
            tok,
            "POST",
            l.path("/rounds/2/reschedule"),
            Some(reschedule.clone()),
            anon_status,
            anon_code,
        ));
        checks.push((
            who,
            tok,
            "POST",
            l.path("/commands"),
            Some(json!({"command": "pair_next_round"})),
            anon_status,
            anon_code,
        ));
        for c in &arbiter_cmds {
            checks.push((
                who,
                tok,
                "POST",
                l.path("/commands"),
                Some(c.clone()),
                anon_status,
                anon_code,
            ));
        }
    }
    // The event's arbiter: not the organizer's routes; its own need a reason.
    let ea = Some(event_arbiter);
    checks.push((
        "event arbiter",
        ea,
        "POST",
        "/api/v1/leagues".into(),
        Some(spec_body.clone()),
        403,
        "permission_denied",
    ));
    checks.push((
        "event arbiter",
        ea,
        "POST",
        l.path("/tokens"),
        Some(json!({})),
        403,
        "permission_denied",
    ));
    checks.push((
        "event arbiter",
        ea,
        "POST",
        l.path("/rounds/2/reschedule"),
        Some(reschedule.clone()),
        403,
        "permission_denied",
    ));
    checks.push((
        "event arbiter",
        ea,
        "POST",
        l.path("/commands"),
        Some(json!({"command": "pair_next_round"})),
        403,
        "permission_denied",
    ));
    for c in &arbiter_cmds {
        let mut no_reason = c.clone();
        no_reason
            .as_object_mut()
            .context("a command")?
            .remove("reason");
        checks.push((
            "event arbiter",
            ea,
            "POST",
            l.path("/commands"),
            Some(no_reason),
            400,
            "invalid_argument",
        ));
    }
    // What only the server does, nobody asks for — not even the organizer. (A game's end
    // cannot even be put: its `reason` is the request's reason, so the body is malformed.)
    let org = Some(l.org.as_str());
    for (c, status, code) in [
        (json!({"command": "tick"}), 403, "permission_denied"),
        (
            json!({"command": "game_created", "at": board, "stage": 1, "game": two.game, "first_colour": "red", "red": one.red, "black": one.black, "start_ms": 0}),
            403,
            "permission_denied",
        ),
        (
            json!({"command": "game_finished", "game": one.game, "result": 1, "reason": "resign", "fouls": [0, 0]}),
            400,
            "malformed_body",
        ),
    ] {
        checks.push((
            "organizer",
            org,
            "POST",
            l.path("/commands"),
            Some(c),
            status,
            code,
        ));
    }
    let mut wrong = Vec::new();
    for (who, tok, method, path, body, status, code) in &checks {
        let (st, v) = http_json(addr, method, path, *tok, body.as_ref()).await?;
        if (st, v["code"].as_str()) != (*status, Some(*code)) {
            wrong.push(format!(
                "{who} {method} {path} {body:?}: {st} {v}, expected {status} {code}"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} checks:\n{}",
        wrong.len(),
        checks.len(),
        wrong.join("\n")
    );
    // The event's arbiter reads the log; nothing above changed the league.
    let (st, v) = http_json(addr, "GET", &l.path("/log"), ea, None).await?;
    assert_eq!(st, 200, "{v}");
    let kinds: Vec<&str> = v["entries"]
        .as_array()
        .context("entries")?
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .collect();
    assert!(
        kinds.iter().all(|k| [
            "created",
            "published",
            "round_paired",
            "round_rescheduled",
            "lineup_submitted",
            "lineups_revealed",
            "game_created"
        ]
        .contains(k)),
        "{kinds:?}"
    );
    ar.end().await
}
