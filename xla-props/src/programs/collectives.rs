//! Collective templates: one partitioned program per collective and
//! replica-group shape, on 4 or 8 devices, for the `collectives` property.
//! Each device's operand is a `[rows, columns]` parameter of its own (the
//! global argument stacks the devices' arrays on a leading axis); reduce-
//! scatter and all-to-all take `group` times as many rows, so they split.
//!
//! Names: `<collective>_<groups>`, groups `g4` (`{{0,1,2,3}}`), `g2x2`
//! (`{{0,1},{2,3}}`), `g2x2t` (`{{0,2},{1,3}}`, the other mesh axis),
//! `g8t` (`[4,2]<=[2,4]T(1,0)`: four groups of two on eight devices),
//! `ring4` and `partial4` (collective-permute pairs).

use super::templates::{unfused_templates, StagedModule};
use crate::hlo::{BuildError, ElementType};

const TYPES: &[ElementType] = &[
    ElementType::F32,
    ElementType::F16,
    ElementType::Bf16,
    ElementType::S32,
];

/// (template suffix, devices, replica_groups text, group size).
const GROUPS: &[(&str, usize, &str, i64)] = &[
    ("g4", 4, "{{0,1,2,3}}", 4),
    ("g2x2", 4, "{{0,1},{2,3}}", 2),
    ("g2x2t", 4, "{{0,2},{1,3}}", 2),
    ("g8t", 8, "[4,2]<=[2,4]T(1,0)", 2),
];

fn groups(name: &str) -> (usize, &'static str, i64) {
    let suffix = name.rsplit('_').next().unwrap_or("");
    GROUPS
        .iter()
        .find(|g| g.0 == suffix)
        .map_or((4, "{{0,1,2,3}}", 4), |g| (g.1, g.2, g.3))
}

fn module(text: String) -> Result<StagedModule, BuildError> {
    StagedModule::parsed("collective template".into(), text)
}

fn reducers(t: &str) -> String {
    format!(
        "sum {{ a = {t}[] parameter(0) b = {t}[] parameter(1) ROOT s = {t}[] add(a, b) }}\n\
         max {{ a = {t}[] parameter(0) b = {t}[] parameter(1) ROOT s = {t}[] maximum(a, b) }}\n"
    )
}

/// `name` on the group shape its suffix names: the collective's line.
fn build(
    name: &'static str,
    dtype: ElementType,
    [rows, cols]: [i64; 2],
) -> Result<StagedModule, BuildError> {
    let t = dtype.to_string();
    let (n, rg, g) = groups(name);
    let ids = "channel_id=1, use_global_device_ids=true";
    let (p, body) = if name.starts_with("all_reduce_sum") {
        (format!("{t}[{rows},{cols}]"), format!("ROOT r = {t}[{rows},{cols}] all-reduce(p), {ids}, replica_groups={rg}, to_apply=sum"))
    } else if name.starts_with("all_reduce_max") {
        (format!("{t}[{rows},{cols}]"), format!("ROOT r = {t}[{rows},{cols}] all-reduce(p), {ids}, replica_groups={rg}, to_apply=max"))
    } else if name.starts_with("all_gather") {
        (format!("{t}[{rows},{cols}]"), format!("ROOT r = {t}[{},{cols}] all-gather(p), {ids}, replica_groups={rg}, dimensions={{0}}", rows * g))
    } else if name.starts_with("reduce_scatter") {
        (format!("{t}[{},{cols}]", rows * g), format!("ROOT r = {t}[{rows},{cols}] reduce-scatter(p), {ids}, replica_groups={rg}, dimensions={{0}}, to_apply=sum"))
    } else if name.starts_with("all_to_all") {
        (format!("{t}[{},{cols}]", rows * g), format!("ROOT r = {t}[{},{cols}] all-to-all(p), channel_id=1, replica_groups={rg}, dimensions={{0}}", rows * g))
    } else if name.starts_with("collective_broadcast") {
        (format!("{t}[{rows},{cols}]"), format!("ROOT r = {t}[{rows},{cols}] collective-broadcast(p), channel_id=1, replica_groups={rg}"))
    } else if name == "collective_permute_ring4" {
        (format!("{t}[{rows},{cols}]"), format!("ROOT r = {t}[{rows},{cols}] collective-permute(p), channel_id=1, source_target_pairs={{{{0,1}},{{1,2}},{{2,3}},{{3,0}}}}"))
    } else {
        // a partial permutation: devices 1 and 2 receive nothing (zeros)
        (format!("{t}[{rows},{cols}]"), format!("ROOT r = {t}[{rows},{cols}] collective-permute(p), channel_id=1, source_target_pairs={{{{0,3}},{{2,0}}}}"))
    };
    let n = if name.ends_with("4") && name.starts_with("collective_permute") {
        4
    } else {
        n
    };
    module(format!(
        "HloModule {name}, num_partitions={n}\n{}ENTRY e {{\n  p = {p} parameter(0)\n  {body}\n}}\n",
        reducers(&t)
    ))
}

unfused_templates!(
    /// Every collective template.
    COLLECTIVE_TEMPLATES, TYPES, build:
    "all_reduce_sum_g4",
    "all_reduce_sum_g2x2",
    "all_reduce_sum_g2x2t",
    "all_reduce_sum_g8t",
    "all_reduce_max_g2x2",
    "all_gather_g4",
    "all_gather_g2x2t",
    "reduce_scatter_g4",
    "reduce_scatter_g2x2",
    "all_to_all_g4",
    "all_to_all_g2x2t",
    "collective_broadcast_g2x2t",
    "collective_permute_ring4",
    "collective_permute_partial4",
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::spmd::DeviceProgram;

    #[test]
    fn every_collective_template_builds_a_partitioned_program() {
        for t in COLLECTIVE_TEMPLATES {
            for &d in t.dtypes {
                let m = t
                    .build(d, &[2, 3], "unfused")
                    .unwrap_or_else(|e| panic!("{}: {e}", t.name));
                let p = DeviceProgram::multi(&m).unwrap().expect("multi-device");
                assert!(p.grid.devices() >= 4, "{}", t.name);
            }
        }
    }
}
