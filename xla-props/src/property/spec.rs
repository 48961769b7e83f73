//! `PropertySpec`: what `#[xla_property]` emits, and the registry that collects them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::id::{CaseId, CaseKey};
use crate::backend::Backend;
use crate::literal::Literal;
use crate::programs::BuiltCase;

use crate::check::{ErrorSpec, Judge, KnownBug, Numerics, Policy, Verdict};
use crate::hlo::{ElementType, Opcode};

/// A selection by name: a named group, or an explicit list of names.
///
/// Names are checked at compile time by `#[xla_property]` and resolved against
/// the opcode table and the element type list at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// A named group (`elementwise_binary`, `floats`, `default`).
    Group(&'static str),
    /// An explicit list of names (`[add, subtract]`, `[f16, bf16]`).
    List(&'static [&'static str]),
}

/// How results are compared in a property that uses the simple checker.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// Bit-exact (NaN by class, signed zeros distinct).
    Exact,
    /// At most this many units in the last place for floats; integers stay exact.
    Ulp(u64),
    /// Absolute difference for floats.
    Abs(f64),
    /// Relative difference for floats.
    Rel(f64),
}

impl Tolerance {
    /// The error spec of this tolerance for one output type: floats get the
    /// bound, integers and pred stay exact; `strict_rounding` makes floats exact.
    pub fn error_spec(self, strict_rounding: bool, dtype: ElementType) -> ErrorSpec {
        if !dtype.is_float() || strict_rounding {
            return ErrorSpec::exact();
        }
        match self {
            Tolerance::Exact => ErrorSpec::exact(),
            Tolerance::Ulp(n) => ErrorSpec::exact().with_ulp(n),
            Tolerance::Abs(x) => ErrorSpec::exact().with_abs(x),
            Tolerance::Rel(x) => ErrorSpec::exact().with_rel(x),
        }
    }

    /// The one judge (`check::Judge`) for a property case with this
    /// tolerance: `policy` says what the comparison is between.
    pub fn judge<'a>(
        self,
        numerics: &'a Numerics,
        strict_rounding: bool,
        policy: Policy,
        known_bugs: &'a [KnownBug],
    ) -> Judge<'a> {
        // the tolerance's float spec (error_spec keeps integers exact itself)
        Judge::new(numerics, known_bugs, policy)
            .strict_rounding(strict_rounding)
            .with_float_spec(self.error_spec(false, ElementType::F64))
    }
}

/// What a limitation does to the cases it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitationKind {
    /// The case is not run; it is reported as ignored with the reason.
    Skip,
    /// The case runs and is expected to fail: a failure is reported as ignored with the
    /// reason; a pass stays a pass, noted as `xpass` in the JSON report.
    XFail,
}

/// A known limitation: skip or xfail the cases matching an op, dtype and backend
/// (each `None` matches everything), always with a reason.
///
/// ```
/// use xla_props::hlo::{ElementType, Opcode};
/// use xla_props::property::{Limitation, LimitationKind};
/// let l = Limitation {
///     kind: LimitationKind::Skip,
///     op: Some("tan"),
///     dtype: Some("f8e4m3fn"),
///     backend: None,
///     reason: "tan is not defined for fp8",
/// };
/// assert!(l.matches(Opcode::Tan, ElementType::F8E4M3Fn, "interpreter"));
/// assert!(!l.matches(Opcode::Tan, ElementType::F16, "interpreter"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limitation {
    /// Skip or xfail.
    pub kind: LimitationKind,
    /// The op name, or any op.
    pub op: Option<&'static str>,
    /// The dtype name, or any dtype.
    pub dtype: Option<&'static str>,
    /// The backend name, or any backend.
    pub backend: Option<&'static str>,
    /// Why: printed with every case it matches.
    pub reason: &'static str,
}

impl Limitation {
    /// True when this limitation applies to the case.
    pub fn matches(&self, op: Opcode, dtype: ElementType, backend: &str) -> bool {
        self.op.is_none_or(|o| o == op.name())
            && self.dtype.is_none_or(|d| d == dtype.name())
            && self.backend.is_none_or(|b| b == backend)
    }
}

/// Which program the catalogue builds for each case of a property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Template {
    /// One instruction over parameters (the op under test), by case.
    SingleOp,
    /// The op followed by a second elementwise op (the variant names it), for fusion checks.
    ElementwiseChain,
    /// A multi-op program template (`crate::programs`): the op segment is `fusion`,
    /// the variant parameter names the template and its fusion configuration.
    Program,
}

/// Which layouts a property's cases use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutSelection {
    /// The default layout and the permuted ones.
    All,
    /// Only the default (row-major) layout.
    Default,
    /// Only permuted (non-default) layouts.
    Permuted,
}

/// A property, as declared by `#[xla_property]` and collected from every linked crate.
///
/// ```
/// use xla_props::property::registry;
/// let names: Vec<&str> = registry().iter().map(|p| p.name).collect();
/// assert!(names.contains(&"vs_reference"));
/// ```
#[derive(Debug)]
pub struct PropertySpec {
    /// The property name (the function name): the first segment of case names.
    pub name: &'static str,
    /// `module_path!()` where it was declared.
    pub module_path: &'static str,
    /// The ops it covers.
    pub ops: Selection,
    /// The dtypes it covers (intersected with what each op accepts).
    pub dtypes: Selection,
    /// The shape set name.
    pub shapes: &'static str,
    /// The input distributions.
    pub distributions: Selection,
    /// The layouts.
    pub layouts: LayoutSelection,
    /// What program the catalogue builds per case.
    pub template: Template,
    /// The tolerance of the simple checker.
    pub tolerance: Tolerance,
    /// Whether rounding must match the reference exactly (no ULP slack), overriding `tolerance` for floats.
    pub strict_rounding: bool,
    /// Known limitations, each with a reason.
    pub limitations: &'static [Limitation],
    /// At most this many cases (a deterministic, evenly strided subset), per backend.
    pub budget: Option<u64>,
    /// The property body.
    pub body: fn(&mut CaseContext<'_>) -> Outcome,
}

impl PropertySpec {
    /// The first limitation matching the case, if any.
    pub fn limitation(&self, op: Opcode, dtype: ElementType, backend: &str) -> Option<&Limitation> {
        self.limitations
            .iter()
            .find(|l| l.matches(op, dtype, backend))
    }
    /// True for properties declared inside the xla-props library itself.
    pub fn is_builtin(&self) -> bool {
        self.module_path == "xla_props" || self.module_path.starts_with("xla_props::")
    }
}

inventory::collect!(PropertySpec);

/// Every collected property, sorted by name (the order is the property index in [`super::CaseId`]).
pub fn registry() -> &'static [&'static PropertySpec] {
    static REGISTRY: OnceLock<Vec<&'static PropertySpec>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut v: Vec<&'static PropertySpec> = inventory::iter::<PropertySpec>().collect();
        v.sort_by(|a, b| a.name.cmp(b.name).then(a.module_path.cmp(b.module_path)));
        v
    })
}

/// The property with this name.
pub fn find_property(name: &str) -> Option<(u16, &'static PropertySpec)> {
    registry()
        .iter()
        .position(|p| p.name == name)
        .map(|i| (i as u16, registry()[i]))
}

/// What a failing case reports.
#[derive(Clone, Debug)]
pub struct Failure {
    /// One line: what went wrong.
    pub summary: String,
    /// The verdict, when the failure is a comparison.
    pub verdict: Option<Verdict>,
}

/// The outcome of one case: never a bool, never a panic. A body returns
/// `Pass`, `Fail` or `Skip`; the runner adds expected failures, unexpected
/// passes and rejections. It is the one outcome type ([`crate::report::Outcome`]),
/// its failures carrying the typed [`Failure`].
pub type Outcome = crate::report::Outcome<Box<Failure>>;

impl Outcome {
    /// A failure with a one-line summary.
    pub fn fail(summary: impl Into<String>) -> Outcome {
        Outcome::Fail(Box::new(Failure {
            summary: summary.into(),
            verdict: None,
        }))
    }
    /// The outcome of a verdict: agreement passes, a skipped comparison
    /// skips, anything else fails (carrying the verdict and its report).
    pub fn from_verdict(what: &str, verdict: Verdict) -> Outcome {
        match verdict {
            v if v.is_agreement() => Outcome::Pass,
            Verdict::Skipped { reason } => Outcome::Skip(format!("{what}: {reason}")),
            v => Outcome::Fail(Box::new(Failure {
                summary: format!("{what}: {}", first_line(&v.to_string())),
                verdict: Some(v),
            })),
        }
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Buckets of the ULP histogram (see `check::HistogramBucket`).
pub(super) const HISTOGRAM_BUCKETS: usize = 35;

pub(super) type RefResult = Result<Arc<Vec<Literal>>, crate::backend::BackendError>;

/// What every backend's run of one case shares: its module, its inputs and
/// the reference result, each computed once.
#[derive(Default)]
pub(super) struct SharedCase {
    pub(super) built: OnceLock<Result<Arc<BuiltCase>, String>>,
    pub(super) inputs: OnceLock<Result<Arc<Vec<Literal>>, String>>,
    pub(super) reference: OnceLock<RefResult>,
}

/// A module set by the property itself, and its inputs once generated.
pub(super) type LocalCase = (Arc<BuiltCase>, Option<Arc<Vec<Literal>>>);

/// A shared case and how many runs still need it.
type Slot = (Arc<SharedCase>, usize);

/// Per-case work shared by every backend's run of the case (module, inputs,
/// reference result), keyed by the case without its backend. An entry is
/// dropped after its last expected user has taken it, so memory stays flat.
#[derive(Default)]
pub struct ReferenceCache {
    map: Mutex<HashMap<CaseKey, Slot>>,
    pub(super) computed: std::sync::atomic::AtomicU64,
}

impl ReferenceCache {
    /// An empty cache.
    pub fn new() -> ReferenceCache {
        ReferenceCache::default()
    }
    /// How many reference results were computed (not served from the cache).
    pub fn computed(&self) -> u64 {
        self.computed.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub(super) fn take(&self, key: CaseKey, users: usize) -> Arc<SharedCase> {
        if users <= 1 {
            return Arc::default();
        }
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let entry = map.entry(key).or_insert_with(|| (Arc::default(), users));
        entry.1 -= 1;
        let shared = entry.0.clone();
        if entry.1 == 0 {
            map.remove(&key);
        }
        shared
    }
}

/// Everything a property body needs for one case.
pub struct CaseContext<'a> {
    /// The case.
    pub case: CaseId,
    /// The property.
    pub spec: &'static PropertySpec,
    /// The backend under test.
    pub backend: &'a dyn Backend,
    /// The reference (the oracle).
    pub reference: &'a dyn Backend,
    pub(super) cache: &'a ReferenceCache,
    pub(super) shared: Arc<SharedCase>,
    pub(super) run_seed: u64,
    /// A module the property set itself (not shared with other backends).
    pub(super) local: Option<LocalCase>,
    /// The program a property built and ran itself, for a failure's reproducer.
    pub(super) recorded: Option<(crate::hlo::Module, Vec<crate::literal::Literal>)>,
    pub(super) numerics: OnceLock<Arc<Numerics>>,
    pub(super) direct_reference: bool,
    pub(crate) max_ulp: Option<u64>,
    /// Elements accepted by each legal difference, over every judgement.
    pub(crate) legal: std::collections::BTreeMap<crate::check::LegalReason, u64>,
    pub(crate) last_verdict: Option<Verdict>,
    /// ULP histogram over the float outputs of the comparisons judged so far
    /// (bucket counts indexed like `check::HistogramBucket` labels).
    pub(crate) ulp_histogram: Option<[u64; HISTOGRAM_BUCKETS]>,
    /// Whether judging records the histogram (the runner turns it off when
    /// no `--json` report will carry it: one pass less over every output).
    pub(super) keep_histogram: bool,
    pub(super) draws: u64,
}
