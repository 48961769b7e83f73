//! Lowering gather, scatter, reductions, select-and-scatter, top-k, sort and map.

use super::lower::{array_shape_of, called, need, window_attrs, Lowerer, Lowering, Site};
use super::types::{array_attr, invalid, list, unsupported, LowerError};
use crate::hlo::Opcode;

impl Lowerer<'_> {
    /// Gather and scatter; other opcodes go on to [`Self::reduction_instruction`].
    pub(super) fn indexing_instruction(&mut self, site: &mut Site) -> Lowering {
        let (instr, indent) = (site.instr, site.indent);
        let a = &instr.attrs;
        Ok(Some(match instr.opcode {
            Opcode::Gather => {
                let g = a.gather_dims.as_ref().ok_or_else(|| {
                    LowerError::Invalid("missing gather dimension numbers".into())
                })?;
                let mut fields = vec![format!("offset_dims = {}", list(&g.offset_dims))];
                if !g.collapsed_slice_dims.is_empty() {
                    fields.push(format!(
                        "collapsed_slice_dims = {}",
                        list(&g.collapsed_slice_dims)
                    ));
                }
                if !g.operand_batching_dims.is_empty() {
                    fields.push(format!(
                        "operand_batching_dims = {}",
                        list(&g.operand_batching_dims)
                    ));
                }
                if !g.start_indices_batching_dims.is_empty() {
                    fields.push(format!(
                        "start_indices_batching_dims = {}",
                        list(&g.start_indices_batching_dims)
                    ));
                }
                fields.push(format!("start_index_map = {}", list(&g.start_index_map)));
                fields.push(format!("index_vector_dim = {}", g.index_vector_dim));
                let attrs = [
                    format!(
                        "dimension_numbers = #stablehlo.gather<{}>",
                        fields.join(", ")
                    ),
                    format!("indices_are_sorted = {}", a.indices_are_sorted),
                    format!("slice_sizes = {}", array_attr(&g.slice_sizes)),
                ];
                self.emit(site, "stablehlo.gather", &[], &attrs)?
            }
            Opcode::Scatter => {
                let s = a.scatter_dims.as_ref().ok_or_else(|| {
                    LowerError::Invalid("missing scatter dimension numbers".into())
                })?;
                let f = called(a.to_apply, "to_apply")?;
                let mut fields = vec![format!(
                    "update_window_dims = {}",
                    list(&s.update_window_dims)
                )];
                if !s.inserted_window_dims.is_empty() {
                    fields.push(format!(
                        "inserted_window_dims = {}",
                        list(&s.inserted_window_dims)
                    ));
                }
                if !s.input_batching_dims.is_empty() {
                    fields.push(format!(
                        "input_batching_dims = {}",
                        list(&s.input_batching_dims)
                    ));
                }
                if !s.scatter_indices_batching_dims.is_empty() {
                    fields.push(format!(
                        "scatter_indices_batching_dims = {}",
                        list(&s.scatter_indices_batching_dims)
                    ));
                }
                fields.push(format!(
                    "scatter_dims_to_operand_dims = {}",
                    list(&s.scatter_dims_to_operand_dims)
                ));
                fields.push(format!("index_vector_dim = {}", s.index_vector_dim));
                let attrs = [
                    format!(
                        "scatter_dimension_numbers = #stablehlo.scatter<{}>",
                        fields.join(", ")
                    ),
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
        let (instr, indent) = (site.instr, site.indent);
        let a = &instr.attrs;
        Ok(Some(match instr.opcode {
            Opcode::Reduce => {
                let dims = need(&a.dimensions, "dimensions")?;
                let f = called(a.to_apply, "to_apply")?;
                let region = self.region(f, indent + 1)?;
                let attrs = [format!("dimensions = {}", array_attr(&dims))];
                self.emit(site, "stablehlo.reduce", &[region], &attrs)?
            }
            Opcode::ReduceWindow => {
                let w = a
                    .window
                    .as_ref()
                    .ok_or_else(|| LowerError::Invalid("missing window".into()))?;
                let f = called(a.to_apply, "to_apply")?;
                let region = self.region(f, indent + 1)?;
                if w.iter().any(|d| d.reversal) {
                    return unsupported("window reversal in reduce-window");
                }
                let attrs = window_attrs(w, true);
                self.emit(site, "stablehlo.reduce_window", &[region], &attrs)?
            }
            Opcode::SelectAndScatter => {
                let w = a
                    .window
                    .as_ref()
                    .ok_or_else(|| LowerError::Invalid("missing window".into()))?;
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
