//! The random-program loop: generate a well-typed program (`programs`),
//! legal inputs (`inputs`), run it on the reference and a backend, judge the
//! pair (`check::Judge`), minimize a failure (`isolate`) and write it as a
//! `.hlotest` reproducer; and the differential glue that program properties
//! share with it (run both sides, judge them).

mod differential;
mod run;

pub use differential::{differential, judge_runs, Differential};
pub use run::{
    fuzz, hlotest_inline_text, hlotest_text, judge_instruction, program_distribution,
    program_seeds, FuzzError, FuzzOptions, FuzzProgress, FuzzReport, INPUT_MIX,
};
