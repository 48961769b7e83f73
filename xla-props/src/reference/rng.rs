//! rng-bit-generator, bit for bit as XLA's CPU and GPU compilers expand it
//! (`RngBitGeneratorExpander` over `xla/hlo/builder/lib/prng.cc`).
//!
//! The state is `u64[n]`; element 0 is the key, the rest the counter.
//! - three_fry (`u64[2]`): ThreeFry-2x32, 20 rounds, keyed by the two
//!   halves of `state[0]`; the counter `state[1] + i` (wrapping) is the
//!   input pair (low, high). A u64 output's element `i` (row-major) is the
//!   output pair (low | high << 32) of counter `i`; a 32-bit output is
//!   generated at a "half shape" (the first even dimension, else the first
//!   largest, halved rounding up), element `j` along it taking word `j % 2`
//!   of half-shape element `j / 2`; narrower outputs are the 32-bit bits
//!   truncated. The new state adds the number of counters used.
//! - philox (`u64[2]` or `u64[3]`): Philox-4x32, 10 rounds, keyed by the
//!   halves of `state[0]`; the 128-bit counter is `(state[1], state[2])`
//!   (low, high) for `u64[3]` and `(state[1], state[0])` for `u64[2]`.
//!   Counter `c + k` gives four words; a 32-bit output's element `i` is
//!   word `i % 4` of `k = i / 4`, a u64 output's element `i` is words
//!   `(0,1)` or `(2,3)` of `k = i / 2`; the counter advances by the number
//!   of `k` used (only its low word is kept for `u64[2]`).
//! - rng_default is the backend's choice: XLA's CPU and GPU compilers both
//!   expand it as philox (measured on xla-cpu; see the tests).
//!
//! Outputs are unsigned integers of 8, 16, 32 or 64 bits; other element
//! types are unsupported.

use super::OpError;
use crate::hlo::{ElementType, Instruction, RngAlgorithm};
use crate::literal::{Literal, Value};

/// ThreeFry-2x32 with 20 rounds (Salmon et al., SC 2011), as `prng.cc`.
pub(crate) fn threefry2x32(key: [u32; 2], input: [u32; 2]) -> [u32; 2] {
    const ROT: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];
    let ks = [key[0], key[1], 0x1BD1_1BDA ^ key[0] ^ key[1]];
    let mut x = [input[0].wrapping_add(ks[0]), input[1].wrapping_add(ks[1])];
    for block in 0..5usize {
        for &r in &ROT[block % 2] {
            x[0] = x[0].wrapping_add(x[1]);
            x[1] = x[1].rotate_left(r) ^ x[0];
        }
        let s = block + 1;
        x[0] = x[0].wrapping_add(ks[s % 3]);
        x[1] = x[1].wrapping_add(ks[(s + 1) % 3]).wrapping_add(s as u32);
    }
    x
}

/// Philox-4x32 with 10 rounds, as `prng.cc`.
pub(crate) fn philox4x32(key: [u32; 2], input: [u32; 4]) -> [u32; 4] {
    const W: [u32; 2] = [0x9E37_79B9, 0xBB67_AE85];
    const M: [u64; 2] = [0xD251_1F53, 0xCD9E_8D57];
    let (mut k, mut x) = (key, input);
    for _ in 0..10 {
        let p0 = x[0] as u64 * M[0];
        let p1 = x[2] as u64 * M[1];
        x = [
            (p1 >> 32) as u32 ^ x[1] ^ k[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ x[3] ^ k[1],
            p0 as u32,
        ];
        k = [k[0].wrapping_add(W[0]), k[1].wrapping_add(W[1])];
    }
    x
}

fn halves(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

/// The bits and the new state of rng-bit-generator with `alg` on `state`
/// for an output of `width` bits and dimensions `dims` (row-major bits).
pub(crate) fn generate(
    alg: RngAlgorithm,
    state: &[u64],
    dims: &[usize],
    width: u32,
) -> Result<(Vec<u64>, Vec<u64>), String> {
    if !matches!(width, 8 | 16 | 32 | 64) {
        return Err(format!("{width}-bit outputs"));
    }
    match alg {
        RngAlgorithm::ThreeFry => match *state {
            [key, counter] => Ok(threefry(key, counter, dims, width)),
            _ => Err(format!(
                "three_fry takes a u64[2] state, not u64[{}]",
                state.len()
            )),
        },
        RngAlgorithm::Philox | RngAlgorithm::Default => match *state {
            [key, lo] => {
                let (bits, (lo, _)) = philox(key, (lo, key), dims, width);
                Ok((vec![key, lo], bits))
            }
            [key, lo, hi] => {
                let (bits, (lo, hi)) = philox(key, (lo, hi), dims, width);
                Ok((vec![key, lo, hi], bits))
            }
            _ => Err(format!(
                "philox takes a u64[2] or u64[3] state, not u64[{}]",
                state.len()
            )),
        },
    }
}

fn threefry(key: u64, counter: u64, dims: &[usize], width: u32) -> (Vec<u64>, Vec<u64>) {
    let n: usize = dims.iter().product();
    let key = halves(key);
    let word = |c: usize| threefry2x32(key, halves(counter.wrapping_add(c as u64)));
    if width == 64 {
        let bits = (0..n)
            .map(|i| {
                let [lo, hi] = word(i);
                lo as u64 | (hi as u64) << 32
            })
            .collect();
        return (vec![key_of(key), counter.wrapping_add(n as u64)], bits);
    }
    // the half shape: split the first even dimension (else the first largest)
    let (half, split) = if dims.is_empty() {
        (vec![1], None)
    } else {
        let s = dims.iter().position(|d| d % 2 == 0).unwrap_or_else(|| {
            let max = dims.iter().copied().max().unwrap_or(0);
            dims.iter().position(|&d| d == max).unwrap_or(0)
        });
        let mut h = dims.to_vec();
        h[s] = dims[s].div_ceil(2);
        (h, Some(s))
    };
    let mask = if width == 32 {
        u32::MAX as u64
    } else {
        (1u64 << width) - 1
    };
    let mut bits = Vec::with_capacity(n);
    let mut idx = vec![0usize; dims.len()];
    for _ in 0..n {
        let (mut lin, mut which) = (0usize, 0usize);
        for (k, &i) in idx.iter().enumerate() {
            let i = if Some(k) == split {
                which = i % 2;
                i / 2
            } else {
                i
            };
            lin = lin * half[k] + i;
        }
        bits.push(word(lin)[which] as u64 & mask);
        for k in (0..idx.len()).rev() {
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    let used: usize = half.iter().product();
    (vec![key_of(key), counter.wrapping_add(used as u64)], bits)
}

fn key_of(k: [u32; 2]) -> u64 {
    k[0] as u64 | (k[1] as u64) << 32
}

/// A 128-bit counter (low, high) plus `k`.
fn add128(c: (u64, u64), k: u64) -> (u64, u64) {
    let lo = c.0.wrapping_add(k);
    (lo, if lo < c.0 { c.1.wrapping_add(1) } else { c.1 })
}

fn philox(key: u64, counter: (u64, u64), dims: &[usize], width: u32) -> (Vec<u64>, (u64, u64)) {
    let n: usize = dims.iter().product();
    let key = halves(key);
    let block = |k: usize| {
        let (lo, hi) = add128(counter, k as u64);
        let (l, h) = (halves(lo), halves(hi));
        philox4x32(key, [l[0], l[1], h[0], h[1]])
    };
    let (bits, blocks): (Vec<u64>, usize) = if width == 64 {
        let bits = (0..n)
            .map(|i| {
                let w = block(i / 2);
                let j = 2 * (i % 2);
                w[j] as u64 | (w[j + 1] as u64) << 32
            })
            .collect();
        (bits, n.div_ceil(2))
    } else {
        let mask = if width == 32 {
            u32::MAX as u64
        } else {
            (1u64 << width) - 1
        };
        let bits = (0..n).map(|i| block(i / 4)[i % 4] as u64 & mask).collect();
        (bits, n.div_ceil(4))
    };
    (bits, add128(counter, blocks as u64))
}

/// rng-bit-generator on the reference's values: `(new_state, bits)`.
pub(crate) fn rng_bit_generator(ins: &Instruction, state: &Literal) -> Result<Value, OpError> {
    let alg = ins
        .attrs
        .rng_algorithm
        .ok_or_else(|| OpError::Invalid("rng-bit-generator without algorithm=".into()))?;
    let (state_shape, out) = match ins.shape.as_tuple() {
        Some([s, o]) => match (s.as_array(), o.as_array()) {
            (Some(s), Some(o)) => (s, o),
            _ => {
                return Err(OpError::Invalid(
                    "rng-bit-generator's shape is (state, bits)".into(),
                ))
            }
        },
        _ => {
            return Err(OpError::Invalid(
                "rng-bit-generator's shape is (state, bits)".into(),
            ))
        }
    };
    if state.dtype() != ElementType::U64 || state.dims().len() != 1 {
        return Err(OpError::Invalid(format!(
            "rng-bit-generator's state is a u64 vector, not {}",
            state.shape()
        )));
    }
    if !out.dtype.is_unsigned_int() {
        return Err(OpError::Unsupported(format!(
            "rng-bit-generator output of type {} (unsigned integers only)",
            out.dtype
        )));
    }
    crate::literal::check_size(out)?;
    let dims: Vec<usize> = out.dims.iter().map(|&d| d as usize).collect();
    let words: Vec<u64> = (0..state.element_count())
        .map(|i| state.get_bits(i))
        .collect();
    let (new_state, bits) =
        generate(alg, &words, &dims, out.dtype.bit_width()).map_err(OpError::Unsupported)?;
    if state_shape.dims != [new_state.len() as i64] || state_shape.dtype != ElementType::U64 {
        return Err(OpError::Invalid(format!(
            "rng-bit-generator's new state is u64[{}], not {state_shape}",
            new_state.len()
        )));
    }
    let state_out = Literal::from_bits(state_shape, &new_state)?;
    Ok(Value::Tuple(vec![
        Value::Array(state_out),
        Value::Array(Literal::from_bits(out, &bits)?),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threefry_matches_the_random123_known_answers() {
        // Random123's kat_vectors for threefry2x32_20
        assert_eq!(threefry2x32([0, 0], [0, 0]), [0x6b20_0159, 0x99ba_4efe]);
        assert_eq!(
            threefry2x32([u32::MAX, u32::MAX], [u32::MAX, u32::MAX]),
            [0x1cb9_96fc, 0xbb00_2be7]
        );
        assert_eq!(
            threefry2x32([0x1319_8a2e, 0x0370_7344], [0x243f_6a88, 0x85a3_08d3]),
            [0xc492_3a9c, 0x483d_f7a0]
        );
    }

    #[test]
    fn philox_matches_the_random123_known_answers() {
        // Random123's kat_vectors for philox4x32_10
        assert_eq!(
            philox4x32([0, 0], [0; 4]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        assert_eq!(
            philox4x32([u32::MAX; 2], [u32::MAX; 4]),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
        assert_eq!(
            philox4x32(
                [0xa409_3822, 0x299f_31d0],
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344]
            ),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }

    #[test]
    fn the_state_advances_by_the_counters_used() {
        let gen = |alg, state: &[u64], dims: &[usize], w| generate(alg, state, dims, w).unwrap().0;
        // three_fry 32-bit: the half shape of [5] is [3]; 64-bit: one per element
        assert_eq!(gen(RngAlgorithm::ThreeFry, &[9, 10], &[5], 32), [9, 13]);
        assert_eq!(gen(RngAlgorithm::ThreeFry, &[9, 10], &[5], 64), [9, 15]);
        assert_eq!(gen(RngAlgorithm::ThreeFry, &[9, u64::MAX], &[], 32), [9, 0]);
        // philox: four words a block; u64[2] keeps the low counter only
        assert_eq!(gen(RngAlgorithm::Philox, &[9, 10], &[5], 32), [9, 12]);
        assert_eq!(gen(RngAlgorithm::Philox, &[9, 10], &[5], 64), [9, 13]);
        assert_eq!(
            gen(RngAlgorithm::Philox, &[9, u64::MAX, 4], &[3, 3], 32),
            [9, 2, 5]
        );
        assert!(generate(RngAlgorithm::ThreeFry, &[1, 2, 3], &[2], 32).is_err());
        assert!(generate(RngAlgorithm::Philox, &[1], &[2], 32).is_err());
        assert!(generate(RngAlgorithm::Philox, &[1, 2], &[2], 4).is_err());
    }

    #[test]
    fn narrow_bits_are_the_low_bits_of_the_32_bit_ones() {
        for alg in [RngAlgorithm::ThreeFry, RngAlgorithm::Philox] {
            let wide = generate(alg, &[3, 4], &[3, 3], 32).unwrap().1;
            for w in [8, 16] {
                let narrow = generate(alg, &[3, 4], &[3, 3], w).unwrap().1;
                let low: Vec<u64> = wide.iter().map(|b| b & ((1 << w) - 1)).collect();
                assert_eq!(narrow, low);
            }
        }
    }
    // (state, dims, width) -> (new state, bits), measured on xla-cpu
    // (the PJRT CPU plugin of scripts/fetch-xla-plugin.sh, the state a parameter)
    #[allow(clippy::type_complexity)]
    const MEASURED: &[(RngAlgorithm, &[u64], &[usize], u32, &[u64], &[u64])] = &[
        (
            RngAlgorithm::ThreeFry,
            &[0x123456789abcdef0, 0xfedcba9876543210],
            &[3, 5],
            32,
            &[0x123456789abcdef0, 0xfedcba9876543219],
            &[
                0x92506409, 0x827536d5, 0x4d818965, 0x225f1129, 0xea2d1439, 0x85761588, 0xc96dc37b,
                0x4671cc25, 0xabbb4088, 0xdf612abd, 0x50b4941b, 0x3b4b47a0, 0xe008588, 0x66b3a995,
                0xc57854d2,
            ],
        ),
        (
            RngAlgorithm::ThreeFry,
            &[0x123456789abcdef0, 0xfedcba9876543210],
            &[5, 1, 3],
            32,
            &[0x123456789abcdef0, 0xfedcba9876543219],
            &[
                0x92506409, 0x4d818965, 0xea2d1439, 0x827536d5, 0x225f1129, 0x97414b30, 0x85761588,
                0x4671cc25, 0xdf612abd, 0xc96dc37b, 0xabbb4088, 0x452da037, 0x50b4941b, 0xe008588,
                0xc57854d2,
            ],
        ),
        (
            RngAlgorithm::ThreeFry,
            &[0x2a, 0xfffffffffffffffe],
            &[7],
            64,
            &[0x2a, 0x5],
            &[
                0x5635bfea4e5c8aa8,
                0x5ab67f20c9ef714a,
                0x4f6cc618de79f4b9,
                0xfe251627268fd86c,
                0x1b41c6e88533bc2a,
                0xdc557f273ffbe4ea,
                0xa548c279f821b71,
            ],
        ),
        (
            RngAlgorithm::Philox,
            &[0x1, 0xfffffffffffffffe, 0xffffffffffffffff],
            &[2, 3, 5],
            32,
            &[0x1, 0x6, 0x0],
            &[
                0x4e2a470b, 0x6f79e771, 0xb316e059, 0x2fe82a30, 0x73223991, 0x6e77ed02, 0x5cc13728,
                0xa28e2dd9, 0xe3e80670, 0xe50a0ebc, 0x95f222c0, 0xb615aa27, 0xac08141b, 0xdfc5ccbe,
                0x79c07a47, 0xa7f66093, 0x3f55b3f0, 0x8e76cc9d, 0xb68faa8e, 0xebed3676, 0xc1f3cfa1,
                0x95aef64, 0x24b41299, 0xdc9abaa, 0x3f6d6908, 0xa9cc4c00, 0xa7e35a81, 0xd57c8b9c,
                0x2907fe46, 0x4baaf5d2,
            ],
        ),
        (
            RngAlgorithm::Philox,
            &[0x123456789abcdef0, 0xfedcba9876543210],
            &[3, 5],
            64,
            &[0x123456789abcdef0, 0xfedcba9876543218],
            &[
                0xa3d93e8336160bab,
                0xfdc9cbc5f557ad19,
                0x20ed7b5c1892fa5f,
                0xf4471df45010de97,
                0xeba417b424c15768,
                0xd5fdd1f362fb5fce,
                0x83f1616a7705bab6,
                0x114c26254d27d1e9,
                0xf9d0d8d483b1d91d,
                0x4603797103a6e786,
                0xc57d89b8563c65ff,
                0x4ffec323389b3660,
                0xb064d2a4908ee222,
                0x7f1150e191b4e47c,
                0x53a1ad198fc0e734,
            ],
        ),
        (
            RngAlgorithm::Default,
            &[0x123456789abcdef0, 0xfedcba9876543210],
            &[7],
            32,
            &[0x123456789abcdef0, 0xfedcba9876543212],
            &[
                0x36160bab, 0xa3d93e83, 0xf557ad19, 0xfdc9cbc5, 0x1892fa5f, 0x20ed7b5c, 0x5010de97,
            ],
        ),
        (
            RngAlgorithm::Philox,
            &[0x123456789abcdef0, 0xfedcba9876543210],
            &[9],
            16,
            &[0x123456789abcdef0, 0xfedcba9876543213],
            &[
                0xbab, 0x3e83, 0xad19, 0xcbc5, 0xfa5f, 0x7b5c, 0xde97, 0x1df4, 0x5768,
            ],
        ),
    ];

    #[test]
    fn bits_and_states_match_the_ones_measured_on_xla_cpu() {
        for &(alg, state, dims, width, new_state, bits) in MEASURED {
            let (s, b) = generate(alg, state, dims, width).unwrap();
            assert_eq!(s, new_state, "{alg:?} {dims:?} u{width}");
            assert_eq!(b, bits, "{alg:?} {dims:?} u{width}");
        }
    }
}
