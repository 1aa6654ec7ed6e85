//! The list's order: by packet number, as Wireshark lists packets, whatever
//! order messages completed in (a connection whose protocol is decided late,
//! or the flush at the end, hands over messages of earlier packets).
//!
//! Rows stay in the store in arrival order (pairs and side tables point at
//! them). Messages nearly always arrive in order, and then the order is
//! arrival itself; from the first that does not, it is a sorted index of 4
//! bytes a row, and a batch is appended or merged in, once per batch.

use super::store::Rows;

/// The sort key of row `i`: its packet, then its arrival.
pub fn key(rows: &Rows, i: usize) -> (u64, usize) {
    (rows.get(i).map_or(u64::MAX, |r| r.packet), i)
}

/// Row indices sorted by [`key`].
#[derive(Debug, Default)]
pub struct Order {
    /// `None` while rows arrived in order: the order is then arrival itself,
    /// and costs nothing.
    rows: Option<Vec<u32>>,
    len: usize,
}

impl Order {
    /// Takes in rows `from..` of `rows`, just appended to the store.
    pub fn add(&mut self, rows: &Rows, from: usize) {
        let in_order = |a: usize, b: usize| key(rows, a) < key(rows, b);
        if self.rows.is_none() {
            let ordered = (from.max(1)..rows.len()).all(|i| in_order(i - 1, i));
            if ordered {
                self.len = rows.len();
                return;
            }
            self.rows = Some((0..self.len).map(|i| i as u32).collect());
        }
        let new: Vec<u32> = (from..rows.len()).map(|i| i as u32).collect();
        if let Some(sorted) = &mut self.rows {
            merge(sorted, new, |i| key(rows, i));
        }
        self.len = rows.len();
    }

    pub fn get(&self, pos: usize) -> Option<usize> {
        match &self.rows {
            None => (pos < self.len).then_some(pos),
            Some(v) => v.get(pos).map(|&r| r as usize),
        }
    }

    pub fn position(&self, rows: &Rows, row: usize) -> Option<usize> {
        let Some(v) = &self.rows else {
            return (row < self.len).then_some(row);
        };
        let k = key(rows, row);
        v.binary_search_by(|&r| key(rows, r as usize).cmp(&k)).ok()
    }

    pub fn memory(&self) -> usize {
        self.rows
            .as_ref()
            .map_or(0, |v| v.capacity() * std::mem::size_of::<u32>())
    }
}

/// Merges `new` (in any order) into `sorted`, keeping it sorted by `key`.
pub fn merge<K: Ord>(sorted: &mut Vec<u32>, mut new: Vec<u32>, key: impl Fn(usize) -> K) {
    if new.is_empty() {
        return;
    }
    if !new.is_sorted_by_key(|&i| key(i as usize)) {
        new.sort_unstable_by_key(|&i| key(i as usize));
    }
    let in_order = match (sorted.last(), new.first()) {
        (Some(&l), Some(&f)) => key(l as usize) < key(f as usize),
        _ => true,
    };
    if in_order {
        sorted.extend_from_slice(&new);
        return;
    }
    // Only the tail from the first late row on moves.
    let Some(first) = new.first().map(|&f| key(f as usize)) else {
        return;
    };
    let at = sorted.partition_point(|&r| key(r as usize) < first);
    let tail = sorted.split_off(at);
    sorted.reserve(tail.len() + new.len());
    let (mut a, mut b) = (tail.into_iter().peekable(), new.into_iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(&x), Some(&y)) if key(x as usize) <= key(y as usize) => a.next(),
            (Some(_), Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, Some(_)) => b.next(),
            (None, None) => break,
        };
        sorted.extend(next);
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn merge_appends_or_interleaves() {
        let frames = [5u64, 7, 9, 6, 10, 1, 7];
        let key = |i: usize| (frames.get(i).copied().unwrap_or(u64::MAX), i);
        let mut v = Vec::new();
        merge(&mut v, vec![0, 1, 2], key);
        assert_eq!(v, [0, 1, 2]);
        merge(&mut v, vec![3, 4], key);
        assert_eq!(v, [0, 3, 1, 2, 4]);
        // Same packet: arrival order decides.
        merge(&mut v, vec![6, 5], key);
        assert_eq!(v, [5, 0, 3, 1, 6, 2, 4]);
        let got: Vec<u64> = v.iter().map(|&i| frames[i as usize]).collect();
        assert_eq!(got, [1, 5, 6, 7, 7, 9, 10]);
    }
}
