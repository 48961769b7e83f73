//! Programs on many devices: every collective's meaning, checked on
//! hand-computed values on the reference and the interpreter, and the
//! multi-device corpus (`tests/data/spmd/`, exported by
//! `scripts/gen-spmd-corpus.sh`: JAX programs on 4 and 8 CPU devices,
//! annotated and partitioned) judged by `xla-props compare`.

mod common;

use std::path::PathBuf;
use std::process::Command;

use xla_props::backend::{Backend, Interpreter};
use xla_props::check::{Judge, Policy};
use xla_props::hlo::sharding::Sharding;
use xla_props::hlo::{load_module_file, parse_module, ArrayShape, ElementType, Module};
use xla_props::inputs::{generate_inputs, Distribution};
use xla_props::literal::Literal;
use xla_props::reference::spmd::{DeviceProgram, ProgramKind};
use xla_props::reference::{evaluate, evaluate_global};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/spmd");

fn s32(dims: &[i64], v: &[i128]) -> Literal {
    Literal::from_i128s(&ArrayShape::new(ElementType::S32, dims.to_vec()), v).unwrap()
}

fn ints(l: &Literal) -> Vec<i64> {
    (0..l.element_count())
        .map(|i| l.get_f64(i) as i64)
        .collect()
}

const SUM: &str =
    "sum { a = s32[] parameter(0) b = s32[] parameter(1) ROOT s = s32[] add(a, b) }\n";

/// The module on the reference and the interpreter: both give `want`.
fn both(text: &str, args: &[Literal], want: &[Vec<i64>]) {
    let m = parse_module(text).unwrap();
    let r = evaluate(&m, args).unwrap_or_else(|e| panic!("reference: {e}\n{text}"));
    assert_eq!(
        r.iter().map(ints).collect::<Vec<_>>(),
        want,
        "reference\n{text}"
    );
    let exe = Interpreter::default().compile(&m).unwrap();
    let i = exe
        .execute(args)
        .unwrap_or_else(|e| panic!("interpreter: {e}\n{text}"));
    assert_eq!(
        i.iter().map(ints).collect::<Vec<_>>(),
        want,
        "interpreter\n{text}"
    );
}

#[test]
fn all_reduce_sums_within_each_group() {
    // 4 partitions, groups {0,1} and {2,3}; the parameter is per device
    // (no sharding): the global argument stacks the devices' arrays
    let text = format!("HloModule m, num_partitions=4\n{SUM}ENTRY e {{ p = s32[2] parameter(0) ROOT r = s32[2] all-reduce(p), channel_id=1, replica_groups={{{{0,1}},{{2,3}}}}, use_global_device_ids=true, to_apply=sum }}\n");
    let arg = s32(&[4, 2], &[1, 2, 10, 20, 100, 200, 1000, 2000]);
    both(
        &text,
        &[arg],
        &[vec![11, 22, 11, 22, 1100, 2200, 1100, 2200]],
    );
}

#[test]
fn all_gather_and_reduce_scatter_follow_group_order() {
    let text = "HloModule m, num_partitions=2\nENTRY e { p = s32[1,2] parameter(0) ROOT r = s32[2,2] all-gather(p), channel_id=1, replica_groups={{1,0}}, dimensions={0}, use_global_device_ids=true }\n";
    // group order {1,0}: device 1's rows first, on both devices
    both(
        text,
        &[s32(&[2, 1, 2], &[1, 2, 3, 4])],
        &[vec![3, 4, 1, 2, 3, 4, 1, 2]],
    );
    let text = format!("HloModule m, num_partitions=2\n{SUM}ENTRY e {{ p = s32[4] parameter(0) ROOT r = s32[2] reduce-scatter(p), channel_id=1, replica_groups={{{{0,1}}}}, dimensions={{0}}, use_global_device_ids=true, to_apply=sum }}\n");
    both(
        &text,
        &[s32(&[2, 4], &[1, 2, 3, 4, 10, 20, 30, 40])],
        &[vec![11, 22, 33, 44]],
    );
}

#[test]
fn all_to_all_in_both_forms() {
    // the array form: device d sends chunk j of its row to device j
    let text = "HloModule m, num_partitions=2\nENTRY e { p = s32[4] parameter(0) ROOT r = s32[4] all-to-all(p), channel_id=1, replica_groups={{0,1}}, dimensions={0} }\n";
    both(
        text,
        &[s32(&[2, 4], &[1, 2, 3, 4, 5, 6, 7, 8])],
        &[vec![1, 2, 5, 6, 3, 4, 7, 8]],
    );
    // the tuple form: operand j goes to device j, so device 0 gets both
    // devices' p (1, 2) and device 1 both q (3, 4); outputs stack devices
    let text = "HloModule m, num_partitions=2\nENTRY e { p = s32[1] parameter(0) q = s32[1] parameter(1) ROOT r = (s32[1], s32[1]) all-to-all(p, q), channel_id=1, replica_groups={{0,1}} }\n";
    both(
        text,
        &[s32(&[2, 1], &[1, 2]), s32(&[2, 1], &[3, 4])],
        &[vec![1, 3], vec![2, 4]],
    );
}

#[test]
fn collective_permute_zeroes_devices_nobody_sends_to() {
    let text = "HloModule m, num_partitions=3\nENTRY e { p = s32[2] parameter(0) ROOT r = s32[2] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,2}} }\n";
    both(
        text,
        &[s32(&[3, 2], &[1, 2, 3, 4, 5, 6])],
        &[vec![0, 0, 1, 2, 3, 4]],
    );
    let text = "HloModule m, num_partitions=3\nENTRY e { p = s32[2] parameter(0) ROOT r = s32[2] collective-broadcast(p), channel_id=1, replica_groups={{2,0,1}} }\n";
    both(
        text,
        &[s32(&[3, 2], &[1, 2, 3, 4, 5, 6])],
        &[vec![5, 6, 5, 6, 5, 6]],
    );
}

#[test]
fn replica_and_partition_ids_and_cross_replica_groups() {
    // 2 replicas x 2 partitions; without a channel the groups are replicas
    // within each partition
    let text = format!("HloModule m, replica_count=2, num_partitions=2\n{SUM}ENTRY e {{ r = u32[] replica-id() q = u32[] partition-id() a = s32[] convert(r) b = s32[] convert(q) t = s32[] constant(10) m = s32[] multiply(a, t) s = s32[] add(m, b) ROOT x = s32[] all-reduce(s), replica_groups={{}}, to_apply=sum }}\n");
    // devices (r,p): s = 10r + p -> per partition p: 0+p + 10+p
    both(&text, &[], &[vec![10, 12, 10, 12]]);
}

#[test]
fn devices_that_never_meet_are_an_error_not_a_hang() {
    // only partition 0 takes the branch with the all-reduce
    let text = format!("HloModule m, num_partitions=2\n{SUM}br {{ x = s32[] parameter(0) ROOT r = s32[] all-reduce(x), channel_id=1, replica_groups={{{{0,1}}}}, use_global_device_ids=true, to_apply=sum }}\nskip {{ ROOT x = s32[] parameter(0) }}\nENTRY e {{ q = u32[] partition-id() z = u32[] constant(0) c = pred[] compare(q, z), direction=EQ p = s32[] parameter(0) ROOT r = s32[] conditional(c, p, p), true_computation=br, false_computation=skip }}\n");
    let m = parse_module(&text).unwrap();
    let e = evaluate(&m, &[s32(&[2], &[1, 2])]).unwrap_err().to_string();
    assert!(e.contains("never reach it"), "{e}");
    let e = Interpreter::default()
        .compile(&m)
        .unwrap()
        .execute(&[s32(&[2], &[1, 2])])
        .unwrap_err()
        .to_string();
    assert!(e.contains("never reach it"), "{e}");
    // a group naming a device past the grid is a located error
    let text = format!("HloModule m, num_partitions=2\n{SUM}ENTRY e {{ p = s32[] parameter(0) ROOT r = s32[] all-reduce(p), channel_id=1, replica_groups={{{{0,7}}}}, use_global_device_ids=true, to_apply=sum }}\n");
    let e = evaluate(&parse_module(&text).unwrap(), &[s32(&[2], &[1, 2])])
        .unwrap_err()
        .to_string();
    assert!(e.contains("out of range") && e.contains("`r`"), "{e}");
}

#[test]
fn shardings_cut_arguments_and_assemble_outputs() {
    // a parameter tiled over 2 partitions (transposed device order) and a
    // root sharding: global in, global out
    let text = "HloModule m, num_partitions=2\nENTRY e { p = s32[2] parameter(0), sharding={devices=[2]1,0} c = s32[] constant(1) b = s32[2] broadcast(c), dimensions={} ROOT r = s32[2] add(p, b), sharding={devices=[2]1,0} }\n";
    both(text, &[s32(&[4], &[1, 2, 3, 4])], &[vec![2, 3, 4, 5]]);
    let m = parse_module(text).unwrap();
    let p = DeviceProgram::of(&m).unwrap();
    assert_eq!(p.kind, ProgramKind::Partitioned);
    // device 0 holds the second half under devices=[2]1,0
    let cut = p.cut(&m, &[s32(&[4], &[1, 2, 3, 4])]).unwrap();
    assert_eq!(ints(&cut[0][0]), vec![3, 4]);
}

fn corpus(filter: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut files =
        xla_props::skip::files_in(DATA, "hlo").unwrap_or_else(|e| panic!("{DATA}: {e}"));
    files.retain(|p| filter(&p.file_name().unwrap().to_string_lossy()));
    assert!(files.len() >= 40, "{DATA} has too few modules");
    files
}

/// Runs `compare` on every module, two at a time; returns the failures.
fn compare_all(files: &[PathBuf], backend: &str) -> Vec<String> {
    common::two_at_a_time(files, |file| {
        let out = Command::new(env!("CARGO_BIN_EXE_xla-props"))
            .args(["compare", file.to_str().unwrap(), "--backend", backend])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let ok = out.status.code() == Some(0) && !stdout.contains("unbounded");
        (!ok).then(|| {
            format!(
                "{} on {backend}: exit {:?}\n{}\n{}",
                file.display(),
                out.status.code(),
                stdout.lines().take(12).collect::<Vec<_>>().join("\n"),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    })
}

#[test]
fn the_multi_device_corpus_agrees_on_the_interpreter() {
    let files = corpus(&|_| true);
    let failures = compare_all(&files, "interpreter");
    assert!(
        failures.is_empty(),
        "{} of {} modules:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

/// The annotated module's output shardings: its root's, or the `Sharding`
/// call at its root.
fn root_shardings(m: &Module) -> Option<Vec<Sharding>> {
    let entry = m.entry_computation();
    let root = entry.instr(entry.root);
    let text = root
        .attrs
        .other
        .iter()
        .find(|(k, _)| k == "sharding")
        .map(|(_, v)| v.clone())?;
    Sharding::parse(&text)
        .ok()?
        .leaves(root.shape.leaves().len())
        .ok()
}

/// Each partitioned program computes what its annotated program means on
/// one device, on the same global inputs: judged against the partitioned
/// program's own first-order bound (reassociation across devices).
#[test]
fn partitioned_programs_mean_what_their_annotations_say() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in corpus(&|n| n.ends_with(".annotated.hlo")) {
        let annotated = load_module_file(&file).unwrap();
        let part_path = PathBuf::from(
            file.to_string_lossy()
                .replace(".annotated.", ".partitioned."),
        );
        let partitioned = load_module_file(&part_path).unwrap();
        let Some(outs) = root_shardings(&annotated) else {
            continue;
        };
        let program = DeviceProgram::of(&partitioned)
            .unwrap()
            .with_output_shardings(outs);
        let inputs = generate_inputs(&annotated, Distribution::Uniform, 1).unwrap();
        let one = evaluate(&annotated, &inputs.args).unwrap();
        let many = evaluate_global(&program, &partitioned, &inputs.args, 1_000_000).unwrap();
        let numerics = Interpreter::default().numerics();
        let verdict = Judge::new(&numerics, &[], Policy::Reference).outputs(
            &annotated,
            &inputs.args,
            &one,
            &many,
            &|m, a| evaluate(m, a).ok(),
        );
        checked += 1;
        if !verdict.is_agreement() {
            failures.push(format!("{}: {verdict}", file.display()));
        }
    }
    assert!(checked >= 40, "only {checked} pairs had output shardings");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Each program in Shardy's form (jax's default: `xla.sdy.*` custom calls,
/// shardings over named mesh axes, `shard_map` bodies as called
/// computations) means what its GSPMD form means, on the same inputs:
/// bitwise, since both run the same operations in the same order (the
/// devices of a `shard_map` meet in the same groups).
#[test]
fn shardy_programs_mean_what_their_gspmd_forms_say() {
    let mut checked = 0;
    let mut manual = 0;
    let mut failures = Vec::new();
    for file in corpus(&|n| n.ends_with(".sdy.hlo")) {
        let sdy = load_module_file(&file).unwrap();
        let gspmd = load_module_file(PathBuf::from(
            file.to_string_lossy().replace(".sdy.", ".annotated."),
        ))
        .unwrap();
        if DeviceProgram::multi(&sdy)
            .unwrap()
            .is_some_and(|p| p.kind == ProgramKind::Manual)
        {
            manual += 1;
        }
        let inputs = generate_inputs(&gspmd, Distribution::Uniform, 1).unwrap();
        let want = evaluate(&gspmd, &inputs.args).unwrap();
        match evaluate(&sdy, &inputs.args) {
            Ok(got) if got == want => checked += 1,
            Ok(got) => failures.push(format!(
                "{}: {got:?}\nvs GSPMD form {want:?}",
                file.display()
            )),
            Err(e) => failures.push(format!("{}: {e}", file.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(checked >= 50, "only {checked} Shardy modules");
    assert!(manual >= 25, "only {manual} with shard_map bodies");
}

#[test]
fn eval_takes_global_arrays_and_an_output_sharding() {
    let file = format!("{DATA}/smap_psum_4.partitioned.hlo");
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_xla-props"))
            .args(["eval", "--backend", "interpreter", &file])
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    // without a root sharding the devices' outputs are stacked
    let (code, text) = run(&[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("output 0: f32[4,3]"), "{text}");
    // the psum's result is replicated: put together, it is one f32[3]
    let (code, text) = run(&["--output-sharding", "{replicated}"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("output 0: f32[3]"), "{text}");
    // a malformed sharding is a clear error
    let (code, text) = run(&["--output-sharding", "{devices=[3]<=[4]}"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("--output-sharding"), "{text}");
}
