//! Which compiler pass introduced a disagreement: the passes that changed the
//! module (from the compiler's own dump), then a bisection (delta debugging,
//! `ddmin`) for the smallest set of passes whose disabling makes the
//! disagreement vanish. Every probe is one compile with some passes disabled,
//! judged by the one judge against the exact reference.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::backend::{guarded, Backend, BackendError, PassControl, PassStep};
use crate::check::{judge_against_reference, Numerics, Verdict};
use crate::hlo::Module;
use crate::literal::Literal;

/// Probes a bisection may run before it gives up (each is one compile).
pub const MAX_PROBES: usize = 80;

/// What one probe gave.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum ProbeResult {
    /// The backend still disagrees (the verdict's first line).
    Disagrees(String),
    /// The disagreement vanished.
    Agrees(String),
    /// The compile or the run failed (a pass the compiler cannot do without).
    Failed(String),
}

/// One compile with `disabled` passes off.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Probe {
    /// The passes disabled.
    pub disabled: Vec<String>,
    /// What the compile and the judge gave.
    pub result: ProbeResult,
    /// Wall time of the compile, run and judgement.
    pub seconds: f64,
}

/// The conclusion of a bisection.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "kind", content = "passes", rename_all = "snake_case")]
pub enum PassVerdict {
    /// Disabling these passes makes the disagreement vanish, and disabling
    /// any proper subset of them does not (1-minimal).
    Culprits(Vec<String>),
    /// Disabling any one of these alone makes the disagreement vanish (they
    /// take part together), while disabling every pass does not (another
    /// path through the compiler is wrong too) or cannot compile.
    EachSuffices(Vec<String>),
    /// It persists with every pass that changed the module disabled (those
    /// the compiler could do without): not an HLO pass, but code generation
    /// or a kernel.
    NotAPass,
    /// The module agrees with every pass on: nothing to bisect.
    Agrees,
    /// No conclusion (why).
    Inconclusive(String),
}

/// The module just before and just after a culprit pass changed it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CulpritHlo {
    /// The pass.
    pub pass: String,
    /// The pipeline it ran in at that step.
    pub pipeline: String,
    /// Which of its changes this is, from 1.
    pub change: usize,
    /// How many times it changed the module in the compile.
    pub times_changed: usize,
    /// Dump file before it.
    pub before_file: PathBuf,
    /// Dump file after it.
    pub after_file: PathBuf,
    /// A unified diff of the two.
    pub diff: String,
}

/// A finished bisection.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PassBisection {
    /// The backend.
    pub backend: String,
    /// Every step of the compile that changed the module, in order.
    pub steps: Vec<PassStep>,
    /// The passes bisected over (distinct, in first-change order; pipelines left out).
    pub candidates: Vec<String>,
    /// Passes whose disabling alone makes the compile fail.
    pub required: Vec<String>,
    /// Every probe run, in order.
    pub probes: Vec<Probe>,
    /// The conclusion.
    pub verdict: PassVerdict,
    /// Before and after each culprit pass.
    pub culprit_hlo: Vec<CulpritHlo>,
}

/// Why a bisection could not start.
#[derive(Debug, thiserror::Error)]
pub enum PassBisectError {
    /// The backend's compiler has no passes to disable.
    #[error("backend `{0}` cannot disable its compiler's passes (only xla-based backends can)")]
    Unsupported(String),
    /// The reference cannot evaluate the module.
    #[error("the reference cannot run the module: {0}")]
    Reference(String),
    /// The first, unchanged compile did not run or dump.
    #[error("{0}")]
    Baseline(String),
}

/// How probes are judged and where the dump goes.
#[derive(Clone, Debug)]
pub struct PassBisectOptions {
    /// Judge with the program's own rounding (no excess precision accepted).
    pub strict_rounding: bool,
    /// At most this many probes.
    pub max_probes: usize,
    /// Where the compiler's dump of the unchanged compile is written.
    pub dump_dir: PathBuf,
}

/// Runs probes and remembers their results.
struct Prober<'a> {
    module: &'a Module,
    args: &'a [Literal],
    expected: Vec<Literal>,
    control: &'a dyn PassControl,
    /// The backend's name, for a panic caught in a probe.
    backend: &'a str,
    numerics: Numerics,
    strict_rounding: bool,
    probes: Vec<Probe>,
    seen: HashMap<Vec<String>, ProbeResult>,
    max_probes: usize,
}

impl Prober<'_> {
    fn probe(&mut self, disabled: &[String], dump: Option<&Path>) -> ProbeResult {
        let mut key = disabled.to_vec();
        key.sort();
        if let Some(r) = self.seen.get(&key) {
            return r.clone();
        }
        let start = Instant::now();
        let result = match self.run(disabled, dump) {
            Ok(v) if v.is_agreement() => ProbeResult::Agrees(first_line(&v)),
            Ok(v) if v.is_disagreement() => ProbeResult::Disagrees(first_line(&v)),
            Ok(v) => ProbeResult::Failed(first_line(&v)),
            Err(e) => ProbeResult::Failed(e.to_string()),
        };
        self.probes.push(Probe {
            disabled: disabled.to_vec(),
            result: result.clone(),
            seconds: start.elapsed().as_secs_f64(),
        });
        self.seen.insert(key, result.clone());
        result
    }

    fn run(&self, disabled: &[String], dump: Option<&Path>) -> Result<Verdict, BackendError> {
        let name = self.backend;
        let exe = guarded(name, || {
            self.control
                .compile_with_passes(self.module, disabled, dump)
        })?;
        let actual = guarded(name, || exe.execute(self.args))?;
        // no known bugs: a bug's model would turn the disagreement into an xfail
        Ok(judge_against_reference(
            self.module,
            self.args,
            &self.expected,
            &actual,
            &self.numerics,
            &[],
            self.strict_rounding,
        ))
    }

    fn vanishes(&mut self, disabled: &[String]) -> bool {
        matches!(self.probe(disabled, None), ProbeResult::Agrees(_))
    }

    fn out_of_probes(&self) -> bool {
        self.probes.len() >= self.max_probes
    }
}

fn first_line(v: &Verdict) -> String {
    v.to_string().lines().next().unwrap_or_default().to_string()
}

/// Bisects the passes of `backend`'s compile of `module` on `args`.
///
/// A backend without [`PassControl`] is refused:
///
/// ```
/// use xla_props::backend::Interpreter;
/// use xla_props::hlo::parse_module;
/// use xla_props::isolate::{bisect_passes, PassBisectOptions};
/// let m = parse_module("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n").unwrap();
/// let options = PassBisectOptions {
///     strict_rounding: false,
///     max_probes: 10,
///     dump_dir: std::env::temp_dir(),
/// };
/// assert!(bisect_passes(&m, &[], &Interpreter::default(), &options).is_err());
/// ```
pub fn bisect_passes(
    module: &Module,
    args: &[Literal],
    backend: &dyn Backend,
    options: &PassBisectOptions,
) -> Result<PassBisection, PassBisectError> {
    let control = backend
        .pass_control()
        .ok_or_else(|| PassBisectError::Unsupported(backend.name().to_string()))?;
    let expected = crate::reference::evaluate(module, args)
        .map_err(|e| PassBisectError::Reference(e.to_string()))?;
    let mut prober = Prober {
        module,
        args,
        expected,
        control,
        backend: backend.name(),
        numerics: backend.numerics(),
        strict_rounding: options.strict_rounding,
        probes: Vec::new(),
        seen: HashMap::new(),
        max_probes: options.max_probes.max(2),
    };
    let _ = std::fs::remove_dir_all(&options.dump_dir);
    let baseline = prober.probe(&[], Some(&options.dump_dir));
    let steps = control
        .read_dump(&options.dump_dir)
        .map_err(PassBisectError::Baseline)?;
    let candidates = candidate_passes(&steps);
    let mut result = PassBisection {
        backend: backend.name().to_string(),
        steps,
        candidates: candidates.clone(),
        required: Vec::new(),
        probes: Vec::new(),
        verdict: PassVerdict::Agrees,
        culprit_hlo: Vec::new(),
    };
    result.verdict = match baseline {
        ProbeResult::Agrees(_) => PassVerdict::Agrees,
        ProbeResult::Failed(why) => {
            PassVerdict::Inconclusive(format!("the compile with every pass on failed: {why}"))
        }
        ProbeResult::Disagrees(_) => {
            let (verdict, required) = search(&mut prober, candidates);
            result.required = required;
            verdict
        }
    };
    if let PassVerdict::Culprits(passes) | PassVerdict::EachSuffices(passes) = &result.verdict {
        result.culprit_hlo = passes
            .iter()
            .flat_map(|p| culprit_hlo(&result.steps, p))
            .collect();
    }
    result.probes = prober.probes;
    Ok(result)
}

/// All candidates off, then `ddmin` when that makes the disagreement vanish;
/// otherwise each pass alone (some may each suffice, some the compile cannot
/// do without), then all but the ones the compile needs.
fn search(prober: &mut Prober<'_>, candidates: Vec<String>) -> (PassVerdict, Vec<String>) {
    if candidates.is_empty() {
        return (PassVerdict::NotAPass, Vec::new());
    }
    let all = prober.probe(&candidates, None);
    if let ProbeResult::Agrees(_) = all {
        return (minimal(prober, candidates), Vec::new());
    }
    let mut required = Vec::new();
    let mut sufficient = Vec::new();
    for p in &candidates {
        match prober.probe(std::slice::from_ref(p), None) {
            ProbeResult::Failed(_) => required.push(p.clone()),
            ProbeResult::Agrees(_) => sufficient.push(p.clone()),
            ProbeResult::Disagrees(_) => {}
        }
    }
    if !sufficient.is_empty() {
        return (PassVerdict::EachSuffices(sufficient), required);
    }
    let rest: Vec<String> = candidates
        .iter()
        .filter(|p| !required.contains(p))
        .cloned()
        .collect();
    if rest.is_empty() {
        let why = "every pass that changed the module is one the compile cannot do without";
        return (PassVerdict::Inconclusive(why.into()), required);
    }
    let verdict = match prober.probe(&rest, None) {
        ProbeResult::Agrees(_) => minimal(prober, rest),
        ProbeResult::Disagrees(_) => PassVerdict::NotAPass,
        ProbeResult::Failed(why) => PassVerdict::Inconclusive(format!(
            "with the passes the compile can do without disabled, it fails: {why}"
        )),
    };
    (verdict, required)
}

/// `ddmin` from a set whose disabling makes the disagreement vanish.
fn minimal(prober: &mut Prober<'_>, set: Vec<String>) -> PassVerdict {
    let mut vanishes = |d: &[String]| (!prober.out_of_probes()).then(|| prober.vanishes(d));
    let culprits = ddmin(&mut vanishes, set);
    if prober.vanishes(&culprits) {
        PassVerdict::Culprits(culprits)
    } else {
        PassVerdict::Inconclusive(format!(
            "ran out of probes ({}) before a set was found",
            prober.max_probes
        ))
    }
}

/// Zeller's ddmin: a 1-minimal subset of `set` for which `vanishes` holds
/// (it holds for `set`). `vanishes` answers `None` once out of probes.
fn ddmin(vanishes: &mut dyn FnMut(&[String]) -> Option<bool>, mut set: Vec<String>) -> Vec<String> {
    let mut n = 2usize;
    'outer: while set.len() > 1 {
        let chunks = split(&set, n);
        for (k, chunk) in chunks.iter().enumerate() {
            match vanishes(chunk) {
                None => return set,
                Some(true) => {
                    set = chunk.clone();
                    n = 2;
                    continue 'outer;
                }
                Some(false) => {}
            }
            if n > 2 {
                let rest: Vec<String> = chunks
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != k)
                    .flat_map(|(_, c)| c.iter().cloned())
                    .collect();
                match vanishes(&rest) {
                    None => return set,
                    Some(true) => {
                        set = rest;
                        n = (n - 1).max(2);
                        continue 'outer;
                    }
                    Some(false) => {}
                }
            }
        }
        if n >= set.len() {
            break;
        }
        n = (2 * n).min(set.len());
    }
    set
}

/// `set` in `n` contiguous chunks of nearly equal size.
fn split(set: &[String], n: usize) -> Vec<Vec<String>> {
    let n = n.min(set.len()).max(1);
    (0..n)
        .map(|k| set[k * set.len() / n..(k + 1) * set.len() / n].to_vec())
        .filter(|c| !c.is_empty())
        .collect()
}

/// The distinct passes that changed the module, in the order they first did;
/// pipeline names are left out (their passes are candidates themselves).
pub fn candidate_passes(steps: &[PassStep]) -> Vec<String> {
    let pipelines: std::collections::HashSet<&str> =
        steps.iter().map(|s| s.pipeline.as_str()).collect();
    let mut out: Vec<String> = Vec::new();
    for s in steps.iter().filter(|s| s.is_pass()) {
        if !pipelines.contains(s.pass.as_str()) && !out.contains(&s.pass) {
            out.push(s.pass.clone());
        }
    }
    out
}

/// Diffs shown per culprit pass (a pass that runs in a fixed-point loop can
/// change the module many times).
pub const MAX_CHANGES_SHOWN: usize = 4;

/// The dump just before and after each time `pass` changed the module.
fn culprit_hlo(steps: &[PassStep], pass: &str) -> Vec<CulpritHlo> {
    let times = steps.iter().filter(|s| s.pass == pass).count();
    let mut out = Vec::new();
    for (at, after) in steps.iter().enumerate().filter(|(_, s)| s.pass == pass) {
        if out.len() == MAX_CHANGES_SHOWN {
            break;
        }
        let before = if at > 0 { &steps[at - 1] } else { after };
        let (Ok(before_text), Ok(after_text)) = (
            std::fs::read_to_string(&before.file),
            std::fs::read_to_string(&after.file),
        ) else {
            continue;
        };
        let diff = similar::TextDiff::from_lines(&before_text, &after_text)
            .unified_diff()
            .context_radius(2)
            .header(
                &format!("before {pass}"),
                &format!("after {pass} ({}, step {})", after.pipeline, after.step),
            )
            .to_string();
        out.push(CulpritHlo {
            pass: pass.to_string(),
            pipeline: after.pipeline.clone(),
            change: out.len() + 1,
            times_changed: times,
            before_file: before.file.clone(),
            after_file: after.file.clone(),
            diff,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(n: u32, pipeline: &str, pass: &str) -> PassStep {
        PassStep {
            step: n,
            pipeline: pipeline.into(),
            pass: pass.into(),
            next: String::new(),
            file: PathBuf::new(),
        }
    }

    #[test]
    fn candidates_are_the_passes_that_changed_the_module_without_pipelines() {
        let steps = [
            step(0, "outer", "pipeline-start"),
            step(1, "simplification", "algsimp"),
            step(2, "outer", "simplification"),
            step(3, "simplification", "algsimp"),
            step(4, "outer", "fusion"),
        ];
        assert_eq!(candidate_passes(&steps), vec!["algsimp", "fusion"]);
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ddmin_finds_one_culprit_among_many_in_few_probes() {
        let set: Vec<String> = (0..20).map(|i| format!("p{i}")).collect();
        let mut probes = 0;
        let mut vanishes = |d: &[String]| {
            probes += 1;
            Some(d.contains(&"p13".to_string()))
        };
        assert_eq!(ddmin(&mut vanishes, set), names(&["p13"]));
        assert!(probes <= 12, "{probes} probes");
    }

    #[test]
    fn ddmin_finds_a_pair_that_must_both_be_disabled() {
        let set: Vec<String> = (0..9).map(|i| format!("p{i}")).collect();
        let mut vanishes =
            |d: &[String]| Some(d.contains(&"p2".to_string()) && d.contains(&"p7".to_string()));
        assert_eq!(ddmin(&mut vanishes, set), names(&["p2", "p7"]));
    }

    #[test]
    fn ddmin_stops_when_out_of_probes() {
        let set = names(&["a", "b", "c", "d"]);
        let mut vanishes = |_: &[String]| None;
        assert_eq!(ddmin(&mut vanishes, set.clone()), set);
    }

    #[test]
    fn split_keeps_every_pass_once_in_order() {
        let set: Vec<String> = (0..7).map(|i| i.to_string()).collect();
        let parts = split(&set, 3);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts.concat(), set);
        assert_eq!(split(&set, 10).len(), 7);
    }
}
