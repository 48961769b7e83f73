//! Lowering fusions, calls, while loops and conditionals.

use super::lower::{called, result_types_of, Lowerer, Lowering, Site};
use super::types::{invalid, LowerError, Val};
use crate::hlo::Opcode;

impl Lowerer<'_> {
    /// Fusions, calls, while and conditional; any other opcode has no lowering.
    pub(super) fn control_instruction(&mut self, site: &mut Site) -> Lowering {
        let (instr, a, operands, indent) =
            (site.instr, &site.instr.attrs, site.operands, site.indent);
        let op = instr.opcode;
        Ok(Some(match op {
            Opcode::Fusion | Opcode::Call => {
                let f = if op == Opcode::Fusion {
                    a.calls
                        .first()
                        .copied()
                        .ok_or_else(|| LowerError::Invalid("missing calls".into()))?
                } else {
                    called(a.to_apply, "to_apply")?
                };
                let args: Vec<Vec<Val>> = operands.iter().map(|o| o.to_vec()).collect();
                self.computation(f, &args, site.out, indent)?
            }
            Opcode::While => {
                let cond = self.region(called(a.condition, "condition")?, indent + 1)?;
                let body = self.region(called(a.body, "body")?, indent + 1)?;
                let init = operands[0].to_vec();
                let tys: Vec<String> = init.iter().map(|v| v.ty.clone()).collect();
                self.op(
                    site.out,
                    indent,
                    "stablehlo.while",
                    &init,
                    &[cond, body],
                    &[],
                    &tys,
                )
            }
            Opcode::Conditional => {
                let branches = &a.branch_computations;
                if branches.is_empty() || operands.len() != branches.len() + 1 {
                    return invalid("branch count does not match the operands");
                }
                let selector = match operands[0] {
                    [v] => v.clone(),
                    _ => return invalid("tuple branch selector"),
                };
                let mut regions = Vec::new();
                for (k, &b) in branches.iter().enumerate() {
                    let params = vec![operands[k + 1].to_vec()];
                    regions.push(self.capturing_region(b, &params, indent + 1)?);
                }
                let is_pred = selector.ty == "tensor<i1>";
                if is_pred && regions.len() != 2 {
                    return invalid("a pred conditional needs two branches");
                }
                let name = if is_pred {
                    "stablehlo.if"
                } else {
                    "stablehlo.case"
                };
                self.op(
                    site.out,
                    indent,
                    name,
                    &[selector],
                    &regions,
                    &[],
                    &result_types_of(instr)?,
                )
            }
            _ => return Ok(None),
        }))
    }
}
