//! Elementwise chains (an op followed by another, or by a quantization
//! residual), unfused or as one loop fusion.

use super::{arr, elementwise, Builder, BuiltCase, CatalogueError, OpCase};
use crate::hlo::{
    Attrs, CompId, Computation, ElementType, FusionKind, InstrId, Instruction, Module, Opcode,
};
use crate::inputs::Role;

/// The narrower type a float is rounded through by the `then-residual` follower.
fn residual_type(t: ElementType) -> ElementType {
    match t {
        ElementType::F64 | ElementType::F32 => ElementType::Bf16,
        ElementType::F16 | ElementType::Bf16 => ElementType::F8E5M2,
        ElementType::F8E5M2 => ElementType::F8E4M3Fn,
        _ => ElementType::F8E5M2,
    }
}

/// Builds an elementwise chain `follower(op(params...))`; `fused` puts the
/// whole chain in one `kLoop` fusion called from the entry. A binary
/// follower takes the op's result as its first operand and a new parameter
/// `y` as its second (`then-divide`: `op(..) / y`), except
/// `then-divide-by-it`: `y / op(..)`, where the op's result is the divisor
/// (the forms XLA's algebraic simplifier rewrites: `a / sqrt(b)`,
/// `(a / b) / c`, `a / (b / c)`, `a / pow(b, c)`).
///
/// ```
/// use xla_props::hlo::{ElementType, Layout, Opcode};
/// use xla_props::programs::{build_chain, OpCase};
/// let case = OpCase {
///     name: &"multiply then residual",
///     op: Opcode::Multiply,
///     dtype: ElementType::F32,
///     dims: &[7],
///     layout: &Layout::row_major(1),
///     param: Some("then-residual"),
/// };
/// let fused = build_chain(&case, true).unwrap().module;
/// let entry = fused.entry_computation();
/// assert_eq!(entry.instr(entry.root).opcode, Opcode::Fusion);
/// ```
pub fn build_chain(c: &OpCase<'_>, fused: bool) -> Result<BuiltCase, CatalogueError> {
    let err = |why: &str| c.err(why);
    let t = c.dtype;
    let dims = c.dims.to_vec();
    let layout = c.layout.clone();
    let shape = arr(t, dims.clone(), Some(layout.clone()));
    let mut b = Builder::default();
    let first = elementwise(&mut b, c.op, t, &dims, &layout)?;
    let follower = c
        .param
        .and_then(|p| p.strip_prefix("then-"))
        .ok_or_else(|| err("no follower"))?;
    let root = match follower {
        "negate" | "abs" | "not" => {
            let op: Opcode = follower.parse().map_err(|_| err("bad follower"))?;
            b.push(op, shape, vec![first], Attrs::default())
        }
        "residual" => {
            let narrow = residual_type(t);
            let down = b.push(
                Opcode::Convert,
                arr(narrow, dims.clone(), Some(layout.clone())),
                vec![first],
                Attrs::default(),
            );
            let up = b.push(Opcode::Convert, shape.clone(), vec![down], Attrs::default());
            b.push(Opcode::Subtract, shape, vec![first, up], Attrs::default())
        }
        "divide-by-it" => {
            let y = b.param(shape.clone(), Role::Data);
            b.push(Opcode::Divide, shape, vec![y, first], Attrs::default())
        }
        other => {
            let op: Opcode = other.parse().map_err(|_| err("bad follower"))?;
            // a divisor stays away from zero
            let role = if op == Opcode::Divide {
                Role::NonZero
            } else {
                Role::Data
            };
            let y = b.param(shape.clone(), role);
            b.push(op, shape, vec![first, y], Attrs::default())
        }
    };
    let unfused = b.finish(root);
    if !fused {
        return Ok(unfused);
    }
    Ok(BuiltCase {
        module: fuse_entry(unfused.module),
        roles: unfused.roles,
    })
}

/// Moves the whole entry computation into one `kLoop` fusion called from a new entry.
pub fn fuse_entry(mut module: Module) -> Module {
    let entry_idx = module.entry.index();
    let mut body = module.computations[entry_idx].clone();
    body.name = "fused_computation".to_string();
    let params = body.parameters();
    let mut entry = Vec::new();
    for (n, &p) in params.iter().enumerate() {
        let mut instr = body.instr(p).clone();
        instr.name = format!("arg{n}");
        entry.push(instr);
    }
    let fusion_id = CompId(entry_idx as u32);
    let root_shape = body.instr(body.root).shape.clone();
    entry.push(Instruction {
        name: "fusion".to_string(),
        opcode: Opcode::Fusion,
        shape: root_shape,
        operands: (0..params.len() as u32).map(InstrId).collect(),
        attrs: Attrs {
            fusion_kind: Some(FusionKind::Loop),
            calls: vec![fusion_id],
            ..Attrs::default()
        },
    });
    let root = InstrId(params.len() as u32);
    module.computations[entry_idx] = body;
    module.computations.push(Computation {
        name: "main".to_string(),
        instructions: entry,
        root,
        other: vec![],
    });
    module.entry = CompId(module.computations.len() as u32 - 1);
    module
}
