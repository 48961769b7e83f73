//! `bisect-passes` on xla-cpu: the disagreements of docs/findings.md whose
//! cause is an HLO pass are named, and those in a kernel are said to be none.

mod common;

use std::path::PathBuf;

use common::cli::{exits, fails_with, run_on};
use xla_props::hlo::{parse_module, ArrayShape, ElementType};
use xla_props::isolate::{bisect_passes, PassBisectOptions, PassVerdict, ProbeResult};
use xla_props::literal::Literal;

fn options(name: &str) -> PassBisectOptions {
    PassBisectOptions {
        strict_rounding: false,
        max_probes: 40,
        dump_dir: PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name),
    }
}

/// docs/repro/divide-by-broadcast: a divide by a broadcast scalar (the JAX
/// corpus's `quantize_int8`), half the quotients one ulp low.
const DIVIDE_BY_BROADCAST: &str = r#"
HloModule divide_by_broadcast
ENTRY main {
  c = f32[4,4] constant({{26.761653900146484, -4.3620195388793945, 25.49033546447754, -56.298091888427734}, {38.88404846191406, -44.25071716308594, 48.73110580444336, 34.630882263183594}, {-39.727073669433594, -8.854974746704102, 13.091657638549805, 49.68901824951172}, {52.98904037475586, 58.71763229370117, 59.920074462890625, 1.2950681447982788}})
  s = f32[] parameter(0)
  b = f32[4,4] broadcast(s), dimensions={}
  ROOT q = f32[4,4] divide(c, b)
}
"#;

#[test]
fn algsimp_turns_a_divide_by_a_broadcast_into_a_multiply_by_the_reciprocal() {
    let Some(b) = common::xla_cpu() else { return };
    let m = parse_module(DIVIDE_BY_BROADCAST).unwrap();
    let s = Literal::from_f64s(
        &ArrayShape::new(ElementType::F32, vec![]),
        &[59.920074462890625],
    )
    .unwrap();
    let r = bisect_passes(&m, &[s], &b, &options("divide_by_broadcast")).unwrap();
    assert!(
        matches!(r.probes[0].result, ProbeResult::Disagrees(_)),
        "every pass on: {:?}",
        r.probes[0]
    );
    assert_eq!(r.verdict, PassVerdict::Culprits(vec!["algsimp".into()]));
    assert!(r.candidates.contains(&"algsimp".to_string()));
    let change = &r.culprit_hlo[0];
    assert!(change.diff.contains("-  ROOT %divide"), "{}", change.diff);
    assert!(change.diff.contains("+  ROOT %multiply"), "{}", change.diff);
    // the probe that names it: algsimp alone disabled, and it agrees
    assert!(r
        .probes
        .iter()
        .any(|p| p.disabled == ["algsimp"] && matches!(p.result, ProbeResult::Agrees(_))));
}

#[test]
fn cbrt_of_a_subnormal_is_no_pass_but_the_kernel() {
    let Some(b) = common::xla_cpu() else { return };
    let m = parse_module(
        "HloModule cbrt_subnormal\nENTRY main {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] cbrt(x)\n}\n",
    )
    .unwrap();
    let bits = [0x0000_0001u32, 0x0040_0000, 0x007f_ffff, 0x8040_0000];
    let x: Vec<f64> = bits.iter().map(|&b| f32::from_bits(b) as f64).collect();
    let x = Literal::from_f64s(&ArrayShape::new(ElementType::F32, vec![4]), &x).unwrap();
    let r = bisect_passes(&m, &[x], &b, &options("cbrt_subnormal")).unwrap();
    assert_eq!(r.verdict, PassVerdict::NotAPass, "{}", r.conclusion());
    // the probe with every changing pass disabled still disagrees
    assert!(r
        .probes
        .iter()
        .any(|p| p.disabled.len() == r.candidates.len()
            && matches!(p.result, ProbeResult::Disagrees(_))));
}

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
}

#[test]
fn the_command_names_the_pass_and_isolate_reports_it() {
    if common::xla_cpu().is_none() {
        return;
    }
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bisect_cli");
    let file = repo("docs/repro/divide-by-broadcast/reproducer.hlotest");
    let extra = ["--out", out.to_str().unwrap()];
    let stdout = exits(&run_on("bisect-passes", &file, "xla-cpu", &extra), 0);
    assert!(stdout.contains("culprit pass: `algsimp`"), "{stdout}");
    assert!(stdout.contains("probe 1: disabled none"), "{stdout}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("+  ROOT %multiply"), "{md}");

    let iso = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bisect_isolate");
    let extra = ["--quiet", "--out", iso.to_str().unwrap()];
    let run = run_on("isolate", &file, "xla-cpu", &extra);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("passes: culprit pass: `algsimp`"),
        "{stdout}"
    );
    assert!(iso.join("passes.json").is_file());
}

#[test]
fn a_backend_without_passes_is_refused_with_a_message() {
    let file = repo("docs/repro/divide-by-broadcast/reproducer.hlotest");
    fails_with(
        &run_on("bisect-passes", &file, "interpreter", &[]),
        2,
        &["cannot disable its compiler's passes"],
    );
}
