//! The opcode dispatch: one `match` on the opcode, one short arm per op,
//! each calling the op family's kernel with the instruction's operands and
//! attributes ([`Operands`]).

use super::elem::{err, nth, udims, Res, ValRef};
use super::engine::Compiled;
use super::{contraction, elem, indexing};
use crate::backend::error::BackendError;
use crate::hlo::{ArrayShape, Category, CompId, Instruction, Opcode};
use crate::literal::{Literal, Value};
use crate::reference::collective;

impl Compiled {
    /// One instruction: one `match` on the opcode, one short arm per op
    /// (data ops, elementwise and shape ops, in [`Compiled::data_op`]).
    pub(super) fn eval(&self, cid: CompId, ins: &Instruction, ops: &[ValRef<'_>]) -> Res<Value> {
        let x = Operands { ins, ops };
        let a = &ins.attrs;
        match ins.opcode {
            Opcode::Parameter | Opcode::Constant => {
                err("internal error: parameter or constant evaluated")
            }
            Opcode::Tuple => Ok(Value::Tuple(ops.iter().map(|r| r.to_value()).collect())),
            Opcode::GetTupleElement => get_tuple_element(ins, ops),
            Opcode::Scatter => self.scatter(ins, ops),
            Opcode::Reduce => self.reduce(ins, ops),
            Opcode::ReduceWindow => self.reduce_window(ins, ops),
            Opcode::SelectAndScatter => self.select_and_scatter(ins, ops),
            Opcode::Sort => self.sort(ins, ops),
            Opcode::TopK => self.topk(ins, ops),
            Opcode::RngBitGenerator => super::rng::rng_bit_generator(ins, x.arr(0)?),
            Opcode::TriangularSolve => array(super::linalg::triangular_solve(
                x.arr(0)?,
                x.arr(1)?,
                a,
                x.out_shape()?.0,
            )?),
            Opcode::Map => self.map(ins, ops),
            Opcode::Dot | Opcode::Convolution => {
                let (l, r, out) = (x.arr(0)?, x.arr(1)?, x.out_shape()?.0);
                let real = |l: &Literal, r: &Literal, o: &ArrayShape| match ins.opcode {
                    Opcode::Dot => contraction::dot_with_algorithm(l, r, a, o),
                    _ => contraction::convolution(l, r, a, o),
                };
                if out.dtype.is_complex() || l.dtype().is_complex() {
                    array(super::complex::contraction(l, r, out, real)?)
                } else {
                    array(real(l, r, out)?)
                }
            }
            Opcode::Fusion => {
                let c = a
                    .calls
                    .first()
                    .copied()
                    .ok_or_else(|| BackendError::Execute("fusion: missing calls".into()))?;
                self.run(c, ops, None)
            }
            Opcode::Call => self.run(x.callee(a.to_apply, "to_apply")?, ops, None),
            Opcode::While => self.run_while(
                x.callee(a.condition, "condition")?,
                x.callee(a.body, "body")?,
                ops,
            ),
            Opcode::Conditional => self.conditional(ins, ops),
            _ if collective::is_spmd_instruction(ins) => self.multi_device(ins, ops),
            _ => self.data_op(cid, &x),
        }
    }

    /// Elementwise and shape ops: no called computation.
    fn data_op(&self, cid: CompId, x: &Operands<'_, '_>) -> Res<Value> {
        use super::elementwise as ew;
        use super::shape_ops as so;
        let (ins, a) = (x.ins, &x.ins.attrs);
        let op = ins.opcode;
        match op {
            Opcode::Copy => array(so::copy(x.arr(0)?)),
            Opcode::Bitcast => {
                let (to, dims) = x.out_shape()?;
                let from = self
                    .module
                    .comp(cid)
                    .instr(ins.operands[0])
                    .shape
                    .as_array()
                    .cloned()
                    .unwrap_or_else(|| x.arr(0).map(|l| l.shape()).unwrap_or_else(|_| to.clone()));
                array(so::bitcast(x.arr(0)?, &from, to, &dims)?)
            }
            Opcode::Iota => {
                let (s, dims) = x.out_shape()?;
                let d = a.iota_dimension.unwrap_or(0);
                array(ew::iota(
                    s.dtype,
                    &dims,
                    usize::try_from(d).unwrap_or(usize::MAX),
                )?)
            }
            Opcode::Compare => {
                let d = a
                    .direction
                    .ok_or_else(|| BackendError::Execute("compare: missing direction".into()))?;
                array(ew::compare(x.arr(0)?, x.arr(1)?, d, a.comparison_type)?)
            }
            Opcode::Real | Opcode::Imag => array(super::complex::unary(
                op,
                x.arr(0)?,
                x.out_shape()?.0.dtype,
            )?),
            Opcode::Complex => array(super::complex::make_complex(x.arr(0)?, x.arr(1)?)?),
            Opcode::Select => array(ew::select(x.arr(0)?, x.arr(1)?, x.arr(2)?)?),
            Opcode::Clamp => array(ew::clamp(x.arr(0)?, x.arr(1)?, x.arr(2)?)?),
            Opcode::Convert => array(ew::convert(x.arr(0)?, x.out_shape()?.0.dtype)?),
            Opcode::BitcastConvert => {
                let (s, dims) = x.out_shape()?;
                array(ew::bitcast_convert(x.arr(0)?, s.dtype, &dims)?)
            }
            Opcode::ReducePrecision => array(ew::reduce_precision(
                x.arr(0)?,
                a.exponent_bits.unwrap_or(-1),
                a.mantissa_bits.unwrap_or(-1),
            )?),
            _ if op.category() == Category::ElementwiseUnary => {
                array(ew::unary(op, x.arr(0)?, x.out_shape()?.0.dtype)?)
            }
            _ if op.category() == Category::ElementwiseBinary => {
                array(ew::binary(op, x.arr(0)?, x.arr(1)?)?)
            }
            _ if op.moves_data() => self.shape_op(x),
            _ => Err(BackendError::unsupported(format!("opcode `{op}`"))),
        }
    }

    /// Shape and indexing ops: data movement, no arithmetic.
    fn shape_op(&self, x: &Operands<'_, '_>) -> Res<Value> {
        use super::shape_ops as so;
        let (ins, a) = (x.ins, &x.ins.attrs);
        let op = ins.opcode;
        match op {
            Opcode::Broadcast => {
                // a scalar operand may omit `dimensions={}`
                let v = x.arr(0)?;
                let dims = match (&a.dimensions, v.dims().len()) {
                    (None, 0) => Vec::new(),
                    _ => x.attr(a.dimensions.as_ref(), "dimensions")?,
                };
                array(so::broadcast(v, &x.out_shape()?.1, &dims)?)
            }
            Opcode::Reshape => array(so::reshape(x.arr(0)?, &x.out_shape()?.1)?),
            Opcode::Transpose => array(so::transpose(
                x.arr(0)?,
                &x.attr(a.dimensions.as_ref(), "dimensions")?,
            )?),
            Opcode::Slice => {
                let sl = a.slice.as_ref().ok_or_else(|| {
                    BackendError::Execute("slice: missing attribute slice".into())
                })?;
                array(so::slice(x.arr(0)?, sl)?)
            }
            Opcode::Concatenate => {
                let d = x.attr(a.dimensions.as_ref(), "dimensions")?;
                let xs: Vec<&Literal> = (0..x.ops.len()).map(|k| x.arr(k)).collect::<Res<_>>()?;
                array(so::concatenate(
                    &xs,
                    d.first()
                        .and_then(|&d| usize::try_from(d).ok())
                        .unwrap_or(usize::MAX),
                )?)
            }
            Opcode::Pad => {
                let p = a.padding.as_ref().ok_or_else(|| {
                    BackendError::Execute("pad: missing attribute padding".into())
                })?;
                array(so::pad(x.arr(0)?, x.arr(1)?, p)?)
            }
            Opcode::Reverse => array(so::reverse(
                x.arr(0)?,
                &x.attr(a.dimensions.as_ref(), "dimensions")?,
            )?),
            Opcode::DynamicSlice => {
                let starts = self.start_indices(x.ops, 1)?;
                array(so::dynamic_slice(
                    x.arr(0)?,
                    &starts,
                    &x.attr(a.dynamic_slice_sizes.as_ref(), "dynamic_slice_sizes")?,
                )?)
            }
            Opcode::DynamicUpdateSlice => {
                let starts = self.start_indices(x.ops, 2)?;
                array(so::dynamic_update_slice(x.arr(0)?, x.arr(1)?, &starts)?)
            }
            Opcode::Gather => {
                let g = a.gather_dims.as_ref().ok_or_else(|| {
                    BackendError::Execute("gather: missing dimension numbers".into())
                })?;
                let dims = x.out_shape()?.1;
                let idx = indexing::gather_indices(x.arr(0)?, x.arr(1)?, g, &dims)?;
                array(so::gather_flat(x.arr(0)?, &idx, &dims, None)?)
            }
            _ => Err(BackendError::unsupported(format!("opcode `{op}`"))),
        }
    }

    /// Dynamic start indices from operands `first..` (scalars, or one rank-1 vector).
    fn start_indices(&self, ops: &[ValRef<'_>], first: usize) -> Res<Vec<i64>> {
        let rest = ops.get(first..).unwrap_or(&[]);
        if rest.len() == 1 {
            let l = rest[0].array("dynamic start index")?;
            if l.dims().len() == 1 {
                return elem::int_values(l, "dynamic start index");
            }
        }
        rest.iter()
            .map(|r| elem::scalar_int(r.array("dynamic start index")?, "dynamic start index"))
            .collect()
    }
}

/// An instruction's operands and attributes, with errors that name the op.
pub(super) struct Operands<'i, 'o> {
    ins: &'i Instruction,
    ops: &'o [ValRef<'o>],
}

impl Operands<'_, '_> {
    fn name(&self) -> &'static str {
        self.ins.opcode.name()
    }

    /// Operand `k` as an array.
    fn arr(&self, k: usize) -> Res<&Literal> {
        match self.ops.get(k) {
            Some(r) => r.array(self.name()),
            None => err(format!("{}: missing operand {k}", self.name())),
        }
    }

    /// The result's array shape and its dimensions.
    fn out_shape(&self) -> Res<(&ArrayShape, Vec<usize>)> {
        let name = self.name();
        let a = self.ins.shape.as_array().ok_or_else(|| {
            BackendError::Execute(format!("{name}: expected an array result shape"))
        })?;
        Ok((a, udims(&a.dims, name)?))
    }

    /// A required list attribute.
    fn attr(&self, v: Option<&Vec<i64>>, what: &str) -> Res<Vec<i64>> {
        v.cloned().ok_or_else(|| {
            BackendError::Execute(format!("{}: missing attribute {what}", self.name()))
        })
    }

    /// A required called computation.
    fn callee(&self, c: Option<CompId>, what: &str) -> Res<CompId> {
        c.ok_or_else(|| BackendError::Execute(format!("{}: missing attribute {what}", self.name())))
    }
}

fn array(l: Literal) -> Res<Value> {
    Ok(Value::Array(l))
}

fn get_tuple_element(ins: &Instruction, ops: &[ValRef<'_>]) -> Res<Value> {
    match ops.first() {
        Some(ValRef::Tuple(t)) => {
            let i = ins.attrs.index.unwrap_or(-1);
            nth(t, i).cloned().ok_or_else(|| {
                BackendError::Execute(format!("get-tuple-element: index {i} out of range"))
            })
        }
        _ => err("get-tuple-element: operand is not a tuple"),
    }
}
