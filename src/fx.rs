//! A fast hasher for small integer keys we issue ourselves (resource ids in lowering, command
//! pool keys).
//!
//! The standard `HashMap` hashes with SipHash, which resists collision attacks on keys an
//! attacker picks; resource ids are ours, sequential and trusted, so that protection buys
//! nothing and costs a few dozen instructions per lookup. This is the multiply-rotate hash
//! of rustc's `FxHasher`, hand-written (a dozen lines) rather than a new dependency.

use std::hash::{BuildHasherDefault, Hasher};

/// rustc's Fx hash: one rotate, xor and multiply per word.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// Builds [`FxHasher`]s for a `HashMap`.
pub(crate) type FxBuildHasher = BuildHasherDefault<FxHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::hash::BuildHasher;

    #[test]
    fn distinct_ids_hash_apart_and_a_map_finds_them() {
        let b = FxBuildHasher::default();
        let hashes: std::collections::HashSet<u64> = (0u64..1000).map(|i| b.hash_one(i)).collect();
        assert_eq!(hashes.len(), 1000);
        let map: HashMap<u64, usize, FxBuildHasher> =
            (0u64..100).map(|i| (i * 7, i as usize)).collect();
        assert_eq!(map.get(&693), Some(&99));
        assert_eq!(map.get(&694), None);
        // Bytes hash as little-endian words, so a u64 and its bytes agree.
        let mut h = FxHasher::default();
        h.write(&42u64.to_le_bytes());
        assert_eq!(h.finish(), b.hash_one(42u64));
    }
}
