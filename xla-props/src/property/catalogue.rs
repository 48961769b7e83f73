//! The catalogue: builds the HLO module of a case from its key alone, and says
//! what each parameter is for (so inputs land in a safe range).

use super::id::CaseKey;
use super::space::Form;
use super::spec::Template;
use crate::hlo::{
    ArrayShape, Attrs, CompId, ComparisonDirection, ComparisonType, Computation, ConstantData,
    ConvDims, DotDims, ElementType, FusionKind, GatherDims, InstrId, Instruction, Layout, Module,
    Opcode, PadDim, ScatterDims, Shape, SliceDim, WindowDim,
};
use crate::inputs::Role;

/// A case's module and the role of each entry parameter.
#[derive(Clone, Debug)]
pub struct BuiltCase {
    /// The module (entry computation last).
    pub module: Module,
    /// One role per entry parameter, by parameter number.
    pub roles: Vec<Role>,
}

/// Why the catalogue could not build a case (a bug in the catalogue, reported as a failure).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("catalogue cannot build `{case}`: {why}")]
pub struct CatalogueError {
    /// The case.
    pub case: String,
    /// Why.
    pub why: String,
}

#[derive(Default)]
pub(super) struct Builder {
    pub(super) comps: Vec<Computation>,
    pub(super) instrs: Vec<Instruction>,
    pub(super) roles: Vec<Role>,
}

pub(super) fn arr(dtype: ElementType, dims: Vec<i64>, layout: Option<Layout>) -> Shape {
    let layout = Some(layout.unwrap_or_else(|| Layout::row_major(dims.len())));
    Shape::Array(ArrayShape {
        dtype,
        dims,
        layout,
    })
}

pub(super) fn scalar(dtype: ElementType) -> Shape {
    arr(dtype, vec![], None)
}

impl Builder {
    pub(super) fn push(
        &mut self,
        op: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
        attrs: Attrs,
    ) -> InstrId {
        let id = InstrId(self.instrs.len() as u32);
        let name = format!("{}.{}", op.name(), id.0);
        self.instrs.push(Instruction {
            name,
            opcode: op,
            shape,
            operands,
            attrs,
        });
        id
    }
    pub(super) fn param(&mut self, shape: Shape, role: Role) -> InstrId {
        let n = self.roles.len();
        self.roles.push(role);
        let id = self.push(
            Opcode::Parameter,
            shape,
            vec![],
            Attrs {
                parameter_number: Some(n as i64),
                ..Attrs::default()
            },
        );
        self.instrs[id.index()].name = format!("p{n}");
        id
    }
    pub(super) fn constant(&mut self, shape: Shape, data: ConstantData) -> InstrId {
        self.push(
            Opcode::Constant,
            shape,
            vec![],
            Attrs {
                constant: Some(data),
                ..Attrs::default()
            },
        )
    }
    pub(super) fn scalar_const(&mut self, dtype: ElementType, v: Init) -> InstrId {
        let data = match v {
            Init::F(x) if dtype.is_float() => ConstantData::Float(vec![x]),
            Init::I(i) if dtype.is_float() => ConstantData::Float(vec![i as f64]),
            Init::F(x) if dtype.is_pred() => ConstantData::Pred(vec![x != 0.0]),
            Init::I(i) if dtype.is_pred() => ConstantData::Pred(vec![i != 0]),
            Init::F(x) => ConstantData::Int(vec![x as i128]),
            Init::I(i) => ConstantData::Int(vec![i]),
        };
        self.constant(scalar(dtype), data)
    }
    /// A called computation `(a, b) -> op(a, b)` on scalars.
    pub(super) fn binary_comp(&mut self, op: Opcode, dtype: ElementType) -> CompId {
        let mut b = Builder::default();
        let x = b.param(scalar(dtype), Role::Data);
        let y = b.param(scalar(dtype), Role::Data);
        let r = b.push(op, scalar(dtype), vec![x, y], Attrs::default());
        self.sub(b, format!("{}_{}", op.name(), dtype), r)
    }
    /// A sort comparator `(a, b) -> compare(a, b, dir)`.
    pub(super) fn compare_comp(&mut self, dtype: ElementType, dir: ComparisonDirection) -> CompId {
        let mut b = Builder::default();
        let x = b.param(scalar(dtype), Role::Data);
        let y = b.param(scalar(dtype), Role::Data);
        let r = b.push(
            Opcode::Compare,
            scalar(ElementType::Pred),
            vec![x, y],
            Attrs {
                direction: Some(dir),
                comparison_type: Some(comparison_type(dtype, true)),
                ..Attrs::default()
            },
        );
        self.sub(b, format!("compare_{}_{}", dtype, dir.name()), r)
    }
    pub(super) fn sub(&mut self, mut b: Builder, name: String, root: InstrId) -> CompId {
        // instruction names are unique module-wide
        for instr in &mut b.instrs {
            instr.name = format!("{name}.{}", instr.name);
        }
        let mut comps = b.comps;
        let id = CompId((self.comps.len() + comps.len()) as u32);
        self.comps.append(&mut comps);
        self.comps.push(Computation {
            name,
            instructions: b.instrs,
            root,
            other: vec![],
        });
        id
    }
    pub(super) fn finish(mut self, root: InstrId) -> BuiltCase {
        let entry = CompId(self.comps.len() as u32);
        self.comps.push(Computation {
            name: "main".to_string(),
            instructions: self.instrs,
            root,
            other: vec![],
        });
        BuiltCase {
            module: Module {
                name: "case".to_string(),
                attrs: vec![],
                computations: self.comps,
                entry,
            },
            roles: self.roles,
        }
    }
}

pub(super) fn comparison_type(dtype: ElementType, total: bool) -> ComparisonType {
    if dtype.is_float() {
        if total {
            ComparisonType::TotalOrder
        } else {
            ComparisonType::Float
        }
    } else if dtype.is_signed_int() {
        ComparisonType::Signed
    } else {
        ComparisonType::Unsigned
    }
}

/// The safe-range role of operand `i` of an elementwise op.
pub fn elementwise_role(op: Opcode, i: usize) -> Role {
    use Opcode as O;
    match (op, i) {
        (O::Log | O::Sqrt | O::Rsqrt, _) => Role::Range(0.05, 8.0),
        (O::LogPlusOne, _) => Role::Range(-0.9, 8.0),
        (O::Tan, _) => Role::Range(-1.4, 1.4),
        (O::Divide | O::Remainder, 1) => Role::NonZero,
        (O::Power, 0) => Role::Range(0.25, 4.0),
        (O::Power, 1) => Role::NonNegative,
        (O::ShiftLeft | O::ShiftRightArithmetic | O::ShiftRightLogical, 1) => Role::ShiftAmount,
        _ => Role::Data,
    }
}

/// An init value: a float (exact in f64) or an integer (exact in i128).
#[derive(Clone, Copy)]
pub(super) enum Init {
    F(f64),
    I(i128),
}

pub(super) fn lowest(dtype: ElementType) -> Init {
    match dtype.float_format() {
        Some(f) if f.has_inf => Init::F(f64::NEG_INFINITY),
        Some(f) => Init::F(-f.max),
        None => Init::I(dtype.int_range().map_or(0, |r| r.0)),
    }
}

pub(super) fn highest(dtype: ElementType) -> Init {
    match dtype.float_format() {
        Some(f) if f.has_inf => Init::F(f64::INFINITY),
        Some(f) => Init::F(f.max),
        None => Init::I(dtype.int_range().map_or(0, |r| r.1)),
    }
}

fn window_out(d: i64, size: i64, stride: i64, lo: i64, hi: i64) -> i64 {
    let padded = d + lo + hi;
    if padded < size {
        0
    } else {
        (padded - size) / stride + 1
    }
}

/// Builds the module of a case.
///
/// ```
/// use xla_props::property::{build_case, CaseKey};
/// let key: CaseKey = "vs_reference::add::f32::f32[3,5]{1,0}::uniform".parse().unwrap();
/// let built = build_case(&key).unwrap();
/// assert_eq!(built.module.parameter_shapes().len(), 2);
/// assert_eq!(built.module.result_shape().to_string(), "f32[3,5]{1,0}");
/// ```
pub fn build_case(key: &CaseKey) -> Result<BuiltCase, CatalogueError> {
    let err = |why: &str| CatalogueError {
        case: key.to_string(),
        why: why.to_string(),
    };
    if key.spec().template == Template::ElementwiseChain {
        return build_chain(key, false);
    }
    if key.spec().shapes == super::space::CONFIG_SET {
        return super::configs::build(key);
    }
    let form = Form::of(key.op).ok_or_else(|| err("no form for this op"))?;
    let t = key.dtype;
    let dims = key.dims().to_vec();
    let rank = dims.len();
    let layout = key.layout();
    let operand = arr(t, dims.clone(), Some(layout.clone()));
    let param = key.param().unwrap_or("");
    let mut b = Builder::default();
    let default_attrs = Attrs::default;
    let root = match form {
        Form::Program => return Err(err("program templates are built by `crate::programs`")),
        Form::Structure => return Err(err("built only as attribute classes")),
        Form::Elementwise => elementwise(&mut b, key.op, t, &dims, &layout)?,
        Form::Copy => {
            let x = b.param(operand.clone(), Role::Data);
            b.push(Opcode::Copy, operand, vec![x], default_attrs())
        }
        Form::Compare => {
            let x = b.param(operand.clone(), Role::Data);
            let y = b.param(operand, Role::Data);
            let (dir, total) = match param.strip_suffix("-total") {
                Some(d) => (d, true),
                None => (param, false),
            };
            let dir = ComparisonDirection::from_name(&dir.to_uppercase())
                .ok_or_else(|| err("bad direction"))?;
            b.push(
                Opcode::Compare,
                arr(ElementType::Pred, dims, Some(layout)),
                vec![x, y],
                Attrs {
                    direction: Some(dir),
                    comparison_type: Some(comparison_type(t, total)),
                    ..default_attrs()
                },
            )
        }
        Form::Convert | Form::BitcastConvert => {
            let target: ElementType = param
                .strip_prefix("to-")
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| err("bad conversion target"))?;
            let role = if t.is_float() && target.is_unsigned_int() {
                Role::NonNegative
            } else {
                Role::Data
            };
            let x = b.param(operand, role);
            b.push(
                key.op,
                arr(target, dims, Some(layout)),
                vec![x],
                default_attrs(),
            )
        }
        Form::ReducePrecision => {
            let (e, m) = match param {
                "e5m10" => (5, 10),
                "e8m7" => (8, 7),
                "e5m2" => (5, 2),
                _ => (4, 3),
            };
            let x = b.param(operand.clone(), Role::Data);
            b.push(
                Opcode::ReducePrecision,
                operand,
                vec![x],
                Attrs {
                    exponent_bits: Some(e),
                    mantissa_bits: Some(m),
                    ..default_attrs()
                },
            )
        }
        Form::Iota => {
            let d = if param == "first" { 0 } else { rank as i64 - 1 };
            b.push(
                Opcode::Iota,
                operand,
                vec![],
                Attrs {
                    iota_dimension: Some(d),
                    ..default_attrs()
                },
            )
        }
        Form::Broadcast => {
            let x = b.param(operand, Role::Data);
            let (out, map): (Vec<i64>, Vec<i64>) = if param == "prepend" {
                (
                    std::iter::once(2).chain(dims.iter().copied()).collect(),
                    (1..=rank as i64).collect(),
                )
            } else {
                (
                    dims.iter().copied().chain(std::iter::once(3)).collect(),
                    (0..rank as i64).collect(),
                )
            };
            b.push(
                Opcode::Broadcast,
                arr(t, out, None),
                vec![x],
                Attrs {
                    dimensions: Some(map),
                    ..default_attrs()
                },
            )
        }
        Form::Reshape => {
            let x = b.param(operand, Role::Data);
            let out = if param == "flatten" {
                vec![dims.iter().product()]
            } else {
                std::iter::once(1).chain(dims.iter().copied()).collect()
            };
            b.push(Opcode::Reshape, arr(t, out, None), vec![x], default_attrs())
        }
        Form::Transpose => {
            let x = b.param(operand, Role::Data);
            let perm: Vec<i64> = if param == "reverse" {
                (0..rank as i64).rev().collect()
            } else {
                (1..rank as i64).chain(std::iter::once(0)).collect()
            };
            let out = perm.iter().map(|&p| dims[p as usize]).collect();
            b.push(
                Opcode::Transpose,
                arr(t, out, None),
                vec![x],
                Attrs {
                    dimensions: Some(perm),
                    ..default_attrs()
                },
            )
        }
        Form::Slice => {
            let x = b.param(operand, Role::Data);
            let sl: Vec<SliceDim> = dims
                .iter()
                .map(|&d| match param {
                    "head" => SliceDim {
                        start: 0,
                        limit: (d + 1) / 2,
                        stride: 1,
                    },
                    "stride2" => SliceDim {
                        start: 0,
                        limit: d,
                        stride: 2,
                    },
                    _ => SliceDim {
                        start: d / 2,
                        limit: d,
                        stride: 1,
                    },
                })
                .collect();
            let out = sl
                .iter()
                .map(|s| (s.limit - s.start + s.stride - 1).max(0) / s.stride)
                .collect();
            b.push(
                Opcode::Slice,
                arr(t, out, None),
                vec![x],
                Attrs {
                    slice: Some(sl),
                    ..default_attrs()
                },
            )
        }
        Form::Concatenate => {
            let x = b.param(operand.clone(), Role::Data);
            let y = b.param(operand, Role::Data);
            let d = if param == "first" { 0 } else { rank - 1 };
            let mut out = dims.clone();
            out[d] *= 2;
            b.push(
                Opcode::Concatenate,
                arr(t, out, Some(layout)),
                vec![x, y],
                Attrs {
                    dimensions: Some(vec![d as i64]),
                    ..default_attrs()
                },
            )
        }
        Form::Pad => {
            let x = b.param(operand, Role::Data);
            let v = b.param(scalar(t), Role::Data);
            let pads: Vec<PadDim> = dims
                .iter()
                .map(|&d| match param {
                    "edge" => PadDim {
                        low: 1,
                        high: 2,
                        interior: 0,
                    },
                    "interior" => PadDim {
                        low: 0,
                        high: 0,
                        interior: 1,
                    },
                    _ if d >= 1 => PadDim {
                        low: -1,
                        high: 1,
                        interior: 0,
                    },
                    _ => PadDim {
                        low: 0,
                        high: 1,
                        interior: 0,
                    },
                })
                .collect();
            let out = dims
                .iter()
                .zip(&pads)
                .map(|(&d, p)| d + p.low + p.high + (d - 1).max(0) * p.interior)
                .collect();
            b.push(
                Opcode::Pad,
                arr(t, out, Some(layout)),
                vec![x, v],
                Attrs {
                    padding: Some(pads),
                    ..default_attrs()
                },
            )
        }
        Form::Reverse => {
            let x = b.param(operand.clone(), Role::Data);
            let ds = if param == "first" {
                vec![0]
            } else {
                (0..rank as i64).collect()
            };
            b.push(
                Opcode::Reverse,
                operand,
                vec![x],
                Attrs {
                    dimensions: Some(ds),
                    ..default_attrs()
                },
            )
        }
        Form::DynamicSlice | Form::DynamicUpdateSlice => {
            let sizes: Vec<i64> = dims.iter().map(|&d| (d + 1) / 2).collect();
            let x = b.param(operand.clone(), Role::Data);
            let update = (form == Form::DynamicUpdateSlice)
                .then(|| b.param(arr(t, sizes.clone(), None), Role::Data));
            let mut operands = vec![x];
            operands.extend(update);
            for (&d, &s) in dims.iter().zip(&sizes) {
                let role = if param == "inbounds" {
                    Role::Index(0, d - s)
                } else {
                    Role::Index(-2, d + 2)
                };
                operands.push(b.param(scalar(ElementType::S32), role));
            }
            if form == Form::DynamicSlice {
                b.push(
                    Opcode::DynamicSlice,
                    arr(t, sizes.clone(), None),
                    operands,
                    Attrs {
                        dynamic_slice_sizes: Some(sizes),
                        ..default_attrs()
                    },
                )
            } else {
                b.push(
                    Opcode::DynamicUpdateSlice,
                    operand,
                    operands,
                    default_attrs(),
                )
            }
        }
        Form::Gather => {
            let n = dims[0];
            let k = 3;
            let x = b.param(operand, Role::Data);
            let role = if param == "rows" {
                Role::Index(0, n - 1)
            } else {
                Role::Index(-2, n + 2)
            };
            let idx = b.param(arr(ElementType::S32, vec![k, 1], None), role);
            let out = std::iter::once(k)
                .chain(dims[1..].iter().copied())
                .collect();
            b.push(
                Opcode::Gather,
                arr(t, out, None),
                vec![x, idx],
                Attrs {
                    gather_dims: Some(GatherDims {
                        offset_dims: (1..rank as i64).collect(),
                        collapsed_slice_dims: vec![0],
                        start_index_map: vec![0],
                        index_vector_dim: 1,
                        operand_batching_dims: vec![],
                        start_indices_batching_dims: vec![],
                        slice_sizes: std::iter::once(1)
                            .chain(dims[1..].iter().copied())
                            .collect(),
                    }),
                    ..default_attrs()
                },
            )
        }
        Form::Scatter => {
            let n = dims[0];
            let rows: Vec<i128> = if n >= 2 {
                vec![0, n as i128 - 1]
            } else {
                vec![0]
            };
            let k = rows.len() as i64;
            let op = if param == "add" {
                Opcode::Add
            } else {
                Opcode::Maximum
            };
            let comp = b.binary_comp(op, t);
            let x = b.param(operand.clone(), Role::Data);
            let idx = b.constant(
                arr(ElementType::S32, vec![k, 1], None),
                ConstantData::Int(rows),
            );
            let upd_dims = std::iter::once(k)
                .chain(dims[1..].iter().copied())
                .collect();
            let u = b.param(arr(t, upd_dims, None), Role::Data);
            b.push(
                Opcode::Scatter,
                operand,
                vec![x, idx, u],
                Attrs {
                    scatter_dims: Some(ScatterDims {
                        update_window_dims: (1..rank as i64).collect(),
                        inserted_window_dims: vec![0],
                        scatter_dims_to_operand_dims: vec![0],
                        index_vector_dim: 1,
                        input_batching_dims: vec![],
                        scatter_indices_batching_dims: vec![],
                    }),
                    unique_indices: true,
                    to_apply: Some(comp),
                    ..default_attrs()
                },
            )
        }
        Form::Reduce => {
            let (op, init, which) = match param {
                "add-all" => (Opcode::Add, Init::I(0), "all"),
                "add-first" => (Opcode::Add, Init::I(0), "first"),
                "max-last" => (Opcode::Maximum, lowest(t), "last"),
                "min-all" => (Opcode::Minimum, highest(t), "all"),
                _ => (Opcode::Multiply, Init::I(1), "first"),
            };
            let comp = b.binary_comp(op, t);
            let x = b.param(operand, Role::Data);
            let init = b.scalar_const(t, init);
            let reduced: Vec<i64> = match which {
                "all" => (0..rank as i64).collect(),
                "first" => vec![0],
                _ => vec![rank as i64 - 1],
            };
            let out = (0..rank)
                .filter(|d| !reduced.contains(&(*d as i64)))
                .map(|d| dims[d])
                .collect();
            b.push(
                Opcode::Reduce,
                arr(t, out, None),
                vec![x, init],
                Attrs {
                    dimensions: Some(reduced),
                    to_apply: Some(comp),
                    ..default_attrs()
                },
            )
        }
        Form::ReduceWindow => {
            let (op, init, stride, pad) = match param {
                "max-w2" => (Opcode::Maximum, lowest(t), 1, 0),
                "add-w2s2" => (Opcode::Add, Init::I(0), 2, 0),
                _ => (Opcode::Add, Init::I(0), 1, 1),
            };
            let comp = b.binary_comp(op, t);
            let x = b.param(operand, Role::Data);
            let init = b.scalar_const(t, init);
            let window: Vec<WindowDim> = dims
                .iter()
                .map(|&d| WindowDim {
                    stride,
                    pad_low: pad,
                    pad_high: pad,
                    ..WindowDim::new(d.clamp(1, 2))
                })
                .collect();
            let out = dims
                .iter()
                .zip(&window)
                .map(|(&d, w)| window_out(d, w.size, w.stride, w.pad_low, w.pad_high))
                .collect();
            b.push(
                Opcode::ReduceWindow,
                arr(t, out, None),
                vec![x, init],
                Attrs {
                    window: Some(window),
                    to_apply: Some(comp),
                    ..default_attrs()
                },
            )
        }
        Form::Sort => {
            let (dim, dir) = if param == "asc-last" {
                (rank as i64 - 1, ComparisonDirection::Lt)
            } else {
                (0, ComparisonDirection::Gt)
            };
            let comp = b.compare_comp(t, dir);
            let x = b.param(operand.clone(), Role::Data);
            b.push(
                Opcode::Sort,
                operand,
                vec![x],
                Attrs {
                    dimensions: Some(vec![dim]),
                    is_stable: true,
                    to_apply: Some(comp),
                    ..default_attrs()
                },
            )
        }
        Form::Dot => {
            let n = if param == "n1" { 1 } else { 3 };
            let x = b.param(operand, Role::Data);
            let (rhs, out, dd) = if rank == 2 {
                (
                    vec![dims[1], n],
                    vec![dims[0], n],
                    DotDims {
                        lhs_contracting: vec![1],
                        rhs_contracting: vec![0],
                        ..DotDims::default()
                    },
                )
            } else {
                (
                    vec![dims[0], dims[2], n],
                    vec![dims[0], dims[1], n],
                    DotDims {
                        lhs_batch: vec![0],
                        rhs_batch: vec![0],
                        lhs_contracting: vec![2],
                        rhs_contracting: vec![1],
                    },
                )
            };
            let y = b.param(arr(t, rhs, None), Role::Data);
            b.push(
                Opcode::Dot,
                arr(t, out, None),
                vec![x, y],
                Attrs {
                    dot_dims: Some(dd),
                    ..default_attrs()
                },
            )
        }
        Form::Convolution => {
            let (k, s, p) = match param {
                "k1" => (1, 1, 0),
                "k3same" => (3, 1, 1),
                _ => (2, 2, 0),
            };
            let o = 2;
            let x = b.param(operand, Role::Data);
            let w = b.param(arr(t, vec![k, k, dims[3], o], None), Role::Data);
            let window: Vec<WindowDim> = (0..2)
                .map(|_| WindowDim {
                    stride: s,
                    pad_low: p,
                    pad_high: p,
                    ..WindowDim::new(k)
                })
                .collect();
            let out = vec![
                dims[0],
                window_out(dims[1], k, s, p, p),
                window_out(dims[2], k, s, p, p),
                o,
            ];
            b.push(
                Opcode::Convolution,
                arr(t, out, None),
                vec![x, w],
                Attrs {
                    window: Some(window),
                    conv_dims: Some(ConvDims {
                        input_batch: 0,
                        input_feature: 3,
                        input_spatial: vec![1, 2],
                        kernel_input_feature: 2,
                        kernel_output_feature: 3,
                        kernel_spatial: vec![0, 1],
                        output_batch: 0,
                        output_feature: 3,
                        output_spatial: vec![1, 2],
                    }),
                    feature_group_count: Some(1),
                    batch_group_count: Some(1),
                    ..default_attrs()
                },
            )
        }
    };
    Ok(b.finish(root))
}

fn elementwise(
    b: &mut Builder,
    op: Opcode,
    t: ElementType,
    dims: &[i64],
    layout: &Layout,
) -> Result<InstrId, CatalogueError> {
    let shape = |dt| arr(dt, dims.to_vec(), Some(layout.clone()));
    let operands = match op {
        Opcode::Select => vec![
            b.param(shape(ElementType::Pred), Role::Data),
            b.param(shape(t), Role::Data),
            b.param(shape(t), Role::Data),
        ],
        Opcode::Clamp => (0..3).map(|_| b.param(shape(t), Role::Data)).collect(),
        _ => {
            let n = match op.arity() {
                crate::hlo::Arity::Fixed(n) => n,
                crate::hlo::Arity::AtLeast(n) => n,
            };
            (0..n)
                .map(|i| b.param(shape(t), elementwise_role(op, i)))
                .collect()
        }
    };
    let out = if op == Opcode::IsFinite {
        ElementType::Pred
    } else {
        t
    };
    Ok(b.push(op, shape(out), operands, Attrs::default()))
}

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
/// whole chain in one `kLoop` fusion called from the entry.
///
/// ```
/// use xla_props::hlo::Opcode;
/// use xla_props::property::{build_chain, CaseKey};
/// let key: CaseKey = "fusion_invariance::multiply::f32::f32[7]{0}::uniform.then-residual".parse().unwrap();
/// let fused = build_chain(&key, true).unwrap().module;
/// let entry = fused.entry_computation();
/// assert_eq!(entry.instr(entry.root).opcode, Opcode::Fusion);
/// ```
pub fn build_chain(key: &CaseKey, fused: bool) -> Result<BuiltCase, CatalogueError> {
    let err = |why: &str| CatalogueError {
        case: key.to_string(),
        why: why.to_string(),
    };
    let t = key.dtype;
    let dims = key.dims().to_vec();
    let layout = key.layout();
    let shape = arr(t, dims.clone(), Some(layout.clone()));
    let mut b = Builder::default();
    let first = elementwise(&mut b, key.op, t, &dims, &layout)?;
    let follower = key
        .param()
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
        other => {
            let op: Opcode = other.parse().map_err(|_| err("bad follower"))?;
            let y = b.param(shape.clone(), Role::Data);
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
