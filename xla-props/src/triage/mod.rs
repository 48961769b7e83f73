//! Triage: from many failures to a few bugs. Each failure (a reproducer, a
//! failing case of a run's results, a plain module) is isolated on its own
//! arguments, its compiler pass bisected where the backend allows, and the
//! failures are grouped by root cause ([`RootCause`]: the culprit's opcode,
//! dtype class and operand forms, the mismatch, the pass, a known bug);
//! each group keeps its smallest member's minimized reproducer.

mod analyze;
mod cause;
mod collect;
mod forms;
mod group;
mod markdown;
mod run;

pub use analyze::{Member, TriageOptions};
pub use cause::{dtype_class, operand_form, RootCause};
pub use collect::{collect, CollectError, Failure, NotTriaged};
pub use group::{Group, Triage};
pub use markdown::{markdown, MAX_MEMBERS_LISTED};
pub use run::triage;
