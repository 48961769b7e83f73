//! Random well-typed programs, grown op by op from the opcode table.
//!
//! Shapes are solved by construction: every step picks an op, then operands
//! whose shapes fit it (or fresh parameters of the shape it needs). Element
//! types come from the builder's shape inference: an op that rejects the
//! program's dtype is simply not added. Inputs are made legal afterwards by
//! `crate::inputs` (generate first, then make legal).

use proptest::prelude::*;

use crate::hlo::{
    default_comparison_type, BuildError, Category, CompId, ComparisonDirection, ComputationBuilder,
    DotDims, ElementType, InstrId, Module, ModuleBuilder, Opcode, Shape,
};

/// The float types random programs compute in.
pub const FUZZ_DTYPES: &[ElementType] = &[ElementType::F32, ElementType::F16, ElementType::Bf16];

/// Narrow types a convert round trip goes through.
const ROUND_TRIP: &[ElementType] = &[
    ElementType::F16,
    ElementType::Bf16,
    ElementType::F8E4M3Fn,
    ElementType::F8E5M2,
];

/// A small deterministic generator (SplitMix64): programs are reproducible from their seed.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> Option<T> {
        (!xs.is_empty()).then(|| xs[self.below(xs.len())])
    }
}

/// The elementwise ops of the opcode table (the builder filters them by dtype).
fn elementwise(category: Category) -> Vec<Opcode> {
    Opcode::ALL
        .iter()
        .copied()
        .filter(|op| op.category() == category)
        .collect()
}

/// The kinds of step a program grows by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Unary,
    Binary,
    RoundTrip,
    ReduceBroadcast,
    Transpose,
    Dot,
    CompareSelect,
    Reverse,
    Concatenate,
    Slice,
}

const STEPS: &[Step] = &[
    Step::Unary,
    Step::Unary,
    Step::Binary,
    Step::Binary,
    Step::Binary,
    Step::RoundTrip,
    Step::ReduceBroadcast,
    Step::Transpose,
    Step::Dot,
    Step::CompareSelect,
    Step::Reverse,
    Step::Concatenate,
    Step::Slice,
];

struct Grower<'r> {
    rng: &'r mut Rng,
    dtype: ElementType,
    values: Vec<InstrId>,
    unary: Vec<Opcode>,
    binary: Vec<Opcode>,
    add: CompId,
    max: CompId,
}

fn dims_of(b: &ComputationBuilder<'_>, x: InstrId) -> Vec<i64> {
    b.shape(x)
        .and_then(Shape::as_array)
        .map(|a| a.dims.clone())
        .unwrap_or_default()
}

impl Grower<'_> {
    fn param(
        &mut self,
        b: &mut ComputationBuilder<'_>,
        dims: &[i64],
    ) -> Result<InstrId, BuildError> {
        let p = b.parameter(Shape::array(self.dtype, dims.to_vec()))?;
        Ok(p)
    }

    /// A value of exactly these dims: an existing one, or a fresh parameter.
    fn value_of(
        &mut self,
        b: &mut ComputationBuilder<'_>,
        dims: &[i64],
    ) -> Result<InstrId, BuildError> {
        let fits: Vec<InstrId> = self
            .values
            .iter()
            .copied()
            .filter(|&v| {
                dims_of(b, v) == dims
                    && b.shape(v).and_then(Shape::as_array).map(|a| a.dtype) == Some(self.dtype)
            })
            .collect();
        match self.rng.pick(&fits) {
            Some(v) if self.rng.below(4) != 0 => Ok(v),
            _ => self.param(b, dims),
        }
    }

    fn step(&mut self, b: &mut ComputationBuilder<'_>, step: Step) -> Result<InstrId, BuildError> {
        let x = self.rng.pick(&self.values).unwrap_or(InstrId(0));
        let dims = dims_of(b, x);
        match step {
            Step::Unary => {
                let op = self.rng.pick(&self.unary).unwrap_or(Opcode::Negate);
                b.unary(op, x)
            }
            Step::Binary => {
                let op = self.rng.pick(&self.binary).unwrap_or(Opcode::Add);
                let y = self.value_of(b, &dims)?;
                b.binary(op, x, y)
            }
            Step::RoundTrip => {
                let narrow = self.rng.pick(ROUND_TRIP).unwrap_or(ElementType::F16);
                let q = b.convert(x, narrow)?;
                b.convert(q, self.dtype)
            }
            Step::ReduceBroadcast => {
                if dims.is_empty() {
                    return b.unary(Opcode::Abs, x);
                }
                let dim = self.rng.below(dims.len()) as i64;
                let (reducer, init) = if self.rng.below(2) == 0 {
                    (self.add, 0.0)
                } else {
                    (self.max, f64::NEG_INFINITY)
                };
                let init = b.constant_f64(self.dtype, &[], &[init])?;
                let r = b.reduce(&[x], &[init], &[dim], reducer)?;
                let kept: Vec<i64> = (0..dims.len() as i64).filter(|&d| d != dim).collect();
                b.broadcast(r, &dims, &kept)
            }
            Step::Transpose => {
                let perm: Vec<i64> = (0..dims.len() as i64).rev().collect();
                b.transpose(x, &perm)
            }
            Step::Dot => {
                if dims.len() != 2 {
                    return b.unary(Opcode::Negate, x);
                }
                let n = 1 + self.rng.below(5) as i64;
                let y = self.value_of(b, &[dims[1], n])?;
                b.dot(
                    x,
                    y,
                    DotDims {
                        lhs_batch: vec![],
                        lhs_contracting: vec![1],
                        rhs_batch: vec![],
                        rhs_contracting: vec![0],
                    },
                    None,
                )
            }
            Step::CompareSelect => {
                let y = self.value_of(b, &dims)?;
                let dir = self
                    .rng
                    .pick(&ComparisonDirection::ALL)
                    .unwrap_or(ComparisonDirection::Lt);
                let p = b.compare(dir, default_comparison_type(self.dtype), x, y)?;
                b.select(p, x, y)
            }
            Step::Reverse => {
                let all: Vec<i64> = (0..dims.len() as i64).collect();
                b.reverse(x, &all)
            }
            Step::Concatenate => {
                if dims.is_empty() {
                    return b.unary(Opcode::Negate, x);
                }
                let y = self.value_of(b, &dims)?;
                b.concatenate(&[x, y], 0)
            }
            Step::Slice => {
                if dims.is_empty() || dims[0] < 2 {
                    return b.unary(Opcode::Abs, x);
                }
                let limits: Vec<i64> = dims
                    .iter()
                    .enumerate()
                    .map(|(k, &d)| if k == 0 { d / 2 + 1 } else { d })
                    .collect();
                b.slice(x, &vec![0; dims.len()], &limits, &vec![1; dims.len()])
            }
        }
    }
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
    let mut rng = Rng(seed);
    let dtype = rng.pick(FUZZ_DTYPES).unwrap_or(ElementType::F32);
    let mut m = ModuleBuilder::new(format!("fuzz_{seed:016x}"));
    let add = m.scalar_reducer(Opcode::Add, dtype)?;
    let max = m.scalar_reducer(Opcode::Maximum, dtype)?;
    let rank = 1 + rng.below(2);
    let dims: Vec<i64> = (0..rank).map(|_| 1 + rng.below(6) as i64).collect();
    let steps = 1 + rng.below(max_ops.max(1));
    m.build("main", |b| {
        let mut g = Grower {
            rng: &mut rng,
            dtype,
            values: Vec::new(),
            unary: elementwise(Category::ElementwiseUnary),
            binary: elementwise(Category::ElementwiseBinary),
            add,
            max,
        };
        let p = g.param(b, &dims)?;
        g.values.push(p);
        let mut last = p;
        for _ in 0..steps {
            // an op that rejects the dtype (bitwise ops on floats) is not added
            for _attempt in 0..8 {
                let step = g.rng.pick(STEPS).unwrap_or(Step::Unary);
                if let Ok(v) = g.step(b, step) {
                    g.values.push(v);
                    last = v;
                    break;
                }
            }
        }
        Ok(last)
    })
}

/// A proptest strategy for random programs (with their seed), so programs
/// compose with other strategies; shrinking works on the seed and the step count.
pub fn program_strategy(max_ops: usize) -> impl Strategy<Value = (u64, Module)> {
    (any::<u64>(), 1..=max_ops.max(1))
        .prop_filter_map("the builder rejected the program", |(seed, ops)| {
            random_program(seed, ops).ok().map(|m| (seed, m))
        })
}
