//! Random well-typed programs, grown op by op from the opcode table.
//!
//! Shapes are solved by construction: every step picks an op category
//! (uniformly, so that indexing, reductions and contractions come up as
//! often as elementwise arithmetic), then an op and operands whose shapes fit
//! it (or fresh parameters of the shape it needs). Element types come from
//! the builder's shape inference: an op that rejects its operands' types is
//! simply not added. Every value no later step uses becomes an output (the
//! root is a tuple of them), so that every instruction is observable. Inputs
//! are made legal afterwards by `crate::inputs` (generate first, then make
//! legal); index operands are fresh `s32` parameters, so that the inputs
//! module gives them in-range values (or out-of-range ones under the
//! clamping distribution).

use proptest::prelude::*;

use crate::hlo::{
    default_comparison_type, BuildError, Category, CompId, ComparisonDirection, ComparisonType,
    ComputationBuilder, ElementType, InstrId, Module, ModuleBuilder, Opcode, PadDim, Shape,
};
use crate::inputs::SplitMix;

mod structured;

/// The element types random programs compute in (a program picks one as its
/// main type; converts bring in others). Narrow floats and integers are
/// listed more than once: most miscompilations live there.
pub const FUZZ_DTYPES: &[ElementType] = &[
    ElementType::F32,
    ElementType::F32,
    ElementType::Bf16,
    ElementType::Bf16,
    ElementType::F16,
    ElementType::S32,
    ElementType::S8,
    ElementType::S16,
    ElementType::U8,
    ElementType::U32,
];

/// Narrow float types a convert round trip goes through.
const NARROW_FLOATS: &[ElementType] = &[
    ElementType::F16,
    ElementType::Bf16,
    ElementType::F8E4M3Fn,
    ElementType::F8E5M2,
];

/// Integer types a float goes through (convert saturates at their edges).
const INTS: &[ElementType] = &[
    ElementType::S8,
    ElementType::U8,
    ElementType::S16,
    ElementType::S32,
    ElementType::U32,
];

/// `reduce-precision` formats: f16, bf16, f8e5m2 and f8e4m3 layouts.
const REDUCE_PRECISION: &[(i64, i64)] = &[(5, 10), (8, 7), (5, 2), (4, 3)];

/// Ops not generated, with the reason (none now: the interpreter's unsigned
/// and negative-exponent `power` agree with the reference).
const EXCLUDED: &[(Opcode, &str)] = &[];

/// The elementwise ops of the opcode table (the builder filters them by dtype).
fn elementwise(category: Category) -> Vec<Opcode> {
    Opcode::ALL
        .iter()
        .copied()
        .filter(|op| op.category() == category)
        .collect()
}

/// The categories a step is drawn from, uniformly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Elementwise,
    Conversion,
    Selection,
    Shape,
    Indexing,
    Reduction,
    Contraction,
}

const STEPS: &[Step] = &[
    Step::Elementwise,
    Step::Conversion,
    Step::Selection,
    Step::Shape,
    Step::Indexing,
    Step::Reduction,
    Step::Contraction,
];

/// The computations a program's reductions, scatters and sorts call, made
/// before the entry (for the main type only; values of other types are not reduced).
struct Called {
    add: CompId,
    max: CompId,
    min: CompId,
    /// Integer types only: a float product has no reassociation bound.
    mul: Option<CompId>,
    /// Single-operand sorts, `LT` and `GT` (total order for floats).
    sort_lt: CompId,
    sort_gt: CompId,
    /// Key-value sorts: the key type and its comparator (values of the main type).
    key_value: Vec<(ElementType, CompId)>,
}

fn comparison_type(t: ElementType) -> ComparisonType {
    if t.is_float() {
        ComparisonType::TotalOrder
    } else {
        default_comparison_type(t)
    }
}

/// `compare(p0, p1)` over the first pair of `(key, value...)` scalars.
fn sort_comparator(
    m: &mut ModuleBuilder,
    dir: ComparisonDirection,
    types: &[ElementType],
) -> Result<CompId, BuildError> {
    let name = format!("sort_{}", dir.name().to_ascii_lowercase());
    m.computation(&name, |b| {
        let mut params = Vec::new();
        for &t in types {
            params.push(b.parameter(Shape::scalar(t))?);
            params.push(b.parameter(Shape::scalar(t))?);
        }
        b.compare(dir, comparison_type(types[0]), params[0], params[1])
    })
}

impl Called {
    fn new(m: &mut ModuleBuilder, t: ElementType) -> Result<Called, BuildError> {
        let mut key_value = Vec::new();
        for k in [ElementType::Pred, ElementType::S8, t] {
            if key_value.iter().all(|(kt, _)| *kt != k) {
                key_value.push((k, sort_comparator(m, ComparisonDirection::Lt, &[k, t])?));
            }
        }
        Ok(Called {
            add: m.scalar_reducer(Opcode::Add, t)?,
            max: m.scalar_reducer(Opcode::Maximum, t)?,
            min: m.scalar_reducer(Opcode::Minimum, t)?,
            mul: if t.is_integer() {
                Some(m.scalar_reducer(Opcode::Multiply, t)?)
            } else {
                None
            },
            sort_lt: sort_comparator(m, ComparisonDirection::Lt, &[t])?,
            sort_gt: sort_comparator(m, ComparisonDirection::Gt, &[t])?,
            key_value,
        })
    }
}

struct Grower<'r> {
    rng: &'r mut SplitMix,
    dtype: ElementType,
    values: Vec<InstrId>,
    used: Vec<InstrId>,
    unary: Vec<Opcode>,
    binary: Vec<Opcode>,
    called: Called,
}

/// The value a step grows from: its id, element type and dimensions.
#[derive(Clone, Copy)]
struct GrowFrom<'d> {
    x: InstrId,
    t: ElementType,
    dims: &'d [i64],
}

fn dims_of(b: &ComputationBuilder<'_>, x: InstrId) -> Vec<i64> {
    b.shape(x)
        .and_then(Shape::as_array)
        .map(|a| a.dims.clone())
        .unwrap_or_default()
}

fn dtype_of(b: &ComputationBuilder<'_>, x: InstrId) -> Option<ElementType> {
    b.shape(x).and_then(Shape::as_array).map(|a| a.dtype)
}

type Res = Result<InstrId, BuildError>;

impl Grower<'_> {
    fn param(&mut self, b: &mut ComputationBuilder<'_>, t: ElementType, dims: &[i64]) -> Res {
        b.parameter(Shape::array(t, dims.to_vec()))
    }

    fn index(&mut self, b: &mut ComputationBuilder<'_>, dims: &[i64]) -> Res {
        self.param(b, ElementType::S32, dims)
    }

    /// A value of exactly this type and dims: an existing one, or a fresh parameter.
    fn value_of(&mut self, b: &mut ComputationBuilder<'_>, t: ElementType, dims: &[i64]) -> Res {
        let fits: Vec<InstrId> = self
            .values
            .iter()
            .copied()
            .filter(|&v| dims_of(b, v) == dims && dtype_of(b, v) == Some(t))
            .collect();
        match self.rng.pick(&fits) {
            Some(v) if self.rng.below(3) != 0 => Ok(v),
            _ => self.param(b, t, dims),
        }
    }

    /// An operand: any value, or one of the main type when `main` is set;
    /// values nothing uses yet are preferred (programs grow deep, not wide).
    fn operand(&mut self, b: &ComputationBuilder<'_>, main: bool) -> Option<InstrId> {
        let ok = |v: &InstrId| {
            b.shape(*v).is_some_and(|s| s.as_array().is_some())
                && (!main || dtype_of(b, *v) == Some(self.dtype))
        };
        let fresh: Vec<InstrId> = self
            .values
            .iter()
            .copied()
            .filter(|v| ok(v) && !self.used.contains(v))
            .collect();
        let all: Vec<InstrId> = self.values.iter().copied().filter(ok).collect();
        if self.rng.chance(2, 3) {
            if let Some(v) = self.rng.pick(&fresh) {
                return Some(v);
            }
        }
        self.rng.pick(&all)
    }

    /// A fresh parameter of the main type with a random shape of `rank`.
    fn fresh(&mut self, b: &mut ComputationBuilder<'_>, rank: usize) -> Res {
        let dims = random_dims(self.rng, rank);
        let t = self.dtype;
        self.param(b, t, &dims)
    }

    fn scalar_init(&mut self, b: &mut ComputationBuilder<'_>, identity: f64) -> Res {
        let t = self.dtype;
        if self.rng.chance(1, 2) {
            return self.param(b, t, &[]);
        }
        let v = if self.rng.chance(1, 2) {
            identity
        } else {
            self.rng.range(-3, 3) as f64
        };
        let v = match t.int_range() {
            Some((lo, hi)) if v.is_finite() => v.clamp(lo as f64, hi as f64),
            Some((lo, hi)) => {
                if v > 0.0 {
                    hi as f64
                } else {
                    lo as f64
                }
            }
            None => v,
        };
        if t.is_float() {
            b.constant_f64(t, &[], &[v])
        } else {
            b.constant_i128(t, &[], &[v as i128])
        }
    }

    fn step(&mut self, b: &mut ComputationBuilder<'_>, step: Step) -> Res {
        let x = self.operand(b, false).ok_or_else(|| BuildError::Invalid {
            computation: b.name().to_string(),
            message: "no value to grow from".into(),
        })?;
        let dims = dims_of(b, x);
        let t = dtype_of(b, x).unwrap_or(self.dtype);
        let from = GrowFrom { x, t, dims: &dims };
        match step {
            Step::Elementwise => self.elementwise(b, from),
            Step::Conversion => self.conversion(b, from),
            Step::Selection => self.selection(b, from),
            Step::Shape => self.shape_op(b, from),
            Step::Indexing => self.indexing(b, from),
            Step::Reduction => self.reduction(b),
            Step::Contraction => self.contraction(b),
        }
    }

    fn elementwise(&mut self, b: &mut ComputationBuilder<'_>, from: GrowFrom<'_>) -> Res {
        let GrowFrom { x, t, dims } = from;
        match self.rng.below(5) {
            0 | 1 => {
                let op = self.rng.pick(&self.unary).unwrap_or(Opcode::Negate);
                b.unary(op, x)
            }
            2 => {
                // clamp with scalar or full-shape bounds
                let lo = self.value_of(b, t, &[])?;
                let hi = self.value_of(b, t, dims)?;
                b.clamp(lo, x, hi)
            }
            _ => {
                let op = self.rng.pick(&self.binary).unwrap_or(Opcode::Add);
                if EXCLUDED.iter().any(|(o, _)| *o == op) && t.is_unsigned_int() {
                    return b.binary(Opcode::Subtract, x, x);
                }
                let y = self.value_of(b, t, dims)?;
                if self.rng.chance(1, 2) {
                    b.binary(op, x, y)
                } else {
                    b.binary(op, y, x)
                }
            }
        }
    }

    fn conversion(&mut self, b: &mut ComputationBuilder<'_>, from: GrowFrom<'_>) -> Res {
        let GrowFrom { x, t, .. } = from;
        match self.rng.below(6) {
            // narrow -> wide -> narrow round trips, the quantization residual's shape
            0 | 1 => {
                let narrow = self.rng.pick(NARROW_FLOATS).unwrap_or(ElementType::F16);
                let wide = if t.is_float() && t.bit_width() > narrow.bit_width() {
                    t
                } else {
                    ElementType::F32
                };
                let w = if t == wide { x } else { b.convert(x, wide)? };
                let q = b.convert(w, narrow)?;
                b.convert(q, wide)
            }
            // one-way converts into another type (f32 -> bf16, float <-> int)
            2 | 3 => {
                let to = if t.is_float() {
                    if self.rng.chance(1, 2) {
                        self.rng.pick(INTS).unwrap_or(ElementType::S32)
                    } else {
                        self.rng.pick(NARROW_FLOATS).unwrap_or(ElementType::Bf16)
                    }
                } else {
                    self.rng
                        .pick(&[ElementType::F32, ElementType::Bf16, ElementType::F16])
                        .unwrap_or(ElementType::F32)
                };
                let c = b.convert(x, to)?;
                if self.rng.chance(1, 2) && to != self.dtype {
                    b.convert(c, self.dtype)
                } else {
                    Ok(c)
                }
            }
            4 => {
                let (e, m) = self.rng.pick(REDUCE_PRECISION).unwrap_or((5, 10));
                b.reduce_precision(x, e, m)
            }
            _ => {
                // f32 -> bf16 -> f32 in particular: the truncating emulation lives there
                let w = if t == ElementType::F32 {
                    x
                } else {
                    b.convert(x, ElementType::F32)?
                };
                let q = b.convert(w, ElementType::Bf16)?;
                b.convert(q, ElementType::F32)
            }
        }
    }

    fn selection(&mut self, b: &mut ComputationBuilder<'_>, from: GrowFrom<'_>) -> Res {
        let GrowFrom { x, t, dims } = from;
        let dir = self
            .rng
            .pick(&ComparisonDirection::ALL)
            .unwrap_or(ComparisonDirection::Lt);
        let y = self.value_of(b, t, dims)?;
        match self.rng.below(3) {
            0 => b.compare(dir, default_comparison_type(t), x, y),
            1 => {
                let p = b.compare(dir, default_comparison_type(t), x, y)?;
                b.select(p, x, y)
            }
            _ => {
                // a broadcast predicate: scalar, or of a lower-rank compare
                let keep = if dims.is_empty() {
                    0
                } else {
                    self.rng.below(dims.len())
                };
                let pd: Vec<i64> = dims[..keep].to_vec();
                let p = if self.rng.chance(1, 2) {
                    self.param(b, ElementType::Pred, &pd)?
                } else {
                    let u = self.value_of(b, t, &pd)?;
                    let v = self.param(b, t, &pd)?;
                    b.compare(dir, default_comparison_type(t), u, v)?
                };
                let map: Vec<i64> = (0..keep as i64).collect();
                let pb = b.broadcast(p, dims, &map)?;
                b.select(pb, x, y)
            }
        }
    }

    fn shape_op(&mut self, b: &mut ComputationBuilder<'_>, from: GrowFrom<'_>) -> Res {
        let GrowFrom { x, t, dims } = from;
        let rank = dims.len();
        match self.rng.below(8) {
            0 if rank >= 2 => {
                let mut perm: Vec<i64> = (0..rank as i64).collect();
                for i in (1..rank).rev() {
                    let j = self.rng.below(i + 1);
                    perm.swap(i, j);
                }
                if perm.iter().enumerate().all(|(i, &p)| p == i as i64) {
                    perm.rotate_left(1);
                }
                b.transpose(x, &perm)
            }
            1 if rank <= 2 => {
                let at = self.rng.below(rank + 1);
                let mut out = dims.to_vec();
                out.insert(at, self.rng.range(1, 3));
                let map: Vec<i64> = (0..rank as i64)
                    .map(|d| if d < at as i64 { d } else { d + 1 })
                    .collect();
                b.broadcast(x, &out, &map)
            }
            2 => {
                let n: i64 = dims.iter().product();
                let out = factorize(self.rng, n);
                b.reshape(x, &out)
            }
            3 if rank >= 1 => {
                let mut starts = Vec::new();
                let mut limits = Vec::new();
                let mut strides = Vec::new();
                for &d in dims {
                    let s = self.rng.range(0, d - 1);
                    let l = self.rng.range(s + 1, d);
                    starts.push(s);
                    limits.push(l);
                    strides.push(self.rng.range(1, 2));
                }
                b.slice(x, &starts, &limits, &strides)
            }
            4 if rank >= 1 => {
                let d = self.rng.below(rank);
                let mut yd = dims.to_vec();
                yd[d] = self.rng.range(1, 3);
                let y = self.value_of(b, t, &yd)?;
                let mut ops = vec![x, y];
                if self.rng.chance(1, 3) {
                    ops.push(self.value_of(b, t, dims)?);
                }
                b.concatenate(&ops, d as i64)
            }
            5 if rank >= 1 => {
                let value = self.value_of(b, t, &[])?;
                let pads: Vec<PadDim> = dims
                    .iter()
                    .map(|&d| {
                        let interior = self.rng.range(0, 1);
                        let full = d + (d - 1) * interior;
                        let low = self.rng.range(-1, 2).max(1 - full);
                        let high = self.rng.range(-1, 2).max(1 - full - low);
                        PadDim {
                            low,
                            high,
                            interior,
                        }
                    })
                    .collect();
                b.pad(x, value, &pads)
            }
            6 if rank >= 1 => {
                let ds: Vec<i64> = (0..rank as i64).filter(|_| self.rng.chance(1, 2)).collect();
                let ds = if ds.is_empty() { vec![0] } else { ds };
                b.reverse(x, &ds)
            }
            _ => {
                let r = self.rng.range(1, 3) as usize;
                let id = random_dims(self.rng, r);
                let it = if self.rng.chance(1, 2) {
                    self.dtype
                } else {
                    ElementType::S32
                };
                let d = self.rng.below(r) as i64;
                let i = b.iota(it, &id, d)?;
                if it == t && id == dims {
                    b.binary(Opcode::Add, x, i)
                } else {
                    Ok(i)
                }
            }
        }
    }
}

/// Random dims of `rank`, each 1..=4, small more often.
fn random_dims(rng: &mut SplitMix, rank: usize) -> Vec<i64> {
    (0..rank)
        .map(|_| rng.pick(&[1, 2, 2, 3, 3, 4]).unwrap_or(2))
        .collect()
}

/// A random factorization of `n` into 1 to 3 dims.
fn factorize(rng: &mut SplitMix, n: i64) -> Vec<i64> {
    let parts = 1 + rng.below(3);
    let mut out = Vec::new();
    let mut rest = n.max(1);
    for _ in 1..parts {
        let divisors: Vec<i64> = (1..=rest).filter(|d| rest % d == 0).collect();
        let d = rng.pick(&divisors).unwrap_or(1);
        out.push(d);
        rest /= d;
    }
    out.push(rest);
    out
}

/// Grows a random well-typed program from `seed` with up to `max_ops` steps.
///
/// ```
/// use xla_props::programs::random_program;
/// let m = random_program(7, 6).unwrap();
/// assert_eq!(m.to_string(), random_program(7, 6).unwrap().to_string());
/// assert!(m.instruction_count() >= 2);
/// ```
pub fn random_program(seed: u64, max_ops: usize) -> Result<Module, BuildError> {
    let mut rng = SplitMix::new(seed);
    let dtype = rng.pick(FUZZ_DTYPES).unwrap_or(ElementType::F32);
    let mut m = ModuleBuilder::new(format!("fuzz_{seed:016x}"));
    let called = Called::new(&mut m, dtype)?;
    let rank = rng.pick(&[0usize, 1, 1, 2, 2, 2, 3, 3]).unwrap_or(2);
    let dims = random_dims(&mut rng, rank);
    let steps = 1 + rng.below(max_ops.max(1));
    let module = m.build("main", |b| {
        let mut g = Grower {
            rng: &mut rng,
            dtype,
            values: Vec::new(),
            used: Vec::new(),
            unary: elementwise(Category::ElementwiseUnary),
            binary: elementwise(Category::ElementwiseBinary),
            called,
        };
        let p = g.param(b, dtype, &dims)?;
        g.values.push(p);
        for _ in 0..steps {
            // an op that rejects its operands' types is not added; try another
            for _attempt in 0..8 {
                let step = g.rng.pick(STEPS).unwrap_or(Step::Elementwise);
                let before = b.instructions().len();
                if g.step(b, step).is_ok() {
                    let after = b.instructions().len();
                    for k in before..after {
                        let id = InstrId(k as u32);
                        let ins = &b.instructions()[k];
                        g.used.extend(ins.operands.iter().copied());
                        if ins.opcode != Opcode::Parameter && !g.values.contains(&id) {
                            g.values.push(id);
                        }
                    }
                    break;
                }
            }
        }
        // every value nothing uses is an output (tuples are taken apart first)
        let outputs: Vec<InstrId> = g
            .values
            .iter()
            .copied()
            .filter(|v| !g.used.contains(v))
            .filter(|v| b.shape(*v).is_some_and(|s| s.as_array().is_some()))
            .filter(|v| b.instructions()[v.index()].opcode != Opcode::Parameter)
            .collect();
        match outputs.as_slice() {
            [] => b.unary(Opcode::Negate, p),
            [one] => Ok(*one),
            many => b.tuple(many),
        }
    })?;
    Ok(module)
}

/// A proptest strategy for random programs (with their seed), so programs
/// compose with other strategies; shrinking works on the seed and the step count.
pub fn program_strategy(max_ops: usize) -> impl Strategy<Value = (u64, Module)> {
    (any::<u64>(), 1..=max_ops.max(1))
        .prop_filter_map("the builder rejected the program", |(seed, ops)| {
            random_program(seed, ops).ok().map(|m| (seed, m))
        })
}
