//! Legal inputs: each op's legal domain as data, its backward propagation
//! through a whole graph (HC4-revise style, to a fixpoint, through fusions,
//! calls and reductions), value distributions, and seeded generation.
//!
//! Generators only make inputs; they never run a backend.

mod analysis;
mod distribution;
mod domain;
mod error;
mod finite;
mod generate;
mod graph;
mod interval;
mod point;
mod preimage;
mod propagate;
mod sampler;
mod scale;
mod seeded;
mod sites;

#[cfg(test)]
mod complex_tests;
#[cfg(test)]
mod roles_tests;
#[cfg(test)]
mod tests;

pub use analysis::{legal_intervals, LegalIntervals};
pub use distribution::{
    convert_ties, default_interval, integer_edges, DefaultRange, Distribution, FloatEdge,
    UnknownDistribution, DEFAULT_RANGES, FLOAT_EDGES,
};
pub use domain::{Constraint, DomainRule, Resolved, DOMAIN_RULES, INDEX_OPERANDS};
pub use error::InputError;
pub use finite::MAX_FINITE_ROUNDS;
pub use generate::{exhaustive_bits, generate_inputs, GeneratedInputs, MAX_REJECTION_ROUNDS};
pub use interval::Interval;
pub use scale::ParameterRole;
pub use seeded::{generate, CaseDistribution, Role, SplitMix};
