use super::*;
use crate::backend::interpreter::tests::Rewritten;
use crate::backend::Interpreter;

/// A test-only miscompilation: rewrites every instruction of one opcode into another.
fn rewrite(from: Opcode, to: Opcode) -> Rewritten<impl Fn(&mut Module) + Send + Sync> {
    Rewritten::new("rewrite", move |m: &mut Module| {
        for c in &mut m.computations {
            for i in &mut c.instructions {
                if i.opcode == from {
                    i.opcode = to;
                }
            }
        }
    })
}

/// A test-only miscompilation: `convert(convert(x, narrow), wide)` becomes `x`.
fn elide_round_trip() -> Rewritten<impl Fn(&mut Module) + Send + Sync> {
    Rewritten::new("elide-round-trip", |m: &mut Module| {
        for c in &mut m.computations {
            for k in 0..c.instructions.len() {
                let ins = &c.instructions[k];
                if ins.opcode != Opcode::Convert {
                    continue;
                }
                let inner = &c.instructions[ins.operands[0].index()];
                if inner.opcode == Opcode::Convert
                    && c.instructions[inner.operands[0].index()].shape == ins.shape
                {
                    let x = inner.operands[0];
                    c.instructions[k].opcode = Opcode::Copy;
                    c.instructions[k].operands = vec![x];
                }
            }
        }
    })
}

fn options(dir: &Path, time: Duration) -> FuzzOptions {
    FuzzOptions {
        seed: 1,
        ..FuzzOptions::new(time, dir)
    }
}

/// A reproducer's text without its `//` lines: the module.
fn without_comments(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn interpreter_has_no_false_alarm() {
    let dir = tempfile::tempdir().unwrap();
    let mut calls = 0;
    let r = fuzz(
        &Interpreter::default(),
        "interpreter",
        &FuzzOptions {
            max_programs: Some(400),
            ..options(dir.path(), Duration::from_secs(10))
        },
        &mut |_| calls += 1,
    )
    .unwrap();
    assert!(calls >= 1);
    assert!(r.progress.judged > 100, "{}", r.progress);
    assert_eq!(r.progress.failures, 0, "{:?}", r.found);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

fn finds(backend: &dyn Backend, culprits: &[Opcode]) -> FuzzReport {
    let dir = tempfile::tempdir().unwrap();
    let r = fuzz(
        backend,
        backend.name(),
        &FuzzOptions {
            stop_at_first_failure: true,
            ..options(dir.path(), Duration::from_secs(60))
        },
        &mut |_| {},
    )
    .unwrap();
    let (sig, path) = r
        .found
        .first()
        .expect("the injected bug is found within 60 s");
    let text = std::fs::read_to_string(path).unwrap();
    assert!(culprits.contains(&sig.opcode), "{sig}: {text}");
    assert!(
        text.contains(&format!(
            "// run: backends={} tolerance=default inputs=",
            backend.name()
        )),
        "{text}"
    );
    assert!(text.contains("// expect: mismatch "), "{text}");
    assert!(text.contains("inputs=inline"), "{text}");
    // the reproducer fails the same way under the fuzzer's judgement on the
    // buggy backend, and not on the interpreter
    let test = crate::filetest::HloTest::parse(&text, None).unwrap();
    let body = without_comments(&text);
    let m = crate::hlo::parse_module(&body).unwrap();
    let args = test.arguments().unwrap();
    assert_eq!(
        failure_signature(backend, &m, &args).as_ref(),
        Some(sig),
        "{text}"
    );
    assert_eq!(
        failure_signature(&Interpreter::default(), &m, &args),
        None,
        "{text}"
    );
    println!(
        "{}: found {sig} after {} programs in {:?}",
        backend.name(),
        r.progress.programs,
        r.first_failure.unwrap_or_default()
    );
    r
}

#[test]
fn finds_each_rewrite_of_a_small_catalogue() {
    // (from, to, culprits the signature may name)
    let catalogue: &[(Opcode, Opcode, &[Opcode])] = &[
        (
            Opcode::Add,
            Opcode::Subtract,
            // the reducers and combiners call add too
            &[
                Opcode::Add,
                Opcode::Reduce,
                Opcode::ReduceWindow,
                Opcode::Scatter,
            ],
        ),
        (Opcode::Divide, Opcode::Multiply, &[Opcode::Divide]),
        (
            Opcode::Exponential,
            Opcode::ExponentialMinusOne,
            &[Opcode::Exponential],
        ),
        (Opcode::Tanh, Opcode::Logistic, &[Opcode::Tanh]),
        (
            Opcode::Minimum,
            Opcode::Maximum,
            &[
                Opcode::Minimum,
                Opcode::Reduce,
                Opcode::ReduceWindow,
                Opcode::Scatter,
            ],
        ),
        (Opcode::Sqrt, Opcode::Rsqrt, &[Opcode::Sqrt]),
        (Opcode::Floor, Opcode::Ceil, &[Opcode::Floor]),
    ];
    for &(from, to, culprits) in catalogue {
        finds(&rewrite(from, to), culprits);
    }
}

#[test]
fn finds_an_injected_maximum_bug() {
    let r = finds(
        &rewrite(Opcode::Maximum, Opcode::Minimum),
        &[
            Opcode::Maximum,
            Opcode::Reduce,
            Opcode::ReduceWindow,
            Opcode::Scatter,
        ],
    );
    assert!(r.first_failure.unwrap() < Duration::from_secs(60));
}

#[test]
fn finds_an_elided_round_trip() {
    finds(&elide_round_trip(), &[Opcode::Convert]);
}

#[test]
fn minimizing_shrinks_to_the_culprit() {
    let buggy = rewrite(Opcode::Tanh, Opcode::Sine);
    let m = crate::hlo::ModuleBuilder::new("m")
        .build("main", |b| {
            let x = b.parameter(crate::hlo::Shape::array(
                crate::hlo::ElementType::F32,
                vec![8],
            ))?;
            let e = b.unary(Opcode::Exponential, x)?;
            let n = b.unary(Opcode::Negate, e)?;
            let t = b.unary(Opcode::Tanh, n)?;
            let a = b.binary(Opcode::Add, t, x)?;
            b.unary(Opcode::Abs, a)
        })
        .unwrap();
    let args = generate_inputs(&m, Distribution::Uniform, 3).unwrap().args;
    let c = local_culprit(&buggy, &m, &args).unwrap();
    assert_eq!(c.signature.opcode, Opcode::Tanh);
    let min = minimize(&buggy, &m, &args, c.id, c.signature);
    // parameter, exponential, negate, tanh: the add and abs after it are gone
    let entry = min.module.entry_computation();
    assert_eq!(entry.instructions.len(), 4, "{}", min.module);
    assert_eq!(entry.instr(entry.root).opcode, Opcode::Tanh);
    // and the correct interpreter is not blamed
    assert!(local_culprit(&Interpreter::default(), &m, &args).is_none());
}

#[test]
fn random_programs_are_well_typed_and_deterministic() {
    for seed in 0..200 {
        if let Ok(m) = random_program(seed, 8) {
            verify(&m).unwrap();
            assert_eq!(m, random_program(seed, 8).unwrap());
        }
    }
}

#[test]
#[ignore = "debugging aid: XLA_PROPS_HLOTEST=FILE XLA_PROPS_BACKEND=B"]
fn explain_a_reproducer() {
    let path = std::env::var("XLA_PROPS_HLOTEST").unwrap();
    let backend = crate::backend::create(&std::env::var("XLA_PROPS_BACKEND").unwrap()).unwrap();
    let text = std::fs::read_to_string(path).unwrap();
    let test = crate::filetest::HloTest::parse(&text, None).unwrap();
    let body = without_comments(&text);
    let (m, args) = match std::env::var("XLA_PROPS_SEED") {
        Ok(seed) => {
            let seed = u64::from_str_radix(seed.trim_start_matches("0x"), 16).unwrap();
            let m = dead_code_eliminated(&random_program(seed, 8).unwrap());
            let args = generate_inputs(&m, program_distribution(seed), seed)
                .unwrap()
                .args;
            println!("{m}");
            (m, args)
        }
        Err(_) => (
            crate::hlo::parse_module(&body).unwrap(),
            test.arguments().unwrap(),
        ),
    };
    let e = run_reference(&m, &args);
    let a = Produced::from(crate::backend::run_module(backend.as_ref(), &m, &args));
    println!("expected {:?}", e.outputs().map(|o| o[0].to_f64_vec()));
    println!("actual   {:?}", a.outputs().map(|o| o[0].to_f64_vec()));
    let v = judge_instruction(&m, &args, &e, &a, &backend.numerics());
    println!("{v}");
    if let Some(c) = local_culprit(backend.as_ref(), &m, &args) {
        println!("culprit {} at {:?}", c.signature, c.id);
        for o in &c.operands {
            println!("  operand {:?}", o.to_f64_vec());
        }
        let prefix = with_root(&m, c.id).unwrap();
        println!(
            "  backend {:?}",
            Produced::from(crate::backend::run_module(backend.as_ref(), &prefix, &args))
                .outputs()
                .map(|o| o[0].to_f64_vec())
        );
        println!(
            "  reference {:?}",
            run_reference(&prefix, &args)
                .outputs()
                .map(|o| o[0].to_f64_vec())
        );
    }
}

#[test]
#[ignore = "survey: XLA_PROPS_HLOTEST_DIR=DIR with MUTATION/*.hlotest from scripts/fuzz-detection.sh"]
fn survey_reproducers_under_the_filetest_runner() {
    let dir = std::env::var("XLA_PROPS_HLOTEST_DIR").unwrap();
    let mut pass = 0;
    let mut total = 0;
    for m in std::fs::read_dir(dir).unwrap() {
        let m = m.unwrap().path();
        if !m.is_dir() {
            continue;
        }
        let name = m.file_name().unwrap().to_string_lossy().to_string();
        let backend = crate::backend::create(&format!("mutant:{name}")).unwrap();
        for f in std::fs::read_dir(&m).unwrap() {
            let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
            let test = crate::filetest::HloTest::parse(&text, None).unwrap();
            let r = crate::filetest::run_file_on(&test, backend.as_ref());
            total += 1;
            if r == crate::filetest::TrialResult::Pass {
                pass += 1;
            } else {
                println!("{name}: {r:?}");
            }
        }
    }
    println!("{pass} of {total} reproducers hold under the filetest runner");
}

#[test]
fn the_parts_of_a_sharded_campaign_grow_disjoint_programs_that_make_up_the_run() {
    for parts in [2u64, 3, 8] {
        let per_part = 400;
        let whole: BTreeSet<u64> = program_seeds(5, (0, 1), parts * per_part)
            .into_iter()
            .collect();
        assert_eq!(whole.len() as u64, parts * per_part, "seeds repeat");
        let mut union = BTreeSet::new();
        for part in 0..parts {
            for s in program_seeds(5, (part, parts), per_part) {
                assert!(
                    union.insert(s),
                    "part {part} of {parts} grows seed {s:#x} again"
                );
            }
        }
        assert_eq!(union, whole, "{parts} parts grow the run's first programs");
    }
    // another run seed grows other programs
    let a: BTreeSet<u64> = program_seeds(5, (0, 1), 1000).into_iter().collect();
    assert!(program_seeds(6, (0, 1), 1000)
        .iter()
        .all(|s| !a.contains(s)));
}

#[test]
fn the_parts_of_a_sharded_campaign_share_one_findings_directory() {
    let dir = tempfile::tempdir().unwrap();
    let backend = rewrite(Opcode::Maximum, Opcode::Minimum);
    let mut written = Vec::new();
    for part in 0..2 {
        let r = fuzz(
            &backend,
            "rewrite",
            &FuzzOptions {
                stop_at_first_failure: true,
                shard: (part, 2),
                ..options(dir.path(), Duration::from_secs(60))
            },
            &mut |_| {},
        )
        .unwrap();
        let (_, path) = r.found.first().expect("each part finds the bug");
        // the reproducer is named by a seed of this part's programs
        let seeds = program_seeds(1, (part, 2), r.progress.programs);
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let seed = u64::from_str_radix(name.rsplit('-').next().unwrap(), 16).unwrap();
        assert!(seeds.contains(&seed), "{name}");
        written.push(path.clone());
    }
    assert_ne!(written[0], written[1]);
    let files = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(files, 2, "both parts' reproducers are kept");
}
