//! The emitter kernels: how each targeted instruction is (mis)computed.

use super::ctx::{array, dims, literal, ravel, round_to, scalar_like, unravel, Ctx, Res};
use super::mutation::Mutation;
use crate::backend::error::BackendError;
use crate::check::DotRoles;
use crate::hlo::{ArrayShape, Computation, ElementType, InstrId, Instruction, Opcode, Shape};
use crate::literal::{Literal, Value};

pub(crate) fn apply(mutation: Mutation, c: &Ctx<'_>) -> Res<Value> {
    use Mutation as M;
    match mutation {
        M::ExpLowPrecision
        | M::ApproxExpDeclared
        | M::MaxMinDropNan
        | M::CompareNanEqual
        | M::IntAddSaturates
        | M::IntDivideByZeroZero
        | M::ConvertFloatIntWraps
        | M::Bf16ConvertTruncates
        | M::SliceLimitOffByOne => elementwise(mutation, c),
        M::ConcatOffsetWrong
        | M::ReduceIgnoresInit
        | M::ReduceWindowIgnoresPadding
        | M::DynamicSliceNoClamp
        | M::GatherNoClamp => indexing(mutation, c),
        M::SortUnstable
        | M::SortUnstableWhenAllowed
        | M::ScatterDropsDuplicates
        | M::DotBatchContractSwap
        | M::ConvIgnoresFeatureGroups => sorting_and_contraction(mutation, c),
        M::DotBf16Accumulate
        | M::FmaContraction
        | M::PairwiseReduction
        | M::ReverseOrderReduction
        | M::ReciprocalDivide => accumulation(mutation, c),
        M::BroadcastConstantMisreadsOther
        | M::DynamicSliceConstantStartOffByOne
        | M::UnsignedStartIndexAsSigned
        | M::DotSquareRhsContractingAsZero
        | M::DivideOfQuotientReassociated => super::form_bugs::apply(mutation, c),
        _ => super::config_bugs::apply(mutation, c),
    }
}

fn no_kernel(mutation: Mutation, c: &Ctx<'_>) -> BackendError {
    BackendError::Compile(format!(
        "mutant: `{}` has no kernel for `{}`",
        mutation.name(),
        c.instr.name
    ))
}

/// Elementwise miscompilations (and the slice off by one).
fn elementwise(mutation: Mutation, c: &Ctx<'_>) -> Res<Value> {
    use Mutation as M;
    Ok(Value::Array(match mutation {
        M::ExpLowPrecision => {
            let mut out = c.base_array()?;
            for i in 0..out.element_count() {
                let y = out.get_f64(i);
                if y.is_finite() && y != 0.0 {
                    out.set_f64(i, y * (1.0 + 1e-3));
                }
            }
            out
        }
        M::ApproxExpDeclared => {
            let mut out = c.base_array()?;
            for i in 0..out.element_count() {
                let (y, b) = (out.get_f64(i), out.get_bits(i));
                if y.is_finite() && y > 0.0 {
                    out.set_bits(i, b + 2);
                    if !out.get_f64(i).is_finite() {
                        out.set_bits(i, b);
                    }
                }
            }
            out
        }
        M::MaxMinDropNan => {
            let mut out = c.base_array()?;
            let (a, b) = (c.op(0)?, c.op(1)?);
            for i in 0..out.element_count() {
                match (a.get_f64(i).is_nan(), b.get_f64(i).is_nan()) {
                    (true, false) => out.set_bits(i, b.get_bits(i)),
                    (false, true) => out.set_bits(i, a.get_bits(i)),
                    _ => {}
                }
            }
            out
        }
        M::CompareNanEqual => {
            let mut out = c.base_array()?;
            let (a, b) = (c.op(0)?, c.op(1)?);
            for i in 0..out.element_count() {
                if a.get_f64(i).is_nan() || b.get_f64(i).is_nan() {
                    out.set_i128(i, 1);
                }
            }
            out
        }
        M::IntAddSaturates => {
            let mut out = c.base_array()?;
            let (lo, hi) = out.dtype().int_range().unwrap_or((i128::MIN, i128::MAX));
            let (a, b) = (c.op(0)?, c.op(1)?);
            for i in 0..out.element_count() {
                out.set_i128(i, (a.get_i128(i) + b.get_i128(i)).clamp(lo, hi));
            }
            out
        }
        M::IntDivideByZeroZero => {
            let mut out = c.base_array()?;
            let b = c.op(1)?;
            for i in 0..out.element_count() {
                if b.get_i128(i) == 0 {
                    out.set_i128(i, 0);
                }
            }
            out
        }
        M::ConvertFloatIntWraps => {
            let mut out = c.base_array()?;
            let a = c.op(0)?;
            for i in 0..out.element_count() {
                let x = a.get_f64(i);
                let wrapped = if x.is_finite() {
                    x.trunc().rem_euclid(18_446_744_073_709_551_616.0) as u64
                } else {
                    0
                };
                out.set_bits(i, wrapped);
            }
            out
        }
        M::Bf16ConvertTruncates => {
            let mut out = c.base_array()?;
            let a = c.op(0)?;
            for i in 0..out.element_count() {
                let x = a.get_f64(i) as f32;
                if x.is_finite() {
                    out.set_f64(i, f32::from_bits(x.to_bits() & 0xffff_0000) as f64);
                }
            }
            out
        }
        M::SliceLimitOffByOne => {
            let mut out = c.base_array()?;
            let d = dims(&out);
            if let Some(k) = (0..d.len()).rev().find(|&k| d[k] >= 2) {
                for i in 0..out.element_count() {
                    let mut idx = unravel(i, &d);
                    if idx[k] == d[k] - 1 {
                        idx[k] -= 1;
                        let b = out.get_bits(ravel(&idx, &d));
                        out.set_bits(i, b);
                    }
                }
            }
            out
        }
        _ => return Err(no_kernel(mutation, c)),
    }))
}

/// Concatenate, reductions' init and padding, and unclamped indices.
fn indexing(mutation: Mutation, c: &Ctx<'_>) -> Res<Value> {
    use Mutation as M;
    Ok(Value::Array(match mutation {
        M::ConcatOffsetWrong => {
            let mut out = c.base_array()?;
            let d = dims(&out);
            let k = c.first_dimension();
            let (a, b) = (c.op(0)?, c.op(1)?);
            let off = a.dims().get(k).copied().unwrap_or(0);
            let bd = dims(b);
            if off >= 1 && k < d.len() {
                for j in 0..b.element_count() {
                    let mut idx = unravel(j, &bd);
                    idx[k] += off - 1;
                    out.set_bits(ravel(&idx, &d), b.get_bits(j));
                }
            }
            out
        }
        M::ReduceIgnoresInit => {
            let t = c.op(1)?.dtype();
            let mut init = scalar_like(t)?;
            let (lo, hi) = t.int_range().unwrap_or((0, 1));
            let far = t
                .float_format()
                .map_or(0.0, |f| if f.has_inf { f64::INFINITY } else { f.max });
            match (reducer(c), t.is_float()) {
                (Some(Opcode::Multiply | Opcode::And), _) => init.set_i128(0, 1),
                (Some(Opcode::Maximum), true) => init.set_f64(0, -far),
                (Some(Opcode::Minimum), true) => init.set_f64(0, far),
                (Some(Opcode::Maximum), false) => init.set_i128(0, lo),
                (Some(Opcode::Minimum), false) => init.set_i128(0, hi),
                _ => init.set_i128(0, 0),
            }
            return c.base_on(c.instr, vec![c.op(0)?.clone(), init]);
        }
        M::ReduceWindowIgnoresPadding => return reduce_window_ignoring_padding(c),
        M::DynamicSliceNoClamp => {
            let x = c.op(0)?;
            let sizes = c
                .instr
                .attrs
                .dynamic_slice_sizes
                .clone()
                .unwrap_or_default();
            let mut ops = vec![x.clone()];
            for (k, s) in c.operands[1..].iter().enumerate() {
                let mut s = s.clone();
                let bound = x.dims().get(k).copied().unwrap_or(1) as i128
                    - sizes.get(k).copied().unwrap_or(1) as i128
                    + 1;
                if s.element_count() == 1 && bound >= 1 {
                    let v = s.get_i128(0);
                    s.set_i128(0, v.rem_euclid(bound));
                }
                ops.push(s);
            }
            return c.base_on(c.instr, ops);
        }
        M::GatherNoClamp => {
            let (x, idx) = (c.op(0)?, c.op(1)?);
            let Some(g) = c.instr.attrs.gather_dims.clone() else {
                return c.base();
            };
            let id = dims(idx);
            let mut idx2 = idx.clone();
            for j in 0..idx.element_count() {
                let at = unravel(j, &id);
                let k = usize::try_from(g.index_vector_dim)
                    .ok()
                    .and_then(|v| at.get(v).copied())
                    .unwrap_or(0);
                let Some(&dim) = g.start_index_map.get(k) else {
                    continue;
                };
                let dim = dim as usize;
                let bound = x.dims().get(dim).copied().unwrap_or(1) as i128
                    - g.slice_sizes.get(dim).copied().unwrap_or(1) as i128
                    + 1;
                if bound >= 1 {
                    idx2.set_i128(j, idx.get_i128(j).rem_euclid(bound));
                }
            }
            let mut ops = vec![x.clone(), idx2];
            ops.extend(c.operands[2..].iter().cloned());
            return c.base_on(c.instr, ops);
        }
        _ => return Err(no_kernel(mutation, c)),
    }))
}

/// reduce-window that pads with the nearest edge element instead of the
/// init value (a padded copy reduced without padding).
fn reduce_window_ignoring_padding(c: &Ctx<'_>) -> Res<Value> {
    let x = c.op(0)?;
    let xd = dims(x);
    let window = c.instr.attrs.window.clone().unwrap_or_default();
    if x.element_count() == 0 || window.len() != xd.len() {
        return c.base();
    }
    let pd: Vec<usize> = xd
        .iter()
        .zip(&window)
        .map(|(&d, w)| d + w.pad_low as usize + w.pad_high as usize)
        .collect();
    let mut padded = literal(x.dtype(), &pd)?;
    for j in 0..padded.element_count() {
        let idx = unravel(j, &pd);
        let src: Vec<usize> = idx
            .iter()
            .zip(&window)
            .zip(&xd)
            .map(|((&i, w), &d)| (i as i64 - w.pad_low).clamp(0, d as i64 - 1) as usize)
            .collect();
        padded.set_bits(j, x.get_bits(ravel(&src, &xd)));
    }
    let mut step = c.instr.clone();
    if let Some(w) = &mut step.attrs.window {
        for d in w {
            d.pad_low = 0;
            d.pad_high = 0;
        }
    }
    c.base_on(&step, vec![padded, c.op(1)?.clone()])
}

/// Sort, scatter, dot and convolution kernels.
fn sorting_and_contraction(mutation: Mutation, c: &Ctx<'_>) -> Res<Value> {
    use Mutation as M;
    Ok(Value::Array(match mutation {
        M::SortUnstable | M::SortUnstableWhenAllowed => return sort_reversing_ties(c),
        M::ScatterDropsDuplicates => {
            let (x, idx, upd) = (c.op(0)?, c.op(1)?, c.op(2)?);
            let t = x.dtype();
            let name = format!("mutant.take_second.{}", c.instr.name);
            let scalar = Shape::Array(ArrayShape::new(t, vec![]));
            let mut p0 = Instruction::new(
                format!("{name}.p0"),
                Opcode::Parameter,
                scalar.clone(),
                vec![],
            );
            p0.attrs.parameter_number = Some(0);
            let mut p1 = Instruction::new(format!("{name}.p1"), Opcode::Parameter, scalar, vec![]);
            p1.attrs.parameter_number = Some(1);
            let take_second = Computation {
                name,
                instructions: vec![p0, p1],
                root: InstrId(1),
                other: vec![],
            };
            let zeros = literal(t, &dims(x))?.with_layout(x.layout().cloned());
            let ops: Vec<Value> = [zeros, idx.clone(), upd.clone()]
                .into_iter()
                .map(Value::Array)
                .collect();
            let z = array(c.stepper.single(c.instr, &ops, Some(take_second))?)?;
            let mut out = c.base_array()?;
            for i in 0..out.element_count() {
                if t.is_float() {
                    out.set_f64(i, x.get_f64(i) + z.get_f64(i));
                } else {
                    out.set_i128(i, x.get_i128(i) + z.get_i128(i));
                }
            }
            out
        }
        M::DotBatchContractSwap => {
            let (lhs, rhs) = (c.op(0)?, c.op(1)?);
            let dd = c.instr.attrs.dot_dims.clone().unwrap_or_default();
            let (bd, cd) = (dd.lhs_batch[0] as usize, dd.lhs_contracting[0] as usize);
            let ld = dims(lhs);
            if ld.get(bd).copied().unwrap_or(0) <= 1 || cd >= ld.len() {
                return c.base();
            }
            let mut td = ld.clone();
            td.swap(bd, cd);
            let mut scrambled = lhs.clone();
            for j in 0..lhs.element_count() {
                let mut ti = unravel(j, &td);
                ti.swap(bd, cd);
                scrambled.set_bits(j, lhs.get_bits(ravel(&ti, &ld)));
            }
            return c.base_on(c.instr, vec![scrambled, rhs.clone()]);
        }
        M::ConvIgnoresFeatureGroups => {
            let (x, w) = (c.op(0)?, c.op(1)?);
            let g = c.instr.attrs.feature_group_count.unwrap_or(1).max(1) as usize;
            let f = c
                .instr
                .attrs
                .conv_dims
                .as_ref()
                .map_or(0, |d| d.input_feature as usize);
            let xd = dims(x);
            let per = xd.get(f).copied().unwrap_or(0) / g;
            if per == 0 {
                return c.base();
            }
            let mut grouped = x.clone();
            for j in 0..x.element_count() {
                let mut i = unravel(j, &xd);
                i[f] %= per;
                grouped.set_bits(j, x.get_bits(ravel(&i, &xd)));
            }
            return c.base_on(c.instr, vec![grouped, w.clone()]);
        }
        _ => return Err(no_kernel(mutation, c)),
    }))
}

/// An unstable sort: every run of equal keys in reverse order, in every
/// operand alike.
fn sort_reversing_ties(c: &Ctx<'_>) -> Res<Value> {
    let v = c.base()?;
    let mut outs: Vec<Literal> = v.clone().into_flat();
    let Some(keys) = outs.first().cloned() else {
        return Ok(v);
    };
    let d = dims(&keys);
    let k = c.first_dimension();
    if k >= d.len() {
        return Ok(v);
    }
    for start in 0..keys.element_count() {
        let base_idx = unravel(start, &d);
        if base_idx[k] != 0 {
            continue;
        }
        let line: Vec<usize> = (0..d[k])
            .map(|p| {
                let mut i = base_idx.clone();
                i[k] = p;
                ravel(&i, &d)
            })
            .collect();
        let mut p = 0;
        while p < line.len() {
            let mut q = p + 1;
            while q < line.len() && keys.get_bits(line[q]) == keys.get_bits(line[p]) {
                q += 1;
            }
            for o in &mut outs {
                let run: Vec<u64> = line[p..q].iter().map(|&i| o.get_bits(i)).collect();
                for (slot, b) in line[p..q].iter().zip(run.iter().rev()) {
                    o.set_bits(*slot, *b);
                }
            }
            p = q;
        }
    }
    Ok(match v {
        Value::Array(_) => Value::Array(outs.remove(0)),
        _ => Value::Tuple(outs.into_iter().map(Value::Array).collect()),
    })
}

/// How sums are accumulated: bf16 dots, fused multiply-add, reduction order, reciprocal division.
fn accumulation(mutation: Mutation, c: &Ctx<'_>) -> Res<Value> {
    use Mutation as M;
    Ok(Value::Array(match mutation {
        M::DotBf16Accumulate => dot_bf16(c)?,
        M::FmaContraction => {
            let mut out = c.base_array()?;
            let t = out.dtype();
            let m = c
                .instr
                .operands
                .iter()
                .position(|o| c.comp.instr(*o).opcode == Opcode::Multiply)
                .unwrap_or(0);
            let mul = c.comp.instr(c.instr.operands[m]);
            let get = |id: &InstrId| c.values.get(id).and_then(Value::as_array);
            let (Some(a), Some(b)) = (get(&mul.operands[0]), get(&mul.operands[1])) else {
                return Ok(Value::Array(out));
            };
            let addend = c.op(1 - m)?;
            for i in 0..out.element_count() {
                let (x, y, z) = (a.get_f64(i), b.get_f64(i), addend.get_f64(i));
                let v = if t == ElementType::F64 {
                    x.mul_add(y, z)
                } else {
                    x * y + z
                };
                out.set_f64(i, v);
            }
            out
        }
        M::PairwiseReduction | M::ReverseOrderReduction => {
            let mut out = c.base_array()?;
            let (x, init) = (c.op(0)?, c.op(1)?.get_f64(0));
            let reduced: Vec<usize> = c
                .instr
                .attrs
                .dimensions
                .clone()
                .unwrap_or_default()
                .iter()
                .map(|&d| d as usize)
                .collect();
            let xd = dims(x);
            let od = dims(&out);
            let mut groups: Vec<Vec<f64>> = vec![Vec::new(); out.element_count()];
            for j in 0..x.element_count() {
                let idx = unravel(j, &xd);
                let o: Vec<usize> = (0..xd.len())
                    .filter(|k| !reduced.contains(k))
                    .map(|k| idx[k])
                    .collect();
                if let Some(g) = groups.get_mut(ravel(&o, &od)) {
                    g.push(x.get_f64(j));
                }
            }
            let wide = x.dtype() == ElementType::F64;
            for (i, g) in groups.iter().enumerate() {
                let s = if mutation == M::PairwiseReduction {
                    pairwise(g, wide)
                } else {
                    g.iter().rev().fold(0.0, |acc, &v| acc_add(acc, v, wide))
                };
                out.set_f64(i, acc_add(init, s, wide));
            }
            out
        }
        M::ReciprocalDivide => {
            let mut out = c.base_array()?;
            let t = out.dtype();
            let (a, b) = (c.op(0)?, c.op(1)?);
            for i in 0..out.element_count() {
                let r = round_to(t, 1.0 / b.get_f64(i));
                out.set_f64(i, a.get_f64(i) * r);
            }
            out
        }
        _ => return Err(no_kernel(mutation, c)),
    }))
}

fn reducer(c: &Ctx<'_>) -> Option<Opcode> {
    let comp = c
        .stepper
        .module()
        .computations
        .get(c.instr.attrs.to_apply?.index())?;
    Some(comp.instr(comp.root).opcode)
}

/// An add in the accumulation type: f64 for f64 reductions, f32 otherwise.
fn acc_add(a: f64, b: f64, wide: bool) -> f64 {
    if wide {
        a + b
    } else {
        (a as f32 + b as f32) as f64
    }
}

fn pairwise(v: &[f64], wide: bool) -> f64 {
    match v.len() {
        0 => 0.0,
        1 => v[0],
        n => acc_add(
            pairwise(&v[..n / 2], wide),
            pairwise(&v[n / 2..], wide),
            wide,
        ),
    }
}

/// A dot accumulating in bf16: every partial sum rounded to bf16.
fn dot_bf16(c: &Ctx<'_>) -> Res<Literal> {
    let mut out = c.base_array()?;
    let (lhs, rhs) = (c.op(0)?, c.op(1)?);
    let dd = c.instr.attrs.dot_dims.clone().unwrap_or_default();
    let (ld, rd, od) = (dims(lhs), dims(rhs), dims(&out));
    let u = |v: &[i64]| v.iter().map(|&d| d as usize).collect::<Vec<_>>();
    let roles = DotRoles::new(
        [
            u(&dd.lhs_batch),
            u(&dd.lhs_contracting),
            u(&dd.rhs_batch),
            u(&dd.rhs_contracting),
        ],
        ld.len(),
        rd.len(),
    );
    let cdims: Vec<usize> = roles.lc.iter().map(|&k| ld[k]).collect();
    let ccount: usize = cdims.iter().product();
    for o in 0..out.element_count() {
        let oi = unravel(o, &od);
        let mut li = vec![0; ld.len()];
        let mut ri = vec![0; rd.len()];
        roles.set_output(&oi, &mut li, &mut ri);
        let mut acc = 0.0;
        for j in 0..ccount {
            let ci = unravel(j, &cdims);
            roles.set_term(&ci, &mut li, &mut ri);
            let p = lhs.get_f64(ravel(&li, &ld)) * rhs.get_f64(ravel(&ri, &rd));
            acc = round_to(ElementType::Bf16, acc + p);
        }
        out.set_f64(o, acc);
    }
    Ok(out)
}
