//! `xla_props::main!`: a test target's `main` in one line.

/// Declares `main`: the harness over the test target's own properties.
///
/// `xla_props::main!()` runs them on the registry's available backends (the
/// reference and the interpreter; a real compiler such as `xla-cpu` when
/// `--backend` or `XLA_PROPS_BACKENDS` names it). Given backends, it runs
/// them on those. Put it in a test target with `harness = false`:
///
/// ```toml
/// [[test]]
/// name = "my_props"
/// harness = false
/// ```
///
/// ```no_run
/// use xla_props::backend::Unavailable;
/// xla_props::main!(Unavailable::new("my-compiler", "not installed here"));
/// ```
#[macro_export]
macro_rules! main {
    () => {
        fn main() -> ::std::process::ExitCode {
            $crate::Harness::from_args().available_backends().run()
        }
    };
    ($($backend:expr),+ $(,)?) => {
        fn main() -> ::std::process::ExitCode {
            $crate::Harness::from_args()$(.backend($backend))+.run()
        }
    };
}
