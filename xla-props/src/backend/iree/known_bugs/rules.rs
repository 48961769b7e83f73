//! Which modules an IREE known bug touches: the module rules of the declared
//! rejections and the per-element masks of the any-value bugs.

use super::models::array_of;
use crate::check::output_masks;
use crate::hlo::{ArrayShape, Computation, ElementType, Instruction, Module, Opcode};
use crate::literal::Literal;
use std::collections::HashSet;

/// A `reduce-window` as measured rejected (docs/repro/iree-reduce-window-stride):
/// some dimension has a stride above 1, one output, and a window of size 2
/// or more (dilated) shorter than its (dilated, padded) input: f32[3] or
/// f32[4,3] -> [2,1] with size 2 and stride 2 are rejected; f32[4], f32[5],
/// f32[4,2] -> [2,1], size 1, and a stride-1 dimension are not.
/// True when `m` has a reduce-window or convolution that iree-compile
/// rejects: a window dimension with a stride above 1, one output, and a
/// window of 2 or more whose (dilated) span does not cover the padded,
/// base-dilated input (measured on 25 reduce-windows and 17 one-dimensional
/// convolutions, docs/findings.md).
pub(super) fn has_rejected_strided_window(m: &Module) -> bool {
    any_instruction(m, |i, input| {
        let (Some(window), Some(out)) =
            (i.attrs.window.as_ref(), i.shape.leaves().first().copied())
        else {
            return false;
        };
        // per window dimension: the input and output dimensions it spans
        let dims: Vec<(i64, i64)> = match (i.opcode, &i.attrs.conv_dims) {
            (Opcode::ReduceWindow, _) => (0..window.len() as i64).map(|d| (d, d)).collect(),
            (Opcode::Convolution, Some(cd)) => cd
                .input_spatial
                .iter()
                .copied()
                .zip(cd.output_spatial.iter().copied())
                .collect(),
            _ => return false,
        };
        window.iter().zip(dims).any(|(w, (di, do_))| {
            let size = |s: &ArrayShape, d: i64| {
                usize::try_from(d).ok().and_then(|d| s.dims.get(d).copied())
            };
            let (Some(n), Some(o)) = (size(input, di), size(out, do_)) else {
                return false;
            };
            let span = (w.size - 1) * w.window_dilation + 1;
            let padded = (n - 1).max(0) * w.base_dilation + 1 + w.pad_low + w.pad_high;
            w.stride > 1 && w.size > 1 && o == 1 && span < padded
        })
    })
}

/// True when `rule` holds for some instruction of `m` whose first operand
/// is an array (given with the instruction).
pub(super) fn any_instruction(
    m: &Module,
    rule: impl Fn(&Instruction, &ArrayShape) -> bool,
) -> bool {
    m.computations.iter().any(|c| {
        c.instructions.iter().any(|i| {
            i.operands
                .first()
                .and_then(|o| c.instructions.get(o.index()))
                .and_then(|o| o.shape.as_array())
                .is_some_and(|x| rule(i, x))
        })
    })
}

/// For a root `gather` of one start index per output row (indices `[k, 1]`
/// or `[k]` from an entry parameter, output dimension 0 the batch, the
/// others the slice): the output rows whose start index is out of range
/// (as measured, docs/repro/iree-gather-clamp; in-range rows are right).
pub(super) fn gather_out_of_range_rows(m: &Module, inputs: &[Literal]) -> Option<Vec<Vec<bool>>> {
    let entry = m.entry_computation();
    let root = entry.instr(entry.root);
    let g = root.attrs.gather_dims.as_ref()?;
    let out = root.shape.as_array()?;
    let (operand, indices) = match root.operands.as_slice() {
        [o, i] if root.opcode == Opcode::Gather => (entry.instr(*o), entry.instr(*i)),
        _ => return None,
    };
    let dims = &operand.shape.as_array()?.dims;
    let index_shape = indices.shape.as_array()?;
    let one_index = match index_shape.dims.as_slice() {
        [_, 1] | [_] => g.index_vector_dim == 1,
        _ => false,
    };
    let offsets: Vec<i64> = (1..out.dims.len() as i64).collect();
    if !one_index
        || g.start_index_map.len() != 1
        || g.offset_dims != offsets
        || !g.operand_batching_dims.is_empty()
        || indices.opcode != Opcode::Parameter
    {
        return None;
    }
    let d = usize::try_from(g.start_index_map[0]).ok()?;
    let hi = i128::from(dims.get(d)? - g.slice_sizes.get(d)?);
    let starts = inputs.get(usize::try_from(indices.attrs.parameter_number?).ok()?)?;
    let rows = usize::try_from(*out.dims.first()?).ok()?;
    let per_row = usize::try_from(out.dims[1..].iter().product::<i64>()).ok()?;
    if starts.element_count() != rows {
        return None;
    }
    let bad: Vec<bool> = (0..rows)
        .map(|r| !(0..=hi).contains(&starts.get_i128(r)))
        .collect();
    bad.contains(&true).then(|| {
        vec![bad
            .iter()
            .flat_map(|&b| std::iter::repeat_n(b, per_row))
            .collect()]
    })
}

/// Every element of each output computed element by element from a `sine`,
/// `cosine` or `tan` of f16, bf16 or f32 (the root, or an element of a root
/// tuple): the op itself, or an elementwise op or data movement of it
/// ([`Walk::reads_sine_family`]).
///
/// IREE's error there has no bound to carry through the follower: up to
/// 1,593 ulp in (-1, 0), 1.4M ulp at 2^10 and ±inf or NaN past 2^13
/// (docs/findings.md). So a value computed from the sine's element by
/// negating, scaling, dividing or adding may be any value too; the
/// measured followers (`chains_vs_reference` `then-*`, `operand_forms`
/// fused cases) are off by 3 to 14 ulp at ordinary arguments (`sin(3.49) /
/// 0.28`, `sin(-2.86) * -0.79`) as much as near a zero (`y / cos(1.496)`).
/// An output that reduces or contracts over a sine (a `dot`, a `reduce`)
/// is not covered: each of its elements mixes many, and is judged.
pub(super) fn sine_family_outputs(m: &Module, _inputs: &[Literal]) -> Option<Vec<Vec<bool>>> {
    output_masks(m, |o, n| {
        let mut walk = Walk::default();
        let hit = walk.reads_sine_family(m, m.entry_computation(), o, 0);
        vec![hit; n]
    })
}

const SINE_FAMILY: [Opcode; 3] = [Opcode::Sine, Opcode::Cosine, Opcode::Tan];

/// How deep [`Walk::reads_sine_family`] looks: a chain of followers this long is
/// far beyond the measured ones, and it bounds the walk on a malformed
/// module whose fusions call themselves.
const FOLLOWER_DEPTH: usize = 32;

/// The walk of [`Walk::reads_sine_family`]: the fusions entered, and the
/// instructions already found not to read a sine (by computation,
/// instruction and the fusion entered), so a graph whose values are read
/// many times is walked once.
#[derive(Default)]
struct Walk<'m> {
    callers: Vec<(&'m Computation, &'m Instruction)>,
    clean: HashSet<(
        *const Computation,
        *const Instruction,
        Option<*const Instruction>,
    )>,
}

impl<'m> Walk<'m> {
    /// True when `i` (in `comp`) is an f16, bf16 or f32 sine, cosine or
    /// tan, or an elementwise op (a rounding one too: `add`, `multiply`,
    /// `divide`, a `convert`, a `compare`), a `copy`, `reshape`,
    /// `transpose`, `broadcast`, `slice` or `reverse`, or a fusion, with
    /// such an operand: each of its elements is computed from the sine's
    /// elements alone. A fused parameter is followed to the operand of the
    /// fusion entered.
    fn reads_sine_family(
        &mut self,
        m: &'m Module,
        comp: &'m Computation,
        i: &'m Instruction,
        depth: usize,
    ) -> bool {
        use ElementType::{Bf16, F16, F32};
        if depth > FOLLOWER_DEPTH {
            return false;
        }
        if SINE_FAMILY
            .iter()
            .any(|&op| array_of(i, op, &[F16, Bf16, F32]).is_some())
        {
            return true;
        }
        let key = (
            comp as *const Computation,
            i as *const Instruction,
            self.callers.last().map(|(_, f)| *f as *const Instruction),
        );
        if self.clean.contains(&key) {
            return false;
        }
        let hit = match i.opcode {
            Opcode::Fusion => i.attrs.calls.first().is_some_and(|&c| {
                let fused = m.comp(c);
                self.callers.push((comp, i));
                let hit = self.reads_sine_family(m, fused, fused.instr(fused.root), depth + 1);
                self.callers.pop();
                hit
            }),
            Opcode::Parameter => self.callers.pop().is_some_and(|(outer, fusion)| {
                let operand = i
                    .attrs
                    .parameter_number
                    .and_then(|k| usize::try_from(k).ok())
                    .and_then(|k| fusion.operands.get(k));
                let hit = operand
                    .is_some_and(|&o| self.reads_sine_family(m, outer, outer.instr(o), depth + 1));
                self.callers.push((outer, fusion));
                hit
            }),
            op if op.is_elementwise()
                || matches!(
                    op,
                    Opcode::Copy
                        | Opcode::Reshape
                        | Opcode::Transpose
                        | Opcode::Broadcast
                        | Opcode::Slice
                        | Opcode::Reverse
                ) =>
            {
                i.operands
                    .iter()
                    .any(|&o| self.reads_sine_family(m, comp, comp.instr(o), depth + 1))
            }
            _ => false,
        };
        if !hit {
            self.clean.insert(key);
        }
        hit
    }
}

/// True when `m` has an f8 reduce whose trailing reduced dimensions (the
/// longest run of reduced dimensions at the end of the operand's) hold
/// more than 16 elements, not a multiple of 16 (measured on 22 one-op
/// reduces, docs/findings.md: `f8e4m3fn[17]` .. `[23]`, `[24]`, `[33]`,
/// `[40]`, `[3,8]` all, `[3,20]` over 1 rejected; `[16]`, `[32]`, `[48]`,
/// `[64]`, `[24,2]` over 0, `[20,3]` over 1 accepted).
pub(super) fn has_rejected_f8_reduce(m: &Module) -> bool {
    any_instruction(m, |i, x| {
        if !matches!(x.dtype, ElementType::F8E4M3Fn | ElementType::F8E5M2) {
            return false;
        }
        // per operand dimension: whether the op reduces all of it
        let reduced: Vec<bool> = match (i.opcode, &i.attrs.dimensions, &i.attrs.window) {
            (Opcode::Reduce, Some(dims), _) => (0..x.dims.len())
                .map(|d| dims.contains(&(d as i64)))
                .collect(),
            // a reduce-window whose windows cover whole dimensions (and are
            // 1 elsewhere) is that reduce (measured: `[3,20]` window `1x20`
            // is rejected, `[6,5]` window `4x5` is not)
            (Opcode::ReduceWindow, _, Some(window)) if window.len() == x.dims.len() => {
                let plain = |w: &crate::hlo::WindowDim| {
                    w.pad_low == 0
                        && w.pad_high == 0
                        && w.base_dilation == 1
                        && w.window_dilation == 1
                };
                if !window
                    .iter()
                    .zip(&x.dims)
                    .all(|(w, &n)| plain(w) && (w.size == n || (w.size == 1 && w.stride == 1)))
                {
                    return false;
                }
                window
                    .iter()
                    .zip(&x.dims)
                    .map(|(w, &n)| w.size == n)
                    .collect()
            }
            _ => return false,
        };
        // the trailing run of reduced dimensions (unit dimensions skipped)
        let tail: i64 = (0..x.dims.len())
            .rev()
            .filter(|&d| x.dims[d] != 1)
            .take_while(|&d| reduced[d])
            .map(|d| x.dims[d])
            .product();
        tail > 16 && tail % 16 != 0
    })
}

/// For a root `sort` with `is_stable=true`: per output, the positions of
/// the sorted result that belong to a run of elements the comparator ties
/// (neither `cmp(a, b)` nor `cmp(b, a)` on neighbours of the reference's
/// sorted result). An unstable sort can only permute within such a run.
pub(super) fn stable_sort_ties(m: &Module, inputs: &[Literal]) -> Option<Vec<Vec<bool>>> {
    let entry = m.entry_computation();
    let root = entry.instr(entry.root);
    if root.opcode != Opcode::Sort || !root.attrs.is_stable {
        return None;
    }
    let dim = usize::try_from(*root.attrs.dimensions.as_ref()?.first()?).ok()?;
    let mut comparator = m.clone();
    comparator.entry = root.attrs.to_apply?;
    let sorted = crate::reference::evaluate(m, inputs).ok()?;
    let dims = sorted.first()?.dims().to_vec();
    let (len, total) = (*dims.get(dim)?, sorted[0].element_count());
    let stride: usize = dims[dim + 1..].iter().product();
    let bits: Vec<Vec<u64>> = sorted.iter().map(Literal::to_bits_vec).collect();
    let scalar = |k: usize, at: usize| {
        Literal::from_bits(&ArrayShape::new(sorted[k].dtype(), vec![]), &[bits[k][at]]).ok()
    };
    let less = |a: usize, b: usize| -> Option<bool> {
        let args = (0..sorted.len())
            .flat_map(|k| [scalar(k, a), scalar(k, b)])
            .collect::<Option<Vec<_>>>()?;
        let out = crate::reference::evaluate(&comparator, &args).ok()?;
        Some(out.first()?.get_bits(0) != 0)
    };
    let mut tied = vec![false; total];
    for base in (0..total).filter(|f| (f / stride.max(1)).is_multiple_of(len.max(1))) {
        for j in 0..len.saturating_sub(1) {
            let (a, b) = (base + j * stride, base + (j + 1) * stride);
            if !less(a, b)? && !less(b, a)? {
                tied[a] = true;
                tied[b] = true;
            }
        }
    }
    tied.contains(&true).then(|| vec![tied; sorted.len()])
}

/// True when `m` has a dot whose contracting dimensions hold no element and
/// whose result is not empty: iree-compile dies of SIGFPE on it (measured
/// on f32, f16, s32, s8 dots, docs/findings.md).
pub(super) fn has_empty_contraction_dot(m: &Module) -> bool {
    any_instruction(m, |i, lhs| {
        let (Opcode::Dot, Some(d), Some(out)) =
            (i.opcode, i.attrs.dot_dims.as_ref(), i.shape.as_array())
        else {
            return false;
        };
        let contracted: Option<i64> = d
            .lhs_contracting
            .iter()
            .map(|&k| {
                usize::try_from(k)
                    .ok()
                    .and_then(|k| lhs.dims.get(k).copied())
            })
            .product();
        contracted == Some(0) && out.element_count() != Some(0)
    })
}

/// True when `m` has a reduce whose reducer returns a constant (ignores
/// its parameters): iree-compile folds the reduce to the scalar constant and
/// then fails its own verifier (`type of return operand 0 ('tensor<f32>')
/// doesn't match function result type ('tensor<2xf32>')`; measured on pred
/// and f32 reduces, docs/findings.md).
pub(super) fn has_constant_reducer(m: &Module) -> bool {
    any_instruction(m, |i, _| {
        i.opcode == Opcode::Reduce
            && i.attrs
                .to_apply
                .and_then(|c| m.computations.get(c.0 as usize))
                .and_then(|c| c.instructions.get(c.root.index()))
                .is_some_and(|r| r.opcode == Opcode::Constant)
    })
}

/// True when `m` has a scatter whose indices address every operand
/// dimension with no inserted window dimension (unit windows kept as update
/// dimensions): iree-compile rejects it (`'iree_linalg_ext.scatter' op
/// expected indices to be equal to batch rank or batch rank + 1`; measured
/// with one and two scatter batch dimensions, docs/findings.md). A window
/// over a dimension the indices do not address compiles.
pub(super) fn has_rejected_unit_window_scatter(m: &Module) -> bool {
    any_instruction(m, |i, operand| {
        let (Opcode::Scatter, Some(d)) = (i.opcode, i.attrs.scatter_dims.as_ref()) else {
            return false;
        };
        d.inserted_window_dims.is_empty()
            && d.input_batching_dims.is_empty()
            && d.scatter_dims_to_operand_dims.len() == operand.rank()
            && operand.rank() > 0
    })
}

/// A scatter whose operand is a slice (in the same computation).
pub(super) fn has_scatter_into_slice(m: &Module) -> bool {
    m.computations.iter().any(|c| {
        c.instructions.iter().any(|i| {
            i.opcode == Opcode::Scatter
                && i.operands
                    .first()
                    .and_then(|o| c.instructions.get(o.index()))
                    .is_some_and(|o| o.opcode == Opcode::Slice)
        })
    })
}

/// The constants whose sort iree-compile rejects, as measured on the
/// `operand_forms` sort cases with a constant operand, fused or not (the
/// whole iree-cpu run of 2026-12-05): f8e5m2, f8e4m3fn and pred are
/// rejected; f16, bf16, f32, f64 and every 8- to 64-bit integer compile.
const SORTED_CONSTANT_REJECTED: [ElementType; 3] = [
    ElementType::F8E5M2,
    ElementType::F8E4M3Fn,
    ElementType::Pred,
];

/// A sort one of whose operands (in the same computation) is a slice of
/// rank 2 or more (measured: f32[4,3] of f32[6,5] along either dimension,
/// prefix, strided and whole-row slices, s32-f32 key-value sorts and rank
/// 3 rejected; rank-1 slices, plain and strided, and a sort of a negate
/// compile; docs/repro/iree-sort-of-slice). Also a constant operand of
/// one of [`SORTED_CONSTANT_REJECTED`]'s types (rejected with the same
/// message, fused or not).
pub(super) fn has_sort_of_slice(m: &Module) -> bool {
    m.computations.iter().any(|c| {
        c.instructions.iter().any(|i| {
            i.opcode == Opcode::Sort
                && i.operands.iter().any(|o| {
                    c.instructions.get(o.index()).is_some_and(|o| {
                        let array = o.shape.as_array();
                        (o.opcode == Opcode::Slice && array.is_some_and(|a| a.dims.len() >= 2))
                            || (o.opcode == Opcode::Constant
                                && array
                                    .is_some_and(|a| SORTED_CONSTANT_REJECTED.contains(&a.dtype)))
                    })
                })
        })
    })
}

/// A root `gather` whose start indices are an entry parameter (the
/// suite's gather form, where the case's inputs choose the starts):
/// iree-run-module crashing on such a module is
/// `iree-cpu/gather-far-out-of-range-start-crash` (the crash is the
/// evidence; a gather whose starts are all in range runs, and its values
/// are judged as usual).
pub(super) fn has_root_gather_of_parameter_starts(m: &Module) -> bool {
    let entry = m.entry_computation();
    let root = entry.instr(entry.root);
    root.opcode == Opcode::Gather
        && root
            .operands
            .get(1)
            .is_some_and(|i| entry.instr(*i).opcode == Opcode::Parameter)
}
