//! One argument drawn for a declared operand role: seeded values in a safe
//! range per role (the catalogue in `programs` says each parameter's role),
//! edge values from the one edge table for `special` and `mixed`, every bit
//! pattern for `exhaustive`. `generate.rs` draws a whole module's arguments
//! with it when the roles are known (the suite's cases), and from the legal
//! domains propagated back through the graph when they are not.

use super::distribution::Distribution;
use super::edges::{float_edges, integer_edges, CASE_FLOAT_EDGES};
use super::rng::SplitMix;
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

/// Generates one argument for an operand of `role`. Under
/// [`Distribution::Exhaustive`], a float operand of `2^bits` elements holds
/// every bit pattern in order; any other operand is uniform. `special` draws
/// every element from the edge table, `mixed`, `edge` and `int-edge` half of
/// them; the other distributions draw as `uniform` here.
///
/// ```
/// use xla_props::hlo::{ArrayShape, ElementType};
/// use xla_props::inputs::{generate, Distribution, Role, SplitMix};
/// let shape = ArrayShape::new(ElementType::F16, vec![4]);
/// let a = generate(&shape, Role::NonZero, Distribution::Uniform, &mut SplitMix::new(7)).unwrap();
/// let b = generate(&shape, Role::NonZero, Distribution::Uniform, &mut SplitMix::new(7)).unwrap();
/// assert_eq!(a, b); // deterministic
/// assert!(a.to_f64_vec().iter().all(|v| v.abs() >= 0.25));
/// ```
pub fn generate(
    shape: &ArrayShape,
    role: Role,
    dist: Distribution,
    rng: &mut SplitMix,
) -> Result<Literal, LiteralError> {
    let t = shape.dtype;
    if dist == Distribution::Exhaustive && t.is_float() {
        if let Some(all) = super::exhaustive_bits(t) {
            if shape.element_count() == Some(all.element_count() as u64) {
                let bits: Vec<u64> = (0..all.element_count()).map(|i| all.get_bits(i)).collect();
                return Literal::from_bits(shape, &bits);
            }
        }
    }
    let mut lit = Literal::zeros(shape)?;
    let fspecials = if t.is_float() {
        float_edges(t, CASE_FLOAT_EDGES)
    } else {
        Vec::new()
    };
    let ispecials = if t.is_float() {
        Vec::new()
    } else {
        integer_edges(t)
    };
    let index_like = matches!(
        role,
        Role::Index(..) | Role::ShiftAmount | Role::NonZero | Role::HighBit | Role::Extremes
    );
    for i in 0..lit.element_count() {
        let special = !index_like
            && match dist {
                Distribution::Special => true,
                Distribution::Mixed | Distribution::EdgeValues | Distribution::IntegerEdges => {
                    rng.coin()
                }
                _ => false,
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

/// The arguments of a module whose parameters' roles are declared (the
/// suite's catalogue cases): one [`generate`] per parameter, in order, from
/// one stream seeded with `seed`. Modules without declared roles get theirs
/// from [`super::generate_inputs`] (legal domains propagated through the
/// graph), on the same generator and edge table.
///
/// ```
/// use xla_props::hlo::parse_module;
/// use xla_props::inputs::{generate_with_roles, Distribution, Role};
/// let module = parse_module(
///     "HloModule m\nENTRY main {\n  x = f32[8]{0} parameter(0)\n  ROOT n = f32[8]{0} negate(x)\n}\n",
/// )
/// .unwrap();
/// let a = generate_with_roles(&module, &[Role::NonZero], Distribution::Uniform, 3).unwrap();
/// assert!(a[0].to_f64_vec().iter().all(|v| v.abs() >= 0.25));
/// assert_eq!(a, generate_with_roles(&module, &[Role::NonZero], Distribution::Uniform, 3).unwrap());
/// ```
pub fn generate_with_roles(
    module: &crate::hlo::Module,
    roles: &[Role],
    distribution: Distribution,
    seed: u64,
) -> Result<Vec<Literal>, super::InputError> {
    let mut rng = SplitMix::new(seed);
    let mut args = Vec::new();
    for (index, (shape, role)) in module.parameter_shapes().into_iter().zip(roles).enumerate() {
        let a = shape
            .as_array()
            .ok_or_else(|| super::InputError::UnsupportedParameter {
                index,
                shape: shape.to_string(),
            })?;
        args.push(generate(a, *role, distribution, &mut rng)?);
    }
    Ok(args)
}
