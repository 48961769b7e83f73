//! What makes shards one run: the case space the unsharded run would select
//! (its selection, recorded so a merge can list it again, and an
//! order-independent hash of its names), and the shard a process ran.

use std::collections::BTreeSet;

use super::args::{RunnerArgs, Shard};
use crate::property::{find_property, BackendId, CaseId, CaseSpace, Fnv, SpaceFilter};
pub use crate::report::{CaseSelection, CaseSpaceId, ShardInfo};

impl From<Shard> for ShardInfo {
    fn from(s: Shard) -> ShardInfo {
        ShardInfo {
            index: s.index + 1,
            total: s.total,
        }
    }
}

impl std::fmt::Display for ShardInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.total)
    }
}

/// An order-independent hash of a set of case names: the same for the names
/// in any order (so equal to hashing them sorted), accumulated one name at a
/// time, with no list kept.
///
/// ```
/// use xla_props::runner::CaseSpaceHash;
/// let (mut a, mut b) = (CaseSpaceHash::default(), CaseSpaceHash::default());
/// ["p::add::x", "p::sub::x"].iter().for_each(|n| a.add(n));
/// ["p::sub::x", "p::add::x"].iter().for_each(|n| b.add(n));
/// assert_eq!(a.hex(), b.hex());
/// b.add("p::mul::x");
/// assert_ne!(a.hex(), b.hex());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaseSpaceHash {
    lanes: [u64; 2],
    count: u64,
}

/// splitmix64's finalizer: spreads a 64-bit hash before it is summed.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl CaseSpaceHash {
    /// Adds one name.
    pub fn add(&mut self, name: &str) {
        let mut second = Fnv::new();
        second.write(b"xla-props case space\0");
        second.write(name.as_bytes());
        self.lanes[0] = self.lanes[0].wrapping_add(mix(Fnv::hash_str(name)));
        self.lanes[1] = self.lanes[1].wrapping_add(mix(second.finish()));
        self.count += 1;
    }

    /// Names added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The hash as 32 hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}{:016x}", self.lanes[0], self.lanes[1])
    }

    /// The hash of `names`.
    pub fn of<'a>(names: impl IntoIterator<Item = &'a str>) -> CaseSpaceHash {
        let mut h = CaseSpaceHash::default();
        names.into_iter().for_each(|n| h.add(n));
        h
    }
}

/// libtest's name filter: FILTER (a substring, or the whole name with
/// `--exact`) and `--skip`: true when they keep `name`.
pub(crate) fn libtest_keeps(
    filter: Option<&str>,
    skip: &[String],
    exact: bool,
    name: &str,
) -> bool {
    let matches = |pattern: &str| {
        if exact {
            name == pattern
        } else {
            name.contains(pattern)
        }
    };
    filter.is_none_or(matches) && !skip.iter().any(|p| matches(p))
}

impl CaseSelection {
    /// True when libtest's name filter and `--skip` keep `name`.
    fn by_libtest(&self, name: &str) -> bool {
        libtest_keeps(self.filter.as_deref(), &self.skip, self.exact, name)
    }

    /// Calls `f` with every case name the unsharded run selects from
    /// `spaces` (built with this selection's op and dtype filters) on `backends`.
    pub(crate) fn for_each_name(
        &self,
        spaces: &[CaseSpace],
        backends: &[BackendId],
        mut f: impl FnMut(&str),
    ) -> Result<(), String> {
        let xla_shard = match &self.xla_shard {
            Some(s) => Some(Shard::parse(s).map_err(|e| e.0)?),
            None => None,
        };
        let aligned: Vec<BackendId> = self
            .module_aligned
            .iter()
            .map(|b| BackendId::intern(b))
            .collect();
        let keep = |id: &CaseId, name: &str| {
            super::batch::in_xla_shard(xla_shard, aligned.contains(&id.backend), name)
                && self.by_libtest(name)
        };
        // `--exact NAME` (nextest's one case per process) selects that case alone
        let exact = self.filter.as_deref().filter(|_| self.exact);
        if let Some(id) = exact.and_then(|f| f.parse::<CaseId>().ok()) {
            let name = id.to_string();
            let known = backends.contains(&id.backend)
                && spaces.iter().any(|s| {
                    s.property_index() == id.key.property && s.index_of(&id.key).is_some()
                });
            if known && keep(&id, &name) {
                f(&name);
            }
            return Ok(());
        }
        let mut name = String::new();
        for space in spaces {
            for key in space.iter() {
                for &b in backends {
                    let id = key.on(b);
                    name.clear();
                    std::fmt::Write::write_fmt(&mut name, format_args!("{id}"))
                        .map_err(|e| e.to_string())?;
                    if keep(&id, &name) {
                        f(&name);
                    }
                }
            }
        }
        Ok(())
    }

    /// The case names this selection gives with the properties built into
    /// this program (the merge lists a missing shard's cases with it); an
    /// error names a property it does not know.
    pub fn expected_names(&self) -> Result<BTreeSet<String>, String> {
        let filter = SpaceFilter {
            ops: self
                .ops
                .iter()
                .map(|o| o.parse().map_err(|_| format!("unknown op `{o}`")))
                .collect::<Result<_, _>>()?,
            dtypes: self
                .dtypes
                .iter()
                .map(|d| d.parse().map_err(|_| format!("unknown dtype `{d}`")))
                .collect::<Result<_, _>>()?,
        };
        let mut spaces = Vec::new();
        for p in &self.properties {
            let (index, spec) = find_property(p)
                .ok_or_else(|| format!("property `{p}` is not built into this xla-props"))?;
            spaces.push(CaseSpace::new(index, spec, &filter).map_err(|e| e.to_string())?);
        }
        let backends: Vec<BackendId> = self.backends.iter().map(|b| BackendId::intern(b)).collect();
        let mut names = BTreeSet::new();
        self.for_each_name(&spaces, &backends, |n| {
            names.insert(n.to_string());
        })?;
        Ok(names)
    }

    /// The identity of the case space this selection gives from `spaces` on `backends`.
    pub(crate) fn identify(
        self,
        spaces: &[CaseSpace],
        backends: &[BackendId],
    ) -> Result<CaseSpaceId, String> {
        let mut hash = CaseSpaceHash::default();
        self.for_each_name(spaces, backends, |n| hash.add(n))?;
        Ok(CaseSpaceId {
            hash: hash.hex(),
            cases: hash.count(),
            selection: self,
        })
    }
}

/// The selection of a run over `spaces` and `backends` (name, whether its
/// shards are module-aligned), from its flags and libtest's.
pub(crate) fn selection_of(
    spaces: &[CaseSpace],
    backends: &[(&str, bool)],
    ours: &RunnerArgs,
    libtest: &libtest_mimic::Arguments,
    xla_shard: Option<Shard>,
) -> CaseSelection {
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    CaseSelection {
        properties: spaces.iter().map(|s| s.spec().name.to_string()).collect(),
        ops: ours.ops.iter().map(|o| o.name().to_string()).collect(),
        dtypes: ours.dtypes.iter().map(|d| d.name().to_string()).collect(),
        backends: names(&backends.iter().map(|b| b.0).collect::<Vec<_>>()),
        filter: libtest.filter.clone(),
        skip: libtest.skip.clone(),
        exact: libtest.exact,
        module_aligned: xla_shard.map_or_else(Vec::new, |_| {
            names(
                &backends
                    .iter()
                    .filter(|b| b.1)
                    .map(|b| b.0)
                    .collect::<Vec<_>>(),
            )
        }),
        xla_shard: xla_shard.map(|s| s.to_string()),
    }
}

/// A small built-in selection for tests: `vs_reference` of negate on f32,
/// on the interpreter and the reference.
#[cfg(test)]
pub(crate) fn negate_f32() -> CaseSelection {
    CaseSelection {
        properties: vec!["vs_reference".into()],
        ops: vec!["negate".into()],
        dtypes: vec!["f32".into()],
        backends: vec!["interpreter".into(), "reference".into()],
        ..CaseSelection::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_counts_and_tells_sets_apart() {
        let a = CaseSpaceHash::of(["x", "y", "z"]);
        assert_eq!(a.count(), 3);
        assert_eq!(a.hex().len(), 32);
        assert_eq!(a, CaseSpaceHash::of(["z", "x", "y"]));
        assert_ne!(a, CaseSpaceHash::of(["x", "y", "w"]));
        // a duplicate is not the same set (and not the same count)
        assert_ne!(a, CaseSpaceHash::of(["x", "y", "z", "z"]));
    }

    #[test]
    fn a_selection_lists_its_cases_again_and_the_shards_partition_them() {
        let selection = negate_f32();
        let names = selection.expected_names().expect("a built-in property");
        assert!(names.len() > 4, "{names:?}");
        assert!(names
            .iter()
            .all(|n| n.starts_with("vs_reference::negate::f32::")));
        let mut skipping = selection.clone();
        skipping.skip = vec!["::interpreter".into()];
        let fewer = skipping.expected_names().unwrap();
        assert_eq!(fewer.len() * 2, names.len());
        let mut seen = 0;
        for k in 0..3 {
            let shard = Shard { index: k, total: 3 };
            seen += names.iter().filter(|n| shard.contains(n)).count();
        }
        assert_eq!(seen, names.len());
        let unknown = CaseSelection {
            properties: vec!["no_such_property".into()],
            ..selection
        };
        let e = unknown.expected_names().unwrap_err();
        assert!(e.contains("no_such_property"), "{e}");
    }
}
