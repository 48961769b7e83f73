//! Seeded generation of legal arguments for a whole module.

use super::analysis::{analyse, parameter_shapes, sample_type, Start};
use super::distribution::{convert_ties, uniform, Distribution};
use super::edges::{float_edges, integer_edges, FLOAT_EDGES};
use super::error::InputError;
use super::finite::{FiniteRepair, Step};
use super::graph::Graph;
use super::interval::Interval;
use super::point;
use super::rng::SplitMix;
use super::sampler::{shrink, Sampler};
use super::scale::ParameterRole;
use super::sites::{Demand, Site};
use crate::hlo::{ArrayShape, ElementType, Module, Opcode};
use crate::literal::Literal;

/// How many rounds of resampling violating elements before giving up.
pub const MAX_REJECTION_ROUNDS: usize = 200;

/// Arguments generated for a module, with how they were made legal.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct GeneratedInputs {
    /// One literal per entry parameter.
    #[serde(skip)]
    pub args: Vec<Literal>,
    /// The interval each parameter was drawn from (after propagation).
    pub intervals: Vec<Interval>,
    /// Whether elements had to be redrawn because a requirement that intervals
    /// could not guarantee was violated (`x*x - 1 >= 0`, overflow of `pow`, ...).
    pub rejection_sampling_used: bool,
    /// Elements redrawn for such requirements.
    pub resampled_elements: u64,
    /// Elements redrawn because they fell into a hole (`x - y != 0` for a divisor).
    pub hole_resamples: u64,
    /// Requirements the intervals alone do not guarantee.
    pub unguaranteed: Vec<String>,
    /// Requirements the point check could not evaluate (ops it does not model).
    pub unchecked: Vec<String>,
    /// How the inputs were made legal where the plain draw was not enough
    /// (a parameter's scale shrunk by the repair, indices left to XLA's
    /// clamping, ...): shown by `compare`.
    pub notes: Vec<String>,
    /// Parameters the requirements narrowed to a single value (a warning:
    /// such a parameter carries no signal). A reduce's init drawn as its
    /// reducer's identity on purpose is not listed.
    pub point_parameters: Vec<usize>,
    /// Requirements still violated by some elements when the repair's budget
    /// ran out (the reference may see values outside an op's domain there).
    pub unmet: Vec<String>,
    /// Each parameter's role, read from the dataflow (see [`ParameterRole`]):
    /// it chose the parameter's starting range.
    pub roles: Vec<ParameterRole>,
    /// Parameters whose range the finite repair narrowed because the
    /// reference's outputs were not finite (each also has a note).
    pub narrowed: Vec<usize>,
}

impl GeneratedInputs {
    /// Inputs given rather than generated (`--arg` files): the arguments,
    /// with nothing said about how they were drawn.
    pub fn given(args: Vec<Literal>) -> GeneratedInputs {
        GeneratedInputs {
            args,
            intervals: Vec::new(),
            rejection_sampling_used: false,
            resampled_elements: 0,
            hole_resamples: 0,
            unguaranteed: Vec::new(),
            unchecked: Vec::new(),
            notes: Vec::new(),
            point_parameters: Vec::new(),
            unmet: Vec::new(),
            roles: Vec::new(),
            narrowed: Vec::new(),
        }
    }
}

/// The edge values a parameter of `dtype` draws from under the edge
/// distributions: those of the one edge table (see `edges.rs`) that `legal`
/// holds (and every special), then the convert ties.
fn edge_values(
    distribution: Distribution,
    dtype: ElementType,
    legal: Interval,
    ties: &[(ElementType, f64)],
) -> Vec<f64> {
    if !distribution.draws_edges() {
        return Vec::new();
    }
    if dtype.is_float() {
        let mut e: Vec<f64> = float_edges(dtype, FLOAT_EDGES.len())
            .into_iter()
            .filter(|v| !v.is_finite() || legal.contains(*v))
            .collect();
        e.extend(
            ties.iter()
                .filter(|(t, v)| *t == dtype && legal.contains(*v))
                .map(|(_, v)| crate::literal::round_to_type(*v, dtype))
                .filter(|v| legal.contains(*v)),
        );
        e
    } else {
        integer_edges(dtype)
            .into_iter()
            .map(|v| v as f64)
            .filter(|v| legal.contains(*v))
            .collect()
    }
}

/// Generates arguments for every entry parameter of `module`, inside the
/// legal domain of every op in it, deterministically from `seed`.
///
/// ```
/// use xla_props::hlo::{ArrayShape, CompId, Computation, ElementType, InstrId, Instruction, Module, Opcode, Shape};
/// use xla_props::inputs::{generate_inputs, Distribution};
/// // sqrt(x - y)
/// let s = Shape::array(ElementType::F32, vec![64]);
/// let mut x = Instruction::new("x", Opcode::Parameter, s.clone(), vec![]);
/// x.attrs.parameter_number = Some(0);
/// let mut y = Instruction::new("y", Opcode::Parameter, s.clone(), vec![]);
/// y.attrs.parameter_number = Some(1);
/// let d = Instruction::new("d", Opcode::Subtract, s.clone(), vec![InstrId(0), InstrId(1)]);
/// let r = Instruction::new("r", Opcode::Sqrt, s.clone(), vec![InstrId(2)]);
/// let comp = Computation { name: "main".into(), instructions: vec![x, y, d, r], root: InstrId(3), other: vec![] };
/// let module = Module { name: "m".into(), attrs: vec![], computations: vec![comp], entry: CompId(0) };
/// let g = generate_inputs(&module, Distribution::Uniform, 7).unwrap();
/// assert!(!g.rejection_sampling_used);
/// for i in 0..64 {
///     assert!(g.args[0].get_f64(i) >= g.args[1].get_f64(i));
/// }
/// // the same seed gives the same arguments
/// assert_eq!(generate_inputs(&module, Distribution::Uniform, 7).unwrap().args, g.args);
/// ```
pub fn generate_inputs(
    module: &Module,
    distribution: Distribution,
    seed: u64,
) -> Result<GeneratedInputs, InputError> {
    let a = analyse(module, distribution, Start::Default)?;
    // edge values are filtered by the legal domain over the whole type, not
    // by the default sampling range (max and the subnormals lie outside it)
    let wide = if distribution.draws_edges() {
        Some(analyse(module, distribution, Start::Specials)?.params)
    } else {
        None
    };
    let g = &a.graph;
    let mut rng = SplitMix::new(seed);
    let index_params: Vec<usize> = a
        .sites
        .iter()
        .filter(|s| s.is_index)
        .filter_map(|s| g.nodes[s.node].param)
        .collect();
    let ties = convert_ties_of(g);
    let mut samplers = Vec::new();
    let mut args = Vec::new();
    let shapes = parameter_shapes(module)?;
    for (k, &p) in g.params.iter().enumerate() {
        let node = &g.nodes[p];
        let complex = node.dtype.is_some_and(ElementType::is_complex);
        let dtype = sample_type(node.dtype);
        let interval = sampling_interval(a.params[k], dtype);
        let legal = wide.as_ref().map_or(interval, |w| w[k]);
        let edges = edge_values(distribution, dtype, legal, &ties);
        let mut sampler = Sampler {
            dtype,
            interval,
            distribution,
            pool: Vec::new(),
            edges,
            index_param: index_params.contains(&k),
            complex,
        };
        let shape = shapes[k].clone();
        let count = shape.dims.iter().product::<i64>().max(0) as usize;
        if distribution == Distribution::Duplicates {
            let distinct = (count / 8).max(2);
            sampler.pool = (0..distinct)
                .map(|_| uniform(&mut rng, interval, dtype))
                .collect();
        }
        crate::literal::check_size(&shape)?;
        args.push(draw_argument(&mut sampler, &shape, count, &mut rng)?);
        samplers.push(sampler);
    }
    let point_parameters: Vec<usize> = a
        .params
        .iter()
        .zip(&a.start)
        .enumerate()
        .filter(|(_, (p, s))| p.lo == p.hi && s.lo != s.hi)
        .map(|(k, _)| k)
        .collect();
    let mut out = GeneratedInputs {
        args,
        intervals: a.params.clone(),
        rejection_sampling_used: false,
        resampled_elements: 0,
        hole_resamples: 0,
        unguaranteed: a
            .unguaranteed
            .iter()
            .map(|&k| a.sites[k].what.clone())
            .collect(),
        unchecked: Vec::new(),
        notes: a.notes.clone(),
        point_parameters,
        unmet: Vec::new(),
        roles: a.roles.clone(),
        narrowed: Vec::new(),
    };
    if !distribution.enforces_domain() || a.unguaranteed.is_empty() {
        return Ok(out);
    }
    let deps = g.param_dependencies();
    // a requirement on a value no parameter influences (a constant index, say)
    // cannot be met by choosing inputs: it is reported, not enforced
    let enforced: Vec<&Site> = a
        .unguaranteed
        .iter()
        .map(|&k| &a.sites[k])
        .filter(|s| !(s.is_index && distribution == Distribution::OutOfRangeIndices))
        .filter(|s| !deps[s.node].is_empty())
        .collect();
    repair(
        module,
        g,
        &enforced,
        &deps,
        &mut samplers,
        &mut rng,
        &mut out,
    );
    // what the point check could not check, or could not meet, the reference checks
    if distribution.wants_finite() && !(out.unchecked.is_empty() && out.unmet.is_empty()) {
        let point = PointRepair {
            module,
            g,
            enforced: &enforced,
            deps: &deps,
        };
        finite_repair(&point, &mut samplers, &mut rng, &mut out);
    }
    Ok(out)
}

/// The convert ties: for every float type some convert narrows into, the
/// values halfway between two of the narrow type's (as the wider type).
fn convert_ties_of(g: &Graph) -> Vec<(ElementType, f64)> {
    let mut ties: Vec<(ElementType, f64)> = Vec::new();
    for n in &g.nodes {
        if n.opcode == Opcode::Convert {
            if let (Some(to), Some(from)) =
                (n.dtype, n.operands.first().and_then(|&o| g.nodes[o].dtype))
            {
                if from.is_float() {
                    ties.extend(convert_ties(to).into_iter().map(|v| (from, v)));
                }
            }
        }
    }
    ties
}

/// A parameter's legal interval, inside its integer type's range (and for
/// 64-bit integers inside what f64 holds exactly).
fn sampling_interval(legal: Interval, dtype: ElementType) -> Interval {
    let mut interval = legal;
    if let Some((min, max)) = dtype.int_range() {
        interval = interval.intersect(Interval::new(min as f64, max as f64));
        if dtype == ElementType::U64 || dtype == ElementType::S64 {
            // f64 cannot hold the 64-bit extremes exactly; stay inside
            interval.hi = interval.hi.min(2f64.powi(63) - 1024.0);
            interval.lo = interval.lo.max(-(2f64.powi(63)));
        }
    }
    interval
}

/// One argument of `shape` (`count` elements) drawn by `sampler`: every bit
/// pattern in turn for an exhaustive narrow float, else one draw each.
fn draw_argument(
    sampler: &mut Sampler,
    shape: &ArrayShape,
    count: usize,
    rng: &mut SplitMix,
) -> Result<Literal, InputError> {
    if sampler.complex {
        let values: Vec<(f64, f64)> = (0..count).map(|_| sampler.draw_complex(rng)).collect();
        Ok(Literal::from_complex(shape, &values)?)
    } else if sampler.distribution == Distribution::Exhaustive
        && sampler.dtype.is_float()
        && sampler.dtype.bit_width() <= 16
    {
        let patterns = 1u64 << sampler.dtype.bit_width();
        let bits: Vec<u64> = (0..count as u64).map(|i| i % patterns).collect();
        Ok(Literal::from_bits(shape, &bits)?)
    } else {
        let values: Vec<f64> = (0..count).map(|_| sampler.draw(rng)).collect();
        Ok(Literal::from_f64s(shape, &values)?)
    }
}

/// What the point repair needs, to run again after the finite repair redraws.
struct PointRepair<'a> {
    module: &'a Module,
    g: &'a Graph,
    enforced: &'a [&'a Site],
    deps: &'a [Vec<usize>],
}

/// Evaluate, repair, retry on the reference (see `finite.rs`); the point
/// repair runs again after each redraw (a redrawn parameter may violate a
/// requirement it enforces).
fn finite_repair(
    point: &PointRepair<'_>,
    samplers: &mut [Sampler],
    rng: &mut SplitMix,
    out: &mut GeneratedInputs,
) {
    let mut finite = FiniteRepair::new(samplers.len());
    let unchecked = out.unchecked.clone();
    while finite.round(point.module, samplers, rng, &mut out.args) == Step::Again {
        out.notes.retain(|n| !n.starts_with("unmet: "));
        out.unmet.clear();
        repair(
            point.module,
            point.g,
            point.enforced,
            point.deps,
            samplers,
            rng,
            out,
        );
        out.unchecked.clone_from(&unchecked);
    }
    out.resampled_elements += finite.resampled;
    out.rejection_sampling_used |= finite.resampled > 0;
    for p in finite.narrowed() {
        out.narrowed.push(p);
        if let (Some(i), Some(s)) = (out.intervals.get_mut(p), samplers.get(p)) {
            *i = s.interval;
        }
    }
    out.notes.extend(finite.notes(samplers, &out.roles));
}

/// Rounds of redrawing after which a parameter that keeps failing has its
/// sampling interval halved (toward 0, or toward its bound nearest 0).
const SHRINK_EVERY: usize = 25;

/// Evaluate, then repair: evaluates the graph on the drawn arguments,
/// checks every enforced requirement on the elements whose value reaches the
/// output (a select's untaken branch does not), and redraws the parameter
/// elements that feed a violation; a parameter that keeps failing has its
/// scale shrunk. Bounded by [`MAX_REJECTION_ROUNDS`] and deterministic per
/// seed. What still fails at the end is listed in `out.unmet` (indices: left
/// to XLA's clamping, which is defined).
fn repair(
    module: &Module,
    g: &Graph,
    enforced: &[&Site],
    deps: &[Vec<usize>],
    samplers: &mut [Sampler],
    rng: &mut SplitMix,
    out: &mut GeneratedInputs,
) {
    let mut stuck = vec![0usize; samplers.len()];
    let mut best = vec![usize::MAX; samplers.len()];
    for round in 0..=MAX_REJECTION_ROUNDS {
        let vals = point::evaluate(module, g, &out.args);
        let masks = point::live_elements(g, &vals);
        let mut redraw: Vec<(usize, Option<usize>, bool)> = Vec::new();
        let mut failing: Vec<(&Site, u64)> = Vec::new();
        for s in enforced {
            let Some(v) = &vals[s.node] else {
                if round == 0 {
                    out.unchecked.push(s.what.clone());
                }
                continue;
            };
            let hole = matches!(s.demand, Demand::AwayFromZero(_));
            let node_count = v.len();
            let mask = &masks[s.node];
            let mut bad = 0u64;
            for (i, &x) in v.iter().enumerate() {
                if !mask.get(i).copied().unwrap_or(true) {
                    continue;
                }
                let ok = match s.demand {
                    Demand::Within(iv) => iv.contains(x),
                    Demand::Finite => x.is_finite(),
                    Demand::AwayFromZero(r) => x.abs() >= r,
                };
                if ok {
                    continue;
                }
                bad += 1;
                let params = &deps[s.node];
                let aligned: Vec<usize> = params
                    .iter()
                    .copied()
                    .filter(|&p| g.nodes[g.params[p]].element_count() == node_count)
                    .collect();
                if aligned.is_empty() {
                    redraw.extend(params.iter().map(|&p| (p, None, hole)));
                } else {
                    redraw.extend(aligned.iter().map(|&p| (p, Some(i), hole)));
                }
            }
            if bad > 0 {
                failing.push((s, bad));
            }
        }
        if redraw.is_empty() {
            return;
        }
        if round == MAX_REJECTION_ROUNDS {
            for (s, bad) in failing {
                out.unmet.push(format!(
                    "{} (still violated by {bad} elements after {MAX_REJECTION_ROUNDS} rounds of repair{})",
                    s.what,
                    if s.is_index {
                        "; XLA clamps such indices"
                    } else {
                        ""
                    }
                ));
            }
            out.notes
                .extend(out.unmet.iter().map(|u| format!("unmet: {u}")));
            return;
        }
        redraw.sort_unstable();
        redraw.dedup();
        // a parameter whose violations stop decreasing is stuck: shrink it
        let mut count = vec![0usize; samplers.len()];
        for r in &redraw {
            count[r.0] += 1;
        }
        for p in 0..samplers.len() {
            if count[p] == 0 || count[p] < best[p] {
                best[p] = best[p].min(count[p]);
                stuck[p] = 0;
                continue;
            }
            stuck[p] += 1;
            if stuck[p].is_multiple_of(SHRINK_EVERY) {
                let sampler = &mut samplers[p];
                let shrunk = shrink(sampler.interval).round_inward(sampler.dtype);
                if shrunk.lo < shrunk.hi && shrunk != sampler.interval {
                    out.notes.push(format!(
                        "parameter {p}: scale shrunk from {} to {shrunk} by the repair",
                        sampler.interval
                    ));
                    sampler.interval = shrunk;
                }
            }
        }
        for (p, elem, hole) in redraw {
            let sampler = &samplers[p];
            let lit = &mut out.args[p];
            let elems: Vec<usize> = match elem {
                Some(i) => vec![i],
                None => (0..lit.element_count()).collect(),
            };
            for i in elems {
                sampler.redraw(lit, i, rng);
                if hole {
                    out.hole_resamples += 1;
                } else {
                    out.resampled_elements += 1;
                    out.rejection_sampling_used = true;
                }
            }
        }
    }
}

/// Every bit pattern of a float type of at most 16 bits, as a rank-1 literal
/// in bit-pattern order (NaNs included): the input of an exhaustive sweep.
///
/// ```
/// use xla_props::hlo::ElementType;
/// use xla_props::inputs::exhaustive_bits;
/// let all = exhaustive_bits(ElementType::F8E5M2).unwrap();
/// assert_eq!(all.element_count(), 256);
/// assert_eq!(all.get_bits(0x3c), 0x3c); // 1.0
/// assert!(exhaustive_bits(ElementType::F32).is_none());
/// ```
pub fn exhaustive_bits(dtype: ElementType) -> Option<Literal> {
    if !dtype.is_float() || dtype.bit_width() > 16 {
        return None;
    }
    let n = 1u64 << dtype.bit_width();
    let shape = crate::hlo::ArrayShape::new(dtype, vec![n as i64]);
    let bits: Vec<u64> = (0..n).collect();
    Literal::from_bits(&shape, &bits).ok()
}
