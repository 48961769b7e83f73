//! Small programs aimed at the semantics single-op cases cannot reach: a
//! round trip through a narrower float, a reduce with a non-neutral init,
//! a key-value sort with ties, select on a broadcast predicate, integer
//! division by zero, and grouped convolution. Each was added because a
//! mutation of the `mutant` catalogue went unnoticed without it.

use xla_props_macros::xla_property;

use crate::hlo::{parse_module, ElementType};
use crate::inputs::Role;
use crate::programs::BuiltCase;
use crate::property::{CaseContext, Outcome};

fn shape(t: ElementType, dims: &[i64]) -> String {
    let d: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("{}[{}]", t.name(), d.join(","))
}

/// Parses `text` as the case's program and compares it with the reference.
fn run_program(ctx: &mut CaseContext<'_>, text: &str, roles: Vec<Role>) -> Outcome {
    match parse_module(text) {
        Ok(module) => {
            ctx.set_module(BuiltCase { module, roles });
            ctx.compare_with_reference()
        }
        Err(e) => Outcome::fail(format!("edge program does not parse: {e}")),
    }
}

/// `x - f32(narrow(x))` is the quantization residual: non-zero for most x, so
/// a compiler eliding the round trip (returning 0) is caught; strict rounding.
#[xla_property(
    ops = [convert],
    dtypes = [f32, f64],
    shapes = small,
    distributions = [uniform],
    layouts = default,
    tolerance = exact,
    strict_rounding
)]
pub fn round_trip_residual(ctx: &mut CaseContext<'_>) -> Outcome {
    let t = ctx.case.key.dtype;
    let narrow = ctx
        .case
        .key
        .param()
        .and_then(|p| p.strip_prefix("to-"))
        .and_then(|n| n.parse::<ElementType>().ok());
    let Some(n) = narrow.filter(|n| n.is_float() && n.bit_width() < t.bit_width()) else {
        return Outcome::Skip("the round trip needs a narrower float target".into());
    };
    let dims = ctx.case.key.dims();
    let (w, s) = (shape(t, dims), shape(n, dims));
    let text = format!(
        "HloModule round_trip\nENTRY main {{\n  x = {w} parameter(0)\n  n = {s} convert(x)\n  \
         b = {w} convert(n)\n  ROOT r = {w} subtract(x, b)\n}}\n"
    );
    run_program(ctx, &text, vec![Role::Data])
}

/// A reduce whose init value is an argument (not the reducer's identity).
/// Skipped on backends that require an identity init
/// (`Backend::requires_identity_reduce_init`: XLA, where the result is then
/// undefined; jax.lax.reduce: "init_values must be an identity of
/// computation"); it runs on the interpreter and the mutants, where it
/// catches a reduce that ignores its init value.
#[xla_property(
    ops = [reduce],
    dtypes = all,
    shapes = small,
    distributions = [uniform],
    layouts = default,
    tolerance = ulp(1)
)]
pub fn reduce_with_init(ctx: &mut CaseContext<'_>) -> Outcome {
    if ctx.backend.traits().requires_identity_reduce_init {
        return Outcome::Skip(format!(
            "{} requires a reduce's init value to be an identity of its computation \
             (the result is undefined otherwise)",
            ctx.backend.name()
        ));
    }
    let t = ctx.case.key.dtype;
    let dims = ctx.case.key.dims();
    let rank = dims.len();
    let param = ctx.case.key.param().unwrap_or("add-all");
    let op = match param.split('-').next() {
        Some("max") => "maximum",
        Some("min") => "minimum",
        Some("mul") => "multiply",
        _ => "add",
    };
    let reduced: Vec<usize> = if param.ends_with("all") {
        (0..rank).collect()
    } else if param.ends_with("last") {
        vec![rank.saturating_sub(1)]
    } else {
        vec![0]
    };
    let out: Vec<i64> = (0..rank)
        .filter(|d| !reduced.contains(d))
        .map(|d| dims[d])
        .collect();
    let rd: Vec<String> = reduced.iter().map(usize::to_string).collect();
    let (x, s, o) = (shape(t, dims), shape(t, &[]), shape(t, &out));
    let text = format!(
        "HloModule reduce_init\nred {{\n  a = {s} parameter(0)\n  b = {s} parameter(1)\n  \
         ROOT c = {s} {op}(a, b)\n}}\nENTRY main {{\n  x = {x} parameter(0)\n  i = {s} parameter(1)\n  \
         ROOT r = {o} reduce(x, i), dimensions={{{}}}, to_apply=red\n}}\n",
        rd.join(",")
    );
    run_program(ctx, &text, vec![Role::Data, Role::Data])
}

/// A stable key-value sort whose keys (`floor` of uniform values) tie on purpose.
#[xla_property(
    ops = [sort],
    dtypes = all,
    shapes = small,
    distributions = [uniform],
    layouts = default,
    tolerance = exact
)]
pub fn stable_sort_pairs(ctx: &mut CaseContext<'_>) -> Outcome {
    let t = ctx.case.key.dtype;
    let dims = ctx.case.key.dims();
    let last = dims.len().saturating_sub(1);
    let (k, v) = (shape(ElementType::F32, dims), shape(t, dims));
    let (ks, vs) = (shape(ElementType::F32, &[]), shape(t, &[]));
    let text = format!(
        "HloModule sort_pairs\ncmp {{\n  a = {ks} parameter(0)\n  b = {ks} parameter(1)\n  \
         c = {vs} parameter(2)\n  d = {vs} parameter(3)\n  ROOT lt = pred[] compare(a, b), direction=LT\n}}\n\
         ENTRY main {{\n  k = {k} parameter(0)\n  f = {k} floor(k)\n  v = {v} parameter(1)\n  \
         ROOT s = ({k}, {v}) sort(f, v), dimensions={{{last}}}, is_stable=true, to_apply=cmp\n}}\n"
    );
    run_program(ctx, &text, vec![Role::Data, Role::Data])
}

/// select on a predicate broadcast from a scalar (the shape a simplifier rewrites).
#[xla_property(
    ops = [select],
    dtypes = all,
    shapes = small,
    distributions = [uniform],
    layouts = default,
    tolerance = exact
)]
pub fn select_broadcast_pred(ctx: &mut CaseContext<'_>) -> Outcome {
    let t = ctx.case.key.dtype;
    let dims = ctx.case.key.dims();
    let (p, x) = (shape(ElementType::Pred, dims), shape(t, dims));
    let text = format!(
        "HloModule select_bcast\nENTRY main {{\n  c = pred[] parameter(0)\n  \
         p = {p} broadcast(c), dimensions={{}}\n  a = {x} parameter(1)\n  b = {x} parameter(2)\n  \
         ROOT s = {x} select(p, a, b)\n}}\n"
    );
    run_program(ctx, &text, vec![Role::Data, Role::Data, Role::Data])
}

/// Integer division and remainder with divisors drawn from the edge values
/// (zero included): `x / 0 = -1` and `x % 0 = x` are defined, not errors.
#[xla_property(
    ops = [divide, remainder],
    dtypes = integers,
    shapes = small,
    distributions = [special, mixed],
    layouts = default,
    tolerance = exact
)]
pub fn integer_division_edges(ctx: &mut CaseContext<'_>) -> Outcome {
    let t = ctx.case.key.dtype;
    let op = ctx.case.key.op.name();
    let x = shape(t, ctx.case.key.dims());
    let text = format!(
        "HloModule int_div\nENTRY main {{\n  x = {x} parameter(0)\n  y = {x} parameter(1)\n  \
         ROOT d = {x} {op}(x, y)\n}}\n"
    );
    run_program(ctx, &text, vec![Role::Data, Role::Data])
}

/// A convolution with two feature groups (each output feature sees only its group's inputs).
#[xla_property(
    ops = [convolution],
    dtypes = [f32, f16, s32],
    shapes = default,
    distributions = [uniform],
    layouts = default,
    tolerance = ulp(1)
)]
pub fn grouped_convolution(ctx: &mut CaseContext<'_>) -> Outcome {
    let t = ctx.case.key.dtype;
    let d = ctx.case.key.dims();
    let (b, h, w, f) = (d[0], d[1], d[2], d[3]);
    let input = shape(t, &[b, h, w, 2 * f]);
    let kernel = shape(t, &[1, 1, f, 2]);
    let out = shape(t, &[b, h, w, 2]);
    let text = format!(
        "HloModule grouped_conv\nENTRY main {{\n  x = {input} parameter(0)\n  k = {kernel} parameter(1)\n  \
         ROOT c = {out} convolution(x, k), window={{size=1x1}}, dim_labels=b01f_01io->b01f, \
         feature_group_count=2\n}}\n"
    );
    run_program(ctx, &text, vec![Role::Data, Role::Data])
}

/// A scatter-add whose indices repeat (rows 0, 0 and the last): every update
/// of a repeated index must be combined, not just the last one.
#[xla_property(
    ops = [scatter],
    dtypes = [f32, f16, s32, u8],
    shapes = default,
    distributions = [uniform],
    layouts = default,
    tolerance = ulp(1)
)]
pub fn scatter_duplicate_indices(ctx: &mut CaseContext<'_>) -> Outcome {
    if ctx.case.key.param() != Some("add") {
        return Outcome::Skip("duplicate indices are checked with the add combiner".into());
    }
    let t = ctx.case.key.dtype;
    let dims = ctx.case.key.dims();
    let rank = dims.len();
    let last = dims[0] - 1;
    let mut upd = vec![3];
    upd.extend_from_slice(&dims[1..]);
    let (x, u, s) = (shape(t, dims), shape(t, &upd), shape(t, &[]));
    let window: Vec<String> = (1..rank).map(|d| d.to_string()).collect();
    let text = format!(
        "HloModule scatter_dups\nadd {{\n  a = {s} parameter(0)\n  b = {s} parameter(1)\n  \
         ROOT c = {s} add(a, b)\n}}\nENTRY main {{\n  x = {x} parameter(0)\n  \
         i = s32[3,1] constant({{ {{0}}, {{0}}, {{{last}}} }})\n  u = {u} parameter(1)\n  \
         ROOT r = {x} scatter(x, i, u), update_window_dims={{{}}}, inserted_window_dims={{0}}, \
         scatter_dims_to_operand_dims={{0}}, index_vector_dim=1, to_apply=add\n}}\n",
        window.join(",")
    );
    run_program(ctx, &text, vec![Role::Data, Role::Data])
}
