//! Sharded programs for the `sharding_invariance` property: every program
//! template, and a sample of single ops that covers the SPMD partitioner's
//! handler families (elementwise, dot, reduce, windowed reduce, transpose,
//! reshape, broadcast, concatenate, slice, pad, reverse, iota, select,
//! sort), with `sharding=` annotations on the entry's parameters and root
//! under one of [`SHARDING_SCHEMES`].
//!
//! An annotated module means what it means on one device (the reference
//! ignores the annotations); a backend that partitions it (XLA's SPMD
//! partitioner on several devices) must compute the same global result.
//! The case shapes (`[3, 33]` by default) do not divide by 2, 4 or 8, so
//! every tiled dimension is uneven and the partitioner has to pad.
//!
//! Case parameters: `<template>.<scheme>`, e.g. `softmax.mesh2x2`.

use super::templates::{unfused_templates, StagedModule};
use crate::hlo::{BuildError, ElementType, Module, Shape};

/// A way to shard every array of a program over some devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardingScheme {
    /// Its name in case parameters.
    pub name: &'static str,
    /// Devices it spans.
    pub devices: usize,
    /// What it is, for humans.
    pub about: &'static str,
}

/// Every scheme: data-parallel (the major dimension tiled), tensor-parallel
/// (the minor dimension tiled), a 2-D mesh (both), a transposed device order
/// (the iota form with a transpose), and partial replication.
pub const SHARDING_SCHEMES: &[ShardingScheme] = &[
    ShardingScheme {
        name: "dp2",
        devices: 2,
        about: "major dimension over 2 devices",
    },
    ShardingScheme {
        name: "dp4",
        devices: 4,
        about: "major dimension over 4 devices",
    },
    ShardingScheme {
        name: "tp4",
        devices: 4,
        about: "minor dimension over 4 devices",
    },
    ShardingScheme {
        name: "mesh2x2",
        devices: 4,
        about: "major x minor over a 2x2 mesh",
    },
    ShardingScheme {
        name: "mesh2x4t",
        devices: 8,
        about: "major x minor over a 2x4 mesh, devices in transposed order",
    },
    ShardingScheme {
        name: "dp4r2",
        devices: 8,
        about: "major dimension over 4 devices, each tile on 2 (partial replication)",
    },
];

/// The scheme with this name.
pub fn find_scheme(name: &str) -> Option<&'static ShardingScheme> {
    SHARDING_SCHEMES.iter().find(|s| s.name == name)
}

fn tiles(rank: usize, tiled: &[(usize, usize)]) -> Vec<String> {
    let mut t = vec!["1".to_string(); rank];
    for &(d, n) in tiled {
        t[d] = n.to_string();
    }
    t
}

/// The `sharding=` text of one array of `rank` dimensions under `scheme`.
/// A scalar is replicated; a vector under a 2-D scheme is tiled along its
/// one dimension and replicated over the other mesh axis.
pub fn array_sharding(scheme: &ShardingScheme, rank: usize) -> String {
    if rank == 0 {
        return "{replicated}".into();
    }
    let last = rank - 1;
    let (tiled, replicate, devices): (Vec<(usize, usize)>, usize, String) = match scheme.name {
        "dp2" => (vec![(0, 2)], 1, "<=[2]".into()),
        "dp4" => (vec![(0, 4)], 1, "<=[4]".into()),
        "tp4" => (vec![(last, 4)], 1, "<=[4]".into()),
        "mesh2x2" if rank >= 2 => (vec![(0, 2), (last, 2)], 1, "<=[4]".into()),
        "mesh2x2" => (vec![(0, 2)], 2, "<=[4]".into()),
        "mesh2x4t" if rank >= 2 => (vec![(0, 2), (last, 4)], 1, "<=[4,2]T(1,0)".into()),
        "mesh2x4t" => (vec![(0, 2)], 4, "<=[4,2]T(1,0)".into()),
        _ => (vec![(0, 4)], 2, "<=[8]".into()),
    };
    let mut dims = tiles(rank, &tiled);
    if replicate > 1 {
        dims.push(replicate.to_string());
        format!(
            "{{devices=[{}]{devices} last_tile_dim_replicate}}",
            dims.join(",")
        )
    } else {
        format!("{{devices=[{}]{devices}}}", dims.join(","))
    }
}

/// The sharding of a value of `shape` (a tuple sharding for a tuple).
pub fn shape_sharding(scheme: &ShardingScheme, shape: &Shape) -> String {
    match shape {
        Shape::Array(a) => array_sharding(scheme, a.dims.len()),
        Shape::Tuple(items) => {
            let leaves: Vec<String> = shape
                .leaves()
                .iter()
                .map(|a| array_sharding(scheme, a.dims.len()))
                .collect();
            if items.is_empty() {
                "{{}}".into()
            } else {
                format!("{{{}}}", leaves.join(", "))
            }
        }
        Shape::Token => "{replicated}".into(),
    }
}

/// `module` with its entry's parameters and root annotated under `scheme`
/// (any sharding they had is replaced).
pub fn annotate(module: &Module, scheme: &ShardingScheme) -> Module {
    let mut m = module.clone();
    let entry = m.entry.index();
    let comp = &mut m.computations[entry];
    let mut targets = comp.parameters();
    if !targets.contains(&comp.root) {
        targets.push(comp.root);
    }
    for id in targets {
        let ins = &mut comp.instructions[id.index()];
        let text = shape_sharding(scheme, &ins.shape);
        ins.attrs.other.retain(|(k, _)| k != "sharding");
        ins.attrs.other.push(("sharding".into(), text));
    }
    m
}

const OP_TYPES: &[ElementType] = &[ElementType::F32, ElementType::Bf16];

/// The single-op program `name` on `[rows, cols]` operands.
fn op(
    name: &'static str,
    dtype: ElementType,
    [r, c]: [i64; 2],
) -> Result<StagedModule, BuildError> {
    let t = dtype.to_string();
    let a = format!("{t}[{r},{c}]");
    let sum = format!(
        "sum {{ x = {t}[] parameter(0) y = {t}[] parameter(1) ROOT s = {t}[] add(x, y) }}\n"
    );
    let cmp = format!(
        "lt {{ x = {t}[] parameter(0) y = {t}[] parameter(1) ROOT l = pred[] compare(x, y), direction=LT }}\n"
    );
    let (callees, params, body) = match name {
        "op-add" => (String::new(), vec![a.clone(), a.clone()], format!("ROOT o = {a} add(p0, p1)")),
        "op-exp" => (String::new(), vec![a.clone()], format!("ROOT o = {a} exponential(p0)")),
        "op-dot" => (
            String::new(),
            vec![a.clone(), format!("{t}[{c},{r}]")],
            format!("ROOT o = {t}[{r},{r}] dot(p0, p1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}"),
        ),
        "op-reduce-minor" => (
            sum,
            vec![a.clone()],
            format!("z = {t}[] constant(0)\n  ROOT o = {t}[{r}] reduce(p0, z), dimensions={{1}}, to_apply=sum"),
        ),
        "op-reduce-major" => (
            sum,
            vec![a.clone()],
            format!("z = {t}[] constant(0)\n  ROOT o = {t}[{c}] reduce(p0, z), dimensions={{0}}, to_apply=sum"),
        ),
        "op-reduce-window" => (
            sum,
            vec![a.clone()],
            format!("z = {t}[] constant(0)\n  ROOT o = {a} reduce-window(p0, z), window={{size=1x3 pad=0_0x1_1}}, to_apply=sum"),
        ),
        "op-transpose" => (String::new(), vec![a.clone()], format!("ROOT o = {t}[{c},{r}] transpose(p0), dimensions={{1,0}}")),
        "op-reshape" => (String::new(), vec![a.clone()], format!("ROOT o = {t}[{}] reshape(p0)", r * c)),
        "op-broadcast" => (String::new(), vec![format!("{t}[{c}]")], format!("ROOT o = {a} broadcast(p0), dimensions={{1}}")),
        "op-concatenate" => (
            String::new(),
            vec![a.clone(), a.clone()],
            format!("ROOT o = {t}[{},{c}] concatenate(p0, p1), dimensions={{0}}", 2 * r),
        ),
        "op-slice" => (
            String::new(),
            vec![a.clone()],
            format!("ROOT o = {t}[{},{}] slice(p0), slice={{[1:{r}], [0:{c}:2]}}", r - 1, (c + 1) / 2),
        ),
        "op-pad" => (
            String::new(),
            vec![a.clone()],
            format!("z = {t}[] constant(0)\n  ROOT o = {t}[{},{}] pad(p0, z), padding=1_2x0_1_1", r + 3, 2 * c),
        ),
        "op-reverse" => (String::new(), vec![a.clone()], format!("ROOT o = {a} reverse(p0), dimensions={{0,1}}")),
        "op-iota-select" => (
            String::new(),
            vec![a.clone()],
            format!("i = {a} iota(), iota_dimension=1\n  k = pred[{r},{c}] compare(p0, i), direction=LT\n  ROOT o = {a} select(k, p0, i)"),
        ),
        _ => (
            cmp,
            vec![a.clone()],
            format!("ROOT o = {a} sort(p0), dimensions={{1}}, to_apply=lt"),
        ),
    };
    let params: String = params
        .iter()
        .enumerate()
        .map(|(i, s)| format!("  p{i} = {s} parameter({i})\n"))
        .collect();
    StagedModule::parsed(
        format!("sharded op template {name}"),
        format!("HloModule {name}\n{callees}ENTRY e {{\n{params}  {body}\n}}\n"),
    )
}

unfused_templates!(
    /// Single-op templates for `sharding_invariance`.
    SHARDED_OP_TEMPLATES, OP_TYPES, op:
    "op-add",
    "op-exp",
    "op-dot",
    "op-reduce-minor",
    "op-reduce-major",
    "op-reduce-window",
    "op-transpose",
    "op-reshape",
    "op-broadcast",
    "op-concatenate",
    "op-slice",
    "op-pad",
    "op-reverse",
    "op-iota-select",
    "op-sort",
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;
    use crate::hlo::sharding::Sharding;
    use crate::reference::spmd::DeviceProgram;

    #[test]
    fn every_scheme_reads_back_and_spans_its_devices() {
        for s in SHARDING_SCHEMES {
            for rank in 0..4 {
                let text = array_sharding(s, rank);
                let parsed = Sharding::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
                if rank > 0 {
                    assert_eq!(
                        parsed.device_span(),
                        s.devices,
                        "{} rank {rank}: {text}",
                        s.name
                    );
                }
            }
        }
        assert_eq!(
            array_sharding(find_scheme("mesh2x2").unwrap(), 1),
            "{devices=[2,2]<=[4] last_tile_dim_replicate}"
        );
        assert_eq!(
            array_sharding(find_scheme("tp4").unwrap(), 3),
            "{devices=[1,1,4]<=[4]}"
        );
    }

    #[test]
    fn annotated_ops_keep_their_one_device_meaning() {
        for t in SHARDED_OP_TEMPLATES {
            for s in SHARDING_SCHEMES {
                let m = t
                    .build(ElementType::F32, &[3, 33], "unfused")
                    .unwrap_or_else(|e| panic!("{}: {e}", t.name));
                let a = annotate(&m, s);
                let entry = a.entry_computation();
                for p in entry.parameters() {
                    assert!(
                        crate::hlo::collective::verbatim(entry.instr(p), "sharding").is_some(),
                        "{}.{}",
                        t.name,
                        s.name
                    );
                }
                // annotations alone leave a one-device program
                assert!(
                    DeviceProgram::multi(&a).unwrap().is_none(),
                    "{}.{}",
                    t.name,
                    s.name
                );
                // and print and parse back
                let text = a.to_string();
                let back = parse_module(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
                assert_eq!(
                    back.entry_computation().parameters().len(),
                    entry.parameters().len()
                );
            }
        }
    }
}
