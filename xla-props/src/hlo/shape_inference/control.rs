//! Shape inference for fusion, call, while, conditional.

use super::*;

impl<'a> Infer<'a> {
    pub(super) fn call(&self) -> Result<Shape> {
        let op = self.op;
        let callee = if op == Opcode::Fusion {
            req(op, &self.attrs.fusion_kind, "kind")?;
            match self.attrs.calls.as_slice() {
                [c] => *c,
                [] => return Err(missing(op, "calls")),
                _ => return Err(attr_err(op, "a fusion calls exactly one computation")),
            }
        } else {
            *req(op, &self.attrs.to_apply, "to_apply")?
        };
        let (sig, name) = callee_sig(op, self.comps, callee)?;
        let ok = sig.params.len() == self.operands.len()
            && sig
                .params
                .iter()
                .zip(self.operands)
                .all(|(p, o)| p.compatible(o));
        if !ok {
            let ops: Vec<String> = self.operands.iter().map(|s| s.to_string()).collect();
            return Err(callee_err(
                op,
                format!(
                    "computation '{name}' {sig} does not take the operands ({})",
                    ops.join(", ")
                ),
            ));
        }
        Ok(sig.result.without_layouts())
    }

    pub(super) fn while_loop(&self) -> Result<Shape> {
        let op = self.op;
        let cond = *req(op, &self.attrs.condition, "condition")?;
        let body = *req(op, &self.attrs.body, "body")?;
        let s = self.operands[0];
        let (c, cname) = callee_sig(op, self.comps, cond)?;
        if c.params.len() != 1
            || !c.params[0].compatible(s)
            || !c.result.compatible(&Shape::scalar(ElementType::Pred))
        {
            return Err(callee_err(
                op,
                format!("condition '{cname}' {c} must be ({s}) -> pred[]"),
            ));
        }
        let (b, bname) = callee_sig(op, self.comps, body)?;
        if b.params.len() != 1 || !b.params[0].compatible(s) || !b.result.compatible(s) {
            return Err(callee_err(
                op,
                format!("body '{bname}' {b} must be ({s}) -> {s}"),
            ));
        }
        Ok(s.without_layouts())
    }

    pub(super) fn conditional(&self) -> Result<Shape> {
        let op = self.op;
        let branches = &self.attrs.branch_computations;
        if branches.is_empty() {
            return Err(missing(op, "branch_computations"));
        }
        if self.operands.len() != branches.len() + 1 {
            return Err(ShapeError::new(
                ShapeErrorKind::Arity,
                format!("{op}: expects one operand per branch after the index, got {} operands for {} branches", self.operands.len(), branches.len()),
            ));
        }
        let index = self.arr(0)?;
        // `true_computation=`/`false_computation=` is the pred form only
        let index_ok = index.rank() == 0
            && ((index.dtype == ElementType::S32 && !self.attrs.pred_branches)
                || (index.dtype == ElementType::Pred && branches.len() == 2));
        if !index_ok {
            return Err(operand_err(
                op,
                format!("branch index {index} must be s32[] (or pred[] with two branches)"),
            ));
        }
        let mut result: Option<Shape> = None;
        for (k, &b) in branches.iter().enumerate() {
            let (sig, name) = callee_sig(op, self.comps, b)?;
            let arg = self.operands[k + 1];
            if sig.params.len() != 1 || !sig.params[0].compatible(arg) {
                return Err(callee_err(
                    op,
                    format!("branch {k} '{name}' {sig} does not take {arg}"),
                ));
            }
            match &result {
                Some(r) if !r.compatible(&sig.result) => {
                    return Err(callee_err(
                        op,
                        format!(
                            "branch {k} '{name}' returns {} but branch 0 returns {r}",
                            sig.result
                        ),
                    ));
                }
                Some(_) => {}
                None => result = Some(sig.result.without_layouts()),
            }
        }
        result.ok_or_else(|| missing(op, "branch_computations"))
    }
}
