use super::*;
use crate::hlo::verify;
use crate::property::{find_property, CaseSpace, SpaceFilter};

/// Every class of every op builds, for every dtype it applies to, into a
/// module the verifier accepts, and its name parses back to the same case.
#[test]
fn every_class_builds_a_valid_module_and_round_trips() {
    let (idx, spec) = find_property("configurations").unwrap();
    let space = CaseSpace::new(idx, spec, &SpaceFilter::default()).unwrap();
    assert!(space.len() > 3000, "{} cases", space.len());
    eprintln!("configurations: {} cases", space.len());
    let mut failures = Vec::new();
    for key in space.iter() {
        let name = key.to_string();
        match build(&key) {
            Ok(built) => {
                if let Err(e) = verify(&built.module) {
                    failures.push(format!("{name}: {e}"));
                }
                assert_eq!(built.module.parameter_shapes().len(), built.roles.len());
            }
            Err(e) => failures.push(e.to_string()),
        }
        let back: CaseKey = name.parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, key);
    }
    assert!(
        failures.is_empty(),
        "{} failures: {:#?}",
        failures.len(),
        &failures[..failures.len().min(20)]
    );
}
