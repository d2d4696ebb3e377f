//! Fixtures: round robin by the Berger tables (循环赛对局秩序表) and knockout brackets with seeding.
//!
//! Team numbers are 1-based draw numbers (序号). In every pairing `(first, second)` the first team
//! has Red on board 1 (13.2).

/// A pairing of two draw numbers: `first` has Red on odd boards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pairing {
    /// Draw number (1-based) of the first-listed team.
    pub first: u32,
    /// Draw number (1-based) of the second-listed team.
    pub second: u32,
}

/// One round of a schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    /// Round number, 1-based across the whole schedule (the second leg continues the count).
    pub number: u32,
    /// Matches in table order (table 1 first).
    pub pairings: Vec<Pairing>,
    /// The team without an opponent this round (odd team counts).
    pub bye: Option<u32>,
}

/// Why a schedule cannot be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// A round robin needs at least two teams.
    #[error("a round robin needs at least 2 teams, got {0}")]
    TooFewTeams(u32),
    /// Beyond what any league needs; keeps output bounded.
    #[error("at most {max} teams are supported, got {got}")]
    TooManyTeams {
        /// The limit.
        max: u32,
        /// What was asked.
        got: u32,
    },
    /// Legs must be 1 or 2.
    #[error("a round robin has 1 or 2 legs, got {0}")]
    BadLegs(u32),
}

/// Largest team count a schedule accepts.
pub const MAX_TEAMS: u32 = 1000;

/// Options of a round-robin schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundRobinOptions {
    /// 1 (single) or 2 (double round robin).
    pub legs: u32,
    /// FIDE C.05 Annex 1 recommends, for a double round robin, exchanging the last two rounds of
    /// the first cycle so nobody gets three consecutive games with the same colour (the second
    /// cycle keeps the table's order). Off by default (the table is used as printed).
    pub swap_last_two_rounds_of_first_leg: bool,
}

impl Default for RoundRobinOptions {
    fn default() -> Self {
        RoundRobinOptions {
            legs: 1,
            swap_last_two_rounds_of_first_leg: false,
        }
    }
}

/// The Berger table for `n` teams (one leg): `n - 1` rounds for even `n`, `n` rounds for odd `n`
/// (the highest number, `n + 1`, is the bye and is left out of the pairings).
///
/// This is the table of FIDE Handbook C.05 Annex 1 (and the CXA 循环赛对局秩序表). The rule:
/// with `m = n` rounded up to even, number `m` stays on table 1; round 1 pairs `k` with
/// `m + 1 - k`; each later round adds `m / 2` to every other number (mod `m - 1`, in `1..m`).
/// On table 1 the fixed number `m` takes the second place in odd rounds and the first place in
/// even rounds; on the other tables the number from the upper row comes first.
pub fn berger(n: u32) -> Result<Vec<Round>, ScheduleError> {
    check_count(n)?;
    let m = n + n % 2;
    let half = m / 2;
    let cycle = m - 1;
    let mut rounds = Vec::with_capacity(cycle as usize);
    for r in 0..cycle {
        // position p (1..=m-1) holds number ((p - 1 + r * half) mod cycle) + 1
        let at = |p: u32| ((p - 1 + r * half) % cycle) + 1;
        let mut pairings = Vec::with_capacity(half as usize);
        let mut bye = None;
        for table in 1..=half {
            let (a, b) = if table == 1 {
                if r % 2 == 0 { (at(1), m) } else { (m, at(1)) }
            } else {
                (at(table), at(m + 1 - table))
            };
            if a > n {
                bye = Some(b);
            } else if b > n {
                bye = Some(a);
            } else {
                pairings.push(Pairing {
                    first: a,
                    second: b,
                });
            }
        }
        rounds.push(Round {
            number: r + 1,
            pairings,
            bye,
        });
    }
    Ok(rounds)
}

/// A single or double round robin. The second leg repeats the first with colours swapped (13.2)
/// and continues the round numbering.
pub fn round_robin(n: u32, options: RoundRobinOptions) -> Result<Vec<Round>, ScheduleError> {
    if !(1..=2).contains(&options.legs) {
        return Err(ScheduleError::BadLegs(options.legs));
    }
    let table = berger(n)?;
    if options.legs == 1 {
        return Ok(table);
    }
    let count = table.len() as u32;
    // The second leg is the table with colours swapped, in the table's order.
    let second_leg: Vec<Round> = table
        .iter()
        .map(|r| Round {
            number: r.number + count,
            pairings: r
                .pairings
                .iter()
                .map(|p| Pairing {
                    first: p.second,
                    second: p.first,
                })
                .collect(),
            bye: r.bye,
        })
        .collect();
    let mut first_leg = table;
    if options.swap_last_two_rounds_of_first_leg && first_leg.len() >= 2 {
        let len = first_leg.len();
        first_leg.swap(len - 1, len - 2);
        first_leg[len - 2].number = (len - 1) as u32;
        first_leg[len - 1].number = len as u32;
    }
    first_leg.extend(second_leg);
    Ok(first_leg)
}

fn check_count(n: u32) -> Result<(), ScheduleError> {
    if n < 2 {
        return Err(ScheduleError::TooFewTeams(n));
    }
    if n > MAX_TEAMS {
        return Err(ScheduleError::TooManyTeams {
            max: MAX_TEAMS,
            got: n,
        });
    }
    Ok(())
}

/// The first round of a seeded knockout (淘汰制) bracket for `n` seeds (seed 1 strongest).
///
/// The bracket size is the next power of two; seeds beyond `n` are byes, so the top seeds get
/// the byes. Slots follow the standard seeding order (1 and 2 can meet only in the final, 1–4
/// only in the semi-finals, …): for 8, the matches are 1–8, 4–5, 2–7, 3–6. The higher seed is
/// listed first; colours are then settled by the lot (13.4, see [`crate::colour::Lot`]).
/// Returns the matches in bracket order; a `None` opponent is a bye.
pub fn knockout_first_round(n: u32) -> Result<Vec<(u32, Option<u32>)>, ScheduleError> {
    check_count(n)?;
    let size = n.next_power_of_two();
    let order = seeding_order(size);
    Ok(order
        .chunks(2)
        .map(|c| {
            let (a, b) = (c[0], c[1]);
            let (hi, lo) = if a < b { (a, b) } else { (b, a) };
            (hi, (lo <= n).then_some(lo))
        })
        .collect())
}

/// The seeding order of a bracket of `size` (a power of two) slots.
fn seeding_order(size: u32) -> Vec<u32> {
    let mut order = vec![1u32];
    while (order.len() as u32) < size {
        let k = order.len() as u32 * 2;
        order = order.iter().flat_map(|&s| [s, k + 1 - s]).collect();
    }
    order
}

/// The next knockout round: winners of consecutive bracket matches meet. `winners` are given in
/// bracket order (the winner of match 1, of match 2, …). The better seed (lower number) is listed
/// first. An odd count is an error of the caller and yields the last winner unpaired as a bye.
pub fn knockout_next_round(winners: &[u32]) -> Vec<(u32, Option<u32>)> {
    winners
        .chunks(2)
        .map(|c| match c {
            [a, b] => {
                if a < b {
                    (*a, Some(*b))
                } else {
                    (*b, Some(*a))
                }
            }
            [a] => (*a, None),
            _ => unreachable_pair(),
        })
        .collect()
}

// `chunks(2)` never yields an empty or longer slice; keep the match exhaustive without panicking.
fn unreachable_pair() -> (u32, Option<u32>) {
    (0, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(r: &Round) -> Vec<(u32, u32)> {
        r.pairings.iter().map(|p| (p.first, p.second)).collect()
    }

    #[test]
    fn four_teams() -> Result<(), ScheduleError> {
        let t = berger(4)?;
        assert_eq!(pairs(&t[0]), vec![(1, 4), (2, 3)]);
        assert_eq!(pairs(&t[1]), vec![(4, 3), (1, 2)]);
        assert_eq!(pairs(&t[2]), vec![(2, 4), (3, 1)]);
        Ok(())
    }

    #[test]
    fn three_teams_bye_is_highest() -> Result<(), ScheduleError> {
        let t = berger(3)?;
        assert_eq!(t.len(), 3);
        assert_eq!(pairs(&t[0]), vec![(2, 3)]);
        assert_eq!(t[0].bye, Some(1));
        assert_eq!(t[1].bye, Some(3));
        Ok(())
    }

    #[test]
    fn double_swaps_colours() -> Result<(), ScheduleError> {
        let t = round_robin(
            4,
            RoundRobinOptions {
                legs: 2,
                ..Default::default()
            },
        )?;
        assert_eq!(t.len(), 6);
        assert_eq!(t[3].number, 4);
        assert_eq!(pairs(&t[3]), vec![(4, 1), (3, 2)]);
        Ok(())
    }

    #[test]
    fn fide_swap_of_last_two_first_leg_rounds() -> Result<(), ScheduleError> {
        let t = round_robin(
            4,
            RoundRobinOptions {
                legs: 2,
                swap_last_two_rounds_of_first_leg: true,
            },
        )?;
        assert_eq!(pairs(&t[1]), vec![(2, 4), (3, 1)]);
        assert_eq!(pairs(&t[2]), vec![(4, 3), (1, 2)]);
        assert_eq!(t[1].number, 2);
        // The second leg keeps the table's order, colours swapped.
        assert_eq!(pairs(&t[3]), vec![(4, 1), (3, 2)]);
        assert_eq!(pairs(&t[4]), vec![(3, 4), (2, 1)]);
        Ok(())
    }

    #[test]
    fn bad_counts() {
        assert_eq!(berger(1), Err(ScheduleError::TooFewTeams(1)));
        assert!(matches!(
            berger(MAX_TEAMS + 1),
            Err(ScheduleError::TooManyTeams { .. })
        ));
        assert_eq!(
            round_robin(
                4,
                RoundRobinOptions {
                    legs: 3,
                    ..Default::default()
                }
            ),
            Err(ScheduleError::BadLegs(3))
        );
    }

    #[test]
    fn knockout_seeding() -> Result<(), ScheduleError> {
        assert_eq!(
            knockout_first_round(8)?,
            vec![(1, Some(8)), (4, Some(5)), (2, Some(7)), (3, Some(6))]
        );
        assert_eq!(
            knockout_first_round(6)?,
            vec![(1, None), (4, Some(5)), (2, None), (3, Some(6))]
        );
        assert_eq!(
            knockout_next_round(&[1, 5, 7, 3]),
            vec![(1, Some(5)), (3, Some(7))]
        );
        Ok(())
    }
}
