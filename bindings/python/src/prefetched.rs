//! Batches of a classic filter over digests hashed beforehand, loading each element's words a
//! few elements ahead of probing them.
//!
//! A classic filter's `k` probes fall in `k` different cache lines; probed one element after
//! another, each waits for memory in turn. Loading the lines of the element `AHEAD` places
//! later first lets those waits overlap (the blocked kind's batches in the library do the same
//! for its single line). The library has no classic batch over digests yet, so it is written
//! here from its public parts: the spec's positions and the filter's words. Prefetching is only
//! a hint: the answers are the library's `insert_digest` / `contains_digest`.

use crate::elements::prefetch_line;
use bloomkit::{BloomFilter, Digest, Spec};

/// How many elements ahead the words are loaded.
const AHEAD: usize = 8;

/// Starts loading the words of the element `d` (bit `i` is in word `i / 64`).
#[inline(always)]
fn prefetch_words(spec: &Spec, words: *const u64, d: &Digest) {
    spec.for_each_position(d, |i| {
        prefetch_line(words.wrapping_add((i / 64) as usize));
        true
    });
}

/// Adds every digest.
pub fn insert(filter: &mut BloomFilter, digests: &[Digest]) {
    let spec = filter.spec().clone();
    // Only an address to prefetch from: inserts do not move the words.
    let words = filter.as_words().as_ptr();
    for (i, d) in digests.iter().enumerate() {
        if let Some(next) = digests.get(i + AHEAD) {
            prefetch_words(&spec, words, next);
        }
        filter.insert_digest(d);
    }
}

/// Tests every digest, appending the answers to `out`.
pub fn contains_into(filter: &BloomFilter, digests: &[Digest], out: &mut Vec<bool>) {
    let spec = filter.spec();
    let words = filter.as_words().as_ptr();
    out.extend(digests.iter().enumerate().map(|(i, d)| {
        if let Some(next) = digests.get(i + AHEAD) {
            prefetch_words(spec, words, next);
        }
        filter.contains_digest(d)
    }));
}
