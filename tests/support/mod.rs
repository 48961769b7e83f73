//! A small fixture for the runner tests: two properties over a few ops, a
//! tiny exact evaluator as the reference, a correct backend and a buggy one.
#![allow(dead_code)]

use xla_props::backend::{Backend, BackendError, Executable};
use xla_props::hlo::{ElementType, Module, Opcode};
use xla_props::literal::Literal;
use xla_props::property::{CaseContext, Outcome};
use xla_props::xla_property;

/// What the buggy backend gets wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bugs {
    None,
    /// s8 subtract computes add; f32 add is off by one; f32 negate panics; abs is unsupported.
    Some,
}

pub struct TinyEval {
    pub name: &'static str,
    pub bugs: Bugs,
}

struct Exe {
    op: Opcode,
    bugs: Bugs,
}

impl Backend for TinyEval {
    fn name(&self) -> &str {
        self.name
    }
    fn compile(&self, module: &Module) -> Result<Box<dyn Executable>, BackendError> {
        let entry = module.entry_computation();
        let op = entry.instr(entry.root).opcode;
        if !matches!(
            op,
            Opcode::Add | Opcode::Subtract | Opcode::Negate | Opcode::Abs
        ) {
            return Err(BackendError::unsupported(format!("op {op}")));
        }
        if self.bugs == Bugs::Some && op == Opcode::Abs {
            return Err(BackendError::unsupported("abs is not implemented"));
        }
        Ok(Box::new(Exe {
            op,
            bugs: self.bugs,
        }))
    }
}

impl Executable for Exe {
    fn execute(&self, args: &[Literal]) -> Result<Vec<Literal>, BackendError> {
        let x = &args[0];
        let t = x.dtype();
        let mut out = x.clone();
        for i in 0..x.element_count() {
            let buggy = self.bugs == Bugs::Some;
            if t == ElementType::S8 {
                let a = x.get_i128(i);
                let v = match self.op {
                    Opcode::Add => a + args[1].get_i128(i),
                    Opcode::Subtract if buggy => a + args[1].get_i128(i),
                    Opcode::Subtract => a - args[1].get_i128(i),
                    Opcode::Negate => -a,
                    _ => a.abs(),
                };
                out.set_i128(i, v);
            } else {
                let a = x.get_f64(i);
                let v = match self.op {
                    Opcode::Add if buggy => a + args[1].get_f64(i) + 1.0,
                    Opcode::Add => a + args[1].get_f64(i),
                    Opcode::Subtract => a - args[1].get_f64(i),
                    Opcode::Negate if buggy => panic!("negate exploded"),
                    Opcode::Negate => -a,
                    _ => a.abs(),
                };
                // f32 arithmetic of f32 inputs is exact in f64 and rounds once
                out.set_f64(i, v);
            }
        }
        Ok(vec![out])
    }
}

#[xla_property(
    ops = [add, subtract, negate, "abs"],
    dtypes = [f32, s8],
    shapes = small,
    distributions = [uniform],
    layouts = default,
    tolerance = exact,
    // run by tests/fixture.rs; the other tests link it only to parse case names
    harness_check = false,
    limitations = [
        skip(op = negate, dtype = s8, backend = "buggy", reason = "fixture: skipped by limitation"),
        xfail(op = add, dtype = f32, backend = "buggy", reason = "fixture: known off-by-one"),
    ]
)]
pub fn fixture_vs_ref(ctx: &mut CaseContext<'_>) -> Outcome {
    ctx.compare_with_reference()
}

#[xla_property(
    ops = [add],
    dtypes = [f32],
    shapes = small,
    distributions = default,
    budget = 4,
    harness_check = false
)]
pub fn fixture_draw(ctx: &mut CaseContext<'_>) -> Outcome {
    let n = ctx.draw(1u32..10);
    if (1..10).contains(&n) {
        Outcome::Pass
    } else {
        Outcome::fail(format!("drew {n} outside 1..10"))
    }
}

pub fn harness(args: impl IntoIterator<Item = String>) -> xla_props::Harness {
    xla_props::Harness::from_iter(args, |k| std::env::var(k).ok())
        .without_builtins()
        .reference(TinyEval {
            name: "reference",
            bugs: Bugs::None,
        })
        .backend(TinyEval {
            name: "good",
            bugs: Bugs::None,
        })
        .backend(TinyEval {
            name: "buggy",
            bugs: Bugs::Some,
        })
}

/// The executable of the harness-less test target `name` (a fixture harness
/// driven by another test): asks cargo to build it (a no-op when built) for
/// the profile of the running test, else takes the newest `name-*` beside it.
pub fn test_binary(name: &str) -> std::path::PathBuf {
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::process::Command;
    use std::sync::{Mutex, OnceLock};
    static PATHS: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut paths = PATHS.get_or_init(Default::default).lock().unwrap();
    if let Some(p) = paths.get(name) {
        return p.clone();
    }
    let found = || -> PathBuf {
        if let Ok(cargo) = std::env::var("CARGO") {
            let release = std::env::current_exe()
                .is_ok_and(|e| e.components().any(|c| c.as_os_str() == "release"));
            let mut args = vec!["build", "--test", name, "--message-format=json", "-q"];
            if release {
                args.push("--release");
            }
            let out = Command::new(cargo)
                .args(&args)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .expect("cargo runs");
            let text = String::from_utf8_lossy(&out.stdout);
            for line in text.lines() {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                    if v["target"]["name"] == name {
                        if let Some(exe) = v["executable"].as_str() {
                            return PathBuf::from(exe);
                        }
                    }
                }
            }
        }
        let deps = std::env::current_exe()
            .unwrap()
            .parent()
            .unwrap()
            .to_path_buf();
        let prefix = format!("{name}-");
        let mut found: Vec<PathBuf> = std::fs::read_dir(&deps)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&prefix)
                    && p.extension().is_none()
            })
            .collect();
        found.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
        found
            .pop()
            .unwrap_or_else(|| panic!("the {name} test binary is built"))
    }();
    paths.insert(name.to_string(), found.clone());
    found
}

/// Removes from `cmd` the runner's environment twins of its flags, and the
/// Bazel and Kubernetes sharding protocol, so that the outer run's settings
/// do not leak into a nested one.
pub fn without_runner_env(cmd: &mut std::process::Command) -> &mut std::process::Command {
    for var in [
        "XLA_PROPS_OPS",
        "XLA_PROPS_DTYPES",
        "XLA_PROPS_BACKENDS",
        "XLA_PROPS_SHARD",
        "XLA_PROPS_SHARDS",
        "JOB_COMPLETION_INDEX",
        "XLA_PROPS_SEED",
        "XLA_PROPS_JUNIT",
        "XLA_PROPS_JSON",
        "XLA_PROPS_PROGRESS",
        "XML_OUTPUT_FILE",
        "TEST_SHARD_INDEX",
        "TEST_TOTAL_SHARDS",
        "TEST_SHARD_STATUS_FILE",
        "TESTBRIDGE_TEST_ONLY",
    ] {
        cmd.env_remove(var);
    }
    cmd
}
