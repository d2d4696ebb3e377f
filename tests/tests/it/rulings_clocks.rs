//! Rulings, draws and clocks over real websockets: perpetual check, must-vary
//! warning then loss (explanations reach spectators), draw offers with the
//! alternation foul, flags by the server's own timer, increment and 读秒.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use anyhow::Result;
use chuhe_e2e::*;
use chuhe_proto::Encoding;
use chuhe_proto::v1::{self as w, client_message, game_event};
use chuhe_server::Config;

async fn setup(backend: &str) -> Result<(TestDb, Server, Cast)> {
    start_seeded(backend, Config::default()).await
}

fn ruling(e: &w::GameEvent) -> Option<w::Ruling> {
    match &e.kind {
        Some(game_event::Kind::Ruling(r)) => r.ruling.clone(),
        _ => None,
    }
}

/// Plays `moves` alternately (Red first), each acknowledged.
async fn play_all(
    red: &mut Client,
    black: &mut Client,
    game: &str,
    from_ply: u32,
    moves: &[&str],
) -> Result<()> {
    for (i, m) in moves.iter().enumerate() {
        let ply = from_ply + i as u32;
        let c = if ply % 2 == 1 { &mut *red } else { &mut *black };
        c.play(game, ply, m).await?;
    }
    Ok(())
}

#[tokio::test]
async fn perpetual_check_loses_and_spectator_gets_the_explanation() -> Result<()> {
    for b in backends() {
        let (db, server, cast) = setup(b).await?;
        let game = create_game(
            server.addr,
            &cast,
            "10m",
            "3k5/9/9/9/9/9/9/9/9/R3K4 w - - 0 1",
            "",
        )
        .await?;
        let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
        let mut black = Client::connect(server.addr, Some(&cast.black), Encoding::Proto).await?;
        let mut fan = Client::connect(server.addr, None, Encoding::Json).await?;
        fan.subscribe(&game, 0).await?;
        play_all(
            &mut red,
            &mut black,
            &game,
            1,
            &[
                "a0a9", "d9d8", "a9a8", "d8d9", "a8a9", "d9d8", "a9a8", "d8d9", "a8a9",
            ],
        )
        .await?;
        let r = fan.event(ruling).await?;
        assert_eq!(r.kind, w::RulingKind::Decision as i32);
        assert_eq!(r.side, w::Side::Red as i32);
        assert_eq!(r.result, w::Result::BlackWins as i32);
        assert!(r.article.contains("24"), "{}", r.article);
        assert!(r.explanation.contains("Red"), "{}", r.explanation);
        assert!(
            r.cycle
                .iter()
                .any(|m| m.class == w::MoveClass::Check as i32)
        );
        let (result, reason) = fan.event(ended).await?;
        assert_eq!(
            (result, reason.as_str()),
            (w::Result::BlackWins, "perpetual_check")
        );
        server.stop().await?;
        db.drop_db().await;
    }
    Ok(())
}

#[tokio::test]
async fn must_vary_warning_then_loss() -> Result<()> {
    for b in backends() {
        let (db, server, cast) = setup(b).await?;
        // Red's rook chases Black's unprotected horse (a7 <-> c8).
        let game = create_game(
            server.addr,
            &cast,
            "10m",
            "4k4/9/n8/9/9/9/9/9/2R6/3K5 w - - 0 1",
            "",
        )
        .await?;
        let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
        let mut black = Client::connect(server.addr, Some(&cast.black), Encoding::Json).await?;
        let mut fan = Client::connect(server.addr, None, Encoding::Proto).await?;
        fan.subscribe(&game, 0).await?;
        let cycle = ["c1a1", "a7c8", "a1c1", "c8a7"];
        play_all(&mut red, &mut black, &game, 1, &cycle).await?;
        play_all(&mut red, &mut black, &game, 5, &cycle).await?;
        let warning = fan.event(ruling).await?;
        assert_eq!(warning.kind, w::RulingKind::Warning as i32);
        assert_eq!(warning.side, w::Side::Red as i32);
        assert!(
            warning.explanation.contains("must vary"),
            "{}",
            warning.explanation
        );
        assert!(
            warning
                .cycle
                .iter()
                .any(|m| m.class == w::MoveClass::Chase as i32 && !m.chased.is_empty())
        );
        // A requested ruling reports the warning in force.
        let r = red
            .send(client_message::Kind::RequestRuling(w::RequestRuling {
                game_id: game.clone(),
            }))
            .await?;
        red.reply(r).await?;
        play_all(&mut red, &mut black, &game, 9, &cycle).await?;
        let loss = fan
            .event(|e| ruling(e).filter(|r| r.kind == w::RulingKind::Decision as i32))
            .await?;
        assert_eq!(loss.result, w::Result::BlackWins as i32);
        assert!(loss.article.contains("24.3"), "{}", loss.article);
        let (result, reason) = fan.event(ended).await?;
        assert_eq!(
            (result, reason.as_str()),
            (w::Result::BlackWins, "perpetual_chase")
        );
        server.stop().await?;
        db.drop_db().await;
    }
    Ok(())
}

#[tokio::test]
async fn draw_offer_alternation_foul_then_agreed_draw() -> Result<()> {
    for b in backends() {
        let (db, server, cast) = setup(b).await?;
        let game = create_game(server.addr, &cast, "10m", "", "").await?;
        let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
        let mut black = Client::connect(server.addr, Some(&cast.black), Encoding::Json).await?;
        black.subscribe(&game, 0).await?;
        red.subscribe(&game, 0).await?;
        let offer = |ply: u32, mv: &str| {
            client_message::Kind::Move(w::MakeMove {
                game_id: game.clone(),
                ply,
                r#move: mv.into(),
                offer_draw: true,
                think_ms: 0,
            })
        };
        // Red moves and offers; Black declines.
        let r = red.send(offer(1, "h2e2")).await?;
        red.reply(r).await?;
        black
            .event(|e| matches!(e.kind, Some(game_event::Kind::DrawOffered(_))).then_some(()))
            .await?;
        let r = black
            .send(client_message::Kind::AnswerDraw(w::AnswerDraw {
                game_id: game.clone(),
                accept: false,
            }))
            .await?;
        black.reply(r).await?;
        black.play(&game, 2, "h9g7").await?;
        // Red offers again before Black has offered: a foul, and no offer is passed on.
        let r = red.send(offer(3, "h0g2")).await?;
        red.reply(r).await?;
        let foul = red
            .event(|e| match &e.kind {
                Some(game_event::Kind::Foul(f)) => Some(f.clone()),
                Some(game_event::Kind::DrawOffered(_)) => {
                    panic!("the repeated offer was passed on")
                }
                _ => None,
            })
            .await?;
        assert_eq!(
            (foul.side, foul.code.as_str(), foul.count),
            (w::Side::Red as i32, "repeated_draw_offer", 1)
        );
        // Black offers (allowed: it has not offered before); Red accepts.
        let r = black.send(offer(4, "i9h9")).await?;
        black.reply(r).await?;
        red.event(|e| matches!(e.kind, Some(game_event::Kind::DrawOffered(_))).then_some(()))
            .await?;
        let r = red
            .send(client_message::Kind::AnswerDraw(w::AnswerDraw {
                game_id: game.clone(),
                accept: true,
            }))
            .await?;
        red.reply(r).await?;
        let (result, reason) = black.event(ended).await?;
        assert_eq!((result, reason.as_str()), (w::Result::Draw, "draw_agreed"));
        server.stop().await?;
        db.drop_db().await;
    }
    Ok(())
}

#[tokio::test]
async fn flag_falls_with_no_player_connected() -> Result<()> {
    for b in backends() {
        let (db, server, cast) = setup(b).await?;
        // Red's clock starts at creation; no player ever connects.
        let game = create_game(server.addr, &cast, "300ms", "", "").await?;
        // Only a spectator watches (it does nothing to the clock).
        let mut fan = Client::connect(server.addr, None, Encoding::Json).await?;
        fan.subscribe(&game, 0).await?;
        let snap = fan.expect(snapshot).await?;
        let (result, reason) = if snap.finished {
            (w::Result::try_from(snap.result)?, snap.end_reason)
        } else {
            fan.event(ended).await?
        };
        assert_eq!((result, reason.as_str()), (w::Result::BlackWins, "flag"));
        server.stop().await?;
        db.drop_db().await;
    }
    Ok(())
}

fn clock_of(e: &w::GameEvent) -> Option<w::ClockState> {
    match &e.kind {
        Some(game_event::Kind::Move(m)) => m.clock,
        _ => None,
    }
}

#[tokio::test]
async fn increment_is_added() -> Result<()> {
    for b in backends() {
        let (db, server, cast) = setup(b).await?;
        let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Proto).await?;
        let game = create_game(server.addr, &cast, "3s+2s", "", "").await?;
        red.subscribe(&game, 0).await?;
        red.play(&game, 1, "h2e2").await?;
        let clock = red.event(clock_of).await?;
        let r = clock.red.unwrap().remaining_ms;
        assert!(
            r > 3000 && r <= 5000,
            "red has {r} ms after a quick move with +2s"
        );
        assert_eq!(clock.running, w::Side::Black as i32);
        server.stop().await?;
        db.drop_db().await;
    }
    Ok(())
}

#[tokio::test]
async fn byoyomi_periods_reset_and_run_out() -> Result<()> {
    for b in backends() {
        let (db, server, cast) = setup(b).await?;
        let mut red = Client::connect(server.addr, Some(&cast.red), Encoding::Json).await?;
        // No main time: 读秒 from the start, 2 periods of 1 s.
        let game = create_game(server.addr, &cast, "0|2x1s", "", "").await?;
        red.subscribe(&game, 0).await?;
        red.play(&game, 1, "h2e2").await?;
        let clock = red.event(clock_of).await?;
        let rc = clock.red.unwrap();
        assert!(rc.in_byoyomi);
        assert_eq!(
            rc.periods_left, 2,
            "a move inside the period keeps every period"
        );
        assert_eq!(rc.remaining_ms, 1000, "the period restarts in full");
        // Black never moves: both periods run out and the server's timer flags.
        let (result, reason) = red.event(ended).await?;
        assert_eq!((result, reason.as_str()), (w::Result::RedWins, "flag"));
        server.stop().await?;
        db.drop_db().await;
    }
    Ok(())
}
