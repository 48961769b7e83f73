//! The suite's single-op cases' inputs: seeded values in a safe range per
//! operand role (the catalogue in `programs` says each parameter's role),
//! edge values for the `special` distribution, every bit pattern for
//! `exhaustive`. Whole graphs get theirs from `generate_inputs` instead
//! (legal domains propagated back through the graph).

use crate::hlo::{ArrayShape, ElementType};
use crate::literal::{Literal, LiteralError};

/// What a parameter is for; decides its safe range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Role {
    /// Ordinary data: floats in [-4, 4], integers over their whole range.
    Data,
    /// Floats in `[lo, hi]` (uniform); integers over their whole range.
    Range(f64, f64),
    /// Values away from zero (divisors): |x| in [0.25, 4] for floats, non-zero integers.
    NonZero,
    /// Non-negative values (integers over [0, max], floats in [0, 4]).
    NonNegative,
    /// Shift amounts: integers in [0, bit width).
    ShiftAmount,
    /// Index values in `[lo, hi]`, never edge values.
    Index(i64, i64),
    /// Integers with the top bit set: unsigned at or above `2^(w-1)` (an
    /// index that is past the end, or negative when misread as signed),
    /// signed negative; floats as `Data`.
    HighBit,
    /// The integer type's minimum or maximum, each half the time; floats as `Data`.
    Extremes,
}

/// How a single-op case's inputs are drawn (the last segment of its name:
/// `uniform`, `special`, `mixed`, `exhaustive`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CaseDistribution {
    /// Uniform values in a safe range for the op.
    Uniform,
    /// Edge values: NaN, ±inf, ±0, min, max, ±1, subnormals, integer extremes.
    Special,
    /// Each element independently uniform or special, half the time each.
    Mixed,
    /// Every bit pattern of the element type, in order (NaNs included), in a
    /// float operand of exactly `2^bits` elements: an exhaustive sweep. Not
    /// part of `default`/`all`; other operands are uniform.
    Exhaustive,
}

impl CaseDistribution {
    /// All distributions.
    pub const ALL: &'static [CaseDistribution] = &[
        CaseDistribution::Uniform,
        CaseDistribution::Special,
        CaseDistribution::Mixed,
    ];
    /// The name used in case names.
    pub fn name(self) -> &'static str {
        match self {
            CaseDistribution::Uniform => "uniform",
            CaseDistribution::Special => "special",
            CaseDistribution::Mixed => "mixed",
            CaseDistribution::Exhaustive => "exhaustive",
        }
    }
    /// Parses a distribution name.
    pub fn from_name(s: &str) -> Option<CaseDistribution> {
        Self::ALL
            .iter()
            .copied()
            .chain([CaseDistribution::Exhaustive])
            .find(|d| d.name() == s)
    }
}

/// A small deterministic generator (SplitMix64).
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
    /// Uniform integer in [lo, hi].
    pub fn int_in(&mut self, lo: i128, hi: i128) -> i128 {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo + 1) as u128;
        let wide = (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
        lo + (wide % span) as i128
    }
}

/// Edge values of float types; each is rounded once into the type
/// (so `max` of f64 becomes inf in f16, which is itself an edge value).
fn float_specials(t: ElementType) -> Vec<f64> {
    let Some(f) = t.float_format() else {
        return vec![0.0];
    };
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f.max,
        -f.max,
        f.min_normal(),
        -f.min_normal(),
        f.min_subnormal(),
        -f.min_subnormal(),
        0.5,
        -2.5,
        f64::NAN,
    ];
    if f.has_inf {
        v.extend([f64::INFINITY, f64::NEG_INFINITY]);
    }
    v
}

fn int_specials(t: ElementType) -> Vec<i128> {
    let (lo, hi) = t.int_range().unwrap_or((0, 1));
    let mut v = vec![lo, hi, 0, 1, lo + 1, hi - 1];
    if lo < 0 {
        v.push(-1);
    }
    v
}

fn uniform_float(role: Role, rng: &mut SplitMix) -> f64 {
    match role {
        Role::Data | Role::ShiftAmount | Role::HighBit | Role::Extremes => -4.0 + 8.0 * rng.unit(),
        Role::Range(lo, hi) => lo + (hi - lo) * rng.unit(),
        Role::NonZero => {
            let m = 0.25 + 3.75 * rng.unit();
            if rng.next_u64() & 1 == 0 {
                m
            } else {
                -m
            }
        }
        Role::NonNegative => 4.0 * rng.unit(),
        Role::Index(lo, hi) => rng.int_in(lo as i128, hi as i128) as f64,
    }
}

fn uniform_int(t: ElementType, role: Role, rng: &mut SplitMix) -> i128 {
    let (lo, hi) = t.int_range().unwrap_or((0, 1));
    match role {
        Role::Index(a, b) => rng.int_in(a as i128, b as i128),
        Role::ShiftAmount => rng.int_in(0, t.bit_width() as i128 - 1),
        Role::NonNegative => rng.int_in(0, hi),
        Role::NonZero => loop {
            let v = rng.int_in(lo, hi);
            // also avoid MIN / -1 overflow partners
            if v != 0 && v != -1 {
                break v;
            }
        },
        Role::Data | Role::Range(..) => rng.int_in(lo, hi),
        Role::HighBit if lo == 0 => rng.int_in(1i128 << (t.bit_width() - 1), hi),
        Role::HighBit => rng.int_in(lo, -1),
        Role::Extremes => {
            if rng.next_u64() & 1 == 0 {
                lo
            } else {
                hi
            }
        }
    }
}

/// Generates one argument. Under [`CaseDistribution::Exhaustive`], a float
/// operand of `2^bits` elements holds every bit pattern in order; any other
/// operand is uniform.
///
/// ```
/// use xla_props::hlo::{ArrayShape, ElementType};
/// use xla_props::inputs::{generate, CaseDistribution, Role, SplitMix};
/// let shape = ArrayShape::new(ElementType::F16, vec![4]);
/// let a = generate(&shape, Role::NonZero, CaseDistribution::Uniform, &mut SplitMix::new(7)).unwrap();
/// let b = generate(&shape, Role::NonZero, CaseDistribution::Uniform, &mut SplitMix::new(7)).unwrap();
/// assert_eq!(a, b); // deterministic
/// assert!(a.to_f64_vec().iter().all(|v| v.abs() >= 0.25));
/// ```
pub fn generate(
    shape: &ArrayShape,
    role: Role,
    dist: CaseDistribution,
    rng: &mut SplitMix,
) -> Result<Literal, LiteralError> {
    let t = shape.dtype;
    if dist == CaseDistribution::Exhaustive && t.is_float() {
        if let Some(all) = super::exhaustive_bits(t) {
            if shape.element_count() == Some(all.element_count() as u64) {
                let bits: Vec<u64> = (0..all.element_count()).map(|i| all.get_bits(i)).collect();
                return Literal::from_bits(shape, &bits);
            }
        }
    }
    let mut lit = Literal::zeros(shape)?;
    let fspecials = if t.is_float() {
        float_specials(t)
    } else {
        Vec::new()
    };
    let ispecials = if t.is_float() {
        Vec::new()
    } else {
        int_specials(t)
    };
    let index_like = matches!(
        role,
        Role::Index(..) | Role::ShiftAmount | Role::NonZero | Role::HighBit | Role::Extremes
    );
    for i in 0..lit.element_count() {
        let special = !index_like
            && match dist {
                CaseDistribution::Uniform | CaseDistribution::Exhaustive => false,
                CaseDistribution::Special => true,
                CaseDistribution::Mixed => rng.next_u64() & 1 == 1,
            };
        if t.is_float() {
            let v = if special {
                fspecials[(rng.next_u64() % fspecials.len() as u64) as usize]
            } else {
                uniform_float(role, rng)
            };
            lit.set_f64(i, v);
        } else if t.is_pred() {
            lit.set_i128(i, (rng.next_u64() & 1) as i128);
        } else {
            let v = if special {
                ispecials[(rng.next_u64() % ispecials.len() as u64) as usize]
            } else {
                uniform_int(t, role, rng)
            };
            lit.set_i128(i, v);
        }
    }
    Ok(lit)
}
