//! `interpreter.run_parallel` programs read from StableHLO and run on the
//! reference: collectives the spec's way, send/recv by channel, the infeed
//! queue, and the errors (an empty queue, a recv nobody sends to, infeed
//! outside run_parallel) that must not hang or panic.

use xla_props::backend::ReferenceBackend;
use xla_props::filetest::stablehlo_checks::{run_check_program, ProgramOutcome};
use xla_props::hlo::load_check_programs;

/// Each check program's outcome: Ok(number of checks, all held) or the
/// error or unsupported text.
fn run(text: &str) -> Vec<Result<(usize, bool), String>> {
    let programs = load_check_programs("t.mlir", text.as_bytes()).expect("the text loads");
    let backend = ReferenceBackend::default();
    programs
        .iter()
        .map(|p| match run_check_program(&backend, p) {
            ProgramOutcome::Ran(r) => Ok((r.len(), r.iter().all(|c| c.verdict.is_ok()))),
            ProgramOutcome::Unsupported(w) => Err(format!("unsupported: {w}")),
            ProgramOutcome::Error(e) => Err(format!("error: {e}")),
        })
        .collect()
}

#[test]
fn collective_reduce_gives_the_root_the_reduction_and_the_others_zeros() {
    let text = r#"
func.func @r(%x : tensor<2xi32>) -> tensor<2xi32> {
  %y = "stablehlo.collective_reduce"(%x) ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %m = stablehlo.maximum %a, %b : tensor<i32>
      stablehlo.return %m : tensor<i32>
  }) {replica_groups = dense<[[2, 0, 1]]> : tensor<1x3xi64>} : (tensor<2xi32>) -> tensor<2xi32>
  return %y : tensor<2xi32>
}
func.func @main() {
  %a = stablehlo.constant dense<[1, 9]> : tensor<2xi32>
  %b = stablehlo.constant dense<[7, 2]> : tensor<2xi32>
  %c = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  %r:3 = "interpreter.run_parallel"(%a, %b, %c) {programs = [[@r], [@r], [@r]]}
      : (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>)
  check.expect_eq_const %r#0, dense<[0, 0]> : tensor<2xi32>
  check.expect_eq_const %r#1, dense<[0, 0]> : tensor<2xi32>
  check.expect_eq_const %r#2, dense<[7, 9]> : tensor<2xi32>
  func.return
}
"#;
    assert_eq!(run(text), vec![Ok((3, true))]);
}

#[test]
fn all_to_all_splits_and_concatenates_along_different_dimensions() {
    // each process splits its rows in two; process j gets row j of both,
    // side by side
    let text = r#"
func.func @a(%x : tensor<2x2xi64>) -> tensor<1x4xi64> {
  %y = "stablehlo.all_to_all"(%x) {split_dimension = 0 : i64, concat_dimension = 1 : i64,
      split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
      : (tensor<2x2xi64>) -> tensor<1x4xi64>
  return %y : tensor<1x4xi64>
}
func.func @main() {
  %p = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %q = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi64>
  %r:2 = "interpreter.run_parallel"(%p, %q) {programs = [[@a], [@a]]}
      : (tensor<2x2xi64>, tensor<2x2xi64>) -> (tensor<1x4xi64>, tensor<1x4xi64>)
  check.expect_eq_const %r#0, dense<[[1, 2, 5, 6]]> : tensor<1x4xi64>
  check.expect_eq_const %r#1, dense<[[3, 4, 7, 8]]> : tensor<1x4xi64>
  func.return
}
"#;
    assert_eq!(run(text), vec![Ok((2, true))]);
}

#[test]
fn send_and_recv_meet_by_channel_in_both_directions() {
    // process 0 sends on channel 5 and waits on channel 6; process 1
    // receives, adds one and sends back
    let text = r#"
func.func @ping(%x : tensor<i32>, %t : !stablehlo.token) -> tensor<i32> {
  %t1 = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>}
      : (tensor<i32>, !stablehlo.token) -> !stablehlo.token
  %y, %t2 = "stablehlo.recv"(%t1) {channel_handle = #stablehlo.channel_handle<handle = 6, type = 1>}
      : (!stablehlo.token) -> (tensor<i32>, !stablehlo.token)
  return %y : tensor<i32>
}
func.func @pong(%t : !stablehlo.token) -> tensor<i32> {
  %x, %t1 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>}
      : (!stablehlo.token) -> (tensor<i32>, !stablehlo.token)
  %one = stablehlo.constant dense<1> : tensor<i32>
  %y = stablehlo.add %x, %one : tensor<i32>
  %t2 = "stablehlo.send"(%y, %t1) {channel_handle = #stablehlo.channel_handle<handle = 6, type = 1>}
      : (tensor<i32>, !stablehlo.token) -> !stablehlo.token
  return %x : tensor<i32>
}
func.func @main() {
  %x = stablehlo.constant dense<41> : tensor<i32>
  %t = stablehlo.after_all : !stablehlo.token
  %r:2 = "interpreter.run_parallel"(%x, %t, %t) {programs = [[@ping, @pong]]}
      : (tensor<i32>, !stablehlo.token, !stablehlo.token) -> (tensor<i32>, tensor<i32>)
  check.expect_eq_const %r#0, dense<42> : tensor<i32>
  check.expect_eq_const %r#1, dense<41> : tensor<i32>
  func.return
}
"#;
    assert_eq!(run(text), vec![Ok((2, true))]);
}

#[test]
fn a_recv_nobody_sends_to_and_an_empty_infeed_are_errors() {
    let text = r#"
func.func @lonely(%t : !stablehlo.token) -> tensor<i32> {
  %x, %t1 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>}
      : (!stablehlo.token) -> (tensor<i32>, !stablehlo.token)
  return %x : tensor<i32>
}
func.func @idle(%t : !stablehlo.token) -> !stablehlo.token {
  return %t : !stablehlo.token
}
func.func @main() {
  %t = stablehlo.after_all : !stablehlo.token
  %r:2 = "interpreter.run_parallel"(%t, %t) {programs = [[@lonely], [@idle]]}
      : (!stablehlo.token, !stablehlo.token) -> (tensor<i32>, !stablehlo.token)
  func.return
}
"#;
    let out = run(text);
    assert!(
        matches!(&out[..], [Err(e)] if e.contains("never reach it")),
        "{out:?}"
    );
    let text = r#"
func.func @feed(%t : !stablehlo.token) -> tensor<i32> {
  %x, %t1 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<i32>, !stablehlo.token)
  %y, %t2 = "stablehlo.infeed"(%t1) : (!stablehlo.token) -> (tensor<i32>, !stablehlo.token)
  return %y : tensor<i32>
}
func.func @one() -> tensor<i32> {
  %c = stablehlo.constant dense<1> : tensor<i32>
  return %c : tensor<i32>
}
func.func @main() {
  %t = stablehlo.after_all : !stablehlo.token
  %r = "interpreter.run_parallel"(%t) {infeed = [@one], programs = [[@feed]]}
      : (!stablehlo.token) -> tensor<i32>
  func.return
}
"#;
    let out = run(text);
    assert!(
        matches!(&out[..], [Err(e)] if e.contains("infeed queue is empty")),
        "{out:?}"
    );
}

#[test]
fn infeed_outside_run_parallel_is_unsupported() {
    let text = r#"
func.func @main() {
  %t = stablehlo.after_all : !stablehlo.token
  %x, %t1 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<i32>, !stablehlo.token)
  check.expect_eq_const %x, dense<0> : tensor<i32>
  func.return
}
"#;
    let out = run(text);
    assert!(
        matches!(&out[..], [Err(e)] if e.starts_with("unsupported") && e.contains("infeed")),
        "{out:?}"
    );
}
