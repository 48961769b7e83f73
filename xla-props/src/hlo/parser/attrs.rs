//! Typed attributes: the ones the IR interprets (slices, padding, windows,
//! dimension labels, dot/gather/scatter dimensions, enums, called computations).

use super::error::{fail, Failure, PResult};
use super::lexer::Parser;
use super::pending::{NameRef, Slot};
use crate::hlo::ir::{
    Attrs, ComparisonDirection, ComparisonType, ConvDims, FftType, FusionKind, PadDim,
    RngAlgorithm, SliceDim, TransposeA, TriangularSolveOptions, WindowDim,
};
use crate::hlo::opcode::Opcode;

impl<'a> Parser<'a> {
    pub(super) fn typed_attr(
        &mut self,
        op: Opcode,
        attr: &str,
        a: &mut Attrs,
        refs: &mut Vec<(Slot, NameRef)>,
    ) -> PResult<()> {
        // a rank-0 pad prints as `padding=` with nothing after it
        if attr == "padding" && !matches!(self.peek(), Some(b'-' | b'0'..=b'9')) {
            a.padding = Some(Vec::new());
            return Ok(());
        }
        self.skip_ws()?;
        let at = self.pos;
        match attr {
            "index" => a.index = Some(self.i64_lit("an index")?),
            "iota_dimension" => a.iota_dimension = Some(self.i64_lit("a dimension")?),
            "dimensions" => a.dimensions = Some(self.int_list()?),
            "dynamic_slice_sizes" => a.dynamic_slice_sizes = Some(self.int_list()?),
            "slice" => a.slice = Some(self.slice_attr()?),
            "padding" => a.padding = Some(self.padding_attr()?),
            "window" => a.window = Some(self.window_attr()?),
            "dim_labels" => a.conv_dims = Some(self.dim_labels()?),
            "feature_group_count" => a.feature_group_count = Some(self.i64_lit("a count")?),
            "batch_group_count" => a.batch_group_count = Some(self.i64_lit("a count")?),
            "operand_precision" => {
                let v = self.braced_list(|p| Ok(p.ident("a precision")?.0.to_string()))?;
                a.precision = Some(v);
            }
            "index_vector_dim" => {
                let v = self.i64_lit("a dimension")?;
                if op == Opcode::Scatter {
                    scatter(a).index_vector_dim = v;
                } else {
                    gather(a).index_vector_dim = v;
                }
            }
            _ => match dims_list(a, attr) {
                Some(list) => *list = self.int_list()?,
                None => return self.flag_or_computation_attr(op, attr, at, a, refs),
            },
        }
        Ok(())
    }

    /// The rest of [`Self::typed_attr`]: flags, enums, called computations, custom-call,
    /// fft, triangular-solve and rng attributes; `at` is where the value starts.
    pub(super) fn flag_or_computation_attr(
        &mut self,
        op: Opcode,
        attr: &str,
        at: usize,
        a: &mut Attrs,
        refs: &mut Vec<(Slot, NameRef)>,
    ) -> PResult<()> {
        match attr {
            "indices_are_sorted" => a.indices_are_sorted = self.bool_value()?,
            "unique_indices" => a.unique_indices = self.bool_value()?,
            "is_stable" => a.is_stable = self.bool_value()?,
            "direction" => {
                let what = ("a comparison direction", "comparison direction", "");
                a.direction = Some(self.named(what, ComparisonDirection::from_name)?.0);
            }
            "type" => {
                let what = ("a comparison type", "comparison type", "");
                let (t, at) = self.named(what, ComparisonType::from_name)?;
                set_comparison_type(a, t, at)?;
            }
            // `order=TOTAL` (what jnp.sort's comparators carry): NaN and -0
            // ordered by the total order, the meaning of `type=TOTALORDER`;
            // `PARTIAL` is the IEEE order of `type=FLOAT`
            "order" => {
                let what = (
                    "a comparison order",
                    "comparison order",
                    " (TOTAL or PARTIAL)",
                );
                let (t, at) = self.named(what, |w| match w {
                    "TOTAL" => Some(ComparisonType::TotalOrder),
                    "PARTIAL" => Some(ComparisonType::Float),
                    _ => None,
                })?;
                set_comparison_type(a, t, at)?;
            }
            "kind" => {
                let what = ("a fusion kind", "fusion kind", "");
                a.fusion_kind = Some(self.named(what, FusionKind::from_name)?.0);
            }
            "exponent_bits" => a.exponent_bits = Some(self.i64_lit("a bit count")?),
            "mantissa_bits" => a.mantissa_bits = Some(self.i64_lit("a bit count")?),
            "calls" | "called_computations" => {
                for n in self.one_or_more_names()? {
                    refs.push((Slot::Calls, n));
                }
            }
            "branch_computations" => {
                for n in self.name_list()? {
                    refs.push((Slot::Branches, n));
                }
            }
            "to_apply" => refs.push((Slot::ToApply, self.comp_ref()?)),
            "condition" => refs.push((Slot::Condition, self.comp_ref()?)),
            "body" => refs.push((Slot::Body, self.comp_ref()?)),
            "true_computation" => refs.push((Slot::TrueBranch, self.comp_ref()?)),
            "false_computation" => refs.push((Slot::FalseBranch, self.comp_ref()?)),
            "select" => refs.push((Slot::Select, self.comp_ref()?)),
            "scatter" => refs.push((Slot::Scatter, self.comp_ref()?)),
            "custom_call_target" => {
                if self.peek() != Some(b'"') {
                    return fail(at, format!("expected a string, found {}", self.found()));
                }
                a.custom_call_target = Some(self.string()?.to_string());
            }
            _ => return self.library_op_attr(op, attr, at, a),
        }
        Ok(())
    }

    /// The attributes of fft, triangular-solve and rng-bit-generator.
    fn library_op_attr(&mut self, op: Opcode, attr: &str, at: usize, a: &mut Attrs) -> PResult<()> {
        match attr {
            "fft_type" => {
                let what = ("an fft type", "fft type", " (FFT, IFFT, RFFT or IRFFT)");
                a.fft_type = Some(self.named(what, FftType::from_name)?.0);
            }
            "fft_length" => a.fft_length = Some(self.int_list()?),
            "left_side" => triangular(a).left_side = self.bool_value()?,
            "lower" => triangular(a).lower = self.bool_value()?,
            "unit_diagonal" => triangular(a).unit_diagonal = self.bool_value()?,
            "transpose_a" => {
                let choices = " (NO_TRANSPOSE, TRANSPOSE or ADJOINT)";
                let what = ("a transpose", "transpose_a", choices);
                triangular(a).transpose_a = Some(self.named(what, TransposeA::from_name)?.0);
            }
            "algorithm" if op == Opcode::RngBitGenerator => {
                let choices = " (rng_default, rng_three_fry or rng_philox)";
                let what = ("an rng algorithm", "rng algorithm", choices);
                a.rng_algorithm = Some(self.named(what, RngAlgorithm::from_name)?.0);
            }
            _ => return fail(at, format!("attribute `{attr}` is not handled")),
        }
        Ok(())
    }

    /// An identifier that `from_name` reads, and where it starts. `what`:
    /// how a parse error names the value expected, how an unknown one is
    /// named (`unknown {kind} `w`{choices}`), and the choices, if listed.
    fn named<T>(
        &mut self,
        (what, kind, choices): (&str, &str, &str),
        from_name: impl Fn(&str) -> Option<T>,
    ) -> PResult<(T, usize)> {
        let (w, at) = self.ident(what)?;
        match from_name(w) {
            Some(t) => Ok((t, at)),
            None => fail(at, format!("unknown {kind} `{w}`{choices}")),
        }
    }

    /// `{[a:b], [a:b:s]}`.
    pub(super) fn slice_attr(&mut self) -> PResult<Vec<SliceDim>> {
        self.braced_list(|p| {
            p.expect(b'[')?;
            let start = p.i64_lit("a slice start")?;
            p.expect(b':')?;
            let limit = p.i64_lit("a slice limit")?;
            let stride = if p.eat(b':')? {
                p.i64_lit("a slice stride")?
            } else {
                1
            };
            p.expect(b']')?;
            Ok(SliceDim {
                start,
                limit,
                stride,
            })
        })
    }

    /// `lo_hi[_interior]` groups separated by `x`, directly adjacent.
    pub(super) fn padding_attr(&mut self) -> PResult<Vec<PadDim>> {
        self.skip_ws()?;
        self.x_groups(|p, parts| {
            let (low, high, interior) = match parts[..] {
                [l, h] => (l, h, 0),
                [l, h, i] => (l, h, i),
                _ => return fail(p.pos, "expected `low_high` or `low_high_interior`"),
            };
            Ok(PadDim {
                low,
                high,
                interior,
            })
        })
    }

    /// Groups of `_`-joined signed integers separated by `x`, all directly
    /// adjacent (`0_1x1_1`); `each` takes a group just read.
    fn x_groups<T>(
        &mut self,
        mut each: impl FnMut(&mut Self, Vec<i64>) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut out = Vec::new();
        loop {
            let mut group = vec![self.signed_adjacent()?];
            while self.peek() == Some(b'_') {
                self.pos += 1;
                group.push(self.signed_adjacent()?);
            }
            out.push(each(self, group)?);
            if self.peek() == Some(b'x') {
                self.pos += 1;
                continue;
            }
            return Ok(out);
        }
    }

    /// A signed integer with no whitespace before it.
    pub(super) fn signed_adjacent(&mut self) -> PResult<i64> {
        match self.peek() {
            Some(b'-' | b'0'..=b'9') => self.i64_lit("an integer"),
            _ => fail(
                self.pos,
                format!("expected an integer, found {}", self.found()),
            ),
        }
    }

    /// `{size=3x3 stride=2x1 pad=0_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x1}`.
    pub(super) fn window_attr(&mut self) -> PResult<Vec<WindowDim>> {
        self.expect(b'{')?;
        let open = self.pos;
        let mut fields: Vec<(&'a str, usize, Vec<Vec<i64>>)> = Vec::new();
        loop {
            if self.eat(b'}')? {
                break;
            }
            let (key, at) = self.ident("a window field")?;
            if !matches!(
                key,
                "size" | "stride" | "pad" | "lhs_dilate" | "rhs_dilate" | "rhs_reversal"
            ) {
                return fail(at, format!("unknown window field `{key}`"));
            }
            if fields.iter().any(|f| f.0 == key) {
                return fail(at, format!("duplicate window field `{key}`"));
            }
            self.expect(b'=')?;
            self.skip_ws()?;
            let values = self.x_groups(|_, group| Ok(group))?;
            fields.push((key, at, values));
        }
        let Some(rank) = fields.first().map(|f| f.2.len()) else {
            return Ok(Vec::new());
        };
        let Some(size) = fields.iter().find(|f| f.0 == "size") else {
            return fail(open, "window has no `size`");
        };
        let mut dims = Vec::with_capacity(rank);
        for g in &size.2 {
            match g[..] {
                [s] => dims.push(WindowDim::new(s)),
                _ => return fail(size.1, "window `size` takes one number per dimension"),
            }
        }
        for (key, at, values) in &fields {
            if values.len() != rank {
                return fail(
                    *at,
                    format!(
                        "window field `{key}` has {} dimensions, expected {rank}",
                        values.len()
                    ),
                );
            }
            for (d, g) in dims.iter_mut().zip(values) {
                match (*key, &g[..]) {
                    ("size", _) => {}
                    ("pad", [lo, hi]) => {
                        d.pad_low = *lo;
                        d.pad_high = *hi;
                    }
                    ("stride", [v]) => d.stride = *v,
                    ("lhs_dilate", [v]) => d.base_dilation = *v,
                    ("rhs_dilate", [v]) => d.window_dilation = *v,
                    ("rhs_reversal", [v @ (0 | 1)]) => d.reversal = *v == 1,
                    _ => return fail(*at, format!("malformed window field `{key}`")),
                }
            }
        }
        Ok(dims)
    }

    /// `b01f_01io->b01f`.
    pub(super) fn dim_labels(&mut self) -> PResult<ConvDims> {
        self.skip_ws()?;
        let at = self.pos;
        let input = self.raw_ident();
        let (lhs, kernel) = match input.split_once('_') {
            Some(p) => p,
            None => return fail(at, "expected dim_labels like `b01f_01io->b01f`"),
        };
        if !self.b[self.pos..].starts_with(b"->") {
            return fail(self.pos, format!("expected `->`, found {}", self.found()));
        }
        self.pos += 2;
        let out_at = self.pos;
        let output = self.raw_ident();
        let (ib, if_, is) = labels(lhs, b'b', b'f').ok_or_else(|| Failure {
            pos: at,
            msg: format!("malformed input dim labels `{lhs}`"),
        })?;
        let (ki, ko, ks) = labels(kernel, b'i', b'o').ok_or_else(|| Failure {
            pos: at,
            msg: format!("malformed kernel dim labels `{kernel}`"),
        })?;
        let (ob, of, os) = labels(output, b'b', b'f').ok_or_else(|| Failure {
            pos: out_at,
            msg: format!("malformed output dim labels `{output}`"),
        })?;
        if is.len() != ks.len() || is.len() != os.len() {
            return fail(
                at,
                "dim_labels have different numbers of spatial dimensions",
            );
        }
        Ok(ConvDims {
            input_batch: ib,
            input_feature: if_,
            input_spatial: is,
            kernel_input_feature: ki,
            kernel_output_feature: ko,
            kernel_spatial: ks,
            output_batch: ob,
            output_feature: of,
            output_spatial: os,
        })
    }

    // ------------------------------------------------------------- constants
}

/// The dot, gather or scatter dimension list that `attr` sets (its
/// dimension numbers made on first use), or `None` for another attribute.
fn dims_list<'x>(a: &'x mut Attrs, attr: &str) -> Option<&'x mut Vec<i64>> {
    Some(match attr {
        "lhs_batch_dims" => &mut dot(a).lhs_batch,
        "lhs_contracting_dims" => &mut dot(a).lhs_contracting,
        "rhs_batch_dims" => &mut dot(a).rhs_batch,
        "rhs_contracting_dims" => &mut dot(a).rhs_contracting,
        "offset_dims" => &mut gather(a).offset_dims,
        "collapsed_slice_dims" => &mut gather(a).collapsed_slice_dims,
        "start_index_map" => &mut gather(a).start_index_map,
        "operand_batching_dims" => &mut gather(a).operand_batching_dims,
        "start_indices_batching_dims" => &mut gather(a).start_indices_batching_dims,
        "slice_sizes" => &mut gather(a).slice_sizes,
        "update_window_dims" => &mut scatter(a).update_window_dims,
        "inserted_window_dims" => &mut scatter(a).inserted_window_dims,
        "scatter_dims_to_operand_dims" => &mut scatter(a).scatter_dims_to_operand_dims,
        "input_batching_dims" => &mut scatter(a).input_batching_dims,
        "scatter_indices_batching_dims" => &mut scatter(a).scatter_indices_batching_dims,
        _ => return None,
    })
}

pub(super) fn dot(a: &mut Attrs) -> &mut crate::hlo::ir::DotDims {
    a.dot_dims.get_or_insert_with(Default::default)
}

pub(super) fn gather(a: &mut Attrs) -> &mut crate::hlo::ir::GatherDims {
    a.gather_dims.get_or_insert_with(Default::default)
}

pub(super) fn scatter(a: &mut Attrs) -> &mut crate::hlo::ir::ScatterDims {
    a.scatter_dims.get_or_insert_with(Default::default)
}

pub(super) fn triangular(a: &mut Attrs) -> &mut TriangularSolveOptions {
    a.triangular_solve.get_or_insert_with(Default::default)
}

/// Sets a compare's type from `type=` or `order=`; both may be given, but
/// must agree (`type=FLOAT, order=TOTAL` is an error).
fn set_comparison_type(a: &mut Attrs, t: ComparisonType, at: usize) -> PResult<()> {
    match a.comparison_type {
        Some(old) if old != t => fail(
            at,
            format!(
                "comparison type `{}` conflicts with `{}` given before",
                t.name(),
                old.name()
            ),
        ),
        _ => {
            a.comparison_type = Some(t);
            Ok(())
        }
    }
}

/// Attributes with a typed field in [`Attrs`]; parsed typed only when the
/// opcode table lists them for the opcode, verbatim otherwise.
pub(super) const TYPED_ATTRS: &[&str] = &[
    "index",
    "iota_dimension",
    "dimensions",
    "dynamic_slice_sizes",
    "slice",
    "padding",
    "window",
    "dim_labels",
    "feature_group_count",
    "batch_group_count",
    "lhs_batch_dims",
    "lhs_contracting_dims",
    "rhs_batch_dims",
    "rhs_contracting_dims",
    "operand_precision",
    "offset_dims",
    "collapsed_slice_dims",
    "start_index_map",
    "operand_batching_dims",
    "start_indices_batching_dims",
    "slice_sizes",
    "index_vector_dim",
    "update_window_dims",
    "inserted_window_dims",
    "scatter_dims_to_operand_dims",
    "input_batching_dims",
    "scatter_indices_batching_dims",
    "indices_are_sorted",
    "unique_indices",
    "is_stable",
    "direction",
    "type",
    "order",
    "kind",
    "exponent_bits",
    "mantissa_bits",
    "calls",
    "called_computations",
    "branch_computations",
    "to_apply",
    "condition",
    "body",
    "true_computation",
    "false_computation",
    "select",
    "scatter",
    "custom_call_target",
];

/// Attributes with a typed field for one opcode only: the same name is
/// verbatim on the others that have it (cholesky's `lower`, dot's `algorithm`).
pub(super) const OP_TYPED_ATTRS: &[(Opcode, &[&str])] = &[
    (Opcode::Fft, &["fft_type", "fft_length"]),
    (
        Opcode::TriangularSolve,
        &["left_side", "lower", "unit_diagonal", "transpose_a"],
    ),
    (Opcode::RngBitGenerator, &["algorithm"]),
];

/// True when `attr` of `op` is parsed into a typed [`Attrs`] field.
pub(crate) fn is_typed(op: Opcode, attr: &str) -> bool {
    (TYPED_ATTRS.contains(&attr) && op.attributes().contains(&attr))
        || OP_TYPED_ATTRS
            .iter()
            .any(|(o, attrs)| *o == op && attrs.contains(&attr))
}

/// Positions of the two named letters and the spatial digits of one dim-label group.
pub(super) fn labels(s: &str, a: u8, b: u8) -> Option<(i64, i64, Vec<i64>)> {
    let n = s.len();
    if !(2..=12).contains(&n) {
        return None;
    }
    let (mut pa, mut pb) = (None, None);
    let mut spatial = vec![None; n - 2];
    for (k, c) in s.bytes().enumerate() {
        let k = k as i64;
        if c == a && pa.is_none() {
            pa = Some(k);
        } else if c == b && pb.is_none() {
            pb = Some(k);
        } else if c.is_ascii_digit() {
            let slot = spatial.get_mut(usize::from(c - b'0'))?;
            if slot.is_some() {
                return None;
            }
            *slot = Some(k);
        } else {
            return None;
        }
    }
    let spatial: Option<Vec<i64>> = spatial.into_iter().collect();
    Some((pa?, pb?, spatial?))
}
