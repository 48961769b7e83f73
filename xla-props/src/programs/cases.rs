//! How program templates join the static case space: the variant parameters
//! of each program property, by dtype.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use super::collectives::COLLECTIVE_TEMPLATES;
use super::sharded::{ShardingScheme, SHARDED_OP_TEMPLATES, SHARDING_SCHEMES};
use super::templates::{Configuration, ProgramTemplate, TEMPLATES};
use crate::hlo::ElementType;

/// Program properties that cover only some templates, or one case per
/// template rather than per configuration: (property, templates (empty: all),
/// whether the variant names a configuration).
pub const PROGRAM_PROPERTIES: &[(&str, &[&str], bool)] = &[
    // compares every configuration with every other inside one case
    ("template_fusion_invariance", &[], false),
    ("quantization_residual", &["quantize"], true),
    ("topk_recall", &["topk"], true),
    ("softmax_rows", &["softmax"], true),
    // multi-device programs: only here (`COLLECTIVE_TEMPLATES`)
    ("collectives", &[], true),
    // every template and single-op template under every sharding scheme
    // (`template.scheme`, see `split_sharded_case`)
    ("sharding_invariance", &[], false),
];

/// The variant parameters of a program property for `dtype`: `template.configuration`
/// (or `template` alone for properties that compare configurations among themselves).
/// Any other property name covers every template and configuration.
///
/// ```
/// use xla_props::hlo::ElementType;
/// use xla_props::programs::program_params;
/// assert!(program_params("template_vs_reference", ElementType::F32).contains(&"softmax.all-in-one"));
/// assert!(program_params("template_fusion_invariance", ElementType::F32).contains(&"softmax"));
/// assert_eq!(program_params("quantization_residual", ElementType::F32), &[] as &[&str]);
/// ```
pub fn program_params(property: &str, dtype: ElementType) -> &'static [&'static str] {
    type Table = Mutex<HashMap<(String, ElementType), &'static [&'static str]>>;
    static TABLE: OnceLock<Table> = OnceLock::new();
    let table = TABLE.get_or_init(Table::default);
    let mut map = table.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = map.get(&(property.to_string(), dtype)) {
        return p;
    }
    let (only, with_configs) = PROGRAM_PROPERTIES
        .iter()
        .find(|(p, _, _)| *p == property)
        .map_or((&[][..], true), |(_, t, c)| (*t, *c));
    let mut names: Vec<&'static str> = Vec::new();
    if property == "sharding_invariance" {
        for t in TEMPLATES
            .iter()
            .chain(SHARDED_OP_TEMPLATES)
            .filter(|t| t.dtypes.contains(&dtype))
        {
            for s in SHARDING_SCHEMES {
                names.push(Box::leak(format!("{}.{}", t.name, s.name).into_boxed_str()));
            }
        }
    }
    let templates = if property == "sharding_invariance" {
        &[][..]
    } else if property == "collectives" {
        COLLECTIVE_TEMPLATES
    } else {
        TEMPLATES
    };
    for t in templates
        .iter()
        .filter(|t| t.dtypes.contains(&dtype) && (only.is_empty() || only.contains(&t.name)))
    {
        if with_configs {
            for c in t.configurations {
                names.push(Box::leak(format!("{}.{}", t.name, c.name).into_boxed_str()));
            }
        } else {
            names.push(t.name);
        }
    }
    let leaked: &'static [&'static str] = Box::leak(names.into_boxed_slice());
    map.insert((property.to_string(), dtype), leaked);
    leaked
}

/// The template with this name.
pub fn find_template(name: &str) -> Option<&'static ProgramTemplate> {
    TEMPLATES
        .iter()
        .chain(COLLECTIVE_TEMPLATES)
        .chain(SHARDED_OP_TEMPLATES)
        .find(|t| t.name == name)
}

/// Splits a `sharding_invariance` case parameter, `template.scheme`.
pub fn split_sharded_case(
    param: &str,
) -> Option<(&'static ProgramTemplate, &'static ShardingScheme)> {
    let (t, s) = param.rsplit_once('.')?;
    Some((
        find_template(t)?,
        SHARDING_SCHEMES.iter().find(|x| x.name == s)?,
    ))
}

/// Splits a `template.configuration` case parameter.
pub fn split_case(param: &str) -> Option<(&'static ProgramTemplate, &'static Configuration)> {
    let (t, c) = param.split_once('.')?;
    let t = find_template(t)?;
    Some((t, t.configuration(c)?))
}
