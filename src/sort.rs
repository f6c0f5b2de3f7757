//! Stable sorting through one compiled sort.
//!
//! `slice::sort_by` compiles a whole sort (quicksort, merges, small-sort networks: about 3 KB of
//! wasm) for every element type and comparison it is called with. These helpers sort a list of
//! indices through a comparison behind a vtable, so the Worker carries one sort; each call site
//! only adds its comparison and a small permutation step. The lists sorted here are short
//! (steps, plans, buckets, suggestions), so the indirection costs nothing that shows.

use std::cmp::Ordering;

/// Sorts `v` by `compare`, keeping equal elements in their order (what `slice::sort_by` does).
pub fn sort_by<T>(v: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    let mut order: Vec<usize> = (0..v.len()).collect();
    sort_indices(&mut order, &mut |a, b| compare(&v[a], &v[b]));
    permute(v, &mut order);
}

/// Sorts `v` by the key `key` gives, keeping equal elements in their order (`slice::sort_by_key`).
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

// The one instance of the standard library's stable sort.
fn sort_indices(order: &mut [usize], compare: &mut dyn FnMut(usize, usize) -> Ordering) {
    order.sort_by(|&a, &b| compare(a, b));
}

/// Moves `v[order[i]]` to `i` for every `i`, one cycle of the permutation at a time; `order`
/// is left as the identity.
fn permute<T>(v: &mut [T], order: &mut [usize]) {
    for start in 0..order.len() {
        let mut at = start;
        loop {
            let from = order[at];
            order[at] = at;
            if from == start || from == at {
                break;
            }
            v.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_as_the_standard_library_does() {
        // Pseudo-random pairs with many equal keys, so stability shows.
        let mut seed = 7_u64;
        for len in [0, 1, 2, 3, 5, 17, 64, 300] {
            let v: Vec<(u8, usize)> = (0..len)
                .map(|i| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    ((seed >> 59) as u8, i)
                })
                .collect();
            let (mut ours, mut std) = (v.clone(), v.clone());
            sort_by_key(&mut ours, |p| p.0);
            std.sort_by_key(|p| p.0);
            assert_eq!(ours, std);
            let (mut ours, mut std) = (v.clone(), v);
            sort_by(&mut ours, |a, b| b.0.cmp(&a.0));
            #[allow(clippy::unnecessary_sort_by)] // the very function compared against
            std.sort_by(|a, b| b.0.cmp(&a.0));
            assert_eq!(ours, std);
        }
    }
}
