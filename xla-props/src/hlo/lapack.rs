//! jaxlib's LAPACK custom calls on CPU, read as the HLO op they compute.
//!
//! `custom-call(a, b), custom_call_target="lapack_?trsm_ffi"` (`?` one of
//! `s d c z`: f32, f64, c64, c128) is what `jax.lax.linalg.triangular_solve`
//! lowers to on CPU (`_triangular_solve_cpu_lower` in jax's
//! `_src/lax/linalg.py`). Its XLA FFI attributes, printed in
//! `backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8,
//! uplo = 85 : ui8}`, are LAPACK's character flags (`ord(c)` as a `ui8`):
//!
//! - `side`: `L` solves `op(a) x = b`, `R` solves `x op(a) = b`;
//! - `uplo`: `L` lower, `U` upper triangle of `a`;
//! - `trans_x`: `N` `op(a) = a`, `T` its transpose, `C` its conjugate
//!   transpose;
//! - `diag`: `U` the diagonal taken as ones, `N` read.
//!
//! The operands' layouts are column-major (`operand_layout_constraints`), so
//! LAPACK's Fortran matrices are the arrays' logical matrices, and the
//! leading `num_batch_dims` dimensions (a frontend attribute) are batch
//! dimensions. That is exactly `triangular-solve(a, b), left_side=(side==L),
//! lower=(uplo==L), unit_diagonal=(diag==U), transpose_a=NO_TRANSPOSE |
//! TRANSPOSE | ADJOINT` (jax conjugates `a` itself when it asks for a
//! conjugate without a transpose). A call whose attributes, types or shapes
//! are not these is left as it is (and stays unsupported).

use super::sdy::frontend_attr;
use super::{ElementType, Instruction, Opcode, Shape, TransposeA, TriangularSolveOptions};

/// Whether `target` is one of the four LAPACK trsm FFI targets.
pub(crate) fn is_trsm_target(target: &str) -> bool {
    trsm_type(target).is_some()
}

/// The element type of a `lapack_?trsm_ffi` target.
fn trsm_type(target: &str) -> Option<ElementType> {
    let t = target.strip_prefix("lapack_")?.strip_suffix("trsm_ffi")?;
    match t {
        "s" => Some(ElementType::F32),
        "d" => Some(ElementType::F64),
        "c" => Some(ElementType::C64),
        "z" => Some(ElementType::C128),
        _ => None,
    }
}

/// The `ui8` character flags of a backend config `{k = 76 : ui8, ...}`.
fn ui8_flags(config: &str) -> Option<Vec<(String, u8)>> {
    let body = config.trim().strip_prefix('{')?.strip_suffix('}')?;
    let mut flags = Vec::new();
    for entry in body.split(',').filter(|e| !e.trim().is_empty()) {
        let (key, rest) = entry.split_once('=')?;
        let (value, ty) = rest.split_once(':')?;
        if ty.trim() != "ui8" {
            return None;
        }
        flags.push((key.trim().to_string(), value.trim().parse().ok()?));
    }
    Some(flags)
}

/// The triangular-solve options of a trsm call's backend config.
fn trsm_options(config: &str) -> Option<TriangularSolveOptions> {
    let flags = ui8_flags(config)?;
    let get = |k: &str| {
        let mut it = flags.iter().filter(|(n, _)| n == k);
        let v = it.next()?.1;
        it.next().is_none().then_some(v)
    };
    if flags.len() != 4 {
        return None;
    }
    let left_side = match get("side")? {
        b'L' => true,
        b'R' => false,
        _ => return None,
    };
    let lower = match get("uplo")? {
        b'L' => true,
        b'U' => false,
        _ => return None,
    };
    let transpose_a = match get("trans_x")? {
        b'N' => TransposeA::NoTranspose,
        b'T' => TransposeA::Transpose,
        b'C' => TransposeA::Adjoint,
        _ => return None,
    };
    let unit_diagonal = match get("diag")? {
        b'U' => true,
        b'N' => false,
        _ => return None,
    };
    Some(TriangularSolveOptions {
        left_side,
        lower,
        unit_diagonal,
        transpose_a: Some(transpose_a),
    })
}

/// The triangular-solve that replaces a `lapack_?trsm_ffi` custom call
/// (None when the call is not one as jax emits it).
pub(crate) fn trsm(instrs: &[Instruction], ins: &Instruction) -> Option<Instruction> {
    let t = trsm_type(ins.attrs.custom_call_target.as_deref()?)?;
    let &[a, b] = ins.operands.as_slice() else {
        return None;
    };
    let other = |k: &str| {
        ins.attrs
            .other
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    };
    let options = trsm_options(other("backend_config")?)?;
    let (a_shape, b_shape) = (
        instrs.get(a.index())?.shape.as_array()?,
        instrs.get(b.index())?.shape.as_array()?,
    );
    let out = ins.shape.as_array()?;
    let rank = b_shape.dims.len();
    if a_shape.dtype != t || b_shape.dtype != t || out.dtype != t || out.dims != b_shape.dims {
        return None;
    }
    if rank < 2 || a_shape.dims.len() != rank {
        return None;
    }
    // jax writes the batch rank; another one would be another reading
    if let Some(n) = other("frontend_attributes").and_then(|f| frontend_attr(f, "num_batch_dims")) {
        if n.parse::<usize>().ok()? != rank - 2 {
            return None;
        }
    }
    let mut solve = Instruction::new(
        ins.name.clone(),
        Opcode::TriangularSolve,
        Shape::Array(out.clone()),
        vec![a, b],
    );
    solve.attrs.triangular_solve = Some(options);
    Some(solve)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::parse_module;
    use crate::literal::Literal;

    const CONFIG: &str = "{diag = 85 : ui8, side = 76 : ui8, trans_x = 84 : ui8, uplo = 76 : ui8}";

    #[test]
    fn backend_config_flags_are_lapack_characters() {
        let o = trsm_options(CONFIG).unwrap();
        assert!(o.left_side && o.lower && o.unit_diagonal);
        assert_eq!(o.transpose_a, Some(TransposeA::Transpose));
        let r =
            trsm_options("{diag = 78 : ui8, side = 82 : ui8, trans_x = 67 : ui8, uplo = 85 : ui8}")
                .unwrap();
        assert!(!r.left_side && !r.lower && !r.unit_diagonal);
        assert_eq!(r.transpose_a, Some(TransposeA::Adjoint));
        // an unknown flag value, a missing or repeated flag: not read
        assert!(trsm_options(
            "{diag = 88 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 85 : ui8}"
        )
        .is_none());
        assert!(trsm_options("{side = 76 : ui8, trans_x = 78 : ui8, uplo = 85 : ui8}").is_none());
        assert!(trsm_options(
            "{diag = 85 : ui8, diag = 85 : ui8, trans_x = 78 : ui8, uplo = 85 : ui8}"
        )
        .is_none());
        assert_eq!(trsm_type("lapack_ztrsm_ffi"), Some(ElementType::C128));
        assert_eq!(trsm_type("lapack_xtrsm_ffi"), None);
    }

    fn module(target: &str, ty: &str, config: &str) -> String {
        format!(
            "HloModule m\nENTRY e {{\n  a = {ty}[2,2]{{1,0}} parameter(0)\n  b = {ty}[2,1]{{1,0}} parameter(1)\n  ROOT x = {ty}[2,1]{{0,1}} custom-call(a, b), custom_call_target=\"{target}\", operand_layout_constraints={{{ty}[2,2]{{0,1}}, {ty}[2,1]{{0,1}}}}, output_to_operand_aliasing={{{{}}: (1, {{}})}}, api_version=API_VERSION_TYPED_FFI, frontend_attributes={{num_batch_dims=\"0\"}}, backend_config={config}\n}}\n"
        )
    }

    #[test]
    fn a_trsm_call_solves_its_triangle_by_hand() {
        // a = [[2, 9], [3, 4]] lower (the 9 not read), unit diagonal:
        // op(a) = a^T = [[1, 3], [0, 1]]; x = [[1 - 3 * 5], [5]] for b = [1, 5]
        let m = parse_module(&module("lapack_dtrsm_ffi", "f64", CONFIG)).unwrap();
        let a = Literal::from_f64s(
            &crate::hlo::ArrayShape::new(ElementType::F64, vec![2, 2]),
            &[2.0, 9.0, 3.0, 4.0],
        )
        .unwrap();
        let b = Literal::from_f64s(
            &crate::hlo::ArrayShape::new(ElementType::F64, vec![2, 1]),
            &[1.0, 5.0],
        )
        .unwrap();
        let x = crate::reference::evaluate(&m, &[a, b]).unwrap().remove(0);
        assert_eq!(x.to_f64_vec(), vec![-14.0, 5.0]);
    }

    #[test]
    fn a_call_of_another_type_or_batch_rank_is_left_alone() {
        let wrong_type = parse_module(&module("lapack_strsm_ffi", "f64", CONFIG)).unwrap();
        assert!(crate::hlo::expand_known_custom_calls(&wrong_type).is_none());
        let batch = module("lapack_dtrsm_ffi", "f64", CONFIG)
            .replace("num_batch_dims=\"0\"", "num_batch_dims=\"1\"");
        let m = parse_module(&batch).unwrap();
        assert!(crate::hlo::expand_known_custom_calls(&m).is_none());
        let ok = parse_module(&module("lapack_dtrsm_ffi", "f64", CONFIG)).unwrap();
        let e = crate::hlo::expand_known_custom_calls(&ok).unwrap();
        let root = e.entry_computation().instr(e.entry_computation().root);
        assert_eq!(root.opcode, Opcode::TriangularSolve);
    }
}
