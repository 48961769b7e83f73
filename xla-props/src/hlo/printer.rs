//! The HLO text printer: a [`Module`] as canonical HLO text that
//! [`parse_module`](super::parse_module) reads back to an equal module.
//!
//! Canonical means: no `%` prefixes, no computation signatures, operands by
//! name only, typed attributes in one fixed order followed by the verbatim
//! ones in their source order, floats in their shortest round-trip form.

use std::fmt::{self, Write};

use super::dtype::ElementType;
use super::ir::{Attrs, Computation, ConstantData, Instruction, Module, PadDim, WindowDim};
use super::opcode::Opcode;
use super::shape::Shape;

/// The canonical HLO text of `module`.
///
/// ```
/// use xla_props::hlo::{parse_module, print_module};
/// let m = parse_module(
///     "HloModule m\nENTRY %e {\n  %p = f32[] parameter(0)\n  ROOT %n = f32[] negate(f32[] %p)\n}\n",
/// )
/// .unwrap();
/// let text = print_module(&m);
/// assert_eq!(
///     text,
///     "HloModule m\n\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p)\n}\n"
/// );
/// assert_eq!(parse_module(&text).unwrap(), m);
/// ```
pub fn print_module(module: &Module) -> String {
    module.to_string()
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HloModule {}", self.name)?;
        for (k, v) in &self.attrs {
            write!(f, ", {k}={v}")?;
        }
        f.write_str("\n")?;
        for (k, c) in self.computations.iter().enumerate() {
            f.write_str("\n")?;
            if k == self.entry.index() {
                f.write_str("ENTRY ")?;
            }
            write_computation(f, self, c)?;
        }
        Ok(())
    }
}

fn write_computation(f: &mut fmt::Formatter<'_>, m: &Module, c: &Computation) -> fmt::Result {
    writeln!(f, "{} {{", c.name)?;
    for (k, i) in c.instructions.iter().enumerate() {
        f.write_str("  ")?;
        if k == c.root.index() {
            f.write_str("ROOT ")?;
        }
        write_instruction(f, m, c, i)?;
        f.write_str("\n")?;
    }
    f.write_str("}")?;
    for (k, v) in &c.other {
        write!(f, ", {k}={v}")?;
    }
    f.write_str("\n")
}

fn write_instruction(
    f: &mut fmt::Formatter<'_>,
    m: &Module,
    c: &Computation,
    i: &Instruction,
) -> fmt::Result {
    write!(f, "{} = {} {}(", i.name, i.shape, i.opcode)?;
    let a = &i.attrs;
    match i.opcode {
        Opcode::Parameter => write!(f, "{}", a.parameter_number.unwrap_or(0))?,
        Opcode::Constant => {
            if let Some(data) = &a.constant {
                write_constant(f, &i.shape, data)?;
            }
        }
        _ => {
            for (k, o) in i.operands.iter().enumerate() {
                if k > 0 {
                    f.write_str(", ")?;
                }
                match c.instructions.get(o.index()) {
                    Some(op) => f.write_str(&op.name)?,
                    None => write!(f, "<invalid operand {}>", o.0)?,
                }
            }
        }
    }
    f.write_str(")")?;
    write_attrs(f, m, i.opcode, a)
}

/// The attributes of `i` as the printer writes them after its operands
/// (`, window={size=1x1}, dim_labels=...`), for a model that repeats the
/// instruction with other operands.
pub fn attrs_text(m: &Module, i: &Instruction) -> String {
    struct Attrs<'a>(&'a Module, &'a Instruction);
    impl fmt::Display for Attrs<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write_attrs(f, self.0, self.1.opcode, &self.1.attrs)
        }
    }
    Attrs(m, i).to_string()
}

/// The name of a called computation (a placeholder for a dangling id).
fn comp_name(m: &Module, id: super::ir::CompId) -> String {
    m.computations.get(id.index()).map_or_else(
        || format!("<invalid computation {}>", id.0),
        |c| c.name.clone(),
    )
}

fn ints(v: &[i64]) -> String {
    let mut s = String::from("{");
    for (k, x) in v.iter().enumerate() {
        if k > 0 {
            s.push(',');
        }
        let _ = write!(s, "{x}");
    }
    s.push('}');
    s
}

fn write_attrs(f: &mut fmt::Formatter<'_>, m: &Module, op: Opcode, a: &Attrs) -> fmt::Result {
    write_array_attrs(f, a)?;
    write_dims_attrs(f, a)?;
    write_called_attrs(f, m, op, a)
}

/// Index, iota, slice, padding, window and convolution attributes.
fn write_array_attrs(f: &mut fmt::Formatter<'_>, a: &Attrs) -> fmt::Result {
    if let Some(v) = a.index {
        write!(f, ", index={v}")?;
    }
    if let Some(v) = a.iota_dimension {
        write!(f, ", iota_dimension={v}")?;
    }
    if let Some(v) = &a.slice {
        f.write_str(", slice={")?;
        for (k, s) in v.iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            if s.stride == 1 {
                write!(f, "[{}:{}]", s.start, s.limit)?;
            } else {
                write!(f, "[{}:{}:{}]", s.start, s.limit, s.stride)?;
            }
        }
        f.write_str("}")?;
    }
    if let Some(v) = &a.dynamic_slice_sizes {
        write!(f, ", dynamic_slice_sizes={}", ints(v))?;
    }
    if let Some(v) = &a.padding {
        write!(f, ", padding={}", padding(v))?;
    }
    if let Some(v) = &a.window {
        write!(f, ", window={}", window(v))?;
    }
    if let Some(c) = &a.conv_dims {
        let group = |n: usize, a: (i64, char), b: (i64, char), sp: &[i64]| {
            let mut s = vec!['?'; n];
            for (pos, ch) in [a, b] {
                if let Some(x) = usize::try_from(pos).ok().and_then(|p| s.get_mut(p)) {
                    *x = ch;
                }
            }
            for (k, &pos) in sp.iter().enumerate() {
                let ch = char::from_digit(k as u32 % 10, 10).unwrap_or('?');
                if let Some(x) = usize::try_from(pos).ok().and_then(|p| s.get_mut(p)) {
                    *x = ch;
                }
            }
            s.into_iter().collect::<String>()
        };
        write!(
            f,
            ", dim_labels={}_{}->{}",
            group(
                c.input_spatial.len() + 2,
                (c.input_batch, 'b'),
                (c.input_feature, 'f'),
                &c.input_spatial
            ),
            group(
                c.kernel_spatial.len() + 2,
                (c.kernel_input_feature, 'i'),
                (c.kernel_output_feature, 'o'),
                &c.kernel_spatial
            ),
            group(
                c.output_spatial.len() + 2,
                (c.output_batch, 'b'),
                (c.output_feature, 'f'),
                &c.output_spatial
            ),
        )?;
    }
    if let Some(v) = a.feature_group_count {
        write!(f, ", feature_group_count={v}")?;
    }
    if let Some(v) = a.batch_group_count {
        write!(f, ", batch_group_count={v}")?;
    }
    Ok(())
}

/// `, key={...}` for each of `always`, then for each of `optional` that is
/// not empty.
fn write_int_lists(
    f: &mut fmt::Formatter<'_>,
    always: &[(&str, &Vec<i64>)],
    optional: &[(&str, &Vec<i64>)],
) -> fmt::Result {
    let optional = optional.iter().filter(|(_, v)| !v.is_empty());
    for (key, v) in always.iter().chain(optional) {
        write!(f, ", {key}={}", ints(v))?;
    }
    Ok(())
}

/// Dot, gather and scatter dimensions, sort/compare/precision flags and the fusion kind.
fn write_dims_attrs(f: &mut fmt::Formatter<'_>, a: &Attrs) -> fmt::Result {
    if let Some(d) = &a.dot_dims {
        let optional = [
            ("lhs_batch_dims", &d.lhs_batch),
            ("lhs_contracting_dims", &d.lhs_contracting),
            ("rhs_batch_dims", &d.rhs_batch),
            ("rhs_contracting_dims", &d.rhs_contracting),
        ];
        write_int_lists(f, &[], &optional)?;
    }
    if let Some(g) = &a.gather_dims {
        let always = [
            ("offset_dims", &g.offset_dims),
            ("collapsed_slice_dims", &g.collapsed_slice_dims),
            ("start_index_map", &g.start_index_map),
        ];
        let optional = [
            ("operand_batching_dims", &g.operand_batching_dims),
            (
                "start_indices_batching_dims",
                &g.start_indices_batching_dims,
            ),
        ];
        write_int_lists(f, &always, &optional)?;
        write!(
            f,
            ", index_vector_dim={}, slice_sizes={}",
            g.index_vector_dim,
            ints(&g.slice_sizes)
        )?;
    }
    if let Some(s) = &a.scatter_dims {
        let always = [
            ("update_window_dims", &s.update_window_dims),
            ("inserted_window_dims", &s.inserted_window_dims),
            (
                "scatter_dims_to_operand_dims",
                &s.scatter_dims_to_operand_dims,
            ),
        ];
        let optional = [
            ("input_batching_dims", &s.input_batching_dims),
            (
                "scatter_indices_batching_dims",
                &s.scatter_indices_batching_dims,
            ),
        ];
        write_int_lists(f, &always, &optional)?;
        write!(f, ", index_vector_dim={}", s.index_vector_dim)?;
    }
    if let Some(v) = &a.dimensions {
        write!(f, ", dimensions={}", ints(v))?;
    }
    if let Some(v) = &a.precision {
        write!(f, ", operand_precision={{{}}}", v.join(","))?;
    }
    if a.indices_are_sorted {
        f.write_str(", indices_are_sorted=true")?;
    }
    if a.unique_indices {
        f.write_str(", unique_indices=true")?;
    }
    if a.is_stable {
        f.write_str(", is_stable=true")?;
    }
    if let Some(v) = a.direction {
        write!(f, ", direction={}", v.name())?;
    }
    if let Some(v) = a.comparison_type {
        write!(f, ", type={}", v.name())?;
    }
    if let Some(v) = a.exponent_bits {
        write!(f, ", exponent_bits={v}")?;
    }
    if let Some(v) = a.mantissa_bits {
        write!(f, ", mantissa_bits={v}")?;
    }
    if let Some(v) = a.fusion_kind {
        write!(f, ", kind={}", v.name())?;
    }
    Ok(())
}

/// Called computations, custom-call, fft, triangular-solve and rng attributes, then the
/// attributes carried as text.
fn write_called_attrs(
    f: &mut fmt::Formatter<'_>,
    m: &Module,
    op: Opcode,
    a: &Attrs,
) -> fmt::Result {
    let name = |id| comp_name(m, id);
    if !a.calls.is_empty() {
        let names: Vec<String> = a.calls.iter().map(|&c| name(c)).collect();
        if op == Opcode::CustomCall {
            write!(f, ", called_computations={{{}}}", names.join(", "))?;
        } else if let [one] = &names[..] {
            write!(f, ", calls={one}")?;
        } else {
            write!(f, ", calls={{{}}}", names.join(", "))?;
        }
    }
    if let Some(c) = a.to_apply {
        write!(f, ", to_apply={}", name(c))?;
    }
    if let Some(c) = a.condition {
        write!(f, ", condition={}", name(c))?;
    }
    if let Some(c) = a.body {
        write!(f, ", body={}", name(c))?;
    }
    match &a.branch_computations[..] {
        [] => {}
        [t, fl] if a.pred_branches => write!(
            f,
            ", true_computation={}, false_computation={}",
            name(*t),
            name(*fl)
        )?,
        bs => {
            let names: Vec<String> = bs.iter().map(|&c| name(c)).collect();
            write!(f, ", branch_computations={{{}}}", names.join(", "))?;
        }
    }
    if let Some(c) = a.select {
        write!(f, ", select={}", name(c))?;
    }
    if let Some(c) = a.scatter {
        write!(f, ", scatter={}", name(c))?;
    }
    if let Some(t) = &a.custom_call_target {
        write!(f, ", custom_call_target=\"{t}\"")?;
    }
    if let Some(t) = a.fft_type {
        write!(f, ", fft_type={}", t.name())?;
    }
    if let Some(v) = &a.fft_length {
        write!(f, ", fft_length={}", ints(v))?;
    }
    if let Some(t) = &a.triangular_solve {
        // as XLA prints them: the flags only when set, then transpose_a
        for (key, set) in [
            ("left_side", t.left_side),
            ("lower", t.lower),
            ("unit_diagonal", t.unit_diagonal),
        ] {
            if set {
                write!(f, ", {key}=true")?;
            }
        }
        if let Some(x) = t.transpose_a {
            write!(f, ", transpose_a={}", x.name())?;
        }
    }
    if let Some(r) = a.rng_algorithm {
        write!(f, ", algorithm={}", r.name())?;
    }
    for (k, v) in &a.other {
        write!(f, ", {k}={v}")?;
    }
    Ok(())
}

fn padding(v: &[PadDim]) -> String {
    let interior = v.iter().any(|p| p.interior != 0);
    let parts: Vec<String> = v
        .iter()
        .map(|p| {
            if interior {
                format!("{}_{}_{}", p.low, p.high, p.interior)
            } else {
                format!("{}_{}", p.low, p.high)
            }
        })
        .collect();
    parts.join("x")
}

fn window(v: &[WindowDim]) -> String {
    let join = |f: &dyn Fn(&WindowDim) -> String| v.iter().map(f).collect::<Vec<_>>().join("x");
    let mut fields = Vec::new();
    if !v.is_empty() {
        fields.push(format!("size={}", join(&|d| d.size.to_string())));
    }
    if v.iter().any(|d| d.stride != 1) {
        fields.push(format!("stride={}", join(&|d| d.stride.to_string())));
    }
    if v.iter().any(|d| d.pad_low != 0 || d.pad_high != 0) {
        fields.push(format!(
            "pad={}",
            join(&|d| format!("{}_{}", d.pad_low, d.pad_high))
        ));
    }
    if v.iter().any(|d| d.base_dilation != 1) {
        fields.push(format!(
            "lhs_dilate={}",
            join(&|d| d.base_dilation.to_string())
        ));
    }
    if v.iter().any(|d| d.window_dilation != 1) {
        fields.push(format!(
            "rhs_dilate={}",
            join(&|d| d.window_dilation.to_string())
        ));
    }
    if v.iter().any(|d| d.reversal) {
        fields.push(format!(
            "rhs_reversal={}",
            join(&|d| u8::from(d.reversal).to_string())
        ));
    }
    format!("{{{}}}", fields.join(" "))
}

/// A float in a form that parses back to the same bits.
pub(crate) fn float_text(x: f64) -> String {
    if x.is_nan() {
        if x.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else if x.is_infinite() {
        if x < 0.0 { "-inf" } else { "inf" }.to_string()
    } else {
        // Debug is the shortest round-trip form, with an exponent when long
        let s = format!("{x:?}");
        s.strip_suffix(".0").map_or(s.clone(), str::to_string)
    }
}

/// The shortest text for `x` that reads back as the same value of type `t`
/// (for f32, f16, bf16, f8 values the shortest decimal that rounds to the
/// same value in that type; f64 and other types as [`float_text`]).
pub(crate) fn float_text_in(x: f64, t: ElementType) -> String {
    let Some(fmt) = t.float_format().filter(|_| t != ElementType::F64) else {
        return float_text(x);
    };
    if !x.is_finite() || x == 0.0 {
        return float_text(x);
    }
    let bits = super::float_bits::round_to_bits(x, &fmt);
    if super::float_bits::bits_to_f64(bits, &fmt).to_bits() != x.to_bits() {
        return float_text(x); // not a value of the type: written as it is
    }
    for digits in 1..17 {
        let s = format!("{x:.*e}", digits - 1);
        if let Ok(y) = s.parse::<f64>() {
            if super::float_bits::round_to_bits(y, &fmt) == bits {
                return float_text(y);
            }
        }
    }
    float_text(x)
}

fn write_constant(f: &mut fmt::Formatter<'_>, shape: &Shape, data: &ConstantData) -> fmt::Result {
    match (shape, data) {
        (Shape::Tuple(elems), ConstantData::Tuple(values)) => {
            f.write_str("(")?;
            for (k, (s, v)) in elems.iter().zip(values).enumerate() {
                if k > 0 {
                    f.write_str(", ")?;
                }
                // array elements carry their shape, as XLA prints them; a
                // nested tuple's shape is left out (the parser knows it, and
                // it would double the nesting)
                if !s.is_tuple() {
                    write!(f, "{s} ")?;
                }
                write_constant(f, s, v)?;
            }
            f.write_str(")")
        }
        (Shape::Array(a), _) => {
            let items: Vec<String> = match data {
                ConstantData::Pred(v) => v.iter().map(|b| b.to_string()).collect(),
                ConstantData::Int(v) => v.iter().map(|x| x.to_string()).collect(),
                ConstantData::Float(v) => v.iter().map(|&x| float_text_in(x, a.dtype)).collect(),
                ConstantData::Complex(v) => v
                    .iter()
                    .map(|&(r, i)| format!("({}, {})", float_text(r), float_text(i)))
                    .collect(),
                ConstantData::Tuple(_) => Vec::new(),
            };
            if a.dims.is_empty() {
                return f.write_str(items.first().map_or("0", String::as_str));
            }
            let fits = a.element_count() == Some(items.len() as u64);
            if !fits {
                // not a well-formed module: print the elements flat
                return write!(f, "{{{}}}", items.join(", "));
            }
            write_nested(f, &a.dims, &items)
        }
        // a shape/data mismatch: print something the parser will reject
        _ => f.write_str("<mismatched constant>"),
    }
}

/// `items` (row-major, exactly the shape's element count) as nested braces.
fn write_nested(f: &mut fmt::Formatter<'_>, dims: &[i64], items: &[String]) -> fmt::Result {
    let Some((&d, rest)) = dims.split_first() else {
        return f.write_str(items.first().map_or("0", String::as_str));
    };
    f.write_str("{")?;
    if rest.is_empty() {
        f.write_str(&items.join(", "))?;
    } else {
        let d = usize::try_from(d).unwrap_or(0);
        let chunk = items.len().checked_div(d).unwrap_or(0);
        for k in 0..d {
            if k > 0 {
                f.write_str(", ")?;
            }
            let part = items.get(k * chunk..(k + 1) * chunk).unwrap_or(&[]);
            write_nested(f, rest, part)?;
        }
    }
    f.write_str("}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_round_trip() {
        for x in [
            0.0,
            -0.0,
            1.0,
            -1.5,
            0.1,
            1e300,
            -1e-300,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let s = float_text(x);
            let back = match s.as_str() {
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                s => s.parse().unwrap(),
            };
            assert_eq!(back.to_bits(), x.to_bits(), "{s}");
        }
        assert_eq!(float_text(-0.0), "-0");
        assert_eq!(float_text(f64::NAN), "nan");
        assert_eq!(float_text(-f64::NAN), "-nan");
        assert_eq!(float_text(2.5), "2.5");
    }
}
