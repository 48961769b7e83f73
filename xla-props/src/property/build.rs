//! A case's module from its key: the key says which single-op module, chain
//! or attribute class the catalogue (`crate::programs`) builds.

use super::groups::{CONFIG_SET, FORMS_SET};
use super::id::CaseKey;
use super::spec::Template;
use super::tables::case_form;
use crate::programs::{
    build_chain, build_configuration, build_operand_forms, build_single, BuiltCase, CatalogueError,
    FormsSite, OpCase,
};

/// Runs `f` on the single-op case `key` names.
fn with_op_case<T>(key: &CaseKey, f: impl FnOnce(&OpCase<'_>) -> T) -> T {
    let layout = key.layout();
    f(&OpCase {
        name: key,
        op: key.op,
        dtype: key.dtype,
        dims: key.dims(),
        layout: &layout,
        param: key.param(),
    })
}

/// Builds the module of a case.
///
/// ```
/// use xla_props::property::{build_case, CaseKey};
/// let key: CaseKey = "vs_reference::add::f32::f32[3,5]{1,0}::uniform".parse().unwrap();
/// let built = build_case(&key).unwrap();
/// assert_eq!(built.module.parameter_shapes().len(), 2);
/// assert_eq!(built.module.result_shape().to_string(), "f32[3,5]{1,0}");
/// ```
pub fn build_case(key: &CaseKey) -> Result<BuiltCase, CatalogueError> {
    with_op_case(key, |c| {
        let spec = key.spec();
        if spec.template == Template::ElementwiseChain {
            return build_chain(c, false);
        }
        if spec.shapes == CONFIG_SET {
            return build_configuration(c);
        }
        if spec.shapes == FORMS_SET {
            let site = FormsSite {
                base_param: super::tables::forms_base_param(key.op, key.dtype),
                dist: key.dist,
                seed: key.seed(0),
            };
            return build_operand_forms(c, &site);
        }
        let form = case_form(spec.template, key.op).ok_or_else(|| c.err("no form for this op"))?;
        build_single(c, form)
    })
}

/// The fused twin of a chain case: the whole chain in one `kLoop` fusion.
///
/// ```
/// use xla_props::hlo::Opcode;
/// use xla_props::property::{build_fused_chain, CaseKey};
/// let key: CaseKey = "fusion_invariance::multiply::f32::f32[7]{0}::uniform.then-residual".parse().unwrap();
/// let fused = build_fused_chain(&key).unwrap().module;
/// let entry = fused.entry_computation();
/// assert_eq!(entry.instr(entry.root).opcode, Opcode::Fusion);
/// ```
pub fn build_fused_chain(key: &CaseKey) -> Result<BuiltCase, CatalogueError> {
    with_op_case(key, |c| build_chain(c, true))
}
