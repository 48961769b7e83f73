//! The interval evaluation: the run over a module's computations, and the
//! elementwise rules (corners of the operand box, poles, trigonometry).

use super::super::walk::{
    callee, entry_values, from_leaves, operand_values, refuse_complex, take_argument, Leaves,
};
use super::super::{OpError, Run};
use super::bounds::*;
use crate::hlo::{
    CompId, ComparisonDirection, ComparisonType, ElementType, Instruction, Module, Opcode, Shape,
};
use crate::literal::{Literal, Value};

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
) -> Result<Vec<Bounds>, crate::reference::EvalError> {
    let expanded = crate::hlo::expand_known_custom_calls(module);
    let module = expanded.as_ref().unwrap_or(module);
    // complex values have no enclosures (an interval per element is real)
    refuse_complex(module, "enclosures")?;
    let entry = module.entry_computation();
    let values = entry_values(module, args, param_enclosure)?;
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

pub(super) fn param_enclosure<'l>(
    shape: &Shape,
    next: &mut impl Iterator<Item = &'l Literal>,
) -> Option<Enclosure> {
    from_leaves(shape, next, &|| (), &mut |_, l| {
        Ok(Enclosure::Array(Bounds::point(l)))
    })
    .ok()
}

impl Leaves for Enclosure {
    fn tuple(items: Vec<Enclosure>) -> Enclosure {
        Enclosure::Tuple(items)
    }
    fn token() -> Enclosure {
        Enclosure::Token
    }
}

pub(super) struct Interval<'a, 'r> {
    pub(super) run: Run<'a, 'r>,
    pub(super) module: &'a Module,
    pub(super) allow: &'a Allowances,
    pub(super) depth: usize,
    /// How many fusions the evaluation is inside.
    pub(super) fused: usize,
    /// The instruction being evaluated is an operand of an add or subtract.
    pub(super) feeds_add: bool,
    /// `XLA_PROPS_DEBUG_ENCLOSE` is set: print every instruction's widest
    /// relative range (a diagnostic for where an enclosure grows).
    pub(super) debug: bool,
}

/// How an elementwise op's range follows from its operands' ranges.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Rule {
    /// Monotone in each operand (or bilinear): the corners bound it.
    Corners,
    /// Exact on exact operands, unbounded otherwise.
    ExactOnly,
}

impl Rule {
    /// `Corners`, or `ExactOnly` where `not_monotone` (a pole or a branch inside the box).
    pub(super) fn corners_unless(not_monotone: bool) -> Rule {
        if not_monotone {
            Rule::ExactOnly
        } else {
            Rule::Corners
        }
    }
}

/// The element of a tuple enclosure.
pub(super) fn get_tuple_element(
    ins: &Instruction,
    ops: &[&Enclosure],
) -> Result<Enclosure, OpError> {
    match (ops.first(), ins.attrs.index) {
        (Some(Enclosure::Tuple(t)), Some(k)) => usize::try_from(k)
            .ok()
            .and_then(|k| t.get(k))
            .cloned()
            .ok_or_else(|| OpError::Invalid("tuple index out of range".into())),
        _ => Err(OpError::Invalid("get-tuple-element of a non-tuple".into())),
    }
}

impl Interval<'_, '_> {
    pub(super) fn computation(
        &mut self,
        id: CompId,
        args: Vec<Enclosure>,
    ) -> Result<Enclosure, OpError> {
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
                take_argument(ins, &mut args).map_err(OpError::Invalid)?
            } else {
                let ops = operand_values(ins, &values).map_err(OpError::Invalid)?;
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
                    let nan_only = (0..b.len()).filter(|&i| b.range(i).is_none()).count();
                    eprintln!(
                        "{:>3} {:<40} {:<12} {w:.3e} nan-only {nan_only}",
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
    pub(super) fn instruction(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
    ) -> Result<Enclosure, OpError> {
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
                    && self.feeds_add;
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

    pub(super) fn flush_in(&self, e: &Enclosure) -> Enclosure {
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
    pub(super) fn kernel(&mut self, ins: &Instruction, ops: &[Value]) -> Result<Value, OpError> {
        let refs: Vec<&Value> = ops.iter().collect();
        self.run.step_op(ins, &refs)
    }

    /// The kernel on `pick(j, operand j's bounds)` for each operand; None
    /// unless it gives an array of `n` elements.
    fn kernel_on(
        &mut self,
        ins: &Instruction,
        arrays: &[&Bounds],
        n: usize,
        pick: impl Fn(usize, &Bounds) -> Literal,
    ) -> Option<Literal> {
        let vals: Vec<Value> = arrays
            .iter()
            .enumerate()
            .map(|(j, b)| Value::Array(pick(j, b)))
            .collect();
        match self.kernel(ins, &vals) {
            Ok(Value::Array(l)) if l.element_count() == n => Some(l),
            _ => None,
        }
    }

    /// The point value when every operand is exact.
    pub(super) fn exact(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
    ) -> Result<Enclosure, OpError> {
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

    pub(super) fn op(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
    ) -> Result<Enclosure, OpError> {
        use Opcode as O;
        let shape = ins.shape.clone();
        let out_dtype = shape.as_array().map(|a| a.dtype);
        let float_out = out_dtype.is_some_and(|t| t.is_float());
        let arrays = || arrays_of(ops);
        match ins.opcode {
            O::Constant | O::Iota => self.exact(ins, ops),
            O::Tuple => Ok(Enclosure::Tuple(ops.iter().map(|o| (*o).clone()).collect())),
            O::GetTupleElement => get_tuple_element(ins, ops),
            op if op.copies_elements()
                && arrays().is_some_and(|a| a.iter().all(|b| Some(b.lo.dtype()) == out_dtype)) =>
            {
                self.moved_indexed(ins, ops, usize::MAX)
            }
            O::DynamicSlice | O::Gather => self.moved_indexed(ins, ops, 1),
            O::DynamicUpdateSlice => self.moved_indexed(ins, ops, 2),
            O::Scatter => self.scatter(ins, ops),
            O::Fusion | O::Call => self.call(ins, ops),
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
                self.square(ins, ops)
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
                self.corners(ins, ops, Rule::corners_unless(zero_inside))
            }
            O::Power | O::Atan2 if float_out => {
                // corners bound pow(x, y) for x > 0 and atan2(y, x) for x > 0
                let k = if ins.opcode == O::Power { 0 } else { 1 };
                let positive = arrays()
                    .and_then(|a| a.get(k).copied())
                    .is_some_and(strictly_positive);
                self.corners(ins, ops, Rule::corners_unless(!positive))
            }
            op if float_out && (op.is_nondecreasing_unary() || op == O::Negate) => {
                self.corners(ins, ops, Rule::Corners)
            }
            // integer sign is monotone; integer negate and abs wrap at the minimum
            O::Sign => self.corners(ins, ops, Rule::Corners),
            O::Rsqrt if float_out => {
                let zero_inside = arrays()
                    .and_then(|a| a.first().copied())
                    .is_some_and(straddles_zero);
                self.corners(ins, ops, Rule::corners_unless(zero_inside))
            }
            O::Abs if float_out => self.abs(ins, ops),
            O::Sine | O::Cosine | O::Tan if float_out => self.trig(ins, ops),
            O::Convert => {
                let to_pred = out_dtype == Some(ElementType::Pred);
                self.corners(ins, ops, Rule::corners_unless(to_pred))
            }
            O::Reduce | O::ReduceWindow => self.reduce(ins, ops),
            O::Dot | O::Convolution if float_out => self.contraction(ins, ops),
            // no backend rounds a triangular solve correctly, and no bound
            // holds for every way of solving (substitution, XLA's blocked
            // solve with inverted diagonal blocks) without a tolerance of
            // our own: it bounds nothing
            O::TriangularSolve => Enclosure::unbounded(&ins.shape),
            _ => self.exact(ins, ops),
        }
    }

    /// A fusion or a call: the called computation on the operands' enclosures.
    pub(super) fn call(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
    ) -> Result<Enclosure, OpError> {
        let comp = callee(ins).ok_or_else(|| OpError::Invalid("no called computation".into()))?;
        let fusion = usize::from(ins.opcode == Opcode::Fusion);
        self.fused += fusion;
        let v = self.computation(comp, ops.iter().map(|o| (*o).clone()).collect());
        self.fused -= fusion;
        v
    }

    /// `x * x`: a square is never negative, although the corners of a range
    /// holding zero would say so.
    pub(super) fn square(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
    ) -> Result<Enclosure, OpError> {
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

    /// Float `abs`: the corners, down to zero where the operand's range holds zero.
    pub(super) fn abs(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
    ) -> Result<Enclosure, OpError> {
        let mut v = self.corners(ins, ops, Rule::Corners)?;
        let x = arrays_of(ops).and_then(|a| a.first().copied()).cloned();
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

    /// An elementwise op at the corners of its operand box.
    pub(super) fn corners(
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
            let corner = |j: usize, b: &Bounds| {
                if c >> j & 1 == 1 {
                    b.hi.clone()
                } else {
                    b.lo.clone()
                }
            };
            let Some(v) = self.kernel_on(ins, &arrays, n, corner) else {
                return self.exact(ins, ops);
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
        // NaN at every corner is the whole box only when each operand is
        // one value there (see `finite_inside`)
        if !self.finite_inside(ins, &arrays, &mut nan_only, &mut ranges, &mut mixed) {
            return self.exact(ins, ops);
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
            let nan_at_j = |m: usize, x: &Bounds| {
                if m == j {
                    with_nan.clone()
                } else {
                    x.lo.clone()
                }
            };
            let Some(v) = self.kernel_on(ins, &arrays, n, nan_at_j) else {
                return self.exact(ins, ops);
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

    /// Elements whose corners are all NaN while an operand's range reaches
    /// an infinity without being one value: that operand also holds every
    /// finite value up to it (unbounded * exact zero is NaN at the corners
    /// and zero inside), so the corners of the finite part of the box give
    /// their range, and NaN stays possible. False when the kernel fails.
    fn finite_inside(
        &mut self,
        ins: &Instruction,
        arrays: &[&Bounds],
        nan_only: &mut [bool],
        ranges: &mut [Option<(i128, i128)>],
        mixed: &mut [bool],
    ) -> bool {
        let (n, k) = (nan_only.len(), arrays.len());
        let spans_inf = |b: &Bounds, i: usize| {
            b.range(i).is_some_and(|(lo, hi)| lo != hi)
                && (b.lo.get_f64(i).is_infinite() || b.hi.get_f64(i).is_infinite())
        };
        let inside: Vec<usize> = (0..n)
            .filter(|&i| {
                nan_only[i]
                    && arrays.iter().all(|b| b.len() != n || b.range(i).is_some())
                    && arrays.iter().any(|b| b.len() == n && spans_inf(b, i))
            })
            .collect();
        if !inside.is_empty() {
            let finite_end = |l: &Literal| {
                let mut l = l.clone();
                if let Some(fmt) = l.dtype().float_format() {
                    // the largest finite value: the key below infinity's
                    let finite_top = float_max_key(&fmt) - i128::from(fmt.has_inf);
                    let top = float_from_key(finite_top, &fmt);
                    let bottom = float_from_key(-finite_top - 1, &fmt);
                    for i in 0..l.element_count() {
                        let x = l.get_f64(i);
                        if x == f64::INFINITY {
                            l.set_bits(i, top);
                        } else if x == f64::NEG_INFINITY {
                            l.set_bits(i, bottom);
                        }
                    }
                }
                l
            };
            let ends: Vec<(Literal, Literal)> = arrays
                .iter()
                .map(|b| (finite_end(&b.lo), finite_end(&b.hi)))
                .collect();
            let mut finite: Vec<Option<(i128, i128)>> = vec![None; n];
            for c in 0..(1usize << k) {
                let vals: Vec<Value> = ends
                    .iter()
                    .enumerate()
                    .map(|(j, (lo, hi))| {
                        Value::Array(if c >> j & 1 == 1 { hi } else { lo }.clone())
                    })
                    .collect();
                let v = match self.kernel(ins, &vals) {
                    Ok(Value::Array(l)) if l.element_count() == n => l,
                    _ => return false,
                };
                for &i in &inside {
                    if let Some(x) = key(&v, i) {
                        finite[i] = Some(finite[i].map_or((x, x), |(a, b)| (a.min(x), b.max(x))));
                    }
                }
            }
            for &i in &inside {
                match finite[i] {
                    Some(r) => {
                        nan_only[i] = false;
                        ranges[i] = Some(r);
                    }
                    None => mixed[i] = true,
                }
            }
        }
        true
    }

    pub(super) fn trig(
        &mut self,
        ins: &Instruction,
        ops: &[&Enclosure],
    ) -> Result<Enclosure, OpError> {
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
}

pub(super) fn compare(ins: &Instruction, a: &Bounds, b: &Bounds) -> Result<Bounds, OpError> {
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
