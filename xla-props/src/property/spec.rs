//! `PropertySpec`: what `#[xla_property]` emits, and the registry that collects them.

use std::sync::OnceLock;

use super::context::{CaseContext, Outcome};
use crate::check::{ErrorSpec, Judge, KnownBug, Numerics, Policy};
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
        Judge::new(numerics, policy)
            .with_known_bugs(known_bugs)
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
