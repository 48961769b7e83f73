//! Isolation: from a module on which a backend disagrees with the reference
//! down to the culprit fusion and the first diverging instruction inside it
//! (keeping the fusion whole), then a minimized reproducer guarded by a
//! failure signature.
//!
//! The stages are separate modules (the module surgery they share is
//! `hlo::rewrite`): `judge`
//! (both sides and the verdict), `deep` (every top-level instruction on the
//! reference's values, even when the output agrees), `certificate` and
//! `own_run` (why an output departs when no unit does), `localize` (the top-level culprit),
//! `inside` (the instruction inside the fusion), `minimize` (reduction
//! passes), `session` (the whole run and its report) and `report` (files).

mod certificate;
mod deep;
pub(crate) mod inside;
mod localize;
mod loop_steps;
mod minimize;
mod own_run;
mod passes;
mod passes_report;
mod session;
pub(crate) mod sides;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod writeup;

pub use crate::hlo::rewrite::{
    dead_code_eliminated, expose_values, extract_batch, extract_instruction, extract_region,
    find_instruction, inline_fusion, move_fusion_root, Batch, Extracted,
};
pub use certificate::{
    certify, explain_departure, explain_departure_on, grow_departing_region, known_bugs_in_own_run,
    Basis, Certificate, Departure, Explanation,
};
pub use deep::{
    deep_check, known_bugs_of_unit, CulpritLocation, DeepCheck, LocalDisagreement,
    MAX_LOOKED_INSIDE,
};
pub use inside::{
    by_moved_root, by_probe, look_inside, vanishes_when_split, Fused, Inside, InsideMethod,
};
pub use localize::{candidates, is_candidate, localize, LocalizeError, Located, BATCH_SIZE};
pub use minimize::{
    tidy, Case, Minimized, Minimizer, Step, MAX_ATTEMPTS, MAX_CONSTANT_ELEMENTS, PASSES,
};
pub use passes::{
    bisect_passes, candidate_passes, CulpritHlo, PassBisectError, PassBisectOptions, PassBisection,
    PassVerdict, Probe, ProbeResult, MAX_CHANGES_SHOWN, MAX_PROBES,
};
pub use session::{isolate, isolate_on, IsolateError, Isolated, Isolation, Options, Report};
pub use sides::{judge_module, judge_outputs, Oracle, Tested};
pub use writeup::write_report_files;

#[cfg(test)]
mod tests;
