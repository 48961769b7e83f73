//! Case names back to cases: a name parses only when the unfiltered case
//! space of its property holds it.

use std::str::FromStr;
use std::sync::OnceLock;

use super::groups::{CONFIG_SET, FORMS_SET};
use super::id::{BackendId, CaseId, CaseKey, ParseCaseIdError};
use super::space::{CaseSpace, SpaceFilter};
use super::spec::registry;
use super::tables::{case_params, layouts, shapes};
use crate::hlo::{ElementType, Opcode};
use crate::inputs::Distribution;

/// The unfiltered case space of every property, built once.
pub(crate) fn full_spaces() -> &'static [Result<CaseSpace, super::space::SpaceError>] {
    static SPACES: OnceLock<Vec<Result<CaseSpace, super::space::SpaceError>>> = OnceLock::new();
    SPACES.get_or_init(|| {
        registry()
            .iter()
            .enumerate()
            .map(|(i, spec)| CaseSpace::new(i as u16, spec, &SpaceFilter::default()))
            .collect()
    })
}

fn parse_shape(s: &str) -> Option<(ElementType, Vec<i64>, Option<Vec<i64>>)> {
    let open = s.find('[')?;
    let close = s.find(']')?;
    let dtype = s[..open].parse().ok()?;
    let dims_text = &s[open + 1..close];
    let dims = int_list(dims_text)?;
    let rest = &s[close + 1..];
    let layout = if rest.is_empty() {
        None
    } else {
        let inner = rest.strip_prefix('{')?.strip_suffix('}')?;
        Some(int_list(inner)?)
    };
    Some((dtype, dims, layout))
}

impl FromStr for CaseKey {
    type Err = ParseCaseIdError;
    /// Parses `property::op::dtype::shape::variant` without enumerating the space.
    fn from_str(name: &str) -> Result<CaseKey, ParseCaseIdError> {
        let err = |why: &str| ParseCaseIdError {
            name: name.to_string(),
            why: why.to_string(),
        };
        let parts: Vec<&str> = name.split("::").collect();
        let [prop, op, dtype, shape, variant] = parts.as_slice() else {
            return Err(err("expected property::op::dtype::shape::variant"));
        };
        let property = registry()
            .iter()
            .position(|p| p.name == *prop)
            .ok_or_else(|| err("unknown property"))?;
        let spec = registry()[property];
        let op: Opcode = op.parse().map_err(|_| err("unknown op"))?;
        let dtype: ElementType = dtype.parse().map_err(|_| err("unknown dtype"))?;
        let form = super::tables::case_form(spec.template, op)
            .ok_or_else(|| err("the catalogue has no cases for this op"))?;
        let (shape_dtype, dims, layout) = parse_shape(shape).ok_or_else(|| err("bad shape"))?;
        if shape_dtype != dtype {
            return Err(err("the shape's dtype differs from the dtype segment"));
        }
        let (dist, param) = match variant.split_once('.') {
            Some((d, p)) => (d, Some(p)),
            None => (*variant, None),
        };
        let names = case_params(spec, op, form, dtype);
        let shape_idx = if spec.shapes == CONFIG_SET {
            // the class names the shape: its index is the class's
            let class = param.ok_or_else(|| err("the variant needs a parameter"))?;
            let i = names
                .iter()
                .position(|n| *n == class)
                .ok_or_else(|| err("unknown variant parameter"))?;
            if crate::programs::class_operand_dims(op, class) != dims.as_slice() {
                return Err(err("no such shape for this class"));
            }
            i
        } else if spec.shapes == FORMS_SET {
            // the row names the shape: its index is the row's
            let row = param.ok_or_else(|| err("the variant needs a parameter"))?;
            let i = names
                .iter()
                .position(|n| *n == row)
                .ok_or_else(|| err("unknown variant parameter"))?;
            if crate::programs::forms_operand_dims(op) != dims.as_slice() {
                return Err(err("no such shape for this op's operand forms"));
            }
            i
        } else {
            shapes(form, spec.shapes)
                .iter()
                .position(|d| *d == dims.as_slice())
                .ok_or_else(|| err("no such shape in this property"))?
        };
        let layout_idx = match layout {
            None => 0,
            Some(l) => layouts(dims.len())
                .iter()
                .position(|m| *m == l.as_slice())
                .ok_or_else(|| err("no such layout in this property"))?,
        };
        let dist = Distribution::from_name(dist).ok_or_else(|| err("unknown distribution"))?;
        let param = match (param, names.is_empty()) {
            (None, true) => 0,
            (Some(p), false) => names
                .iter()
                .position(|n| *n == p)
                .ok_or_else(|| err("unknown variant parameter"))?,
            (None, false) => return Err(err("the variant needs a parameter")),
            (Some(_), true) => return Err(err("this op takes no variant parameter")),
        };
        let key = CaseKey {
            property: property as u16,
            op,
            dtype,
            shape: shape_idx as u16,
            layout: layout_idx as u8,
            dist,
            param: param as u16,
        };
        match &full_spaces()[property] {
            Ok(space) if space.index_of(&key).is_some() => Ok(key),
            Ok(_) => Err(err("not a case of this property")),
            Err(e) => Err(err(&e.to_string())),
        }
    }
}

impl FromStr for CaseId {
    type Err = ParseCaseIdError;
    fn from_str(name: &str) -> Result<CaseId, ParseCaseIdError> {
        let (key, backend) = name.rsplit_once("::").ok_or_else(|| ParseCaseIdError {
            name: name.to_string(),
            why: "expected property::op::dtype::shape::variant::backend".to_string(),
        })?;
        if backend.is_empty() {
            return Err(ParseCaseIdError {
                name: name.to_string(),
                why: "empty backend name".to_string(),
            });
        }
        let key: CaseKey = key
            .parse()
            .map_err(|e: ParseCaseIdError| ParseCaseIdError {
                name: name.to_string(),
                why: e.why,
            })?;
        Ok(CaseId {
            key,
            backend: BackendId::intern(backend),
        })
    }
}

/// `1,2,3` (or nothing) as integers; None if one is not an integer.
fn int_list(text: &str) -> Option<Vec<i64>> {
    if text.is_empty() {
        return Some(Vec::new());
    }
    text.split(',').map(|d| d.parse::<i64>().ok()).collect()
}
