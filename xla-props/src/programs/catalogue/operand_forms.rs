//! Operand forms: the single-op case of an op, with each operand slot made
//! by one of the forms a real program gives an op (a parameter, a constant
//! array, a broadcast scalar constant or parameter, an iota, a reshape,
//! transpose or slice of a parameter, a get-tuple-element), unfused or the
//! whole module in one `kLoop` fusion. All slots constant is the case where
//! a compiler's constant folding fires.
//!
//! A case names its forms slot by slot (`param+bcast-const`, `.fused` when
//! fused): the name is the module. Which rows of forms an op gets (a
//! covering array) is the case space's business (`property::tables`).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use super::{arr, build_single, chain::fuse_entry, scalar, Builder, BuiltCase, Form, OpCase, Res};
use crate::hlo::{
    ArrayShape, Attrs, ConstantData, ElementType, InstrId, Layout, Opcode, Shape, SliceDim,
};
use crate::inputs::{generate, Distribution, Role, SplitMix};
use crate::literal::Literal;

/// The forms an operand slot takes, in covering-array order (`param` first).
/// `bcast-one` and `bcast-zero` broadcast the constants simplifiers rewrite
/// by (`x * 1`, `x + 0`, `atan2(x, 1)`, which XLA CPU miscompiles): a drawn
/// constant is almost never one of them. 11 forms, a prime, so the
/// covering array's rotations reach every pair (`property::tables`).
pub const OPERAND_FORMS: &[&str] = &[
    "param",
    "const",
    "bcast-const",
    "bcast-one",
    "bcast-zero",
    "bcast-param",
    "iota",
    "reshape",
    "transpose",
    "slice",
    "gte",
];

/// The slot separator in a row name (`param+bcast-const`).
pub const SLOT_SEPARATOR: char = '+';
/// The suffix of a row whose module is one `kLoop` fusion.
pub const FUSED_SUFFIX: &str = ".fused";

/// The main operand's dims of an op's operand-form cases (an entry of the
/// op form's shape table, so every form builds it as its other cases).
pub fn forms_operand_dims(op: Opcode) -> &'static [i64] {
    match Form::of(op) {
        Some(Form::DynamicSlice | Form::DynamicUpdateSlice | Form::Gather | Form::Scatter) => {
            &[4, 3]
        }
        Some(Form::Dot) => &[3, 4],
        Some(Form::Convolution) => &[1, 5, 5, 2],
        Some(Form::Iota | Form::Structure | Form::Program) | None => &[],
        // elementwise: 64 elements, where XLA CPU's loops take their wide
        // paths (its atan2(x, 1) is right on f64[49] and [7,9], wrong on
        // [64] and [8,8] in every float type, on [4,16] in f64 only:
        // docs/findings.md)
        Some(
            Form::Elementwise
            | Form::Compare
            | Form::Convert
            | Form::BitcastConvert
            | Form::ReducePrecision
            | Form::Copy,
        ) => &[8, 8],
        Some(_) => &[3, 5],
    }
}

/// The ops that have operand-form cases: every catalogue op with operands
/// built by `build_single` (iota has none; structures are built elsewhere).
pub fn has_operand_forms(op: Opcode) -> bool {
    !matches!(
        Form::of(op),
        Some(Form::Iota | Form::Structure | Form::Program) | None
    )
}

/// The parameter numbers of the base case that each slot replaces: every
/// operand of the op that is a parameter, one slot each, except that the
/// start indices of dynamic-slice and dynamic-update-slice form one slot
/// (all constant is `x[3]`), and a fourth operand and beyond join the third.
fn slots_of(base: &BuiltCase, op: Opcode) -> Vec<Vec<usize>> {
    let entry = base.module.entry_computation();
    let Some(instr) = entry.instructions.iter().rev().find(|i| i.opcode == op) else {
        return Vec::new();
    };
    let first_index = match op {
        Opcode::DynamicSlice => 1,
        Opcode::DynamicUpdateSlice => 2,
        _ => 2,
    };
    let mut slots: Vec<Vec<usize>> = Vec::new();
    for (k, o) in instr.operands.iter().enumerate() {
        let p = entry.instr(*o);
        let Some(n) = p
            .attrs
            .parameter_number
            .filter(|_| p.opcode == Opcode::Parameter)
        else {
            continue;
        };
        let n = n as usize;
        let slot = k.min(first_index);
        while slots.len() <= slot {
            slots.push(Vec::new());
        }
        if !slots[slot].contains(&n) {
            slots[slot].push(n);
        }
    }
    slots.retain(|s| !s.is_empty());
    slots
}

/// The number of operand slots of `op`'s operand-form cases (0: none).
pub fn operand_form_slots(op: Opcode, dtype: ElementType, base_param: Option<&str>) -> usize {
    type Table = HashMap<(Opcode, ElementType), usize>;
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    let table = TABLE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(&n) = table
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(op, dtype))
    {
        return n;
    }
    let dims = forms_operand_dims(op);
    let layout = Layout::row_major(dims.len());
    let n = Form::of(op)
        .filter(|_| has_operand_forms(op))
        .and_then(|form| {
            let c = OpCase {
                name: &"operand-form slots",
                op,
                dtype,
                dims,
                layout: &layout,
                param: base_param,
            };
            build_single(&c, form).ok()
        })
        .map_or(0, |b| slots_of(&b, op).len());
    table
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert((op, dtype), n);
    n
}

/// What an operand-form case adds to its op case: the op form's own
/// parameter, the distribution and seed of its constants.
#[derive(Clone, Copy, Debug)]
pub struct FormsSite<'a> {
    /// The op form's parameter of the base case (a direction, a target, ...).
    pub base_param: Option<&'a str>,
    /// The distribution constants are drawn from.
    pub dist: Distribution,
    /// The seed of the constants (the case's, so the name is the module).
    pub seed: u64,
}

/// Builds an operand-form case: `c.param` is the row (`param+bcast-const`,
/// optionally `.fused`), `c.dims`/`c.layout` the main operand's.
///
/// ```
/// use xla_props::hlo::{ElementType, Layout, Opcode};
/// use xla_props::inputs::Distribution;
/// use xla_props::programs::{build_operand_forms, FormsSite, OpCase};
/// let case = OpCase {
///     name: &"atan2 of a broadcast constant",
///     op: Opcode::Atan2,
///     dtype: ElementType::F64,
///     dims: &[3, 5],
///     layout: &Layout::row_major(2),
///     param: Some("param+bcast-const"),
/// };
/// let site = FormsSite { base_param: None, dist: Distribution::Uniform, seed: 7 };
/// let built = build_operand_forms(&case, &site).unwrap();
/// assert_eq!(built.module.parameter_shapes().len(), 1);
/// let text = built.module.to_string();
/// assert!(text.contains("broadcast(") && text.contains("constant("), "{text}");
/// ```
pub fn build_operand_forms(c: &OpCase<'_>, site: &FormsSite<'_>) -> Res<BuiltCase> {
    let row = c.param.ok_or_else(|| c.err("no operand-form row"))?;
    let (row, fused) = match row.strip_suffix(FUSED_SUFFIX) {
        Some(r) => (r, true),
        None => (row, false),
    };
    let forms: Vec<&str> = row.split(SLOT_SEPARATOR).collect();
    if let Some(bad) = forms.iter().find(|f| !OPERAND_FORMS.contains(f)) {
        return Err(c.err(&format!("unknown operand form `{bad}`")));
    }
    let form = Form::of(c.op)
        .filter(|_| has_operand_forms(c.op))
        .ok_or_else(|| c.err("this op has no operand-form cases"))?;
    let base = build_single(
        &OpCase {
            param: site.base_param,
            ..*c
        },
        form,
    )?;
    let slots = slots_of(&base, c.op);
    if slots.len() != forms.len() {
        return Err(c.err(&format!(
            "{} operand slots, the row names {}",
            slots.len(),
            forms.len()
        )));
    }
    let mut form_of_param: HashMap<usize, &str> = HashMap::new();
    for (slot, f) in slots.iter().zip(&forms) {
        for &p in slot {
            form_of_param.insert(p, f);
        }
    }
    let entry_idx = base.module.entry.index();
    let entry = base.module.entry_computation();
    let mut b = Builder {
        comps: base.module.computations[..entry_idx].to_vec(),
        ..Builder::default()
    };
    let mut rng = SplitMix::new(site.seed ^ 0x6f70_6572_616e_6473);
    let mut map: Vec<InstrId> = Vec::with_capacity(entry.instructions.len());
    for instr in &entry.instructions {
        let id = match (instr.opcode, instr.attrs.parameter_number) {
            (Opcode::Parameter, Some(n)) => {
                let n = n as usize;
                let role = base.roles.get(n).copied().unwrap_or(Role::Data);
                let shape = instr
                    .shape
                    .as_array()
                    .ok_or_else(|| c.err("a tuple parameter"))?;
                let f = form_of_param.get(&n).copied().unwrap_or("param");
                let mut maker = Maker {
                    b: &mut b,
                    rng: &mut rng,
                    dist: site.dist,
                    role,
                };
                maker
                    .operand(f, shape, &instr.shape)
                    .map_err(|e| c.err(&e))?
            }
            _ => {
                let mut copy = instr.clone();
                copy.operands = instr.operands.iter().map(|o| map[o.index()]).collect();
                b.push(copy.opcode, copy.shape, copy.operands, copy.attrs)
            }
        };
        map.push(id);
    }
    let built = b.finish(map[entry.root.index()]);
    if !fused {
        return Ok(built);
    }
    Ok(BuiltCase {
        module: fuse_entry(built.module),
        roles: built.roles,
    })
}

/// Makes one operand in one form.
struct Maker<'b> {
    b: &'b mut Builder,
    rng: &'b mut SplitMix,
    dist: Distribution,
    role: Role,
}

type Made = Result<InstrId, String>;

fn dims_shape(dtype: ElementType, dims: &[i64]) -> Shape {
    arr(dtype, dims.to_vec(), None)
}

impl Maker<'_> {
    fn operand(&mut self, form: &str, a: &ArrayShape, declared: &Shape) -> Made {
        let (t, dims) = (a.dtype, a.dims.as_slice());
        let shape = dims_shape(t, dims);
        Ok(match form {
            "param" => self.b.param(declared.clone(), self.role),
            "const" => self.constant(t, dims)?,
            "bcast-const" => {
                let s = self.constant(t, &[])?;
                self.broadcast(s, t, dims)
            }
            "bcast-one" | "bcast-zero" => {
                let one = form == "bcast-one";
                let data = if t.is_float() {
                    ConstantData::Float(vec![if one { 1.0 } else { 0.0 }])
                } else if t.is_pred() {
                    ConstantData::Pred(vec![one])
                } else {
                    ConstantData::Int(vec![i128::from(one)])
                };
                let s = self.b.constant(scalar(t), data);
                self.broadcast(s, t, dims)
            }
            "bcast-param" => {
                let s = self.b.param(scalar(t), self.role);
                self.broadcast(s, t, dims)
            }
            "iota" => self.iota(t, dims),
            "reshape" => {
                let from: Vec<i64> = if dims.len() >= 2 {
                    vec![dims.iter().product()]
                } else {
                    let mut d = vec![1];
                    d.extend_from_slice(dims);
                    d
                };
                let p = self.b.param(dims_shape(t, &from), self.role);
                self.b
                    .push(Opcode::Reshape, shape, vec![p], Attrs::default())
            }
            "transpose" => {
                let rank = dims.len() as i64;
                let from: Vec<i64> = dims.iter().rev().copied().collect();
                let p = self.b.param(dims_shape(t, &from), self.role);
                self.b.push(
                    Opcode::Transpose,
                    shape,
                    vec![p],
                    Attrs {
                        dimensions: Some((0..rank).rev().collect()),
                        ..Attrs::default()
                    },
                )
            }
            "slice" => self.slice(t, dims),
            "gte" => {
                let p = self.b.param(shape.clone(), self.role);
                let tuple = self.b.push(
                    Opcode::Tuple,
                    Shape::Tuple(vec![shape.clone(), shape.clone()]),
                    vec![p, p],
                    Attrs::default(),
                );
                self.b.push(
                    Opcode::GetTupleElement,
                    shape,
                    vec![tuple],
                    Attrs {
                        index: Some(1),
                        ..Attrs::default()
                    },
                )
            }
            other => return Err(format!("unknown operand form `{other}`")),
        })
    }

    /// A constant drawn like a parameter of the same role and distribution.
    fn constant(&mut self, t: ElementType, dims: &[i64]) -> Made {
        let lit = generate(
            &ArrayShape::new(t, dims.to_vec()),
            self.role,
            self.dist,
            self.rng,
        )
        .map_err(|e| e.to_string())?;
        Ok(self.b.constant(dims_shape(t, dims), constant_data(&lit)))
    }

    fn broadcast(&mut self, s: InstrId, t: ElementType, dims: &[i64]) -> InstrId {
        self.b.push(
            Opcode::Broadcast,
            dims_shape(t, dims),
            vec![s],
            Attrs {
                dimensions: Some(vec![]),
                ..Attrs::default()
            },
        )
    }

    /// An iota along the last dimension (of s8 converted, for pred; of one
    /// element reshaped, for a scalar).
    fn iota(&mut self, t: ElementType, dims: &[i64]) -> InstrId {
        let iota_t = if t.is_pred() { ElementType::S8 } else { t };
        let iota_dims: Vec<i64> = if dims.is_empty() {
            vec![1]
        } else {
            dims.to_vec()
        };
        let mut id = self.b.push(
            Opcode::Iota,
            dims_shape(iota_t, &iota_dims),
            vec![],
            Attrs {
                iota_dimension: Some(iota_dims.len() as i64 - 1),
                ..Attrs::default()
            },
        );
        if t.is_pred() {
            id = self.b.push(
                Opcode::Convert,
                dims_shape(t, &iota_dims),
                vec![id],
                Attrs::default(),
            );
        }
        if dims.is_empty() {
            id = self
                .b
                .push(Opcode::Reshape, scalar(t), vec![id], Attrs::default());
        }
        id
    }

    /// The middle of a parameter one element wider on each side (of a
    /// three-element vector reshaped, for a scalar).
    fn slice(&mut self, t: ElementType, dims: &[i64]) -> InstrId {
        let inner: Vec<i64> = if dims.is_empty() {
            vec![1]
        } else {
            dims.to_vec()
        };
        let from: Vec<i64> = inner.iter().map(|d| d + 2).collect();
        let p = self.b.param(dims_shape(t, &from), self.role);
        let mut id = self.b.push(
            Opcode::Slice,
            dims_shape(t, &inner),
            vec![p],
            Attrs {
                slice: Some(
                    inner
                        .iter()
                        .map(|&d| SliceDim {
                            start: 1,
                            limit: 1 + d,
                            stride: 1,
                        })
                        .collect(),
                ),
                ..Attrs::default()
            },
        );
        if dims.is_empty() {
            id = self
                .b
                .push(Opcode::Reshape, scalar(t), vec![id], Attrs::default());
        }
        id
    }
}

/// A literal as constant data.
fn constant_data(lit: &Literal) -> ConstantData {
    let t = lit.dtype();
    let n = lit.element_count();
    if t.is_float() {
        ConstantData::Float((0..n).map(|i| lit.get_f64(i)).collect())
    } else if t.is_pred() {
        ConstantData::Pred((0..n).map(|i| lit.get_i128(i) != 0).collect())
    } else {
        ConstantData::Int((0..n).map(|i| lit.get_i128(i)).collect())
    }
}
