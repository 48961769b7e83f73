//! The one random generator of the crate: SplitMix64. The suite's case
//! inputs, `compare`'s and the fuzzer's whole-module inputs, the operand
//! forms' constants and the random programs all draw from it, so a seed
//! means the same stream everywhere. (Proptest's strategies keep proptest's
//! own generator: `CaseContext::draw` seeds it from the case.)
//!
//! The stream is pinned: the suite's case names fix their inputs through it
//! (`tests/suite_inputs_digest.rs`), so it must not change.

/// A small deterministic generator (SplitMix64).
///
/// ```
/// use xla_props::inputs::SplitMix;
/// let mut a = SplitMix::new(7);
/// let mut b = SplitMix::new(7);
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!((0.0..1.0).contains(&a.unit()));
/// assert!((3..=5).contains(&a.int_in(3, 5)));
/// assert!(a.below(4) < 4);
/// ```
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// Seeds the generator.
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform integer in [lo, hi] (128 random bits, reduced modulo the span).
    pub fn int_in(&mut self, lo: i128, hi: i128) -> i128 {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo) as u128 + 1;
        let wide = (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
        lo + (wide % span) as i128
    }
    /// A fair coin (the low bit of the next draw).
    pub fn coin(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }
    /// Uniform in `[0, n)` (0 when `n` is 0), from one draw modulo `n`.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    /// Uniform in `[lo, hi]` from one draw (`lo` when the range is empty).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1).max(1) as usize) as i64
    }
    /// True `num` times in `den`.
    pub fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }
    /// One element of `xs` (None when empty).
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> Option<T> {
        (!xs.is_empty()).then(|| xs[self.below(xs.len())])
    }
}
