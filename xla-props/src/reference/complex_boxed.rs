//! reduce, reduce-window and sort of `c128` operands with any computation
//! (a product, JAX's lexicographic max, its total-order comparator, ...).
//!
//! The element kernels carry one 64-bit word per element, which a `c128`
//! element does not fit. So each `c128` element is boxed: the kernels see a
//! `u64` index into a table of `(re, im)` values, and the computation is
//! called on the values those indices name (`scalar::call_boxed`); a `c128`
//! result is appended to the table and travels as its index. The kernels'
//! order of application (a left fold in row-major order, a stable merge
//! sort) is theirs, unchanged; each complex op in the computation rounds
//! each component once, as everywhere in the reference.

use std::cell::RefCell;
use std::rc::Rc;

use super::error::{bad, to_apply};
use super::reduction::{reduce_window_with, reduce_with, Combiner};
use super::scalar::{ScalarFn, Table};
use super::sort::sort_with;
use super::{Calls, OpError};
use crate::hlo::{ArrayShape, ElementType, Instruction, Opcode, Shape};
use crate::literal::{Literal, Value};

/// Whether `ins` needs boxing: a reduce, reduce-window or sort with a `c128`
/// operand.
pub(crate) fn applies(ins: &Instruction, ops: &[&Literal]) -> bool {
    matches!(
        ins.opcode,
        Opcode::Reduce | Opcode::ReduceWindow | Opcode::Sort
    ) && ops.iter().any(|l| l.dtype() == ElementType::C128)
}

/// `s` with `c128` replaced by `u64` (the boxed type).
fn boxed_shape(s: &ArrayShape) -> ArrayShape {
    let mut b = s.clone();
    if b.dtype == ElementType::C128 {
        b.dtype = ElementType::U64;
    }
    b
}

/// A `c128` literal as the indices of its elements, appended to `table`;
/// any other literal unchanged.
fn box_literal(l: &Literal, table: &Table) -> Result<Literal, OpError> {
    if l.dtype() != ElementType::C128 {
        return Ok(l.clone());
    }
    let mut t = table.borrow_mut();
    let start = t.len() as u64;
    let values = l.to_complex_vec();
    let idx: Vec<u64> = (start..start + values.len() as u64).collect();
    t.extend(values);
    Ok(Literal::from_bits(&boxed_shape(&l.shape()), &idx)?)
}

/// The `c128` literal of shape `s` whose elements `l`'s indices name.
fn unbox_literal(l: &Literal, s: &ArrayShape, table: &Table) -> Result<Literal, OpError> {
    if s.dtype != ElementType::C128 {
        return Ok(l.clone());
    }
    let t = table.borrow();
    let values = (0..l.element_count())
        .map(|i| {
            let k = l.get_bits(i) as usize;
            t.get(k)
                .copied()
                .ok_or_else(|| bad(format!("boxed c128 index {k} out of the table")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Literal::from_complex(s, &values)?)
}

/// Evaluates a reduce, reduce-window or sort with `c128` operands boxed.
pub(crate) fn dispatch(
    run: &mut dyn Calls,
    ins: &Instruction,
    ops: &[&Literal],
) -> Result<Value, OpError> {
    let comp = to_apply(ins)?;
    let table: Table = Rc::new(RefCell::new(Vec::new()));
    let boxed = ops
        .iter()
        .map(|l| box_literal(l, &table))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&Literal> = boxed.iter().collect();
    let p = with_array_shapes(ins, boxed_shape);
    let f = ScalarFn::Boxed(comp, table.clone());
    let v = match ins.opcode {
        Opcode::Reduce => reduce_with(run, &p, &refs, Some(Combiner::Computation(f)))?,
        Opcode::ReduceWindow => reduce_window_with(run, &p, &refs, Some(Combiner::Computation(f)))?,
        Opcode::Sort => sort_with(run, &p, &refs, Some(f))?,
        op => return Err(bad(format!("{op} is not boxed"))),
    };
    match (v, &ins.shape) {
        (Value::Array(l), Shape::Array(s)) => Ok(Value::Array(unbox_literal(&l, s, &table)?)),
        (Value::Tuple(vs), Shape::Tuple(ss)) if vs.len() == ss.len() => vs
            .iter()
            .zip(ss)
            .map(|(v, s)| match (v, s) {
                (Value::Array(l), Shape::Array(s)) => {
                    Ok(Value::Array(unbox_literal(l, s, &table)?))
                }
                (v, _) => Ok(v.clone()),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Tuple),
        (v, s) => Err(bad(format!("{} gave {} for {s}", ins.opcode, v.shape()))),
    }
}

/// The instruction with each array of its shape (the shape itself, or a
/// tuple's elements) replaced by `f` of it.
pub(super) fn with_array_shapes(
    ins: &Instruction,
    f: impl Fn(&ArrayShape) -> ArrayShape,
) -> Instruction {
    let mut p = ins.clone();
    p.shape = match &ins.shape {
        Shape::Array(a) => Shape::Array(f(a)),
        Shape::Tuple(t) => Shape::Tuple(
            t.iter()
                .map(|s| match s {
                    Shape::Array(a) => Shape::Array(f(a)),
                    s => s.clone(),
                })
                .collect(),
        ),
        s => s.clone(),
    };
    p
}

#[cfg(test)]
mod tests {
    use crate::hlo::{parse_module, ArrayShape, ElementType};
    use crate::literal::Literal;

    fn c128(dims: &[i64], v: &[(f64, f64)]) -> Literal {
        Literal::from_complex(&ArrayShape::new(ElementType::C128, dims.to_vec()), v).unwrap()
    }

    fn run(hlo: &str, args: &[Literal]) -> Literal {
        let m = parse_module(hlo).unwrap();
        crate::reference::evaluate(&m, args).unwrap().remove(0)
    }

    #[test]
    fn a_c128_product_reduction_multiplies_in_order() {
        // (1+2i)(3-i) = 5+5i; (5+5i)(0+1i) = -5+5i
        let x = c128(&[3], &[(1.0, 2.0), (3.0, -1.0), (0.0, 1.0)]);
        let y = run(
            "HloModule m\nmul {\n  a = c128[] parameter(0)\n  b = c128[] parameter(1)\n  ROOT m = c128[] multiply(a, b)\n}\nENTRY e {\n  x = c128[3] parameter(0)\n  one = c128[] constant((1, 0))\n  ROOT r = c128[] reduce(x, one), dimensions={0}, to_apply=mul\n}\n",
            &[x],
        );
        assert_eq!(y.to_complex_vec(), vec![(-5.0, 5.0)]);
    }

    #[test]
    fn a_c128_sort_by_real_part_moves_whole_elements() {
        let x = c128(&[3], &[(2.0, 7.0), (-1.0, 8.0), (0.5, 9.0)]);
        let y = run(
            "HloModule m\nlt {\n  a = c128[] parameter(0)\n  b = c128[] parameter(1)\n  ra = f64[] real(a)\n  rb = f64[] real(b)\n  ROOT l = pred[] compare(ra, rb), direction=LT\n}\nENTRY e {\n  x = c128[3] parameter(0)\n  ROOT s = c128[3] sort(x), dimensions={0}, to_apply=lt\n}\n",
            &[x],
        );
        assert_eq!(
            y.to_complex_vec(),
            vec![(-1.0, 8.0), (0.5, 9.0), (2.0, 7.0)]
        );
    }
}
