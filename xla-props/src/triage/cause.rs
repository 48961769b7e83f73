//! A failure's root cause: what triage groups by.

use crate::hlo::{Category, Computation, ElementType, Instruction, Module, Opcode, Shape};

/// What a failure's cause is, as far as triage can tell: failures with
/// equal causes are one group (one bug, most likely).
///
/// ```
/// use xla_props::triage::RootCause;
/// let c = RootCause {
///     opcode: "add".into(),
///     dtype: "integer".into(),
///     operand_forms: vec!["parameter".into()],
///     mismatch: "wrong values".into(),
///     pass: "not bisected".into(),
///     known_bug: None,
/// };
/// assert_eq!(c.title(), "add on integer (parameter): wrong values, not bisected");
/// ```
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct RootCause {
    /// The culprit instruction's opcode (the first diverging instruction,
    /// inside its fusion when it is fused).
    pub opcode: String,
    /// The class of the culprit's element type (`float`, `integer`, `pred`,
    /// `complex`, `FROM->TO` for a conversion, `any` for an op that only
    /// moves elements, `signed index`/`unsigned index` for indexing): the
    /// exact type is a member's detail, the class is the code path.
    pub dtype: String,
    /// The distinct forms the culprit's operands take in the minimized reproducer
    /// (`parameter`, `constant`, `broadcast`, `iota`, `reshape`, `transpose`,
    /// `slice`, `tuple-element`, or `computed`), sorted: an operand that
    /// still fails the same way as a parameter carrying its values counts
    /// as `parameter`, so a form that is left is part of the cause.
    pub operand_forms: Vec<String>,
    /// The kind of mismatch, coarsely: `wrong values` (finite or not),
    /// `shape`, `backend failed`, `reference failed`, `both failed
    /// differently`, `composition`.
    pub mismatch: String,
    /// The culprit compiler pass (`pass NAME`), `code generation` when no
    /// pass's disabling makes it vanish, or `not bisected`.
    pub pass: String,
    /// The known bug whose model explains the failure, if any.
    pub known_bug: Option<String>,
}

impl RootCause {
    /// One line.
    pub fn title(&self) -> String {
        if let Some(b) = &self.known_bug {
            return format!("known bug {b}");
        }
        format!(
            "{} on {} ({}): {}, {}",
            self.opcode,
            self.dtype,
            self.operand_forms.join(", "),
            self.mismatch,
            self.pass
        )
    }

    /// The cause of a known bug: only its id counts.
    pub fn known(id: &str) -> RootCause {
        RootCause {
            opcode: String::new(),
            dtype: String::new(),
            operand_forms: Vec::new(),
            mismatch: String::new(),
            pass: String::new(),
            known_bug: Some(id.to_string()),
        }
    }
}

/// The class of an element type.
pub fn dtype_class(t: ElementType) -> &'static str {
    if t.is_pred() {
        "pred"
    } else if t.is_complex() {
        "complex"
    } else if t.is_float() {
        "float"
    } else if t.is_integer() {
        "integer"
    } else {
        "other"
    }
}

fn shape_class(shape: &Shape) -> &'static str {
    shape.as_array().map_or("tuple", |a| dtype_class(a.dtype))
}

/// The dtype class of `ins` (in `comp`): `any` for an op that only moves
/// elements (its code does not depend on what they are), the start
/// indices' signedness for indexing, its operand's for a comparison,
/// `FROM->TO` for a conversion, else its own.
pub(crate) fn culprit_dtype(comp: &Computation, ins: &Instruction) -> String {
    let class = |k: usize| {
        ins.operands
            .get(k)
            .map(|&o| shape_class(&comp.instr(o).shape))
    };
    let own = shape_class(&ins.shape);
    match ins.opcode.category() {
        Category::ShapeOp | Category::Structure => return "any".into(),
        Category::Indexing => {
            let index = if ins.opcode == Opcode::DynamicUpdateSlice {
                2
            } else {
                1
            };
            let signed = ins
                .operands
                .get(index)
                .and_then(|&o| comp.instr(o).shape.as_array().map(|a| a.dtype));
            return match signed {
                Some(t) if t.is_unsigned_int() => "unsigned index".into(),
                Some(_) => "signed index".into(),
                None => "index".into(),
            };
        }
        _ => {}
    }
    match (ins.opcode, class(0)) {
        (Opcode::Convert | Opcode::BitcastConvert, Some(from)) => format!("{from}->{own}"),
        (Opcode::Compare, Some(from)) => from.to_string(),
        _ => own.to_string(),
    }
}

/// How an operand is made, by its opcode.
pub fn operand_form(op: Opcode) -> &'static str {
    match op {
        Opcode::Parameter => "parameter",
        Opcode::Constant => "constant",
        Opcode::Broadcast => "broadcast",
        Opcode::Iota => "iota",
        Opcode::Reshape => "reshape",
        Opcode::Transpose => "transpose",
        Opcode::Slice => "slice",
        Opcode::GetTupleElement => "tuple-element",
        _ => "computed",
    }
}

/// The culprit in a (minimized) reproducer: the instruction called `name`,
/// else the first of `opcode`, in any computation.
pub(crate) fn find_culprit<'m>(
    module: &'m Module,
    name: &str,
    opcode: &str,
) -> Option<(&'m Computation, &'m Instruction)> {
    let all = || {
        module
            .computations
            .iter()
            .flat_map(|c| c.instructions.iter().map(move |i| (c, i)))
    };
    all()
        .find(|(_, i)| i.name == name)
        .or_else(|| all().find(|(_, i)| i.opcode.name() == opcode))
}

/// The opcode, dtype class and operand forms of the culprit `name` (of
/// `opcode`) in `module`; `None` when the reproducer lost it.
pub(crate) fn culprit_shape(
    module: &Module,
    name: &str,
    opcode: &str,
) -> Option<(String, String, Vec<String>)> {
    let (comp, ins) = find_culprit(module, name, opcode)?;
    let forms = ins
        .operands
        .iter()
        .map(|&o| operand_form(comp.instr(o).opcode).to_string())
        .collect();
    Some((
        ins.opcode.name().to_string(),
        culprit_dtype(comp, ins),
        forms,
    ))
}
