//! The league core through `decide` and `fold` only: a season driven by a scripted driver
//! (games "created" and "finished" by hand), lineups sealed and revealed, the board chain to the
//! armageddon, arbiter decisions, withdrawals, permissions, and replay equivalence.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use chuhe_proto::v1::Result as WResult;

use super::*;
use crate::league::spec::EventSpec;
use crate::persist::Role;
use chuhe_game::Actor;

const ORG: Actor = Actor {
    id: Some(1),
    role: Some(Role::Organizer),
};
const ARB: Actor = Actor {
    id: Some(50),
    role: Some(Role::Arbiter),
};
const OTHER_ARB: Actor = Actor {
    id: Some(51),
    role: Some(Role::Arbiter),
};
const SERVER: Actor = Actor::SERVER;
const HOUR: u64 = 3_600_000;
const T0: u64 = 1_800_000_000_000;

fn captain(team: usize) -> Actor {
    Actor {
        id: Some(900 + team as i64),
        role: Some(Role::Player),
    }
}

fn spec(system: &str, teams: usize, extra: serde_json::Value) -> EventSpec {
    let mut v = serde_json::json!({
        "name": "test league",
        "system": system,
        "boards": 2,
        "result_chain": {"preset": "slow-fast-armageddon", "time_controls": ["10m+5s", "3m+2s", "red:2m;black:90s"]},
        "break_between_games": "1m",
        "games_open_before": "5m",
        "teams": (0..teams).map(|t| serde_json::json!({
            "name": format!("T{t}"),
            "unit": format!("U{t}"),
            "players": (0..3).map(|p| format!("p{t}{p}")).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "schedule": {"first_round": T0.to_string(), "every": "1d"},
    });
    for (k, val) in extra.as_object().unwrap() {
        v[k] = val.clone();
    }
    serde_json::from_value(v).unwrap()
}

/// A league with the accounts a server would make: players 100·team + k, captains 900 + team.
struct Sim {
    l: League,
    log: Vec<Entry>,
    now: u64,
    next_game: i64,
}

impl Sim {
    fn new(spec: EventSpec) -> Sim {
        let rules = spec.rules().unwrap();
        let times = spec.round_times(&rules, rules.planned_rounds()).unwrap();
        let teams = (0..spec.teams.len())
            .map(|t| TeamAccounts {
                players: (0..spec.teams[t].players.len() as i64)
                    .map(|k| 100 * t as i64 + 100 + k)
                    .collect(),
                captains: vec![900 + t as i64],
            })
            .collect();
        let first = Entry {
            seq: 1,
            at_ms: T0 - 72 * HOUR,
            actor: Some(1),
            reason: None,
            event: LeagueEvent::Created {
                spec: Box::new(spec),
                teams,
                arbiters: vec![50],
                rounds: times,
            },
        };
        let l = League::create(7, &first).unwrap();
        Sim {
            l,
            log: vec![first],
            now: T0 - 72 * HOUR,
            next_game: 1000,
        }
    }

    fn run(
        &mut self,
        cmd: LeagueCommand,
        who: Actor,
        reason: Option<&str>,
    ) -> Result<Vec<LeagueEvent>, LeagueError> {
        let entries = decide(&self.l, &cmd, &who, reason, self.now)?;
        for e in &entries {
            self.l.fold(e).unwrap();
        }
        let events = entries.iter().map(|e| e.event.clone()).collect();
        self.log.extend(entries);
        Ok(events)
    }

    fn at(&mut self, now: u64) -> Vec<LeagueEvent> {
        self.now = now;
        let mut out = self.run(LeagueCommand::Tick, SERVER, None).unwrap();
        out.extend(self.create_wanted());
        out
    }

    /// Creates every wanted game, as the driver does.
    fn create_wanted(&mut self) -> Vec<LeagueEvent> {
        let mut out = Vec::new();
        for w in wanted_games(&self.l, self.now) {
            self.next_game += 1;
            out.extend(
                self.run(
                    LeagueCommand::GameCreated {
                        at: w.at,
                        stage: w.stage,
                        game: self.next_game,
                        first_colour: w.first_colour,
                        red: w.red.0,
                        black: w.black.0,
                        start_ms: w.start_ms,
                    },
                    SERVER,
                    None,
                )
                .unwrap(),
            );
        }
        out
    }

    /// The current game of a board.
    fn game(&self, at: BoardKey) -> &state::ChainGame {
        self.l.board(at).unwrap().games.last().unwrap()
    }

    /// Ends a board's current game: `first` won / lost / drew (in first-team terms).
    fn end(&mut self, at: BoardKey, outcome: Outcome, reason: &str) -> Vec<LeagueEvent> {
        let g = self.game(at).clone();
        let first_red = g.first_colour == ColourName::Red;
        let result = match (outcome, first_red) {
            (Outcome::First, true) | (Outcome::Second, false) => WResult::RedWins,
            (Outcome::First, false) | (Outcome::Second, true) => WResult::BlackWins,
            (Outcome::Draw, _) => WResult::Draw,
            (Outcome::BothLose, _) => WResult::BothLose,
        };
        self.now += 60_000;
        let mut out = self
            .run(
                LeagueCommand::GameFinished {
                    game: g.game,
                    result: result as i32,
                    reason: reason.into(),
                    fouls: [0, 0],
                },
                SERVER,
                None,
            )
            .unwrap();
        out.extend(self.create_wanted());
        out
    }

    fn submit(
        &mut self,
        round: u32,
        table: u32,
        team: usize,
        players: &[&str],
    ) -> Result<Vec<LeagueEvent>, LeagueError> {
        self.run(
            LeagueCommand::SubmitLineup {
                round,
                table,
                team,
                players: players.iter().map(|s| s.to_string()).collect(),
            },
            captain(team),
            None,
        )
    }
}

fn kinds(events: &[LeagueEvent]) -> Vec<&'static str> {
    events.iter().map(LeagueEvent::kind).collect()
}

fn bk(round: u32, table: u32, board: u32) -> BoardKey {
    BoardKey {
        round,
        table,
        board,
    }
}

/// Everything of a league that matters, to compare two.
fn digest(l: &League) -> String {
    format!(
        "{} {} {} {:?} {:?} {:?} {:?} {}",
        l.seq, l.at_ms, l.published, l.rounds, l.withdrawals, l.games, l.teams, l.public_seq
    )
}

#[test]
fn publishing_a_double_round_robin_pairs_every_round_with_its_times() {
    let mut s = Sim::new(spec("round_robin", 4, serde_json::json!({})));
    assert_eq!(
        s.run(LeagueCommand::Publish, captain(0), None)
            .unwrap_err()
            .code(),
        "permission_denied"
    );
    let ev = s.run(LeagueCommand::Publish, ORG, None).unwrap();
    assert_eq!(kinds(&ev)[0], "published");
    assert_eq!(s.l.rounds.len(), 6);
    assert!(s.l.rounds.iter().all(|r| r.tables.len() == 2));
    assert_eq!(s.l.rounds[1].start_ms - s.l.rounds[0].start_ms, 24 * HOUR);
    assert_eq!(
        s.l.rounds[0].start_ms - s.l.rounds[0].deadline_ms,
        12 * HOUR
    );
    // Every pair meets twice, once as first and once as second (13.2 colours swap).
    let mut meetings = std::collections::BTreeMap::new();
    for r in &s.l.rounds {
        for t in &r.tables {
            *meetings.entry(t.teams).or_insert(0) += 1;
        }
    }
    assert_eq!(meetings.len(), 12);
    assert!(meetings.values().all(|&n| n == 1));
    assert_eq!(
        s.run(LeagueCommand::Publish, ORG, None).unwrap_err().code(),
        "conflict"
    );
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}

#[test]
fn lineups_are_sealed_until_both_are_in_and_every_refusal_has_its_code() {
    let mut s = Sim::new(spec("round_robin", 4, serde_json::json!({})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    let t = s.l.table(1, 1).unwrap().clone();
    let [a, b] = t.teams;
    // Not this team's captain; a team not in this match.
    let e = s
        .run(
            LeagueCommand::SubmitLineup {
                round: 1,
                table: 1,
                team: a,
                players: vec![format!("p{a}0"), format!("p{a}1")],
            },
            captain(b),
            None,
        )
        .unwrap_err();
    assert_eq!(e.code(), "permission_denied");
    let other = (0..4).find(|x| *x != a && *x != b).unwrap();
    assert_eq!(
        s.submit(1, 1, other, &["x", "y"]).unwrap_err().code(),
        "invalid_argument"
    );
    // Every reason at once: wrong count, a stranger, a duplicate.
    let name = |t: usize, k: usize| format!("p{t}{k}");
    let e = s
        .run(
            LeagueCommand::SubmitLineup {
                round: 1,
                table: 1,
                team: a,
                players: vec![name(a, 0), name(a, 0), "stranger".into()],
            },
            captain(a),
            None,
        )
        .unwrap_err();
    let LeagueError::LineupRefused(reasons) = &e else {
        panic!("{e}")
    };
    let codes: Vec<&str> = reasons.iter().map(|(c, _)| c.as_str()).collect();
    assert!(
        codes.contains(&"wrong_count")
            && codes.contains(&"duplicate")
            && codes.contains(&"not_on_roster"),
        "{codes:?}"
    );
    // 12.2: the registered order may not be reversed.
    let e = s
        .run(
            LeagueCommand::SubmitLineup {
                round: 1,
                table: 1,
                team: a,
                players: vec![name(a, 2), name(a, 0)],
            },
            captain(a),
            None,
        )
        .unwrap_err();
    assert!(
        matches!(&e, LeagueError::LineupRefused(r) if r[0].0 == "order"),
        "{e}"
    );
    // A valid lineup is sealed: recorded, not revealed, and not public.
    let ev = s
        .run(
            LeagueCommand::SubmitLineup {
                round: 1,
                table: 1,
                team: a,
                players: vec![name(a, 1), name(a, 2)],
            },
            captain(a),
            None,
        )
        .unwrap();
    assert_eq!(kinds(&ev), ["lineup_submitted"]);
    assert!(!ev[0].is_public());
    assert!(s.l.table(1, 1).unwrap().revealed.is_none());
    // Replaced before the deadline; then the other side's lineup reveals both together.
    s.run(
        LeagueCommand::SubmitLineup {
            round: 1,
            table: 1,
            team: a,
            players: vec![name(a, 0), name(a, 2)],
        },
        captain(a),
        None,
    )
    .unwrap();
    let ev = s
        .run(
            LeagueCommand::SubmitLineup {
                round: 1,
                table: 1,
                team: b,
                players: vec![name(b, 0), name(b, 1)],
            },
            captain(b),
            None,
        )
        .unwrap();
    assert_eq!(kinds(&ev), ["lineup_submitted", "lineups_revealed"]);
    let rev = s.l.table(1, 1).unwrap().revealed.clone().unwrap();
    assert_eq!(
        rev[0],
        Revealed::Submitted {
            players: vec![name(a, 0), name(a, 2)]
        }
    );
    // After the reveal nothing changes.
    let e = s
        .run(
            LeagueCommand::SubmitLineup {
                round: 1,
                table: 1,
                team: b,
                players: vec![name(b, 1), name(b, 2)],
            },
            captain(b),
            None,
        )
        .unwrap_err();
    assert!(matches!(&e, LeagueError::LineupRefused(r) if r[0].0 == "deadline_passed"));
    // Table 2: nothing submitted; at the deadline the registered order is used.
    let deadline = s.l.rounds[0].deadline_ms;
    let ev = s.at(deadline - 1);
    assert!(!kinds(&ev).contains(&"lineups_revealed"));
    let ev = s.at(deadline);
    assert_eq!(kinds(&ev), ["lineups_revealed"]);
    let rev = s.l.table(1, 2).unwrap().revealed.clone().unwrap();
    let t2 = s.l.table(1, 2).unwrap().teams;
    assert_eq!(
        rev[0],
        Revealed::RegisteredOrder {
            players: vec![name(t2[0], 0), name(t2[0], 1)]
        }
    );
    // Late submissions are refused with the deadline's code.
    let e = s
        .submit(2, 1, s.l.table(2, 1).unwrap().teams[0], &[])
        .unwrap_err();
    assert!(matches!(e, LeagueError::LineupRefused(_)));
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}

#[test]
fn a_lineup_is_taken_until_the_deadline_s_millisecond() {
    let mut s = Sim::new(spec("round_robin", 4, serde_json::json!({})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    let [a, b] = s.l.table(1, 1).unwrap().teams;
    // A deadline late in its second; submissions earlier in that same second are in time.
    let deadline = T0 - HOUR + 900;
    s.run(
        LeagueCommand::Reschedule {
            round: 1,
            start_ms: T0,
            deadline_ms: deadline,
        },
        ORG,
        None,
    )
    .unwrap();
    s.now = deadline - 800;
    let lineup = |t: usize| [format!("p{t}0"), format!("p{t}1")];
    let [a0, a1] = lineup(a);
    assert!(s.submit(1, 1, a, &[&a0, &a1]).is_ok());
    s.now = deadline - 1;
    assert!(s.submit(1, 1, a, &[&a0, &a1]).is_ok());
    s.now = deadline;
    let [b0, b1] = lineup(b);
    let e = s.submit(1, 1, b, &[&b0, &b1]).unwrap_err();
    assert!(
        matches!(&e, LeagueError::LineupRefused(r) if r[0].0 == "deadline_passed"),
        "{e}"
    );
}

#[test]
fn a_missing_lineup_can_be_a_forfeit_instead() {
    let mut s = Sim::new(spec(
        "round_robin",
        4,
        serde_json::json!({"lineup": {"missing": "forfeit"}}),
    ));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    let [a, _] = s.l.table(1, 1).unwrap().teams;
    s.submit(1, 1, a, &[&format!("p{a}0"), &format!("p{a}1")])
        .unwrap();
    s.at(s.l.rounds[0].deadline_ms);
    let t = s.l.table(1, 1).unwrap();
    assert_eq!(t.revealed.as_ref().unwrap()[1], Revealed::Forfeit);
    assert_eq!(t.forfeit, Some(ForfeitBy::Second));
    let m = match_result(&s.l, 1, 1).unwrap();
    assert_eq!(m.winner, Some(chuhe_league::Side::First));
    // No games for a forfeited match.
    s.at(s.l.rounds[0].start_ms);
    assert!(
        s.l.table(1, 1)
            .unwrap()
            .boards
            .iter()
            .all(|b| b.games.is_empty())
    );
}

#[test]
fn the_board_chain_runs_to_the_armageddon_and_a_drawn_armageddon_is_black_s() {
    let mut s = Sim::new(spec("round_robin", 4, serde_json::json!({})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    let r1 = s.l.rounds[0].clone();
    // No games before they open; at five minutes before the start, all four boards' first games.
    let ev = s.at(r1.deadline_ms);
    assert!(!kinds(&ev).contains(&"game_created"));
    let ev = s.at(r1.start_ms - 5 * 60_000);
    assert_eq!(
        kinds(&ev).iter().filter(|k| **k == "game_created").count(),
        4
    );
    let b1 = bk(1, 1, 1);
    let g = s.game(b1).clone();
    // 13.2: the first-listed team has Red on board 1, Black on board 2.
    assert_eq!(g.first_colour, ColourName::Red);
    assert_eq!(s.game(bk(1, 1, 2)).first_colour, ColourName::Black);
    assert_eq!(g.start_ms, r1.start_ms);
    let t = s.l.table(1, 1).unwrap().clone();
    assert_eq!(
        g.red,
        100 * t.teams[0] as i64 + 100,
        "board 1 is the registered first player"
    );
    // Slow game drawn → the fast game with colours swapped, a break after.
    s.now = r1.start_ms + 3_600_000;
    let ev = s.end(b1, Outcome::Draw, "draw_agreed");
    assert_eq!(kinds(&ev), ["game_finished", "game_created"]);
    let fast = s.game(b1).clone();
    assert_eq!((fast.stage, fast.first_colour), (1, ColourName::Black));
    assert_eq!(fast.start_ms, s.now + 60_000, "a one-minute break");
    // Fast drawn → the armageddon's chooser (the fast game's Black: the first team) is asked.
    let ev = s.end(b1, Outcome::Draw, "repetition_draw");
    assert_eq!(kinds(&ev), ["game_finished", "choice_requested"]);
    let c = s.l.board(b1).unwrap().choice.clone().unwrap();
    assert_eq!(c.chooser, TeamSide::First);
    // Only the chooser chooses.
    let chooser = Actor {
        id: Some(fast.black),
        role: Some(Role::Player),
    };
    let not = Actor {
        id: Some(fast.red),
        role: Some(Role::Player),
    };
    let choose = LeagueCommand::ChooseColour {
        at: b1,
        colour: ColourName::Black,
    };
    assert_eq!(
        s.run(choose.clone(), not, None).unwrap_err().code(),
        "permission_denied"
    );
    let ev = s.run(choose, chooser, None).unwrap();
    assert_eq!(kinds(&ev), ["colour_chosen"]);
    let ev = s.create_wanted();
    assert_eq!(kinds(&ev), ["game_created"]);
    let arm = s.game(b1).clone();
    assert_eq!((arm.stage, arm.first_colour), (2, ColourName::Black));
    // A drawn armageddon: the board goes to Black — the first team, 2–1.
    s.end(b1, Outcome::Draw, "draw_agreed");
    let rec = s.l.board_record(b1).unwrap();
    let r = chuhe_league::chain::evaluate_board(
        &s.l.rules.event.chain,
        &s.l.rules.event.game_scoring,
        1,
        &rec,
    )
    .unwrap();
    assert_eq!(
        r.points,
        [
            chuhe_league::Points::whole(2),
            chuhe_league::Points::whole(1)
        ]
    );
    assert_eq!(
        live_score(&s.l, 1, 1),
        [
            chuhe_league::Points::whole(2),
            chuhe_league::Points::whole(1)
        ]
    );
    assert!(
        wanted_games(&s.l, s.now).iter().all(|w| w.at != b1),
        "the board is decided"
    );
    // Board 2: slow drawn, fast drawn, nobody chooses: the default (Black for the chooser).
    s.end(bk(1, 1, 2), Outcome::Draw, "draw_agreed");
    s.end(bk(1, 1, 2), Outcome::Draw, "draw_agreed");
    let deadline =
        s.l.board(bk(1, 1, 2))
            .unwrap()
            .choice
            .clone()
            .unwrap()
            .deadline_ms;
    let ev = s.at(deadline);
    assert_eq!(kinds(&ev), ["colour_chosen", "game_created"]);
    assert!(matches!(
        ev[0],
        LeagueEvent::ColourChosen {
            by_default: true,
            chooser_colour: ColourName::Black,
            ..
        }
    ));
    s.end(bk(1, 1, 2), Outcome::First, "checkmate");
    let m = match_result(&s.l, 1, 1).unwrap();
    assert_eq!(
        m.game_points,
        [
            chuhe_league::Points::whole(4),
            chuhe_league::Points::whole(2)
        ]
    );
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}

/// Plays a whole round: every board's slow game won by the first team unless `outcome` says.
fn play_round(s: &mut Sim, round: u32, outcome: impl Fn(u32, u32) -> Outcome) {
    let r = s.l.rounds[round as usize - 1].clone();
    s.at(r.deadline_ms.max(s.now));
    s.at(r.start_ms.max(s.now));
    for t in 1..=r.tables.len() as u32 {
        if s.l.table(round, t).unwrap().forfeit.is_some() {
            continue;
        }
        for b in 1..=2 {
            if s.l.board(bk(round, t, b)).unwrap().games.is_empty() {
                continue;
            }
            s.end(bk(round, t, b), outcome(t, b), "checkmate");
        }
    }
}

#[test]
fn a_season_completes_its_rounds_and_ranks_the_teams() {
    let mut s = Sim::new(spec("round_robin", 4, serde_json::json!({})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    for round in 1..=6 {
        // Team 0 wins everything; otherwise the first-listed team wins.
        play_round(&mut s, round, |_, _| Outcome::First);
        let r = &s.l.rounds[round as usize - 1];
        assert!(r.completed, "round {round} complete");
    }
    let st = table_standings(&s.l).unwrap().unwrap();
    assert_eq!(st.rows.len(), 4);
    // Every match decided 4–0 on 局分: 场分 2 per win; 3 wins each over 6 rounds.
    let total: i32 = st.rows.iter().map(|r| r.match_points.halves()).sum();
    assert_eq!(total, 12 * 2 * 2);
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}

#[test]
fn lateness_forfeits_the_board_and_arbiters_decide_with_a_reason() {
    let mut s = Sim::new(spec("round_robin", 4, serde_json::json!({})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    let r1 = s.l.rounds[0].clone();
    s.at(r1.deadline_ms);
    s.at(r1.start_ms);
    // Board 1: the second team's player never came.
    s.end(bk(1, 1, 1), Outcome::First, "lateness");
    assert_eq!(
        s.l.board_record(bk(1, 1, 1)),
        Some(chuhe_league::chain::BoardRecord::Forfeit {
            forfeited_by: chuhe_league::Side::Second
        })
    );
    // Arbiters: only of this event, and only with a reason.
    let set = LeagueCommand::SetBoard {
        at: bk(1, 1, 2),
        setting: BoardSetting::Games {
            games: vec![SetGame {
                first_colour: ColourName::Black,
                result: Outcome::Second,
                fouls: [0, 0],
            }],
        },
    };
    assert_eq!(
        s.run(set.clone(), OTHER_ARB, Some("x")).unwrap_err().code(),
        "permission_denied"
    );
    assert_eq!(
        s.run(set.clone(), captain(0), Some("x"))
            .unwrap_err()
            .code(),
        "permission_denied"
    );
    assert_eq!(
        s.run(set.clone(), ARB, None).unwrap_err().code(),
        "invalid_argument"
    );
    assert_eq!(
        s.run(set.clone(), ARB, Some(" ")).unwrap_err().code(),
        "invalid_argument"
    );
    let wrong = LeagueCommand::SetBoard {
        at: bk(1, 1, 2),
        setting: BoardSetting::Games {
            games: vec![SetGame {
                first_colour: ColourName::Red,
                result: Outcome::Second,
                fouls: [0, 0],
            }],
        },
    };
    assert_eq!(
        s.run(wrong, ARB, Some("typo")).unwrap_err().code(),
        "invalid_argument",
        "board 2's first game is the first team's Black"
    );
    let ev = s.run(set, ARB, Some("the game's record was lost")).unwrap();
    assert_eq!(kinds(&ev), ["board_set"]);
    let entry = s
        .log
        .iter()
        .rev()
        .find(|e| e.event.kind() == "board_set")
        .unwrap();
    assert_eq!(
        (entry.actor, entry.reason.as_deref()),
        (Some(50), Some("the game's record was lost"))
    );
    assert_eq!(
        live_score(&s.l, 1, 1),
        [
            chuhe_league::Points::whole(2),
            chuhe_league::Points::whole(2)
        ]
    );
    // A board played again: its games so far no longer count; a new first game is set up.
    let ev = s
        .run(
            LeagueCommand::ReplayBoard { at: bk(1, 2, 1) },
            ARB,
            Some("wrong pieces"),
        )
        .unwrap();
    assert_eq!(kinds(&ev), ["board_replayed"]);
    let ev = s.create_wanted();
    assert_eq!(kinds(&ev), ["game_created"]);
    let w = s.game(bk(1, 2, 1)).clone();
    assert!(w.start_ms >= s.now);
    // The old game's result is ignored.
    let old =
        s.l.games
            .keys()
            .copied()
            .find(|g| *g != w.game && s.l.games[g].0 == bk(1, 2, 1))
            .unwrap();
    let ev = s
        .run(
            LeagueCommand::GameFinished {
                game: old,
                result: WResult::RedWins as i32,
                reason: "checkmate".into(),
                fouls: [0, 0],
            },
            SERVER,
            None,
        )
        .unwrap();
    assert!(ev.is_empty());
    // A whole match forfeited.
    let ev = s
        .run(
            LeagueCommand::ForfeitMatch {
                round: 2,
                table: 1,
                by: ForfeitBy::Both,
            },
            ARB,
            Some("neither team came"),
        )
        .unwrap();
    assert_eq!(kinds(&ev), ["match_forfeited"]);
    assert_eq!(match_result(&s.l, 2, 1).unwrap().winner, None);
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}

#[test]
fn a_withdrawn_team_plays_no_more_and_the_standings_apply_20_3() {
    let mut s = Sim::new(spec("round_robin", 4, serde_json::json!({})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    for round in 1..=4 {
        play_round(&mut s, round, |_, _| Outcome::First);
    }
    let leaving = s.l.table(5, 1).unwrap().teams[0];
    let ev = s
        .run(
            LeagueCommand::Withdraw {
                team: leaving,
                after_round: 4,
                expelled: false,
            },
            ARB,
            Some("the team left"),
        )
        .unwrap();
    assert_eq!(kinds(&ev), ["withdrawn"]);
    assert_eq!(
        s.run(
            LeagueCommand::Withdraw {
                team: leaving,
                after_round: 4,
                expelled: false
            },
            ARB,
            Some("again")
        )
        .unwrap_err()
        .code(),
        "conflict"
    );
    // Recorded after round 4: the table still holds 4 matches for it, none of round 5 or 6.
    let played = |s: &Sim| {
        let st = table_standings(&s.l).unwrap().unwrap();
        let row = st.rows.iter().find(|r| r.team == leaving).unwrap().clone();
        assert!(row.withdrawal.is_some());
        assert!(
            st.generated_forfeits.is_empty(),
            "{:?}",
            st.generated_forfeits
        );
        row.played
    };
    assert_eq!(played(&s), 4);
    // Its captain cannot submit a lineup for a later round.
    let k5 = s.l.rounds[4]
        .tables
        .iter()
        .position(|t| t.teams.contains(&leaving))
        .unwrap();
    let p = format!("p{leaving}0");
    let q = format!("p{leaving}1");
    assert_eq!(
        s.submit(5, k5 as u32 + 1, leaving, &[&p, &q])
            .unwrap_err()
            .code(),
        "conflict"
    );
    for round in 5..=6 {
        let (k, _) = s.l.rounds[round as usize - 1]
            .tables
            .iter()
            .enumerate()
            .find(|(_, t)| t.teams.contains(&leaving))
            .unwrap();
        let table = k as u32 + 1;
        let side = if s.l.table(round, table).unwrap().teams[0] == leaving {
            ForfeitBy::First
        } else {
            ForfeitBy::Second
        };
        // Not before its round comes.
        assert_eq!(s.l.table(round, table).unwrap().forfeit, None);
        let deadline = s.l.rounds[round as usize - 1].deadline_ms;
        let ev = s.at(deadline);
        assert!(kinds(&ev).contains(&"match_forfeited"), "{ev:?}");
        let t = s.l.table(round, table).unwrap();
        assert_eq!(
            t.forfeit,
            Some(side),
            "round {round}: a forfeit by the withdrawn team"
        );
        assert_eq!(
            t.revealed, None,
            "no lineup revealed for a match with a withdrawn team"
        );
        let m = match_result(&s.l, round, table).expect("the forfeit is the match's result");
        let winner = if side == ForfeitBy::First { 1 } else { 0 };
        assert_eq!(m.match_points[winner], chuhe_league::Points::whole(2));
        assert_eq!(m.match_points[1 - winner], chuhe_league::Points::ZERO);
        // Two boards, each the 象甲 preset's board win 2–0.
        assert_eq!(m.game_points[winner], chuhe_league::Points::whole(4));
        assert!(
            m.boards
                .iter()
                .all(|b| b.forfeit[1 - winner] && b.winner.is_some())
        );
        assert_eq!(
            played(&s),
            4 + round - 4,
            "round {round} counted once it came"
        );
        play_round(&mut s, round, |_, _| Outcome::First);
        assert!(s.l.rounds[round as usize - 1].completed);
        let t = s.l.table(round, table).unwrap();
        assert!(
            t.boards.iter().all(|b| b.games.is_empty()),
            "no games for it"
        );
        // After round 5 the table has no round-6 result for it.
        assert_eq!(played(&s), round);
    }
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}

/// 20.3 with its results annulled (fewer than half played): its later matches still become
/// forfeits when their rounds come (match view, sheet, log), but the standings drop them.
#[test]
fn an_annulled_withdrawal_forfeits_its_later_matches_and_counts_none() {
    let mut s = Sim::new(spec("round_robin", 4, serde_json::json!({})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    play_round(&mut s, 1, |_, _| Outcome::First);
    let leaving = s.l.table(2, 1).unwrap().teams[0];
    s.run(
        LeagueCommand::Withdraw {
            team: leaving,
            after_round: 1,
            expelled: false,
        },
        ARB,
        Some("the team left"),
    )
    .unwrap();
    for round in 2..=6 {
        play_round(&mut s, round, |_, _| Outcome::First);
        let t = s.l.rounds[round as usize - 1]
            .tables
            .iter()
            .find(|t| t.teams.contains(&leaving))
            .unwrap();
        assert!(t.forfeit.is_some(), "round {round}");
        assert!(t.revealed.is_none());
    }
    let st = table_standings(&s.l).unwrap().unwrap();
    let row = st.rows.iter().find(|r| r.team == leaving).unwrap();
    assert_eq!(row.rank, None);
    assert_eq!(
        row.withdrawal,
        Some(chuhe_league::standings::WithdrawalEffect::Annulled)
    );
    // The other three count only their matches among themselves: 4 each.
    for r in st.rows.iter().filter(|r| r.team != leaving) {
        assert_eq!(r.played, 4, "team {}", r.team);
    }
}

/// 20.3 "其余未赛对局均作弃权": the meeting of two teams that had both withdrawn before it was due
/// is a forfeit by both — 0 场分 each, counted as played and lost by both.
#[test]
fn two_withdrawn_teams_meeting_is_a_double_forfeit() {
    let mut s = Sim::new(spec("round_robin", 4, serde_json::json!({})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    for round in 1..=3 {
        play_round(&mut s, round, |_, _| Outcome::First);
    }
    // The two teams that meet in round 4 both leave after round 3 (3 of 6: results stand).
    let pair = s.l.table(4, 1).unwrap().teams;
    for team in pair {
        s.run(
            LeagueCommand::Withdraw {
                team,
                after_round: 3,
                expelled: false,
            },
            ARB,
            Some("left"),
        )
        .unwrap();
    }
    let lost = |s: &Sim, team: usize| {
        let st = table_standings(&s.l).unwrap().unwrap();
        let row = st.rows.iter().find(|r| r.team == team).unwrap().clone();
        (row.played, row.lost, row.match_points)
    };
    let before = pair.map(|t| lost(&s, t));
    play_round(&mut s, 4, |_, _| Outcome::First);
    assert_eq!(s.l.table(4, 1).unwrap().forfeit, Some(ForfeitBy::Both));
    assert!(s.l.rounds[3].completed);
    let m = match_result(&s.l, 4, 1).unwrap();
    assert_eq!(m.winner, None);
    assert_eq!(m.match_points, [chuhe_league::Points::ZERO; 2]);
    for (i, team) in pair.into_iter().enumerate() {
        let (p, l, mp) = before[i];
        assert_eq!(
            lost(&s, team),
            (p + 1, l + 1, mp),
            "played and lost, 0 场分"
        );
    }
    for round in 5..=6 {
        play_round(&mut s, round, |_, _| Outcome::First);
    }
    let st = table_standings(&s.l).unwrap().unwrap();
    for team in pair {
        let row = st.rows.iter().find(|r| r.team == team).unwrap();
        assert_eq!(
            row.played, 6,
            "all six counted, the double forfeit included"
        );
    }
    assert!(
        st.double_forfeits.is_empty(),
        "entered as a result, not generated"
    );
}

#[test]
fn a_swiss_pairs_each_round_when_the_one_before_is_complete() {
    let mut s = Sim::new(spec("swiss", 6, serde_json::json!({"rounds": 3})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    assert_eq!(s.l.rounds.len(), 1);
    assert_eq!(
        s.run(LeagueCommand::PairNextRound, ORG, None)
            .unwrap_err()
            .code(),
        "conflict"
    );
    play_round(&mut s, 1, |_, _| Outcome::First);
    assert_eq!(s.l.rounds.len(), 2, "round 2 paired on completion");
    // No rematch.
    let met: std::collections::BTreeSet<[usize; 2]> = s.l.rounds[0]
        .tables
        .iter()
        .map(|t| {
            let mut p = t.teams;
            p.sort();
            p
        })
        .collect();
    for t in &s.l.rounds[1].tables {
        let mut p = t.teams;
        p.sort();
        assert!(!met.contains(&p));
    }
    play_round(&mut s, 2, |_, _| Outcome::Second);
    play_round(&mut s, 3, |_, _| Outcome::Draw);
    assert_eq!(s.l.rounds.len(), 3, "no fourth round");
    assert!(table_standings(&s.l).unwrap().is_ok());
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}

#[test]
fn a_knockout_draws_the_next_round_from_the_winners() {
    let mut s = Sim::new(spec("knockout", 4, serde_json::json!({})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    assert_eq!(s.l.rounds[0].tables.len(), 2);
    play_round(&mut s, 1, |_, _| Outcome::First);
    assert_eq!(s.l.rounds.len(), 2);
    assert_eq!(s.l.rounds[1].tables.len(), 1, "the final");
    assert!(table_standings(&s.l).is_none());
}

#[test]
fn the_server_alone_records_games_and_ticks() {
    let mut s = Sim::new(spec("round_robin", 4, serde_json::json!({})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    for who in [ORG, ARB, captain(1)] {
        assert_eq!(
            s.run(LeagueCommand::Tick, who, None).unwrap_err().code(),
            "permission_denied"
        );
        let e = s
            .run(
                LeagueCommand::GameFinished {
                    game: 1,
                    result: 1,
                    reason: "x".into(),
                    fouls: [0, 0],
                },
                who,
                None,
            )
            .unwrap_err();
        assert_eq!(e.code(), "permission_denied");
    }
    // Unknown games are ignored (another league's, or a casual game).
    assert!(
        s.run(
            LeagueCommand::GameFinished {
                game: 999_999,
                result: 1,
                reason: "x".into(),
                fouls: [0, 0]
            },
            SERVER,
            None
        )
        .unwrap()
        .is_empty()
    );
    assert_eq!(next_due(&s.l, s.now), Some(s.l.rounds[0].deadline_ms));
}

/// A two-stage event: a single round robin of 4, then its top 2 in a knockout final with a
/// board chain of its own.
fn two_stages() -> EventSpec {
    let mut v = serde_json::to_value(spec("round_robin", 4, serde_json::json!({}))).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("system");
    o.insert(
        "result_chain".into(),
        serde_json::json!({"preset": "single", "time_control": "10m+5s"}),
    );
    o.insert(
        "stages".into(),
        serde_json::json!([
            {"name": "group", "system": "round_robin", "legs": 1},
            {"name": "final", "system": "knockout", "entrants": {"top": 2},
             "result_chain": {"preset": "slow-fast-armageddon", "time_controls": ["15m+5s", "3m+2s", "red:2m;black:90s"]}}
        ]),
    );
    serde_json::from_value(v).unwrap()
}

/// Plays a round in which the team listed first in the file wins every board.
fn play_round_seeded(s: &mut Sim, round: u32) {
    let tables: Vec<[usize; 2]> = s.l.rounds[round as usize - 1]
        .tables
        .iter()
        .map(|t| t.teams)
        .collect();
    play_round(s, round, move |t, _| {
        let [a, b] = tables[t as usize - 1];
        if a < b {
            Outcome::First
        } else {
            Outcome::Second
        }
    });
}

#[test]
fn a_two_stage_event_passes_its_top_teams_on_when_the_first_stage_is_complete() {
    let mut s = Sim::new(two_stages());
    assert_eq!(s.l.rules.planned_rounds(), 4);
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    assert_eq!(s.l.rounds.len(), 3, "the round robin's rounds only");
    assert!(s.l.rounds.iter().all(|r| r.stage == 1));
    let e = s
        .run(LeagueCommand::StartNextStage { teams: None }, ORG, None)
        .unwrap_err();
    assert_eq!(e.code(), "stage_not_complete", "{e}");
    // The first stage's games have its chain (a single game).
    s.at(s.l.rounds[0].start_ms);
    let w = wanted_games(&s.l, s.now);
    assert!(w.is_empty(), "created already");
    assert_eq!(s.game(bk(1, 1, 1)).stage, 0);
    play_round_seeded(&mut s, 1);
    play_round_seeded(&mut s, 2);
    assert_eq!(s.l.current_stage(), 1);
    let before = s.log.len();
    play_round_seeded(&mut s, 3);
    let kinds_after: Vec<&str> = s.log[before..].iter().map(|e| e.event.kind()).collect();
    assert!(kinds_after.contains(&"stage_started"), "{kinds_after:?}");
    // Seeded by the standings: T0 (3 wins) and T1 (2 wins) meet in the final, T0 first.
    assert_eq!(s.l.stages, vec![vec![0, 1, 2, 3], vec![0, 1]]);
    assert_eq!(s.l.rounds.len(), 4);
    let fin = &s.l.rounds[3];
    assert_eq!((fin.stage, fin.tables.len()), (2, 1));
    assert_eq!(fin.tables[0].teams, [0, 1]);
    assert_eq!(fin.start_ms, s.l.planned[3].0, "the fourth scheduled time");
    // The standings shown are the group's (a knockout has none), in league team numbers.
    assert_eq!(standings_stage(&s.l), Some(1));
    let st = table_standings(&s.l).unwrap().unwrap();
    assert_eq!(
        st.rows.iter().map(|r| r.team).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    // The final plays its own chain: a drawn slow game goes on to the fast game.
    s.at(fin.deadline_ms);
    s.at(s.l.rounds[3].start_ms);
    let b1 = bk(4, 1, 1);
    assert_eq!(s.game(b1).stage, 0);
    s.end(b1, Outcome::Draw, "draw_agreed");
    let w = s.l.board(b1).unwrap().games.last().unwrap().clone();
    assert_eq!(w.stage, 1, "the fast game follows");
    s.end(b1, Outcome::Second, "checkmate");
    s.end(bk(4, 1, 2), Outcome::Second, "checkmate");
    assert_eq!(knockout_winner(&s.l, 2), Some(1), "T1 won the final");
    assert!(s.l.rounds[3].completed);
    assert_eq!(s.l.rounds.len(), 4, "nothing after the final");
    assert_eq!(
        s.run(LeagueCommand::StartNextStage { teams: None }, ORG, None)
            .unwrap_err()
            .code(),
        "conflict"
    );
    let again = League::replay(7, &s.log).unwrap();
    assert_eq!(digest(&again), digest(&s.l));
    assert_eq!(again.stages, s.l.stages);
}

#[test]
fn a_tie_for_the_last_place_that_passes_on_waits_for_the_organiser() {
    let mut s = Sim::new(two_stages());
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    for round in 1..=3 {
        play_round(&mut s, round, |_, _| Outcome::Draw);
    }
    assert!(s.l.rounds.iter().all(|r| r.completed));
    assert_eq!(s.l.current_stage(), 1, "every team level: nobody seeded");
    let e = s
        .run(LeagueCommand::StartNextStage { teams: None }, ORG, None)
        .unwrap_err();
    assert_eq!(e.code(), "seeding_refused", "{e}");
    for (teams, code) in [
        (vec![2], "invalid_argument"),
        (vec![2, 2], "invalid_argument"),
        (vec![2, 9], "invalid_argument"),
    ] {
        let e = s
            .run(
                LeagueCommand::StartNextStage { teams: Some(teams) },
                ORG,
                None,
            )
            .unwrap_err();
        assert_eq!(e.code(), code, "{e}");
    }
    assert_eq!(
        s.run(
            LeagueCommand::StartNextStage {
                teams: Some(vec![3, 2])
            },
            captain(3),
            None
        )
        .unwrap_err()
        .code(),
        "permission_denied"
    );
    s.run(
        LeagueCommand::StartNextStage {
            teams: Some(vec![3, 2]),
        },
        ORG,
        None,
    )
    .unwrap();
    assert_eq!(s.l.stages[1], vec![3, 2]);
    assert_eq!(s.l.rounds[3].tables[0].teams, [3, 2], "seed 1 listed first");
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}

#[test]
fn a_swiss_after_a_round_robin_pairs_within_its_own_rounds() {
    let mut v = serde_json::to_value(two_stages()).unwrap();
    v["stages"][1] = serde_json::json!({"name": "swiss", "system": "swiss", "rounds": 2});
    let mut s = Sim::new(serde_json::from_value(v).unwrap());
    assert_eq!(s.l.rules.planned_rounds(), 5);
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    for round in 1..=3 {
        play_round_seeded(&mut s, round);
    }
    assert_eq!(s.l.current_stage(), 2);
    assert_eq!(
        s.l.stages[1],
        vec![0, 1, 2, 3],
        "everybody, by the standings"
    );
    assert_eq!(s.l.rounds.len(), 4);
    assert_eq!(s.l.rounds[3].tables.len(), 2);
    play_round_seeded(&mut s, 4);
    assert_eq!(s.l.rounds.len(), 5, "the Swiss's second round");
    assert_eq!(s.l.rounds[4].stage, 2);
    play_round_seeded(&mut s, 5);
    assert_eq!(s.l.rounds.len(), 5, "no third Swiss round");
    // The default standings are now the Swiss's: 2 rounds each.
    assert_eq!(standings_stage(&s.l), Some(2));
    let st = stage_tables(&s.l, 2).unwrap().unwrap();
    assert!(
        st.standings.rows.iter().all(|r| r.played == 2),
        "{:?}",
        st.standings.rows
    );
    assert_eq!(st.rounds, vec![4, 5]);
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}

#[test]
fn all_play_all_plays_every_player_against_every_other_sub_round_by_sub_round() {
    let mut s = Sim::new(spec(
        "round_robin",
        2,
        serde_json::json!({
            "legs": 1,
            "lineup": {"system": "all_play_all"},
            "result_chain": {"preset": "single", "time_control": "10m+5s"},
        }),
    ));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    assert_eq!(s.l.rounds.len(), 1);
    assert_eq!(s.l.rounds[0].tables[0].teams, [0, 1]);
    assert_eq!(s.l.rounds[0].tables[0].boards.len(), 4, "2 × 2 games");
    // Team 0 in an order of its own (any order, 12.4), team 1 by its registered order.
    s.submit(1, 1, 0, &["p01", "p00"]).unwrap();
    let r = s.l.rounds[0].clone();
    s.at(r.deadline_ms);
    s.at(r.start_ms);
    let players = |s: &Sim, b: u32| {
        let t = s.l.table(1, 1).unwrap();
        [
            s.l.player_of(t, TeamSide::First, b).unwrap().1,
            s.l.player_of(t, TeamSide::Second, b).unwrap().1,
        ]
    };
    // Sub-round 1: the lineups' boards, colours 13.2.
    let started: Vec<u32> = (1..=4)
        .filter(|b| !s.l.board(bk(1, 1, *b)).unwrap().games.is_empty())
        .collect();
    assert_eq!(started, [1, 2]);
    assert_eq!(players(&s, 1), ["p01", "p10"]);
    assert_eq!(players(&s, 2), ["p00", "p11"]);
    assert_eq!(s.game(bk(1, 1, 1)).first_colour, ColourName::Red);
    assert_eq!(s.game(bk(1, 1, 2)).first_colour, ColourName::Black);
    // Sub-round 2 waits for every game of sub-round 1.
    s.end(bk(1, 1, 1), Outcome::First, "checkmate");
    assert!(s.l.board(bk(1, 1, 3)).unwrap().games.is_empty());
    assert!(wanted_games(&s.l, s.now + 10 * HOUR).is_empty());
    s.end(bk(1, 1, 2), Outcome::Draw, "draw_agreed");
    let ended = s.now;
    // Then the other pairs, a break later: first's board-1 player against second's board 2,
    // with the colours swapped from sub-round 1 (the first side Red on odd games).
    assert_eq!(players(&s, 3), ["p00", "p10"]);
    assert_eq!(players(&s, 4), ["p01", "p11"]);
    let g3 = s.game(bk(1, 1, 3)).clone();
    assert_eq!(
        (g3.first_colour, g3.red, g3.black, g3.start_ms),
        (ColourName::Red, 100, 200, ended + 60_000)
    );
    assert_eq!(s.game(bk(1, 1, 4)).first_colour, ColourName::Black);
    // Every player met every player once.
    let met: std::collections::BTreeSet<[String; 2]> = (1..=4).map(|b| players(&s, b)).collect();
    assert_eq!(met.len(), 4);
    assert!(match_result(&s.l, 1, 1).is_none(), "two games to go");
    s.end(bk(1, 1, 3), Outcome::Second, "checkmate");
    s.end(bk(1, 1, 4), Outcome::First, "checkmate");
    // 局分 over the four games (2-1-0): 2 + 1 + 0 + 2 against 0 + 1 + 2 + 0; the match is
    // won on them (14.2).
    let m = match_result(&s.l, 1, 1).unwrap();
    assert_eq!(
        m.game_points.map(|p| p.halves()),
        [10, 6],
        "{:?}",
        m.game_points
    );
    assert_eq!(m.match_points.map(|p| p.halves()), [4, 0]);
    assert!(s.l.rounds[0].completed);
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}

#[test]
fn total_score_ranks_the_teams_by_their_entrants_individual_ranks() {
    let mut v = serde_json::to_value(spec(
        "round_robin",
        4,
        serde_json::json!({
            "legs": 1,
            "lineup": {"system": "total_score"},
            "result_chain": {"preset": "single", "time_control": "10m+5s"},
        }),
    ))
    .unwrap();
    // 12.5: exactly the entrants, no substitutes.
    for t in v["teams"].as_array_mut().unwrap() {
        t["players"].as_array_mut().unwrap().truncate(2);
    }
    let mut s = Sim::new(serde_json::from_value(v).unwrap());
    assert!(
        total_score_tables(&s.l, 1)
            .unwrap()
            .unwrap()
            .individual
            .iter()
            .all(|r| r.games == 0)
    );
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    // Every game won by the player of the team listed earlier in the file: its entrants score
    // 6, 4, 2 and 0 points, team by team.
    for round in 1..=3 {
        play_round_seeded(&mut s, round);
    }
    let t = total_score_tables(&s.l, 1).unwrap().unwrap();
    let mut points: Vec<(String, i32)> = t
        .individual
        .iter()
        .map(|r| (t.players[r.player].1.clone(), r.points.halves()))
        .collect();
    points.sort();
    assert_eq!(
        points,
        [
            ("p00", 12),
            ("p01", 12),
            ("p10", 8),
            ("p11", 8),
            ("p20", 4),
            ("p21", 4),
            ("p30", 0),
            ("p31", 0)
        ]
        .map(|(n, p)| (n.to_string(), p))
    );
    // Two entrants a team within ranks 1–2, 3–4, 5–6, 7–8: the rank sums order the teams.
    let order: Vec<usize> = t.rows.iter().map(|r| t.teams[r.team]).collect();
    assert_eq!(order, [0, 1, 2, 3]);
    assert!(
        t.rows
            .iter()
            .skip(1)
            .all(|r| r.decided_by == Some(chuhe_league::lineup::TotalScoreCriterion::RankSum))
    );
    assert!((2..=3).contains(&t.rows[0].rank_sum), "{:?}", t.rows);
    assert_eq!(
        stage_ranking(&s.l, 1).unwrap().unwrap(),
        t.rows
            .iter()
            .map(|r| (t.teams[r.team], Some(r.rank)))
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_team_that_withdrew_is_not_passed_on_to_the_next_stage() {
    let mut s = Sim::new(two_stages());
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    play_round_seeded(&mut s, 1);
    play_round_seeded(&mut s, 2);
    // T0, first so far, withdraws after round 2.
    s.run(
        LeagueCommand::Withdraw {
            team: 0,
            after_round: 2,
            expelled: false,
        },
        ARB,
        Some("withdrew by letter"),
    )
    .unwrap();
    play_round_seeded(&mut s, 3);
    assert_eq!(s.l.current_stage(), 2);
    assert_eq!(s.l.stages[1], vec![1, 2], "the next two, T0 not among them");
    assert_eq!(s.l.rounds[3].tables[0].teams, [1, 2]);
    // Naming a withdrawn team is refused.
    let mut again = Sim::new(two_stages());
    again.run(LeagueCommand::Publish, ORG, None).unwrap();
    for round in 1..=3 {
        play_round(&mut again, round, |_, _| Outcome::Draw);
    }
    again
        .run(
            LeagueCommand::Withdraw {
                team: 3,
                after_round: 3,
                expelled: false,
            },
            ARB,
            Some("withdrew after the group"),
        )
        .unwrap();
    let e = again
        .run(
            LeagueCommand::StartNextStage {
                teams: Some(vec![3, 0]),
            },
            ORG,
            None,
        )
        .unwrap_err();
    assert_eq!(e.code(), "invalid_argument", "{e}");
}

/// An arbiter's setting of a board: one game, with 13.2's colour for the first team.
fn set_one(at: BoardKey, result: Outcome, fouls: [u32; 2]) -> LeagueCommand {
    LeagueCommand::SetBoard {
        at,
        setting: BoardSetting::Games {
            games: vec![SetGame {
                first_colour: if at.board % 2 == 1 {
                    ColourName::Red
                } else {
                    ColourName::Black
                },
                result,
                fouls,
            }],
        },
    }
}

#[test]
fn a_level_knockout_tie_keeps_its_round_open_until_an_arbiter_decides_it() {
    let mut s = Sim::new(spec("knockout", 4, serde_json::json!({})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    // Table 1 level 2–2 (each side wins a board); table 2 won by its first team.
    play_round(&mut s, 1, |t, b| {
        if t == 1 && b == 2 {
            Outcome::Second
        } else {
            Outcome::First
        }
    });
    let level = match_result(&s.l, 1, 1).unwrap();
    assert_eq!(level.winner, None, "{level:?}");
    assert!(!s.l.rounds[0].completed, "a level tie keeps the round open");
    assert_eq!(s.l.rounds.len(), 1);
    // The arbiter decides the tie: the round completes and the final is paired from it.
    let ev = s
        .run(
            set_one(bk(1, 1, 2), Outcome::First, [0, 0]),
            ARB,
            Some("play-off game won by the first team"),
        )
        .unwrap();
    assert_eq!(kinds(&ev), ["board_set", "round_completed", "round_paired"]);
    assert_eq!(s.l.rounds.len(), 2);
    let winners: Vec<usize> = [1, 2]
        .iter()
        .map(|&t| s.l.table(1, t).unwrap().teams[0])
        .collect();
    let mut fin = s.l.rounds[1].tables[0].teams.to_vec();
    fin.sort_unstable();
    let mut want = winners.clone();
    want.sort_unstable();
    assert_eq!(fin, want, "the final is between the two winners");
    // Once the final is paired, round 1's winners are fixed: a correction that would change
    // one is refused, one that keeps them stands.
    let flip = set_one(bk(1, 2, 1), Outcome::Second, [0, 0]);
    let e = s.run(flip, ARB, Some("scoresheet error")).unwrap_err();
    assert_eq!(e.code(), "already_seeded", "{e}");
    let replay = LeagueCommand::ReplayBoard { at: bk(1, 1, 2) };
    assert_eq!(
        s.run(replay, ARB, Some("x")).unwrap_err().code(),
        "already_seeded"
    );
    let fouls = set_one(bk(1, 2, 1), Outcome::First, [1, 0]);
    assert_eq!(
        kinds(&s.run(fouls, ARB, Some("a foul was missed")).unwrap()),
        ["board_set"]
    );
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}

#[test]
fn a_knockout_round_completed_level_by_an_older_log_is_paired_once_decided() {
    let mut s = Sim::new(spec("knockout", 4, serde_json::json!({})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    play_round(&mut s, 1, |t, b| {
        if t == 1 && b == 2 {
            Outcome::Second
        } else {
            Outcome::First
        }
    });
    // What a server before level ties kept the round open wrote: the round completed.
    let e = Entry {
        seq: s.l.seq + 1,
        at_ms: s.now,
        actor: None,
        reason: None,
        event: LeagueEvent::RoundCompleted { round: 1 },
    };
    s.l.fold(&e).unwrap();
    s.log.push(e);
    assert!(s.l.rounds[0].completed);
    let ev = s
        .run(
            set_one(bk(1, 1, 2), Outcome::First, [0, 0]),
            ARB,
            Some("decided"),
        )
        .unwrap();
    assert_eq!(kinds(&ev), ["board_set", "round_paired"]);
    assert_eq!(s.l.rounds.len(), 2);
}

#[test]
fn a_correction_that_would_change_who_passed_on_to_the_next_stage_is_refused() {
    let mut s = Sim::new(two_stages());
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    for round in 1..=3 {
        play_round_seeded(&mut s, round);
    }
    assert_eq!(s.l.stages[1], vec![0, 1]);
    let find = |s: &Sim, teams: [usize; 2]| -> (u32, u32) {
        for r in 1..=3u32 {
            for (k, t) in s.l.rounds[r as usize - 1].tables.iter().enumerate() {
                if t.teams == teams || t.teams == [teams[1], teams[0]] {
                    return (r, k as u32 + 1);
                }
            }
        }
        panic!("no match {teams:?}")
    };
    // T1 beat T2: giving T2 a board levels their match, and T1 and T2 on 场分: who passes on
    // would change.
    let (r, t) = find(&s, [1, 2]);
    let t2 = if s.l.table(r, t).unwrap().teams[0] == 2 {
        Outcome::First
    } else {
        Outcome::Second
    };
    let before = s.l.clone();
    let e = s
        .run(set_one(bk(r, t, 1), t2, [0, 0]), ARB, Some("b1"))
        .unwrap_err();
    assert_eq!(e.code(), "already_seeded", "{e}");
    assert_eq!(digest(&s.l), digest(&before), "nothing changed");
    // A draw between T2 and T3 changes no one who passed on: it stands.
    let (r, t) = find(&s, [2, 3]);
    s.run(
        set_one(bk(r, t, 2), Outcome::Draw, [0, 0]),
        ARB,
        Some("draw"),
    )
    .unwrap();
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}

#[test]
fn total_score_counts_games_both_lost_and_an_armageddon_draw_as_black_s_win() {
    let mut v = serde_json::to_value(spec(
        "round_robin",
        4,
        serde_json::json!({"legs": 1, "lineup": {"system": "total_score"}}),
    ))
    .unwrap();
    for t in v["teams"].as_array_mut().unwrap() {
        t["players"].as_array_mut().unwrap().truncate(2);
    }
    let mut s = Sim::new(serde_json::from_value(v).unwrap());
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    let r1 = s.l.rounds[0].clone();
    s.at(r1.deadline_ms);
    s.at(r1.start_ms);
    // Table 1, board 1: both players past the lateness limit (21.3: both lose).
    s.end(bk(1, 1, 1), Outcome::BothLose, "lateness");
    // Table 1, board 2: both sides forfeited it.
    s.run(
        LeagueCommand::SetBoard {
            at: bk(1, 1, 2),
            setting: BoardSetting::Forfeit {
                by: ForfeitBy::Both,
            },
        },
        ARB,
        Some("neither came"),
    )
    .unwrap();
    // Table 2, board 1: slow and fast games drawn, the armageddon drawn with the first team's
    // player Red: Black's (the second team's) win.
    let draw = |first_colour| SetGame {
        first_colour,
        result: Outcome::Draw,
        fouls: [0, 0],
    };
    s.run(
        LeagueCommand::SetBoard {
            at: bk(1, 2, 1),
            setting: BoardSetting::Games {
                games: vec![
                    draw(ColourName::Red),
                    draw(ColourName::Black),
                    draw(ColourName::Red),
                ],
            },
        },
        ARB,
        Some("scoresheets"),
    )
    .unwrap();
    s.end(bk(1, 2, 2), Outcome::First, "checkmate");
    assert!(s.l.rounds[0].completed);
    let t = total_score_tables(&s.l, 1).unwrap().unwrap();
    let row = |team: usize, k: usize| {
        let name = format!("p{team}{k}");
        t.individual
            .iter()
            .find(|r| t.players[r.player].1 == name)
            .map(|r| (r.games, r.points.halves() / 2, r.wins))
            .unwrap()
    };
    let [c, d] = s.l.rounds[0].tables[1].teams;
    assert_eq!(row(c, 0), (3, 2, 0), "two draws and the armageddon lost");
    assert_eq!(
        row(d, 0),
        (3, 4, 1),
        "two draws and the armageddon won with Black"
    );
    assert_eq!(row(c, 1), (1, 2, 1));
    assert_eq!(row(d, 1), (1, 0, 0));
    let [a, b] = s.l.rounds[0].tables[0].teams;
    for (team, k) in [(a, 0), (b, 0), (a, 1), (b, 1)] {
        assert_eq!(
            row(team, k),
            (1, 0, 0),
            "p{team}{k}: one game, lost by both"
        );
    }
    // An arbiter's game lost by both is the same as one lost by both on the clock (it was read
    // as a draw).
    s.run(
        LeagueCommand::SetBoard {
            at: bk(1, 2, 2),
            setting: BoardSetting::Games {
                games: vec![SetGame {
                    first_colour: ColourName::Black,
                    result: Outcome::BothLose,
                    fouls: [0, 0],
                }],
            },
        },
        ARB,
        Some("both past the lateness limit"),
    )
    .unwrap();
    assert_eq!(
        s.l.board_record(bk(1, 2, 2)),
        Some(chuhe_league::chain::BoardRecord::DoubleForfeit)
    );
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}

#[test]
fn a_knockout_tie_whose_team_withdrew_is_a_walkover_and_the_next_round_is_paired() {
    let mut s = Sim::new(spec("knockout", 4, serde_json::json!({})));
    s.run(LeagueCommand::Publish, ORG, None).unwrap();
    let [gone, stays] = s.l.rounds[0].tables[1].teams;
    // Table 2's first team withdraws before round 1 is played.
    s.run(
        LeagueCommand::Withdraw {
            team: gone,
            after_round: 0,
            expelled: false,
        },
        ARB,
        Some("withdrew before the knockout"),
    )
    .unwrap();
    play_round(&mut s, 1, |_, _| Outcome::First);
    assert!(s.l.rounds[0].completed, "round 1 complete");
    assert_eq!(s.l.rounds.len(), 2, "the final is paired");
    let mut fin = s.l.rounds[1].tables[0].teams.to_vec();
    fin.sort_unstable();
    let mut want = vec![s.l.rounds[0].tables[0].teams[0], stays];
    want.sort_unstable();
    assert_eq!(
        fin, want,
        "table 1's winner meets the team whose opponent withdrew"
    );
    assert_eq!(digest(&League::replay(7, &s.log).unwrap()), digest(&s.l));
}
