//! A small seeded generator (SplitMix64): the same seed gives the same
//! inputs on every machine. Not for secrets; nothing here needs them.

pub struct Rng(u64);

impl Rng {
    /// A generator for one input: its class and index mixed into the seed,
    /// so that any input can be made again alone (`--case CLASS/INDEX`).
    pub fn for_input(seed: u64, class: u64, index: u64) -> Rng {
        let mut r = Rng(seed ^ 0x6d63_7063_6572_7421);
        let a = r.next() ^ class.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut r = Rng(a);
        let b = r.next() ^ index.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        Rng(b)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }

    /// A lower-case word of `len` letters.
    pub fn word(&mut self, len: usize) -> String {
        // Eight letters from each number (long words are 400 KB).
        let mut b = Vec::with_capacity(len + 8);
        while b.len() < len {
            let mut x = self.next();
            for _ in 0..8 {
                b.push(b'a' + (x % 26) as u8);
                x >>= 8;
            }
        }
        b.truncate(len);
        String::from_utf8(b).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn the_same_seed_gives_the_same_numbers_and_inputs_differ() {
        let a: Vec<u64> = (0..4).map(|_| Rng::for_input(7, 1, 3).next()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::for_input(7, 1, 3).next(), Rng::for_input(7, 1, 4).next());
        assert_ne!(Rng::for_input(7, 1, 3).next(), Rng::for_input(8, 1, 3).next());
    }
}
