//! Complex operands and results (`c64`, `c128`).
//!
//! Three ways, chosen per opcode:
//!
//! - **By planes.** An op that moves elements (reshape, slice, gather,
//!   select, ...) or acts on each component alone (add, subtract, negate, a
//!   sum reduction) is the real op applied to the real plane and to the
//!   imaginary plane. The real kernels do the work, so every index rule is
//!   the real op's, and each component is rounded once as a real result is.
//! - **Element by element.** multiply, divide, power and the transcendentals
//!   compute in f64 pairs (`complex_math`) and round each component once.
//! - **dot** contracts one real dot per component over a stacked extra
//!   dimension (`re = Σ ar·br + (-ai)·bi`, `im = Σ ar·bi + ai·br`), so the
//!   real dot's exact accumulation rounds each component once.
//!
//! A reducer, comparator or scatter computation on `c64` runs as any other
//! (a `c64` element is a 64-bit word on the bit paths); a reduce,
//! reduce-window or sort of `c128` boxes its elements (`complex_boxed.rs`);
//! a scatter, map or select-and-scatter computation on `c128` is
//! `Unsupported` (128-bit elements do not fit those paths). fft is a
//! direct transform with exact sums (`fft.rs`).

use super::complex_boxed::with_array_shapes;
use super::complex_math::{self, C};
use super::error::out;
use super::reduction::{reduce_window_with, reduce_with, Combiner};
use super::{contraction, conversion, linalg, Calls, OpError};
use crate::hlo::{ArrayShape, ComparisonDirection, Instruction, Opcode, Shape};
use crate::literal::{component_type, plane_shape, ArrayData, Literal, Value};

fn unsupported<T>(msg: impl Into<String>) -> Result<T, OpError> {
    Err(OpError::Unsupported(msg.into()))
}

/// Ops that never look at element values: they work on complex values as on any other.
fn value_blind(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Parameter
            | Opcode::Constant
            | Opcode::Tuple
            | Opcode::GetTupleElement
            | Opcode::Copy
            | Opcode::Call
            | Opcode::Fusion
            | Opcode::While
            | Opcode::Conditional
    )
}

fn shape_has_complex(s: &Shape) -> bool {
    s.leaves().iter().any(|a| a.dtype.is_complex())
}

/// Whether `ins` needs this module: a complex operand or result, and an op
/// that looks at element values.
pub(crate) fn applies(ins: &Instruction, ops: &[&Value]) -> bool {
    matches!(ins.opcode, Opcode::Real | Opcode::Imag | Opcode::Complex)
        || !value_blind(ins.opcode)
            && (shape_has_complex(&ins.shape) || ops.iter().any(|v| shape_has_complex(&v.shape())))
}

/// Ops that are the real op on each plane (other operands, e.g. predicates
/// and indices, are given to both planes unchanged).
fn by_planes(op: Opcode) -> bool {
    op.moves_data()
        || matches!(
            op,
            Opcode::Add | Opcode::Subtract | Opcode::Negate | Opcode::Select
        )
}

/// Evaluates an instruction with complex operands or result.
pub(crate) fn dispatch(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Value],
) -> Result<Value, OpError> {
    let lits = ops
        .iter()
        .map(|v| match v {
            Value::Array(l) => Ok(l),
            v => Err(OpError::Invalid(format!(
                "{} takes arrays, not {}",
                ins.opcode,
                v.shape()
            ))),
        })
        .collect::<Result<Vec<&Literal>, _>>();
    match ins.opcode {
        Opcode::Real => part(lits?[0], out(ins)?, true).map(Value::Array),
        Opcode::Imag => part(lits?[0], out(ins)?, false).map(Value::Array),
        Opcode::Complex => {
            let l = lits?;
            Ok(Value::Array(Literal::from_planes(l[0], l[1])?))
        }
        op if by_planes(op) => planes(run, ins, &lits?, None).map(Value::Array),
        // a bitcast that keeps the element type only relayouts the elements:
        // the same relayout of each plane (a plane keeps the layout)
        Opcode::Bitcast
            if ops.len() == 1
                && ins.shape.as_array().map(|a| a.dtype)
                    == ops[0].shape().leaves().first().map(|a| a.dtype) =>
        {
            planes(run, ins, &lits?, None).map(Value::Array)
        }
        Opcode::Convert => convert(lits?[0], out(ins)?).map(Value::Array),
        Opcode::Compare => compare(ins, &lits?).map(Value::Array),
        Opcode::Abs => {
            let x = lits?[0];
            let v: Vec<f64> = x
                .to_complex_vec()
                .into_iter()
                .map(complex_math::abs)
                .collect();
            Ok(Value::Array(Literal::from_f64s(out(ins)?, &v)?))
        }
        Opcode::Dot => dot(ins, &lits?).map(Value::Array),
        Opcode::Fft => super::fft::fft(ins, lits?[0]).map(Value::Array),
        Opcode::Iota => iota(run, ins).map(Value::Array),
        Opcode::TriangularSolve => {
            let l = lits?;
            linalg::triangular_solve_complex(l[0], l[1], &ins.attrs, out(ins)?).map(Value::Array)
        }
        Opcode::BitcastConvert => bitcast(lits?[0], out(ins)?).map(Value::Array),
        Opcode::Reduce | Opcode::ReduceWindow => reduce(run, ins, &lits?),
        Opcode::Sort
            if ops.iter().any(|v| {
                v.shape()
                    .leaves()
                    .iter()
                    .any(|a| a.dtype == crate::hlo::ElementType::C128)
            }) =>
        {
            super::complex_boxed::dispatch(run, ins, &lits?)
        }
        op if complex_math::unary(op).is_some() || complex_math::binary(op).is_some() => {
            elementwise(op, &lits?, out(ins)?).map(Value::Array)
        }
        Opcode::Sort | Opcode::Scatter | Opcode::Map | Opcode::SelectAndScatter => {
            if ops.iter().any(|v| {
                v.shape()
                    .leaves()
                    .iter()
                    .any(|a| a.dtype == crate::hlo::ElementType::C128)
            }) || shape_has_complex(&ins.shape)
                && ins
                    .shape
                    .leaves()
                    .iter()
                    .any(|a| a.dtype == crate::hlo::ElementType::C128)
            {
                return unsupported(format!(
                    "{} with a computation on c128 elements (128-bit elements do not fit the bit paths)",
                    ins.opcode
                ));
            }
            run.dispatch_real(ins, ops)
        }
        op => unsupported(format!("{op} on complex element types")),
    }
}

fn dims_usize(s: &ArrayShape) -> Vec<usize> {
    s.dims.iter().map(|&d| d.max(0) as usize).collect()
}

/// real or imag: a plane of a complex operand; of a real operand, itself or zeros.
fn part(x: &Literal, o: &ArrayShape, real: bool) -> Result<Literal, OpError> {
    match x.planes() {
        Some((re, im)) => Ok(if real { re } else { im }),
        None if real => Ok(x.clone()),
        None => Ok(Literal::zeros(o)?),
    }
}

/// The instruction with every complex type in its shape replaced by the component type.
fn plane_instruction(ins: &Instruction) -> Instruction {
    with_array_shapes(ins, plane_shape)
}

/// The real op on each plane; `comb` overrides a reduction's combiner.
fn planes(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Literal],
    comb: Option<Combiner>,
) -> Result<Literal, OpError> {
    let p = plane_instruction(ins);
    let split: Vec<Option<(Literal, Literal)>> = ops.iter().map(|l| l.planes()).collect();
    let mut halves = Vec::with_capacity(2);
    for real in [true, false] {
        let vals: Vec<Value> = ops
            .iter()
            .zip(&split)
            .map(|(l, s)| {
                Value::Array(match s {
                    Some((re, im)) => {
                        if real {
                            re.clone()
                        } else {
                            im.clone()
                        }
                    }
                    None => (*l).clone(),
                })
            })
            .collect();
        let refs: Vec<&Value> = vals.iter().collect();
        let v = match &comb {
            Some(c) => reduce_planes(run, &p, &refs, c.clone())?,
            None => run.dispatch_real(&p, &refs)?,
        };
        match v {
            Value::Array(l) => halves.push(l),
            v => {
                return Err(OpError::Invalid(format!(
                    "a plane of {} gave {}",
                    ins.opcode,
                    v.shape()
                )))
            }
        }
    }
    Ok(Literal::from_planes(&halves[0], &halves[1])?)
}

fn reduce_planes(
    run: &mut dyn Calls,
    p: &Instruction,
    ops: &[&Value],
    comb: Combiner,
) -> Result<Value, OpError> {
    let lits: Vec<&Literal> = ops
        .iter()
        .filter_map(|v| match v {
            Value::Array(l) => Some(l),
            _ => None,
        })
        .collect();
    if p.opcode == Opcode::Reduce {
        reduce_with(run, p, &lits, Some(comb))
    } else {
        reduce_window_with(run, p, &lits, Some(comb))
    }
}

/// reduce and reduce-window: a sum by planes (exact per component); any other
/// reducer on c64 as a computation; on c128 unsupported.
fn reduce(run: &mut dyn Calls, ins: &Instruction, ops: &[&Literal]) -> Result<Value, OpError> {
    let t = ops.first().map(|l| l.dtype());
    let sum = ops.len() == 2
        && ins.attrs.to_apply.is_some_and(|c| plain_add(run, c))
        && t.is_some_and(|t| t.is_complex());
    if sum {
        let c = component_type(t.unwrap_or(crate::hlo::ElementType::C64))
            .ok_or_else(|| OpError::Invalid("reduce of complex without a component type".into()))?;
        return planes(run, ins, ops, Some(Combiner::Plain(Opcode::Add, c))).map(Value::Array);
    }
    if super::complex_boxed::applies(ins, ops) {
        return super::complex_boxed::dispatch(run, ins, ops);
    }
    let vals: Vec<Value> = ops.iter().map(|l| Value::Array((*l).clone())).collect();
    let refs: Vec<&Value> = vals.iter().collect();
    run.dispatch_real(ins, &refs)
}

/// Whether computation `c` is `add(p0, p1)` of its two parameters.
fn plain_add(run: &dyn Calls, c: crate::hlo::CompId) -> bool {
    let Some(comp) = run.module().computations.get(c.index()) else {
        return false;
    };
    let params = comp.parameters();
    let Some(root) = comp.instructions.get(comp.root.index()) else {
        return false;
    };
    params.len() == 2
        && root.opcode == Opcode::Add
        && (root.operands == [params[0], params[1]] || root.operands == [params[1], params[0]])
}

/// An element's bits, the real part's in the low half and the imaginary
/// part's in the high half (the spec interpreter's `Element::toBits`).
fn complex_bits(x: &Literal) -> Result<Vec<u128>, OpError> {
    match x.data() {
        ArrayData::C64(a) => Ok(a
            .iter()
            .map(|c| (u128::from(c.im.to_bits()) << 32) | u128::from(c.re.to_bits()))
            .collect()),
        ArrayData::C128(a) => Ok(a
            .iter()
            .map(|c| (u128::from(c.im.to_bits()) << 64) | u128::from(c.re.to_bits()))
            .collect()),
        _ => Err(OpError::Invalid(format!(
            "bitcast-convert between complex and real ({})",
            x.dtype()
        ))),
    }
}

/// A c64 element from its bits (as [`complex_bits`] lays them out).
fn c64_of_bits(w: u128) -> num_complex::Complex<f32> {
    num_complex::Complex::new(f32::from_bits(w as u32), f32::from_bits((w >> 32) as u32))
}

/// A c128 element from its bits (as [`complex_bits`] lays them out).
fn c128_of_bits(w: u128) -> num_complex::Complex<f64> {
    num_complex::Complex::new(f64::from_bits(w as u64), f64::from_bits((w >> 64) as u64))
}

/// bitcast-convert between complex types: the bits of each element (see
/// [`complex_bits`]) reinterpreted; between c128 and c64 an element is two
/// of the other (a minor dimension of 2 on the c64 side), the first one in
/// the low bits.
fn bitcast(x: &Literal, o: &ArrayShape) -> Result<Literal, OpError> {
    let b = complex_bits(x)?;
    let (wi, wo) = (x.dtype().bit_width(), o.dtype.bit_width());
    let words: Vec<u128> = if wi == wo {
        b
    } else if wi > wo {
        let mask = (1u128 << wo) - 1;
        b.iter().flat_map(|&v| [v & mask, v >> wo]).collect()
    } else {
        b.chunks(2)
            .map(|c| c[0] | c.get(1).map_or(0, |&h| h << wi))
            .collect()
    };
    let dims = dims_usize(o);
    let shape_err =
        |e: ndarray::ShapeError| OpError::Invalid(format!("bitcast-convert to {o}: {e}"));
    let data = match o.dtype {
        crate::hlo::ElementType::C64 => {
            ArrayData::C64(from_words(&dims, &words, c64_of_bits).map_err(shape_err)?)
        }
        crate::hlo::ElementType::C128 => {
            ArrayData::C128(from_words(&dims, &words, c128_of_bits).map_err(shape_err)?)
        }
        t => {
            return unsupported(format!(
                "bitcast-convert of {} to {t}: complex and real types do not mix",
                x.dtype()
            ))
        }
    };
    Ok(Literal::new(data).with_layout(o.layout.clone()))
}

/// The array of `dims` whose elements are `element(w)` of the words in order.
fn from_words<T>(
    dims: &[usize],
    words: &[u128],
    element: impl Fn(u128) -> T,
) -> Result<ndarray::ArrayD<T>, ndarray::ShapeError> {
    ndarray::ArrayD::from_shape_vec(
        ndarray::IxDyn(dims),
        words.iter().map(|&w| element(w)).collect(),
    )
}

/// iota of a complex type: the real iota, and a zero imaginary part.
fn iota(run: &mut dyn Calls, ins: &Instruction) -> Result<Literal, OpError> {
    let re = match run.dispatch_real(&plane_instruction(ins), &[])? {
        Value::Array(l) => l,
        v => {
            return Err(OpError::Invalid(format!(
                "iota gave {} for {}",
                v.shape(),
                ins.shape
            )))
        }
    };
    let im = Literal::zeros(&re.shape())?;
    Ok(Literal::from_planes(&re, &im)?)
}

/// convert: real -> complex (the real part converted, a zero imaginary part),
/// complex -> complex (each part rounded once). complex -> real is not defined by XLA.
fn convert(x: &Literal, o: &ArrayShape) -> Result<Literal, OpError> {
    let Some(c) = component_type(o.dtype) else {
        return unsupported(format!(
            "convert {} to {}: complex to real is not defined",
            x.dtype(),
            o.dtype
        ));
    };
    let ps = ArrayShape::new(c, o.dims.clone());
    let (re, im) = match x.planes() {
        Some((re, im)) => (
            conversion::convert(&re, &ps)?,
            conversion::convert(&im, &ps)?,
        ),
        None => (conversion::convert(x, &ps)?, Literal::zeros(&ps)?),
    };
    Ok(Literal::from_planes(&re, &im)?.with_layout(o.layout.clone()))
}

/// compare EQ/NE: both components equal (IEEE: NaN != NaN).
fn compare(ins: &Instruction, ops: &[&Literal]) -> Result<Literal, OpError> {
    let dir = ins
        .attrs
        .direction
        .ok_or_else(|| OpError::Invalid("compare without direction".into()))?;
    let eq = match dir {
        ComparisonDirection::Eq => true,
        ComparisonDirection::Ne => false,
        d => return unsupported(format!("compare {d:?} on complex values (not ordered)")),
    };
    let (a, b) = (ops[0].to_complex_vec(), ops[1].to_complex_vec());
    let n = a.len().max(b.len());
    let at = |v: &[C], i: usize| if v.len() == 1 { v[0] } else { v[i] };
    let v: Vec<f64> = (0..n)
        .map(|i| {
            let (x, y) = (at(&a, i), at(&b, i));
            let same = x.0 == y.0 && x.1 == y.1;
            f64::from(u8::from(same == eq))
        })
        .collect();
    Ok(Literal::from_f64s(out(ins)?, &v)?)
}

/// multiply, divide, power and the unary functions, element by element.
fn elementwise(op: Opcode, ops: &[&Literal], o: &ArrayShape) -> Result<Literal, OpError> {
    let xs: Vec<Vec<C>> = ops.iter().map(|l| l.to_complex_vec()).collect();
    let n = xs.iter().map(Vec::len).max().unwrap_or(0);
    let at = |v: &[C], i: usize| if v.len() == 1 { v[0] } else { v[i] };
    let v: Vec<C> = if let Some(f) = complex_math::unary(op).filter(|_| xs.len() == 1) {
        xs[0].iter().map(|&x| f(x)).collect()
    } else if let Some(f) = complex_math::binary(op).filter(|_| xs.len() == 2) {
        (0..n).map(|i| f(at(&xs[0], i), at(&xs[1], i))).collect()
    } else {
        return Err(OpError::Invalid(format!(
            "{op} cannot take {} operands",
            xs.len()
        )));
    };
    Ok(Literal::from_complex(o, &v)?)
}

/// The literal with one more minor dimension of size 2 holding `(a, b)` of each element.
fn stack(a: &Literal, b: &Literal) -> Result<Literal, OpError> {
    let mut s = a.shape();
    s.layout = None;
    s.dims.push(2);
    let v: Vec<f64> = a
        .to_f64_vec()
        .into_iter()
        .zip(b.to_f64_vec())
        .flat_map(|(x, y)| [x, y])
        .collect();
    Ok(Literal::from_f64s(&s, &v)?)
}

/// dot on complex (or mixed) operands: one real dot per component.
fn dot(ins: &Instruction, ops: &[&Literal]) -> Result<Literal, OpError> {
    let o = out(ins)?;
    let c = component_type(o.dtype)
        .ok_or_else(|| OpError::Invalid(format!("a dot of complex operands gives {o}")))?;
    let split = |l: &Literal| -> Result<(Literal, Literal), OpError> {
        match l.planes() {
            Some(p) => Ok(p),
            None => {
                let s = ArrayShape::new(c, l.shape().dims);
                Ok((conversion::convert(l, &s)?, Literal::zeros(&s)?))
            }
        }
    };
    let ((ar, ai), (br, bi)) = (split(ops[0])?, split(ops[1])?);
    let neg_ai = Literal::from_f64s(
        &ai.shape(),
        &ai.to_f64_vec().iter().map(|v| -v).collect::<Vec<_>>(),
    )?;
    let mut dd = ins.attrs.dot_dims.clone().unwrap_or_default();
    dd.lhs_contracting.push(ar.dims().len() as i64);
    dd.rhs_contracting.push(br.dims().len() as i64);
    let ps = ArrayShape::new(c, o.dims.clone());
    let re = contraction::dot(&stack(&ar, &neg_ai)?, &stack(&br, &bi)?, Some(&dd), &ps)?;
    let im = contraction::dot(&stack(&ar, &ai)?, &stack(&bi, &br)?, Some(&dd), &ps)?;
    Ok(Literal::from_planes(&re, &im)?.with_layout(o.layout.clone()))
}

#[cfg(test)]
mod tests {
    use crate::hlo::{parse_module, ArrayShape, ElementType};
    use crate::literal::Literal;

    fn run(hlo: &str, args: &[Literal]) -> Literal {
        let m = parse_module(hlo).unwrap();
        crate::reference::evaluate(&m, args).unwrap().remove(0)
    }

    #[test]
    fn bitcast_splits_a_c128_into_two_c64_real_part_low() {
        let x = Literal::from_complex(
            &ArrayShape::new(ElementType::C128, vec![]),
            &[(
                f64::from_bits(0x0123_4567_89AB_CDEF),
                f64::from_bits(0x1111_1111),
            )],
        )
        .unwrap();
        let y = run(
            "HloModule m\nENTRY e {\n  x = c128[] parameter(0)\n  ROOT y = c64[2] bitcast-convert(x)\n}\n",
            std::slice::from_ref(&x),
        );
        let parts: Vec<(u32, u32)> = y
            .to_complex_vec()
            .iter()
            .map(|&(re, im)| ((re as f32).to_bits(), (im as f32).to_bits()))
            .collect();
        assert_eq!(parts, vec![(0x89AB_CDEF, 0x0123_4567), (0x1111_1111, 0)]);
        let back = run(
            "HloModule m\nENTRY e {\n  y = c64[2] parameter(0)\n  ROOT x = c128[] bitcast-convert(y)\n}\n",
            &[y],
        );
        assert_eq!(back.get_bits(0), x.get_bits(0));
    }

    #[test]
    fn bitcast_of_complex_relayouts_both_parts() {
        let x = Literal::from_complex(
            &ArrayShape::new(ElementType::C64, vec![2, 3]),
            &[
                (1.0, -1.0),
                (2.0, -2.0),
                (3.0, -3.0),
                (4.0, -4.0),
                (5.0, -5.0),
                (6.0, -6.0),
            ],
        )
        .unwrap();
        // the same physical order read as a column-major [3,2]: the transpose
        let y = run(
            "HloModule m\nENTRY e {\n  x = c64[2,3]{1,0} parameter(0)\n  ROOT y = c64[3,2]{0,1} bitcast(x)\n}\n",
            &[x],
        );
        let re: Vec<f64> = y.to_complex_vec().iter().map(|c| c.0).collect();
        let im: Vec<f64> = y.to_complex_vec().iter().map(|c| c.1).collect();
        assert_eq!(re, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        assert_eq!(im, vec![-1.0, -4.0, -2.0, -5.0, -3.0, -6.0]);
    }

    #[test]
    fn iota_of_complex_has_a_zero_imaginary_part() {
        let y = run(
            "HloModule m\nENTRY e {\n  ROOT y = c64[3] iota(), iota_dimension=0\n}\n",
            &[],
        );
        assert_eq!(y.to_complex_vec(), vec![(0.0, 0.0), (1.0, 0.0), (2.0, 0.0)]);
    }
}
