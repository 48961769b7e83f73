//! The module flattened into one dataflow graph: fusions, calls and maps are
//! inlined (their parameters become the caller's operands), so requirements
//! inside a fusion reach the entry parameters.

use crate::hlo::{CompId, ElementType, InstrId, Module, Opcode};

/// A node's index in [`Graph::nodes`].
pub(crate) type NodeId = usize;

/// How a reduce combines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reducer {
    Add,
    Mul,
    Max,
    Min,
    Other,
}

/// One value in the flattened graph.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub opcode: Opcode,
    /// Array element type (None: tuple or token).
    pub dtype: Option<ElementType>,
    pub dims: Vec<i64>,
    pub operands: Vec<NodeId>,
    /// Where it came from (for attributes and names).
    pub comp: CompId,
    pub instr: InstrId,
    /// Entry parameter number, for entry parameters.
    pub param: Option<usize>,
    /// For reduce: how it combines, and how many input elements feed each output element.
    pub reducer: Option<Reducer>,
    pub terms: u64,
}

impl Node {
    pub fn element_count(&self) -> usize {
        self.dims
            .iter()
            .fold(1usize, |acc, &d| acc.saturating_mul(d.max(0) as usize))
    }
}

/// The flattened graph; nodes are in topological order (operands first).
#[derive(Clone, Debug)]
pub(crate) struct Graph {
    pub nodes: Vec<Node>,
    /// Node of each entry parameter, by parameter number.
    pub params: Vec<NodeId>,
    pub root: NodeId,
    /// Whether loops and conditionals are inlined ([`Graph::build_unrolled`]).
    control: bool,
}

/// Why a module cannot be flattened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum GraphError {
    Cycle(String),
    TooDeep,
}

impl Graph {
    pub fn build(module: &Module) -> Result<Graph, GraphError> {
        Graph::build_with(module, false)
    }

    /// The graph with loops and conditionals inlined too, for reading the
    /// dataflow (not for values): a while loop's condition and body once, on
    /// its initial value (its result is the body's root), each branch of a
    /// conditional on its operand (its result is the last branch's root).
    pub fn build_unrolled(module: &Module) -> Result<Graph, GraphError> {
        Graph::build_with(module, true)
    }

    fn build_with(module: &Module, control: bool) -> Result<Graph, GraphError> {
        let mut g = Graph {
            nodes: Vec::new(),
            params: Vec::new(),
            root: 0,
            control,
        };
        let entry = module.entry_computation();
        let params = entry.parameters();
        let mut param_nodes = Vec::new();
        for (k, &p) in params.iter().enumerate() {
            let instr = entry.instr(p);
            let (dtype, dims) = array_of(&instr.shape);
            g.nodes.push(Node {
                opcode: Opcode::Parameter,
                dtype,
                dims,
                operands: vec![],
                comp: module.entry,
                instr: p,
                param: Some(k),
                reducer: None,
                terms: 0,
            });
            param_nodes.push(g.nodes.len() - 1);
        }
        g.params = param_nodes.clone();
        g.root = g.inline(module, module.entry, &param_nodes, 0)?;
        Ok(g)
    }

    /// Adds the nodes of computation `comp` whose parameters are `args`; returns its root node.
    fn inline(
        &mut self,
        module: &Module,
        comp_id: CompId,
        args: &[NodeId],
        depth: usize,
    ) -> Result<NodeId, GraphError> {
        if depth > 64 {
            return Err(GraphError::TooDeep);
        }
        let comp = module.comp(comp_id);
        let order = comp
            .post_order()
            .ok_or_else(|| GraphError::Cycle(comp.name.clone()))?;
        let mut map: Vec<Option<NodeId>> = vec![None; comp.instructions.len()];
        for id in order {
            let instr = comp.instr(id);
            let ops: Vec<NodeId> = instr
                .operands
                .iter()
                .filter_map(|o| map.get(o.index()).copied().flatten())
                .collect();
            let node = match instr.opcode {
                Opcode::Parameter => {
                    let n = instr.attrs.parameter_number.unwrap_or(-1);
                    match usize::try_from(n).ok().and_then(|n| args.get(n)) {
                        Some(&a) => a,
                        None => self.push_opaque(comp_id, id, instr, ops),
                    }
                }
                Opcode::Fusion | Opcode::Call if ops.len() == instr.operands.len() => {
                    let callee = if instr.opcode == Opcode::Fusion {
                        instr.attrs.calls.first().copied()
                    } else {
                        instr.attrs.to_apply
                    };
                    match callee {
                        Some(c) if c.index() < module.computations.len() => {
                            self.inline(module, c, &ops, depth + 1)?
                        }
                        _ => self.push_opaque(comp_id, id, instr, ops),
                    }
                }
                Opcode::Map if ops.len() == instr.operands.len() => match instr.attrs.to_apply {
                    Some(c) if c.index() < module.computations.len() => {
                        self.inline(module, c, &ops, depth + 1)?
                    }
                    _ => self.push_opaque(comp_id, id, instr, ops),
                },
                Opcode::While if self.control && ops.len() == 1 => {
                    match (instr.attrs.condition, instr.attrs.body) {
                        (Some(c), Some(b))
                            if c.index() < module.computations.len()
                                && b.index() < module.computations.len() =>
                        {
                            self.inline(module, c, &ops, depth + 1)?;
                            self.inline(module, b, &ops, depth + 1)?
                        }
                        _ => self.push_opaque(comp_id, id, instr, ops),
                    }
                }
                Opcode::Conditional
                    if self.control
                        && ops.len() == instr.operands.len()
                        && ops.len() == instr.attrs.branch_computations.len() + 1
                        && instr
                            .attrs
                            .branch_computations
                            .iter()
                            .all(|c| c.index() < module.computations.len()) =>
                {
                    let mut last = None;
                    for (k, &c) in instr.attrs.branch_computations.iter().enumerate() {
                        last = Some(self.inline(module, c, &ops[k + 1..k + 2], depth + 1)?);
                    }
                    match last {
                        Some(n) => n,
                        None => self.push_opaque(comp_id, id, instr, ops),
                    }
                }
                Opcode::GetTupleElement => {
                    let k = instr.attrs.index.unwrap_or(-1);
                    let from_tuple = ops.first().and_then(|&t| {
                        let n = &self.nodes[t];
                        (n.opcode == Opcode::Tuple)
                            .then(|| usize::try_from(k).ok().and_then(|k| n.operands.get(k)))
                            .flatten()
                            .copied()
                    });
                    match from_tuple {
                        Some(n) => n,
                        None => self.push_opaque(comp_id, id, instr, ops),
                    }
                }
                _ => {
                    let n = self.push_opaque(comp_id, id, instr, ops);
                    if instr.opcode == Opcode::Reduce && instr.operands.len() == 2 {
                        let reducer = instr
                            .attrs
                            .to_apply
                            .filter(|c| c.index() < module.computations.len())
                            .map(|c| reducer_of(module, c))
                            .unwrap_or(Reducer::Other);
                        let in_count = self.nodes[n]
                            .operands
                            .first()
                            .map_or(0, |&o| self.nodes[o].element_count());
                        let out_count = self.nodes[n].element_count().max(1);
                        self.nodes[n].reducer = Some(reducer);
                        self.nodes[n].terms = (in_count / out_count) as u64;
                    }
                    n
                }
            };
            map[id.index()] = Some(node);
        }
        map[comp.root.index()].ok_or_else(|| GraphError::Cycle(comp.name.clone()))
    }

    fn push_opaque(
        &mut self,
        comp: CompId,
        id: InstrId,
        instr: &crate::hlo::Instruction,
        operands: Vec<NodeId>,
    ) -> NodeId {
        let (dtype, dims) = array_of(&instr.shape);
        self.nodes.push(Node {
            opcode: instr.opcode,
            dtype,
            dims,
            operands,
            comp,
            instr: id,
            param: None,
            reducer: None,
            terms: 0,
        });
        self.nodes.len() - 1
    }

    /// Which nodes each node (transitively) depends on, as parameter numbers.
    pub fn param_dependencies(&self) -> Vec<Vec<usize>> {
        let mut deps: Vec<Vec<usize>> = Vec::with_capacity(self.nodes.len());
        for n in &self.nodes {
            let mut d: Vec<usize> = n.param.into_iter().collect();
            for &o in &n.operands {
                if o < deps.len() {
                    d.extend(deps[o].iter().copied());
                }
            }
            d.sort_unstable();
            d.dedup();
            deps.push(d);
        }
        deps
    }
}

fn array_of(shape: &crate::hlo::Shape) -> (Option<ElementType>, Vec<i64>) {
    match shape.as_array() {
        Some(a) => (Some(a.dtype), a.dims.clone()),
        None => (None, Vec::new()),
    }
}

/// The reducer of a two-parameter computation whose root combines its parameters.
fn reducer_of(module: &Module, c: CompId) -> Reducer {
    let comp = module.comp(c);
    let root = comp.instr(comp.root);
    let params_only = root.operands.len() == 2
        && root
            .operands
            .iter()
            .all(|o| comp.instructions.get(o.index()).map(|i| i.opcode) == Some(Opcode::Parameter));
    if !params_only {
        return Reducer::Other;
    }
    match root.opcode {
        Opcode::Add => Reducer::Add,
        Opcode::Multiply => Reducer::Mul,
        Opcode::Maximum => Reducer::Max,
        Opcode::Minimum => Reducer::Min,
        _ => Reducer::Other,
    }
}
