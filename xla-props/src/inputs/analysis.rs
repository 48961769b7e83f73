//! The legal domain of a module's parameters: the requirement sites, the
//! starting intervals, their propagation through the graph, and what is left
//! to rejection sampling (`legal_intervals`; `generate.rs` draws from it).

use super::distribution::{default_interval, Distribution};
use super::error::InputError;
use super::graph::{Graph, GraphError, Reducer};
use super::interval::Interval;
use super::propagate::{live_nodes, Propagation};
use super::scale::ParameterRole;
use super::sites::{collect_sites, Demand, Site};
use crate::hlo::{ElementType, Module};

/// The parameter intervals of a module after propagation, and which
/// requirements they leave to rejection sampling.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LegalIntervals {
    /// One interval per entry parameter.
    pub params: Vec<Interval>,
    /// Requirements the intervals alone do not guarantee.
    pub unguaranteed: Vec<String>,
}

pub(super) struct Analysis {
    pub(super) graph: Graph,
    pub(super) params: Vec<Interval>,
    /// Where each parameter started, before propagation.
    pub(super) start: Vec<Interval>,
    pub(super) sites: Vec<Site>,
    pub(super) unguaranteed: Vec<usize>,
    pub(super) notes: Vec<String>,
    pub(super) roles: Vec<ParameterRole>,
}

/// How the starting intervals are chosen.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Start {
    /// The default sampling ranges, weights scaled by their fan-in.
    Default,
    /// Every finite value of each type.
    WholeType,
    /// Every value of each type (specials included), for the edge distributions.
    Specials,
}

pub(super) fn analyse(
    module: &Module,
    distribution: Distribution,
    start: Start,
) -> Result<Analysis, InputError> {
    for (index, shape) in module.parameter_shapes().into_iter().enumerate() {
        match shape.as_array() {
            Some(_) => {}
            None => {
                return Err(InputError::UnsupportedParameter {
                    index,
                    shape: shape.to_string(),
                })
            }
        }
    }
    let graph = Graph::build(module).map_err(|e| match e {
        GraphError::Cycle(c) => InputError::Graph(format!("cycle in computation {c}")),
        GraphError::TooDeep => InputError::Graph("calls nested more than 64 deep".into()),
    })?;
    let want_finite = distribution.wants_finite();
    // roles read the dataflow through loops and conditionals too
    let roles = match Graph::build_unrolled(module) {
        Ok(unrolled) => super::scale::parameter_roles(module, &unrolled),
        Err(_) => super::scale::parameter_roles(module, &graph),
    };
    let begin = |how: Start, with_roles: bool| -> Vec<Interval> {
        let mut v = start_intervals(&graph, how);
        if how == Start::Default && with_roles {
            for (k, role) in roles.iter().enumerate() {
                if let (Some(r), Some(i)) = (role.range(), v.get_mut(k)) {
                    let t = sample_type(graph.nodes[graph.params[k]].dtype);
                    let scaled = i.intersect(r).round_inward(t);
                    // a reduce's identity (a point) stays; so does a range
                    // that leaves a single value
                    if !scaled.is_empty() && scaled.lo < scaled.hi && i.lo < i.hi {
                        *i = scaled;
                    }
                }
            }
        }
        v
    };
    let mut notes = Vec::new();
    let mut used = begin(start, true);
    let mut attempt = solve(module, &graph, used.clone(), want_finite, false);
    if attempt.is_err() && start == Start::Default {
        // a role's range is a choice too: without them
        used = begin(Start::Default, false);
        attempt = solve(module, &graph, used.clone(), want_finite, false);
        if attempt.is_ok() {
            notes.push(
                "the parameters' roles leave no legal input: drawn from the default ranges"
                    .to_string(),
            );
        }
    }
    if attempt.is_err() && start == Start::Default {
        // the default range is a choice, not the legal domain: not yet a proof
        used = begin(Start::WholeType, false);
        attempt = solve(module, &graph, used.clone(), want_finite, false);
        if attempt.is_ok() {
            notes.push(
                "the default sampling ranges leave no legal input: drawn from the whole \
                 range of each type"
                    .to_string(),
            );
        }
    }
    let (params, sites, unguaranteed) = match attempt {
        Ok(s) => s,
        // no in-range index: XLA clamps (dynamic slices, gather) or skips
        // (scatter) out-of-range indices, which is defined; fall back to that
        Err(_) => match solve(module, &graph, used.clone(), want_finite, true) {
            Ok(s) => {
                notes.push(
                    "no in-range index exists for some indexing op: its indices are drawn \
                     as they come and XLA's clamping (skipping, for scatter) applies"
                        .to_string(),
                );
                s
            }
            Err(what) => return Err(InputError::Infeasible(what)),
        },
    };
    let start_params = used;
    Ok(Analysis {
        graph,
        params,
        start: start_params,
        sites,
        unguaranteed,
        notes,
        roles,
    })
}

/// The type a parameter's values are drawn in: its element type, or the
/// component type of a complex one (each part is drawn from the parameter's
/// interval: the interval of a complex parameter bounds both parts).
pub(super) fn sample_type(dtype: Option<ElementType>) -> ElementType {
    let t = dtype.unwrap_or(ElementType::F32);
    crate::literal::component_type(t).unwrap_or(t)
}

/// Each parameter's interval before propagation; a reduce's init that is an
/// entry parameter starts as its reducer's identity (a complex one: that
/// real value, drawn with a zero imaginary part).
fn start_intervals(graph: &Graph, how: Start) -> Vec<Interval> {
    let mut start: Vec<Interval> = graph
        .params
        .iter()
        .map(|&p| {
            let t = sample_type(graph.nodes[p].dtype);
            let i = match how {
                Start::Default => default_interval(t),
                Start::WholeType => Interval::finite_of_type(t),
                Start::Specials => Interval::of_type(t),
            };
            i.round_inward(t)
        })
        .collect();
    // a reduce's init value must be an identity of its reducer (XLA's
    // contract; jax.lax.reduce: "init_values must be an identity of
    // computation ... if violated the result is undefined"): an init that is
    // an entry parameter is drawn as exactly that identity
    for n in &graph.nodes {
        let (Some(reducer), Some(&init)) = (n.reducer, n.operands.get(1)) else {
            continue;
        };
        let Some(p) = graph.nodes[init].param.filter(|&p| p < start.len()) else {
            continue;
        };
        let t = sample_type(graph.nodes[init].dtype);
        let identity = match reducer {
            Reducer::Add => 0.0,
            Reducer::Mul => 1.0,
            Reducer::Max => Interval::finite_of_type(t).lo,
            Reducer::Min => Interval::finite_of_type(t).hi,
            Reducer::Other => continue,
        };
        start[p] = Interval::point(identity);
    }
    start
}

type Solved = (Vec<Interval>, Vec<Site>, Vec<usize>);

/// Propagates from `start`: HC4 narrowing by the unconditional requirements
/// (a proof when it empties a parameter), selects split by their predicate,
/// then inner steps for what is still not guaranteed. `drop_index` leaves
/// index ranges out (XLA's clamping applies). The error names the
/// requirement that cannot hold.
fn solve(
    module: &Module,
    graph: &Graph,
    start: Vec<Interval>,
    want_finite: bool,
    drop_index: bool,
) -> Result<Solved, String> {
    let mut prop = Propagation::new(module, graph, start.clone());
    let mut sites = collect_sites(module, graph, want_finite, &prop.fwd);
    if drop_index {
        sites.retain(|s| !s.is_index);
    }
    let live = live_nodes(graph, &prop.fwd, &[]);
    let hard: Vec<Site> = sites.iter().filter(|s| live[s.node]).cloned().collect();
    if !prop.narrow(&hard) {
        return Err(blame(module, graph, &start, &hard));
    }
    let settled = prop.params.clone();
    if prop.split_selects(&sites) && !prop.narrow(&hard) {
        prop.params = settled;
        prop.narrow(&hard);
    }
    for _round in 0..12 {
        let open: Vec<usize> = (0..hard.len())
            .filter(|&k| !guaranteed(&hard[k], &prop))
            .collect();
        if open.is_empty() {
            break;
        }
        let good = prop.params.clone();
        for &k in &open {
            let s = &hard[k];
            let Some(want) = s.interval(graph.nodes[s.node].dtype) else {
                continue;
            };
            let snapshot = prop.params.clone();
            if prop.ensure(s.node, want, 0) {
                prop.forward();
            } else {
                prop.params = snapshot;
            }
        }
        if prop.params == good {
            break;
        }
        // an inner step that leaves no legal input proves nothing: undo it
        if !prop.narrow(&hard) {
            prop.params = good;
            prop.narrow(&hard);
            break;
        }
    }
    let open: Vec<usize> = (0..sites.len())
        .filter(|&k| !guaranteed(&sites[k], &prop))
        .collect();
    Ok((prop.params.clone(), sites, open))
}

/// The requirement that alone leaves no legal input from `start`, or the
/// first few when only their combination does.
fn blame(module: &Module, graph: &Graph, start: &[Interval], sites: &[Site]) -> String {
    for s in sites {
        let mut p = Propagation::new(module, graph, start.to_vec());
        if !p.narrow(std::slice::from_ref(s)) {
            return s.what.clone();
        }
    }
    let names: Vec<&str> = sites.iter().take(3).map(|s| s.what.as_str()).collect();
    format!("the requirements together ({}, ...)", names.join(", "))
}

fn guaranteed(s: &Site, prop: &Propagation<'_>) -> bool {
    let f = prop.fwd[s.node];
    match s.demand {
        Demand::Within(i) => i.contains_interval(f),
        Demand::Finite => match prop.g.nodes[s.node].dtype {
            // no interval says a complex value is finite
            Some(t) if t.is_complex() => false,
            Some(t) => Interval::finite_of_type(t).contains_interval(f),
            None => true,
        },
        Demand::AwayFromZero(r) => f.lo >= r || f.hi <= -r,
    }
}

/// The legal parameter intervals of a module under a distribution, and the
/// requirements they leave to rejection sampling (see [`generate_inputs`]).
pub fn legal_intervals(
    module: &Module,
    distribution: Distribution,
) -> Result<LegalIntervals, InputError> {
    let a = analyse(module, distribution, Start::Default)?;
    Ok(LegalIntervals {
        params: a.params,
        unguaranteed: a
            .unguaranteed
            .iter()
            .map(|&k| a.sites[k].what.clone())
            .collect(),
    })
}

/// The entry's array parameters as the caller passes them: global arrays
/// for a module that runs on many devices.
pub(super) fn parameter_shapes(module: &Module) -> Result<Vec<crate::hlo::ArrayShape>, InputError> {
    let program =
        crate::reference::spmd::DeviceProgram::multi(module).map_err(InputError::Graph)?;
    match program {
        Some(p) => p.global_parameter_shapes(module).map_err(InputError::Graph),
        None => Ok(module
            .parameter_shapes()
            .iter()
            .filter_map(|s| s.as_array().cloned())
            .collect()),
    }
}
