//! The reverse pass against central differences, and inlining.

use super::excess_adjoint::{inlined, Sensitivity};
use crate::hlo::parse_module;
use crate::hlo::{ArrayShape, ElementType, Opcode};
use crate::literal::Literal;
use crate::reference::Evaluator;

/// The adjoint of output element `e` against central differences of
/// every parameter element.
fn agrees_with_differences(text: &str, args: &[Literal]) {
    let m = parse_module(text).unwrap();
    let m = inlined(&m).unwrap_or(m);
    let values = Evaluator::new().evaluate_all(&m, args).unwrap();
    let out = Evaluator::new().evaluate(&m, args).unwrap();
    let params = m.entry_computation().parameters();
    let mut s = Sensitivity::new(&m).unwrap();
    for e in 0..out[0].element_count() {
        let adj = s.backward(&values, 0, e);
        for (k, p) in params.iter().enumerate() {
            let g = adj[p.index()].clone().unwrap_or_default();
            for i in 0..args[k].element_count() {
                let h = 1e-6;
                let moved = |d: f64| {
                    let mut a = args.to_vec();
                    a[k].set_f64(i, args[k].get_f64(i) + d);
                    Evaluator::new().evaluate(&m, &a).unwrap()[0].get_f64(e)
                };
                let fd = (moved(h) - moved(-h)) / (2.0 * h);
                let got = g.get(i).copied().unwrap_or(0.0);
                assert!(
                    (fd - got).abs() <= 1e-5 * (1.0 + fd.abs()),
                    "output [{e}] by parameter {k} [{i}]: adjoint {got}, differences {fd}"
                );
            }
        }
    }
}

fn f64s(dims: &[i64], v: &[f64]) -> Literal {
    Literal::from_f64s(&ArrayShape::new(ElementType::F64, dims.to_vec()), v).unwrap()
}

#[test]
fn a_batched_dot_with_a_transposed_operand_agrees_with_differences() {
    let text = "HloModule m\nENTRY e {\n  a = f64[2,3,2] parameter(0)\n  b = f64[2,2,3] parameter(1)\n  t = f64[2,3,2] transpose(b), dimensions={0,2,1}\n  d = f64[2,3,3] dot(a, t), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}\n  ROOT r = f64[3,2,3] transpose(d), dimensions={1,0,2}\n}\n";
    let a: Vec<f64> = (0..12).map(|i| 0.3 * i as f64 - 1.0).collect();
    let b: Vec<f64> = (0..12).map(|i| 0.7 - 0.2 * i as f64).collect();
    agrees_with_differences(text, &[f64s(&[2, 3, 2], &a), f64s(&[2, 2, 3], &b)]);
}

#[test]
fn a_softmax_in_a_fusion_agrees_with_differences() {
    // softmax then rsqrt/tanh of a concatenation, through a fusion
    let text = "HloModule m\nmax_f {\n  x = f64[] parameter(0)\n  y = f64[] parameter(1)\n  ROOT m = f64[] maximum(x, y)\n}\nadd_f {\n  x = f64[] parameter(0)\n  y = f64[] parameter(1)\n  ROOT s = f64[] add(x, y)\n}\nfused {\n  p = f64[2,6] parameter(0)\n  ninf = f64[] constant(-inf)\n  mx = f64[2] reduce(p, ninf), dimensions={1}, to_apply=max_f\n  bm = f64[2,6] broadcast(mx), dimensions={0}\n  s = f64[2,6] subtract(p, bm)\n  ex = f64[2,6] exponential(s)\n  z = f64[] constant(0)\n  sm = f64[2] reduce(ex, z), dimensions={1}, to_apply=add_f\n  bs = f64[2,6] broadcast(sm), dimensions={0}\n  ROOT q = f64[2,6] divide(ex, bs)\n}\nENTRY e {\n  x = f64[2,4] parameter(0)\n  w = f64[4] parameter(1)\n  bw = f64[2,4] broadcast(w), dimensions={1}\n  y = f64[2,4] multiply(x, bw)\n  sl = f64[2,2] slice(y), slice={[0:2], [1:3]}\n  c = f64[2,6] concatenate(y, sl), dimensions={1}\n  f = f64[2,6] fusion(c), kind=kLoop, calls=fused\n  ROOT t = f64[2,6] tanh(f)\n}\n";
    let x: Vec<f64> = (0..8).map(|i| 0.25 * i as f64 - 0.9).collect();
    agrees_with_differences(
        text,
        &[f64s(&[2, 4], &x), f64s(&[4], &[0.5, -1.5, 2.0, 0.75])],
    );
}

#[test]
fn a_scatter_add_with_repeated_indices_agrees_with_differences() {
    let text = "HloModule m\nadd_f {\n  x = f64[] parameter(0)\n  y = f64[] parameter(1)\n  ROOT s = f64[] add(x, y)\n}\nENTRY e {\n  t = f64[4,3] parameter(0)\n  u = f64[5,3] parameter(1)\n  i = s32[5,1] constant({{0},{2},{0},{3},{2}})\n  s = f64[4,3] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f\n  ROOT r = f64[4,3] multiply(s, s)\n}\n";
    let t: Vec<f64> = (0..12).map(|i| 0.1 * i as f64 - 0.4).collect();
    let u: Vec<f64> = (0..15).map(|i| 0.5 - 0.07 * i as f64).collect();
    agrees_with_differences(text, &[f64s(&[4, 3], &t), f64s(&[5, 3], &u)]);
}

#[test]
fn a_conditional_passes_back_through_the_branch_it_took() {
    // branch 1 (`sq`) by index, branch 0 (`ex`) by a true pred
    for sel in ["s32[] constant(1)", "pred[] constant(true)"] {
        let text = format!("HloModule m\nsq {{\n  p = (f64[3], f64[3]) parameter(0)\n  a = f64[3] get-tuple-element(p), index=0\n  b = f64[3] get-tuple-element(p), index=1\n  ROOT s = f64[3] multiply(a, b)\n}}\nex {{\n  p = (f64[3], f64[3]) parameter(0)\n  a = f64[3] get-tuple-element(p), index=0\n  ROOT s = f64[3] exponential(a)\n}}\nENTRY e {{\n  x = f64[3] parameter(0)\n  y = f64[3] parameter(1)\n  c = {sel}\n  t = (f64[3], f64[3]) tuple(x, y)\n  k = f64[3] conditional(c, t, t), branch_computations={{ex, sq}}\n  ROOT r = f64[3] sine(k)\n}}\n");
        let x = [0.3, -0.8, 1.1];
        let y = [0.5, 0.25, -0.7];
        agrees_with_differences(&text, &[f64s(&[3], &x), f64s(&[3], &y)]);
    }
}

#[test]
fn inlining_keeps_the_values_and_leaves_no_call() {
    let text = "HloModule m\nsq {\n  p = f32[3] parameter(0)\n  ROOT s = f32[3] multiply(p, p)\n}\nENTRY e {\n  x = f32[3] parameter(0)\n  a = f32[3] call(x), to_apply=sq\n  b = f32[3] fusion(a), kind=kLoop, calls=sq\n  ROOT r = (f32[3], f32[3]) tuple(a, b)\n}\n";
    let m = parse_module(text).unwrap();
    let flat = inlined(&m).unwrap();
    assert!(flat
        .entry_computation()
        .instructions
        .iter()
        .all(|i| !matches!(i.opcode, Opcode::Call | Opcode::Fusion)));
    let x = Literal::from_f64s(
        &ArrayShape::new(ElementType::F32, vec![3]),
        &[1.5, -2.0, 3.0],
    )
    .unwrap();
    let a = Evaluator::new()
        .evaluate(&m, std::slice::from_ref(&x))
        .unwrap();
    let b = Evaluator::new().evaluate(&flat, &[x]).unwrap();
    assert_eq!(a, b);
}
