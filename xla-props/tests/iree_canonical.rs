//! iree-cpu gets a verdict on what users write (issue 33, part 4): valid
//! HLO that IREE 3.13.0 rejects or miscompiles, rewritten before lowering
//! (`backend::iree::canonical`), agrees with the reference through
//! `xla-props compare`; a dot with an algorithm agrees on the interpreter
//! and iree-cpu; a module the backend rejects is exit 3, not a mismatch.
//!
//! The iree-cpu tests need the pinned tools (`scripts/fetch-iree.sh`):
//! without them they skip, unless `CI` is set (then missing tools fail).

mod common;

use std::path::{Path, PathBuf};

use common::cli::{run_on, text, write};
use xla_props::backend::iree::IreeBackend;

fn iree_or_skip() -> bool {
    xla_props::skip::backend_available("iree-cpu", IreeBackend::new().availability())
}

fn compare(file: &Path, backend: &str, seed: u64) -> (i32, String) {
    let out = run_on("compare", file, backend, &["--seed", &seed.to_string()]);
    (out.status.code().unwrap_or(-1), text(&out))
}

/// `compare FILE --backend BACKEND --seed SEED` exits 0 (it agrees); `what`
/// names the case in a failure. Returns what it printed.
fn agrees(file: &Path, backend: &str, seed: u64, what: &str) -> String {
    let (code, out) = compare(file, backend, seed);
    assert_eq!(code, 0, "{what}:\n{out}");
    out
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("iree-canonical-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

const ADD_F32: &str =
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";

/// Scatters as XLA's scatter simplifier leaves them (every window dimension
/// in the updates, unit windows over addressed dimensions) and with the
/// index vector first or implicit.
fn scatters() -> Vec<(&'static str, String)> {
    let entry = |o: &str, i: &str, u: &str, dims: &str| {
        format!(
            "HloModule m\n{ADD_F32}\nENTRY main {{\n  o = {o} parameter(0)\n  i = {i} parameter(1)\n  \
             u = {u} parameter(2)\n  ROOT s = {o} scatter(o, i, u), to_apply=add, {dims}\n}}\n"
        )
    };
    vec![
        (
            "unit windows over both dims (a gradient of x[rows, labels])",
            entry(
                "f32[4,6]",
                "s32[4,2]",
                "f32[4,1,1]",
                "update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1",
            ),
        ),
        (
            "a unit window and a row window (an embedding gradient, simplified)",
            entry(
                "f32[7,5]",
                "s32[3,1]",
                "f32[3,1,5]",
                "update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1",
            ),
        ),
        (
            "two scatter dims and unit windows",
            entry(
                "f32[3,4]",
                "s32[2,3,2]",
                "f32[2,3,1,1]",
                "update_window_dims={2,3}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=2",
            ),
        ),
        (
            "the index vector first",
            entry(
                "f32[5,3]",
                "s32[2,4]",
                "f32[4,1,1]",
                "update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={1,0}, index_vector_dim=0",
            ),
        ),
        (
            "rank-1 indices (an implicit index vector)",
            entry(
                "f32[5,3]",
                "s32[4]",
                "f32[4,3]",
                "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1",
            ),
        ),
    ]
}

#[test]
fn scatters_xla_leaves_agree_on_iree_cpu() {
    if !iree_or_skip() {
        return;
    }
    let dir = scratch("scatter");
    for (k, (what, text)) in scatters().iter().enumerate() {
        let f = write(&dir, &format!("s{k}.hlo"), text);
        for seed in [0, 1] {
            let out = agrees(&f, "iree-cpu", seed, &format!("{what}, seed {seed}"));
            assert!(out.contains("agree:"), "{what}: {out}");
        }
    }
}

/// Window reversal in several arrangements agrees once canonicalized (the
/// reproducers themselves, docs/repro/iree-grouped-conv-reversal and the
/// others, run as `.hlotest` files).
#[test]
fn window_reversals_agree_once_canonicalized() {
    if !iree_or_skip() {
        return;
    }
    // window reversal in other arrangements: all dims, one dim, with input
    // dilation (a gradient convolution), 1-D
    let dir = scratch("conv");
    let convs = [
        (
            "f32[1,6,6,2]",
            "f32[3,3,2,4]",
            "f32[1,6,6,4]",
            "size=3x3 pad=1_1x1_1 rhs_reversal=1x1",
            "b01f_01io->b01f",
            "",
        ),
        (
            "f32[1,6,6,2]",
            "f32[3,3,2,4]",
            "f32[1,6,6,4]",
            "size=3x3 pad=1_1x1_1 rhs_reversal=0x1",
            "b01f_01io->b01f",
            "",
        ),
        (
            "f32[1,3,3,4]",
            "f32[3,3,2,4]",
            "f32[1,6,6,2]",
            "size=3x3 pad=1_2x1_2 lhs_dilate=2x2 rhs_reversal=1x1",
            "b01f_01oi->b01f",
            "",
        ),
        (
            "f32[1,6,6,4]",
            "f32[3,3,1,4]",
            "f32[1,6,6,4]",
            "size=3x3 pad=1_1x1_1 rhs_reversal=1x1",
            "b01f_01io->b01f",
            ", feature_group_count=4",
        ),
    ];
    for (k, (x, w, o, window, labels, groups)) in convs.iter().enumerate() {
        let text = format!(
            "HloModule m\nENTRY main {{\n  x = {x} parameter(0)\n  k = {w} parameter(1)\n  \
             ROOT c = {o} convolution(x, k), window={{{window}}}, dim_labels={labels}{groups}\n}}\n"
        );
        let f = write(&dir, &format!("c{k}.hlo"), &text);
        agrees(&f, "iree-cpu", 0, &format!("{window}{groups}"));
    }
}

#[test]
fn a_module_the_backend_rejects_is_exit_3_not_a_mismatch() {
    if !iree_or_skip() {
        return;
    }
    let dir = scratch("exit");
    // a reduce with a constant reducer: iree-compile fails its own verifier
    let constant_reducer = write(
        &dir,
        "constant_reducer.hlo",
        "HloModule m\nr {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] constant(1)\n}\n\
         ENTRY main {\n  x = f32[2,3] parameter(0)\n  z = f32[] constant(0)\n  \
         ROOT y = f32[2] reduce(x, z), dimensions={1}, to_apply=r\n}\n",
    );
    let (code, out) = compare(&constant_reducer, "iree-cpu", 0);
    assert_eq!(code, 3, "{out}");
    assert!(!out.contains("mismatch"), "{out}");
    // what IREE cannot legalize is a skip (exit 2), not a rejection: a
    // select-and-scatter with overlapping windows
    let overlap = write(
        &dir,
        "overlap.hlo",
        "HloModule m\nge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
         ROOT c = pred[] compare(a, b), direction=GE\n}\n\
         add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\
         ENTRY main {\n  x = f32[1,4,4,2] parameter(0)\n  g = f32[1,3,3,2] parameter(1)\n  \
         z = f32[] constant(0)\n  ROOT s = f32[1,4,4,2] select-and-scatter(x, g, z), \
         window={size=1x2x2x1}, select=ge, scatter=add\n}\n",
    );
    let (code, out) = compare(&overlap, "iree-cpu", 0);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("select_and_scatter"), "{out}");
}

fn dot(alg: &str, t: &str, out: &str) -> String {
    format!(
        "HloModule m\nENTRY main {{\n  a = {t}[4,16] parameter(0)\n  b = {t}[16,3] parameter(1)\n  \
         ROOT d = {out}[4,3] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, algorithm={alg}\n}}\n"
    )
}

#[test]
fn dots_with_an_algorithm_agree_on_the_interpreter() {
    let dir = scratch("dot-interp");
    for alg in [
        "dot_bf16_bf16_f32",
        "dot_bf16_bf16_f32_x3",
        "dot_bf16_bf16_f32_x6",
        "dot_bf16_bf16_f32_x9",
        "dot_tf32_tf32_f32",
        "dot_tf32_tf32_f32_x3",
        "dot_f16_f16_f32",
        "dot_f32_f32_f32",
    ] {
        let f = write(&dir, &format!("{alg}.hlo"), &dot(alg, "f32", "f32"));
        agrees(&f, "interpreter", 0, alg);
    }
}

#[test]
fn dots_with_an_algorithm_agree_on_iree_cpu() {
    if !iree_or_skip() {
        return;
    }
    let dir = scratch("dot-iree");
    for (alg, t, out) in [
        ("dot_bf16_bf16_f32", "f32", "f32"),
        ("dot_bf16_bf16_f32", "bf16", "f32"),
        ("dot_tf32_tf32_f32", "f32", "f32"),
        ("dot_f16_f16_f32", "f32", "f32"),
        ("dot_f32_f32_f32", "f32", "f32"),
    ] {
        let f = write(&dir, &format!("{alg}-{t}.hlo"), &dot(alg, t, out));
        for seed in [0, 3] {
            agrees(&f, "iree-cpu", seed, &format!("{alg} {t}, seed {seed}"));
        }
    }
    // several components per operand: a skip naming the algorithm
    let f = write(&dir, "x3.hlo", &dot("dot_bf16_bf16_f32_x3", "f32", "f32"));
    let (code, text) = compare(&f, "iree-cpu", 0);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("dot_bf16_bf16_f32_x3"), "{text}");
}
