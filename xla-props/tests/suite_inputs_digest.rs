//! The suite's case inputs are pinned: a digest of the modules and inputs of
//! a sample of every built-in property's cases (about 200 each), and of a
//! few random programs, must not change when the input generator is
//! reworked. The digests were taken on main at eb11122, before the input
//! generators were merged into one; a change to them means every suite
//! case's inputs changed and the whole suite must be re-triaged on every
//! backend (issue 32).

use xla_props::backend::Unavailable;
use xla_props::literal::Literal;
use xla_props::property::{
    registry, BackendId, CaseContext, CaseSpace, Fnv, ReferenceCache, SpaceFilter,
};

/// Cases sampled per property (evenly spaced over its space).
const PER_PROPERTY: u64 = 200;

fn hash_literal(h: &mut Fnv, lit: &Literal) {
    h.write(format!("{:?}", lit.shape()).as_bytes());
    h.write_elements(lit);
}

/// The digest of every sampled case of one property, and how many cases
/// had inputs (so that a digest of nothing cannot pass).
fn property_digest(index: usize) -> Option<(u64, usize)> {
    let spec = &registry()[index];
    let space = CaseSpace::new(index as u16, spec, &SpaceFilter::default()).ok()?;
    let backend = Unavailable::new("interpreter", "digest");
    let id = BackendId::intern("interpreter");
    let step = (space.len() / PER_PROPERTY).max(1);
    let mut h = Fnv::new();
    let mut with_inputs = 0;
    let mut i = 0;
    while i < space.len() {
        let case = space.case(i, id)?;
        let cache = ReferenceCache::new();
        let mut ctx = CaseContext::new(case, &backend, &backend, &cache, 1, 0);
        h.write(case.to_string().as_bytes());
        match ctx.module() {
            Ok(m) => h.write(m.to_string().as_bytes()),
            Err(_) => h.write(b"no module"),
        }
        match ctx.inputs() {
            Ok(args) => {
                with_inputs += 1;
                for a in args {
                    hash_literal(&mut h, a);
                }
            }
            Err(_) => h.write(b"no inputs"),
        }
        i += step;
    }
    Some((h.finish(), with_inputs))
}

#[test]
fn suite_case_inputs_are_unchanged() {
    let mut got = Vec::new();
    let mut total = 0;
    for (index, spec) in registry().iter().enumerate() {
        if !spec.is_builtin() {
            continue;
        }
        if let Some((digest, n)) = property_digest(index) {
            total += n;
            got.push(format!("{} {digest:016x} {n}", spec.name));
        }
    }
    assert!(total >= 2000, "only {total} cases had inputs");
    let got = got.join("\n");
    let want = include_str!("data/suite_inputs_digest.txt").trim_end();
    assert_eq!(
        got, want,
        "the suite's case inputs changed (every case must be re-triaged); got:\n{got}"
    );
}

#[test]
fn random_programs_are_unchanged() {
    let mut h = Fnv::new();
    for seed in 0..64 {
        match xla_props::programs::random_program(seed, 12) {
            Ok(m) => h.write(m.to_string().as_bytes()),
            Err(e) => h.write(e.to_string().as_bytes()),
        }
    }
    assert_eq!(format!("{:016x}", h.finish()), RANDOM_PROGRAMS);
}

/// The digest of `random_program(0..64, 12)` at eb11122.
const RANDOM_PROGRAMS: &str = "a16f5394369be152";
