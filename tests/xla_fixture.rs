//! A harness over the built-in properties whose backends are the real
//! xla-cpu with ONE deliberate abort inside its worker process
//! (`xla-cpu-abort-once`: the first `negate` case it compiles sends XLA a
//! compile request without options, which CHECK-fails in XLA and kills the
//! worker) plus the registry's backends as `cargo test --test conformance`
//! gets them (so a named but unavailable one, such as `xla-gpu` without a
//! GPU, joins as unavailable). tests/xla_harness.rs drives it with
//! `XLA_PROPS_FIXTURE=1`; run by `cargo test` without that variable it has
//! no tests (its failure is the point, not a regression).

use std::sync::atomic::{AtomicBool, Ordering};

use xla_props::backend::xla::{to_backend_error, XlaBackend, XlaPlugin};
use xla_props::backend::{Backend, BackendError, Executable};
use xla_props::check::Numerics;
use xla_props::hlo::{Module, Opcode};

/// xla-cpu, except that the first `negate` module aborts the worker.
struct AbortOnce {
    inner: XlaBackend,
    armed: AtomicBool,
}

const NAME: &str = "xla-cpu-abort-once";

impl Backend for AbortOnce {
    fn name(&self) -> &str {
        NAME
    }
    fn numerics(&self) -> Numerics {
        self.inner.numerics()
    }
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        let entry = module.entry_computation();
        let root = entry.instr(entry.root).opcode;
        if root == Opcode::Negate && self.armed.swap(false, Ordering::SeqCst) {
            let exe = self
                .inner
                .compile_module(module)
                .map_err(|e| to_backend_error(NAME, e))?;
            // XLA aborts the process on a compile without options
            // (`Check failed: replica_count > 0`): the worker dies here.
            return match self.inner.debug_compile_without_options(exe.mlir()) {
                Err(e) => Err(to_backend_error(NAME, e)),
                Ok(()) => Err(BackendError::Execute(
                    "the deliberate abort did not happen: XLA compiled without options".into(),
                )),
            };
        }
        self.inner.compile(module)
    }
}

fn main() -> std::process::ExitCode {
    // also serves the XLA worker processes (`__xla-worker`)
    let harness = xla_props::Harness::from_args().with_builtins();
    if std::env::var_os("XLA_PROPS_FIXTURE").is_none() {
        let args = libtest_mimic::Arguments::from_args();
        return libtest_mimic::run(&args, Vec::new()).exit_code();
    }
    harness
        .backend(AbortOnce {
            inner: XlaBackend::new(XlaPlugin::Cpu),
            armed: AtomicBool::new(true),
        })
        .available_backends()
        .run()
}
