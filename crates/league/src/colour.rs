//! Colours (1999 art. 13, 2011 art. 12): who has Red on which board.

/// A side's colour in one game. Red moves first (先走), Black second (后走).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Colour {
    /// 红方, moves first.
    Red,
    /// 黑方, moves second.
    Black,
}

impl Colour {
    /// The other colour.
    pub fn opposite(self) -> Colour {
        match self {
            Colour::Red => Colour::Black,
            Colour::Black => Colour::Red,
        }
    }
}

/// The two teams (or players) of a match, in fixture order.
///
/// In every fixture chuhe produces, the *first* team is the one that has Red on board 1
/// (13.2: the team listed first in the 循环赛对局秩序表; 13.3: the team that "moves first" in a
/// Swiss round; 13.4: the winner of the lot in a knockout match).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The first-listed team (Red on odd boards).
    First,
    /// The second-listed team (Red on even boards).
    Second,
}

impl Side {
    /// The other side.
    pub fn other(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }

    /// 0 for `First`, 1 for `Second`: index into `[T; 2]` pairs.
    pub fn index(self) -> usize {
        match self {
            Side::First => 0,
            Side::Second => 1,
        }
    }

    /// Both sides, first then second.
    pub const BOTH: [Side; 2] = [Side::First, Side::Second];
}

/// 13.2 / 13.3: the colour of the first-listed team's player on `board` (1-based):
/// Red on odd boards, Black on even boards.
pub fn first_team_colour(board: u32) -> Colour {
    if board % 2 == 1 {
        Colour::Red
    } else {
        Colour::Black
    }
}

/// The colour of `side`'s player on `board` (1-based) in the scheduled (first) game.
pub fn side_colour(side: Side, board: u32) -> Colour {
    match side {
        Side::First => first_team_colour(board),
        Side::Second => first_team_colour(board).opposite(),
    }
}

/// 13.4 / 13.5: the outcome of the lot (猜先) for a knockout or two-game match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lot {
    /// The higher seed (listed first in the bracket) moves first in game 1.
    HigherSeedFirst,
    /// The lower seed moves first in game 1.
    LowerSeedFirst,
}

/// 13.5: in a two-game (or multi-game) match the colours alternate: the side that moved first
/// in game 1 (decided by the lot) moves second in game 2, and so on. `game` is 1-based.
/// Returns whether the higher seed is the first-listed ("moves first") side in that game.
pub fn higher_seed_first_in_game(lot: Lot, game: u32) -> bool {
    let starts = matches!(lot, Lot::HigherSeedFirst);
    if game % 2 == 1 { starts } else { !starts }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_boards_red_for_first_team() {
        assert_eq!(first_team_colour(1), Colour::Red);
        assert_eq!(first_team_colour(2), Colour::Black);
        assert_eq!(first_team_colour(3), Colour::Red);
        assert_eq!(side_colour(Side::Second, 1), Colour::Black);
        assert_eq!(side_colour(Side::Second, 4), Colour::Red);
    }

    #[test]
    fn two_game_match_alternates() {
        assert!(higher_seed_first_in_game(Lot::HigherSeedFirst, 1));
        assert!(!higher_seed_first_in_game(Lot::HigherSeedFirst, 2));
        assert!(!higher_seed_first_in_game(Lot::LowerSeedFirst, 1));
        assert!(higher_seed_first_in_game(Lot::LowerSeedFirst, 2));
    }
}
