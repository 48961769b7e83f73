//! Legal inputs: each op's legal domain as data, its backward propagation
//! through a whole graph (HC4-revise style, to a fixpoint, through fusions,
//! calls and reductions), value distributions, and seeded generation.
//!
//! Generators only make inputs; they never run a backend.

mod analysis;
mod distribution;
mod domain;
mod edges;
mod error;
mod finite;
mod generate;
mod graph;
mod interval;
mod point;
mod preimage;
mod propagate;
mod rng;
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
    convert_ties, default_interval, DefaultRange, Distribution, UnknownDistribution, DEFAULT_RANGES,
};
pub use domain::{Constraint, DomainRule, Resolved, DOMAIN_RULES, INDEX_OPERANDS};
pub use edges::{
    float_edges, integer_edges, FloatEdge, IntEdge, CASE_FLOAT_EDGES, FLOAT_EDGES, INT_EDGES,
};
pub use error::InputError;
pub use finite::MAX_FINITE_ROUNDS;
pub use generate::{exhaustive_bits, generate_inputs, GeneratedInputs, MAX_REJECTION_ROUNDS};
pub use interval::Interval;
pub use rng::SplitMix;
pub use scale::ParameterRole;
pub use seeded::{generate, generate_with_roles, Role};
