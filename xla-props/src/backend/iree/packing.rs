//! Entry parameters packed into one flat buffer per element type, for
//! modules whose dispatches IREE's runtime refuses to launch.
//!
//! `iree-compile` 3.13.0 forms a dispatch from every operand an elementwise
//! chain reads; when a module's parameters all feed one such chain (XLA's
//! global-norm fusion of an optimizer step: the squared norms of 40
//! gradients summed and square-rooted), the dispatch gets one buffer binding
//! per parameter, and `iree-run-module` refuses it: `binding count 35 > 32;
//! while invoking native function hal.command_buffer.dispatch`
//! (docs/findings.md, "IREE quirks worked around before lowering";
//! reproducer `docs/repro/iree-dispatch-binding-limit`). The program is
//! valid; it is rerun with its parameters of each element type concatenated
//! into one rank-1 parameter, each original parameter a `slice` of it
//! `reshape`d back (same name, same shape), so the dispatch reads one
//! binding per element type. Only the front end's view of the arguments
//! changes: every instruction after the parameters is the same, and the
//! reference gives the same bits on both forms (`tests`).

use crate::hlo::{ArrayShape, ElementType, InstrId, Instruction, Module, Opcode, Shape, SliceDim};
use crate::literal::Literal;

/// `iree-run-module`'s refusal of a dispatch with too many bindings.
pub(crate) fn is_binding_limit(message: &str) -> bool {
    message.contains("binding count") && message.contains("hal.command_buffer.dispatch")
}

/// Where each original argument lands in the packed ones.
#[derive(Clone, Debug, PartialEq)]
pub struct Packing {
    /// The packed parameters' shapes (rank 1, one per element type).
    packed: Vec<ArrayShape>,
    /// Per original parameter (by parameter number): its packed parameter,
    /// its first element there, and its shape.
    places: Vec<(usize, usize, ArrayShape)>,
}

impl Packing {
    /// The packed arguments, from arguments for the original entry.
    pub fn pack(&self, args: &[&Literal]) -> Result<Vec<Literal>, String> {
        if args.len() != self.places.len() {
            return Err(format!(
                "{} arguments given, the entry takes {}",
                args.len(),
                self.places.len()
            ));
        }
        let mut bits: Vec<Vec<u64>> = self
            .packed
            .iter()
            .map(|s| Vec::with_capacity(s.dims[0] as usize))
            .collect();
        for (k, (arg, (group, start, shape))) in args.iter().zip(&self.places).enumerate() {
            if arg.shape().dims != shape.dims || arg.dtype() != shape.dtype {
                return Err(format!(
                    "argument {k} is {}, the entry expects {shape}",
                    arg.shape()
                ));
            }
            debug_assert_eq!(bits[*group].len(), *start);
            bits[*group].extend((0..arg.element_count()).map(|i| arg.get_bits(i)));
        }
        self.packed
            .iter()
            .zip(&bits)
            .map(|(s, b)| Literal::from_bits(s, b).map_err(|e| e.to_string()))
            .collect()
    }
}

/// `module` with its entry parameters packed (see the module docs), and how
/// to pack its arguments; `None` when a parameter is not an array (a tuple
/// or a token), or the entry has fewer than two parameters.
pub fn pack_parameters(module: &Module) -> Option<(Module, Packing)> {
    let entry = module.entry_computation();
    let mut params: Vec<(usize, InstrId, ArrayShape)> = Vec::new();
    for (i, ins) in entry.instructions.iter().enumerate() {
        if ins.opcode == Opcode::Parameter {
            let number = usize::try_from(ins.attrs.parameter_number?).ok()?;
            let Shape::Array(a) = &ins.shape else {
                return None;
            };
            params.push((number, InstrId(i as u32), a.clone()));
        }
    }
    if params.len() < 2 {
        return None;
    }
    params.sort_by_key(|p| p.0);
    if params.iter().enumerate().any(|(k, p)| p.0 != k) {
        return None;
    }
    let mut dtypes: Vec<ElementType> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    let mut places = Vec::with_capacity(params.len());
    for (_, _, shape) in &params {
        let group = match dtypes.iter().position(|d| *d == shape.dtype) {
            Some(g) => g,
            None => {
                dtypes.push(shape.dtype);
                sizes.push(0);
                dtypes.len() - 1
            }
        };
        let count = usize::try_from(shape.dims.iter().product::<i64>()).ok()?;
        places.push((group, sizes[group], shape.clone()));
        sizes[group] += count;
    }
    let packed: Vec<ArrayShape> = dtypes
        .iter()
        .zip(&sizes)
        .map(|(d, n)| ArrayShape::new(*d, vec![*n as i64]))
        .collect();
    let mut out = module.clone();
    out.attrs.retain(|(k, _)| k != "entry_computation_layout");
    let comp = &mut out.computations[module.entry.index()];
    let packed_ids: Vec<InstrId> = packed
        .iter()
        .enumerate()
        .map(|(g, s)| {
            let mut p = Instruction::new(
                format!("packed.{}.{g}", s.dtype),
                Opcode::Parameter,
                Shape::Array(s.clone()),
                vec![],
            );
            p.attrs.parameter_number = Some(g as i64);
            comp.push(p)
        })
        .collect();
    for ((_, id, shape), (group, start, _)) in params.iter().zip(&places) {
        let count = shape.dims.iter().product::<i64>();
        let name = comp.instr(*id).name.clone();
        let mut slice = Instruction::new(
            format!("{name}.packed"),
            Opcode::Slice,
            Shape::array(shape.dtype, vec![count]),
            vec![packed_ids[*group]],
        );
        slice.attrs.slice = Some(vec![SliceDim {
            start: *start as i64,
            limit: *start as i64 + count,
            stride: 1,
        }]);
        let slice = comp.push(slice);
        comp.instructions[id.index()] = Instruction::new(
            name,
            Opcode::Reshape,
            Shape::Array(shape.clone()),
            vec![slice],
        );
    }
    Some((out, Packing { packed, places }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;
    use crate::inputs::{generate_inputs, Distribution};
    use crate::reference::evaluate;

    const MODULE: &str = r#"HloModule m
ENTRY e {
  a = f32[] parameter(0)
  b = f32[2,3]{0,1} parameter(1)
  i = s32[4] parameter(2)
  c = f32[3] parameter(3)
  rb = f32[] reduce(b, a), dimensions={0,1}, to_apply=add
  rc = f32[] reduce(c, a), dimensions={0}, to_apply=add
  s = f32[] add(rb, rc)
  ri = s32[] reduce(i, z), dimensions={0}, to_apply=addi
  z = s32[] constant(0)
  ROOT t = (f32[], s32[]) tuple(s, ri)
}
add { xf = f32[] parameter(0)  yf = f32[] parameter(1)  ROOT rf = f32[] add(xf, yf) }
addi { xi = s32[] parameter(0)  yi = s32[] parameter(1)  ROOT ri2 = s32[] add(xi, yi) }
"#;

    #[test]
    fn a_packed_module_computes_the_same_bits_from_packed_arguments() {
        let module = parse_module(MODULE).unwrap();
        let (packed, packing) = pack_parameters(&module).unwrap();
        crate::hlo::verify(&packed).unwrap();
        let entry = packed.entry_computation();
        let params: Vec<String> = entry
            .parameters()
            .iter()
            .map(|&p| entry.instr(p).shape.to_string())
            .collect();
        assert_eq!(params, ["f32[10]", "s32[4]"]);
        for seed in 0..4 {
            let args = generate_inputs(&module, Distribution::Uniform, seed)
                .unwrap()
                .args;
            let refs: Vec<&Literal> = args.iter().collect();
            let packed_args = packing.pack(&refs).unwrap();
            assert_eq!(
                evaluate(&module, &args).unwrap(),
                evaluate(&packed, &packed_args).unwrap()
            );
        }
        // arguments of the wrong shape are refused, not reinterpreted
        let wrong =
            Literal::from_bits(&ArrayShape::new(ElementType::F32, vec![3, 2]), &[0; 6]).unwrap();
        let args = generate_inputs(&module, Distribution::Uniform, 0)
            .unwrap()
            .args;
        let mut refs: Vec<&Literal> = args.iter().collect();
        refs[1] = &wrong;
        assert!(packing.pack(&refs).unwrap_err().contains("argument 1"));
        assert!(packing.pack(&refs[..2]).is_err());
    }

    #[test]
    fn only_the_runtimes_binding_refusal_asks_for_packing() {
        assert!(is_binding_limit(
            "c/runtime/src/iree/modules/hal/module.c:1106: OUT_OF_RANGE; binding count 35 > 32; \
             while invoking native function hal.command_buffer.dispatch; while calling import;"
        ));
        assert!(!is_binding_limit(
            "OUT_OF_RANGE; count 1318 of iree_hal_fence > 32; hal.fence.join"
        ));
        let single = parse_module("HloModule m\nENTRY e { ROOT a = f32[] parameter(0) }").unwrap();
        assert!(pack_parameters(&single).is_none());
    }
}
