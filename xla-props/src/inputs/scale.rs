//! Scale-aware magnitudes: each parameter's role in the program, read from
//! the dataflow of the flattened graph (never from a parameter's name), and
//! the range that role is drawn from, so that a model's activations,
//! gradients and optimizer updates stay finite and O(1) instead of growing
//! (or collapsing through saturating activations) layer after layer.
//!
//! Every role, its rule and its range are in [`ParameterRole`]. The rules
//! are tried in one order (integers: label, index, step count; floats:
//! weight, norm scale, moment, average, bias, rate); the first that holds wins, and a parameter no rule claims is
//! [`ParameterRole::Data`], drawn from the default range of its type.

use std::fmt;

use super::graph::{Graph, Node, NodeId};
use super::interval::Interval;
use crate::hlo::{ConstantData, ElementType, Module, Opcode};

/// What a parameter is to the program, read from the dataflow. Each variant
/// documents the rule that gives it and the range it is drawn from; the
/// same text is [`ParameterRole::rule`], shown by `compare`.
///
/// "Reaches" below means: through ops that move values without changing
/// their magnitude ([`PASS_THROUGH`]: broadcast, reshape, transpose, copy,
/// bitcast, convert, slice, reverse), with fusions, calls and maps inlined.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "role")]
pub enum ParameterRole {
    /// Rule: a float parameter that reaches the right operand of a dot or
    /// the kernel of a convolution (not both sides of the same contraction:
    /// that is a Gram matrix). Range: `±sqrt(3 / fan_in)` (variance
    /// `1 / fan_in`, the Glorot/He argument with a uniform distribution), the
    /// smallest over its contractions.
    Weight {
        /// Products each output element of its contraction sums.
        fan_in: f64,
    },
    /// Rule: a float parameter that reaches an operand of a multiply whose
    /// other operand is a normalized value (an rsqrt, a divide by a sqrt, or
    /// a product of one) that does not depend on the parameter itself, also
    /// after products with other such values (RMSNorm's
    /// `(x * scale) * rsqrt(mean(x^2) + eps)`). Range: `[0.5, 1.5]` (ones at initialization,
    /// perturbed so that the scale still carries a signal).
    NormScale,
    /// Rule: a float parameter that reaches the operand of a sqrt, an rsqrt
    /// or a fractional power (adafactor's `v ** -0.5`) through sums,
    /// products (not squares), quotients (as the dividend), differences (as
    /// the minuend), selects and extrema: an optimizer's second moment
    /// (adam's `nu`, the centered RMSprop's `nu` in `nu - mu^2`), a
    /// batch norm's running variance. Range: `[0, 1]` (non-negative, like the
    /// squares it averages).
    Moment,
    /// Rule: a float parameter multiplied by a constant decay in `[0.5, 1)`,
    /// the product added to something: an exponential moving average
    /// (adam's first moment `mu`, a momentum, a batch norm's running mean).
    /// Range: `[-0.1, 0.1]` (an average of gradients is small; its square
    /// stays below a second moment's range, as the centered RMSprop's
    /// `nu - mu^2` needs).
    Average,
    /// Rule: a float parameter that reaches an operand of an add whose other
    /// operand is the result of a dot or a convolution, or a normalized value
    /// (a norm's shift), that does not depend on the parameter itself (a
    /// residual `x + f(x)` is no bias), also after being concatenated with
    /// other biases (an LSTM's gates). Range: `[-0.25, 0.25]` (zeros at initialization in
    /// most libraries; small, non-zero values keep its signal).
    Bias,
    /// Rule: a float scalar that, through products, quotients (as the
    /// dividend) and negations, reaches an add or subtract whose other
    /// operand is an entry parameter: `p - lr * update`, a learning rate.
    /// Range: `[1e-4, 1e-2]`.
    Rate,
    /// Rule: an integer scalar that, through integer arithmetic, selects and
    /// extrema, reaches a convert to a float type (as a step count does on
    /// its way to a bias correction `1 - b^t`). Range: `[1, 16]`.
    StepCount,
    /// Rule: an integer parameter compared (through integer arithmetic) with
    /// an iota, as one-hot labels are. Range: `[0, classes)`, the iota's
    /// extent along its dimension.
    Label {
        /// The number of classes.
        classes: i64,
    },
    /// Rule: an integer parameter that reaches an index operand (gather,
    /// scatter, dynamic slices) through integer arithmetic, selects and
    /// concatenations. Range: `[-extent, extent)` for the smallest extent of
    /// the dimensions it may index (negative values for the programs that
    /// wrap them, as `take_along_axis` does), then the legal range that
    /// propagation gives where it can see the index's way.
    Index {
        /// The smallest extent of a dimension it indexes.
        extent: i64,
    },
    /// Rule: a float parameter that is none of the above but reaches an
    /// operand of a dot or a convolution's input: the data a layer takes,
    /// or a weight multiplied from the left (equinox's `W @ x`, whose
    /// right operand is the data). Range: `[-1, 1]` (standardized data:
    /// with the other side at variance `1 / fan_in` a layer's
    /// pre-activations stay of order one, where the default range would
    /// saturate every gate and overflow `exp`).
    Input,
    /// Rule: a float parameter that is none of the above and takes the
    /// place of a layer's activations: a table whose rows a gather looks up
    /// for arithmetic (a token embedding), or a value added to, subtracted
    /// from or joined (concatenated) with a lookup, a dot's or a
    /// convolution's result or a normalized value, directly or after
    /// products with other values (a position embedding, a class token, a
    /// batch norm's running mean, a VAE's noise in `mu + sigma * eps`). Range: `[-1, 1]`
    /// (embeddings and running means are of order one; the default range
    /// makes every later layer overflow or saturate).
    Activation,
    /// No rule holds: the default sampling range of the type.
    Data,
}

impl ParameterRole {
    /// The role's name (as `compare` and the JSON report print it).
    pub fn name(&self) -> &'static str {
        match self {
            ParameterRole::Weight { .. } => "weight",
            ParameterRole::NormScale => "norm-scale",
            ParameterRole::Moment => "moment",
            ParameterRole::Average => "average",
            ParameterRole::Bias => "bias",
            ParameterRole::Rate => "rate",
            ParameterRole::StepCount => "step-count",
            ParameterRole::Label { .. } => "label",
            ParameterRole::Index { .. } => "index",
            ParameterRole::Input => "input",
            ParameterRole::Activation => "activation",
            ParameterRole::Data => "data",
        }
    }

    /// The dataflow rule that gives this role.
    pub fn rule(&self) -> &'static str {
        match self {
            ParameterRole::Weight { .. } => {
                "reaches the right operand of a dot or a convolution's kernel"
            }
            ParameterRole::NormScale => {
                "multiplies a normalized value (after an rsqrt or a divide by a sqrt), directly or after other factors"
            }
            ParameterRole::Moment => "reaches a sqrt, an rsqrt or a fractional power through sums, products and quotients",
            ParameterRole::Average => "multiplied by a decay in [0.5, 1), the product added to something",
            ParameterRole::Bias => "is added to the result of a dot or a convolution, or to a normalized value",
            ParameterRole::Rate => {
                "a scalar whose product is added to or subtracted from a parameter"
            }
            ParameterRole::StepCount => "an integer scalar converted to a float",
            ParameterRole::Label { .. } => "compared with an iota (one-hot)",
            ParameterRole::Index { .. } => {
                "reaches an index operand (gather, scatter, dynamic slice)"
            }
            ParameterRole::Input => "reaches an operand of a dot or a convolution's input",
            ParameterRole::Activation => "looked up by a gather, or added to, subtracted from or joined with a layer's activations",
            ParameterRole::Data => "no rule holds",
        }
    }

    /// The range this role draws from (intersected with the default range
    /// and the legal domain); None: the default range.
    pub fn range(&self) -> Option<Interval> {
        match *self {
            ParameterRole::Weight { fan_in } => {
                let b = (3.0 / fan_in).sqrt();
                Some(Interval::new(-b, b))
            }
            ParameterRole::NormScale => Some(Interval::new(0.5, 1.5)),
            ParameterRole::Moment => Some(Interval::new(0.0, 1.0)),
            ParameterRole::Average => Some(Interval::new(-0.1, 0.1)),
            ParameterRole::Bias => Some(Interval::new(-0.25, 0.25)),
            ParameterRole::Rate => Some(Interval::new(1e-4, 1e-2)),
            ParameterRole::StepCount => Some(Interval::new(1.0, 16.0)),
            ParameterRole::Label { classes } => Some(Interval::new(0.0, (classes - 1) as f64)),
            ParameterRole::Index { extent } => {
                Some(Interval::new(-extent as f64, (extent - 1) as f64))
            }
            ParameterRole::Input | ParameterRole::Activation => Some(Interval::new(-1.0, 1.0)),
            ParameterRole::Data => None,
        }
    }
}

impl fmt::Display for ParameterRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParameterRole::Weight { fan_in } => write!(f, "weight (fan-in {fan_in})"),
            ParameterRole::Label { classes } => write!(f, "label ({classes} classes)"),
            ParameterRole::Index { extent } => write!(f, "index (extent {extent})"),
            r => f.write_str(r.name()),
        }
    }
}

/// Ops that pass a parameter's values through unchanged in magnitude.
pub(crate) const PASS_THROUGH: &[Opcode] = &[
    Opcode::Broadcast,
    Opcode::Reshape,
    Opcode::Copy,
    Opcode::Transpose,
    Opcode::Bitcast,
    Opcode::Convert,
    Opcode::Slice,
    Opcode::Reverse,
];

/// How far the backward pattern checks look.
const MAX_DEPTH: usize = 64;

/// The entry parameter a node's values come from, through pass-through ops.
fn source_param(g: &Graph, mut n: NodeId) -> Option<usize> {
    for _ in 0..MAX_DEPTH {
        let node = g.nodes.get(n)?;
        if let Some(p) = node.param {
            return Some(p);
        }
        if !PASS_THROUGH.contains(&node.opcode) {
            return None;
        }
        n = *node.operands.first()?;
    }
    None
}

/// The node a value comes from, through pass-through ops.
fn origin_id(g: &Graph, mut n: NodeId) -> Option<NodeId> {
    for _ in 0..MAX_DEPTH {
        let node = g.nodes.get(n)?;
        if !PASS_THROUGH.contains(&node.opcode) {
            return Some(n);
        }
        n = *node.operands.first()?;
    }
    None
}

/// The node a value comes from, through pass-through ops.
fn origin(g: &Graph, n: NodeId) -> Option<&Node> {
    g.nodes.get(origin_id(g, n)?)
}

/// Whether `n` is a normalized value: an rsqrt, a divide by a sqrt, or a
/// product with one.
fn normalized(g: &Graph, n: NodeId, depth: usize) -> bool {
    let Some(node) = origin(g, n) else {
        return false;
    };
    match node.opcode {
        Opcode::Rsqrt => true,
        Opcode::Divide => node
            .operands
            .get(1)
            .and_then(|&d| origin(g, d))
            .is_some_and(|d| d.opcode == Opcode::Sqrt),
        Opcode::Multiply if depth > 0 => node.operands.iter().any(|&o| normalized(g, o, depth - 1)),
        _ => false,
    }
}

/// Products each output element of a contraction sums.
fn fan_in(module: &Module, g: &Graph, n: NodeId) -> Option<f64> {
    let node = &g.nodes[n];
    let instr = module.comp(node.comp).instr(node.instr);
    let rhs = &g.nodes[*node.operands.get(1)?];
    let fan: i64 = match node.opcode {
        Opcode::Dot => {
            let d = instr.attrs.dot_dims.as_ref()?;
            d.rhs_contracting
                .iter()
                .map(|&c| {
                    usize::try_from(c)
                        .ok()
                        .and_then(|c| rhs.dims.get(c))
                        .copied()
                })
                .product::<Option<i64>>()?
        }
        Opcode::Convolution => {
            let d = instr.attrs.conv_dims.as_ref()?;
            let out = usize::try_from(d.kernel_output_feature).ok()?;
            let total: i64 = rhs.dims.iter().product();
            total / rhs.dims.get(out).copied().filter(|&o| o > 0)?
        }
        _ => return None,
    };
    (fan > 1).then_some(fan as f64)
}

/// Per entry parameter, the smallest fan-in of the contractions it is the
/// weight of (None: not a weight).
fn weight_fan_ins(module: &Module, g: &Graph) -> Vec<Option<f64>> {
    let mut fans: Vec<Option<f64>> = vec![None; g.params.len()];
    for (id, n) in g.nodes.iter().enumerate() {
        if !matches!(n.opcode, Opcode::Dot | Opcode::Convolution) || n.operands.len() != 2 {
            continue;
        }
        let (Some(p), Some(fan)) = (source_param(g, n.operands[1]), fan_in(module, g, id)) else {
            continue;
        };
        // the left operand being the same parameter is a Gram matrix, not a weight
        if source_param(g, n.operands[0]) == Some(p) {
            continue;
        }
        let float = g.nodes[g.params[p]].dtype.is_some_and(|t| t.is_float());
        if let Some(slot) = fans.get_mut(p).filter(|_| float) {
            // the largest fan-in gives the smallest bound
            *slot = Some(slot.map_or(fan, |o: f64| o.max(fan)));
        }
    }
    fans
}

/// The graph's users, for walking forward from a parameter.
struct Flow<'g> {
    g: &'g Graph,
    users: Vec<Vec<(NodeId, usize)>>,
    /// The entry parameters (by number) each node depends on.
    deps: Vec<Vec<usize>>,
}

/// The uses a walk visits, as (user, operand index).
type Uses = Vec<(NodeId, usize)>;

impl<'g> Flow<'g> {
    fn new(g: &'g Graph) -> Self {
        let mut users = vec![Vec::new(); g.nodes.len()];
        for (id, n) in g.nodes.iter().enumerate() {
            for (k, &o) in n.operands.iter().enumerate() {
                if let Some(u) = users.get_mut(o) {
                    u.push((id, k));
                }
            }
        }
        Flow {
            g,
            users,
            deps: g.param_dependencies(),
        }
    }

    /// Every use the values of `from` reach, walking on through a user
    /// when `through(user, operand index)` holds.
    fn reach(&self, from: NodeId, through: impl Fn(&Node, usize) -> bool) -> Uses {
        let mut seen = vec![false; self.g.nodes.len()];
        let mut stack = vec![from];
        let mut uses = Vec::new();
        while let Some(n) = stack.pop() {
            for &(u, k) in self.users.get(n).into_iter().flatten() {
                uses.push((u, k));
                if !seen[u] && through(&self.g.nodes[u], k) {
                    seen[u] = true;
                    stack.push(u);
                }
            }
        }
        uses
    }

    /// The other operand of a binary use.
    fn other(&self, (u, k): (NodeId, usize)) -> Option<NodeId> {
        let ops = &self.g.nodes[u].operands;
        (ops.len() == 2).then(|| ops[1 - k.min(1)])
    }

    /// The other operand of a binary use, when it does not depend on entry
    /// parameter `p` (`x * rsqrt(sum(x * x))` normalizes x, it does not
    /// scale it; `x + dot(x, w)` is a residual, not a bias).
    fn other_without(&self, use_: (NodeId, usize), p: usize) -> Option<NodeId> {
        self.other(use_).filter(|&o| !self.deps[o].contains(&p))
    }
}

fn pass_through(n: &Node, _k: usize) -> bool {
    PASS_THROUGH.contains(&n.opcode)
}

/// What moves a parameter's elements without computing on them: the
/// pass-through ops, and taking parts of it (dynamic slices and gathers of
/// it, as a scan takes one step of a sequence), joining it with others
/// (concatenate, pad, a dynamic update), or choosing it (select).
fn moves_values(n: &Node, k: usize) -> bool {
    pass_through(n, k)
        || matches!(n.opcode, Opcode::Concatenate)
        || (matches!(
            n.opcode,
            Opcode::DynamicSlice | Opcode::Gather | Opcode::Pad
        ) && k == 0)
        || (n.opcode == Opcode::DynamicUpdateSlice && k <= 1)
        || (n.opcode == Opcode::Select && k > 0)
}

/// Integer arithmetic an index or a count passes through on its way.
fn integer_arithmetic(n: &Node, k: usize) -> bool {
    pass_through(n, k)
        || matches!(
            n.opcode,
            Opcode::Add
                | Opcode::Subtract
                | Opcode::Multiply
                | Opcode::Maximum
                | Opcode::Minimum
                | Opcode::Clamp
                | Opcode::Concatenate
        )
        || (n.opcode == Opcode::Select && k > 0)
}

/// What keeps parameter `p`'s sign on the way to a sqrt: sums, products
/// (not with another factor of `p` itself: `p * p * c` is non-negative
/// whatever the sign of `p`, as a gradient squared into adam's `nu` is),
/// dividends, minuends (the centered RMSprop's `nu - mu^2`), selects and
/// extrema.
fn sign_preserving<'a>(flow: &'a Flow<'_>, p: usize) -> impl Fn(&Node, usize) -> bool + 'a {
    move |n, k| {
        pass_through(n, k)
            || matches!(n.opcode, Opcode::Add | Opcode::Maximum | Opcode::Minimum)
            || (n.opcode == Opcode::Multiply
                && n.operands.len() == 2
                && !flow.deps[n.operands[1 - k.min(1)]].contains(&p))
            || (matches!(n.opcode, Opcode::Divide | Opcode::Subtract) && k == 0)
            || (n.opcode == Opcode::Select && k > 0)
    }
}

/// A layer's activations: a gather's lookup, a dot's or a convolution's
/// result, a normalized value, or sums and concatenations of them.
fn activation(g: &Graph, n: NodeId, depth: usize) -> bool {
    if normalized(g, n, 8) {
        return true;
    }
    origin(g, n).is_some_and(|node| match node.opcode {
        Opcode::Gather | Opcode::Dot | Opcode::Convolution => true,
        Opcode::Add | Opcode::Subtract | Opcode::Concatenate if depth > 0 => {
            node.operands.iter().any(|&o| activation(g, o, depth - 1))
        }
        // a lookup that fills what falls out of range (`jnp.take`)
        Opcode::Select if depth > 0 => node
            .operands
            .iter()
            .skip(1)
            .any(|&o| activation(g, o, depth - 1)),
        _ => false,
    })
}

/// The [`ParameterRole::Activation`] rule for parameter `number`, whose
/// uses as a factor (through pass-through ops and products with values
/// that do not depend on it) are `factors`: a VAE's noise `eps` in
/// `mu + sigma * eps` is added to a layer's output after a product.
fn takes_activations_place(flow: &Flow<'_>, number: usize, factors: &Uses) -> bool {
    let g = flow.g;
    // a table whose looked-up rows are computed with, not only moved
    let looked_up = factors.iter().any(|&(u, k)| {
        g.nodes[u].opcode == Opcode::Gather
            && k == 0
            && flow.reach(u, moves_values).iter().any(|&(v, _)| {
                matches!(
                    g.nodes[v].opcode,
                    Opcode::Add
                        | Opcode::Subtract
                        | Opcode::Multiply
                        | Opcode::Dot
                        | Opcode::Convolution
                        | Opcode::Reduce
                )
            })
    });
    let beside = factors.iter().any(|&(u, k)| match g.nodes[u].opcode {
        Opcode::Add | Opcode::Subtract => flow
            .other_without((u, k), number)
            .is_some_and(|o| activation(g, o, 4)),
        Opcode::Concatenate => g.nodes[u]
            .operands
            .iter()
            .any(|&o| !flow.deps[o].contains(&number) && activation(g, o, 4)),
        _ => false,
    });
    looked_up || beside
}

/// What carries parameter `p` as a factor: pass-through ops and products
/// with computed values that do not depend on `p`. A product with a
/// constant is not followed: `p * c` rescales `p`, and a role's range
/// describes the factor itself, not `p` in another unit (a program that
/// draws `p` in the default range and scales it down keeps doing so).
fn scaled_by_others<'a>(flow: &'a Flow<'_>, p: usize) -> impl Fn(&Node, usize) -> bool + 'a {
    move |n, k| {
        let computed = |o: NodeId| {
            !flow.deps[o].contains(&p)
                && origin(flow.g, o).is_some_and(|o| o.opcode != Opcode::Constant)
        };
        pass_through(n, k)
            || (n.opcode == Opcode::Multiply
                && n.operands.len() == 2
                && computed(n.operands[1 - k.min(1)]))
    }
}

/// What an update passes through between a learning rate and the parameter
/// it changes.
fn scaling(n: &Node, k: usize) -> bool {
    pass_through(n, k)
        || matches!(n.opcode, Opcode::Multiply | Opcode::Negate)
        || (n.opcode == Opcode::Divide && k == 0)
}

/// The value of a single-valued constant (through pass-through ops).
fn constant_value(module: &Module, g: &Graph, n: NodeId) -> Option<f64> {
    let c = origin(g, n).filter(|c| c.opcode == Opcode::Constant)?;
    match module.comp(c.comp).instr(c.instr).attrs.constant.as_ref()? {
        ConstantData::Float(v) => match v.as_slice() {
            [x] => Some(*x),
            [x, rest @ ..] if rest.iter().all(|y| y == x) => Some(*x),
            _ => None,
        },
        _ => None,
    }
}

/// Whether node `u` takes a root of its operand 0: a sqrt, an rsqrt, or a
/// power whose exponent is a constant with a fractional part (adafactor's
/// `v ** -0.5`).
fn root_like(module: &Module, g: &Graph, u: NodeId) -> bool {
    let n = &g.nodes[u];
    match n.opcode {
        Opcode::Sqrt | Opcode::Rsqrt => true,
        Opcode::Power => n
            .operands
            .get(1)
            .and_then(|&e| origin(g, e))
            .filter(|e| e.opcode == Opcode::Constant)
            .and_then(|e| module.comp(e.comp).instr(e.instr).attrs.constant.as_ref())
            .is_some_and(|c| match c {
                ConstantData::Float(v) => v.iter().any(|x| x.fract() != 0.0),
                _ => false,
            }),
        _ => false,
    }
}

/// The iota extent a compare's other operand counts along, if it is an iota.
fn iota_extent(module: &Module, g: &Graph, n: NodeId) -> Option<i64> {
    let node = origin(g, n)?;
    if node.opcode != Opcode::Iota {
        return None;
    }
    let instr = module.comp(node.comp).instr(node.instr);
    let d = usize::try_from(instr.attrs.iota_dimension?).ok()?;
    node.dims.get(d).copied().filter(|&c| c > 0)
}

/// The extents of the dimensions that use `(u, k)` indexes, if it is an
/// index operand.
fn index_extents(module: &Module, g: &Graph, (u, k): (NodeId, usize)) -> Option<Vec<i64>> {
    let n = &g.nodes[u];
    let operand = &g.nodes[*n.operands.first()?];
    let attrs = &module.comp(n.comp).instr(n.instr).attrs;
    let dims = |map: &[i64]| -> Vec<i64> {
        map.iter()
            .filter_map(|&d| operand.dims.get(usize::try_from(d).ok()?).copied())
            .collect()
    };
    match n.opcode {
        Opcode::DynamicSlice if k >= 1 => {
            Some(operand.dims.get(k - 1).copied().into_iter().collect())
        }
        Opcode::DynamicUpdateSlice if k >= 2 => {
            Some(operand.dims.get(k - 2).copied().into_iter().collect())
        }
        Opcode::Gather if k == 1 => Some(dims(&attrs.gather_dims.as_ref()?.start_index_map)),
        Opcode::Scatter if k == 1 => Some(dims(
            &attrs.scatter_dims.as_ref()?.scatter_dims_to_operand_dims,
        )),
        _ => None,
    }
}

/// Each entry parameter's role (see [`ParameterRole`] for the rules).
pub(crate) fn parameter_roles(module: &Module, g: &Graph) -> Vec<ParameterRole> {
    let flow = Flow::new(g);
    let fans = weight_fan_ins(module, g);
    g.params
        .iter()
        .enumerate()
        .map(|(k, &p)| {
            let node = &g.nodes[p];
            match node.dtype {
                Some(t) if t.is_float() => float_role(module, &flow, k, fans[k]),
                Some(t) if t.int_range().is_some() && !t.is_pred() => {
                    integer_role(module, &flow, node, p)
                }
                _ => ParameterRole::Data,
            }
        })
        .collect()
}

fn integer_role(module: &Module, flow: &Flow<'_>, node: &Node, p: NodeId) -> ParameterRole {
    let g = flow.g;
    let uses = flow.reach(p, integer_arithmetic);
    let classes = uses
        .iter()
        .filter(|&&(u, _)| g.nodes[u].opcode == Opcode::Compare)
        .filter_map(|&use_| iota_extent(module, g, flow.other(use_)?))
        .min();
    if let Some(classes) = classes {
        return ParameterRole::Label { classes };
    }
    let extent = uses
        .iter()
        .filter_map(|&u| index_extents(module, g, u))
        .flatten()
        .filter(|&e| e > 0)
        .min();
    if let Some(extent) = extent {
        return ParameterRole::Index { extent };
    }
    let to_float = |&(u, _): &(NodeId, usize)| {
        let n = &g.nodes[u];
        n.opcode == Opcode::Convert && n.dtype.is_some_and(ElementType::is_float)
    };
    if node.element_count() == 1 && uses.iter().any(to_float) {
        return ParameterRole::StepCount;
    }
    ParameterRole::Data
}

fn float_role(module: &Module, flow: &Flow<'_>, number: usize, fan: Option<f64>) -> ParameterRole {
    let p = flow.g.params[number];
    let node = &flow.g.nodes[p];
    let g = flow.g;
    if let Some(fan_in) = fan {
        return ParameterRole::Weight { fan_in };
    }
    let direct = flow.reach(p, pass_through);
    // a scale may meet the normalizer after other factors: haiku's and
    // flax's RMSNorm compute `(x * scale) * rsqrt(mean(x^2) + eps)`
    let factors = flow.reach(p, scaled_by_others(flow, number));
    let scales_a_normalized = factors.iter().any(|&use_| {
        g.nodes[use_.0].opcode == Opcode::Multiply
            && flow
                .other_without(use_, number)
                .is_some_and(|o| normalized(g, o, 8))
    });
    if scales_a_normalized {
        return ParameterRole::NormScale;
    }
    let to_sqrt = flow
        .reach(p, sign_preserving(flow, number))
        .iter()
        .any(|&(u, k)| k == 0 && root_like(module, g, u));
    if to_sqrt {
        return ParameterRole::Moment;
    }
    let averaged = direct.iter().any(|&use_| {
        g.nodes[use_.0].opcode == Opcode::Multiply
            && flow
                .other(use_)
                .and_then(|o| constant_value(module, g, o))
                .is_some_and(|c| (0.5..1.0).contains(&c))
            && flow.users[use_.0]
                .iter()
                .any(|&(a, _)| g.nodes[a].opcode == Opcode::Add)
    });
    if averaged {
        return ParameterRole::Average;
    }
    // a contraction's result, or a sum of them (an LSTM's `W x + U h + b`)
    fn summed_contraction(g: &Graph, o: NodeId, depth: usize) -> bool {
        origin(g, o).is_some_and(|n| match n.opcode {
            Opcode::Dot | Opcode::Convolution => true,
            Opcode::Add if depth > 0 => n
                .operands
                .iter()
                .any(|&x| summed_contraction(g, x, depth - 1)),
            _ => false,
        })
    }
    let contraction = |o: NodeId| summed_contraction(g, o, 2) || normalized(g, o, 8);
    // also joined with other biases first (an LSTM's four gates' biases
    // concatenated and added to one dot)
    let joined = flow.reach(p, |n, k| {
        pass_through(n, k) || n.opcode == Opcode::Concatenate
    });
    let biased = joined.iter().any(|&use_| {
        g.nodes[use_.0].opcode == Opcode::Add
            && flow.other_without(use_, number).is_some_and(contraction)
    });
    if biased {
        return ParameterRole::Bias;
    }
    let contracted = flow
        .reach(p, moves_values)
        .iter()
        .any(|&(u, k)| match g.nodes[u].opcode {
            Opcode::Dot => true,
            Opcode::Convolution => k == 0,
            _ => false,
        });
    if contracted {
        return ParameterRole::Input;
    }
    if takes_activations_place(flow, number, &factors) {
        return ParameterRole::Activation;
    }
    if node.element_count() == 1 {
        let updates = flow.reach(p, scaling).into_iter().any(|use_| {
            matches!(g.nodes[use_.0].opcode, Opcode::Add | Opcode::Subtract)
                && flow
                    .other(use_)
                    .and_then(|o| source_param(g, o))
                    .is_some_and(|q| g.params.get(q) != Some(&p))
        });
        if updates {
            return ParameterRole::Rate;
        }
    }
    ParameterRole::Data
}
