//! The faithful form's instructions: ops printed as they are, parse-only ops,
//! conditionals, tuple packing and forwarding regions.

use super::contraction::{rng_attrs, triangular_solve_attrs};
use super::faithful::{mlir_type, quote, symbol};
use super::lower::{operand_shape, present, Lowerer};
use super::types::{array_attr, block, invalid, region, tensor_type, LowerError, Val};
use crate::hlo::{ArrayShape, CompId, Computation, Instruction, Opcode, Shape};

impl Lowerer<'_> {
    /// One instruction of the faithful form: one value, of the instruction's type.
    pub(super) fn faithful_instruction(
        &mut self,
        c: &Computation,
        instr: &Instruction,
        operands: &[Val],
        out: &mut String,
        indent: usize,
    ) -> Result<Val, LowerError> {
        let a = &instr.attrs;
        match instr.opcode {
            Opcode::Tuple => {
                let ty = mlir_type(&instr.shape)?;
                one(self.op(out, indent, "stablehlo.tuple", operands, &[], &[], &[ty]))
            }
            Opcode::GetTupleElement if operands.len() == 1 => {
                let index = *present(&a.index, "index")?;
                let ty = mlir_type(&instr.shape)?;
                let attrs = [format!("index = {index} : i32")];
                one(self.op(
                    out,
                    indent,
                    "stablehlo.get_tuple_element",
                    operands,
                    &[],
                    &attrs,
                    &[ty],
                ))
            }
            Opcode::Fusion | Opcode::Call => {
                let f = if instr.opcode == Opcode::Fusion {
                    a.calls.first().copied()
                } else {
                    a.to_apply
                }
                .ok_or_else(|| LowerError::Invalid("missing called computation".into()))?;
                let callee = self.comp_checked(f)?;
                let mut attrs = vec![format!("callee = {}", symbol(&callee.name))];
                if instr.opcode == Opcode::Fusion {
                    let kind = a.fusion_kind.unwrap_or(crate::hlo::FusionKind::Loop);
                    attrs.push(format!("xla.fusion_kind = {}", quote(kind.name())));
                }
                let ty = mlir_type(&instr.shape)?;
                one(self.op(out, indent, "func.call", operands, &[], &attrs, &[ty]))
            }
            // HLO ops StableHLO has no op for: the equivalent reshape, marked
            Opcode::Copy if operands.len() == 1 && !operands[0].ty.starts_with("tuple") => {
                let attrs = ["xla.hlo_opcode = \"copy\"".to_string()];
                let ty = mlir_type(&instr.shape)?;
                one(self.op(
                    out,
                    indent,
                    "stablehlo.reshape",
                    operands,
                    &[],
                    &attrs,
                    &[ty],
                ))
            }
            Opcode::Copy if operands.len() == 1 => Ok(operands[0].clone()),
            Opcode::Conditional
                if !a.branch_computations.is_empty()
                    && operands.len() == a.branch_computations.len() + 1 =>
            {
                self.faithful_conditional(instr, operands, out, indent)
            }
            // complex parts (the compile form refuses complex values)
            Opcode::Real | Opcode::Imag | Opcode::Complex => {
                let name = match instr.opcode {
                    Opcode::Real => "stablehlo.real",
                    Opcode::Imag => "stablehlo.imag",
                    _ => "stablehlo.complex",
                };
                let ty = mlir_type(&instr.shape)?;
                one(self.op(out, indent, name, operands, &[], &[], &[ty]))
            }
            // parse-only ops with attributes, rng-bit-generator's two results as a tuple
            Opcode::Fft | Opcode::TriangularSolve | Opcode::RngBitGenerator => {
                self.faithful_parse_only(instr, operands, out, indent)
            }
            Opcode::CustomCall => self.faithful_custom_call(instr, operands, out, indent),
            Opcode::Bitcast if operands.len() == 1 => {
                self.faithful_bitcast(c, instr, &operands[0], out, indent)
            }
            _ => {
                // the normal form's lowering, on array leaves
                let mut leaves_of = Vec::new();
                for (k, v) in operands.iter().enumerate() {
                    let shape = operand_shape(c, instr, k)?;
                    leaves_of.push(self.unpack(v, &shape, out, indent)?);
                }
                let slices: Vec<&[Val]> = leaves_of.iter().map(Vec::as_slice).collect();
                let vals = self.instruction(c, instr, &slices, &[], out, indent)?;
                let mut it = vals.into_iter();
                let v = self.pack(&mut it, &instr.shape, out, indent)?;
                if it.next().is_some() {
                    return invalid("more values than the shape has leaves");
                }
                Ok(v)
            }
        }
    }

    /// A custom call as itself (its target named), its tuple results
    /// packed into one tuple.
    fn faithful_custom_call(
        &mut self,
        instr: &Instruction,
        operands: &[Val],
        out: &mut String,
        indent: usize,
    ) -> Result<Val, LowerError> {
        let a = &instr.attrs;
        let target = present(&a.custom_call_target, "custom_call_target")?;
        let attrs = [format!("call_target_name = {}", quote(target))];
        let result_types: Vec<String> = match &instr.shape {
            Shape::Tuple(items) => items.iter().map(mlir_type).collect::<Result<_, _>>()?,
            s => vec![mlir_type(s)?],
        };
        let vals = self.op(
            out,
            indent,
            "stablehlo.custom_call",
            operands,
            &[],
            &attrs,
            &result_types,
        );
        if instr.shape.as_tuple().is_some() {
            let ty = mlir_type(&instr.shape)?;
            return one(self.op(out, indent, "stablehlo.tuple", &vals, &[], &[], &[ty]));
        }
        one(vals)
    }

    /// A bitcast as the normal form lowers it, marked as a bitcast where
    /// that is one reshape.
    fn faithful_bitcast(
        &mut self,
        c: &Computation,
        instr: &Instruction,
        operand: &Val,
        out: &mut String,
        indent: usize,
    ) -> Result<Val, LowerError> {
        let start = out.len();
        let v = self.instruction(c, instr, &[std::slice::from_ref(operand)], &[], out, indent)?;
        let single_reshape =
            out[start..].lines().count() == 1 && out[start..].contains("\"stablehlo.reshape\"");
        if single_reshape {
            if let Some(at) = out[start..].rfind(" : (").map(|k| start + k) {
                out.insert_str(at, " {xla.hlo_opcode = \"bitcast\"}");
            }
        }
        one(v)
    }

    /// fft, triangular-solve and rng-bit-generator with their attributes
    /// (`#stablehlo<fft_type ..>`, `#stablehlo<transpose ..>`,
    /// `#stablehlo<rng_algorithm ..>`); rng-bit-generator's two results are
    /// put together by a `stablehlo.tuple`, as other multi-result ops'.
    pub(super) fn faithful_parse_only(
        &mut self,
        instr: &Instruction,
        operands: &[Val],
        out: &mut String,
        indent: usize,
    ) -> Result<Val, LowerError> {
        let a = &instr.attrs;
        let missing = |what: &str| LowerError::Invalid(format!("missing {what}"));
        if operands.iter().any(|v| !v.ty.starts_with("tensor<")) {
            return invalid("a tuple operand where an array is expected");
        }
        let (name, attrs) = match instr.opcode {
            Opcode::Fft => {
                let t = a.fft_type.ok_or_else(|| missing("fft_type"))?;
                let len = a.fft_length.as_ref().ok_or_else(|| missing("fft_length"))?;
                (
                    "stablehlo.fft",
                    vec![
                        format!("fft_type = #stablehlo<fft_type {}>", t.name()),
                        format!("fft_length = {}", array_attr(len)),
                    ],
                )
            }
            Opcode::TriangularSolve => ("stablehlo.triangular_solve", triangular_solve_attrs(a)?),
            Opcode::RngBitGenerator => {
                let (state, output) = match instr.shape.as_tuple() {
                    Some([s, o]) if s.as_array().is_some() && o.as_array().is_some() => (s, o),
                    _ => return invalid("rng-bit-generator's shape is (state, output)"),
                };
                let attrs = rng_attrs(a)?;
                let types = [mlir_type(state)?, mlir_type(output)?];
                let vals = self.op(
                    out,
                    indent,
                    "stablehlo.rng_bit_generator",
                    operands,
                    &[],
                    &attrs,
                    &types,
                );
                let ty = mlir_type(&instr.shape)?;
                return one(self.op(out, indent, "stablehlo.tuple", &vals, &[], &[], &[ty]));
            }
            _ => return invalid("not fft, triangular-solve or rng-bit-generator"),
        };
        let ty = mlir_type(&instr.shape)?;
        one(self.op(out, indent, name, operands, &[], &attrs, &[ty]))
    }

    /// A conditional whose regions each call their branch's function on
    /// the branch's operand (from the enclosing scope).
    pub(super) fn faithful_conditional(
        &mut self,
        instr: &Instruction,
        operands: &[Val],
        out: &mut String,
        indent: usize,
    ) -> Result<Val, LowerError> {
        let a = &instr.attrs;
        let selector = &operands[0];
        let is_pred = selector.ty == "tensor<i1>";
        if is_pred && a.branch_computations.len() != 2 {
            return invalid("a pred conditional needs two branches");
        }
        let result_shapes: Vec<&Shape> = match &instr.shape {
            Shape::Tuple(items) => items.iter().collect(),
            s => vec![s],
        };
        let result_types: Vec<String> = result_shapes
            .iter()
            .map(|s| mlir_type(s))
            .collect::<Result<_, _>>()?;
        let mut regions = Vec::new();
        for (k, &branch) in a.branch_computations.iter().enumerate() {
            let c = self.comp_checked(branch)?;
            let mut body = String::new();
            let callee = format!("callee = {}", symbol(&c.name));
            let r = self.op(
                &mut body,
                indent + 2,
                "func.call",
                std::slice::from_ref(&operands[k + 1]),
                &[],
                &[callee],
                &[mlir_type(&instr.shape)?],
            );
            let results = if instr.shape.as_tuple().is_some() {
                let mut rs = Vec::new();
                for (i, t) in result_types.iter().enumerate() {
                    rs.extend(self.tuple_element(&mut body, indent + 2, &r, i, t.clone()));
                }
                rs
            } else {
                r
            };
            regions.push(block(indent + 1, &body, &results));
        }
        let name = if is_pred {
            "stablehlo.if"
        } else {
            "stablehlo.case"
        };
        let vals = self.op(
            out,
            indent,
            name,
            std::slice::from_ref(selector),
            &regions,
            &[],
            &result_types,
        );
        if instr.shape.as_tuple().is_some() {
            let ty = mlir_type(&instr.shape)?;
            let v = self.op(out, indent, "stablehlo.tuple", &vals, &[], &[], &[ty]);
            return v
                .into_iter()
                .next()
                .ok_or_else(|| LowerError::Invalid("tuple op without a result".into()));
        }
        vals.into_iter()
            .next()
            .ok_or_else(|| LowerError::Invalid("conditional without a result".into()))
    }

    /// Element `k` (of MLIR type `ty`) of the tuple value `v`.
    fn tuple_element(
        &mut self,
        out: &mut String,
        indent: usize,
        v: &[Val],
        k: usize,
        ty: String,
    ) -> Vec<Val> {
        let attrs = [format!("index = {k} : i32")];
        self.op(
            out,
            indent,
            "stablehlo.get_tuple_element",
            v,
            &[],
            &attrs,
            &[ty],
        )
    }

    /// The array leaves of `v` (of HLO shape `s`), taken apart with `get_tuple_element`.
    pub(super) fn unpack(
        &mut self,
        v: &Val,
        s: &Shape,
        out: &mut String,
        indent: usize,
    ) -> Result<Vec<Val>, LowerError> {
        match s {
            Shape::Tuple(items) => {
                let mut leaves = Vec::new();
                for (k, item) in items.iter().enumerate() {
                    let e = self.tuple_element(
                        out,
                        indent,
                        std::slice::from_ref(v),
                        k,
                        mlir_type(item)?,
                    );
                    for x in &e {
                        leaves.extend(self.unpack(x, item, out, indent)?);
                    }
                }
                Ok(leaves)
            }
            _ => Ok(vec![v.clone()]),
        }
    }

    /// One value of HLO shape `s` from array leaves, tuples put together with `stablehlo.tuple`.
    pub(super) fn pack(
        &mut self,
        leaves: &mut std::vec::IntoIter<Val>,
        s: &Shape,
        out: &mut String,
        indent: usize,
    ) -> Result<Val, LowerError> {
        match s {
            Shape::Tuple(items) => {
                let mut elems = Vec::new();
                for item in items {
                    elems.push(self.pack(leaves, item, out, indent)?);
                }
                let ty = mlir_type(s)?;
                let v = self.op(out, indent, "stablehlo.tuple", &elems, &[], &[], &[ty]);
                v.into_iter()
                    .next()
                    .ok_or_else(|| LowerError::Invalid("tuple op without a result".into()))
            }
            _ => leaves.next().ok_or_else(|| {
                LowerError::Invalid("fewer values than the shape has leaves".into())
            }),
        }
    }

    /// A region that forwards its arguments to `comp`'s function (the
    /// reader takes such a region as that computation); None where `comp`
    /// has a tuple parameter or a nested tuple result.
    pub(super) fn forwarding_region(
        &mut self,
        comp: CompId,
        indent: usize,
    ) -> Result<Option<String>, LowerError> {
        let c = self.comp_checked(comp)?;
        let mut args = Vec::new();
        // one flat tuple parameter (a while's state): the block takes its
        // elements and puts the tuple together for the call
        let mut packed: Option<String> = None;
        let params = c.parameters();
        let param_shapes: Vec<&Shape> = params.iter().map(|&p| &c.instr(p).shape).collect();
        let arrays: Vec<&ArrayShape> = match param_shapes.as_slice() {
            [Shape::Tuple(items)] => {
                packed = Some(mlir_type(param_shapes[0])?);
                match items
                    .iter()
                    .map(Shape::as_array)
                    .collect::<Option<Vec<_>>>()
                {
                    Some(a) => a,
                    None => return Ok(None),
                }
            }
            _ => match param_shapes
                .iter()
                .map(|s| s.as_array())
                .collect::<Option<Vec<_>>>()
            {
                Some(a) => a,
                None => return Ok(None),
            },
        };
        for s in arrays {
            let v = Val {
                name: format!("%b{}", self.next),
                ty: tensor_type(s)?,
            };
            self.next += 1;
            args.push(v);
        }
        let Some(root) = c.instructions.get(c.root.index()).map(|r| &r.shape) else {
            return invalid(format!("root of {} is undefined", c.name));
        };
        let parts: Vec<&ArrayShape> = match root {
            Shape::Array(a) => vec![a],
            Shape::Tuple(items) => match items
                .iter()
                .map(Shape::as_array)
                .collect::<Option<Vec<_>>>()
            {
                Some(p) => p,
                None => return Ok(None),
            },
            Shape::Token => return Ok(None),
        };
        let mut body = String::new();
        let callee = format!("callee = {}", symbol(&c.name));
        let call_args = match packed {
            Some(ty) => self.op(
                &mut body,
                indent + 1,
                "stablehlo.tuple",
                &args,
                &[],
                &[],
                &[ty],
            ),
            None => args.clone(),
        };
        let r = self.op(
            &mut body,
            indent + 1,
            "func.call",
            &call_args,
            &[],
            &[callee],
            &[mlir_type(root)?],
        );
        let results = if root.as_tuple().is_some() {
            let mut rs = Vec::new();
            for (k, p) in parts.iter().enumerate() {
                rs.extend(self.tuple_element(&mut body, indent + 1, &r, k, tensor_type(p)?));
            }
            rs
        } else {
            r
        };
        let decls: Vec<String> = args
            .iter()
            .map(|v| format!("{}: {}", v.name, v.ty))
            .collect();
        let s = region(indent, &decls, &body, &results);
        Ok(Some(s))
    }
}

/// The one value of an op with one result.
fn one(vals: Vec<Val>) -> Result<Val, LowerError> {
    match <[Val; 1]>::try_from(vals) {
        Ok([v]) => Ok(v),
        Err(_) => invalid("expected one value"),
    }
}
