//! Lowering collectives and the device ids: `all-reduce`, `all-gather`,
//! `reduce-scatter`, `all-to-all`, `collective-permute`, `partition-id` and
//! `replica-id`, as the StableHLO ops XLA translates back to the same HLO.
//!
//! The attributes keep their HLO meaning: `channel_id=N` becomes
//! `channel_handle = #stablehlo.channel_handle<handle = N, type = 1>` and
//! `use_global_device_ids=true` the unit attribute of that name, so XLA
//! reads the replica groups in the same group mode
//! (`crate::hlo::collective::group_mode`). Replica groups in the iota and
//! mesh forms are written out as the explicit groups they stand for (an
//! empty list as one group of every id of the mode), on the module's grid.
//! The async `*-start`/`*-done` forms and `collective-broadcast` have no
//! lowering.

use super::lower::{arrays_of, called, need, result_types_of, Lowerer, Lowering, Site};
use super::types::{array_attr, invalid, unsupported, LowerError, Val};
use crate::hlo::collective::{group_mode, parse_replica_groups, verbatim, DeviceGrid, GroupMode};
use crate::hlo::{Instruction, Opcode};

/// `dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>` for equal-sized rows.
fn dense_rows(rows: &[Vec<usize>]) -> Result<String, LowerError> {
    let width = rows.first().map_or(0, Vec::len);
    if rows.iter().any(|r| r.len() != width) {
        return unsupported("replica groups of different sizes");
    }
    let body = rows
        .iter()
        .map(|r| {
            let ids: Vec<String> = r.iter().map(usize::to_string).collect();
            format!("[{}]", ids.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ");
    Ok(format!(
        "dense<[{body}]> : tensor<{}x{width}xi64>",
        rows.len()
    ))
}

/// The explicit replica groups of `ins` on `grid` (the module's), in the
/// ids of its group mode.
fn groups(
    grid: &Result<DeviceGrid, String>,
    ins: &Instruction,
) -> Result<Vec<Vec<usize>>, LowerError> {
    let grid = *grid.as_ref().map_err(|e| LowerError::Invalid(e.clone()))?;
    let mode = group_mode(ins).map_err(LowerError::Invalid)?;
    let ids = match mode {
        GroupMode::CrossReplica | GroupMode::CrossReplicaAndPartition => grid.replicas,
        GroupMode::CrossPartition => grid.partitions,
        GroupMode::FlattenedId => grid.devices(),
    };
    let written = match verbatim(ins, "replica_groups") {
        Some(t) => parse_replica_groups(t).map_err(LowerError::Invalid)?,
        None => parse_replica_groups("{}").map_err(LowerError::Invalid)?,
    };
    let groups = written.groups(ids).map_err(LowerError::Invalid)?;
    if let Some(bad) = groups.iter().flatten().find(|&&g| g >= ids) {
        return invalid(format!(
            "replica group id {bad} is out of range: {ids} ids on a {}x{} grid",
            grid.replicas, grid.partitions
        ));
    }
    Ok(groups)
}

/// `channel_handle` and `use_global_device_ids`, as `ins` has them.
fn channel_attrs(ins: &Instruction) -> Result<Vec<String>, LowerError> {
    let mut attrs = Vec::new();
    if let Some(c) = verbatim(ins, "channel_id") {
        let handle: i64 = c
            .trim()
            .parse()
            .map_err(|_| LowerError::Invalid(format!("channel_id={c} is not an integer")))?;
        attrs.push(format!(
            "channel_handle = #stablehlo.channel_handle<handle = {handle}, type = 1>"
        ));
    }
    if verbatim(ins, "use_global_device_ids").is_some_and(|v| v.trim() == "true") {
        attrs.push("use_global_device_ids".to_string());
    }
    Ok(attrs)
}

/// The one dimension a gather, scatter or all-to-all works along.
fn one_dimension(ins: &Instruction) -> Result<i64, LowerError> {
    match need(&ins.attrs.dimensions, "dimensions")?[..] {
        [d] if d >= 0 => Ok(d),
        _ => invalid("needs exactly one non-negative dimension"),
    }
}

impl Lowerer<'_> {
    /// Collectives and device ids; any other opcode is another family's.
    pub(super) fn collective_instruction(&mut self, site: &mut Site) -> Lowering {
        let (instr, indent) = (site.instr, site.indent);
        let grid = self.grid.clone();
        Ok(Some(match instr.opcode {
            Opcode::PartitionId => self.emit(site, "stablehlo.partition_id", &[], &[])?,
            Opcode::ReplicaId => self.emit(site, "stablehlo.replica_id", &[], &[])?,
            Opcode::AllReduce => {
                let mut attrs = vec![format!(
                    "replica_groups = {}",
                    dense_rows(&groups(&grid, instr)?)?
                )];
                attrs.extend(channel_attrs(instr)?);
                // a variadic all-reduce as one per operand: the same
                // reductions, and XLA's SPMD partitioner takes only the
                // one-operand form in manually sharded code
                let ops = arrays_of(site.operands)?;
                let types = result_types_of(instr)?;
                if ops.len() != types.len() {
                    return invalid("all-reduce results do not match its operands");
                }
                let mut results = Vec::with_capacity(ops.len());
                for (v, ty) in ops.into_iter().zip(types) {
                    let f = called(instr.attrs.to_apply, "to_apply")?;
                    let region = self.region(f, indent + 1)?;
                    results.extend(self.op(
                        site.out,
                        indent,
                        "stablehlo.all_reduce",
                        &[v],
                        &[region],
                        &attrs,
                        &[ty],
                    ));
                }
                results
            }
            Opcode::ReduceScatter => {
                let region = self.region(called(instr.attrs.to_apply, "to_apply")?, indent + 1)?;
                let mut attrs = vec![
                    format!("scatter_dimension = {} : i64", one_dimension(instr)?),
                    format!("replica_groups = {}", dense_rows(&groups(&grid, instr)?)?),
                ];
                attrs.extend(channel_attrs(instr)?);
                self.one_operand(site, "stablehlo.reduce_scatter", &[region], &attrs)?
            }
            Opcode::AllGather => {
                let mut attrs = vec![
                    format!("all_gather_dim = {} : i64", one_dimension(instr)?),
                    format!("replica_groups = {}", dense_rows(&groups(&grid, instr)?)?),
                ];
                attrs.extend(channel_attrs(instr)?);
                self.one_operand(site, "stablehlo.all_gather", &[], &attrs)?
            }
            Opcode::AllToAll => self.all_to_all(site, &groups(&grid, instr)?)?,
            Opcode::CollectiveBroadcast => {
                let mut attrs = vec![format!(
                    "replica_groups = {}",
                    dense_rows(&groups(&grid, instr)?)?
                )];
                attrs.extend(channel_attrs(instr)?);
                self.one_operand(site, "stablehlo.collective_broadcast", &[], &attrs)?
            }
            Opcode::CustomCall => match instr.attrs.custom_call_target.as_deref() {
                // one device: an annotation, the identity
                Some("Sharding") if !self.annotated => match site.operands {
                    [v] => v.to_vec(),
                    _ => return invalid("a Sharding call takes one operand"),
                },
                // for XLA's partitioner, with their shardings
                Some(t @ ("Sharding" | "SPMDFullToShardShape" | "SPMDShardToFullShape"))
                    if self.annotated =>
                {
                    let attrs = [format!("call_target_name = \"{t}\"")];
                    self.one_operand(site, "stablehlo.custom_call", &[], &attrs)?
                }
                _ => return Ok(None),
            },
            Opcode::CollectivePermute => {
                let pairs = crate::hlo::collective::source_target_pairs(instr)
                    .map_err(LowerError::Invalid)?;
                let rows: Vec<Vec<usize>> = pairs.iter().map(|&(s, t)| vec![s, t]).collect();
                let pairs = if rows.is_empty() {
                    "dense<> : tensor<0x2xi64>".to_string()
                } else {
                    dense_rows(&rows)?
                };
                let mut attrs = vec![format!("source_target_pairs = {pairs}")];
                attrs.extend(channel_attrs(instr)?);
                self.one_operand(site, "stablehlo.collective_permute", &[], &attrs)?
            }
            _ => return Ok(None),
        }))
    }

    /// `name` over the instruction's single array operand.
    fn one_operand(
        &mut self,
        site: &mut Site,
        name: &str,
        regions: &[String],
        attrs: &[String],
    ) -> Result<Vec<Val>, LowerError> {
        if site.operands.len() != 1 || site.instr.shape.as_array().is_none() {
            return unsupported("only the one-operand form lowers");
        }
        self.emit(site, name, regions, attrs)
    }

    /// The array form (`dimensions={d}`) as `stablehlo.all_to_all` along
    /// `d`; the tuple form (operand j to member j) as the operands stacked
    /// on a new leading axis, exchanged along it, and unstacked.
    fn all_to_all(
        &mut self,
        site: &mut Site,
        groups: &[Vec<usize>],
    ) -> Result<Vec<Val>, LowerError> {
        let instr = site.instr;
        let n = groups.first().map_or(0, Vec::len);
        let mut attrs = vec![format!("replica_groups = {}", dense_rows(groups)?)];
        attrs.extend(channel_attrs(instr)?);
        let exchange = |d: i64| {
            [
                format!("split_dimension = {d} : i64"),
                format!("concat_dimension = {d} : i64"),
                format!("split_count = {n} : i64"),
            ]
        };
        if instr.attrs.dimensions.is_some() {
            let d = one_dimension(instr)?;
            attrs.extend(exchange(d));
            return self.one_operand(site, "stablehlo.all_to_all", &[], &attrs);
        }
        let ops = arrays_of(site.operands)?;
        let types = result_types_of(instr)?;
        if ops.len() != n || types.len() != n {
            return invalid(format!(
                "the tuple form has {} operands for groups of {n}",
                ops.len()
            ));
        }
        let shape = site
            .instr
            .shape
            .leaves()
            .first()
            .map(|a| (*a).clone())
            .ok_or_else(|| LowerError::Invalid("an empty tuple".into()))?;
        if ops.iter().any(|v| v.ty != ops[0].ty) || types.iter().any(|t| *t != types[0]) {
            return unsupported("a tuple all-to-all over arrays of different shapes");
        }
        let one = {
            let mut s = shape.clone();
            s.dims.insert(0, 1);
            super::types::tensor_type(&s)?
        };
        let stacked_ty = {
            let mut s = shape.clone();
            s.dims.insert(0, n as i64);
            super::types::tensor_type(&s)?
        };
        let (out, indent) = (&mut *site.out, site.indent);
        let mut rows = Vec::with_capacity(n);
        for v in &ops {
            let r = self.op(
                out,
                indent,
                "stablehlo.reshape",
                std::slice::from_ref(v),
                &[],
                &[],
                std::slice::from_ref(&one),
            );
            rows.extend(r);
        }
        let stacked = self.op(
            out,
            indent,
            "stablehlo.concatenate",
            &rows,
            &[],
            &["dimension = 0 : i64".to_string()],
            std::slice::from_ref(&stacked_ty),
        );
        attrs.extend(exchange(0));
        let moved = self.op(
            out,
            indent,
            "stablehlo.all_to_all",
            &stacked,
            &[],
            &attrs,
            &[stacked_ty],
        );
        let rank = shape.dims.len();
        let mut results = Vec::with_capacity(n);
        for (k, ty) in types.iter().enumerate() {
            let mut start = vec![0i64; rank + 1];
            let mut limit: Vec<i64> = std::iter::once(1)
                .chain(shape.dims.iter().copied())
                .collect();
            start[0] = k as i64;
            limit[0] = k as i64 + 1;
            let slice_attrs = [
                format!("start_indices = {}", array_attr(&start)),
                format!("limit_indices = {}", array_attr(&limit)),
                format!("strides = {}", array_attr(&vec![1; rank + 1])),
            ];
            let row = self.op(
                out,
                indent,
                "stablehlo.slice",
                &moved,
                &[],
                &slice_attrs,
                std::slice::from_ref(&one),
            );
            results.extend(self.op(
                out,
                indent,
                "stablehlo.reshape",
                &row,
                &[],
                &[],
                std::slice::from_ref(ty),
            ));
        }
        Ok(results)
    }
}

#[cfg(test)]
mod tests {
    use crate::hlo::parse_module;
    use crate::hlo::stablehlo::lower_module;

    const PARTITIONED: &str = r#"HloModule m, num_partitions=4

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (p: f32[2,4], q: f32[3]) -> (f32[2,4], f32[3], u32[], f32[8,4], f32[2,4], f32[2,1], f32[2,1]) {
  %p = f32[2,4]{1,0} parameter(0)
  %q = f32[3]{0} parameter(1)
  %ar = (f32[2,4]{1,0}, f32[3]{0}) all-reduce(%p, %q), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=%add
  %ar0 = f32[2,4]{1,0} get-tuple-element(%ar), index=0
  %ar1 = f32[3]{0} get-tuple-element(%ar), index=1
  %id = u32[] partition-id()
  %ag = f32[8,4]{1,0} all-gather(%p), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  %cp = f32[2,4]{1,0} collective-permute(%p), channel_id=3, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  %s0 = f32[2,1]{1,0} slice(%p), slice={[0:2], [0:1]}
  %s1 = f32[2,1]{1,0} slice(%p), slice={[0:2], [1:2]}
  %s2 = f32[2,1]{1,0} slice(%p), slice={[0:2], [2:3]}
  %s3 = f32[2,1]{1,0} slice(%p), slice={[0:2], [3:4]}
  %a2a = (f32[2,1]{1,0}, f32[2,1]{1,0}, f32[2,1]{1,0}, f32[2,1]{1,0}) all-to-all(%s0, %s1, %s2, %s3), channel_id=4, replica_groups={{0,1,2,3}}
  %t0 = f32[2,1]{1,0} get-tuple-element(%a2a), index=0
  %t3 = f32[2,1]{1,0} get-tuple-element(%a2a), index=3
  ROOT %r = (f32[2,4]{1,0}, f32[3]{0}, u32[], f32[8,4]{1,0}, f32[2,4]{1,0}, f32[2,1]{1,0}, f32[2,1]{1,0}) tuple(%ar0, %ar1, %id, %ag, %cp, %t0, %t3)
}
"#;

    #[test]
    fn a_partitioned_module_lowers_its_collectives_manually_sharded() {
        let m = parse_module(PARTITIONED).unwrap();
        let mlir = lower_module(&m).unwrap().mlir;
        let has = |s: &str| assert!(mlir.contains(s), "`{s}` missing in\n{mlir}");
        has("module @xla_props attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32}");
        has("%arg0: tensor<2x4xf32> {mhlo.sharding = \"{manual}\"}");
        // the variadic all-reduce is one all-reduce per operand
        assert_eq!(
            mlir.matches("\"stablehlo.all_reduce\"").count(),
            2,
            "{mlir}"
        );
        has("replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>");
        has("channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids");
        has("\"stablehlo.partition_id\"() {mhlo.sharding = \"{manual}\"} : () -> tensor<ui32>");
        has("all_gather_dim = 0 : i64");
        has("source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>");
        // the tuple all-to-all: stacked on a new axis, exchanged along it, unstacked
        has("\"stablehlo.concatenate\"");
        has("split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 4 : i64");
        has("start_indices = array<i64: 3, 0, 0>, limit_indices = array<i64: 4, 2, 1>");
        // the reducer's body carries no sharding
        let region_add = mlir
            .lines()
            .find(|l| l.contains("\"stablehlo.add\""))
            .unwrap();
        assert!(!region_add.contains("mhlo.sharding"), "{region_add}");
    }

    const SHARD_MAP: &str = r#"HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%body (x: f32[2,3]) -> f32[2,3] {
  %x = f32[2,3]{1,0} parameter(0)
  ROOT %ps = f32[2,3]{1,0} all-reduce(%x), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=%add
}

ENTRY %main (p: f32[8,3]) -> (f32[8,3]) {
  %p = f32[8,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %s0 = f32[8,3]{1,0} custom-call(%p), custom_call_target="Sharding", sharding={devices=[4,1]<=[4]}
  %f = f32[2,3]{1,0} custom-call(%s0), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %c = f32[2,3]{1,0} call(%f), to_apply=%body
  %s1 = f32[2,3]{1,0} custom-call(%c), custom_call_target="Sharding", sharding={manual}
  %g = f32[8,3]{1,0} custom-call(%s1), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1]<=[4]}
  ROOT %t = (f32[8,3]{1,0}) tuple(%g), sharding={{devices=[4,1]<=[4]}}
}
"#;

    #[test]
    fn an_annotated_module_lowers_with_its_shardings_for_the_partitioner() {
        let m = parse_module(SHARD_MAP).unwrap();
        let mlir = crate::hlo::stablehlo::lower_annotated(&m, 4).unwrap().mlir;
        let has = |s: &str| assert!(mlir.contains(s), "`{s}` missing in\n{mlir}");
        has("mhlo.num_partitions = 4 : i32");
        has("%arg0: tensor<8x3xf32> {mhlo.sharding = \"{devices=[4,1]<=[4]}\"}");
        has("-> (tensor<8x3xf32> {mhlo.sharding = \"{devices=[4,1]<=[4]}\"})");
        has("{call_target_name = \"SPMDFullToShardShape\", mhlo.sharding = \"{manual}\"} : (tensor<8x3xf32>) -> tensor<2x3xf32>");
        has("{call_target_name = \"SPMDShardToFullShape\", mhlo.sharding = \"{devices=[4,1]<=[4]}\"} : (tensor<2x3xf32>) -> tensor<8x3xf32>");
        // the body's collective is read on the 4 devices the shardings name
        has("replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>");
        // without a device count it is a one-device module: the groups name
        // devices it does not have
        assert!(lower_module(&m).is_err());
    }

    #[test]
    fn a_sharding_call_on_one_device_is_the_identity() {
        let m = parse_module(
            "HloModule m\n\nENTRY %e (p: f32[2]) -> f32[2] {\n  %p = f32[2] parameter(0)\n  ROOT %s = f32[2] custom-call(%p), custom_call_target=\"Sharding\", sharding={replicated}\n}\n",
        )
        .unwrap();
        let mlir = lower_module(&m).unwrap().mlir;
        assert!(!mlir.contains("custom_call"), "{mlir}");
        assert!(mlir.contains("\"func.return\"(%arg0)"), "{mlir}");
    }

    #[test]
    fn a_one_device_module_is_written_as_before() {
        let m = parse_module(&PARTITIONED.replace(", num_partitions=4", "")).unwrap();
        // replica groups over 4 ids on one device are out of range
        let e = lower_module(&m).unwrap_err().to_string();
        assert!(e.contains("out of range"), "{e}");
        let plain = parse_module(
            "HloModule m\n\nENTRY %e (p: f32[2]) -> u32[] {\n  %p = f32[2] parameter(0)\n  ROOT %i = u32[] partition-id()\n}\n",
        )
        .unwrap();
        let mlir = lower_module(&plain).unwrap().mlir;
        assert!(mlir.starts_with("module @xla_props {\n"), "{mlir}");
        assert!(!mlir.contains("mhlo.sharding"), "{mlir}");
    }
}
