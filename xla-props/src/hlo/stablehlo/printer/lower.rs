//! The lowering: the entry point, the lowerer's state, computations, regions,
//! and the dispatch of one instruction to its op family.

use std::fmt::Write as _;

use std::collections::HashSet;

use super::constants::dense_attr;
use super::opnames::elementwise_name;
use super::types::{
    array_attr, block, invalid, leaves, names, pad, padding_attr, region, tensor_type,
    transferable, types, unsupported, LowerError, Lowered, Val,
};
use crate::hlo::collective::DeviceGrid;
use crate::hlo::{
    ArrayShape, CompId, Computation, ConstantData, InstrId, Instruction, Module, Shape, WindowDim,
};

/// One instruction being lowered: its computation, its operands' values, the
/// caller's parameter values (for `parameter`), and where its text goes.
pub(super) struct Site<'a> {
    pub c: &'a Computation,
    pub instr: &'a Instruction,
    pub operands: &'a [&'a [Val]],
    pub params: &'a [Vec<Val>],
    pub out: &'a mut String,
    pub indent: usize,
}

/// What an op family's lowering gives: the results, or `None` for an opcode
/// that is not the family's.
pub(super) type Lowering = Result<Option<Vec<Val>>, LowerError>;

/// Lowers a module to StableHLO MLIR text.
///
/// ```
/// use xla_props::hlo::{ElementType, Instruction, Computation, InstrId, CompId, Module, Opcode, Shape};
/// use xla_props::hlo::stablehlo::lower_module;
/// let s = Shape::array(ElementType::F32, vec![2]);
/// let mut p0 = Instruction::new("p0", Opcode::Parameter, s.clone(), vec![]);
/// p0.attrs.parameter_number = Some(0);
/// let neg = Instruction::new("n", Opcode::Negate, s, vec![InstrId(0)]);
/// let comp = Computation { name: "main".into(), instructions: vec![p0, neg], root: InstrId(1), other: vec![] };
/// let m = Module { name: "m".into(), attrs: vec![], computations: vec![comp], entry: CompId(0) };
/// let lowered = lower_module(&m).unwrap();
/// assert!(lowered.mlir.contains("\"stablehlo.negate\"(%arg0)"));
/// ```
pub fn lower_module(module: &Module) -> Result<Lowered, LowerError> {
    lower_with(module, None)
}

/// Lowers an annotated module for XLA's SPMD partitioner on `partitions`
/// devices: its `sharding=` annotations become `mhlo.sharding` (on the
/// entry's arguments and results, the partitioner's custom calls
/// `Sharding`, `SPMDFullToShardShape`, `SPMDShardToFullShape`, and any op
/// that carries one), and the module says `mhlo.num_partitions`.
pub fn lower_annotated(module: &Module, partitions: usize) -> Result<Lowered, LowerError> {
    lower_with(module, Some(partitions))
}

fn lower_with(module: &Module, annotated: Option<usize>) -> Result<Lowered, LowerError> {
    // a custom call with a known meaning (XLA's TopK) is written as the
    // plain ops it means: StableHLO has no such custom call
    let expanded = crate::hlo::expand_known_custom_calls(module);
    let module = expanded.as_ref().unwrap_or(module);
    if module.entry.index() >= module.computations.len() {
        return Err(LowerError::Invalid("entry computation out of range".into()));
    }
    if let Some(t) = module.extended_type() {
        return unsupported(format!(
            "element type {t}: xla-props evaluates it on the reference only \
             (it is not lowered for a compiled backend)"
        ));
    }
    let entry = module.entry_computation();
    let mut l = Lowerer {
        module,
        next: 0,
        depth: 0,
        faithful: false,
        manual: partitioned(module),
        regions: 0,
        annotated: annotated.is_some(),
        current: None,
        grid: grid_of(module, annotated),
    };
    let mut params = Vec::new();
    let mut args: Vec<Vec<Val>> = Vec::new();
    let mut arg_decls = Vec::new();
    for (k, pid) in entry.parameters().into_iter().enumerate() {
        let instr = entry.instr(pid);
        if instr.attrs.parameter_number != Some(k as i64) {
            return Err(LowerError::Invalid(format!(
                "entry parameters are not numbered 0..n (at {})",
                instr.name
            )));
        }
        let mut vals = Vec::new();
        let shardings = l.leaf_shardings(instr)?;
        for (j, leaf) in leaves(&instr.shape)?.into_iter().enumerate() {
            transferable(leaf)?;
            let name = format!("%arg{}", params.len());
            let ty = tensor_type(leaf)?;
            arg_decls.push(format!("{name}: {ty}{}", shardings[j]));
            vals.push(Val { name, ty });
            params.push(leaf.clone());
        }
        args.push(vals);
    }
    let mut body = String::new();
    let results = l.computation(module.entry, &args, &mut body, 2)?;
    let result_shapes: Vec<ArrayShape> = leaves(module.result_shape())?
        .into_iter()
        .cloned()
        .collect();
    for r in &result_shapes {
        transferable(r)?;
    }
    let result_types: Vec<String> = results.iter().map(|v| v.ty.clone()).collect();
    let root_shardings = l.leaf_shardings(entry.instr(entry.root))?;
    let result_decls: Vec<String> = result_types
        .iter()
        .zip(&root_shardings)
        .map(|(t, s)| format!("{t}{s}"))
        .collect();
    let mut mlir = format!(
        "module @xla_props{} {{\n",
        grid_attributes(module, annotated)
    );
    let _ = writeln!(
        mlir,
        "  func.func public @main({}) -> ({}) {{",
        arg_decls.join(", "),
        result_decls.join(", ")
    );
    mlir.push_str(&body);
    let _ = writeln!(
        mlir,
        "    \"func.return\"({}) : ({}) -> ()",
        names(&results),
        result_types.join(", ")
    );
    mlir.push_str("  }\n}\n");
    Ok(Lowered {
        mlir,
        params,
        results: result_shapes,
    })
}

/// Whether `module` is a per-device program on more than one partition
/// (XLA's SPMD partitioner already ran): XLA compiles such a program only
/// with SPMD partitioning on, so its lowering marks every value of the
/// entry manually sharded (`mhlo.sharding = "{manual}"`), which the
/// partitioner leaves as it is.
fn partitioned(module: &Module) -> bool {
    DeviceGrid::of(module).is_ok_and(|g| g.partitions > 1)
}

/// ` attributes {mhlo.num_partitions = P : i32, mhlo.num_replicas = R : i32}`
/// for a module whose header declares more than one device (as JAX writes
/// them), else nothing: a one-device module's text is unchanged.
/// The devices a module runs on: its header's, or `partitions` for an
/// annotated module lowered for XLA's partitioner.
pub(super) fn grid_of(module: &Module, annotated: Option<usize>) -> Result<DeviceGrid, String> {
    match annotated {
        Some(partitions) => Ok(DeviceGrid {
            replicas: 1,
            partitions,
        }),
        None => DeviceGrid::of(module),
    }
}

fn grid_attributes(module: &Module, annotated: Option<usize>) -> String {
    match grid_of(module, annotated) {
        Ok(g) if g.devices() > 1 => format!(
            " attributes {{mhlo.num_partitions = {} : i32, mhlo.num_replicas = {} : i32}}",
            g.partitions, g.replicas
        ),
        _ => String::new(),
    }
}

/// Most nested calls/fusions/regions followed before giving up (guards recursion; each level costs stack).
pub(super) const MAX_DEPTH: usize = 24;

pub(super) struct Lowerer<'m> {
    pub(super) module: &'m Module,
    pub(super) next: usize,
    pub(super) depth: usize,
    /// Writing [`print_module`](super::print_module)'s faithful form: regions forward to the
    /// functions of their computations, compares keep an absent type absent.
    pub(super) faithful: bool,
    /// Marking the entry's values manually sharded ([`partitioned`]).
    pub(super) manual: bool,
    /// How many regions the op being written is nested in (the entry's
    /// own ops are at 0; only those carry a sharding).
    pub(super) regions: usize,
    /// Writing an annotated module's shardings ([`lower_annotated`]).
    pub(super) annotated: bool,
    /// The sharding of the instruction being written and its result type
    /// (annotated modules): the op of that type it becomes carries it.
    pub(super) current: Option<(String, String)>,
    /// The devices the module runs on (replica groups are read on it).
    pub(super) grid: Result<DeviceGrid, String>,
}

/// Single-array operands, for ops that take arrays only.
pub(super) fn arrays_of(operands: &[&[Val]]) -> Result<Vec<Val>, LowerError> {
    operands
        .iter()
        .map(|o| match o {
            [v] => Ok(v.clone()),
            _ => invalid("a tuple operand where an array is expected"),
        })
        .collect()
}

/// The tensor types of an instruction's results (its shape's leaves).
pub(super) fn result_types_of(instr: &Instruction) -> Result<Vec<String>, LowerError> {
    leaves(&instr.shape)?.into_iter().map(tensor_type).collect()
}

/// An instruction's array shape.
pub(super) fn array_shape_of(instr: &Instruction) -> Result<&ArrayShape, LowerError> {
    instr
        .shape
        .as_array()
        .ok_or_else(|| LowerError::Invalid("expected an array shape".into()))
}

/// The attribute `v`, or an error naming it as missing.
pub(super) fn present<'v, T>(v: &'v Option<T>, what: &str) -> Result<&'v T, LowerError> {
    v.as_ref()
        .ok_or_else(|| LowerError::Invalid(format!("missing {what}")))
}

/// A required integer-list attribute.
pub(super) fn need(v: &Option<Vec<i64>>, what: &str) -> Result<Vec<i64>, LowerError> {
    v.clone()
        .ok_or_else(|| LowerError::Invalid(format!("missing {what}")))
}

/// A required called computation.
pub(super) fn called(c: Option<CompId>, what: &str) -> Result<CompId, LowerError> {
    c.ok_or_else(|| LowerError::Invalid(format!("missing {what}")))
}

impl<'m> Lowerer<'m> {
    /// The ` {mhlo.sharding = "..."}` of each leaf of an entry parameter
    /// or root: `{manual}` in a partitioned module, the instruction's own
    /// sharding in an annotated one (`{replicated}` without one), else
    /// nothing.
    fn leaf_shardings(&self, instr: &Instruction) -> Result<Vec<String>, LowerError> {
        let n = leaves(&instr.shape)?.len();
        let attr = |s: &str| format!(" {{mhlo.sharding = \"{s}\"}}");
        if self.manual {
            return Ok(vec![attr("{manual}"); n]);
        }
        match crate::hlo::collective::verbatim(instr, "sharding") {
            Some(t) if self.annotated => Ok(crate::hlo::sharding::leaf_texts(t, n)
                .map_err(LowerError::Invalid)?
                .iter()
                .map(|s| attr(s))
                .collect()),
            // an annotated module's unannotated entry values are whole on
            // every device (the partitioner would otherwise choose)
            None if self.annotated => Ok(vec![attr("{replicated}"); n]),
            _ => Ok(vec![String::new(); n]),
        }
    }

    pub(super) fn fresh(&mut self) -> String {
        let n = self.next;
        self.next += 1;
        format!("%{n}")
    }

    pub(super) fn comp_checked(&self, id: CompId) -> Result<&'m Computation, LowerError> {
        self.module
            .computations
            .get(id.index())
            .ok_or_else(|| LowerError::Invalid(format!("computation id {} out of range", id.0)))
    }

    /// Emits one operation; returns its results.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn op(
        &mut self,
        out: &mut String,
        indent: usize,
        name: &str,
        operands: &[Val],
        regions: &[String],
        attrs: &[String],
        result_types: &[String],
    ) -> Vec<Val> {
        let id = self.fresh();
        let mut line = pad(indent);
        let results: Vec<Val> = match result_types.len() {
            0 => Vec::new(),
            1 => {
                let _ = write!(line, "{id} = ");
                vec![Val {
                    name: id.clone(),
                    ty: result_types[0].clone(),
                }]
            }
            n => {
                let _ = write!(line, "{id}:{n} = ");
                result_types
                    .iter()
                    .enumerate()
                    .map(|(k, t)| Val {
                        name: format!("{id}#{k}"),
                        ty: t.clone(),
                    })
                    .collect()
            }
        };
        let _ = write!(line, "\"{name}\"({})", names(operands));
        if !regions.is_empty() {
            let _ = write!(line, " ({})", regions.join(", "));
        }
        let mut attrs = attrs.to_vec();
        if self.manual && self.regions == 0 && !result_types.is_empty() {
            let one = "{manual}";
            let sharding = if result_types.len() == 1 {
                one.to_string()
            } else {
                format!("{{{}}}", vec![one; result_types.len()].join(", "))
            };
            attrs.push(format!("mhlo.sharding = \"{sharding}\""));
        } else if let Some((sharding, ty)) = &self.current {
            if self.regions == 0 && result_types.len() == 1 && result_types[0] == *ty {
                attrs.push(format!("mhlo.sharding = \"{sharding}\""));
            }
        }
        if !attrs.is_empty() {
            let _ = write!(line, " {{{}}}", attrs.join(", "));
        }
        let result_sig = if result_types.len() == 1 {
            result_types[0].clone()
        } else {
            format!("({})", result_types.join(", "))
        };
        let _ = writeln!(line, " : ({}) -> {result_sig}", types(operands));
        out.push_str(&line);
        results
    }

    /// A region whose block arguments are the leaves of `comp`'s parameters.
    pub(super) fn region(&mut self, comp: CompId, indent: usize) -> Result<String, LowerError> {
        if self.faithful {
            if let Some(r) = self.forwarding_region(comp, indent)? {
                return Ok(r);
            }
        }
        let c = self.comp_checked(comp)?;
        let mut block_args = Vec::new();
        let mut params = Vec::new();
        for pid in c.parameters() {
            let mut vals = Vec::new();
            for leaf in leaves(&c.instr(pid).shape)? {
                let name = format!("%b{}", self.next);
                self.next += 1;
                let v = Val {
                    name,
                    ty: tensor_type(leaf)?,
                };
                block_args.push(format!("{}: {}", v.name, v.ty));
                vals.push(v);
            }
            params.push(vals);
        }
        let mut body = String::new();
        self.regions += 1;
        let results = self.computation(comp, &params, &mut body, indent + 1);
        self.regions -= 1;
        let s = region(indent, &block_args, &body, &results?);
        Ok(s)
    }

    /// A region without block arguments: `comp` inlined with `params`, which
    /// the region captures from the enclosing scope.
    pub(super) fn capturing_region(
        &mut self,
        comp: CompId,
        params: &[Vec<Val>],
        indent: usize,
    ) -> Result<String, LowerError> {
        let mut body = String::new();
        self.regions += 1;
        let results = self.computation(comp, params, &mut body, indent + 1);
        self.regions -= 1;
        Ok(block(indent, &body, &results?))
    }

    /// Emits the instructions of `comp` reachable from its root, with its
    /// parameters bound to `params`; returns the root's leaf values.
    pub(super) fn computation(
        &mut self,
        comp: CompId,
        params: &[Vec<Val>],
        out: &mut String,
        indent: usize,
    ) -> Result<Vec<Val>, LowerError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return unsupported("calls nested deeper than 24 (recursive computations?)");
        }
        let c = self.comp_checked(comp)?;
        let order = c
            .post_order()
            .ok_or_else(|| LowerError::Invalid(format!("cycle in computation {}", c.name)))?;
        let reachable = reachable_from_root(c);
        let mut values: Vec<Option<Vec<Val>>> = vec![None; c.instructions.len()];
        for id in order {
            if !reachable.contains(&id) {
                continue;
            }
            let instr = c.instr(id);
            let operands: Vec<&[Val]> = instr
                .operands
                .iter()
                .map(|o| {
                    values
                        .get(o.index())
                        .and_then(|v| v.as_deref())
                        .ok_or_else(|| {
                            LowerError::Invalid(format!("operand of {} is undefined", instr.name))
                        })
                })
                .collect::<Result<_, _>>()?;
            let vals = self
                .instruction(c, instr, &operands, params, out, indent)
                .map_err(|e| e.at(instr))?;
            values[id.index()] = Some(vals);
        }
        self.depth -= 1;
        values
            .get(c.root.index())
            .and_then(|v| v.clone())
            .ok_or_else(|| LowerError::Invalid(format!("root of {} is undefined", c.name)))
    }

    pub(super) fn instruction(
        &mut self,
        c: &Computation,
        instr: &Instruction,
        operands: &[&[Val]],
        params: &[Vec<Val>],
        out: &mut String,
        indent: usize,
    ) -> Result<Vec<Val>, LowerError> {
        let saved = self.current.take();
        if self.annotated && self.regions == 0 {
            if let (Some(s), Some(a)) = (
                crate::hlo::collective::verbatim(instr, "sharding"),
                instr.shape.as_array(),
            ) {
                self.current = Some((s.to_string(), tensor_type(a)?));
            }
        }
        let mut site = Site {
            c,
            instr,
            operands,
            params,
            out,
            indent,
        };
        let r = self.dispatch(&mut site);
        self.current = saved;
        r
    }

    fn dispatch(&mut self, site: &mut Site) -> Result<Vec<Val>, LowerError> {
        let op = site.instr.opcode;
        if !op.arity().accepts(site.operands.len()) {
            return invalid(format!("{} operands", site.operands.len()));
        }
        if let Some(name) = elementwise_name(op) {
            return self.emit(site, name, &[], &[]);
        }
        // each family lowers its own opcodes and passes on the others
        let families: [fn(&mut Self, &mut Site) -> Lowering; 9] = [
            Self::value_instruction,
            Self::bitcast_instruction,
            Self::shaping_instruction,
            Self::slicing_instruction,
            Self::indexing_instruction,
            Self::reduction_instruction,
            Self::contraction_instruction,
            Self::collective_instruction,
            Self::control_instruction,
        ];
        for family in families {
            if let Some(vals) = family(self, site)? {
                return Ok(vals);
            }
        }
        unsupported("no stablehlo lowering for this opcode")
    }

    /// Emits `name` over the instruction's array operands with `regions` and
    /// `attrs`, typed as the instruction's results.
    pub(super) fn emit(
        &mut self,
        site: &mut Site,
        name: &str,
        regions: &[String],
        attrs: &[String],
    ) -> Result<Vec<Val>, LowerError> {
        let ops = arrays_of(site.operands)?;
        let types = result_types_of(site.instr)?;
        Ok(self.op(site.out, site.indent, name, &ops, regions, attrs, &types))
    }
}

impl Lowerer<'_> {
    /// Dynamic-slice/update-slice operands with index operands from `first`
    /// on; the older form with one rank-1 index vector is split into scalars.
    pub(super) fn scalar_indices(
        &mut self,
        ops: Vec<Val>,
        first: usize,
        out: &mut String,
        indent: usize,
    ) -> Result<Vec<Val>, LowerError> {
        if ops.len() != first + 1 {
            return Ok(ops);
        }
        let idx = &ops[first];
        if idx.ty.starts_with("tensor<") && !idx.ty.contains('x') {
            return Ok(ops); // already a scalar
        }
        // tensor<Nxi32>: slice and reshape each component.
        let inner = &idx.ty["tensor<".len()..idx.ty.len() - 1];
        let (n, elem) = inner
            .split_once('x')
            .ok_or_else(|| LowerError::Invalid("bad index vector type".into()))?;
        let n: i64 = n
            .parse()
            .map_err(|_| LowerError::Invalid("bad index vector length".into()))?;
        let mut result = ops[..first].to_vec();
        for k in 0..n {
            let one = format!("tensor<1x{elem}>");
            let attrs = [
                format!("start_indices = {}", array_attr(&[k])),
                format!("limit_indices = {}", array_attr(&[k + 1])),
                format!("strides = {}", array_attr(&[1])),
            ];
            let s = self.op(
                out,
                indent,
                "stablehlo.slice",
                std::slice::from_ref(idx),
                &[],
                &attrs,
                &[one],
            );
            let scalar = format!("tensor<{elem}>");
            let r = self.op(out, indent, "stablehlo.reshape", &s, &[], &[], &[scalar]);
            result.extend(r);
        }
        Ok(result)
    }

    pub(super) fn constant(
        &mut self,
        shape: &Shape,
        data: &ConstantData,
        out: &mut String,
        indent: usize,
    ) -> Result<Vec<Val>, LowerError> {
        match (shape, data) {
            (Shape::Tuple(shapes), ConstantData::Tuple(items)) => {
                if shapes.len() != items.len() {
                    return invalid("tuple constant arity");
                }
                let mut vals = Vec::new();
                for (s, d) in shapes.iter().zip(items) {
                    vals.extend(self.constant(s, d, out, indent)?);
                }
                Ok(vals)
            }
            (Shape::Array(a), d) => {
                let attr = format!("value = {}", dense_attr(d, a)?);
                let ty = tensor_type(a)?;
                Ok(self.op(out, indent, "stablehlo.constant", &[], &[], &[attr], &[ty]))
            }
            _ => invalid("constant data does not match its shape"),
        }
    }
}

pub(super) fn window_attrs(w: &[WindowDim], dilations: bool) -> Vec<String> {
    let sizes: Vec<i64> = w.iter().map(|d| d.size).collect();
    let strides: Vec<i64> = w.iter().map(|d| d.stride).collect();
    let padding: Vec<(i64, i64)> = w.iter().map(|d| (d.pad_low, d.pad_high)).collect();
    let mut attrs = vec![
        format!("window_dimensions = {}", array_attr(&sizes)),
        format!("window_strides = {}", array_attr(&strides)),
    ];
    if dilations {
        let base: Vec<i64> = w.iter().map(|d| d.base_dilation).collect();
        let win: Vec<i64> = w.iter().map(|d| d.window_dilation).collect();
        attrs.push(format!("base_dilations = {}", array_attr(&base)));
        attrs.push(format!("window_dilations = {}", array_attr(&win)));
    }
    if !w.is_empty() {
        attrs.push(format!("padding = {}", padding_attr(&padding)));
    }
    attrs
}

pub(super) fn operand_shape(
    c: &Computation,
    instr: &Instruction,
    k: usize,
) -> Result<Shape, LowerError> {
    instr
        .operands
        .get(k)
        .filter(|id| id.index() < c.instructions.len())
        .map(|id| c.instr(*id).shape.clone())
        .ok_or_else(|| LowerError::Invalid("operand shape unknown".into()))
}

pub(super) fn reachable_from_root(c: &Computation) -> HashSet<InstrId> {
    let mut seen = HashSet::new();
    let mut stack = vec![c.root];
    while let Some(id) = stack.pop() {
        if id.index() >= c.instructions.len() || !seen.insert(id) {
            continue;
        }
        stack.extend(c.instr(id).operands.iter().copied());
    }
    seen
}
