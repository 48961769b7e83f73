//! Collectives, point-to-point and token ops, and the interpreter's
//! `run_parallel`, as the HLO instructions XLA translates them to:
//!
//! - `all_gather`, `all_reduce`, `reduce_scatter`, `collective_broadcast`,
//!   `collective_reduce`, `collective_permute`: their HLO namesakes;
//!   `replica_groups` as `{{0,1},{2}}` (the `-1` padding of ragged groups
//!   dropped), `channel_handle` as `channel_id` (when its handle is
//!   positive: the spec's modes key on `channel_id > 0`);
//! - `all_to_all`: the operand split along `split_dimension`, the chunks
//!   exchanged by a tuple all-to-all, the received chunks concatenated
//!   along `concat_dimension` (HLO's array form splits and concatenates
//!   along one dimension);
//! - `send`/`recv`: `send` + `send-done`, `recv` + `recv-done`;
//! - `infeed`: `infeed` giving `(data, token)`; `outfeed`: `outfeed`;
//! - `interpreter.run_parallel`: a custom call (see
//!   `reference::parallel`); its `infeed=` functions are called
//!   and their values passed as the last operands.

use super::attrs::{attr_ints, int_attr};
use super::converter::{Converted, Converter, OpSite};
use crate::hlo::collective::RUN_PARALLEL;
use crate::hlo::ir::{Attrs, CompId, InstrId, SliceDim};
use crate::hlo::opcode::Opcode;
use crate::hlo::shape::Shape;
use crate::hlo::stablehlo::build::{emit, err, shape_of, Builder, R};
use crate::hlo::stablehlo::syntax::{Attr, Op, Type};

/// `dense<[[0, 1], [2, -1]]> : tensor<2x2xi64>` as `{{0,1},{2}}`.
fn id_groups(op: &Op, name: &str) -> R<Option<String>> {
    let Some(a) = op.attr(name) else {
        return Ok(None);
    };
    let bad = || (op.pos, format!("`{name}` must be a 2-d dense array of ids"));
    let (Some(flat), Attr::Dense(_, Type::Tensor(dims, _))) = (attr_ints(a), a) else {
        return Err(bad());
    };
    let width = match dims[..] {
        [_, w] => usize::try_from(w).map_err(|_| bad())?,
        _ => return Err(bad()),
    };
    let rows: Vec<String> = if width == 0 {
        Vec::new()
    } else {
        flat.chunks(width)
            .map(|row| {
                let ids: Vec<String> = row
                    .iter()
                    .filter(|&&v| v >= 0)
                    .map(ToString::to_string)
                    .collect();
                format!("{{{}}}", ids.join(","))
            })
            .collect()
    };
    Ok(Some(format!("{{{}}}", rows.join(","))))
}

/// The verbatim HLO attributes of a collective: groups (or pairs), channel
/// and `use_global_device_ids`.
fn collective_attrs(op: &Op, groups: &str, a: &mut Attrs) -> R<()> {
    if let Some(g) = id_groups(op, groups)? {
        a.other.push((groups.to_string(), g));
    }
    match op.attr("channel_handle") {
        None => {}
        Some(Attr::Struct(k, fields)) if k == "channel_handle" => {
            let handle = fields.iter().find(|(f, _)| f == "handle");
            match handle {
                Some((_, Attr::Int(h))) if *h > 0 => {
                    a.other.push(("channel_id".into(), h.to_string()));
                }
                Some((_, Attr::Int(_))) => {}
                _ => return err(op.pos, "`channel_handle` needs an integer `handle`"),
            }
        }
        Some(_) => {
            return err(
                op.pos,
                "`channel_handle` must be a #stablehlo.channel_handle",
            )
        }
    }
    for flag in ["use_global_device_ids", "has_dynamic_root"] {
        match op.attr(flag) {
            None | Some(Attr::Bool(false)) => {}
            Some(Attr::Unit | Attr::Bool(true)) => a.other.push((flag.into(), "true".into())),
            Some(_) => return err(op.pos, format!("`{flag}` must be a unit attribute")),
        }
    }
    Ok(())
}

impl Converter<'_> {
    /// Collectives, send/recv, infeed/outfeed and `interpreter.run_parallel`;
    /// other names go on to the next family.
    pub(super) fn collective_op(&mut self, site: &OpSite, b: &mut Builder) -> Converted {
        let (op, outers, short) = (site.op, site.outers, site.short);
        let mut a = Attrs::default();
        let pos = op.pos;
        let converted = match short {
            "all_gather"
            | "all_reduce"
            | "reduce_scatter"
            | "collective_broadcast"
            | "collective_reduce" => {
                let ops = self.operands(op, b, outers)?;
                collective_attrs(op, "replica_groups", &mut a)?;
                let code = match short {
                    "all_gather" => {
                        a.dimensions = Some(vec![int_attr(op, "all_gather_dim")?]);
                        Opcode::AllGather
                    }
                    "reduce_scatter" => {
                        a.dimensions = Some(vec![int_attr(op, "scatter_dimension")?]);
                        Opcode::ReduceScatter
                    }
                    "collective_broadcast" => Opcode::CollectiveBroadcast,
                    "all_reduce" => Opcode::AllReduce,
                    _ => Opcode::CollectiveReduce,
                };
                if matches!(
                    code,
                    Opcode::AllReduce | Opcode::ReduceScatter | Opcode::CollectiveReduce
                ) {
                    a.to_apply = Some(self.region_comp(op, 0, outers, b, "reducer")?);
                }
                self.results(op, b, code, ops, a)
            }
            "collective_permute" => {
                let ops = self.operands(op, b, outers)?;
                collective_attrs(op, "source_target_pairs", &mut a)?;
                self.results(op, b, Opcode::CollectivePermute, ops, a)
            }
            "all_to_all" => {
                let ops = self.operands(op, b, outers)?;
                collective_attrs(op, "replica_groups", &mut a)?;
                let mut outs = Vec::with_capacity(ops.len());
                for (k, &x) in ops.iter().enumerate() {
                    let want = op.result_types.get(k).map(shape_of);
                    outs.push(all_to_all(op, b, x, &a, want)?);
                }
                Ok(outs)
            }
            "send" => {
                let mut ops = self.operands(op, b, outers)?;
                let token = ops.pop().ok_or((pos, "send needs a token".to_string()))?;
                let data = if ops.len() == 1 { ops[0] } else { b.tuple(ops) };
                channel_attrs(op, &mut a)?;
                let shape = Shape::Tuple(vec![
                    b.shape(data).clone(),
                    Shape::array(crate::hlo::ElementType::U32, vec![]),
                    Shape::Token,
                ]);
                let s = b.push(Opcode::Send, shape, vec![data, token], a.clone());
                Ok(vec![b.push(Opcode::SendDone, Shape::Token, vec![s], a)])
            }
            "recv" => {
                let ops = self.operands(op, b, outers)?;
                channel_attrs(op, &mut a)?;
                let (datas, data) = data_shapes(op)?;
                let shape = Shape::Tuple(vec![
                    data.clone(),
                    Shape::array(crate::hlo::ElementType::U32, vec![]),
                    Shape::Token,
                ]);
                let r = b.push(Opcode::Recv, shape, ops, a.clone());
                let done = Shape::Tuple(vec![data, Shape::Token]);
                let d = b.push(Opcode::RecvDone, done, vec![r], a);
                Ok(unpack(b, d, datas))
            }
            "infeed" => {
                let ops = self.operands(op, b, outers)?;
                let (datas, data) = data_shapes(op)?;
                let i = b.push(
                    Opcode::Infeed,
                    Shape::Tuple(vec![data, Shape::Token]),
                    ops,
                    a,
                );
                Ok(unpack(b, i, datas))
            }
            "outfeed" => {
                let mut ops = self.operands(op, b, outers)?;
                let token = ops
                    .pop()
                    .ok_or((pos, "outfeed needs a token".to_string()))?;
                let data = if ops.len() == 1 { ops[0] } else { b.tuple(ops) };
                Ok(vec![b.push(
                    Opcode::Outfeed,
                    Shape::Token,
                    vec![data, token],
                    a,
                )])
            }
            "interpreter.run_parallel" => self.run_parallel(op, b, outers),
            _ => return Ok(None),
        };
        converted.map(Some)
    }

    fn run_parallel(&mut self, op: &Op, b: &mut Builder, outers: &[&Builder]) -> R<Vec<InstrId>> {
        let pos = op.pos;
        let mut ops = self.operands(op, b, outers)?;
        let Some(Attr::List(rows)) = op.attr("programs") else {
            return err(pos, "run_parallel needs `programs = [[@f, ...], ...]`");
        };
        let mut programs = Vec::new();
        let mut results = Vec::new();
        let width = match rows.first() {
            Some(Attr::List(r)) if !r.is_empty() => r.len(),
            _ => return err(pos, "`programs` must be a non-empty list of lists"),
        };
        for row in rows {
            let Attr::List(row) = row else {
                return err(pos, "`programs` must be a list of lists");
            };
            if row.len() != width {
                return err(pos, "the rows of `programs` differ in length");
            }
            for p in row {
                let k = self.function(p, pos)?;
                programs.push(CompId(k as u32));
                results.push(self.def.funcs[k].results.len().to_string());
            }
        }
        let mut infeed = 0usize;
        match op.attr("infeed") {
            None => {}
            Some(Attr::List(fs)) => {
                for f in fs {
                    let k = self.function(f, pos)?;
                    let func = &self.def.funcs[k];
                    let ([t], true) = (&func.results[..], func.args.is_empty()) else {
                        return err(
                            pos,
                            format!(
                                "infeed function `@{}` must take nothing and return one tensor",
                                func.name
                            ),
                        );
                    };
                    let call = Attrs {
                        to_apply: Some(CompId(k as u32)),
                        ..Attrs::default()
                    };
                    ops.push(b.push(Opcode::Call, shape_of(t), vec![], call));
                    infeed += 1;
                }
            }
            Some(_) => return err(pos, "`infeed` must be a list of functions"),
        }
        let a = Attrs {
            custom_call_target: Some(RUN_PARALLEL.to_string()),
            calls: programs,
            other: vec![
                ("num_replicas".into(), rows.len().to_string()),
                ("num_partitions".into(), width.to_string()),
                (
                    "program_results".into(),
                    format!("{{{}}}", results.join(",")),
                ),
                ("infeed_count".into(), infeed.to_string()),
            ],
            ..Attrs::default()
        };
        let shapes: Vec<Shape> = op.result_types.iter().map(shape_of).collect();
        Ok(emit(b, Opcode::CustomCall, shapes, ops, a))
    }

    /// The function index a `@name` attribute names.
    fn function(&self, a: &Attr, pos: usize) -> R<usize> {
        let Attr::Symbol(name) = a else {
            return err(pos, "expected a function name `@f`");
        };
        self.funcs
            .get(name)
            .copied()
            .ok_or((pos, format!("no function `@{name}`")))
    }
}

/// send/recv's `channel_id` (the handle, whatever its sign) and
/// `is_host_transfer`.
fn channel_attrs(op: &Op, a: &mut Attrs) -> R<()> {
    let Some(Attr::Struct(k, fields)) = op.attr("channel_handle") else {
        return err(op.pos, format!("`{}` needs a channel_handle", op.name));
    };
    let Some((_, Attr::Int(h))) = fields.iter().find(|(f, _)| f == "handle") else {
        return err(
            op.pos,
            format!("`#stablehlo.{k}` needs an integer `handle`"),
        );
    };
    a.other.push(("channel_id".into(), h.to_string()));
    if matches!(
        op.attr("is_host_transfer"),
        Some(Attr::Bool(true) | Attr::Unit)
    ) {
        a.other.push(("is_host_transfer".into(), "true".into()));
    }
    Ok(())
}

/// The data results of an op whose last result is a token, and their shape
/// as one (a tuple when there are several).
fn data_shapes(op: &Op) -> R<(usize, Shape)> {
    match op.result_types.split_last() {
        Some((Type::Token, data)) => {
            let shapes: Vec<Shape> = data.iter().map(shape_of).collect();
            let n = shapes.len();
            Ok((
                n,
                if n == 1 {
                    shapes[0].clone()
                } else {
                    Shape::Tuple(shapes)
                },
            ))
        }
        _ => err(
            op.pos,
            format!("`{}`'s last result must be a token", op.name),
        ),
    }
}

/// `(data, token)` as the op's results: the data (taken apart when it is
/// several), then the token.
fn unpack(b: &mut Builder, pair: InstrId, datas: usize) -> Vec<InstrId> {
    let data = b.gte(pair, 0);
    let mut out = if datas == 1 {
        vec![data]
    } else {
        (0..datas).map(|k| b.gte(data, k)).collect()
    };
    out.push(b.gte(pair, 1));
    out
}

/// One operand's all-to-all: split, exchange chunk j with member j, concatenate.
fn all_to_all(op: &Op, b: &mut Builder, x: InstrId, a: &Attrs, want: Option<Shape>) -> R<InstrId> {
    let pos = op.pos;
    let split = int_attr(op, "split_dimension")?;
    let concat = int_attr(op, "concat_dimension")?;
    let n = int_attr(op, "split_count")?;
    let (dims, t) = b.array(x, pos)?;
    let rank = dims.len() as i64;
    if !(0..rank).contains(&split) || !(0..rank).contains(&concat) {
        return err(pos, "all_to_all: a dimension out of range");
    }
    let len = dims[split as usize];
    if n <= 0 || len % n != 0 {
        return err(
            pos,
            format!("all_to_all: dimension {split} of size {len} does not split {n} ways"),
        );
    }
    let part = len / n;
    let mut chunk_dims = dims.clone();
    chunk_dims[split as usize] = part;
    let chunk = Shape::array(t, chunk_dims.clone());
    let chunks: Vec<InstrId> = (0..n)
        .map(|j| {
            let s = Attrs {
                slice: Some(
                    dims.iter()
                        .enumerate()
                        .map(|(k, &d)| {
                            if k as i64 == split {
                                SliceDim {
                                    start: j * part,
                                    limit: (j + 1) * part,
                                    stride: 1,
                                }
                            } else {
                                SliceDim {
                                    start: 0,
                                    limit: d,
                                    stride: 1,
                                }
                            }
                        })
                        .collect(),
                ),
                ..Attrs::default()
            };
            b.push(Opcode::Slice, chunk.clone(), vec![x], s)
        })
        .collect();
    let shapes = vec![chunk.clone(); n as usize];
    let exchanged = b.push(Opcode::AllToAll, Shape::Tuple(shapes), chunks, a.clone());
    let got: Vec<InstrId> = (0..n as usize).map(|j| b.gte(exchanged, j)).collect();
    let mut out_dims = chunk_dims;
    out_dims[concat as usize] *= n;
    let out = Shape::array(t, out_dims);
    if want.as_ref().is_some_and(|w| !w.compatible(&out)) {
        return err(
            pos,
            format!("all_to_all gives {out}, the text says otherwise"),
        );
    }
    let c = Attrs {
        dimensions: Some(vec![concat]),
        ..Attrs::default()
    };
    Ok(b.push(Opcode::Concatenate, out, got, c))
}
