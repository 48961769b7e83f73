//! The lazy case space: a deterministic product op × dtype × shape × layout ×
//! distribution × parameter (comparison direction, conversion target, fusion
//! follower, ...). Counting and indexing never materialize cases.

use std::collections::HashMap;

use super::groups::{
    accepted_dtypes, distribution_group, dtype_group, op_group, CONFIG_SET, FORMS_SET, SHAPE_SETS,
};
use super::id::{BackendId, CaseId, CaseKey};
use super::spec::{PropertySpec, Selection, Template};
use super::tables::*;
use crate::hlo::{ElementType, Opcode};
use crate::inputs::Distribution;
use crate::programs::Form;

/// Restricts a case space (from `--op`/`--dtype`); empty lists restrict nothing.
#[derive(Clone, Debug, Default)]
pub struct SpaceFilter {
    /// Keep only these ops.
    pub ops: Vec<Opcode>,
    /// Keep only these dtypes.
    pub dtypes: Vec<ElementType>,
}

/// One (op, dtype) block of a property's cases.
#[derive(Clone, Debug)]
struct Section {
    op: Opcode,
    dtype: ElementType,
    /// (shape index, layout index) pairs; for a tied section (attribute
    /// classes) (class index, layout index), one per class.
    shapes: Vec<(u16, u8)>,
    dists: Vec<Distribution>,
    params: &'static [&'static str],
    /// The parameter is the class the shape entry names (not a product with it).
    tied: bool,
    /// One distribution per shape entry (operand-form rows), instead of the
    /// product with `dists`; empty otherwise.
    entry_dists: Vec<Distribution>,
    /// Index of the first case of this section.
    start: u64,
}

impl Section {
    fn nparams(&self) -> u64 {
        if self.tied {
            1
        } else {
            self.params.len().max(1) as u64
        }
    }
    fn variants(&self) -> u64 {
        if !self.entry_dists.is_empty() {
            return 1;
        }
        self.dists.len() as u64 * self.nparams()
    }
    fn count(&self) -> u64 {
        self.shapes.len() as u64 * self.variants()
    }
}

/// The cases of one property (for any backend), counted and indexed lazily.
///
/// ```
/// use xla_props::property::{find_property, CaseSpace, SpaceFilter};
/// let (idx, spec) = find_property("vs_reference").unwrap();
/// let space = CaseSpace::new(idx, spec, &SpaceFilter::default()).unwrap();
/// assert!(space.len() > 10_000);
/// let key = space.get(1234).unwrap();
/// assert_eq!(space.index_of(&key), Some(1234));
/// ```
#[derive(Clone, Debug)]
pub struct CaseSpace {
    property: u16,
    spec: &'static PropertySpec,
    sections: Vec<Section>,
    by_pair: HashMap<(Opcode, ElementType), usize>,
    natural: u64,
}

/// Why a property's selections do not resolve.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SpaceError {
    /// An unknown group or name in a selection.
    #[error("property `{property}`: unknown {what} `{name}`")]
    Unknown {
        /// The property.
        property: String,
        /// What kind of name.
        what: &'static str,
        /// The name.
        name: String,
    },
}

/// The members of one of `spec`'s selections (`what`: "op", "dtype",
/// "distribution"): a named group, or a list of names, each of which must be
/// known.
fn resolve<T>(
    spec: &PropertySpec,
    what: &'static str,
    selection: Selection,
    group: impl Fn(&str) -> Option<Vec<T>>,
    named: impl Fn(&str) -> Option<T>,
) -> Result<Vec<T>, SpaceError> {
    let unknown = |name: &str| SpaceError::Unknown {
        property: spec.name.to_string(),
        what,
        name: name.to_string(),
    };
    match selection {
        Selection::Group(g) => group(g).ok_or_else(|| unknown(g)),
        Selection::List(names) => names
            .iter()
            .map(|n| named(n).ok_or_else(|| unknown(n)))
            .collect(),
    }
}

impl CaseSpace {
    /// The case space of property number `property` (its index in [`super::registry`]).
    pub fn new(
        property: u16,
        spec: &'static PropertySpec,
        filter: &SpaceFilter,
    ) -> Result<CaseSpace, SpaceError> {
        let ops = resolve(spec, "op", spec.ops, op_group, |n| n.parse().ok())?;
        let dtypes = resolve(
            spec,
            "dtype",
            spec.dtypes,
            |g| dtype_group(g).map(<[_]>::to_vec),
            |n| n.parse().ok(),
        )?;
        let dists = resolve(
            spec,
            "distribution",
            spec.distributions,
            |g| distribution_group(g).map(<[_]>::to_vec),
            Distribution::from_name,
        )?;
        if !SHAPE_SETS.contains(&spec.shapes) {
            return Err(SpaceError::Unknown {
                property: spec.name.to_string(),
                what: "shape set",
                name: spec.shapes.to_string(),
            });
        }
        let mut sections = Vec::new();
        let mut start = 0u64;
        for op in ops {
            if !filter.ops.is_empty() && !filter.ops.contains(&op) {
                continue;
            }
            let Some(form) = case_form(spec.template, op) else {
                continue;
            };
            if spec.template == Template::ElementwiseChain
                && (form != Form::Elementwise || op == Opcode::IsFinite)
            {
                continue;
            }
            let accepted = accepted_dtypes(op).dtypes;
            for &dtype in &dtypes {
                if (form != Form::Program && !accepted.contains(&dtype))
                    || (!filter.dtypes.is_empty() && !filter.dtypes.contains(&dtype))
                {
                    continue;
                }
                let tied = spec.shapes == CONFIG_SET || spec.shapes == FORMS_SET;
                let mut shape_entries = Vec::new();
                let mut entry_dists = Vec::new();
                if spec.shapes == CONFIG_SET {
                    shape_entries = class_entries(op, dtype, spec.layouts);
                }
                if spec.shapes == FORMS_SET {
                    for (row, layout, dist) in form_entries(op, dtype, spec.layouts, &dists) {
                        shape_entries.push((row, layout));
                        entry_dists.push(dist);
                    }
                }
                for (si, dims) in shapes(form, spec.shapes).iter().enumerate() {
                    if spec.shapes == "exhaustive" && !is_exhaustive_shape(dims, dtype) {
                        continue;
                    }
                    for li in layout_indices(dims.len(), spec.layouts) {
                        shape_entries.push((si as u16, li as u8));
                    }
                }
                let section_dists = if form == Form::Iota {
                    dists.iter().copied().take(1).collect()
                } else {
                    dists.clone()
                };
                let section = Section {
                    op,
                    dtype,
                    shapes: shape_entries,
                    dists: section_dists,
                    params: case_params(spec, op, form, dtype),
                    tied,
                    entry_dists,
                    start,
                };
                if section.count() == 0 {
                    continue;
                }
                start += section.count();
                sections.push(section);
            }
        }
        let by_pair = sections
            .iter()
            .enumerate()
            .map(|(i, s)| ((s.op, s.dtype), i))
            .collect();
        Ok(CaseSpace {
            property,
            spec,
            sections,
            by_pair,
            natural: start,
        })
    }

    /// The property.
    pub fn spec(&self) -> &'static PropertySpec {
        self.spec
    }

    /// The property's index in the registry.
    pub fn property_index(&self) -> u16 {
        self.property
    }

    /// The number of cases (per backend), after the property's budget.
    pub fn len(&self) -> u64 {
        match self.spec.budget {
            Some(b) => self.natural.min(b),
            None => self.natural,
        }
    }

    /// True when the property has no case.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn natural_of(&self, i: u64) -> u64 {
        match self.spec.budget {
            Some(b) if self.natural > b => ((i as u128 * self.natural as u128) / b as u128) as u64,
            _ => i,
        }
    }

    /// The `i`-th case, without generating anything.
    pub fn get(&self, i: u64) -> Option<CaseKey> {
        if i >= self.len() {
            return None;
        }
        let n = self.natural_of(i);
        let si = self.sections.partition_point(|s| s.start <= n) - 1;
        let s = &self.sections[si];
        let mut r = n - s.start;
        if !s.entry_dists.is_empty() {
            let (shape, layout) = s.shapes[r as usize];
            return Some(CaseKey {
                property: self.property,
                op: s.op,
                dtype: s.dtype,
                shape,
                layout,
                dist: s.entry_dists[r as usize],
                param: shape,
            });
        }
        let nparams = s.nparams();
        let mut param = r % nparams;
        r /= nparams;
        let dist = r % s.dists.len() as u64;
        r /= s.dists.len() as u64;
        let (shape, layout) = s.shapes[r as usize];
        if s.tied {
            param = u64::from(shape);
        }
        Some(CaseKey {
            property: self.property,
            op: s.op,
            dtype: s.dtype,
            shape,
            layout,
            dist: s.dists[dist as usize],
            param: param as u16,
        })
    }

    /// The index of a case in this space, or None when it is not a case of it.
    pub fn index_of(&self, key: &CaseKey) -> Option<u64> {
        if key.property != self.property {
            return None;
        }
        let s = &self.sections[*self.by_pair.get(&(key.op, key.dtype))?];
        if !s.entry_dists.is_empty() {
            let pos = (0..s.shapes.len()).find(|&i| {
                s.shapes[i] == (key.shape, key.layout) && s.entry_dists[i] == key.dist
            })?;
            if key.param != key.shape {
                return None;
            }
            return self.budgeted_index(s.start + pos as u64);
        }
        let shape_pos =
            s.shapes
                .iter()
                .position(|&(sh, l)| sh == key.shape && l == key.layout)? as u64;
        let dist_pos = s.dists.iter().position(|&d| d == key.dist)? as u64;
        let nparams = s.nparams();
        let param = if s.tied {
            if key.param != key.shape {
                return None;
            }
            0
        } else {
            u64::from(key.param)
        };
        if param >= nparams {
            return None;
        }
        let n = s.start + (shape_pos * s.dists.len() as u64 + dist_pos) * nparams + param;
        self.budgeted_index(n)
    }

    /// The index of natural case `n` after the property's budget, or None
    /// when the budget leaves it out.
    fn budgeted_index(&self, n: u64) -> Option<u64> {
        match self.spec.budget {
            Some(b) if self.natural > b => {
                let (nn, bb, nat) = (n as u128, b as u128, self.natural as u128);
                let j = (nn * bb).div_ceil(nat);
                (j < bb && j * nat / bb == nn).then_some(j as u64)
            }
            _ => Some(n),
        }
    }

    /// Every case key, in order.
    pub fn iter(&self) -> impl Iterator<Item = CaseKey> + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }

    /// Case counts per (op, dtype), for the composition summary.
    pub fn composition(&self) -> Vec<(Opcode, ElementType, u64)> {
        let budget_scale = |c: u64| match self.spec.budget {
            Some(b) if self.natural > b => ((c as u128 * b as u128) / self.natural as u128) as u64,
            _ => c,
        };
        self.sections
            .iter()
            .map(|s| (s.op, s.dtype, budget_scale(s.count())))
            .collect()
    }

    /// A case for a backend.
    pub fn case(&self, i: u64, backend: BackendId) -> Option<CaseId> {
        self.get(i).map(|key| CaseId { key, backend })
    }
}
