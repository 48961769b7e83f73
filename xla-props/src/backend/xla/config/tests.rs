//! The config format: the built-in file says what the Rust tables say, its
//! data models compute what the Rust models compute, and a bad file gets a
//! located error.

use super::*;
use crate::backend::xla::known_bugs::{XLA_CPU_0_81_KNOWN_BUGS, XLA_CPU_KNOWN_BUGS};
use crate::backend::xla::numerics::measured_xla_cpu_numerics;
use crate::backend::xla::numerics::{XLA_CPU_0_81_BUDGETS, XLA_CPU_BUDGETS};
use crate::hlo::{parse_module, ArrayShape, ElementType};
use crate::literal::Literal;

fn parse(text: &str) -> Result<Vec<DeclaredBackend>, ConfigError> {
    parse_config(
        text,
        "cfg.toml",
        BackendSource::File("cfg.toml".into()),
        Path::new("/cfg"),
    )
}

fn builtin(name: &str) -> DeclaredBackend {
    let all = parse_config(
        BUILTIN_FILE,
        BUILTIN_NAME,
        BackendSource::Builtin,
        Path::new("."),
    )
    .unwrap_or_else(|e| panic!("the built-in file is bad: {e}"));
    all.into_iter().find(|b| b.name == name).unwrap()
}

fn sorted(mut n: Numerics) -> Numerics {
    n.approximations
        .sort_by_key(|a| (a.op.name(), a.dtype.name()));
    n
}

#[test]
fn builtin_numerics_are_the_measured_tables() {
    let cpu = builtin("xla-cpu");
    assert_eq!(
        sorted(cpu.numerics),
        sorted(measured_xla_cpu_numerics(XLA_CPU_BUDGETS))
    );
    let old = builtin("xla-cpu-0.81");
    assert_eq!(
        sorted(old.numerics),
        sorted(measured_xla_cpu_numerics(XLA_CPU_0_81_BUDGETS))
    );
    assert_eq!(cpu.plugin.env.as_deref(), Some("XLA_PJRT_PLUGIN"));
    assert_eq!(old.plugin.cache_file.as_deref(), Some("xla-cpu-0.81.so"));
}

#[test]
fn builtin_known_bugs_are_the_documented_ones() {
    for (name, rust) in [
        ("xla-cpu", XLA_CPU_KNOWN_BUGS),
        ("xla-cpu-0.81", XLA_CPU_0_81_KNOWN_BUGS),
    ] {
        let data = builtin(name).known_bugs;
        let ids = |b: &[KnownBug]| {
            b.iter()
                .map(|b| (b.id, b.summary, b.documented))
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(data), ids(rust), "{name}");
    }
}

fn module(op: &str, t: &str, arity: usize) -> Module {
    let params: String = (0..arity)
        .map(|k| format!("  p{k} = {t} parameter({k})\n"))
        .collect();
    let args: Vec<String> = (0..arity).map(|k| format!("p{k}")).collect();
    let text = format!(
        "HloModule m\n\nENTRY main {{\n{params}  ROOT r = {t} {op}({})\n}}\n",
        args.join(", ")
    );
    parse_module(&text).unwrap()
}

use crate::hlo::Module;

/// Inputs of dtype `t` (`n` values): subnormals of both signs, zeros,
/// normals, infinities and NaN, mixed across operands.
fn edge_inputs(t: ElementType, n: usize, arity: usize) -> Vec<Literal> {
    let f: &[f64] = &[
        1e-40,
        -1e-40,
        3e-39,
        -5e-45,
        0.0,
        -0.0,
        1.5,
        -2.25,
        1e-310,
        -4e-320,
        8.0,
        f64::INFINITY,
        f64::NAN,
        1e-38,
        0.5,
        -1e-41,
    ];
    let ints: &[i128] = &[5, -1, -1, 2, 3, -3, 1, 0, 7, 64, 65, -128, 100, 2, 127, -5];
    (0..arity)
        .map(|k| {
            let shape = ArrayShape::new(t, vec![n as i64]);
            if t.is_integer() {
                let v: Vec<i128> = (0..n)
                    .map(|i| {
                        let x = ints[(i + 5 * k) % ints.len()];
                        if t.name().starts_with('u') {
                            x.rem_euclid(1i128 << t.bit_width())
                        } else {
                            x
                        }
                    })
                    .collect();
                Literal::from_i128s(&shape, &v).unwrap()
            } else {
                let v: Vec<f64> = (0..n).map(|i| f[(i * (k + 1) + 3 * k) % f.len()]).collect();
                Literal::from_f64s(&shape, &v).unwrap()
            }
        })
        .collect()
}

#[test]
fn data_models_compute_what_the_rust_models_compute() {
    use ElementType::*;
    let cases: &[(&str, usize, &[ElementType])] = &[
        ("power", 2, &[S8, S16, S32, U8, U16, U64, F32, Bf16, F64]),
        ("log", 1, &[F32, F64, Bf16]),
        ("cbrt", 1, &[F32, Bf16, F64]),
        ("atan2", 2, &[F32, Bf16, F64]),
        ("add", 2, &[F32]),
    ];
    let mut compared = 0;
    for (name, rust) in [
        ("xla-cpu", XLA_CPU_KNOWN_BUGS),
        ("xla-cpu-0.81", XLA_CPU_0_81_KNOWN_BUGS),
    ] {
        let data = builtin(name).known_bugs;
        for (d, r) in data.iter().zip(rust) {
            for &(op, arity, dtypes) in cases {
                for &t in dtypes {
                    let m = module(op, &format!("{}[16]", t.name()), arity);
                    let (dm, rm) = (d.model.apply(&m), r.model.apply(&m));
                    assert_eq!(dm.is_some(), rm.is_some(), "{}: {op} {t}", d.id);
                    let (Some(dm), Some(rm)) = (dm, rm) else {
                        continue;
                    };
                    let args = edge_inputs(t, 16, arity);
                    let got = crate::reference::evaluate(&dm, &args).unwrap()[0].to_bits_vec();
                    let want = crate::reference::evaluate(&rm, &args).unwrap()[0].to_bits_vec();
                    assert_eq!(got, want, "{}: {op} {t}", d.id);
                    compared += 1;
                }
            }
        }
    }
    assert!(compared >= 15, "only {compared} models compared");
}

#[test]
fn a_user_file_declares_a_plugin_with_numerics_and_bugs() {
    let text = r#"
[backend.my-xla]
plugin = "lib/plugin.so"
compile_options = { xla_flags = ["--xla_cpu_enable_fast_min_max=false"] }
create_options = { cpu_device_count = 1, name = "x" }
numerics = { flush_inputs = ["f32"], fast_min_max = true, approximations = [{ op = "exponential", dtype = "f32", budget = { ulp = 2 } }] }

[[backend.my-xla.known_bugs]]
id = "my/cbrt"
summary = "cbrt of a subnormal"
url = "https://example.com/1"
model = [{ kind = "subnormal-inputs-give", op = "cbrt", dtypes = ["f32"], inputs = "nonzero", value = -1.0 }]
"#;
    let all = parse(text).unwrap();
    assert_eq!(all.len(), 1);
    let b = &all[0];
    assert_eq!(b.name, "my-xla");
    assert_eq!(
        b.plugin.path.as_deref(),
        Some(Path::new("/cfg/lib/plugin.so"))
    );
    assert_eq!(
        b.compile_options.xla_flags,
        ["--xla_cpu_enable_fast_min_max=false"]
    );
    assert_eq!(b.create_options["cpu_device_count"], CreateOption::Int(1));
    assert_eq!(b.numerics.flush_inputs, [ElementType::F32]);
    assert!(b.numerics.fast_min_max && !b.numerics.reassociates_reductions);
    assert_eq!(
        b.numerics
            .budget(crate::hlo::Opcode::Exponential, ElementType::F32),
        Some(crate::check::ErrorBudget::ulp(2))
    );
    assert_eq!(b.known_bugs[0].documented, "https://example.com/1");
    assert!(b
        .plugin
        .locate()
        .unwrap_err()
        .contains("/cfg/lib/plugin.so"));
}

fn error_of(text: &str) -> String {
    parse(text)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_else(|| panic!("accepted:\n{text}"))
}

#[test]
fn a_bad_file_gets_a_located_error() {
    // (file, where the error points, what it says)
    let cases = [
        ("[backend.a]\nplugin = \"p.so\"\nnumerics = {\n", "cfg.toml:3: ", ""),
        ("[backend.a]\nplugin = \"p.so\"\n\n[backend.a.numerics]\nflush_input = [\"f32\"]\n", "cfg.toml:5: ", "flush_input"),
        ("[backend.a]\nplugin = \"p.so\"\nnumerics = { flush_inputs = [\"f33\"] }\n", "cfg.toml:3: ", "f33"),
        ("[backend.a]\nplugin = \"p.so\"\n\n[[backend.a.known_bugs]]\nid = \"x\"\nsummary = \"s\"\ndocumented = \"d\"\nmodel = [{ kind = \"teleport\" }]\n", "cfg.toml:8: ", "teleport"),
        ("[backend.a]\nplugin = \"p.so\"\n\n[[backend.a.known_bugs]]\nid = \"x\"\nsummary = \"s\"\ndocumented = \"d\"\nmodel = [{ kind = \"integer-power-low-bits\", bits = 0 }]\n", "cfg.toml:4: ", "bits must be 1 to 63"),
        ("[backend.a]\nplugin = \"p.so\"\n[[backend.a.known_bugs]]\nid = \"x\"\nsummary = \"s\"\ndocumented = \"d\"\nmodel = [{ kind = \"subnormal-operand-is\", op = \"cbrt\", dtypes = [\"f32\"], operand = 1, inputs = \"positive\", value = 0.0 }]\n", "cfg.toml:3: ", "no operand 1"),
        ("\n[backend.a]\nplugin = \"p.so\"\npython_package = \"jax_plugins.x\"\n", "cfg.toml:2: ", "not both"),
    ];
    for (text, at, says) in cases {
        let e = error_of(text);
        assert!(e.starts_with(at) && e.contains(says), "{e}");
    }
    let none = "[backend.a]\nnumerics = {}\n";
    assert!(error_of(none).contains("missing `plugin`"));
    let builtin_name = "[backend.interpreter]\nplugin = \"p.so\"\n";
    assert!(error_of(builtin_name).contains("is built in"));
}

#[test]
fn an_unreadable_file_says_so() {
    let e = load_config_file(Path::new("/nonexistent/xla-props.toml")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/xla-props.toml:0: cannot read"),
        "{e}"
    );
}
