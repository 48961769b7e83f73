//! What several integration tests share (each uses part of it).
#![allow(dead_code)]

use std::path::PathBuf;

/// The 13 unary ops of the f16 oracle, `../shared/oracle/f16/<op>.bin`:
/// the correctly rounded result for each of the 65536 f16 bit patterns.
pub const F16_ORACLE_OPS: [&str; 13] = [
    "exponential",
    "exponential-minus-one",
    "log",
    "log-plus-one",
    "logistic",
    "sine",
    "cosine",
    "tan",
    "tanh",
    "sqrt",
    "rsqrt",
    "cbrt",
    "erf",
];

/// `../shared/oracle/f16` from the workspace root; None (the test skips,
/// or fails under CI) when it is missing.
pub fn f16_oracle_dir() -> Option<PathBuf> {
    xla_props::skip::needed_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/oracle/f16"
    ))
}

/// Whether f16 word `have` matches the oracle's `want` (a NaN by class).
pub fn f16_matches(want: u16, have: u16) -> bool {
    let is_nan = |w: u16| w & 0x7c00 == 0x7c00 && w & 0x3ff != 0;
    if is_nan(want) {
        is_nan(have)
    } else {
        want == have
    }
}

/// Little-endian u16 words.
pub fn f16_words(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

/// Elements in all of a module's instructions (saturating).
pub fn total_elements(m: &xla_props::hlo::Module) -> u64 {
    m.computations
        .iter()
        .flat_map(|c| &c.instructions)
        .flat_map(|i| i.shape.leaves())
        .map(|a| a.element_count().unwrap_or(u64::MAX))
        .fold(0u64, u64::saturating_add)
}

/// Runs `check` on every item, two at a time; returns what it found wrong.
pub fn two_at_a_time<T: Sync>(
    items: &[T],
    check: impl Fn(&T) -> Option<String> + Sync,
) -> Vec<String> {
    let failures = std::sync::Mutex::new(Vec::new());
    let next = std::sync::Mutex::new(items.iter());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some(item) = next.lock().unwrap().next() else {
                    break;
                };
                if let Some(failure) = check(item) {
                    failures.lock().unwrap().push(failure);
                }
            });
        }
    });
    failures.into_inner().unwrap()
}
