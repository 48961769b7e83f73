//! rng-bit-generator the way XLA's expander builds it: whole arrays of
//! counters through ThreeFry-2x32 (20 rounds) or Philox-4x32 (10 rounds),
//! then the shape bookkeeping of `xla/hlo/builder/lib/prng.cc` (split into
//! halves and concatenated for three_fry's 32-bit bits, round-robin words
//! for philox). `rng_default` is philox, as XLA's CPU and GPU compilers
//! expand it. Unsigned outputs of 8, 16, 32 and 64 bits.

use super::elem::{err, Res};
use crate::backend::BackendError;
use crate::hlo::{ArrayShape, ElementType, Instruction, RngAlgorithm};
use crate::literal::{Literal, Value};

/// ThreeFry-2x32 over arrays of inputs (one key).
fn threefry(key: (u32, u32), x0: &mut [u32], x1: &mut [u32]) {
    let ks0 = key.0;
    let ks1 = key.1;
    let ks2 = 0x1BD1_1BDAu32 ^ key.0 ^ key.1;
    let injections = [
        (ks1, ks2, 1u32),
        (ks2, ks0, 2),
        (ks0, ks1, 3),
        (ks1, ks2, 4),
        (ks2, ks0, 5),
    ];
    for (a, b) in x0.iter_mut().zip(x1.iter_mut()) {
        let mut v0 = a.wrapping_add(ks0);
        let mut v1 = b.wrapping_add(ks1);
        for (g, &(k0, k1, c)) in injections.iter().enumerate() {
            let rs: [u32; 4] = if g % 2 == 0 {
                [13, 15, 26, 6]
            } else {
                [17, 29, 16, 24]
            };
            for r in rs {
                v0 = v0.wrapping_add(v1);
                v1 = v0 ^ v1.rotate_left(r);
            }
            v0 = v0.wrapping_add(k0);
            v1 = v1.wrapping_add(k1).wrapping_add(c);
        }
        *a = v0;
        *b = v1;
    }
}

fn mul_hi_lo(x: u32, k: u32) -> (u32, u32) {
    let p = u64::from(x) * u64::from(k);
    ((p >> 32) as u32, p as u32)
}

/// Philox-4x32 of one counter block.
fn philox_block(mut key: (u32, u32), mut s: [u32; 4]) -> [u32; 4] {
    for _ in 0..10 {
        let (h0, l0) = mul_hi_lo(s[0], 0xD251_1F53);
        let (h1, l1) = mul_hi_lo(s[2], 0xCD9E_8D57);
        s = [h1 ^ s[1] ^ key.0, l1, h0 ^ s[3] ^ key.1, l0];
        key = (
            key.0.wrapping_add(0x9E37_79B9),
            key.1.wrapping_add(0xBB67_AE85),
        );
    }
    s
}

/// Row-major strides of `dims`.
fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * dims[k + 1];
    }
    s
}

/// ThreeFry bits: `u64` pairs for 64-bit outputs, else the 32-bit words
/// of the half shape put back together. Returns (bits, counters used).
fn threefry_bits(key: u64, start: u64, dims: &[usize], width: u32) -> (Vec<u64>, u64) {
    let n: usize = dims.iter().product();
    let key = (key as u32, (key >> 32) as u32);
    let counters = |len: usize| -> (Vec<u32>, Vec<u32>) {
        (0..len as u64)
            .map(|i| {
                let c = start.wrapping_add(i);
                (c as u32, (c >> 32) as u32)
            })
            .unzip()
    };
    if width == 64 {
        let (mut lo, mut hi) = counters(n);
        threefry(key, &mut lo, &mut hi);
        let bits = lo
            .iter()
            .zip(&hi)
            .map(|(&l, &h)| (u64::from(h) << 32) | u64::from(l))
            .collect();
        return (bits, n as u64);
    }
    let split = if dims.is_empty() {
        None
    } else {
        let even = dims.iter().position(|&d| d % 2 == 0);
        let mut largest = 0;
        for (k, &d) in dims.iter().enumerate() {
            if d > dims[largest] {
                largest = k;
            }
        }
        Some(even.unwrap_or(largest))
    };
    let mut half: Vec<usize> = dims.to_vec();
    if let Some(s) = split {
        half[s] = dims[s].div_ceil(2);
    }
    let half_n: usize = if dims.is_empty() {
        1
    } else {
        half.iter().product()
    };
    let (mut out0, mut out1) = counters(half_n);
    threefry(key, &mut out0, &mut out1);
    let (ostr, hstr) = (strides(dims), strides(&half));
    let keep = if width == 32 {
        u64::from(u32::MAX)
    } else {
        (1u64 << width) - 1
    };
    let bits = (0..n)
        .map(|i| {
            let mut h = 0;
            let mut second = false;
            for k in 0..dims.len() {
                let mut c = (i / ostr[k]) % dims[k];
                if Some(k) == split {
                    second = c % 2 == 1;
                    c /= 2;
                }
                h += c * hstr[k];
            }
            let w = if second { out1[h] } else { out0[h] };
            u64::from(w) & keep
        })
        .collect();
    (bits, half_n as u64)
}

/// Philox bits from the 128-bit counter `(lo, hi)`. Returns (bits, new counter).
fn philox_bits(key: u64, lo: u64, hi: u64, n: usize, width: u32) -> (Vec<u64>, (u64, u64)) {
    let key = (key as u32, (key >> 32) as u32);
    let words = if width == 64 { 2 * n } else { n };
    let blocks = words.div_ceil(4);
    let add = |k: u64| {
        let l = lo.wrapping_add(k);
        (l, if l < lo { hi.wrapping_add(1) } else { hi })
    };
    let mut flat = Vec::with_capacity(blocks * 4);
    for k in 0..blocks as u64 {
        let (l, h) = add(k);
        flat.extend(philox_block(
            key,
            [l as u32, (l >> 32) as u32, h as u32, (h >> 32) as u32],
        ));
    }
    let bits = if width == 64 {
        flat.chunks(2)
            .take(n)
            .map(|p| u64::from(p[0]) | (u64::from(p[1]) << 32))
            .collect()
    } else {
        let keep = if width == 32 {
            u64::from(u32::MAX)
        } else {
            (1u64 << width) - 1
        };
        flat.iter().take(n).map(|&w| u64::from(w) & keep).collect()
    };
    (bits, add(blocks as u64))
}

/// rng-bit-generator: `(new_state, bits)`.
pub(super) fn rng_bit_generator(ins: &Instruction, state: &Literal) -> Res<Value> {
    let alg = ins
        .attrs
        .rng_algorithm
        .ok_or_else(|| BackendError::Execute("rng-bit-generator: missing algorithm".into()))?;
    let (state_shape, out): (&ArrayShape, &ArrayShape) = match ins.shape.as_tuple() {
        Some([s, o]) => match (s.as_array(), o.as_array()) {
            (Some(s), Some(o)) => (s, o),
            _ => return err("rng-bit-generator: the shape is (state, bits)"),
        },
        _ => return err("rng-bit-generator: the shape is (state, bits)"),
    };
    if state.dtype() != ElementType::U64 || state.dims().len() != 1 {
        return err(format!(
            "rng-bit-generator: the state is a u64 vector, not {}",
            state.shape()
        ));
    }
    let width = out.dtype.bit_width();
    if !out.dtype.is_unsigned_int() || !matches!(width, 8 | 16 | 32 | 64) {
        return Err(BackendError::unsupported(format!(
            "rng-bit-generator output of type {}",
            out.dtype
        )));
    }
    crate::literal::check_size(out).map_err(|e| BackendError::Execute(e.to_string()))?;
    let dims: Vec<usize> = out.dims.iter().map(|&d| d as usize).collect();
    let s: Vec<u64> = (0..state.element_count())
        .map(|i| state.get_bits(i))
        .collect();
    let (bits, new_state) = match (alg, s.as_slice()) {
        (RngAlgorithm::ThreeFry, &[key, c]) => {
            let (bits, used) = threefry_bits(key, c, &dims, width);
            (bits, vec![key, c.wrapping_add(used)])
        }
        (RngAlgorithm::Philox | RngAlgorithm::Default, &[key, c]) => {
            let (bits, (lo, _)) = philox_bits(key, c, key, dims.iter().product(), width);
            (bits, vec![key, lo])
        }
        (RngAlgorithm::Philox | RngAlgorithm::Default, &[key, lo, hi]) => {
            let (bits, (lo, hi)) = philox_bits(key, lo, hi, dims.iter().product(), width);
            (bits, vec![key, lo, hi])
        }
        (a, s) => {
            return Err(BackendError::unsupported(format!(
                "rng-bit-generator {a:?} with a u64[{}] state",
                s.len()
            )))
        }
    };
    if state_shape.dims != [new_state.len() as i64] {
        return err(format!(
            "rng-bit-generator: the new state is u64[{}], not {state_shape}",
            new_state.len()
        ));
    }
    let lit = |s: &ArrayShape, b: &[u64]| {
        Literal::from_bits(s, b).map_err(|e| BackendError::Execute(e.to_string()))
    };
    Ok(Value::Tuple(vec![
        Value::Array(lit(state_shape, &new_state)?),
        Value::Array(lit(out, &bits)?),
    ]))
}

#[cfg(test)]
mod tests {
    use crate::backend::{Backend, Interpreter};
    use crate::hlo::{parse_module, ArrayShape, ElementType};
    use crate::literal::Literal;

    fn both(text: &str, state: &[u64]) -> (Vec<Literal>, Vec<Literal>) {
        let m = parse_module(text).unwrap();
        let s = ArrayShape::new(ElementType::U64, vec![state.len() as i64]);
        let args = [Literal::from_bits(&s, state).unwrap()];
        let ours = Interpreter::default()
            .compile(&m)
            .unwrap()
            .execute(&args)
            .unwrap();
        (ours, crate::reference::evaluate(&m, &args).unwrap())
    }

    #[test]
    fn bits_and_states_agree_with_the_reference_bit_for_bit() {
        let states: [&[u64]; 3] = [&[0, 0], &[u64::MAX, u64::MAX - 3], &[7, u64::MAX - 1, 9]];
        let outs = [
            "u32[]",
            "u32[7]",
            "u32[3,5]",
            "u32[4,3]",
            "u32[5,1,3]",
            "u32[2,0]",
            "u64[]",
            "u64[3,5]",
            "u8[5]",
            "u16[3,3]",
        ];
        let mut compared = 0;
        for state in states {
            let n = state.len();
            let algs: &[&str] = if n == 2 {
                &["rng_three_fry", "rng_philox", "rng_default"]
            } else {
                &["rng_philox", "rng_default"]
            };
            for alg in algs {
                for out in outs {
                    let text = format!(
                        "HloModule m\nENTRY e {{\n  s = u64[{n}] parameter(0)\n  \
                         ROOT r = (u64[{n}], {out}) rng-bit-generator(s), algorithm={alg}\n}}\n"
                    );
                    let (ours, reference) = both(&text, state);
                    assert_eq!(ours.len(), 2);
                    assert_eq!(ours, reference, "{alg} {out} {state:?}");
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 2 * 3 * 10 + 2 * 10);
    }

    #[test]
    fn wrong_states_and_types_are_errors_not_panics() {
        let run = |state: &str, out: &str, alg: &str| {
            let text = format!(
                "HloModule m\nENTRY e {{\n  s = {state} parameter(0)\n  \
                 ROOT r = ({state}, {out}) rng-bit-generator(s), algorithm={alg}\n}}\n"
            );
            let m = parse_module(&text).unwrap();
            let shape = m.entry_computation().instructions[0]
                .shape
                .as_array()
                .unwrap()
                .clone();
            let arg = Literal::zeros(&shape).unwrap();
            Interpreter::default()
                .compile(&m)
                .and_then(|e| e.execute(&[arg]))
        };
        assert!(run("u64[3]", "u32[4]", "rng_three_fry").is_err());
        assert!(run("u64[4]", "u32[4]", "rng_philox").is_err());
        assert!(run("u64[2]", "f32[4]", "rng_philox").is_err());
        assert!(run("u32[2]", "u32[4]", "rng_philox").is_err());
        assert!(run("u64[2]", "u32[4]", "rng_philox").is_ok());
    }
}
