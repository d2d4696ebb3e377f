//! The ranking engine shared by team and individual standings: sort by a chain of criteria,
//! splitting tied groups level by level, and record which criterion separated each neighbour.

/// One ranked item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranked<C> {
    /// Index of the item in the caller's list.
    pub item: usize,
    /// 1-based rank; items no criterion separates share a rank (名次并列).
    pub rank: u32,
    /// The criterion that separated this item from the one ranked directly above it (for the
    /// first row: from the one directly below). `None` when nothing separated them (shared rank)
    /// or when there is only one item.
    pub decided_by: Option<C>,
}

/// A criterion's key function: `(criterion, tied group, item) -> key` (greater ranks higher).
pub type KeyFn<'a, C> = dyn Fn(C, &[usize], usize) -> Vec<i64> + 'a;

/// Ranks `items` by `criteria`. `key(c, group, item)` returns the item's value for criterion `c`
/// within `group` (the items still tied when `c` is applied — head-to-head needs it); greater
/// keys rank higher, so "fewer is better" criteria return negated values. A criterion that
/// splits a group is applied again to each part still tied, to that part alone, until it
/// separates no more (直至区分), before the next criterion. Items tied on every criterion keep
/// their input order and share a rank.
pub fn rank<C: Copy>(items: &[usize], criteria: &[C], key: &KeyFn<'_, C>) -> Vec<Ranked<C>> {
    let mut order: Vec<(usize, Option<C>)> = Vec::with_capacity(items.len());
    split(items.to_vec(), 0, None, criteria, key, &mut order);
    let mut out: Vec<Ranked<C>> = Vec::with_capacity(order.len());
    for (i, &(item, boundary)) in order.iter().enumerate() {
        let rank = match (i, boundary) {
            (0, _) => 1,
            (_, None) => out[i - 1].rank,
            (_, Some(_)) => i as u32 + 1,
        };
        let decided_by = if i == 0 {
            order.get(1).and_then(|&(_, b)| b)
        } else {
            boundary
        };
        out.push(Ranked {
            item,
            rank,
            decided_by,
        });
    }
    out
}

fn split<C: Copy>(
    group: Vec<usize>,
    level: usize,
    boundary_before: Option<C>,
    criteria: &[C],
    key: &KeyFn<'_, C>,
    out: &mut Vec<(usize, Option<C>)>,
) {
    if group.len() == 1 || level == criteria.len() {
        for (i, item) in group.into_iter().enumerate() {
            out.push((item, if i == 0 { boundary_before } else { None }));
        }
        return;
    }
    let c = criteria[level];
    let mut keyed: Vec<(Vec<i64>, usize)> = group.iter().map(|&t| (key(c, &group, t), t)).collect();
    // Stable sort, descending by key: ties keep input order.
    keyed.sort_by(|a, b| b.0.cmp(&a.0));
    let mut start = 0;
    let mut first_run = true;
    let whole = keyed.first().map(|f| &f.0) == keyed.last().map(|l| &l.0);
    while start < keyed.len() {
        let mut end = start + 1;
        while end < keyed.len() && keyed[end].0 == keyed[start].0 {
            end += 1;
        }
        let run: Vec<usize> = keyed[start..end].iter().map(|&(_, t)| t).collect();
        let b = if first_run { boundary_before } else { Some(c) };
        // 直至区分 (2011 14.5): a criterion that split the group is applied again to every part
        // still tied, to that part alone, until it separates no more. Only a criterion that
        // depends on the group (直胜) can split a part again; for the others the part's items
        // have equal keys, so this costs one more evaluation and moves on.
        let next = if whole { level + 1 } else { level };
        split(run, next, b, criteria, key, out);
        first_run = false;
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_level_by_level() {
        // values[item] = (a, b)
        let values = [(1, 0), (2, 5), (2, 7), (1, 0)];
        let key =
            |c: u8, _: &[usize], t: usize| vec![if c == 0 { values[t].0 } else { values[t].1 }];
        let r = rank(&[0, 1, 2, 3], &[0u8, 1], &key);
        let got: Vec<(usize, u32, Option<u8>)> =
            r.iter().map(|x| (x.item, x.rank, x.decided_by)).collect();
        assert_eq!(
            got,
            vec![
                (2, 1, Some(1)),
                (1, 2, Some(1)),
                (0, 3, Some(0)),
                (3, 3, None)
            ]
        );
    }

    /// A group-dependent criterion (a mini-league) is applied again to the part still tied.
    #[test]
    fn group_criterion_reapplied_to_the_tied_part() {
        // Points among the group: item 0 beat 1 and 2 lost to it all; 1 and 2 have the same
        // total over {0, 1, 2} but 1 beat 2.
        let beat = |a: usize, b: usize| matches!((a, b), (0, 1) | (0, 2) | (1, 2) | (2, 3));
        let key = |_: u8, g: &[usize], t: usize| {
            vec![g.iter().filter(|&&o| o != t && beat(t, o)).count() as i64]
        };
        let r = rank(&[0, 1, 2, 3], &[0u8], &key);
        // Over all four: 0 has 2, 1 has 1, 2 has 1, 3 has 0; then {1, 2} alone: 1 beat 2.
        let got: Vec<(usize, u32)> = r.iter().map(|x| (x.item, x.rank)).collect();
        assert_eq!(got, vec![(0, 1), (1, 2), (2, 3), (3, 4)]);
        assert!(r.iter().all(|x| x.decided_by == Some(0)));
    }
}
