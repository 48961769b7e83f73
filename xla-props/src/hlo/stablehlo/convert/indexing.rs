//! Gather, scatter, reductions, `sort` and `map`.

use super::attrs::{
    bool_attr, field_int, field_ints, ints_attr, opt_int_attr, struct_attr, window,
};
use super::converter::{Converted, Converter, OpSite};
use crate::hlo::ir::{Attrs, GatherDims, ScatterDims};
use crate::hlo::opcode::Opcode;
use crate::hlo::stablehlo::build::{err, Builder};
use crate::hlo::stablehlo::syntax::Attr;

impl Converter<'_> {
    /// Gather, scatter, reductions, `sort` and `map`; other names go on to [`Self::contraction_op`].
    pub(super) fn indexing_op(&mut self, site: &OpSite, b: &mut Builder) -> Converted {
        let (op, outers, short) = (site.op, site.outers, site.short);
        let mut a = Attrs::default();
        let pos = op.pos;
        let converted = match short {
            "gather" => {
                let ops = self.operands(op, b, outers)?;
                let f = struct_attr(op, "dimension_numbers", "gather")?;
                a.gather_dims = Some(GatherDims {
                    offset_dims: field_ints(&f, "offset_dims", pos)?,
                    collapsed_slice_dims: field_ints(&f, "collapsed_slice_dims", pos)?,
                    start_index_map: field_ints(&f, "start_index_map", pos)?,
                    index_vector_dim: field_int(&f, "index_vector_dim", pos)?.unwrap_or(0),
                    operand_batching_dims: field_ints(&f, "operand_batching_dims", pos)?,
                    start_indices_batching_dims: field_ints(
                        &f,
                        "start_indices_batching_dims",
                        pos,
                    )?,
                    slice_sizes: ints_attr(op, "slice_sizes")?,
                });
                a.indices_are_sorted = bool_attr(op, "indices_are_sorted")?;
                self.results(op, b, Opcode::Gather, ops, a)
            }
            "scatter" => {
                let ops = self.operands(op, b, outers)?;
                let f = struct_attr(op, "scatter_dimension_numbers", "scatter")?;
                a.scatter_dims = Some(ScatterDims {
                    update_window_dims: field_ints(&f, "update_window_dims", pos)?,
                    inserted_window_dims: field_ints(&f, "inserted_window_dims", pos)?,
                    scatter_dims_to_operand_dims: field_ints(
                        &f,
                        "scatter_dims_to_operand_dims",
                        pos,
                    )?,
                    index_vector_dim: field_int(&f, "index_vector_dim", pos)?.unwrap_or(0),
                    input_batching_dims: field_ints(&f, "input_batching_dims", pos)?,
                    scatter_indices_batching_dims: field_ints(
                        &f,
                        "scatter_indices_batching_dims",
                        pos,
                    )?,
                });
                a.indices_are_sorted = bool_attr(op, "indices_are_sorted")?;
                a.unique_indices = bool_attr(op, "unique_indices")?;
                a.to_apply = Some(self.region_comp(op, 0, outers, b, "scatter_fn")?);
                self.results(op, b, Opcode::Scatter, ops, a)
            }
            "reduce" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(ints_attr(op, "dimensions")?);
                a.to_apply = Some(match op.attr("applies") {
                    Some(Attr::Word(w)) => self.applies_comp(op, w, b, &ops)?,
                    _ => self.region_comp(op, 0, outers, b, "reducer")?,
                });
                self.results(op, b, Opcode::Reduce, ops, a)
            }
            "reduce_window" => {
                let ops = self.operands(op, b, outers)?;
                a.window = Some(window(op, true)?);
                a.to_apply = Some(self.region_comp(op, 0, outers, b, "window_fn")?);
                self.results(op, b, Opcode::ReduceWindow, ops, a)
            }
            "select_and_scatter" => {
                let ops = self.operands(op, b, outers)?;
                a.window = Some(window(op, false)?);
                a.select = Some(self.region_comp(op, 0, outers, b, "select_fn")?);
                a.scatter = Some(self.region_comp(op, 1, outers, b, "scatter_fn")?);
                self.results(op, b, Opcode::SelectAndScatter, ops, a)
            }
            "sort" => {
                let ops = self.operands(op, b, outers)?;
                let rank = match ops.first() {
                    Some(&x) => b.array(x, pos)?.0.len() as i64,
                    None => return err(pos, "sort needs an operand"),
                };
                let d = opt_int_attr(op, "dimension")?.unwrap_or(-1);
                a.dimensions = Some(vec![if d < 0 { d + rank } else { d }]);
                a.is_stable = bool_attr(op, "is_stable")?;
                a.to_apply = Some(self.region_comp(op, 0, outers, b, "comparator")?);
                self.results(op, b, Opcode::Sort, ops, a)
            }
            "map" => {
                let ops = self.operands(op, b, outers)?;
                a.dimensions = Some(ints_attr(op, "dimensions")?);
                a.to_apply = Some(self.region_comp(op, 0, outers, b, "map_fn")?);
                self.results(op, b, Opcode::Map, ops, a)
            }
            _ => return Ok(None),
        };
        converted.map(Some)
    }
}
