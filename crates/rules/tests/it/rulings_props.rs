//! Property tests for the rulings: the colour mirror used by the case suite agrees with the
//! core's, and a game and its mirror end the same way (mirrored), move by move.
#![allow(clippy::unwrap_used)]

use chuhe_rules::rulings::casefile::{mirror_fen, mirror_iccs};
use chuhe_rules::rulings::{Game, GameResult, RulesConfig};
use chuhe_rules::{Move, Position};
use proptest::prelude::*;

fn mirrored(r: GameResult) -> GameResult {
    match r {
        GameResult::RedWins => GameResult::BlackWins,
        GameResult::BlackWins => GameResult::RedWins,
        GameResult::Draw => GameResult::Draw,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random play (choices index the legal moves, with a bias to shuffling back and forth so
    /// that repetitions happen), mirrored move by move.
    #[test]
    fn mirror_agrees_and_games_mirror(choices in proptest::collection::vec(0usize..64, 1..120)) {
        let mut game = Game::new(Position::new(), RulesConfig::default());
        let mirror_start = Position::from_fen(&mirror_fen(&Position::new().to_fen()).unwrap()).unwrap();
        prop_assert_eq!(mirror_start.to_fen(), Position::new().mirror().to_fen());
        let mut twin = Game::new(mirror_start, RulesConfig::default());
        let mut history: Vec<Move> = Vec::new();
        for (i, c) in choices.iter().enumerate() {
            if game.end().is_some() {
                break;
            }
            let pos = game.position().clone();
            prop_assert_eq!(mirror_fen(&pos.to_fen()).unwrap(), pos.mirror().to_fen());
            let legal: Vec<Move> = pos.legal_moves().iter().copied().collect();
            // Half the time undo the mover's previous move if legal: repetitions.
            let back = (i >= 2 && c % 2 == 0)
                .then(|| history[i - 2])
                .map(|m| Move::new(m.to(), m.from()))
                .filter(|m| legal.contains(m));
            let m = back.unwrap_or(legal[c % legal.len()]);
            history.push(m);
            let a = game.play(m).unwrap();
            let mm = Move::from_iccs(&mirror_iccs(&m.to_string()).unwrap()).unwrap();
            let b = twin.play(mm).unwrap();
            prop_assert_eq!(a.warning.as_ref().map(|w| (w.side.other(), w.ply)), b.warning.as_ref().map(|w| (w.side, w.ply)));
            prop_assert_eq!(a.end.as_ref().map(|e| (mirrored(e.result), e.cause, e.ply)), b.end.as_ref().map(|e| (e.result, e.cause, e.ply)));
        }
    }
}
