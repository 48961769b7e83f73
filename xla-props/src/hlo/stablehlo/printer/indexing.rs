//! Lowering gather, scatter, reductions, select-and-scatter, top-k, sort and map.

use super::lower::{array_shape_of, called, need, present, window_attrs, Lowerer, Lowering, Site};
use super::types::{array_attr, invalid, list, unsupported};
use crate::hlo::Opcode;

impl Lowerer<'_> {
    /// Gather and scatter; other opcodes go on to [`Self::reduction_instruction`].
    pub(super) fn indexing_instruction(&mut self, site: &mut Site) -> Lowering {
        let (instr, a, indent) = (site.instr, &site.instr.attrs, site.indent);
        Ok(Some(match instr.opcode {
            Opcode::Gather => {
                let g = present(&a.gather_dims, "gather dimension numbers")?;
                let fields = dimension_fields(
                    [
                        ("offset_dims", &g.offset_dims),
                        ("collapsed_slice_dims", &g.collapsed_slice_dims),
                        ("operand_batching_dims", &g.operand_batching_dims),
                        (
                            "start_indices_batching_dims",
                            &g.start_indices_batching_dims,
                        ),
                        ("start_index_map", &g.start_index_map),
                    ],
                    g.index_vector_dim,
                );
                let attrs = [
                    format!("dimension_numbers = #stablehlo.gather<{}>", fields),
                    format!("indices_are_sorted = {}", a.indices_are_sorted),
                    format!("slice_sizes = {}", array_attr(&g.slice_sizes)),
                ];
                self.emit(site, "stablehlo.gather", &[], &attrs)?
            }
            Opcode::Scatter => {
                let s = present(&a.scatter_dims, "scatter dimension numbers")?;
                let f = called(a.to_apply, "to_apply")?;
                let fields = dimension_fields(
                    [
                        ("update_window_dims", &s.update_window_dims),
                        ("inserted_window_dims", &s.inserted_window_dims),
                        ("input_batching_dims", &s.input_batching_dims),
                        (
                            "scatter_indices_batching_dims",
                            &s.scatter_indices_batching_dims,
                        ),
                        (
                            "scatter_dims_to_operand_dims",
                            &s.scatter_dims_to_operand_dims,
                        ),
                    ],
                    s.index_vector_dim,
                );
                let attrs = [
                    format!("scatter_dimension_numbers = #stablehlo.scatter<{}>", fields),
                    format!("indices_are_sorted = {}", a.indices_are_sorted),
                    format!("unique_indices = {}", a.unique_indices),
                ];
                let region = self.region(f, indent + 1)?;
                self.emit(site, "stablehlo.scatter", &[region], &attrs)?
            }
            _ => return Ok(None),
        }))
    }

    /// Reductions, select-and-scatter, top-k, sort and map; other opcodes go on to [`Self::contraction_instruction`].
    pub(super) fn reduction_instruction(&mut self, site: &mut Site) -> Lowering {
        let (instr, a, indent) = (site.instr, &site.instr.attrs, site.indent);
        Ok(Some(match instr.opcode {
            Opcode::Reduce => {
                let dims = need(&a.dimensions, "dimensions")?;
                let f = called(a.to_apply, "to_apply")?;
                let region = self.region(f, indent + 1)?;
                let attrs = [format!("dimensions = {}", array_attr(&dims))];
                self.emit(site, "stablehlo.reduce", &[region], &attrs)?
            }
            Opcode::ReduceWindow => {
                let w = present(&a.window, "window")?;
                let f = called(a.to_apply, "to_apply")?;
                let region = self.region(f, indent + 1)?;
                if w.iter().any(|d| d.reversal) {
                    return unsupported("window reversal in reduce-window");
                }
                let attrs = window_attrs(w, true);
                self.emit(site, "stablehlo.reduce_window", &[region], &attrs)?
            }
            Opcode::SelectAndScatter => {
                let w = present(&a.window, "window")?;
                if w.iter()
                    .any(|d| d.base_dilation != 1 || d.window_dilation != 1 || d.reversal)
                {
                    return unsupported("dilated or reversed select-and-scatter window");
                }
                let select = self.region(called(a.select, "select")?, indent + 1)?;
                let scatter = self.region(called(a.scatter, "scatter")?, indent + 1)?;
                let attrs = window_attrs(w, false);
                self.emit(
                    site,
                    "stablehlo.select_and_scatter",
                    &[select, scatter],
                    &attrs,
                )?
            }
            Opcode::TopK => {
                // CHLO's top_k: the k largest along the last dimension, ties by
                // the lower index (as the reference); no smallest-first form
                let raw = |name: &str| {
                    a.other
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|(_, v)| v.trim().to_string())
                };
                let Some(k) = raw("k").and_then(|k| k.parse::<i64>().ok()) else {
                    return invalid("topk needs k=");
                };
                if raw("largest").is_some_and(|l| l == "false") {
                    return unsupported("topk with largest=false (chlo.top_k takes the largest)");
                }
                self.emit(site, "chlo.top_k", &[], &[format!("k = {k} : i64")])?
            }
            Opcode::Sort => {
                let dims = need(&a.dimensions, "dimensions")?;
                let [d] = dims[..] else {
                    return invalid("sort needs exactly one dimension");
                };
                let f = called(a.to_apply, "to_apply")?;
                let region = self.region(f, indent + 1)?;
                let attrs = [
                    format!("dimension = {d} : i64"),
                    format!("is_stable = {}", a.is_stable),
                ];
                self.emit(site, "stablehlo.sort", &[region], &attrs)?
            }
            Opcode::Map => {
                let f = called(a.to_apply, "to_apply")?;
                let rank = array_shape_of(instr)?.rank() as i64;
                let region = self.region(f, indent + 1)?;
                let all: Vec<i64> = (0..rank).collect();
                let attrs = [format!("dimensions = {}", array_attr(&all))];
                self.emit(site, "stablehlo.map", &[region], &attrs)?
            }
            _ => return Ok(None),
        }))
    }
}

/// The fields of gather's or scatter's dimension numbers: the first and the
/// last list always, the three between only when not empty, then the index
/// vector dimension.
fn dimension_fields(lists: [(&str, &Vec<i64>); 5], index_vector_dim: i64) -> String {
    let mut fields: Vec<String> = lists
        .iter()
        .enumerate()
        .filter(|(k, (_, dims))| *k == 0 || *k == 4 || !dims.is_empty())
        .map(|(_, (name, dims))| format!("{name} = {}", list(dims)))
        .collect();
    fields.push(format!("index_vector_dim = {index_vector_dim}"));
    fields.join(", ")
}
