//! Shardy's form of a sharded module rewritten into GSPMD's (the form XLA's
//! SPMD partitioner reads, and the xla backend's annotated-module path):
//!
//! - `xla.sdy.FuncResultSharding` becomes a `Sharding` custom call with the
//!   converted sharding;
//! - `xla.sdy.GlobalToLocalShape` becomes, per operand, a `Sharding` (its
//!   in-sharding over every mesh axis) and an `SPMDFullToShardShape`
//!   (`sharding={manual}`), tupled when the custom call returned a tuple;
//! - `xla.sdy.LocalToGlobalShape` becomes, per operand, a `Sharding`
//!   (`{manual}`) and an `SPMDShardToFullShape` with its out-sharding;
//! - the `call` to the `shard_map` body stays a call (as JAX's GSPMD form
//!   keeps it), and every `xla.sdy` frontend attribute is dropped.
//!
//! Only full-manual `shard_map`s are rewritten (manual axes: every mesh axis
//! of size above one); a partial-manual one is an error that says so.

use std::collections::HashSet;

use super::ir::{Computation, InstrId, Instruction, Module};
use super::opcode::Opcode;
use super::sdy::{instruction_attr, manual_axes, module_meshes, parse_shardings, SdyMesh};
use super::shape::Shape;
use super::sharding::Sharding;

/// The module in GSPMD's form (see the module docs); a module that is not
/// in Shardy's form comes back unchanged, but for dropped attributes.
pub fn to_gspmd(module: &Module) -> Result<Module, String> {
    let meshes = module_meshes(module)?;
    let mut names: HashSet<String> = module
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| i.name.clone()))
        .collect();
    let mut out = module.clone();
    out.attrs.retain(|(k, v)| !is_sdy_attr(k, v));
    for comp in &mut out.computations {
        *comp = rewrite_computation(comp, &meshes, &mut names)?;
    }
    Ok(out)
}

fn is_sdy_attr(key: &str, value: &str) -> bool {
    key == "frontend_attributes" && (value.contains("xla.sdy.") || value.contains("inlineable"))
}

/// The instructions of `comp` in an order where operands come first.
fn def_use_order(comp: &Computation) -> Result<Vec<usize>, String> {
    let n = comp.instructions.len();
    let mut state = vec![0u8; n];
    let mut order = Vec::with_capacity(n);
    for start in 0..n {
        let mut stack = vec![(start, false)];
        while let Some((i, done)) = stack.pop() {
            if done {
                state[i] = 2;
                order.push(i);
                continue;
            }
            match state[i] {
                2 => continue,
                1 => return Err(format!("computation `{}` has a cycle", comp.name)),
                _ => {}
            }
            state[i] = 1;
            stack.push((i, true));
            for o in comp.instructions[i].operands.iter().rev() {
                let o = o.index();
                if o >= n {
                    return Err(format!("computation `{}`: operand out of range", comp.name));
                }
                if state[o] == 0 {
                    stack.push((o, false));
                } else if state[o] == 1 {
                    return Err(format!("computation `{}` has a cycle", comp.name));
                }
            }
        }
    }
    Ok(order)
}

struct Builder<'a> {
    instructions: Vec<Instruction>,
    names: &'a mut HashSet<String>,
}

impl Builder<'_> {
    fn push(&mut self, ins: Instruction) -> InstrId {
        self.instructions.push(ins);
        InstrId(self.instructions.len() as u32 - 1)
    }

    fn fresh(&mut self, base: &str, suffix: &str) -> String {
        let mut name = format!("{base}.{suffix}");
        let mut k = 1;
        while self.names.contains(&name) {
            name = format!("{base}.{suffix}{k}");
            k += 1;
        }
        self.names.insert(name.clone());
        name
    }

    /// A custom call `target(operand)` of `shape` with `sharding`.
    fn custom_call(
        &mut self,
        base: &str,
        target: &str,
        shape: Shape,
        operand: InstrId,
        sharding: &str,
    ) -> InstrId {
        let name = self.fresh(base, target);
        let mut ins = Instruction::new(name, Opcode::CustomCall, shape, vec![operand]);
        ins.attrs.custom_call_target = Some(target.to_string());
        ins.attrs
            .other
            .push(("sharding".to_string(), sharding.to_string()));
        self.push(ins)
    }

    /// `ids` as one value: itself when `tuple` is None, else a tuple of them
    /// with `tuple`'s shape and sharding.
    fn gather(&mut self, base: &str, ids: Vec<InstrId>, tuple: Option<(Shape, String)>) -> InstrId {
        match tuple {
            None => ids[0],
            Some((shape, sharding)) => {
                let name = self.fresh(base, "tuple");
                let mut ins = Instruction::new(name, Opcode::Tuple, shape, ids);
                ins.attrs.other.push(("sharding".to_string(), sharding));
                self.push(ins)
            }
        }
    }
}

fn rewrite_computation(
    comp: &Computation,
    meshes: &[(String, SdyMesh)],
    names: &mut HashSet<String>,
) -> Result<Computation, String> {
    let mut b = Builder {
        instructions: Vec::with_capacity(comp.instructions.len()),
        names,
    };
    let mut map: Vec<Option<InstrId>> = vec![None; comp.instructions.len()];
    for i in def_use_order(comp)? {
        let ins = &comp.instructions[i];
        let operands = ins
            .operands
            .iter()
            .map(|o| map[o.index()].ok_or("an operand is used before it is defined"))
            .collect::<Result<Vec<_>, _>>()?;
        let target = ins.attrs.custom_call_target.as_deref().unwrap_or("");
        let new = if ins.opcode == Opcode::CustomCall && target.starts_with("xla.sdy.") {
            rewrite_sdy_call(&mut b, comp, ins, &operands, meshes)?
        } else {
            let mut copy = ins.clone();
            copy.operands = operands;
            copy.attrs.other.retain(|(k, v)| !is_sdy_attr(k, v));
            b.push(copy)
        };
        map[i] = Some(new);
    }
    let root = map
        .get(comp.root.index())
        .copied()
        .flatten()
        .ok_or_else(|| format!("computation `{}`: no root", comp.name))?;
    Ok(Computation {
        name: comp.name.clone(),
        instructions: b.instructions,
        root,
        other: comp.other.clone(),
    })
}

/// The shape of value `k` of an instruction that yields `n` values (a tuple
/// element, or the shape itself for one value that is not a tuple).
fn value_shape(shape: &Shape, k: usize, n: usize) -> Result<Shape, String> {
    match shape {
        Shape::Tuple(items) if items.len() == n => Ok(items[k].clone()),
        s if n == 1 && !matches!(s, Shape::Tuple(_)) => Ok(s.clone()),
        s => Err(format!("a shape {s:?} for {n} values")),
    }
}

fn rewrite_sdy_call(
    b: &mut Builder<'_>,
    comp: &Computation,
    ins: &Instruction,
    operands: &[InstrId],
    meshes: &[(String, SdyMesh)],
) -> Result<InstrId, String> {
    let target = ins.attrs.custom_call_target.as_deref().unwrap_or("");
    let key = match target {
        "xla.sdy.FuncResultSharding" => "xla.sdy.sharding",
        "xla.sdy.GlobalToLocalShape" => "xla.sdy.in_shardings",
        "xla.sdy.LocalToGlobalShape" => "xla.sdy.out_shardings",
        other => return Err(format!("Shardy custom call `{other}` is not supported")),
    };
    let text = instruction_attr(ins, key)
        .ok_or_else(|| format!("`{}` ({target}) has no `{key}`", ins.name))?;
    let shardings = parse_shardings(&text)?;
    if shardings.len() != operands.len() {
        return Err(format!(
            "`{}`: {} shardings for {} operands",
            ins.name,
            shardings.len(),
            operands.len()
        ));
    }
    let mut full = Vec::with_capacity(shardings.len());
    for s in &shardings {
        let mesh = meshes
            .iter()
            .find(|(n, _)| *n == s.mesh)
            .ok_or_else(|| format!("mesh `@{}` is not in the module's xla.sdy.meshes", s.mesh))?;
        if target != "xla.sdy.FuncResultSharding" {
            check_full_manual(ins, &mesh.1)?;
        }
        full.push(sharding_text(&mesh.1.to_hlo(s, None)?)?);
    }
    let n = operands.len();
    let tuple = matches!(ins.shape, Shape::Tuple(_));
    let mut ids = Vec::with_capacity(n);
    for (k, (&o, sharding)) in operands.iter().zip(&full).enumerate() {
        let operand_shape = comp.instructions[ins.operands[k].index()].shape.clone();
        let result_shape = value_shape(&ins.shape, k, n)?;
        let id = match target {
            "xla.sdy.FuncResultSharding" => {
                b.custom_call(&ins.name, "Sharding", result_shape, o, sharding)
            }
            "xla.sdy.GlobalToLocalShape" => {
                let s = b.custom_call(&ins.name, "Sharding", operand_shape, o, sharding);
                b.custom_call(
                    &ins.name,
                    "SPMDFullToShardShape",
                    result_shape,
                    s,
                    "{manual}",
                )
            }
            _ => {
                let s = b.custom_call(&ins.name, "Sharding", operand_shape, o, "{manual}");
                b.custom_call(&ins.name, "SPMDShardToFullShape", result_shape, s, sharding)
            }
        };
        ids.push(id);
    }
    let tuple_sharding = |each: Vec<String>| format!("{{{}}}", each.join(", "));
    let tuple = tuple.then(|| {
        let each = match target {
            "xla.sdy.GlobalToLocalShape" => vec!["{manual}".to_string(); n],
            _ => full.clone(),
        };
        (ins.shape.clone(), tuple_sharding(each))
    });
    if ids.is_empty() {
        return Err(format!("`{}` ({target}) has no operands", ins.name));
    }
    Ok(b.gather(&ins.name, ids, tuple))
}

/// Errs unless the shard_map call `ins` is manual over every axis of `mesh`
/// of size above one.
fn check_full_manual(ins: &Instruction, mesh: &SdyMesh) -> Result<(), String> {
    let manual = manual_axes(ins).ok_or("no `xla.sdy.manual_axes` frontend attribute")?;
    let free: Vec<&str> = mesh
        .axes
        .iter()
        .filter(|(a, size)| *size > 1 && !manual.contains(a))
        .map(|(a, _)| a.as_str())
        .collect();
    if free.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "a partial-manual shard_map (manual over {manual:?}, not over {free:?}) is not \
             rewritten into GSPMD's form"
        ))
    }
}

/// `s` in HLO's text form.
pub fn sharding_text(s: &Sharding) -> Result<String, String> {
    Ok(match s {
        Sharding::Replicated => "{replicated}".to_string(),
        Sharding::Manual => "{manual}".to_string(),
        Sharding::Maximal(d) => format!("{{maximal device={d}}}"),
        Sharding::Tiled {
            tiles,
            devices,
            subgroups,
            manual,
        } => {
            let suffix = match (subgroups, manual) {
                (0, _) => String::new(),
                (1, false) => " last_tile_dim_replicate".to_string(),
                (k, m) => {
                    let mut kinds = vec!["replicated"; *k];
                    if *m {
                        kinds[k - 1] = "manual";
                    }
                    format!(" last_tile_dims={{{}}}", kinds.join(", "))
                }
            };
            let join = |v: &[usize]| v.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
            format!("{{devices=[{}]{}{suffix}}}", join(tiles), join(devices))
        }
        Sharding::Tuple(items) => {
            let each = items
                .iter()
                .map(sharding_text)
                .collect::<Result<Vec<_>, _>>()?;
            format!("{{{}}}", each.join(", "))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;
    use crate::inputs::{generate_inputs, Distribution};

    /// A shard_map on a 2x2 mesh: two operands (one tuple), a psum over
    /// every device, and a result sharding.
    const SDY: &str = r##"HloModule m, entry_computation_layout={(f32[4,2]{1,0}, f32[2]{0})->f32[4,2]{1,0}}, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["a"=2, "b"=2]>}}

add {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT s = f32[] add(p0, p1)
}

xla.sdy.manual_computation_body.1 {
  t = (f32[2,1]{1,0}, f32[2]{0}) parameter(0)
  x = f32[2,1]{1,0} get-tuple-element(t), index=0
  y = f32[2]{0} get-tuple-element(t), index=1
  r = f32[2,1]{1,0} all-reduce(x), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=add
  yb = f32[2,1]{1,0} reshape(y)
  ROOT o = f32[2,1]{1,0} multiply(r, yb)
}

ENTRY main {
  x = f32[4,2]{1,0} parameter(0), sharding={devices=[2,2]<=[4]}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"a\"}, {\"b\"}]>"}
  y = f32[2]{0} parameter(1), sharding={replicated}
  g = (f32[2,1]{1,0}, f32[2]{0}) custom-call(x, y), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>, <@mesh, [{}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"a\", \"b\"}>"}
  c = f32[2,1]{1,0} call(g), to_apply=xla.sdy.manual_computation_body.1, frontend_attributes={inlineable="false"}
  l = f32[4,2]{1,0} custom-call(c), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"a\", \"b\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>]>"}
  ROOT f = f32[4,2]{1,0} custom-call(l), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"a\"}, {\"b\"}]>]>"}
}
"##;

    fn targets(m: &Module) -> Vec<String> {
        m.entry_computation()
            .instructions
            .iter()
            .filter_map(|i| i.attrs.custom_call_target.clone())
            .collect()
    }

    #[test]
    fn rewrite_evaluates_like_the_original() {
        let sdy = parse_module(SDY).unwrap();
        let gspmd = to_gspmd(&sdy).unwrap();
        assert!(!crate::hlo::sdy::is_sdy_module(&gspmd));
        assert_eq!(
            targets(&gspmd),
            [
                "Sharding",
                "SPMDFullToShardShape",
                "Sharding",
                "SPMDFullToShardShape",
                "Sharding",
                "SPMDShardToFullShape",
                "Sharding"
            ]
        );
        let text = crate::hlo::print_module(&gspmd);
        assert!(!text.contains("xla.sdy.sharding"), "{text}");
        assert!(text.contains("sharding={devices=[2,2]0,1,2,3}"), "{text}");
        let inputs = generate_inputs(&sdy, Distribution::Uniform, 0).unwrap();
        let want = crate::reference::evaluate(&sdy, &inputs.args).unwrap();
        let got = crate::reference::evaluate(&gspmd, &inputs.args).unwrap();
        assert_eq!(got, want);
        // hand check: x all-reduced over the 4 devices (each holds one
        // 2x1 block), times y: every output element is y[row % 2] times the
        // sum of the four blocks' entries at that row
        let x = inputs.args[0].to_f64_vec();
        let y = inputs.args[1].to_f64_vec();
        let out = got[0].to_f64_vec();
        for r in 0..4 {
            let lr = r % 2;
            let sum: f64 = (0..2)
                .map(|br| x[(br * 2 + lr) * 2] + x[(br * 2 + lr) * 2 + 1])
                .sum();
            let want = sum * y[lr];
            for c in 0..2 {
                let o = out[r * 2 + c];
                assert!(
                    (o - want).abs() <= 1e-5 * (1.0 + want.abs()),
                    "row {r}: {o} vs {want}"
                );
            }
        }
    }

    #[test]
    fn partial_manual_is_an_error() {
        let partial = SDY.replace(r#"manual_axes{\"a\", \"b\"}"#, r#"manual_axes{\"a\"}"#);
        let e = to_gspmd(&parse_module(&partial).unwrap()).unwrap_err();
        assert!(e.contains("partial-manual"), "{e}");
    }

    #[test]
    fn shardings_print_back() {
        for t in [
            "{replicated}",
            "{manual}",
            "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}",
            "{{replicated}, {devices=[4]0,1,2,3}}",
        ] {
            let s = Sharding::parse(t).unwrap();
            assert_eq!(sharding_text(&s).unwrap(), t);
        }
    }
}
