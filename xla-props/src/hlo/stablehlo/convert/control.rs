//! Control flow (`while`, `if`, `case`), tuples, calls, custom calls, the
//! remaining ops, and the `check.*` ops.

use super::attrs::{
    bool_attr, int_attr, ints_attr, kind_enum_attr, needed_kind_enum, rng_algorithm,
};
use super::check::{CheckKind, PendingCheck};
use super::converter::{Converter, OpSite};
use super::helpers::elementwise;
use crate::hlo::ir::{
    Attrs, CompId, FftType, FusionKind, InstrId, TransposeA, TriangularSolveOptions,
};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;
use crate::hlo::stablehlo::build::{err, shape_of, Builder, R};
use crate::hlo::stablehlo::dense::constant_data;
use crate::hlo::stablehlo::syntax::{Attr, Op, Type};

impl Converter<'_> {
    /// Control flow, tuples, calls, custom calls and the remaining ops; an unknown name is an error.
    pub(super) fn control_op(&mut self, site: &OpSite, b: &mut Builder) -> R<Vec<InstrId>> {
        let (op, outers, short) = (site.op, site.outers, site.short);
        let mut a = Attrs::default();
        let pos = op.pos;
        let name = op.name.as_str();
        match short {
            "while" => self.while_op(site, b),
            "if" | "case" => self.cond_op(site, b),
            "optimization_barrier" => self.operands(op, b, outers),
            "tuple" => {
                let ops = self.operands(op, b, outers)?;
                Ok(vec![b.tuple(ops)])
            }
            "get_tuple_element" => {
                let ops = self.operands(op, b, outers)?;
                let k = int_attr(op, "index")?;
                let [t] = ops[..] else {
                    return err(pos, "get_tuple_element takes one operand");
                };
                let n = b.shape(t).as_tuple().map_or(0, |t| t.len());
                if k < 0 || k as usize >= n {
                    return err(pos, format!("tuple index {k} out of range"));
                }
                Ok(vec![b.gte(t, k as usize)])
            }
            "func.call" => self.call_op(op, b, outers),
            "custom_call" => {
                let target = match op.attr("call_target_name") {
                    Some(Attr::Str(s)) => s.clone(),
                    _ => return err(pos, "custom_call needs a target"),
                };
                if let Some(kind) = target.strip_prefix("check.") {
                    return self.check_op(site, kind, b);
                }
                let ops = self.operands(op, b, outers)?;
                a.custom_call_target = Some(target);
                self.results(op, b, Opcode::CustomCall, ops, a)
            }
            // parse-only ops with attributes, kept as HLO text spells them
            "fft" | "triangular_solve" | "rng_bit_generator" => self.library_op(site, b),
            "real" | "imag" | "complex" | "cholesky" | "after_all" | "replica_id"
            | "partition_id" => {
                let ops = self.operands(op, b, outers)?;
                let code = match short {
                    "real" => Opcode::Real,
                    "imag" => Opcode::Imag,
                    "complex" => Opcode::Complex,
                    "cholesky" => Opcode::Cholesky,
                    "after_all" => Opcode::AfterAll,
                    "replica_id" => Opcode::ReplicaId,
                    _ => Opcode::PartitionId,
                };
                self.results(op, b, code, ops, a)
            }
            // printing is not evaluation: nothing to compute
            "interpreter.print" => {
                self.operands(op, b, outers)?;
                Ok(Vec::new())
            }
            // the value itself; `check.expect_serialized_eq` compares with it
            "interpreter.probe" => {
                let ops = self.operands(op, b, outers)?;
                let [x] = ops[..] else {
                    return err(pos, "interpreter.probe takes one operand");
                };
                let Some(Attr::Str(id)) = op.attr("probe_id") else {
                    return err(pos, "interpreter.probe needs `probe_id = \"...\"`");
                };
                b.probes.push((id.clone(), x));
                Ok(vec![x])
            }
            _ => err(pos, format!("unknown operation `{name}`")),
        }
    }

    /// `func.call`: a call of a function, or an HLO fusion written as a
    /// call of its fused computation (`xla.fusion_kind`).
    fn call_op(&mut self, op: &Op, b: &mut Builder, outers: &[&Builder]) -> R<Vec<InstrId>> {
        let mut a = Attrs::default();
        let pos = op.pos;
        let ops = self.operands(op, b, outers)?;
        let Some(Attr::Symbol(callee)) = op.attr("callee") else {
            return err(pos, "call needs a callee");
        };
        let k = *self
            .funcs
            .get(callee)
            .ok_or((pos, format!("call of undefined function `@{callee}`")))?;
        let shapes: Vec<Shape> = op.result_types.iter().map(shape_of).collect();
        if let Some(kind) = op.attr("xla.fusion_kind") {
            // an HLO fusion, written as a call of its fused computation
            let kind = match kind {
                Attr::Str(s) => FusionKind::from_name(s),
                _ => None,
            }
            .ok_or((
                pos,
                "`xla.fusion_kind` must be \"kLoop\", \"kInput\", \"kOutput\" or \"kCustom\""
                    .to_string(),
            ))?;
            if shapes.len() != 1 {
                return err(pos, "a fusion call has one result");
            }
            a.calls = vec![CompId(k as u32)];
            a.fusion_kind = Some(kind);
            return Ok(vec![b.push(Opcode::Fusion, shapes[0].clone(), ops, a)]);
        }
        a.to_apply = Some(CompId(k as u32));
        if shapes.len() == 1 {
            return Ok(vec![b.push(Opcode::Call, shapes[0].clone(), ops, a)]);
        }
        let call = b.push(Opcode::Call, Shape::Tuple(shapes.clone()), ops, a);
        Ok((0..shapes.len()).map(|k| b.gte(call, k)).collect())
    }

    /// The parse-only ops with attributes (fft, triangular_solve,
    /// rng_bit_generator), kept as HLO text spells them.
    fn library_op(&mut self, site: &OpSite, b: &mut Builder) -> R<Vec<InstrId>> {
        let (op, outers, short) = (site.op, site.outers, site.short);
        let mut a = Attrs::default();
        let pos = op.pos;
        match short {
            "fft" => {
                let ops = self.operands(op, b, outers)?;
                let t = needed_kind_enum(op, "fft_type", "fft_type")?;
                a.fft_type = Some(FftType::from_name(&t).ok_or((
                    pos,
                    format!("unknown fft type `{t}` (FFT, IFFT, RFFT or IRFFT)"),
                ))?);
                a.fft_length = Some(ints_attr(op, "fft_length")?);
                self.results(op, b, Opcode::Fft, ops, a)
            }
            "triangular_solve" => {
                let ops = self.operands(op, b, outers)?;
                let t = needed_kind_enum(op, "transpose_a", "transpose")?;
                let transpose_a = TransposeA::from_name(&t).ok_or((
                    pos,
                    format!("unknown transpose_a `{t}` (NO_TRANSPOSE, TRANSPOSE or ADJOINT)"),
                ))?;
                a.triangular_solve = Some(TriangularSolveOptions {
                    left_side: bool_attr(op, "left_side")?,
                    lower: bool_attr(op, "lower")?,
                    unit_diagonal: bool_attr(op, "unit_diagonal")?,
                    transpose_a: Some(transpose_a),
                });
                self.results(op, b, Opcode::TriangularSolve, ops, a)
            }
            "rng_bit_generator" => {
                let ops = self.operands(op, b, outers)?;
                // StableHLO's default is DEFAULT
                let r = kind_enum_attr(op, "rng_algorithm", "rng_algorithm")?
                    .unwrap_or_else(|| "DEFAULT".to_string());
                a.rng_algorithm = Some(rng_algorithm(&r).ok_or((
                    pos,
                    format!("unknown rng algorithm `{r}` (DEFAULT, THREE_FRY or PHILOX)"),
                ))?);
                if op.result_types.len() != 2 {
                    return err(
                        pos,
                        "`stablehlo.rng_bit_generator` has two results (state, output)",
                    );
                }
                self.results(op, b, Opcode::RngBitGenerator, ops, a)
            }
            _ => err(pos, format!("unknown operation `{}`", op.name)),
        }
    }

    /// The value `check.expect_serialized_eq` compares with: what the probe
    /// of its `probe_id` recorded on iteration `iter` (default 0). A probe
    /// in the same region runs once per run of the region, so iteration 0
    /// is its value there; a probe elsewhere (in a loop body) is not read.
    fn probed(&self, op: &Op, b: &Builder) -> R<InstrId> {
        let pos = op.pos;
        let Some(Attr::Str(id)) = op.attr("probe_id") else {
            return err(pos, "check.expect_serialized_eq needs `probe_id = \"...\"`");
        };
        let iter = match op.attr("iter") {
            None => 0,
            Some(Attr::Int(k)) => *k,
            Some(_) => return err(pos, "`iter` must be an integer"),
        };
        let found: Vec<InstrId> = b
            .probes
            .iter()
            .filter(|(p, _)| p == id)
            .map(|&(_, x)| x)
            .collect();
        match (found.as_slice(), iter) {
            ([x], 0) => Ok(*x),
            ([_], k) => err(
                pos,
                format!("probe `{id}` runs once here; it has no iteration {k}"),
            ),
            _ => err(
                pos,
                format!(
                    "probe `{id}` is not probed once in this region (probes in loop bodies and \
                     other regions are not read)"
                ),
            ),
        }
    }

    /// The reducer of `applies stablehlo.add`: `(a, b) -> add(a, b)` on the init's type.
    pub(super) fn applies_comp(
        &mut self,
        op: &Op,
        w: &str,
        b: &Builder,
        ops: &[InstrId],
    ) -> R<CompId> {
        let code = elementwise(w)
            .filter(|c| c.arity() == crate::hlo::Arity::Fixed(2))
            .ok_or((op.pos, format!("unknown reducer `{w}`")))?;
        let n = ops.len() / 2;
        if n != 1 {
            return err(op.pos, "`applies` takes one input");
        }
        let s = b.shape(ops[1]).clone();
        let mut inner = Builder::new();
        let x = inner.param(s.clone());
        let y = inner.param(s.clone());
        let root = inner.push(code, s, vec![x, y], Attrs::default());
        let name = format!(
            "{}_{}",
            w.trim_start_matches("stablehlo."),
            self.comps.len()
        );
        self.new_comp(inner.finish(name, root))
    }

    pub(super) fn while_op(&mut self, site: &OpSite, b: &mut Builder) -> R<Vec<InstrId>> {
        let (op, outers) = (site.op, site.outers);
        let init = self.operands(op, b, outers)?;
        if op.regions.len() != 2 {
            return err(op.pos, "while needs a cond and a body region");
        }
        if let Some(w) = self.forwarding_while(op, b, &init) {
            return Ok(w);
        }
        let carried: Vec<Shape> = init.iter().map(|&i| b.shape(i).clone()).collect();
        let caps = self.captures(&op.regions, b, outers)?;
        let cap_shapes: Vec<(String, Vec<Shape>)> = caps
            .iter()
            .map(|(n, ids)| (n.clone(), ids.iter().map(|&i| b.shape(i).clone()).collect()))
            .collect();
        let (regions, scope) = (&op.regions, &*b);
        let mut region = |k: usize, name: &str, pass_through: bool| {
            self.tuple_region(
                &regions[k],
                &carried,
                &cap_shapes,
                outers,
                scope,
                name,
                pass_through,
            )
        };
        let cond = region(0, "cond", false)?;
        let body = region(1, "body", true)?;
        let mut state = init.clone();
        for (_, ids) in &caps {
            state.extend(ids.iter().copied());
        }
        let t = b.tuple(state);
        let shape = b.shape(t).clone();
        let w = b.push(
            Opcode::While,
            shape,
            vec![t],
            Attrs {
                condition: Some(cond),
                body: Some(body),
                ..Attrs::default()
            },
        );
        Ok((0..init.len()).map(|k| b.gte(w, k)).collect())
    }

    pub(super) fn cond_op(&mut self, site: &OpSite, b: &mut Builder) -> R<Vec<InstrId>> {
        let (op, outers, short) = (site.op, site.outers, site.short);
        let sel = self.operands(op, b, outers)?;
        let [sel] = sel[..] else {
            return err(op.pos, format!("{short} takes one operand"));
        };
        if short == "if" && op.regions.len() != 2 {
            return err(op.pos, "if needs two regions");
        }
        if let Some(forwarded) = self.forwarding_branches(op, b, outers)? {
            // each branch calls its computation's function on one value of
            // the enclosing scope: an HLO conditional of those computations
            let (comps, args): (Vec<CompId>, Vec<InstrId>) = forwarded.into_iter().unzip();
            let a = Attrs {
                branch_computations: comps,
                pred_branches: short == "if",
                ..Attrs::default()
            };
            let mut operands = vec![sel];
            operands.extend(args);
            let ids = self.results(op, b, Opcode::Conditional, operands, a)?;
            if ids.len() > 1 {
                b.synthetic.extend(ids.iter().copied());
            }
            return Ok(ids);
        }
        let caps = self.captures(&op.regions, b, outers)?;
        let cap_shapes: Vec<(String, Vec<Shape>)> = caps
            .iter()
            .map(|(n, ids)| (n.clone(), ids.iter().map(|&i| b.shape(i).clone()).collect()))
            .collect();
        let mut branches = Vec::new();
        for r in &op.regions {
            branches.push(self.tuple_region(r, &[], &cap_shapes, outers, b, "branch", false)?);
        }
        let mut items = Vec::new();
        for (_, ids) in &caps {
            items.extend(ids.iter().copied());
        }
        let mut operands = vec![sel];
        for _ in &branches {
            let t = b.tuple(items.clone());
            operands.push(t);
        }
        let a = Attrs {
            branch_computations: branches,
            pred_branches: short == "if",
            ..Attrs::default()
        };
        self.results(op, b, Opcode::Conditional, operands, a)
    }

    pub(super) fn check_op(
        &mut self,
        site: &OpSite,
        kind: &str,
        b: &mut Builder,
    ) -> R<Vec<InstrId>> {
        let (op, outers, checked) = (site.op, site.outers, site.checked);
        let pos = op.pos;
        let (ck, is_const) = match kind {
            "expect_eq" => (CheckKind::Eq, false),
            "expect_eq_const" => (CheckKind::Eq, true),
            "expect_close" => (CheckKind::Close, false),
            "expect_almost_eq" => (CheckKind::AlmostEq, false),
            "expect_almost_eq_const" => (CheckKind::AlmostEq, true),
            "expect_serialized_eq" => (CheckKind::Eq, false),
            _ => return err(pos, format!("unknown check `check.{kind}`")),
        };
        let ops = self.operands(op, b, outers)?;
        let (actual, expected) = match (is_const, &ops[..]) {
            (false, [x]) if kind == "expect_serialized_eq" => (*x, self.probed(op, b)?),
            (false, [x, y]) => (*x, *y),
            (true, [x]) => {
                let Some(Attr::Dense(d, t)) = op.attr("value") else {
                    return err(pos, format!("check.{kind} needs a dense value"));
                };
                let Type::Tensor(dims, e) = t else {
                    return err(pos, "a check value must be a tensor");
                };
                let data = constant_data(d, dims, *e, pos)?;
                let c = b.push(
                    Opcode::Constant,
                    shape_of(t),
                    vec![],
                    Attrs {
                        constant: Some(data),
                        ..Attrs::default()
                    },
                );
                (*x, c)
            }
            _ => return err(pos, format!("check.{kind}: wrong number of operands")),
        };
        let max_ulp = match op.attr("max_ulp_difference") {
            Some(Attr::Int(v)) => {
                Some(u64::try_from(*v).map_err(|_| (pos, "bad max_ulp_difference".to_string()))?)
            }
            _ => None,
        };
        let tolerance = match op.attr("tolerance") {
            Some(Attr::Float(v)) => Some(*v),
            Some(Attr::Int(v)) => Some(*v as f64),
            _ => None,
        };
        if checked {
            self.checks.push(PendingCheck {
                pos,
                kind: ck,
                actual,
                expected,
                max_ulp,
                tolerance,
            });
        }
        Ok(Vec::new())
    }
}
