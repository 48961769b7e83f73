//! The backend's declared op semantics as a variant module: where a backend
//! declares (in its `Numerics`) that an op is computed differently from the
//! reference's default semantics, the module is rewritten into plain HLO
//! that computes exactly that, and the reference evaluates the rewrite. The
//! judge does this only when the cheap comparison disagrees.
//!
//! Kept apart from the other alternatives (flushed inputs, excess precision,
//! known bugs): these are legal, documented behaviours of a backend
//! (`docs/numerics.md`), each behind its own `Numerics` field.

use super::numerics::Numerics;
use crate::hlo::{
    ArrayShape, ComparisonDirection, ConstantData, ElementType, InstrId, Instruction, Module,
    Opcode, PadDim, Shape,
};

/// Which first operands count as constants that XLA moves to the right.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ConstantOrder {
    /// Constants and broadcasts or reshapes of them, first operands of
    /// `minimum`/`maximum` only (the algebraic simplifier's canonical form).
    Canonical,
    /// Also iotas, and a constant lower bound of `clamp`: measured on
    /// xla-cpu in some operand forms and not others (`maximum(iota, x)` of 0
    /// and -0 is -0 in one fusion, 0 in another; `clamp(broadcast(0), -0,
    /// h)` is -0, `clamp(constant(0...), -0, h)` is 0), so an alternative.
    Widened,
}

/// True when `id` is a constant (with `Widened`, or an iota), or a
/// broadcast or reshape of one.
fn is_constant_made(
    instrs: &[crate::hlo::Instruction],
    id: crate::hlo::InstrId,
    order: ConstantOrder,
) -> bool {
    instrs.get(id.index()).is_some_and(|i| match i.opcode {
        Opcode::Constant => true,
        Opcode::Iota => order == ConstantOrder::Widened,
        Opcode::Broadcast | Opcode::Reshape => i
            .operands
            .first()
            .is_some_and(|&o| is_constant_made(instrs, o, order)),
        _ => false,
    })
}

/// The module rewritten to the op semantics `numerics` declares, or None when
/// no declared semantics applies to any instruction:
///
/// - `fast_min_max`: every float `minimum(a, b)` becomes
///   `select(b < a, b, a)` and `maximum(a, b)` becomes `select(b > a, b, a)`,
///   in every computation (reducers and fusions included), with a constant
///   `a` (a constant, or a broadcast of one) and a non-constant `b` taken
///   as `b, a` (XLA moves constants to the right); a float
///   `clamp(lo, x, hi)` becomes `minimum(maximum(lo, x), hi)` under that
///   rule ([`op_semantics_variant_ordered`] also moves iotas and constant
///   clamp bounds).
///   With `swap_reducers`, the rule is applied with swapped operands inside
///   computations that reduce, reduce-window or scatter call (an
///   implementation may pass (element, accumulator) instead of
///   (accumulator, element)).
/// - `reduce_precision_in_own_type`: `reduce-precision` of those types is
///   computed on the operand's own bit pattern (bitcast to an unsigned
///   integer, XLA's round-and-mask rule, bitcast back), not through f32.
/// - `convolution_multiplies_padding`: a convolution's padding becomes an
///   explicit zero `pad` of the input, so a padded position contributes
///   `0 * w` (NaN for an infinite or NaN kernel weight).
///
/// ```
/// use xla_props::check::{op_semantics_variant, Numerics};
/// use xla_props::hlo::{parse_module, Opcode};
/// let m = parse_module("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n  ROOT r = f32[2] minimum(a, b)\n}\n").unwrap();
/// assert!(op_semantics_variant(&m, &Numerics::exact()).is_none());
/// let n = Numerics { fast_min_max: true, ..Numerics::exact() };
/// let v = op_semantics_variant(&m, &n).unwrap();
/// let e = v.entry_computation();
/// assert_eq!(e.instr(e.root).opcode, Opcode::Select);
/// ```
pub fn op_semantics_variant(module: &Module, numerics: &Numerics) -> Option<Module> {
    op_semantics_variant_ordered(module, numerics, ConstantOrder::Canonical)
}

/// [`op_semantics_variant`] with the first operands `order` moves.
pub fn op_semantics_variant_ordered(
    module: &Module,
    numerics: &Numerics,
    order: ConstantOrder,
) -> Option<Module> {
    let mut m = module.clone();
    let mut changed = false;
    for ci in 0..m.computations.len() {
        let n = m.computations[ci].instructions.len();
        for k in 0..n {
            let instr = m.computations[ci].instructions[k].clone();
            let Some(arr) = instr.shape.as_array().cloned() else {
                continue;
            };
            // XLA moves a constant operand of a commutative op to the right
            // (its algebraic simplifier's canonical form): a constant first
            // operand of minimum/maximum is the dropped one under fast min/max
            let constant_first = matches!(instr.opcode, Opcode::Minimum | Opcode::Maximum)
                && instr.operands.len() == 2
                && is_constant_made(&m.computations[ci].instructions, instr.operands[0], order)
                && !is_constant_made(&m.computations[ci].instructions, instr.operands[1], order);
            let mut e = Emitter {
                comp: &mut m.computations[ci].instructions,
                name: instr.name.clone(),
                count: 0,
            };
            let done = match instr.opcode {
                Opcode::Minimum | Opcode::Maximum
                    if numerics.fast_min_max && arr.dtype.is_float() =>
                {
                    let (a, b) = match instr.operands.as_slice() {
                        [a, b] if constant_first => (*b, *a),
                        [a, b] => (*a, *b),
                        _ => continue,
                    };
                    let dir = if instr.opcode == Opcode::Minimum {
                        ComparisonDirection::Lt
                    } else {
                        ComparisonDirection::Gt
                    };
                    let daz = numerics.flushes_inputs(arr.dtype);
                    let cmp = e.daz_compare(&arr, b, a, dir, daz);
                    Some((Opcode::Select, vec![cmp, b, a]))
                }
                Opcode::Clamp if numerics.fast_min_max && arr.dtype.is_float() => {
                    let daz = numerics.flushes_inputs(arr.dtype);
                    e.fast_clamp(&instr, &arr, order, daz)
                }
                Opcode::ReducePrecision
                    if numerics.reduce_precision_in_own_type.contains(&arr.dtype) =>
                {
                    let [x] = instr.operands.as_slice() else {
                        continue;
                    };
                    let (Some(eb), Some(mb)) =
                        (instr.attrs.exponent_bits, instr.attrs.mantissa_bits)
                    else {
                        continue;
                    };
                    e.reduce_precision_on_bits(*x, &arr, eb, mb)
                        .map(|r| (Opcode::Copy, vec![r]))
                }
                Opcode::Convolution
                    if numerics.convolution_multiplies_padding
                        || numerics.convolution_multiplies_dilation_holes =>
                {
                    e.explicit_padding(
                        &instr,
                        numerics.convolution_multiplies_padding,
                        numerics.convolution_multiplies_dilation_holes,
                    )
                }
                _ => None,
            };
            if let Some((opcode, operands)) = done {
                let target = &mut m.computations[ci].instructions[k];
                if opcode != Opcode::Convolution {
                    target.attrs = Default::default();
                }
                if opcode == Opcode::Convolution {
                    if let Some(w) = target.attrs.window.as_mut() {
                        for d in w.iter_mut() {
                            if numerics.convolution_multiplies_padding {
                                d.pad_low = 0;
                                d.pad_high = 0;
                            }
                            if numerics.convolution_multiplies_dilation_holes {
                                d.base_dilation = 1;
                            }
                        }
                    }
                }
                target.opcode = opcode;
                target.operands = operands;
                changed = true;
            }
        }
    }
    changed.then_some(m)
}

/// Appends instructions to one computation.
struct Emitter<'c> {
    comp: &'c mut Vec<Instruction>,
    name: String,
    count: usize,
}

impl Emitter<'_> {
    /// clamp(lo, x, hi) as fast min/max computes it: `minimum(maximum(lo,
    /// x), hi)`, each a compare and a select that keeps the first operand
    /// unless the comparison holds (so a NaN or a signed zero picks a side).
    fn fast_clamp(
        &mut self,
        instr: &Instruction,
        arr: &ArrayShape,
        order: ConstantOrder,
        daz: bool,
    ) -> Option<(Opcode, Vec<InstrId>)> {
        let [lo, x, hi] = instr.operands.as_slice() else {
            return None;
        };
        // widened: a constant lower bound moved to the right of
        // the maximum (measured: clamp of a broadcast 0 and -0 is
        // -0, of a broadcast NaN is x)
        let lo_constant = order == ConstantOrder::Widened
            && is_constant_made(self.comp, *lo, order)
            && !is_constant_made(self.comp, *x, order);
        let lo = self.broadcast_scalar(*lo, arr);
        let hi = self.broadcast_scalar(*hi, arr);
        let (x, lo, hi) = (*x, lo?, hi?);
        // maximum(lo, x): lo unless x > lo; maximum(x, lo): x unless lo > x
        let (first, second) = if lo_constant { (x, lo) } else { (lo, x) };
        let gt = self.daz_compare(arr, second, first, ComparisonDirection::Gt, daz);
        let mx = self.push(
            Opcode::Select,
            Shape::Array(arr.clone()),
            vec![gt, second, first],
        );
        // minimum(mx, hi): mx unless hi < mx
        let lt = self.daz_compare(arr, hi, mx, ComparisonDirection::Lt, daz);
        Some((Opcode::Select, vec![lt, hi, mx]))
    }

    fn push(&mut self, opcode: Opcode, shape: Shape, operands: Vec<InstrId>) -> InstrId {
        self.push_instr(Instruction::new(String::new(), opcode, shape, operands))
    }

    fn push_instr(&mut self, mut i: Instruction) -> InstrId {
        self.count += 1;
        i.name = format!("{}.semantics.{}", self.name, self.count);
        self.comp.push(i);
        InstrId(self.comp.len() as u32 - 1)
    }

    fn shape_of(&self, id: InstrId) -> Option<&ArrayShape> {
        self.comp.get(id.index())?.shape.as_array()
    }

    fn compare(
        &mut self,
        like: &ArrayShape,
        a: InstrId,
        b: InstrId,
        dir: ComparisonDirection,
    ) -> InstrId {
        let mut i = Instruction::new(
            String::new(),
            Opcode::Compare,
            Shape::array(ElementType::Pred, like.dims.clone()),
            vec![a, b],
        );
        i.attrs.direction = Some(dir);
        self.push_instr(i)
    }

    /// `compare(a, b)`, on subnormals-as-zero operands when `daz` (the
    /// select that uses it still returns the operand's own bits: measured on
    /// bf16, where `minimum(2^-133, -2^-133)` is `2^-133`).
    fn daz_compare(
        &mut self,
        like: &ArrayShape,
        a: InstrId,
        b: InstrId,
        dir: ComparisonDirection,
        daz: bool,
    ) -> InstrId {
        if !daz {
            return self.compare(like, a, b, dir);
        }
        let (fa, fb) = (self.daz(a, like), self.daz(b, like));
        self.compare(like, fa, fb, dir)
    }

    /// `x` with subnormals replaced by the zero of their sign:
    /// `select(|x| < min_normal, x * 0, x)` (NaN and inf pass through).
    fn daz(&mut self, x: InstrId, like: &ArrayShape) -> InstrId {
        let Some(fmt) = like.dtype.float_format() else {
            return x;
        };
        let shape = Shape::Array(like.clone());
        let abs = self.push(Opcode::Abs, shape.clone(), vec![x]);
        let mn = self.splat(
            like.dtype,
            like,
            ConstantData::Float(vec![fmt.min_normal()]),
        );
        let zero = self.splat(like.dtype, like, ConstantData::Float(vec![0.0]));
        let tiny = self.compare(like, abs, mn, ComparisonDirection::Lt);
        let signed_zero = self.push(Opcode::Multiply, shape.clone(), vec![x, zero]);
        self.push(Opcode::Select, shape, vec![tiny, signed_zero, x])
    }

    /// `id` broadcast to `like`'s dims when it is a scalar and `like` is not.
    fn broadcast_scalar(&mut self, id: InstrId, like: &ArrayShape) -> Option<InstrId> {
        let s = self.shape_of(id)?.clone();
        if s.dims == like.dims {
            return Some(id);
        }
        if !s.dims.is_empty() {
            return None;
        }
        let mut i = Instruction::new(
            String::new(),
            Opcode::Broadcast,
            Shape::array(s.dtype, like.dims.clone()),
            vec![id],
        );
        i.attrs.dimensions = Some(Vec::new());
        Some(self.push_instr(i))
    }

    /// A constant of `dtype` with `like`'s dims, every element `value`.
    fn splat(&mut self, dtype: ElementType, like: &ArrayShape, value: ConstantData) -> InstrId {
        let mut i = Instruction::new(
            String::new(),
            Opcode::Constant,
            Shape::array(dtype, like.dims.clone()),
            vec![],
        );
        i.attrs.constant = Some(value);
        self.push_instr(i)
    }

    fn uint(&mut self, t: ElementType, like: &ArrayShape, v: u64) -> InstrId {
        self.splat(t, like, ConstantData::Int(vec![i128::from(v)]))
    }

    /// XLA's reduce-precision rule on the bits of `x`'s own type: round the
    /// mantissa to `mb` bits (to nearest even, by adding a bias and masking),
    /// then overflow to inf / underflow to zero against an exponent of `eb`
    /// bits; NaN stays NaN (inf when no mantissa bit is left).
    fn reduce_precision_on_bits(
        &mut self,
        x: InstrId,
        arr: &ArrayShape,
        eb: i64,
        mb: i64,
    ) -> Option<InstrId> {
        let fmt = arr.dtype.float_format()?;
        let (seb, smb) = (fmt.exponent_bits as u64, fmt.mantissa_bits as u64);
        let w = seb + smb + 1;
        let ut = ElementType::unsigned_of_width(w as u32)?;
        let (eb, mb) = (u64::try_from(eb).ok()?, u64::try_from(mb).ok()?);
        if eb < 1 || (eb >= seb && mb >= smb) {
            // nothing to reduce: the identity
            return Some(x);
        }
        let width_mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let exp_mask = ((1u64 << seb) - 1) << smb;
        let ushape = Shape::array(ut, arr.dims.clone());
        let fshape = Shape::Array(arr.clone());
        let mut v = self.push(Opcode::BitcastConvert, ushape.clone(), vec![x]);
        let bits = v;
        if mb < smb {
            let shift = smb - mb;
            let last = 1u64 << shift;
            let c_last = self.uint(ut, arr, last);
            let c_shift = self.uint(ut, arr, shift);
            let c_half = self.uint(ut, arr, (last >> 1) - 1);
            let c_trunc = self.uint(ut, arr, !(last - 1) & width_mask);
            let lb = self.push(Opcode::And, ushape.clone(), vec![v, c_last]);
            let lb = self.push(Opcode::ShiftRightLogical, ushape.clone(), vec![lb, c_shift]);
            let bias = self.push(Opcode::Add, ushape.clone(), vec![lb, c_half]);
            let sum = self.push(Opcode::Add, ushape.clone(), vec![v, bias]);
            v = self.push(Opcode::And, ushape.clone(), vec![sum, c_trunc]);
        }
        if eb < seb {
            let src_bias = (1u64 << (seb - 1)) - 1;
            let red_bias = (1u64 << (eb - 1)) - 1;
            let c_sign = self.uint(ut, arr, 1u64 << (w - 1));
            let c_exp = self.uint(ut, arr, exp_mask);
            let c_over = self.uint(ut, arr, (src_bias + red_bias) << smb);
            let c_under = self.uint(ut, arr, (src_bias - red_bias) << smb);
            let sign = self.push(Opcode::And, ushape.clone(), vec![v, c_sign]);
            let e = self.push(Opcode::And, ushape.clone(), vec![v, c_exp]);
            let inf = self.push(Opcode::Or, ushape.clone(), vec![sign, c_exp]);
            let over = self.compare(arr, e, c_over, ComparisonDirection::Gt);
            let under = self.compare(arr, e, c_under, ComparisonDirection::Le);
            let v1 = self.push(Opcode::Select, ushape.clone(), vec![under, sign, v]);
            v = self.push(Opcode::Select, ushape.clone(), vec![over, inf, v1]);
        }
        let r = self.push(Opcode::BitcastConvert, fshape.clone(), vec![v]);
        // NaN as the rule reads the bits: an all-ones exponent with a
        // nonzero mantissa (for IEEE types exactly `x != x`; for f8e4m3fn,
        // which has no infinity, also the finite 0x79..0x7e, which the rule
        // passes through unrounded, as measured on iree-cpu)
        let c_abs = self.uint(ut, arr, width_mask >> 1);
        let magnitude = self.push(Opcode::And, ushape.clone(), vec![bits, c_abs]);
        let c_inf = self.uint(ut, arr, exp_mask);
        let nan = self.compare(arr, magnitude, c_inf, ComparisonDirection::Gt);
        let nan_value = if mb > 0 {
            x
        } else {
            let c = self.uint(ut, arr, exp_mask);
            self.push(Opcode::BitcastConvert, fshape.clone(), vec![c])
        };
        Some(self.push(Opcode::Select, fshape, vec![nan, nan_value, r]))
    }

    /// The convolution's input padded explicitly with zeros (its padding
    /// when `padding_too`, its input-dilation holes as interior padding when
    /// `holes_too`); the caller clears what was made explicit. None when
    /// there is nothing to make explicit, the padding is negative, or the
    /// input is dilated and `holes_too` is off.
    fn explicit_padding(
        &mut self,
        conv: &Instruction,
        padding_too: bool,
        holes_too: bool,
    ) -> Option<(Opcode, Vec<InstrId>)> {
        let window = conv.attrs.window.as_ref()?;
        let cd = conv.attrs.conv_dims.as_ref()?;
        let &[lhs, rhs] = conv.operands.as_slice() else {
            return None;
        };
        let padded = |w: &crate::hlo::WindowDim| w.pad_low != 0 || w.pad_high != 0;
        let holes = |w: &crate::hlo::WindowDim| w.base_dilation != 1;
        let wanted = window
            .iter()
            .any(|w| (padding_too && padded(w)) || (holes_too && holes(w)));
        if !wanted
            // a negative padding crops, as a `pad` with negative edges does
            || window.iter().any(|w| w.base_dilation < 1)
            // a dilation the variant kept would apply to the padded input
            || (!holes_too && window.iter().any(holes))
            || window.len() != cd.input_spatial.len()
        {
            return None;
        }
        let s = self.shape_of(lhs)?.clone();
        if !s.dtype.is_float() {
            return None;
        }
        let mut padding: Vec<PadDim> = s
            .dims
            .iter()
            .map(|_| PadDim {
                low: 0,
                high: 0,
                interior: 0,
            })
            .collect();
        let mut dims = s.dims.clone();
        for (w, &d) in window.iter().zip(&cd.input_spatial) {
            let d = usize::try_from(d).ok().filter(|&d| d < dims.len())?;
            if holes_too && dims[d] > 0 {
                padding[d].interior = w.base_dilation - 1;
                dims[d] = (dims[d] - 1) * w.base_dilation + 1;
            }
            if padding_too {
                padding[d].low = w.pad_low;
                padding[d].high = w.pad_high;
                dims[d] += w.pad_low + w.pad_high;
            }
        }
        let zero = self.splat(
            s.dtype,
            &ArrayShape::new(s.dtype, Vec::<i64>::new()),
            ConstantData::Float(vec![0.0]),
        );
        let mut pad = Instruction::new(
            String::new(),
            Opcode::Pad,
            Shape::array(s.dtype, dims),
            vec![lhs, zero],
        );
        pad.attrs.padding = Some(padding);
        let padded = self.push_instr(pad);
        Some((Opcode::Convolution, vec![padded, rhs]))
    }
}

#[cfg(test)]
mod tests;
