//! Attribute classes of dynamic-slice, dynamic-update-slice, gather and scatter.

use super::{Cfg, Res};
use crate::hlo::{Attrs, ConstantData, ElementType, GatherDims, InstrId, Opcode, ScatterDims};
use crate::inputs::Role;
use crate::programs::catalogue::arr;

const SLICE: [i64; 2] = [2, 3];

pub(super) fn first_dims(op: Opcode, class: &str) -> Vec<i64> {
    match (op, class) {
        (Opcode::Gather | Opcode::Scatter, "batching") => vec![3, 4, 5],
        (Opcode::DynamicSlice | Opcode::DynamicUpdateSlice, _) => vec![5, 6],
        _ => vec![4, 5],
    }
}

fn dynamic(c: &mut Cfg, op: Opcode, class: &str, dims: &[i64]) -> Res<InstrId> {
    let (ty, range) = class.split_once('-').ok_or("bad dynamic-slice class")?;
    let index: ElementType = ty.parse().map_err(|_| "bad index type")?;
    // a zero-size window: nothing read (dynamic-slice) or written (update)
    let sizes: [i64; 2] = if range == "empty-window" {
        [0, SLICE[1]]
    } else {
        SLICE
    };
    let x = c.main(dims, Role::Data);
    let mut operands = vec![x];
    if op == Opcode::DynamicUpdateSlice {
        operands.push(c.param(c.t, &sizes, Role::Data));
    }
    for (&d, &s) in dims.iter().zip(&sizes) {
        let role = match range {
            "inbounds" | "empty-window" => Role::Index(0, d - s),
            "oob-high" => Role::Index(d - s + 1, d + 3),
            // unsigned at or above 2^(w-1): past the end, negative if misread as signed
            "high-bit" => Role::HighBit,
            "extremes" => Role::Extremes,
            _ => Role::Index(-4, -1),
        };
        operands.push(c.param(index, &[], role));
    }
    let attrs = Attrs {
        dynamic_slice_sizes: (op == Opcode::DynamicSlice).then(|| sizes.to_vec()),
        ..Attrs::default()
    };
    c.op(op, operands, attrs)
}

/// A constant s32 index array.
fn indices(c: &mut Cfg, dims: &[i64], values: &[i128]) -> InstrId {
    c.b.constant(
        arr(ElementType::S32, dims.to_vec(), None),
        ConstantData::Int(values.to_vec()),
    )
}

struct G {
    idx: Vec<i64>,
    hi: i64,
    offset: Vec<i64>,
    collapsed: Vec<i64>,
    map: Vec<i64>,
    ivd: i64,
    batching: (Vec<i64>, Vec<i64>),
    sizes: Vec<i64>,
}

fn gather_spec(class: &str) -> G {
    let g =
        |idx: &[i64], hi, offset: &[i64], collapsed: &[i64], map: &[i64], ivd, sizes: &[i64]| G {
            idx: idx.to_vec(),
            hi,
            offset: offset.to_vec(),
            collapsed: collapsed.to_vec(),
            map: map.to_vec(),
            ivd,
            batching: (vec![], vec![]),
            sizes: sizes.to_vec(),
        };
    match class {
        "ivd-first" => g(&[1, 3], 3, &[1], &[0], &[0], 0, &[1, 5]),
        "ivd-implicit" => g(&[3], 3, &[1], &[0], &[0], 1, &[1, 5]),
        "collapse-none" => g(&[3, 1], 3, &[1, 2], &[], &[0], 1, &[2, 5]),
        "collapse-all" => g(&[3, 2], 3, &[], &[0, 1], &[0, 1], 1, &[1, 1]),
        "start-map-minor" => g(&[3, 1], 4, &[1], &[1], &[1], 1, &[4, 1]),
        "offset-dims-leading" => g(&[3, 1], 3, &[0], &[0], &[0], 1, &[1, 5]),
        "window-partial" => g(&[3, 2], 3, &[1], &[0], &[0, 1], 1, &[1, 3]),
        "batching" => G {
            batching: (vec![0], vec![0]),
            ..g(&[3, 1], 3, &[1], &[1], &[1], 1, &[1, 1, 5])
        },
        _ => g(&[3, 1], 3, &[1], &[0], &[0], 1, &[1, 5]),
    }
}

fn gather(c: &mut Cfg, class: &str, dims: &[i64]) -> Res<InstrId> {
    let s = gather_spec(class);
    let x = c.main(dims, Role::Data);
    // `<type>-<value class>`: the start indices' type and values
    let typed = class
        .split_once('-')
        .and_then(|(ty, range)| Some((ty.parse::<ElementType>().ok()?, range)));
    let idx = match typed {
        _ if class == "sorted" => indices(c, &s.idx, &[0, 1, 3]),
        Some((index, range)) => {
            let role = match range {
                "high-bit" => Role::HighBit,
                "extremes" => Role::Extremes,
                _ => Role::Index(-4, -1),
            };
            c.param(index, &s.idx, role)
        }
        None => c.param(ElementType::S32, &s.idx, Role::Index(0, s.hi)),
    };
    let attrs = Attrs {
        gather_dims: Some(GatherDims {
            offset_dims: s.offset,
            collapsed_slice_dims: s.collapsed,
            start_index_map: s.map,
            index_vector_dim: s.ivd,
            operand_batching_dims: s.batching.0,
            start_indices_batching_dims: s.batching.1,
            slice_sizes: s.sizes,
        }),
        indices_are_sorted: class == "sorted",
        ..Attrs::default()
    };
    c.op(Opcode::Gather, vec![x, idx], attrs)
}

fn combiner(class: &str) -> Option<Opcode> {
    match class {
        "combine-multiply" => Some(Opcode::Multiply),
        "combine-minimum" => Some(Opcode::Minimum),
        "combine-maximum" => Some(Opcode::Maximum),
        "combine-overwrite" => None,
        _ => Some(Opcode::Add),
    }
}

/// `(a, b) -> b`: the overwriting combiner.
fn overwrite_comp(c: &mut Cfg) -> crate::hlo::CompId {
    let mut b = crate::programs::catalogue::Builder::default();
    let _ = b.param(arr(c.t, vec![], None), Role::Data);
    let y = b.param(arr(c.t, vec![], None), Role::Data);
    c.b.sub(b, format!("overwrite_{}", c.t), y)
}

fn scatter(c: &mut Cfg, class: &str, dims: &[i64]) -> Res<InstrId> {
    let op = combiner(class);
    // duplicates only where the combiner is exact in any order
    let exact = matches!(op, Some(Opcode::Minimum | Opcode::Maximum)) || !c.t.is_float();
    let dup = class.starts_with("combine") && op.is_some() && exact;
    let rows: &[i128] = match class {
        _ if dup => &[1, 3, 1],
        "sorted-unique" => &[0, 1, 3],
        "batching" => &[1, 3, 0],
        "scatter-minor" => &[0, 2, 4],
        _ => &[0, 2, 3],
    };
    let (idx_dims, ivd): (&[i64], i64) = if class == "ivd-implicit" {
        (&[3], 1)
    } else {
        (&[3, 1], 1)
    };
    type Dims = &'static [i64];
    let (upd, window, inserted, to_operand, batching): (Dims, Dims, Dims, Dims, Dims) = match class
    {
        "scatter-minor" => (&[3, 4], &[1], &[1], &[1], &[]),
        "window-full" => (&[3, 1, 5], &[1, 2], &[], &[0], &[]),
        "batching" => (&[3, 5], &[1], &[1], &[1], &[0]),
        _ => (&[3, 5], &[1], &[0], &[0], &[]),
    };
    let comp = match op {
        Some(o) => c.b.binary_comp(o, c.t),
        None => overwrite_comp(c),
    };
    let x = c.main(dims, Role::Data);
    let idx = indices(c, idx_dims, rows);
    let u = c.param(c.t, upd, Role::Data);
    let attrs = Attrs {
        scatter_dims: Some(ScatterDims {
            update_window_dims: window.to_vec(),
            inserted_window_dims: inserted.to_vec(),
            scatter_dims_to_operand_dims: to_operand.to_vec(),
            index_vector_dim: ivd,
            input_batching_dims: batching.to_vec(),
            scatter_indices_batching_dims: batching.to_vec(),
        }),
        indices_are_sorted: class == "sorted-unique",
        unique_indices: !dup,
        to_apply: Some(comp),
        ..Attrs::default()
    };
    c.op(Opcode::Scatter, vec![x, idx, u], attrs)
}

pub(super) fn build(c: &mut Cfg, op: Opcode, class: &str, dims: &[i64]) -> Res<InstrId> {
    match op {
        Opcode::DynamicSlice | Opcode::DynamicUpdateSlice => dynamic(c, op, class, dims),
        Opcode::Gather => gather(c, class, dims),
        Opcode::Scatter => scatter(c, class, dims),
        _ => Err(format!("`{op}` is not an indexing op")),
    }
}
