//! What a legal difference is (`LegalDifference`), what it is decided from
//! (`Setting`) and given (`Case`), what it gives (`Evidence`), and the
//! helpers entries share to build their evidence.

use crate::check::compare::MagnitudeSums;
use crate::check::known_bugs::{KnownBug, KnownBugNote};
use crate::check::numerics::{Approximation, Numerics};
use crate::check::policy::{EvalFn, Policy};
use crate::check::verdict::LegalReason;
use crate::hlo::{ElementType, Module};
use crate::literal::Literal;

/// What admissibility is decided from.
pub(crate) struct Setting<'a> {
    pub numerics: &'a Numerics,
    pub policy: Policy,
    pub strict_rounding: bool,
    pub known_bugs: &'a [KnownBug],
}

/// What evidence is built from.
pub(crate) struct Case<'a, 'e> {
    pub policy: Policy,
    pub module: &'a Module,
    pub inputs: &'a [Literal],
    pub expected: &'a [Literal],
    pub numerics: &'a Numerics,
    pub known_bugs: &'a [KnownBug],
    pub reference: &'a EvalFn<'e>,
}

impl Case<'_, '_> {
    /// The reference's outputs for `module` on `inputs`.
    pub fn eval(&self, module: &Module, inputs: &[Literal]) -> Option<Vec<Literal>> {
        (self.reference)(module, inputs)
    }
}

/// One piece of evidence for a legal difference.
pub(crate) enum Evidence<'n> {
    /// Subnormal results of these types may be zero.
    FlushOutputs(&'n [ElementType]),
    /// These approximate functions are within their budgets.
    Approximations(&'n [Approximation]),
    /// Reductions may be reassociated: the zero-sum sign rule, and the
    /// magnitude sums of output 0 when the root is a reduction.
    Reassociation(Option<MagnitudeSums>),
    /// Outputs the backend may legally return instead of the reference's.
    Outputs(Vec<Literal>),
    /// A variant module the backend may legally compute instead: its
    /// enclosure (on the case's inputs) is legal too.
    Variant(Module),
    /// The carried values of an unstable sort compare per tie run.
    UnstableSort,
    /// A known bug's model: what the buggy backend computes, and the model
    /// module (whose enclosure under the backend's numerics counts too,
    /// where the exact outputs do not explain the mismatch). Several notes:
    /// the models of these bugs applied one after the other to one module
    /// (bugs that act together in one program).
    KnownBug(Vec<KnownBugNote>, Vec<Literal>, Module),
    /// A known bug whose wrong values are not deterministic: per output,
    /// the elements it may make any value.
    KnownBugAnyValue(KnownBugNote, Vec<Vec<bool>>),
    /// Per output, the elements the specification leaves open (any value).
    AnyValue(Vec<Vec<bool>>),
    /// Values inside the enclosure of every legal value are legal.
    PropagatedBound,
}

/// One legal difference.
pub(crate) trait LegalDifference: Sync {
    /// The reason reports name.
    fn reason(&self) -> LegalReason;
    /// What it is, in one line (listed in `docs/numerics.md`).
    fn summary(&self) -> &'static str;
    /// Whether the backend's numerics and the policy admit it.
    fn admissible(&self, s: &Setting<'_>) -> bool;
    /// Whether its evidence costs nothing (no evaluation): applied in the
    /// judge's first, cheap comparison.
    fn cheap(&self) -> bool {
        false
    }
    /// Its evidence for one case.
    fn evidence<'n>(&self, c: &Case<'n, '_>) -> Vec<Evidence<'n>>;
}

/// A `Numerics` with only the op-semantics flag `pick` keeps.
pub(crate) fn only_semantics(n: &Numerics, pick: impl Fn(&mut Numerics)) -> Numerics {
    let mut only = Numerics {
        fast_min_max: false,
        reduce_precision_in_own_type: Vec::new(),
        convolution_multiplies_padding: false,
        convolution_multiplies_dilation_holes: false,
        ..n.clone()
    };
    let mut full = n.clone();
    pick(&mut full);
    only.fast_min_max = full.fast_min_max;
    only.reduce_precision_in_own_type = full.reduce_precision_in_own_type;
    only.convolution_multiplies_padding = full.convolution_multiplies_padding;
    only.convolution_multiplies_dilation_holes = full.convolution_multiplies_dilation_holes;
    only
}

/// The evidence of a variant module: the reference's outputs on it (and on
/// flushed inputs when the backend flushes), and the variant itself for the
/// propagated bound.
pub(crate) fn variant_evidence<'n>(c: &Case<'n, '_>, variant: Option<Module>) -> Vec<Evidence<'n>> {
    let Some(m) = variant else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(o) = c.eval(&m, c.inputs) {
        out.push(Evidence::Outputs(o));
    }
    if let Some(f) = crate::check::alternatives::flush_subnormal_inputs(c.inputs, c.numerics) {
        if let Some(o) = c.eval(&m, &f) {
            out.push(Evidence::Outputs(o));
        }
    }
    out.push(Evidence::Variant(m));
    out
}
