//! Interval evaluation: an enclosure of every value a backend may legally
//! compute for each instruction, carried through the whole graph.
//!
//! Each array element is a closed range `[lo, hi]` of values of its type
//! (ordered with `-0 < +0`) plus a flag that says NaN is possible. An
//! instruction's range is computed from its operands' ranges with the
//! reference's own kernels, evaluated at the corners of the operand box:
//! every kernel rounds once to nearest even, which is monotone, so for an op
//! that is monotone in each operand (or bilinear) the rounded results at the
//! corners bound the rounded results inside. Ops that are not (sine near an
//! extremum, a divisor range holding zero, a pole of tan) are widened by
//! their own rule or made unbounded; ops with no rule are exact on exact
//! operands and unbounded otherwise. So the enclosure is sound, and tight:
//! an exact op on exact operands encloses just its correctly rounded result.
//!
//! The backend's declared numerics come in as [`Allowances`]: every op with
//! a declared ULP budget widens by it, a flushed type's subnormal range
//! includes zero on input and output, and a reassociated reduction (reduce,
//! reduce-window, dot, convolution) widens by `n * eps * sum|x|`.

use std::collections::HashMap;

use super::{OpError, Run};
use crate::hlo::{
    ArrayShape, CompId, ComparisonDirection, ComparisonType, ElementType, FloatFormat, Instruction,
    Module, Opcode, Shape,
};
use crate::literal::{Literal, Value};

/// What a backend may legally do besides rounding once to nearest even.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Allowances {
    /// `(op, result type) -> (ulp, abs)` budgets of approximate functions.
    pub budgets: HashMap<(Opcode, ElementType), (u64, f64)>,
    /// Types whose subnormal inputs are read as zero (a flushing backend:
    /// the judge encloses with and without, and takes either).
    pub flush_inputs: Vec<ElementType>,
    /// Types whose subnormal results are written as zero (as above).
    pub flush_outputs: Vec<ElementType>,
    /// Reductions, dots and convolutions may sum in any order (and in f32
    /// for narrower types).
    pub reassociates: bool,
    /// Reduce and reduce-window of narrow floats may round every partial sum
    /// to the declared type.
    pub accumulate_in_declared_type: bool,
    /// A float multiply of f32 or narrower may be left unrounded (contracted
    /// into a fused multiply-add with its user).
    pub contracts_multiply_add: bool,
    /// Narrow float (f16, bf16, f8) results may be kept in f32, unrounded:
    /// everywhere, or (`excess_in_fusions`) inside fused computations only.
    pub excess_anywhere: bool,
    /// See `excess_anywhere`.
    pub excess_in_fusions: bool,
}

/// The enclosure of one array: per element, `[lo, hi]` and whether NaN is
/// possible. An element whose `lo` is NaN has an empty range (NaN only).
#[derive(Clone, Debug, PartialEq)]
pub struct Bounds {
    /// Lower ends, in the array's type.
    pub lo: Literal,
    /// Upper ends, in the array's type.
    pub hi: Literal,
    /// NaN is a possible value.
    pub nan: Vec<bool>,
}

/// An enclosure of any value: arrays, tuples, tokens.
#[derive(Clone, Debug, PartialEq)]
#[expect(
    clippy::large_enum_variant,
    reason = "arrays are the common case; tuples hold them by value as `Value` does"
)]
pub enum Enclosure {
    /// An array.
    Array(Bounds),
    /// A tuple.
    Tuple(Vec<Enclosure>),
    /// A token.
    Token,
}

impl Enclosure {
    /// The arrays, tuples flattened.
    pub fn into_flat(self) -> Vec<Bounds> {
        match self {
            Enclosure::Array(b) => vec![b],
            Enclosure::Tuple(t) => t.into_iter().flat_map(Enclosure::into_flat).collect(),
            Enclosure::Token => Vec::new(),
        }
    }
    fn point(v: &Value) -> Enclosure {
        match v {
            Value::Array(l) => Enclosure::Array(Bounds::point(l)),
            Value::Tuple(t) => Enclosure::Tuple(t.iter().map(Enclosure::point).collect()),
            Value::Token => Enclosure::Token,
        }
    }
    fn unbounded(shape: &Shape) -> Result<Enclosure, OpError> {
        Ok(match shape {
            Shape::Array(a) => Enclosure::Array(Bounds::unbounded(a)?),
            Shape::Tuple(t) => Enclosure::Tuple(
                t.iter()
                    .map(Enclosure::unbounded)
                    .collect::<Result<_, _>>()?,
            ),
            Shape::Token => Enclosure::Token,
        })
    }
    fn is_point(&self) -> bool {
        match self {
            Enclosure::Array(b) => b.is_point(),
            Enclosure::Tuple(t) => t.iter().all(Enclosure::is_point),
            Enclosure::Token => true,
        }
    }
    /// The value at the lower (`hi == false`) or upper ends.
    fn end(&self, hi: bool) -> Value {
        match self {
            Enclosure::Array(b) => Value::Array(if hi { b.hi.clone() } else { b.lo.clone() }),
            Enclosure::Tuple(t) => Value::Tuple(t.iter().map(|e| e.end(hi)).collect()),
            Enclosure::Token => Value::Token,
        }
    }
    fn hull(&self, other: &Enclosure) -> Option<Enclosure> {
        match (self, other) {
            (Enclosure::Array(a), Enclosure::Array(b)) => Some(Enclosure::Array(a.hull(b)?)),
            (Enclosure::Tuple(a), Enclosure::Tuple(b)) if a.len() == b.len() => {
                Some(Enclosure::Tuple(
                    a.iter()
                        .zip(b)
                        .map(|(x, y)| x.hull(y))
                        .collect::<Option<_>>()?,
                ))
            }
            (Enclosure::Token, Enclosure::Token) => Some(Enclosure::Token),
            _ => None,
        }
    }
}

/// The order key of an element: floats by value with `-0 < +0` (NaN has
/// none), integers by value, pred as 0/1.
fn key(l: &Literal, i: usize) -> Option<i128> {
    let t = l.dtype();
    match t.float_format() {
        Some(fmt) => float_key(l.get_bits(i), &fmt),
        None if t.is_pred() => Some(i128::from(l.get_bits(i) & 1)),
        None => Some(l.get_i128(i)),
    }
}

fn float_key(bits: u64, fmt: &FloatFormat) -> Option<i128> {
    let w = fmt.bit_width();
    let sign = 1u64 << (w - 1);
    let mag = bits & (sign - 1);
    let exp_all = ((1u64 << fmt.exponent_bits) - 1) << fmt.mantissa_bits;
    let man = mag & ((1u64 << fmt.mantissa_bits) - 1);
    let is_nan = if fmt.has_inf {
        mag & exp_all == exp_all && man != 0
    } else {
        // f8e4m3fn: only the all-ones pattern is NaN
        mag == sign - 1
    };
    if is_nan {
        return None;
    }
    Some(if bits & sign != 0 {
        -(mag as i128) - 1
    } else {
        mag as i128
    })
}

fn float_from_key(k: i128, fmt: &FloatFormat) -> u64 {
    let sign = 1u64 << (fmt.bit_width() - 1);
    if k < 0 {
        sign | ((-(k + 1)) as u64)
    } else {
        k as u64
    }
}

/// The largest key of a float type (its infinity, or its largest finite
/// value when it has none).
fn float_max_key(fmt: &FloatFormat) -> i128 {
    let exp_all = ((1u64 << fmt.exponent_bits) - 1) << fmt.mantissa_bits;
    if fmt.has_inf {
        exp_all as i128
    } else {
        let sign = 1u64 << (fmt.bit_width() - 1);
        (sign - 2) as i128
    }
}

fn int_range(t: ElementType) -> (i128, i128) {
    let w = t.bit_width();
    if t.is_pred() {
        (0, 1)
    } else if t.is_signed_int() {
        (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
    } else {
        (0, (1i128 << w) - 1)
    }
}

impl Bounds {
    /// The enclosure of exactly `l`.
    pub fn point(l: &Literal) -> Bounds {
        let nan = (0..l.element_count())
            .map(|i| key(l, i).is_none())
            .collect();
        Bounds {
            lo: l.clone(),
            hi: l.clone(),
            nan,
        }
    }

    fn unbounded(a: &ArrayShape) -> Result<Bounds, OpError> {
        let mut lo = Literal::zeros(a)?;
        let mut hi = lo.clone();
        let n = lo.element_count();
        match a.dtype.float_format() {
            Some(fmt) => {
                let top = float_max_key(&fmt);
                for i in 0..n {
                    lo.set_bits(i, float_from_key(-top - 1, &fmt));
                    hi.set_bits(i, float_from_key(top, &fmt));
                }
            }
            None => {
                let (min, max) = int_range(a.dtype);
                for i in 0..n {
                    lo.set_i128(i, min);
                    hi.set_i128(i, max);
                }
            }
        }
        Ok(Bounds {
            lo,
            hi,
            nan: vec![a.dtype.is_float(); n],
        })
    }

    /// Elements.
    pub fn len(&self) -> usize {
        self.nan.len()
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.nan.is_empty()
    }

    fn is_point(&self) -> bool {
        (0..self.len()).all(|i| match (key(&self.lo, i), key(&self.hi, i)) {
            (Some(a), Some(b)) => a == b && !self.nan[i],
            (None, None) => true,
            _ => false,
        })
    }

    /// The range of element `i`, None when it is NaN only.
    fn range(&self, i: usize) -> Option<(i128, i128)> {
        Some((key(&self.lo, i)?, key(&self.hi, i)?))
    }

    /// Whether element `i` is bounded: both ends finite (or the one value
    /// it may be is infinite), so that its range says something. An
    /// unbounded element legalizes nothing.
    pub fn is_bounded(&self, i: usize) -> bool {
        let (lo, hi) = (self.lo.get_f64(i), self.hi.get_f64(i));
        if !self.lo.dtype().is_float() {
            return true;
        }
        (lo.is_finite() && hi.is_finite()) || self.lo.get_bits(i) == self.hi.get_bits(i)
    }

    /// Whether element `i` may be the value with bit pattern `bits`.
    pub fn contains(&self, i: usize, bits: u64) -> bool {
        let t = self.lo.dtype();
        let k = match t.float_format() {
            Some(fmt) => float_key(bits, &fmt),
            None if t.is_pred() => Some(i128::from(bits & 1)),
            None => {
                let mut one = Literal::zeros(&ArrayShape::new(t, Vec::<i64>::new()))
                    .expect("a scalar of an array's type");
                one.set_bits(0, bits);
                Some(one.get_i128(0))
            }
        };
        match k {
            None => self.nan.get(i).copied().unwrap_or(false),
            Some(k) => self.range(i).is_some_and(|(a, b)| a <= k && k <= b),
        }
    }

    fn set(&mut self, i: usize, range: Option<(i128, i128)>, nan: bool) {
        let t = self.lo.dtype();
        match (range, t.float_format()) {
            (Some((a, b)), Some(fmt)) => {
                self.lo.set_bits(i, float_from_key(a, &fmt));
                self.hi.set_bits(i, float_from_key(b, &fmt));
            }
            (Some((a, b)), None) => {
                self.lo.set_i128(i, a);
                self.hi.set_i128(i, b);
            }
            (None, Some(fmt)) => {
                let q = float_from_key(float_max_key(&fmt), &fmt) | 1;
                let nan_bits = if fmt.has_inf {
                    q | (1u64 << (fmt.mantissa_bits - 1))
                } else {
                    (1u64 << (fmt.bit_width() - 1)) - 1
                };
                self.lo.set_bits(i, nan_bits);
                self.hi.set_bits(i, nan_bits);
            }
            (None, None) => {}
        }
        self.nan[i] = nan || (range.is_none() && t.is_float());
    }

    fn hull(&self, other: &Bounds) -> Option<Bounds> {
        if self.lo.dtype() != other.lo.dtype() || self.len() != other.len() {
            return None;
        }
        let mut out = self.clone();
        for i in 0..self.len() {
            let r = match (self.range(i), other.range(i)) {
                (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
                (x, None) => x,
                (None, y) => y,
            };
            out.set(i, r, self.nan[i] || other.nan[i]);
        }
        Some(out)
    }

    /// Makes element `i` unbounded.
    fn unbound(&mut self, i: usize) {
        let t = self.lo.dtype();
        let range = match t.float_format() {
            Some(fmt) => {
                let top = float_max_key(&fmt);
                (-top - 1, top)
            }
            None => int_range(t),
        };
        self.set(i, Some(range), t.is_float());
    }
}

/// The enclosure of every entry output of `module` on `args` (tuples
/// flattened), under `allowances`.
///
/// ```
/// use xla_props::hlo::{parse_module, ArrayShape, ElementType};
/// use xla_props::literal::Literal;
/// use xla_props::reference::{enclose, Allowances};
/// let m = parse_module("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  y = f32[2] parameter(1)\n  ROOT s = f32[2] add(x, y)\n}\n").unwrap();
/// let s = ArrayShape::new(ElementType::F32, vec![2]);
/// let x = Literal::from_f64s(&s, &[1.0, 0.1]).unwrap();
/// let y = Literal::from_f64s(&s, &[2.0, 0.2]).unwrap();
/// let b = enclose(&m, &[x, y], &Allowances::default()).unwrap();
/// // exact ops on exact inputs: the correctly rounded result only
/// assert_eq!(b[0].lo.to_bits_vec(), b[0].hi.to_bits_vec());
/// assert_eq!(b[0].lo.get_f64(0), 3.0);
/// ```
pub fn enclose(
    module: &Module,
    args: &[Literal],
    allowances: &Allowances,
) -> Result<Vec<Bounds>, super::EvalError> {
    let expanded = crate::hlo::expand_known_custom_calls(module);
    let module = expanded.as_ref().unwrap_or(module);
    // complex values have no enclosures (an interval per element is real)
    let complex = module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .any(|i| i.shape.leaves().iter().any(|a| a.dtype.is_complex()));
    if complex {
        return Err(super::EvalError::Unsupported {
            opcode: crate::hlo::Opcode::Complex,
            reason: "no enclosures of complex values".into(),
        });
    }
    let entry = module.entry_computation();
    let params = entry.parameters();
    let mut next = args.iter();
    let mut values = Vec::new();
    for &p in &params {
        let shape = &entry.instr(p).shape;
        values.push(param_enclosure(shape, &mut next).ok_or_else(|| {
            super::EvalError::BadArguments(format!(
                "{} arguments do not fit the entry parameters",
                args.len()
            ))
        })?);
    }
    let mut cx = Interval {
        run: Run::new(module),
        module,
        allow: allowances,
        depth: 0,
        fused: 0,
        feeds_add: false,
        debug: std::env::var_os("XLA_PROPS_DEBUG_ENCLOSE").is_some(),
    };
    let root = cx
        .computation(module.entry, values)
        .map_err(|e| e.at_name(&entry.name))?;
    Ok(root.into_flat())
}

fn param_enclosure<'l>(
    shape: &Shape,
    next: &mut impl Iterator<Item = &'l Literal>,
) -> Option<Enclosure> {
    match shape {
        Shape::Array(_) => next.next().map(|l| Enclosure::Array(Bounds::point(l))),
        Shape::Tuple(t) => t
            .iter()
            .map(|s| param_enclosure(s, next))
            .collect::<Option<Vec<_>>>()
            .map(Enclosure::Tuple),
        Shape::Token => Some(Enclosure::Token),
    }
}

struct Interval<'a, 'r> {
    run: Run<'a, 'r>,
    module: &'a Module,
    allow: &'a Allowances,
    depth: usize,
    /// How many fusions the evaluation is inside.
    fused: usize,
    /// The instruction being evaluated is an operand of an add or subtract.
    feeds_add: bool,
    /// `XLA_PROPS_DEBUG_ENCLOSE` is set: print every instruction's widest
    /// relative range (a diagnostic for where an enclosure grows).
    debug: bool,
}

/// How an elementwise op's range follows from its operands' ranges.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// Monotone in each operand (or bilinear): the corners bound it.
    Corners,
    /// Exact on exact operands, unbounded otherwise.
    ExactOnly,
}

impl Interval<'_, '_> {
    fn computation(&mut self, id: CompId, args: Vec<Enclosure>) -> Result<Enclosure, OpError> {
        if self.depth >= 64 {
            return Err(OpError::Invalid("calls nest too deep".into()));
        }
        let module = self.module;
        let comp = module
            .computations
            .get(id.index())
            .ok_or_else(|| OpError::Invalid(format!("computation #{} does not exist", id.0)))?;
        let order = comp
            .post_order()
            .ok_or_else(|| OpError::Invalid("a cycle or a dangling operand".into()))?;
        let mut args: Vec<Option<Enclosure>> = args.into_iter().map(Some).collect();
        let mut values: Vec<Option<Enclosure>> = vec![None; comp.instructions.len()];
        // multiplies an add or subtract uses (or a fusion, into which a
        // compiler fuses its producer): what a contraction may fuse
        let mut feeds_add = vec![false; comp.instructions.len()];
        for i in &comp.instructions {
            if matches!(i.opcode, Opcode::Add | Opcode::Subtract | Opcode::Fusion) {
                for o in &i.operands {
                    if let Some(f) = feeds_add.get_mut(o.index()) {
                        *f = true;
                    }
                }
            }
        }
        self.depth += 1;
        for id in order {
            let ins = comp.instr(id);
            self.feeds_add = feeds_add[id.index()];
            let v = if ins.opcode == Opcode::Parameter {
                let n = ins.attrs.parameter_number.unwrap_or(-1);
                usize::try_from(n)
                    .ok()
                    .and_then(|k| args.get_mut(k))
                    .and_then(Option::take)
                    .ok_or_else(|| OpError::Invalid(format!("parameter {n} has no argument")))?
            } else {
                let ops: Vec<&Enclosure> = ins
                    .operands
                    .iter()
                    .map(|o| values.get(o.index()).and_then(Option::as_ref))
                    .collect::<Option<_>>()
                    .ok_or_else(|| OpError::Invalid("an operand has no value".into()))?;
                self.instruction(ins, &ops)?
            };
            if self.debug {
                if let Enclosure::Array(b) = &v {
                    let w = (0..b.len())
                        .map(|i| {
                            let (l, h) = (b.lo.get_f64(i), b.hi.get_f64(i));
                            (h - l) / (l.abs().max(h.abs()).max(1e-30))
                        })
                        .fold(0.0f64, f64::max);
                    eprintln!(
                        "{:>3} {:<40} {:<12} {w:.3e}",
                        self.depth, ins.name, ins.opcode
                    );
                }
            }
            values[id.index()] = Some(v);
        }
        self.depth -= 1;
        values
            .get_mut(comp.root.index())
            .and_then(Option::take)
            .ok_or_else(|| OpError::Invalid("root has no value".into()))
    }

    /// The enclosure of one instruction: its op's range, then the backend's
    /// allowances (budget, flushed output).
    fn instruction(&mut self, ins: &Instruction, ops: &[&Enclosure]) -> Result<Enclosure, OpError> {
        // flushed inputs: a subnormal operand may be read as zero
        let flushed: Vec<Enclosure> = ops.iter().map(|o| self.flush_in(o)).collect();
        let ops: Vec<&Enclosure> = flushed.iter().collect();
        let mut v = self.op(ins, &ops)?;
        if let Enclosure::Array(b) = &mut v {
            let t = b.lo.dtype();
            if let Some(fmt) = t.float_format() {
                if let Some(&(ulp, abs)) = self.allow.budgets.get(&(ins.opcode, t)) {
                    widen_budget(b, &fmt, ulp, abs);
                }
                // an unrounded value lies between the two neighbours of its
                // rounding: one ULP either side holds it
                let unrounded_product = self.allow.contracts_multiply_add
                    && ins.opcode == Opcode::Multiply
                    && self.feeds_add
                    && t.bit_width() <= 32;
                let narrow = t.bit_width() < 32;
                let unrounded_narrow = narrow
                    && (self.allow.excess_anywhere
                        || (self.allow.excess_in_fusions && self.fused > 0));
                if unrounded_product || unrounded_narrow {
                    widen_budget(b, &fmt, 1, 0.0);
                }
                if self.allow.flush_outputs.contains(&t) {
                    flush_ends(b, &fmt);
                }
            }
        }
        Ok(v)
    }

    fn flush_in(&self, e: &Enclosure) -> Enclosure {
        match e {
            Enclosure::Array(b) => {
                let t = b.lo.dtype();
                match t.float_format() {
                    Some(fmt) if self.allow.flush_inputs.contains(&t) => {
                        let mut b = b.clone();
                        flush_ends(&mut b, &fmt);
                        Enclosure::Array(b)
                    }
                    _ => e.clone(),
                }
            }
            Enclosure::Tuple(t) => Enclosure::Tuple(t.iter().map(|x| self.flush_in(x)).collect()),
            Enclosure::Token => Enclosure::Token,
        }
    }

    /// Runs the reference's kernel for `ins` on operand values.
    fn kernel(&mut self, ins: &Instruction, ops: &[Value]) -> Result<Value, OpError> {
        let refs: Vec<&Value> = ops.iter().collect();
        self.run.step_op(ins, &refs)
    }

    /// The point value when every operand is exact.
    fn exact(&mut self, ins: &Instruction, ops: &[&Enclosure]) -> Result<Enclosure, OpError> {
        if ops.iter().all(|o| o.is_point()) {
            let vals: Vec<Value> = ops.iter().map(|o| o.end(false)).collect();
            match self.kernel(ins, &vals) {
                Ok(v) => return Ok(Enclosure::point(&v)),
                Err(OpError::Unsupported(m)) => return Err(OpError::Unsupported(m)),
                Err(_) => {}
            }
        }
        Enclosure::unbounded(&ins.shape)
    }

    fn op(&mut self, ins: &Instruction, ops: &[&Enclosure]) -> Result<Enclosure, OpError> {
        use Opcode as O;
        let shape = ins.shape.clone();
        let out_dtype = shape.as_array().map(|a| a.dtype);
        let float_out = out_dtype.is_some_and(|t| t.is_float());
        let arrays = || arrays_of(ops);
        match ins.opcode {
            O::Constant | O::Iota => self.exact(ins, ops),
            O::Tuple => Ok(Enclosure::Tuple(ops.iter().map(|o| (*o).clone()).collect())),
            O::GetTupleElement => match (ops.first(), ins.attrs.index) {
                (Some(Enclosure::Tuple(t)), Some(k)) => usize::try_from(k)
                    .ok()
                    .and_then(|k| t.get(k))
                    .cloned()
                    .ok_or_else(|| OpError::Invalid("tuple index out of range".into())),
                _ => Err(OpError::Invalid("get-tuple-element of a non-tuple".into())),
            },
            O::Copy
            | O::Broadcast
            | O::Reshape
            | O::Transpose
            | O::Slice
            | O::Reverse
            | O::Concatenate
            | O::Pad
            | O::Bitcast
                if arrays().is_some_and(|a| a.iter().all(|b| Some(b.lo.dtype()) == out_dtype)) =>
            {
                self.moved_indexed(ins, ops, usize::MAX)
            }
            O::DynamicSlice | O::Gather => self.moved_indexed(ins, ops, 1),
            O::DynamicUpdateSlice => self.moved_indexed(ins, ops, 2),
            O::Fusion | O::Call => {
                let comp = if ins.opcode == O::Fusion {
                    ins.attrs.calls.first().copied()
                } else {
                    ins.attrs
                        .to_apply
                        .or_else(|| ins.attrs.calls.first().copied())
                };
                let comp = comp.ok_or_else(|| OpError::Invalid("no called computation".into()))?;
                let fusion = usize::from(ins.opcode == O::Fusion);
                self.fused += fusion;
                let v = self.computation(comp, ops.iter().map(|o| (*o).clone()).collect());
                self.fused -= fusion;
                v
            }
            O::While => self.while_loop(ins, ops),
            O::Conditional => self.conditional(ins, ops),
            O::Select => match arrays() {
                Some(a) if a.len() == 3 => self.select(a[0], a[1], a[2]).map(Enclosure::Array),
                _ => self.exact(ins, ops),
            },
            O::Compare => match arrays() {
                Some(a) if a.len() == 2 => compare(ins, a[0], a[1]).map(Enclosure::Array),
                _ => self.exact(ins, ops),
            },
            O::Multiply
                if float_out && ins.operands.len() == 2 && ins.operands[0] == ins.operands[1] =>
            {
                // a square is never negative: the corners of x * x for a
                // range holding zero would say so
                let mut v = self.corners(ins, ops, Rule::Corners)?;
                if let (Enclosure::Array(b), Some(Enclosure::Array(x))) = (&mut v, ops.first()) {
                    for i in 0..b.len() {
                        if let (Some((lo, hi)), Some((a, c))) = (b.range(i), x.range(i)) {
                            if a <= 0 && c >= -1 && lo < 0 {
                                b.set(i, Some((0, hi)), b.nan[i]);
                            }
                        }
                    }
                }
                Ok(v)
            }
            O::Add | O::Subtract | O::Multiply | O::Maximum | O::Minimum | O::Clamp
                if float_out =>
            {
                self.corners(ins, ops, Rule::Corners)
            }
            O::And | O::Or if out_dtype == Some(ElementType::Pred) => {
                self.corners(ins, ops, Rule::Corners)
            }
            O::Not if out_dtype.is_some_and(|t| t.is_integer() || t.is_pred()) => {
                self.corners(ins, ops, Rule::Corners)
            }
            O::Maximum | O::Minimum | O::Clamp => self.corners(ins, ops, Rule::Corners),
            O::Divide if float_out => {
                let zero_inside = arrays()
                    .and_then(|a| a.get(1).copied())
                    .is_some_and(straddles_zero);
                if zero_inside {
                    self.corners(ins, ops, Rule::ExactOnly)
                } else {
                    self.corners(ins, ops, Rule::Corners)
                }
            }
            O::Power | O::Atan2 if float_out => {
                // corners bound pow(x, y) for x > 0 and atan2(y, x) for x > 0
                let k = if ins.opcode == O::Power { 0 } else { 1 };
                let positive = arrays()
                    .and_then(|a| a.get(k).copied())
                    .is_some_and(strictly_positive);
                let rule = if positive {
                    Rule::Corners
                } else {
                    Rule::ExactOnly
                };
                self.corners(ins, ops, rule)
            }
            O::Ceil
            | O::Floor
            | O::RoundNearestAfz
            | O::RoundNearestEven
            | O::Exponential
            | O::ExponentialMinusOne
            | O::Log
            | O::LogPlusOne
            | O::Logistic
            | O::Tanh
            | O::Sqrt
            | O::Cbrt
            | O::Erf
            | O::Sign
            | O::Negate
            | O::ReducePrecision
                if float_out =>
            {
                self.corners(ins, ops, Rule::Corners)
            }
            // integer sign is monotone; integer negate and abs wrap at the minimum
            O::Sign => self.corners(ins, ops, Rule::Corners),
            O::Rsqrt if float_out => {
                let zero_inside = arrays()
                    .and_then(|a| a.first().copied())
                    .is_some_and(straddles_zero);
                let rule = if zero_inside {
                    Rule::ExactOnly
                } else {
                    Rule::Corners
                };
                self.corners(ins, ops, rule)
            }
            O::Abs if float_out => {
                let mut v = self.corners(ins, ops, Rule::Corners)?;
                let x = arrays().and_then(|a| a.first().copied()).cloned();
                if let (Enclosure::Array(b), Some(x)) = (&mut v, x) {
                    for i in 0..b.len() {
                        let (Some((lo, hi)), Some((a, c))) = (b.range(i), x.range(i)) else {
                            continue;
                        };
                        // a range holding zero (keys -1 and 0 are -0 and +0)
                        let holds_zero = a <= 0 && c >= -1;
                        if holds_zero && a != c {
                            b.set(i, Some((lo.min(0), hi)), b.nan[i]);
                        }
                    }
                }
                Ok(v)
            }
            O::Sine | O::Cosine | O::Tan if float_out => self.trig(ins, ops),
            O::Convert => {
                if out_dtype == Some(ElementType::Pred) {
                    self.corners(ins, ops, Rule::ExactOnly)
                } else {
                    self.corners(ins, ops, Rule::Corners)
                }
            }
            O::Reduce | O::ReduceWindow => self.reduce(ins, ops),
            O::Dot | O::Convolution if float_out => self.contraction(ins, ops),
            _ => self.exact(ins, ops),
        }
    }

    /// An elementwise op at the corners of its operand box.
    fn corners(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
        rule: Rule,
    ) -> Result<Enclosure, OpError> {
        let Some(arrays) = arrays_of(ops) else {
            return self.exact(ins, ops);
        };
        if arrays.iter().all(|b| b.is_point()) || rule == Rule::ExactOnly {
            return self.exact(ins, ops);
        }
        let k = arrays.len();
        if k > 3 {
            return self.exact(ins, ops);
        }
        let Some(out) = ins.shape.as_array() else {
            return self.exact(ins, ops);
        };
        let mut result = Bounds::point(&Literal::zeros(out)?);
        let n = result.len();
        let mut ranges: Vec<Option<(i128, i128)>> = vec![None; n];
        let mut nan_only = vec![true; n];
        let mut mixed = vec![false; n];
        let mut some_nan = vec![false; n];
        // every corner: bit j of c picks operand j's upper end
        for c in 0..(1usize << k) {
            let vals: Vec<Value> = arrays
                .iter()
                .enumerate()
                .map(|(j, b)| {
                    Value::Array(if c >> j & 1 == 1 {
                        b.hi.clone()
                    } else {
                        b.lo.clone()
                    })
                })
                .collect();
            let v = match self.kernel(ins, &vals) {
                Ok(Value::Array(l)) if l.element_count() == n => l,
                _ => return self.exact(ins, ops),
            };
            for (i, r) in ranges.iter_mut().enumerate() {
                match key(&v, i) {
                    Some(x) => {
                        nan_only[i] = false;
                        *r = Some(r.map_or((x, x), |(a, b)| (a.min(x), b.max(x))));
                    }
                    None => some_nan[i] = true,
                }
            }
        }
        for i in 0..n {
            mixed[i] = some_nan[i] && !nan_only[i];
        }
        // a NaN an operand may be: the op on it, for each operand in turn
        let mut extra_nan = vec![false; n];
        for (j, b) in arrays.iter().enumerate() {
            if !b
                .nan
                .iter()
                .zip(0..)
                .any(|(&f, i)| f && key(&b.lo, i).is_some())
            {
                continue;
            }
            let mut with_nan = b.lo.clone();
            let nan_bits = Bounds::nan_bits(b.lo.dtype());
            for i in 0..b.len() {
                if b.nan[i] {
                    with_nan.set_bits(i, nan_bits);
                }
            }
            let vals: Vec<Value> = arrays
                .iter()
                .enumerate()
                .map(|(m, x)| {
                    Value::Array(if m == j {
                        with_nan.clone()
                    } else {
                        x.lo.clone()
                    })
                })
                .collect();
            let v = match self.kernel(ins, &vals) {
                Ok(Value::Array(l)) if l.element_count() == n => l,
                _ => return self.exact(ins, ops),
            };
            for i in 0..n {
                if !b.nan.get(i).copied().unwrap_or(false) && b.len() == n {
                    continue;
                }
                match key(&v, i) {
                    None => extra_nan[i] = true,
                    Some(_) => mixed[i] = true,
                }
            }
        }
        for i in 0..n {
            if mixed[i] {
                result.unbound(i);
            } else {
                result.set(i, ranges[i], some_nan[i] || extra_nan[i]);
            }
        }
        Ok(Enclosure::Array(result))
    }

    fn trig(&mut self, ins: &Instruction, ops: &[&Enclosure]) -> Result<Enclosure, OpError> {
        let Some(Enclosure::Array(x)) = ops.first() else {
            return self.exact(ins, ops);
        };
        let x = (*x).clone();
        let mut v = self.corners(ins, ops, Rule::Corners)?;
        let Enclosure::Array(b) = &mut v else {
            return Ok(v);
        };
        let t = b.lo.dtype();
        let Some(fmt) = t.float_format() else {
            return Ok(v);
        };
        let one = round_key(1.0, &fmt);
        let minus_one = round_key(-1.0, &fmt);
        let pi = std::f64::consts::PI;
        for i in 0..b.len() {
            let (Some((lo, hi)), Some(_)) = (x.range(i), b.range(i)) else {
                continue;
            };
            if lo == hi {
                continue;
            }
            let (a, c) = (x.lo.get_f64(i), x.hi.get_f64(i));
            if !a.is_finite() || !c.is_finite() || c - a >= 2.0 * pi || a.abs().max(c.abs()) > 1e15
            {
                if ins.opcode == Opcode::Tan {
                    b.unbound(i);
                } else {
                    b.set(i, Some((minus_one, one)), true);
                }
                continue;
            }
            // critical points: extrema of sin at pi/2 + k*pi, of cos at k*pi;
            // poles of tan at pi/2 + k*pi (margins keep it conservative)
            let offset = if ins.opcode == Opcode::Cosine {
                0.0
            } else {
                pi / 2.0
            };
            let margin = 1e-12 * (1.0 + a.abs().max(c.abs()));
            let k0 = ((a - margin - offset) / pi).ceil();
            let k1 = ((c + margin - offset) / pi).floor();
            if k0 > k1 {
                continue;
            }
            if ins.opcode == Opcode::Tan {
                b.unbound(i);
                continue;
            }
            let (mut rl, mut rh) = b.range(i).unwrap_or((minus_one, one));
            let mut k = k0;
            while k <= k1 && k <= k0 + 2.0 {
                let even = (k.rem_euclid(2.0)) == 0.0;
                if even {
                    rh = rh.max(one);
                } else {
                    rl = rl.min(minus_one);
                }
                k += 1.0;
            }
            b.set(i, Some((rl, rh)), b.nan[i]);
        }
        Ok(v)
    }

    /// Data movement: every output element comes from one operand element
    /// (or from nowhere); the op evaluated on flat indices says which. Index
    /// operands (gather, dynamic slices: from `first_index` on) must be exact.
    fn moved_indexed(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
        first_index: usize,
    ) -> Result<Enclosure, OpError> {
        let Some(arrays) = arrays_of(ops) else {
            return self.exact(ins, ops);
        };
        if arrays.iter().skip(first_index).any(|b| !b.is_point()) {
            return self.exact(ins, ops);
        }
        let Some(out) = ins.shape.as_array() else {
            return self.exact(ins, ops);
        };
        let mut offsets = Vec::new();
        let mut total = 1i128;
        let mut vals = Vec::new();
        for (j, b) in arrays.iter().enumerate() {
            if j >= first_index {
                vals.push(Value::Array(b.lo.clone()));
                continue;
            }
            offsets.push(total);
            let s = ArrayShape {
                dtype: ElementType::S64,
                dims: b.lo.dims().iter().map(|&d| d as i64).collect(),
                layout: b.lo.layout().cloned(),
            };
            let mut l = Literal::zeros(&s)?;
            for i in 0..l.element_count() {
                l.set_i128(i, total + i as i128);
            }
            total += l.element_count() as i128;
            vals.push(Value::Array(l));
        }
        let mut idx_ins = ins.clone();
        idx_ins.shape = Shape::Array(ArrayShape {
            dtype: ElementType::S64,
            dims: out.dims.clone(),
            layout: out.layout.clone(),
        });
        let map = match self.kernel(&idx_ins, &vals) {
            Ok(Value::Array(l)) => l,
            _ => return self.exact(ins, ops),
        };
        let mut result = Bounds::point(&Literal::zeros(out)?);
        for o in 0..map.element_count() {
            let src = map.get_i128(o);
            let Some(j) = offsets.iter().rposition(|&off| off <= src) else {
                result.unbound(o);
                continue;
            };
            let i = (src - offsets[j]) as usize;
            let b = arrays[j];
            if i >= b.len() || b.lo.dtype() != out.dtype {
                result.unbound(o);
                continue;
            }
            result.lo.set_bits(o, b.lo.get_bits(i));
            result.hi.set_bits(o, b.hi.get_bits(i));
            result.nan[o] = b.nan[i];
        }
        Ok(Enclosure::Array(result))
    }

    fn select(&mut self, p: &Bounds, t: &Bounds, f: &Bounds) -> Result<Bounds, OpError> {
        if t.len() != f.len() || t.lo.dtype() != f.lo.dtype() {
            return Err(OpError::Invalid("select branches differ".into()));
        }
        let mut out = t.clone();
        let scalar = p.len() == 1;
        for i in 0..t.len() {
            let k = if scalar { 0 } else { i };
            let (lo, hi) = p.range(k).unwrap_or((0, 1));
            let r = match (lo, hi) {
                (1, 1) => (t.range(i), t.nan[i]),
                (0, 0) => (f.range(i), f.nan[i]),
                _ => {
                    let r = match (t.range(i), f.range(i)) {
                        (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
                        (x, None) => x,
                        (None, y) => y,
                    };
                    (r, t.nan[i] || f.nan[i])
                }
            };
            out.set(i, r.0, r.1);
        }
        Ok(out)
    }

    fn while_loop(&mut self, ins: &Instruction, ops: &[&Enclosure]) -> Result<Enclosure, OpError> {
        let (Some(cond), Some(body), Some(init)) =
            (ins.attrs.condition, ins.attrs.body, ops.first())
        else {
            return self.exact(ins, ops);
        };
        let mut state = (*init).clone();
        for _ in 0..super::DEFAULT_FUEL {
            let c = self.computation(cond, vec![state.clone()])?;
            match c {
                Enclosure::Array(b) if b.len() == 1 => match b.range(0) {
                    Some((1, 1)) => {}
                    Some((0, 0)) => return Ok(state),
                    _ => return Enclosure::unbounded(&ins.shape),
                },
                _ => return Enclosure::unbounded(&ins.shape),
            }
            state = self.computation(body, vec![state])?;
        }
        Enclosure::unbounded(&ins.shape)
    }

    fn conditional(&mut self, ins: &Instruction, ops: &[&Enclosure]) -> Result<Enclosure, OpError> {
        let branches = &ins.attrs.branch_computations;
        let Some(Enclosure::Array(sel)) = ops.first() else {
            return self.exact(ins, ops);
        };
        let Some((lo, hi)) = sel.range(0) else {
            return Enclosure::unbounded(&ins.shape);
        };
        let pred = sel.lo.dtype().is_pred();
        let n = branches.len() as i128;
        // a pred picks the true branch (index 0) when true; an index out of range runs the last
        let pick = |k: i128| -> usize {
            if pred {
                if k == 1 {
                    0
                } else {
                    1
                }
            } else if k < 0 || k >= n {
                (n - 1).max(0) as usize
            } else {
                k as usize
            }
        };
        let mut taken: Vec<usize> = Vec::new();
        if hi - lo > n + 1 {
            taken = (0..branches.len()).collect();
        } else {
            for k in lo..=hi {
                let b = pick(k);
                if !taken.contains(&b) {
                    taken.push(b);
                }
            }
        }
        let mut acc: Option<Enclosure> = None;
        for b in taken {
            let (Some(&comp), Some(arg)) = (branches.get(b), ops.get(b + 1)) else {
                return Enclosure::unbounded(&ins.shape);
            };
            let v = self.computation(comp, vec![(*arg).clone()])?;
            acc = Some(match acc {
                None => v,
                Some(a) => match a.hull(&v) {
                    Some(h) => h,
                    None => return Enclosure::unbounded(&ins.shape),
                },
            });
        }
        match acc {
            Some(a) => Ok(a),
            None => Enclosure::unbounded(&ins.shape),
        }
    }

    /// reduce and reduce-window of one array with a plain add, multiply (of
    /// non-negative terms), max, min, and or or reducer: monotone in every
    /// term; the add reducer widens by the reassociation bound.
    fn reduce(&mut self, ins: &Instruction, ops: &[&Enclosure]) -> Result<Enclosure, OpError> {
        let (Some(Enclosure::Array(x)), Some(Enclosure::Array(init)), 2) =
            (ops.first(), ops.get(1), ops.len())
        else {
            return self.exact(ins, ops);
        };
        if x.is_point() && init.is_point() && !self.allow.reassociates {
            return self.exact(ins, ops);
        }
        let Some(reducer) = ins
            .attrs
            .to_apply
            .and_then(|c| self.module.computations.get(c.index()))
        else {
            return self.exact(ins, ops);
        };
        let root = reducer.instr(reducer.root);
        let plain = root.operands.len() == 2
            && root
                .operands
                .iter()
                .all(|o| reducer.instr(*o).opcode == Opcode::Parameter);
        let combine = if plain { root.opcode } else { Opcode::Tuple };
        let nonneg = |b: &Bounds| (0..b.len()).all(|i| b.range(i).is_some_and(|(a, _)| a >= 0));
        let monotone = match combine {
            Opcode::Add | Opcode::Maximum | Opcode::Minimum | Opcode::And | Opcode::Or => true,
            Opcode::Multiply => nonneg(x) && nonneg(init),
            _ => false,
        };
        if !monotone {
            return self.exact(ins, ops);
        }
        let mut v = self.corners(ins, ops, Rule::Corners)?;
        if x.is_point() && init.is_point() {
            v = self.exact(ins, ops)?;
        }
        if combine != Opcode::Add || !self.allow.reassociates {
            return Ok(v);
        }
        let Enclosure::Array(b) = &mut v else {
            return Ok(v);
        };
        let t = b.lo.dtype();
        let Some(fmt) = t.float_format() else {
            return Ok(v);
        };
        // sum |x| per output element, from the same reduction of the magnitudes
        let mag = |l: &Bounds| -> Result<Literal, OpError> {
            let mut m = l.hi.clone();
            for i in 0..l.len() {
                let a = l.lo.get_f64(i).abs();
                let c = l.hi.get_f64(i).abs();
                let v = if a.is_nan() || c.is_nan() {
                    0.0
                } else {
                    a.max(c)
                };
                m.set_f64(i, v);
            }
            Ok(m)
        };
        let sums = match self.kernel(ins, &[Value::Array(mag(x)?), Value::Array(mag(init)?)]) {
            Ok(Value::Array(l)) => l,
            _ => return Ok(v),
        };
        let terms = reduction_terms(ins, x) as f64;
        let eps_type = fmt.epsilon();
        let eps_acc = if self.allow.accumulate_in_declared_type {
            eps_type
        } else {
            eps_type.min(f64::from(f32::EPSILON))
        };
        let floor = if self.allow.flush_outputs.contains(&t) || self.allow.flush_inputs.contains(&t)
        {
            fmt.min_normal()
        } else {
            fmt.min_subnormal()
        };
        // any order of n terms in the accumulation type is within
        // (n - 1) * u * sum|x| of the exact sum (u = eps / 2); the reference
        // sums exactly and rounds once, which the rounded ends already hold
        for i in 0..b.len() {
            let s = sums.get_f64(i) * (1.0 + 2.0 * terms * eps_type);
            let bound = terms * eps_acc / 2.0 * s + terms * floor;
            widen_abs(b, i, &fmt, bound);
        }
        Ok(v)
    }

    /// dot and convolution of floats, in midpoint-radius form computed in
    /// f64: `mid = op(ma, mb)`, `rad = op(|ma|, rb) + op(ra, |mb|) + op(ra, rb)`,
    /// then rounded outward to the result type; reassociated, widened by
    /// `n * eps * op(|a|, |b|)`.
    fn contraction(&mut self, ins: &Instruction, ops: &[&Enclosure]) -> Result<Enclosure, OpError> {
        let (Some(Enclosure::Array(a)), Some(Enclosure::Array(b)), 2) =
            (ops.first(), ops.get(1), ops.len())
        else {
            return self.exact(ins, ops);
        };
        let finite = |x: &Bounds| {
            (0..x.len())
                .all(|i| !x.nan[i] && x.lo.get_f64(i).is_finite() && x.hi.get_f64(i).is_finite())
        };
        if (a.is_point() && b.is_point() && !self.allow.reassociates) || !finite(a) || !finite(b) {
            return self.exact(ins, ops);
        }
        let Some(out) = ins.shape.as_array() else {
            return self.exact(ins, ops);
        };
        let Some(fmt) = out.dtype.float_format() else {
            return self.exact(ins, ops);
        };
        let wide = |x: &Bounds, f: &dyn Fn(f64, f64) -> f64| -> Result<Literal, OpError> {
            let s = ArrayShape {
                dtype: ElementType::F64,
                dims: x.lo.dims().iter().map(|&d| d as i64).collect(),
                layout: x.lo.layout().cloned(),
            };
            let mut l = Literal::zeros(&s)?;
            for i in 0..x.len() {
                l.set_f64(i, f(x.lo.get_f64(i), x.hi.get_f64(i)));
            }
            Ok(l)
        };
        let mid = |lo: f64, hi: f64| lo + (hi - lo) / 2.0;
        let rad = |lo: f64, hi: f64| (hi - lo) / 2.0;
        let amid = |lo: f64, hi: f64| mid(lo, hi).abs();
        let amax = |lo: f64, hi: f64| lo.abs().max(hi.abs());
        let mut wide_ins = ins.clone();
        wide_ins.shape = Shape::Array(ArrayShape {
            dtype: ElementType::F64,
            dims: out.dims.clone(),
            layout: out.layout.clone(),
        });
        let mut op = |x: Literal, y: Literal| -> Option<Literal> {
            match self
                .run
                .step_op(&wide_ins, &[&Value::Array(x), &Value::Array(y)])
            {
                Ok(Value::Array(l)) => Some(l),
                _ => None,
            }
        };
        // rad = |ma| rb + ra (|mb| + rb): two products (none for a point operand)
        let reassociates = self.allow.reassociates;
        let (a_point, b_point) = (a.is_point(), b.is_point());
        let amid_plus_rad = |lo: f64, hi: f64| amid(lo, hi) + rad(lo, hi);
        let parts = (|| {
            let m = op(wide(a, &mid).ok()?, wide(b, &mid).ok()?)?;
            let r1 = if b_point {
                None
            } else {
                Some(op(wide(a, &amid).ok()?, wide(b, &rad).ok()?)?)
            };
            let r2 = if a_point {
                None
            } else {
                Some(op(wide(a, &rad).ok()?, wide(b, &amid_plus_rad).ok()?)?)
            };
            let s = if reassociates || !(a_point && b_point) {
                Some(op(wide(a, &amax).ok()?, wide(b, &amax).ok()?)?)
            } else {
                None
            };
            Some((m, r1, r2, s))
        })();
        let Some((m, r1, r2, s)) = parts else {
            return self.exact(ins, ops);
        };
        let terms = contraction_terms(ins, a, b) as f64;
        let t = out.dtype;
        let eps_acc = fmt.epsilon().min(f64::from(f32::EPSILON));
        let floor = if self.allow.flush_outputs.contains(&t) || self.allow.flush_inputs.contains(&t)
        {
            fmt.min_normal()
        } else {
            fmt.min_subnormal()
        };
        let mut result = Bounds::point(&Literal::zeros(out)?);
        let at = |l: &Option<Literal>, i: usize| l.as_ref().map_or(0.0, |l| l.get_f64(i));
        for i in 0..result.len() {
            let sum = at(&s, i);
            let mut r =
                (at(&r1, i) + at(&r2, i)) * (1.0 + 1e-14) + (terms + 4.0) * f64::EPSILON * sum;
            if reassociates {
                // products and sums of any order: within n * u * sum|a*b|
                r += terms * eps_acc / 2.0 * sum + terms * floor;
            }
            let c = m.get_f64(i);
            let (lo, hi) = (c - r, c + r);
            if !lo.is_finite() || !hi.is_finite() {
                result.unbound(i);
                continue;
            }
            let lk = round_key(lo, &fmt);
            let hk = round_key(hi, &fmt);
            result.set(i, Some((lk, hk)), false);
        }
        Ok(Enclosure::Array(result))
    }
}

impl Bounds {
    fn nan_bits(t: ElementType) -> u64 {
        match t.float_format() {
            Some(fmt) if fmt.has_inf => {
                let exp_all = ((1u64 << fmt.exponent_bits) - 1) << fmt.mantissa_bits;
                exp_all | (1u64 << (fmt.mantissa_bits - 1))
            }
            Some(fmt) => (1u64 << (fmt.bit_width() - 1)) - 1,
            None => 0,
        }
    }
}

/// The operands' enclosures when every one is an array.
fn arrays_of<'e>(ops: &[&'e Enclosure]) -> Option<Vec<&'e Bounds>> {
    ops.iter()
        .map(|o| match o {
            Enclosure::Array(b) => Some(b),
            _ => None,
        })
        .collect()
}

/// The key of `x` rounded to nearest even in `fmt` (infinities clamp to the
/// type's extremes).
fn round_key(x: f64, fmt: &FloatFormat) -> i128 {
    let bits = crate::literal::round_to_bits(x, fmt);
    let top = float_max_key(fmt);
    float_key(bits, fmt)
        .unwrap_or(if x < 0.0 { -top - 1 } else { top })
        .clamp(-top - 1, top)
}

/// Whether a range holds values on both sides of zero, or a zero and a
/// non-zero (where `1/x`-like ops jump).
fn straddles_zero(b: &Bounds) -> bool {
    (0..b.len()).any(|i| match b.range(i) {
        Some((lo, hi)) => lo != hi && lo <= 0 && hi >= -1,
        None => false,
    })
}

fn strictly_positive(b: &Bounds) -> bool {
    (0..b.len()).all(|i| match b.range(i) {
        Some((lo, hi)) => lo == hi || lo > 0,
        None => true,
    })
}

/// Steps an element's ends outward by `ulp` units and `abs` absolutely.
fn widen_budget(b: &mut Bounds, fmt: &FloatFormat, ulp: u64, abs: f64) {
    let top = float_max_key(fmt);
    let u = ulp as i128;
    for i in 0..b.len() {
        let Some((lo, hi)) = b.range(i) else { continue };
        // -0 and +0 are one ULP apart in the keys, none in ULP distance
        let mut l = lo - u;
        if lo >= 0 && l < 0 {
            l -= 1;
        }
        let mut h = hi + u;
        if hi < 0 && h >= 0 {
            h += 1;
        }
        let (l, h) = (l.max(-top - 1), h.min(top));
        b.set(i, Some((l, h)), b.nan[i]);
        if abs > 0.0 {
            widen_abs(b, i, fmt, abs);
        }
    }
}

/// Widens element `i` by `bound` absolutely, rounded outward.
fn widen_abs(b: &mut Bounds, i: usize, fmt: &FloatFormat, bound: f64) {
    let Some((lo, hi)) = b.range(i) else { return };
    if bound.is_nan() || bound <= 0.0 {
        return;
    }
    let top = float_max_key(fmt);
    let lo_v = crate::literal::bits_to_f64(float_from_key(lo, fmt), fmt) - bound;
    let hi_v = crate::literal::bits_to_f64(float_from_key(hi, fmt), fmt) + bound;
    let l = if lo_v.is_finite() {
        (round_key(lo_v, fmt) - 1).max(-top - 1)
    } else {
        -top - 1
    };
    let h = if hi_v.is_finite() {
        (round_key(hi_v, fmt) + 1).min(top)
    } else {
        top
    };
    b.set(i, Some((l.min(lo), h.max(hi))), b.nan[i]);
}

/// A flushing backend: every subnormal is read (or written) as the zero of
/// its sign. That map is monotone, so it applies to the ends of a range: a
/// flushed value is zero, never a value between it and zero (a hull with
/// zero would accept a wrong value there, e.g. cbrt of a subnormal halved).
fn flush_ends(b: &mut Bounds, fmt: &FloatFormat) {
    let min_normal =
        float_key(crate::literal::round_to_bits(fmt.min_normal(), fmt), fmt).unwrap_or(1);
    // positive subnormals have keys 1..min_normal, negative ones -2..=-min_normal
    let flush = |k: i128| {
        if (1..min_normal).contains(&k) {
            0
        } else if (-min_normal..=-2).contains(&k) {
            -1
        } else {
            k
        }
    };
    for i in 0..b.len() {
        let Some((lo, hi)) = b.range(i) else { continue };
        b.set(i, Some((flush(lo), flush(hi))), b.nan[i]);
    }
}

/// Terms summed into each output element of a reduce or reduce-window.
fn reduction_terms(ins: &Instruction, x: &Bounds) -> u64 {
    match ins.opcode {
        Opcode::ReduceWindow => {
            ins.attrs
                .window
                .as_ref()
                .map_or(1, |w| w.iter().map(|d| d.size.max(1) as u64).product())
                + 1
        }
        _ => {
            let out = ins
                .shape
                .as_array()
                .and_then(|a| a.element_count())
                .unwrap_or(1)
                .max(1);
            x.len() as u64 / out + 1
        }
    }
}

/// Products summed into each output element of a dot or convolution.
fn contraction_terms(ins: &Instruction, a: &Bounds, b: &Bounds) -> u64 {
    match ins.opcode {
        Opcode::Dot => ins.attrs.dot_dims.as_ref().map_or(1, |d| {
            d.lhs_contracting
                .iter()
                .map(|&k| a.lo.dims().get(k as usize).copied().unwrap_or(1).max(1) as u64)
                .product()
        }),
        _ => {
            let outf = ins
                .attrs
                .conv_dims
                .as_ref()
                .and_then(|cd| b.lo.dims().get(cd.kernel_output_feature as usize).copied())
                .unwrap_or(1)
                .max(1);
            (b.len() / outf).max(1) as u64
        }
    }
}

fn compare(ins: &Instruction, a: &Bounds, b: &Bounds) -> Result<Bounds, OpError> {
    let out = ins
        .shape
        .as_array()
        .ok_or_else(|| OpError::Invalid("compare to a non-array".into()))?;
    let dir = ins
        .attrs
        .direction
        .ok_or_else(|| OpError::Invalid("compare without a direction".into()))?;
    let total = ins.attrs.comparison_type == Some(ComparisonType::TotalOrder);
    let mut r = Bounds::point(&Literal::zeros(out)?);
    let n = r.len();
    let float = a.lo.dtype().is_float();
    let at = |x: &Bounds, i: usize| if x.len() == 1 { 0 } else { i };
    for i in 0..n {
        let (ia, ib) = (at(a, i), at(b, i));
        let (ra, rb) = (a.range(ia), b.range(ib));
        let maybe_nan = float && (a.nan[ia] || b.nan[ib]);
        let (Some((a0, a1)), Some((b0, b1))) = (ra, rb) else {
            // NaN only on a side: as certain as the kernel says (unordered)
            let v = match dir {
                ComparisonDirection::Ne => 1,
                _ => 0,
            };
            let v = if total { 0 } else { v };
            r.set(i, Some(if total { (0, 1) } else { (v, v) }), false);
            continue;
        };
        // FLOAT: -0 == +0; the keys order -0 below +0
        let norm = |k: i128| if float && !total && k == -1 { 0 } else { k };
        let (a0, a1, b0, b1) = (norm(a0), norm(a1), norm(b0), norm(b1));
        let (a0, a1) = (a0.min(a1), a0.max(a1));
        let (b0, b1) = (b0.min(b1), b0.max(b1));
        let (sure, maybe) = match dir {
            ComparisonDirection::Lt => (a1 < b0, a0 < b1),
            ComparisonDirection::Le => (a1 <= b0, a0 <= b1),
            ComparisonDirection::Gt => (a0 > b1, a1 > b0),
            ComparisonDirection::Ge => (a0 >= b1, a1 >= b0),
            ComparisonDirection::Eq => (a0 == a1 && b0 == b1 && a0 == b0, a0 <= b1 && b0 <= a1),
            ComparisonDirection::Ne => (a1 < b0 || b1 < a0, !(a0 == a1 && b0 == b1 && a0 == b0)),
        };
        let (mut lo, mut hi) = (i128::from(sure), i128::from(maybe));
        if maybe_nan {
            lo = 0;
            hi = 1;
        }
        r.set(i, Some((lo.min(hi), hi)), false);
    }
    // unsigned comparisons of signed keys are not what the keys order
    if ins.attrs.comparison_type == Some(ComparisonType::Unsigned) && a.lo.dtype().is_signed_int() {
        for i in 0..n {
            r.set(i, Some((0, 1)), false);
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;

    fn f32s(v: &[f64]) -> Literal {
        Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![v.len() as i64]), v).unwrap()
    }

    #[test]
    fn exact_ops_on_exact_inputs_enclose_the_rounded_result_only() {
        let m = parse_module("HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  t = f32[3] tanh(x)\n  ROOT s = f32[3] multiply(t, x)\n}\n").unwrap();
        let x = f32s(&[0.5, -4.3, 1e-3]);
        let b = enclose(&m, std::slice::from_ref(&x), &Allowances::default()).unwrap();
        let point = crate::reference::evaluate(&m, &[x]).unwrap();
        assert_eq!(b[0].lo.to_bits_vec(), point[0].to_bits_vec());
        assert_eq!(b[0].hi.to_bits_vec(), point[0].to_bits_vec());
    }

    #[test]
    fn a_budget_carries_through_a_cancellation() {
        // 1 + tanh(x) at x = -4.3 cancels: 2 ULP of tanh are many ULP of the sum
        let m = parse_module("HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  t = f32[1] tanh(x)\n  one = f32[1] constant({1})\n  ROOT s = f32[1] add(one, t)\n}\n").unwrap();
        let x = f32s(&[-4.3]);
        let mut allow = Allowances::default();
        allow
            .budgets
            .insert((Opcode::Tanh, ElementType::F32), (2, 0.0));
        let b = enclose(&m, std::slice::from_ref(&x), &allow).unwrap();
        let point = crate::reference::evaluate(&m, &[x]).unwrap()[0].get_f64(0);
        let (lo, hi) = (b[0].lo.get_f64(0), b[0].hi.get_f64(0));
        assert!(lo < point && point < hi, "{lo} {point} {hi}");
        // two ULP of tanh near -1 are 2 * 2^-24; the sum is ~3.7e-4
        let ulp_t = 2f64.powi(-24);
        assert!(hi - lo <= 4.0 * ulp_t + 2.0 * 2f64.powi(-35), "{lo} {hi}");
        assert!(hi - point >= 2.0 * ulp_t - 2f64.powi(-36));
        // a value outside is not enclosed
        let outside = (point as f32 + 1e-5).to_bits();
        assert!(!b[0].contains(0, u64::from(outside)));
    }

    #[test]
    fn uncertain_predicates_take_both_branches() {
        let m = parse_module("HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  e = f32[1] exponential(x)\n  one = f32[1] constant({1})\n  c = pred[1] compare(e, one), direction=LT\n  a = f32[1] constant({10})\n  b = f32[1] constant({20})\n  ROOT s = f32[1] select(c, a, b)\n}\n").unwrap();
        let mut allow = Allowances::default();
        allow
            .budgets
            .insert((Opcode::Exponential, ElementType::F32), (1, 0.0));
        // exp(0) = 1 exactly; within 1 ULP it may be below 1
        let b = enclose(&m, &[f32s(&[0.0])], &allow).unwrap();
        assert_eq!((b[0].lo.get_f64(0), b[0].hi.get_f64(0)), (10.0, 20.0));
        // far from the threshold the predicate is certain
        let b = enclose(&m, &[f32s(&[3.0])], &allow).unwrap();
        assert_eq!((b[0].lo.get_f64(0), b[0].hi.get_f64(0)), (20.0, 20.0));
    }

    #[test]
    fn a_divisor_range_holding_zero_is_unbounded() {
        let m = parse_module("HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  s = f32[1] sine(x)\n  one = f32[1] constant({1})\n  ROOT d = f32[1] divide(one, s)\n}\n").unwrap();
        let mut allow = Allowances::default();
        allow
            .budgets
            .insert((Opcode::Sine, ElementType::F32), (0, 1e-6));
        let b = enclose(&m, &[f32s(&[1e-7])], &allow).unwrap();
        assert!(b[0].lo.get_f64(0).is_infinite() && b[0].hi.get_f64(0).is_infinite());
        assert!(b[0].nan[0]);
    }

    #[test]
    fn reassociated_sums_widen_and_exact_ones_do_not() {
        let m = parse_module("HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n}\n").unwrap();
        let x = f32s(&[1.0, 1e8, -1e8, 1.0]);
        let exact = enclose(&m, std::slice::from_ref(&x), &Allowances::default()).unwrap();
        assert_eq!((exact[0].lo.get_f64(0), exact[0].hi.get_f64(0)), (2.0, 2.0));
        let allow = Allowances {
            reassociates: true,
            ..Allowances::default()
        };
        let any_order = enclose(&m, &[x], &allow).unwrap();
        // any order: (1 + 1e8) - 1e8 + 1 = 1 in f32, or 0
        assert!(any_order[0].contains(0, 0f32.to_bits() as u64));
        assert!(any_order[0].contains(0, 1f32.to_bits() as u64));
        assert!(!any_order[0].contains(0, 1e3f32.to_bits() as u64));
    }

    #[test]
    fn a_flushed_subnormal_is_zero_not_a_range_down_to_zero() {
        // cbrt of a subnormal on a backend that flushes inputs: cbrt(x) or
        // cbrt(0) = 0, never a value between (the cbrt-of-subnormals bug)
        let m = parse_module(
            "HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  ROOT c = f32[1] cbrt(x)\n}\n",
        )
        .unwrap();
        let x = f32s(&[1e-40]);
        let flushing = Allowances {
            flush_inputs: vec![ElementType::F32],
            ..Allowances::default()
        };
        let b = enclose(&m, std::slice::from_ref(&x), &flushing).unwrap();
        assert_eq!(b[0].lo.to_bits_vec(), vec![0]);
        assert_eq!(b[0].hi.to_bits_vec(), vec![0]);
        let kept = enclose(&m, std::slice::from_ref(&x), &Allowances::default()).unwrap();
        let exact = crate::reference::evaluate(&m, &[x]).unwrap();
        assert_eq!(kept[0].lo.to_bits_vec(), exact[0].to_bits_vec());
        let half = (exact[0].get_f64(0) / 2.0) as f32;
        for e in [&b[0], &kept[0]] {
            assert!(!e.contains(0, u64::from(half.to_bits())));
        }
    }

    #[test]
    fn flushed_outputs_include_zero() {
        let m = parse_module("HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  ROOT h = f32[1] multiply(x, x)\n}\n").unwrap();
        let allow = Allowances {
            flush_outputs: vec![ElementType::F32],
            ..Allowances::default()
        };
        let b = enclose(&m, &[f32s(&[1e-20])], &allow).unwrap();
        assert!(b[0].contains(0, 0));
        let none = enclose(&m, &[f32s(&[1e-20])], &Allowances::default()).unwrap();
        assert!(!none[0].contains(0, 0));
    }

    #[test]
    fn data_movement_moves_ranges() {
        let m = parse_module("HloModule m\nENTRY e {\n  x = f32[2,3] parameter(0)\n  t = f32[2,3] exponential(x)\n  ROOT r = f32[3,2] transpose(t), dimensions={1,0}\n}\n").unwrap();
        let x = Literal::from_f64s(
            &ArrayShape::new(ElementType::F32, vec![2, 3]),
            &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
        )
        .unwrap();
        let mut allow = Allowances::default();
        allow
            .budgets
            .insert((Opcode::Exponential, ElementType::F32), (1, 0.0));
        let b = enclose(&m, std::slice::from_ref(&x), &allow).unwrap();
        let point = crate::reference::evaluate(&m, &[x]).unwrap();
        for i in 0..6 {
            assert!(b[0].contains(i, point[0].get_bits(i)));
            assert!(b[0].lo.get_f64(i) < point[0].get_f64(i));
        }
    }

    #[test]
    fn dots_enclose_their_inputs_ranges() {
        let m = parse_module("HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[3,2] parameter(1)\n  l = f32[2,3] logistic(a)\n  ROOT d = f32[2,2] dot(l, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n").unwrap();
        let a = Literal::from_f64s(
            &ArrayShape::new(ElementType::F32, vec![2, 3]),
            &[0.1, -0.7, 2.0, 3.0, -1.5, 0.25],
        )
        .unwrap();
        let b = Literal::from_f64s(
            &ArrayShape::new(ElementType::F32, vec![3, 2]),
            &[1.0, -2.0, 0.5, 4.0, -3.0, 1.25],
        )
        .unwrap();
        let exact = enclose(&m, &[a.clone(), b.clone()], &Allowances::default()).unwrap();
        let point = crate::reference::evaluate(&m, &[a.clone(), b.clone()]).unwrap();
        for i in 0..4 {
            assert!(exact[0].contains(i, point[0].get_bits(i)));
            // tight: a few ULP at most
            let w = exact[0].hi.get_f64(i) - exact[0].lo.get_f64(i);
            assert!(w <= 4.0 * f64::from(f32::EPSILON) * 8.0, "{w}");
        }
        let mut allow = Allowances {
            reassociates: true,
            ..Allowances::default()
        };
        allow
            .budgets
            .insert((Opcode::Logistic, ElementType::F32), (4, 0.0));
        let loose = enclose(&m, &[a, b], &allow).unwrap();
        for i in 0..4 {
            assert!(loose[0].lo.get_f64(i) <= exact[0].lo.get_f64(i));
            assert!(loose[0].hi.get_f64(i) > exact[0].hi.get_f64(i));
        }
    }
}

#[cfg(test)]
mod integer_tests {
    use super::*;
    use crate::hlo::parse_module;

    #[test]
    fn integer_negate_and_abs_of_an_uncertain_range_are_unbounded_not_wrapped() {
        // an s8 index from an uncertain float: negate and abs would wrap at -128
        let m = parse_module("HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  e = f32[1] exponential(x)\n  i = s8[1] convert(e)\n  n = s8[1] negate(i)\n  a = s8[1] abs(i)\n  ROOT t = (s8[1], s8[1]) tuple(n, a)\n}\n").unwrap();
        let mut allow = Allowances::default();
        allow
            .budgets
            .insert((Opcode::Exponential, ElementType::F32), (1, 0.0));
        let x = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![1]), &[0.0]).unwrap();
        let b = enclose(&m, &[x], &allow).unwrap();
        // exp(0) = 1 within one ULP: the convert is 0 or 1, not certain
        for out in &b {
            assert_eq!((out.lo.get_i128(0), out.hi.get_i128(0)), (-128, 127));
        }
    }
}
