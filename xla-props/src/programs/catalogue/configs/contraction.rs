//! Attribute classes of dot and convolution.

use super::{Cfg, Res};
use crate::hlo::{Attrs, ConvDims, DotDims, InstrId, Opcode, WindowDim};
use crate::inputs::Role;

type DotSpec = (Vec<i64>, Vec<i64>, DotDims);

/// A dot class: `<class>-square` is `<class>` with every dim 3 (square
/// operands, where a kernel can mistake one dim for another).
fn dot_spec(class: &str) -> DotSpec {
    match class.strip_suffix("-square") {
        Some(base) => {
            let (l, r, d) = dot_spec_base(base);
            (vec![3; l.len()], vec![3; r.len()], d)
        }
        None => {
            let (l, r, d) = dot_spec_base(class);
            (l.to_vec(), r.to_vec(), d)
        }
    }
}

fn dd(lb: &[i64], rb: &[i64], lc: &[i64], rc: &[i64]) -> DotDims {
    DotDims {
        lhs_batch: lb.to_vec(),
        rhs_batch: rb.to_vec(),
        lhs_contracting: lc.to_vec(),
        rhs_contracting: rc.to_vec(),
    }
}

fn dot_spec_base(class: &str) -> (&'static [i64], &'static [i64], DotDims) {
    match class {
        "vv" => (&[4], &[4], dd(&[], &[], &[0], &[0])),
        "mv" => (&[3, 4], &[4], dd(&[], &[], &[1], &[0])),
        "vm" => (&[4], &[4, 3], dd(&[], &[], &[0], &[0])),
        "km-kn" => (&[4, 3], &[4, 2], dd(&[], &[], &[0], &[0])),
        "mk-nk" => (&[3, 4], &[2, 4], dd(&[], &[], &[1], &[1])),
        "km-nk" => (&[4, 3], &[2, 4], dd(&[], &[], &[0], &[1])),
        "two-contract" => (&[3, 2, 4], &[2, 4, 2], dd(&[], &[], &[1, 2], &[0, 1])),
        "two-contract-swapped" => (&[3, 2, 4], &[4, 2, 2], dd(&[], &[], &[1, 2], &[1, 0])),
        "outer" => (&[3], &[2], dd(&[], &[], &[], &[])),
        "no-contract-r2" => (&[3, 4], &[2], dd(&[], &[], &[], &[])),
        "batch-first" => (&[2, 3, 4], &[2, 4, 3], dd(&[0], &[0], &[2], &[1])),
        "batch-middle" => (&[3, 2, 4], &[4, 2, 3], dd(&[1], &[1], &[2], &[0])),
        "batch-last" => (&[3, 4, 2], &[4, 3, 2], dd(&[2], &[2], &[1], &[0])),
        "batch-mixed" => (&[2, 3, 4], &[4, 3, 2], dd(&[0], &[2], &[2], &[0])),
        "batch-two" => (&[2, 3, 4], &[2, 3, 4], dd(&[0, 1], &[0, 1], &[2], &[2])),
        "batch-only" => (&[2, 3], &[2, 3], dd(&[0, 1], &[0, 1], &[], &[])),
        _ => (&[3, 4], &[4, 2], dd(&[], &[], &[1], &[0])),
    }
}

/// A convolution class: input dims, kernel dims, dimension numbers, window
/// (size, stride, pad low, pad high, lhs dilation, rhs dilation, reversal)
/// per spatial dim, feature and batch group counts.
struct Conv {
    input: &'static [i64],
    kernel: &'static [i64],
    dims: ConvDims,
    window: Vec<(i64, i64, i64, i64, i64, i64, bool)>,
    groups: (i64, i64),
}

fn labels(
    input: (i64, i64, [i64; 2]),
    kernel: (i64, i64, [i64; 2]),
    out: (i64, i64, [i64; 2]),
) -> ConvDims {
    ConvDims::from_labels(
        (input.0, input.1, &input.2),
        (kernel.0, kernel.1, &kernel.2),
        (out.0, out.1, &out.2),
    )
}

fn conv_spec(class: &str) -> Conv {
    let b01f = (0, 3, [1, 2]);
    let k01io = (2, 3, [0, 1]);
    let w3 = |s0, s1| vec![(3, s0, 0, 0, 1, 1, false), (3, s1, 0, 0, 1, 1, false)];
    let plain = |input, kernel| Conv {
        input,
        kernel,
        dims: labels(b01f, k01io, b01f),
        window: w3(1, 1),
        groups: (1, 1),
    };
    match class {
        "bf01" => Conv {
            dims: labels((0, 1, [2, 3]), k01io, b01f),
            ..plain(&[1, 2, 5, 5], &[3, 3, 2, 2])
        },
        "f01b" => Conv {
            dims: labels((3, 0, [1, 2]), k01io, b01f),
            ..plain(&[2, 5, 5, 1], &[3, 3, 2, 2])
        },
        "kernel-oi01" => Conv {
            dims: labels(b01f, (1, 0, [2, 3]), b01f),
            ..plain(&[1, 5, 5, 2], &[2, 2, 3, 3])
        },
        "kernel-i01o" => Conv {
            dims: labels(b01f, (0, 3, [1, 2]), b01f),
            ..plain(&[1, 5, 5, 2], &[2, 3, 3, 2])
        },
        "output-bf01" => Conv {
            dims: labels(b01f, k01io, (0, 1, [2, 3])),
            ..plain(&[1, 5, 5, 2], &[3, 3, 2, 2])
        },
        "feature-groups-2" => Conv {
            groups: (2, 1),
            ..plain(&[1, 5, 5, 4], &[3, 3, 2, 4])
        },
        "depthwise" => Conv {
            groups: (3, 1),
            ..plain(&[1, 5, 5, 3], &[3, 3, 1, 3])
        },
        "batch-groups-2" => Conv {
            groups: (1, 2),
            ..plain(&[2, 5, 5, 2], &[3, 3, 2, 4])
        },
        "stride-2x1" => Conv {
            window: w3(2, 1),
            ..plain(&[1, 5, 5, 2], &[3, 3, 2, 2])
        },
        "pad-negative" => Conv {
            window: vec![(3, 1, -1, 0, 1, 1, false), (3, 1, 1, -1, 1, 1, false)],
            ..plain(&[1, 6, 5, 2], &[3, 3, 2, 2])
        },
        "pad-asym" => Conv {
            window: vec![(3, 1, 2, 0, 1, 1, false), (3, 1, 0, 1, 1, 1, false)],
            ..plain(&[1, 5, 5, 2], &[3, 3, 2, 2])
        },
        "lhs-dilation" => Conv {
            window: vec![(3, 1, 0, 0, 2, 1, false), (3, 1, 1, 1, 2, 1, false)],
            ..plain(&[1, 4, 4, 2], &[3, 3, 2, 2])
        },
        "rhs-dilation" => Conv {
            window: vec![(3, 1, 0, 0, 1, 2, false), (2, 1, 0, 0, 1, 3, false)],
            ..plain(&[1, 7, 6, 2], &[3, 2, 2, 2])
        },
        "reversal" => Conv {
            window: vec![(3, 1, 0, 0, 1, 1, true), (3, 1, 0, 0, 1, 1, false)],
            ..plain(&[1, 5, 5, 2], &[3, 3, 2, 2])
        },
        "spatial-1" => Conv {
            input: &[1, 6, 2],
            kernel: &[3, 2, 2],
            dims: ConvDims::feature_last(1),
            window: vec![(3, 1, 0, 0, 1, 1, false)],
            groups: (1, 1),
        },
        "spatial-0" => Conv {
            input: &[3, 4],
            kernel: &[4, 2],
            dims: ConvDims::feature_last(0),
            window: vec![],
            groups: (1, 1),
        },
        _ => plain(&[1, 5, 5, 2], &[3, 3, 2, 2]),
    }
}

pub(super) fn first_dims(op: Opcode, class: &str) -> Vec<i64> {
    match op {
        Opcode::Dot => dot_spec(class).0,
        _ => conv_spec(class.strip_suffix("-o3").unwrap_or(class))
            .input
            .to_vec(),
    }
}

pub(super) fn build(c: &mut Cfg, op: Opcode, class: &str, dims: &[i64]) -> Res<InstrId> {
    let t = c.t;
    if op == Opcode::Dot {
        let (_, rhs, dot_dims) = dot_spec(class);
        let x = c.main(dims, Role::Data);
        let y = c.param(t, &rhs, Role::Data);
        let attrs = Attrs {
            dot_dims: Some(dot_dims),
            ..Attrs::default()
        };
        return c.op(op, vec![x, y], attrs);
    }
    // `-o3`: 3 output features, a kernel whose feature dims are not square
    let (base, o3) = match class.strip_suffix("-o3") {
        Some(b) => (b, true),
        None => (class, false),
    };
    let spec = conv_spec(base);
    let mut kernel = spec.kernel.to_vec();
    if o3 {
        let o = usize::try_from(spec.dims.kernel_output_feature).map_err(|_| "bad kernel dims")?;
        *kernel.get_mut(o).ok_or("bad kernel dims")? = 3;
    }
    let x = c.main(dims, Role::Data);
    let w = c.param(t, &kernel, Role::Data);
    let window = spec
        .window
        .iter()
        .map(|&(size, stride, lo, hi, lhs, rhs, reversal)| WindowDim {
            stride,
            pad_low: lo,
            pad_high: hi,
            base_dilation: lhs,
            window_dilation: rhs,
            reversal,
            ..WindowDim::new(size)
        })
        .collect();
    let attrs = Attrs {
        window: Some(window),
        conv_dims: Some(spec.dims),
        feature_group_count: Some(spec.groups.0),
        batch_group_count: Some(spec.groups.1),
        ..Attrs::default()
    };
    c.op(op, vec![x, w], attrs)
}
