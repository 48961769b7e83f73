//! Valid HLO that IREE 3.13.0 rejects, rewritten before lowering into an
//! equivalent form it compiles (docs/findings.md, "IREE quirks worked around
//! before lowering"). Every rewrite keeps the module's meaning exactly (the
//! reference gives the same bits on both, `tests`), so the verdict stays one
//! on IREE's arithmetic, not on its front end:
//!
//! - scatter: the index vector made the indices' last dimension (a
//!   transpose, or a reshape when it is implicit), and an update window of
//!   size 1 over an operand dimension that the indices address made an
//!   inserted window dimension (a reshape of the updates). XLA's scatter
//!   simplifier leaves every window dimension in the updates, which IREE's
//!   `iree_linalg_ext.scatter` rejects (`expected indices to be equal to
//!   batch rank or batch rank + 1`).
//! - convolution: window reversal written as a `reverse` of the kernel's
//!   reversed spatial dimensions (what it means), with no reversal left.
//! - dot with an algorithm: its operands converted to the algorithm's
//!   precision type (a `dot_bf16_bf16_f32` is `convert` to bf16 and a dot
//!   with an f32 result), as IREE does not read `#stablehlo.dot_algorithm`.

use std::borrow::Cow;

use crate::hlo::{
    ArrayShape, Computation, DotAlgorithm, ElementType, InstrId, Instruction, Module, Opcode,
    OperandPrecision, ScatterDims, Shape,
};

/// `module` with every rewrite applied; borrowed when none applies, and
/// `Err` when a dot algorithm cannot be expressed (an unsupported-op reason).
pub fn canonicalize(module: &Module) -> Result<Cow<'_, Module>, String> {
    let mut out: Option<Module> = None;
    for c in 0..module.computations.len() {
        for k in 0..module.computations[c].instructions.len() {
            let current = out.as_ref().unwrap_or(module);
            let comp = &current.computations[c];
            let id = InstrId(k as u32);
            let rewritten = match comp.instr(id).opcode {
                Opcode::Scatter => scatter(comp, id),
                Opcode::Convolution => reversed_convolution(comp, id),
                Opcode::Dot => dot_algorithm(comp, id)?,
                Opcode::ReduceWindow => {
                    if let Some(m) = unsigned_reduce_window(current, c, id) {
                        out = Some(m);
                    }
                    None
                }
                _ => None,
            };
            if let Some(new_comp) = rewritten {
                let m = out.get_or_insert_with(|| module.clone());
                m.computations[c] = new_comp;
            }
        }
    }
    Ok(out.map_or(Cow::Borrowed(module), Cow::Owned))
}

/// Ops whose bits are the same on unsigned and signed integers of one width.
const SIGN_AGNOSTIC: &[Opcode] = &[
    Opcode::Parameter,
    Opcode::Add,
    Opcode::Subtract,
    Opcode::Multiply,
    Opcode::And,
    Opcode::Or,
    Opcode::Xor,
    Opcode::Tuple,
    Opcode::GetTupleElement,
];

/// The same shape with every unsigned element type made its signed twin.
fn signed(s: &Shape) -> Shape {
    match s {
        Shape::Array(a) => Shape::Array(ArrayShape {
            dtype: signed_type(a.dtype),
            ..a.clone()
        }),
        Shape::Tuple(t) => Shape::Tuple(t.iter().map(signed).collect()),
        other => other.clone(),
    }
}

fn signed_type(t: ElementType) -> ElementType {
    match t {
        ElementType::U8 => ElementType::S8,
        ElementType::U16 => ElementType::S16,
        ElementType::U32 => ElementType::S32,
        ElementType::U64 => ElementType::S64,
        t => t,
    }
}

/// The reduce-window at `id` of computation `c` over unsigned integers
/// computed on their signed twins (bitcasts around it, the reducer
/// retyped), when its reducer only adds, multiplies or combines bits:
/// IREE 3.13.0 fails on a `ui32` reducer (`failed to legalize unresolved
/// target materialization from ('ui32') to ('i32')`).
fn unsigned_reduce_window(m: &Module, c: usize, id: InstrId) -> Option<Module> {
    let comp = &m.computations[c];
    let ins = comp.instr(id);
    let out = ins.shape.as_array()?;
    if !matches!(out.dtype.kind(), crate::hlo::TypeKind::Unsigned) {
        return None;
    }
    let f = ins.attrs.to_apply?;
    let reducer = m.computations.get(f.index())?;
    if !reducer
        .instructions
        .iter()
        .all(|i| SIGN_AGNOSTIC.contains(&i.opcode))
    {
        return None;
    }
    let mut m = m.clone();
    let mut body = reducer.clone();
    body.name = format!("{}.signed", reducer.name);
    for i in &mut body.instructions {
        i.shape = signed(&i.shape);
        i.name = format!("{}.signed", i.name);
    }
    m.computations.push(body);
    let body_id = crate::hlo::CompId(m.computations.len() as u32 - 1);
    let comp = &mut m.computations[c];
    let base = ins.name.clone();
    let mut new = ins.clone();
    for o in &mut new.operands {
        let shape = comp.instr(*o).shape.clone();
        let cast = Instruction::new("bc", Opcode::BitcastConvert, signed(&shape), vec![*o]);
        *o = add(comp, &base, "signed", cast);
    }
    new.shape = signed(&ins.shape);
    new.attrs.to_apply = Some(body_id);
    let inner = add(comp, &base, "window", new);
    let back = Instruction::new("bc", Opcode::BitcastConvert, ins.shape.clone(), vec![inner]);
    let back = add(comp, &base, "unsigned", back);
    // the original becomes a copy of the result (its users keep their operand)
    let mut copy = Instruction::new(
        ins.name.clone(),
        Opcode::Copy,
        ins.shape.clone(),
        vec![back],
    );
    copy.attrs.other.clear();
    comp.instructions[id.index()] = copy;
    Some(m)
}

fn array(c: &Computation, id: InstrId) -> Option<&ArrayShape> {
    c.instructions.get(id.index())?.shape.as_array()
}

fn with_dims(a: &ArrayShape, dims: Vec<i64>) -> Shape {
    Shape::Array(ArrayShape {
        dtype: a.dtype,
        dims,
        layout: None,
    })
}

/// Appends `ins` named after `base` to `c`.
fn add(c: &mut Computation, base: &str, what: &str, mut ins: Instruction) -> InstrId {
    ins.name = format!("{base}.{what}.{}", c.instructions.len());
    c.push(ins)
}

fn reshape(c: &mut Computation, base: &str, of: InstrId, to: Shape) -> InstrId {
    add(
        c,
        base,
        "reshape",
        Instruction::new("r", Opcode::Reshape, to, vec![of]),
    )
}

/// The scatter at `id` in the form IREE compiles, or `None` when it is in it.
fn scatter(c: &Computation, id: InstrId) -> Option<Computation> {
    let ins = c.instr(id);
    let d = ins.attrs.scatter_dims.as_ref()?;
    let n = ins.operands.len() / 2;
    if n == 0 || ins.operands.len() != 2 * n + 1 {
        return None;
    }
    let operand = array(c, ins.operands[0])?.clone();
    let indices = array(c, ins.operands[n])?.clone();
    let updates: Vec<ArrayShape> = ins.operands[n + 1..]
        .iter()
        .map(|&u| array(c, u).cloned())
        .collect::<Option<_>>()?;
    let irank = indices.rank() as i64;
    let ivd = d.index_vector_dim;
    if !(0..=irank).contains(&ivd) {
        return None;
    }
    // update window dims of size 1 over addressed operand dims
    let window_operand_dims: Vec<i64> = (0..operand.rank() as i64)
        .filter(|k| !d.inserted_window_dims.contains(k) && !d.input_batching_dims.contains(k))
        .collect();
    if window_operand_dims.len() != d.update_window_dims.len() {
        return None;
    }
    let unit: Vec<(i64, i64)> = window_operand_dims
        .iter()
        .zip(&d.update_window_dims)
        .filter(|(od, &uw)| {
            d.scatter_dims_to_operand_dims.contains(od)
                && usize::try_from(uw)
                    .ok()
                    .and_then(|uw| updates[0].dims.get(uw))
                    == Some(&1)
        })
        .map(|(&od, &uw)| (od, uw))
        .collect();
    if ivd == irank - 1 && unit.is_empty() {
        return None;
    }
    let mut c = c.clone();
    let base = ins.name.clone();
    let mut nd: ScatterDims = d.clone();
    let mut operands = ins.operands.clone();
    // the index vector: the last dimension of the indices
    if ivd == irank {
        let mut dims = indices.dims.clone();
        dims.push(1);
        operands[n] = reshape(&mut c, &base, operands[n], with_dims(&indices, dims));
        nd.index_vector_dim = irank;
    } else if ivd != irank - 1 {
        let perm: Vec<i64> = (0..irank).filter(|&k| k != ivd).chain([ivd]).collect();
        let dims: Vec<i64> = perm.iter().map(|&k| indices.dims[k as usize]).collect();
        let mut t = Instruction::new(
            "t",
            Opcode::Transpose,
            with_dims(&indices, dims),
            vec![operands[n]],
        );
        t.attrs.dimensions = Some(perm);
        operands[n] = add(&mut c, &base, "transpose", t);
        nd.index_vector_dim = irank - 1;
        for b in &mut nd.scatter_indices_batching_dims {
            if *b > ivd {
                *b -= 1;
            }
        }
    }
    // unit windows over addressed dims: inserted window dims
    if !unit.is_empty() {
        let drop: Vec<i64> = unit.iter().map(|&(_, uw)| uw).collect();
        for (k, u) in updates.iter().enumerate() {
            let dims: Vec<i64> = (0..u.rank() as i64)
                .filter(|k| !drop.contains(k))
                .map(|k| u.dims[k as usize])
                .collect();
            operands[n + 1 + k] = reshape(&mut c, &base, operands[n + 1 + k], with_dims(u, dims));
        }
        nd.update_window_dims = d
            .update_window_dims
            .iter()
            .filter(|w| !drop.contains(w))
            .map(|&w| w - drop.iter().filter(|&&x| x < w).count() as i64)
            .collect();
        nd.inserted_window_dims
            .extend(unit.iter().map(|&(od, _)| od));
        nd.inserted_window_dims.sort_unstable();
    }
    let mut new = ins.clone();
    new.operands = operands;
    new.attrs.scatter_dims = Some(nd);
    c.instructions[id.index()] = new;
    Some(c)
}

/// The convolution at `id` with its window reversal made a `reverse` of
/// the kernel, or `None` when it reverses nothing.
fn reversed_convolution(c: &Computation, id: InstrId) -> Option<Computation> {
    let ins = c.instr(id);
    let w = ins.attrs.window.as_ref()?;
    let cd = ins.attrs.conv_dims.as_ref()?;
    if !w.iter().any(|d| d.reversal) || w.len() != cd.kernel_spatial.len() {
        return None;
    }
    let kernel = *ins.operands.get(1)?;
    let kshape = c.instr(kernel).shape.clone();
    let dims: Vec<i64> = w
        .iter()
        .zip(&cd.kernel_spatial)
        .filter(|(d, _)| d.reversal)
        .map(|(_, &k)| k)
        .collect();
    let mut c = c.clone();
    let mut rev = Instruction::new("rev", Opcode::Reverse, kshape, vec![kernel]);
    rev.attrs.dimensions = Some(dims);
    let base = ins.name.clone();
    let r = add(&mut c, &base, "reverse", rev);
    let mut new = c.instr(id).clone();
    new.operands[1] = r;
    if let Some(w) = new.attrs.window.as_mut() {
        for d in w.iter_mut() {
            d.reversal = false;
        }
    }
    c.instructions[id.index()] = new;
    Some(c)
}

/// The dot at `id` with its algorithm written as conversions of its
/// operands to the algorithm's precision type; `None` when it has none, or
/// when its operands already have that type (the attribute is dropped then
/// too, as the plain dot means the same). `Err`: an algorithm IREE cannot be
/// given (several components, or narrow accumulation into a wider result).
fn dot_algorithm(c: &Computation, id: InstrId) -> Result<Option<Computation>, String> {
    let ins = c.instr(id);
    let Some(alg) = DotAlgorithm::of(&ins.attrs)? else {
        return Ok(None);
    };
    let Some(out) = ins.shape.as_array().cloned() else {
        return Ok(None);
    };
    let Some(precision) = alg.single_component_type() else {
        return Err(format!(
            "iree-cpu: dot algorithm {} (several components per operand) has no lowering",
            alg.name()
        ));
    };
    if alg.accumulation_type().bit_width() < out.dtype.bit_width() {
        return Err(format!(
            "iree-cpu: dot algorithm {} accumulates in {} into a wider {} result",
            alg.name(),
            alg.accumulation_type(),
            out.dtype
        ));
    }
    let mut c = c.clone();
    let base = ins.name.clone();
    let mut new = ins.clone();
    new.attrs.other.retain(|(k, _)| k != "algorithm");
    for k in 0..2 {
        let Some(&o) = ins.operands.get(k) else {
            return Ok(None);
        };
        let Some(a) = array(&c, o).cloned() else {
            return Ok(None);
        };
        let rounded = match precision {
            // TF32: f32 rounded to 10 mantissa bits, kept in f32
            OperandPrecision::Tf32 if a.dtype == ElementType::F32 => {
                let mut r =
                    Instruction::new("rp", Opcode::ReducePrecision, Shape::Array(a), vec![o]);
                r.attrs.exponent_bits = Some(8);
                r.attrs.mantissa_bits = Some(10);
                r
            }
            p => match p.or_operand(a.dtype) {
                Some(t) if t == a.dtype => continue,
                Some(t) => {
                    let to = ArrayShape { dtype: t, ..a };
                    Instruction::new("cv", Opcode::Convert, Shape::Array(to), vec![o])
                }
                None => {
                    return Err(format!(
                        "iree-cpu: dot algorithm {} on {} operands",
                        alg.name(),
                        a.dtype
                    ))
                }
            },
        };
        new.operands[k] = add(&mut c, &base, "round", rounded);
    }
    c.instructions[id.index()] = new;
    Ok(Some(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;
    use crate::inputs::{generate_inputs, Distribution};

    /// The rewritten module, checked to compute the same bits as the
    /// original on the reference for three input sets.
    fn same_meaning(text: &str) -> Module {
        let m = parse_module(text).unwrap_or_else(|e| panic!("{e}"));
        let c = canonicalize(&m).unwrap().into_owned();
        crate::hlo::verify(&c).unwrap_or_else(|e| panic!("{e}\n{c}"));
        for seed in 0..3 {
            let args = generate_inputs(&m, Distribution::Uniform, seed)
                .unwrap()
                .args;
            let want = crate::reference::evaluate(&m, &args).unwrap();
            let got = crate::reference::evaluate(&c, &args).unwrap();
            let bits = |v: &[crate::literal::Literal]| -> Vec<Vec<u64>> {
                v.iter().map(|l| l.to_bits_vec()).collect()
            };
            assert_eq!(bits(&got), bits(&want), "seed {seed}\n{c}");
        }
        c
    }

    fn root(m: &Module) -> &Instruction {
        let e = m.entry_computation();
        let r = e.instr(e.root);
        match r.opcode {
            Opcode::Copy => e.instr(e.instr(r.operands[0]).operands[0]),
            _ => r,
        }
    }

    const ADD: &str = "add {\n  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n  ROOT sum = f32[] add(p, q)\n}\n";

    /// A scatter of four rows of f32[5,3] at the indices of shape `indices`.
    fn rows_scatter(indices: &str, index_vector_dim: i64) -> String {
        format!(
            "HloModule m\n{ADD}\nENTRY e {{\n  o = f32[5,3] parameter(0)\n  i = s32[{indices}] parameter(1)\n  \
             u = f32[4,3] parameter(2)\n  ROOT s = f32[5,3] scatter(o, i, u), to_apply=add, \
             update_window_dims={{1}}, inserted_window_dims={{0}}, scatter_dims_to_operand_dims={{0}}, index_vector_dim={index_vector_dim}\n}}\n"
        )
    }

    #[test]
    fn unit_windows_over_addressed_dims_become_inserted_dims() {
        let c = same_meaning(&format!(
            "HloModule m\n{ADD}\nENTRY e {{\n  o = f32[4,6] parameter(0)\n  i = s32[4,2] parameter(1)\n  \
             u = f32[4,1,1] parameter(2)\n  ROOT s = f32[4,6] scatter(o, i, u), to_apply=add, \
             update_window_dims={{1,2}}, inserted_window_dims={{}}, scatter_dims_to_operand_dims={{0,1}}, index_vector_dim=1\n}}\n"
        ));
        let d = root(&c).attrs.scatter_dims.clone().unwrap();
        assert_eq!(d.inserted_window_dims, vec![0, 1]);
        assert!(d.update_window_dims.is_empty());
    }

    #[test]
    fn the_index_vector_becomes_the_last_dimension() {
        let c = same_meaning(&rows_scatter("1,4", 0));
        let r = root(&c);
        assert_eq!(r.attrs.scatter_dims.as_ref().unwrap().index_vector_dim, 1);
        let e = c.entry_computation();
        assert_eq!(e.instr(r.operands[1]).opcode, Opcode::Transpose);
        // an implicit index vector: a reshape adds it
        let c = same_meaning(&rows_scatter("4", 1));
        let e = c.entry_computation();
        assert_eq!(e.instr(root(&c).operands[1]).shape.to_string(), "s32[4,1]");
    }

    #[test]
    fn a_scatter_in_iree_form_is_left_alone() {
        let m = parse_module(&rows_scatter("4,1", 1)).unwrap();
        assert!(matches!(canonicalize(&m), Ok(Cow::Borrowed(_))));
    }

    #[test]
    fn window_reversal_becomes_a_reverse_of_the_kernel() {
        let c = same_meaning(
            "HloModule m\nENTRY e {\n  x = f32[1,6,6,4] parameter(0)\n  k = f32[3,3,1,4] parameter(1)\n  \
             ROOT c = f32[1,6,6,4] convolution(x, k), window={size=3x3 pad=1_1x1_1 rhs_reversal=0x1}, \
             dim_labels=b01f_01io->b01f, feature_group_count=4\n}\n",
        );
        let r = root(&c);
        assert!(r.attrs.window.as_ref().unwrap().iter().all(|d| !d.reversal));
        let rev = c.entry_computation().instr(r.operands[1]);
        assert_eq!(
            (rev.opcode, rev.attrs.dimensions.clone()),
            (Opcode::Reverse, Some(vec![1]))
        );
    }

    #[test]
    fn an_unsigned_reduce_window_runs_on_signed_twins() {
        let text = "HloModule m\nadd {\n  p = u32[] parameter(0)\n  q = u32[] parameter(1)\n  ROOT sum = u32[] add(p, q)\n}\n\
                    ENTRY e {\n  a = u32[8] parameter(0)\n  z = u32[] constant(0)\n  \
                    ROOT s = u32[8] reduce-window(a, z), window={size=8 pad=7_0}, to_apply=add\n}\n";
        let c = same_meaning(text);
        assert_eq!(root(&c).shape.to_string(), "s32[8]");
        // a max reducer depends on the sign: left alone
        let max = text.replace("add(p, q)", "maximum(p, q)");
        let m = parse_module(&max).unwrap();
        assert!(matches!(canonicalize(&m), Ok(Cow::Borrowed(_))));
    }

    #[test]
    fn a_dot_algorithm_becomes_conversions_of_its_operands() {
        let dot = |alg: &str| {
            format!(
                "HloModule m\nENTRY e {{\n  a = f32[2,8] parameter(0)\n  b = f32[8,3] parameter(1)\n  \
                 ROOT d = f32[2,3] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, algorithm={alg}\n}}\n"
            )
        };
        let c = same_meaning(&dot("dot_bf16_bf16_f32"));
        let r = root(&c);
        assert!(r.attrs.other.is_empty());
        let e = c.entry_computation();
        assert_eq!(e.instr(r.operands[0]).shape.to_string(), "bf16[2,8]");
        let c = same_meaning(&dot("dot_tf32_tf32_f32"));
        let e = c.entry_computation();
        assert_eq!(
            e.instr(root(&c).operands[1]).opcode,
            Opcode::ReducePrecision
        );
        // several components per operand: no lowering, a reason
        let m = parse_module(&dot("dot_bf16_bf16_f32_x3")).unwrap();
        assert!(canonicalize(&m).unwrap_err().contains("several components"));
    }
}
