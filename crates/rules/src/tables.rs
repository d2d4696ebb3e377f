//! Attack tables and Zobrist keys, all computed at compile time.
//!
//! Layout: a square's bit is `rank * 9 + file` in the normal bitboard and `file * 10 + rank` in
//! the file-major ("rotated") occupancy, so a rank's 9 bits and a file's 10 bits can each be
//! cut out with one shift and used as a table index.

/// Offsets (file, rank) of the four orthogonal steps: up, down, right, left.
pub(crate) const ORTHO: [(i8, i8); 4] = [(0, 1), (0, -1), (1, 0), (-1, 0)];
/// Offsets (file, rank) of the four diagonal steps.
pub(crate) const DIAG: [(i8, i8); 4] = [(1, 1), (-1, 1), (1, -1), (-1, -1)];

const fn sq_of(f: i32, r: i32) -> i32 {
    if f >= 0 && f < 9 && r >= 0 && r < 10 {
        r * 9 + f
    } else {
        -1
    }
}

const fn bit(sq: i32) -> u128 {
    if sq < 0 { 0 } else { 1u128 << sq }
}

const fn in_palace(f: i32, r: i32) -> bool {
    f >= 3 && f <= 5 && (r <= 2 || r >= 7)
}

/// Line attacks for a line of `n` points, from point `p`, with occupancy `occ`.
/// Returns (rook-like attacks incl. the first piece each way, cannon attacks: every point after
/// the first piece up to and including the second piece).
const fn line_attacks(n: i32, p: i32, occ: u32) -> (u16, u16) {
    let mut rook = 0u16;
    let mut cannon = 0u16;
    let mut dir = 0;
    while dir < 2 {
        let step = if dir == 0 { 1 } else { -1 };
        let mut q = p + step;
        let mut screens = 0;
        while q >= 0 && q < n {
            let occupied = occ >> q & 1 != 0;
            if screens == 0 {
                rook |= 1 << q;
                if occupied {
                    screens = 1;
                }
            } else {
                cannon |= 1 << q;
                if occupied {
                    break;
                }
            }
            q += step;
        }
        dir += 1;
    }
    (rook, cannon)
}

const fn rank_tables() -> ([[u16; 512]; 9], [[u16; 512]; 9]) {
    let mut rook = [[0u16; 512]; 9];
    let mut cannon = [[0u16; 512]; 9];
    let mut f = 0;
    while f < 9 {
        let mut occ = 0;
        while occ < 512 {
            let (r, c) = line_attacks(9, f as i32, occ as u32);
            rook[f][occ] = r;
            cannon[f][occ] = c;
            occ += 1;
        }
        f += 1;
    }
    (rook, cannon)
}

const fn file_tables() -> ([[u16; 1024]; 10], [[u16; 1024]; 10]) {
    let mut rook = [[0u16; 1024]; 10];
    let mut cannon = [[0u16; 1024]; 10];
    let mut r = 0;
    while r < 10 {
        let mut occ = 0;
        while occ < 1024 {
            let (a, c) = line_attacks(10, r as i32, occ as u32);
            rook[r][occ] = a;
            cannon[r][occ] = c;
            occ += 1;
        }
        r += 1;
    }
    (rook, cannon)
}

const fn file_spread() -> [u128; 1024] {
    let mut t = [0u128; 1024];
    let mut m = 0;
    while m < 1024 {
        let mut r = 0;
        let mut v = 0u128;
        while r < 10 {
            if m >> r & 1 != 0 {
                v |= 1u128 << (r * 9);
            }
            r += 1;
        }
        t[m] = v;
        m += 1;
    }
    t
}

const RANK: ([[u16; 512]; 9], [[u16; 512]; 9]) = rank_tables();
const FILE: ([[u16; 1024]; 10], [[u16; 1024]; 10]) = file_tables();
pub(crate) static RANK_ROOK: [[u16; 512]; 9] = RANK.0;
pub(crate) static RANK_CANNON: [[u16; 512]; 9] = RANK.1;
pub(crate) static FILE_ROOK: [[u16; 1024]; 10] = FILE.0;
pub(crate) static FILE_CANNON: [[u16; 1024]; 10] = FILE.1;
pub(crate) static FILE_SPREAD: [u128; 1024] = file_spread();

/// A step that needs one point empty (a horse leg or an elephant eye) and then reaches some
/// targets.
#[derive(Clone, Copy)]
pub(crate) struct Gated {
    /// The point that must be empty (0 if the step is off the board).
    pub block: u128,
    /// The points reached when it is empty.
    pub targets: u128,
}

const NO_GATE: Gated = Gated {
    block: 0,
    targets: 0,
};

/// HORSE[sq][i]: leg at the orthogonal neighbour `ORTHO[i]`, two targets beyond it.
const fn horse_table() -> [[Gated; 4]; 90] {
    let mut t = [[NO_GATE; 4]; 90];
    let mut sq = 0;
    while sq < 90 {
        let f = (sq % 9) as i32;
        let r = (sq / 9) as i32;
        let mut i = 0;
        while i < 4 {
            let (df, dr) = (ORTHO[i].0 as i32, ORTHO[i].1 as i32);
            let leg = sq_of(f + df, r + dr);
            if leg >= 0 {
                // Two points: 2 along the leg direction, 1 to either side.
                let (a, b) = if df == 0 {
                    (sq_of(f + 1, r + 2 * dr), sq_of(f - 1, r + 2 * dr))
                } else {
                    (sq_of(f + 2 * df, r + 1), sq_of(f + 2 * df, r - 1))
                };
                t[sq][i] = Gated {
                    block: bit(leg),
                    targets: bit(a) | bit(b),
                };
            }
            i += 1;
        }
        sq += 1;
    }
    t
}

/// HORSE_ATTACKERS[sq][i]: horses on the returned points attack `sq` when the diagonal neighbour
/// `DIAG[i]` of `sq` (their leg) is empty.
const fn horse_attackers_table() -> [[Gated; 4]; 90] {
    let mut t = [[NO_GATE; 4]; 90];
    let mut sq = 0;
    while sq < 90 {
        let f = (sq % 9) as i32;
        let r = (sq / 9) as i32;
        let mut i = 0;
        while i < 4 {
            let (df, dr) = (DIAG[i].0 as i32, DIAG[i].1 as i32);
            let leg = sq_of(f + df, r + dr);
            if leg >= 0 {
                t[sq][i] = Gated {
                    block: bit(leg),
                    targets: bit(sq_of(f + 2 * df, r + dr)) | bit(sq_of(f + df, r + 2 * dr)),
                };
            }
            i += 1;
        }
        sq += 1;
    }
    t
}

/// ELEPHANT[sq][i]: eye at the diagonal neighbour, target two steps away on the same half.
const fn elephant_table() -> [[Gated; 4]; 90] {
    let mut t = [[NO_GATE; 4]; 90];
    let mut sq = 0;
    while sq < 90 {
        let f = (sq % 9) as i32;
        let r = (sq / 9) as i32;
        let mut i = 0;
        while i < 4 {
            let (df, dr) = (DIAG[i].0 as i32, DIAG[i].1 as i32);
            let to = sq_of(f + 2 * df, r + 2 * dr);
            if to >= 0 && (to / 9 <= 4) == (r <= 4) {
                t[sq][i] = Gated {
                    block: bit(sq_of(f + df, r + dr)),
                    targets: bit(to),
                };
            }
            i += 1;
        }
        sq += 1;
    }
    t
}

/// ADVISOR[sq]: diagonal steps inside the palace; KING[sq]: orthogonal steps inside the palace.
const fn step_tables() -> ([u128; 90], [u128; 90]) {
    let mut adv = [0u128; 90];
    let mut king = [0u128; 90];
    let mut sq = 0;
    while sq < 90 {
        let f = (sq % 9) as i32;
        let r = (sq / 9) as i32;
        if in_palace(f, r) {
            let mut i = 0;
            while i < 4 {
                let (df, dr) = (DIAG[i].0 as i32, DIAG[i].1 as i32);
                if in_palace(f + df, r + dr) && ((r + dr <= 4) == (r <= 4)) {
                    adv[sq] |= bit(sq_of(f + df, r + dr));
                }
                let (df, dr) = (ORTHO[i].0 as i32, ORTHO[i].1 as i32);
                if in_palace(f + df, r + dr) && ((r + dr <= 4) == (r <= 4)) {
                    king[sq] |= bit(sq_of(f + df, r + dr));
                }
                i += 1;
            }
        }
        sq += 1;
    }
    (adv, king)
}

/// PAWN[color][sq]: forward, and sideways once across the river. PAWN_ATTACKERS: the inverse.
const fn pawn_tables() -> ([[u128; 90]; 2], [[u128; 90]; 2]) {
    let mut fwd = [[0u128; 90]; 2];
    let mut inv = [[0u128; 90]; 2];
    let mut c = 0;
    while c < 2 {
        let dr = if c == 0 { 1 } else { -1 };
        let mut sq = 0;
        while sq < 90 {
            let f = (sq % 9) as i32;
            let r = (sq / 9) as i32;
            let crossed = if c == 0 { r >= 5 } else { r <= 4 };
            let mut t = bit(sq_of(f, r + dr));
            if crossed {
                t |= bit(sq_of(f + 1, r)) | bit(sq_of(f - 1, r));
            }
            fwd[c][sq] = t;
            let mut to = 0;
            while to < 90 {
                if t >> to & 1 != 0 {
                    inv[c][to] |= 1u128 << sq;
                }
                to += 1;
            }
            sq += 1;
        }
        c += 1;
    }
    (fwd, inv)
}

pub(crate) static HORSE: [[Gated; 4]; 90] = horse_table();
pub(crate) static HORSE_ATTACKERS: [[Gated; 4]; 90] = horse_attackers_table();
pub(crate) static ELEPHANT: [[Gated; 4]; 90] = elephant_table();
const STEPS: ([u128; 90], [u128; 90]) = step_tables();
pub(crate) static ADVISOR: [u128; 90] = STEPS.0;
pub(crate) static KING: [u128; 90] = STEPS.1;
const PAWNS: ([[u128; 90]; 2], [[u128; 90]; 2]) = pawn_tables();
pub(crate) static PAWN: [[u128; 90]; 2] = PAWNS.0;
pub(crate) static PAWN_ATTACKERS: [[u128; 90]; 2] = PAWNS.1;

/// Rotated (file-major) bit of square index `sq`.
#[inline]
pub(crate) const fn rot_bit(sq: usize) -> u128 {
    1u128 << ((sq % 9) * 10 + sq / 9)
}

/// (rook, cannon) attacks from `sq` given the normal and file-major occupancies.
#[inline]
pub(crate) fn slider_attacks(sq: usize, occ: u128, rot: u128) -> (u128, u128) {
    let f = sq % 9;
    let r = sq / 9;
    let rocc = ((occ >> (r * 9)) & 0x1ff) as usize;
    let focc = ((rot >> (f * 10)) & 0x3ff) as usize;
    let rook =
        ((RANK_ROOK[f][rocc] as u128) << (r * 9)) | (FILE_SPREAD[FILE_ROOK[r][focc] as usize] << f);
    let cannon = ((RANK_CANNON[f][rocc] as u128) << (r * 9))
        | (FILE_SPREAD[FILE_CANNON[r][focc] as usize] << f);
    (rook, cannon)
}

/// Rook attacks from `sq`.
#[inline]
pub(crate) fn rook_attacks(sq: usize, occ: u128, rot: u128) -> u128 {
    let f = sq % 9;
    let r = sq / 9;
    let rocc = ((occ >> (r * 9)) & 0x1ff) as usize;
    let focc = ((rot >> (f * 10)) & 0x3ff) as usize;
    ((RANK_ROOK[f][rocc] as u128) << (r * 9)) | (FILE_SPREAD[FILE_ROOK[r][focc] as usize] << f)
}

/// Cannon attacks from `sq`.
#[inline]
pub(crate) fn cannon_attacks(sq: usize, occ: u128, rot: u128) -> u128 {
    let f = sq % 9;
    let r = sq / 9;
    let rocc = ((occ >> (r * 9)) & 0x1ff) as usize;
    let focc = ((rot >> (f * 10)) & 0x3ff) as usize;
    ((RANK_CANNON[f][rocc] as u128) << (r * 9)) | (FILE_SPREAD[FILE_CANNON[r][focc] as usize] << f)
}

/// Rook attacks along the file of `sq` only (for the flying-general rule).
#[inline]
pub(crate) fn file_rook_attacks(sq: usize, rot: u128) -> u128 {
    let f = sq % 9;
    let r = sq / 9;
    let focc = ((rot >> (f * 10)) & 0x3ff) as usize;
    FILE_SPREAD[FILE_ROOK[r][focc] as usize] << f
}

/// Horse attacks from `sq`.
#[inline]
pub(crate) fn horse_attacks(sq: usize, occ: u128) -> u128 {
    let t = &HORSE[sq];
    let mut a = 0;
    for g in t {
        if occ & g.block == 0 {
            a |= g.targets;
        }
    }
    a
}

/// Points holding horses that could attack `sq` (legs checked against `occ`).
#[inline]
pub(crate) fn horse_attackers(sq: usize, occ: u128) -> u128 {
    let t = &HORSE_ATTACKERS[sq];
    let mut a = 0;
    for g in t {
        if occ & g.block == 0 {
            a |= g.targets;
        }
    }
    a
}

/// Elephant attacks from `sq`.
#[inline]
pub(crate) fn elephant_attacks(sq: usize, occ: u128) -> u128 {
    let t = &ELEPHANT[sq];
    let mut a = 0;
    for g in t {
        if occ & g.block == 0 {
            a |= g.targets;
        }
    }
    a
}

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (s, z ^ (z >> 31))
}

const fn zobrist_table() -> ([[u64; 90]; 14], u64) {
    let mut t = [[0u64; 90]; 14];
    let mut state = 0x6368_7568_6520_6a69u64; // "chuhe ji"
    let mut p = 0;
    while p < 14 {
        let mut sq = 0;
        while sq < 90 {
            let (s, v) = splitmix(state);
            state = s;
            t[p][sq] = v;
            sq += 1;
        }
        p += 1;
    }
    let (_, side) = splitmix(state);
    (t, side)
}

const ZOBRIST_ALL: ([[u64; 90]; 14], u64) = zobrist_table();
/// Zobrist keys by piece index (`color * 7 + kind`) and square.
pub(crate) static ZOBRIST: [[u64; 90]; 14] = ZOBRIST_ALL.0;
/// Zobrist key xored in when Black is to move.
pub(crate) const ZOBRIST_BLACK: u64 = ZOBRIST_ALL.1;
