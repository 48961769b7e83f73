//! Which attribute classes each op has (per dtype), their operand dims,
//! and the family module that builds each.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::cfg::{Cfg, Res};
use super::{contraction, control, elementwise, indexing, reduction, shape_ops};
use crate::hlo::{class_families, ElementType, InstrId, Opcode, ATTRIBUTE_CLASSES};
use crate::programs::catalogue::{Builder, BuiltCase, CatalogueError, OpCase};

/// The classes of `op` that apply to `dtype`, in table order (the variant parameters).
pub(crate) fn classes(op: Opcode, dtype: ElementType) -> &'static [&'static str] {
    type Table = HashMap<(Opcode, ElementType), Vec<&'static str>>;
    static TABLE: OnceLock<Table> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t: Table = HashMap::new();
        for &op in Opcode::ALL {
            for &dtype in ElementType::ALL {
                let names: Vec<&'static str> = class_families(op)
                    .filter(|f| f.applies_to(dtype))
                    .flat_map(|f| f.classes.iter().copied())
                    .filter(|c| applies(op, c, dtype))
                    .collect();
                if !names.is_empty() {
                    t.insert((op, dtype), names);
                }
            }
        }
        t
    });
    table.get(&(op, dtype)).map_or(&[], Vec::as_slice)
}

/// Per-class dtype conditions beyond the family's (a target type must exist).
fn applies(op: Opcode, class: &str, dtype: ElementType) -> bool {
    match op {
        Opcode::BitcastConvert => elementwise::bitcast_target(class, dtype).is_some(),
        _ => true,
    }
}

/// The dims of a class's main operand (the shape segment of its case names).
pub(crate) fn first_dims(op: Opcode, class: &str) -> &'static [i64] {
    type Table = HashMap<(Opcode, String), Vec<i64>>;
    static TABLE: OnceLock<Table> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        ATTRIBUTE_CLASSES
            .iter()
            .flat_map(|f| f.classes.iter().map(move |c| (f.op, *c)))
            .map(|(op, c)| ((op, c.to_string()), dims_of(op, c)))
            .collect()
    });
    table
        .get(&(op, class.to_string()))
        .map_or(&[], Vec::as_slice)
}

fn dims_of(op: Opcode, class: &str) -> Vec<i64> {
    let first_dims = family(op).map_or(control::first_dims as FirstDims, |f| f.0);
    first_dims(op, class)
}

type FirstDims = fn(Opcode, &str) -> Vec<i64>;
type Build = fn(&mut Cfg, Opcode, &str, &[i64]) -> Res<InstrId>;

/// The op family module that has `op`'s attribute classes: its first-dims
/// and build functions; None for an op without attribute classes.
fn family(op: Opcode) -> Option<(FirstDims, Build)> {
    use Opcode as O;
    Some(match op {
        O::Transpose
        | O::Reverse
        | O::Slice
        | O::Pad
        | O::Concatenate
        | O::Reshape
        | O::Broadcast
        | O::Iota => (shape_ops::first_dims, shape_ops::build),
        O::Select | O::Clamp | O::Compare | O::BitcastConvert | O::ReducePrecision => {
            (elementwise::first_dims, elementwise::build)
        }
        O::DynamicSlice | O::DynamicUpdateSlice | O::Gather | O::Scatter => {
            (indexing::first_dims, indexing::build)
        }
        O::Reduce | O::ReduceWindow | O::Sort => (reduction::first_dims, reduction::build),
        O::Dot | O::Convolution => (contraction::first_dims, contraction::build),
        O::While | O::Conditional | O::Call | O::Map | O::Tuple => {
            (control::first_dims, control::build)
        }
        _ => return None,
    })
}

/// Builds the module of an attribute-class case.
pub(crate) fn build(key: &OpCase<'_>) -> Result<BuiltCase, CatalogueError> {
    let err = |why: String| key.err(&why);
    let class = key.param.ok_or_else(|| err("no attribute class".into()))?;
    let mut c = Cfg {
        b: Builder::default(),
        t: key.dtype,
        layout: Some(key.layout.clone()),
    };
    let (_, build) =
        family(key.op).ok_or_else(|| err(format!("`{}` has no attribute classes", key.op)))?;
    let root = build(&mut c, key.op, class, key.dims).map_err(err)?;
    Ok(c.b.finish(root))
}
