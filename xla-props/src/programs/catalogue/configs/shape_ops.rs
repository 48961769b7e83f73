//! Attribute classes of the shape ops: transpose, reverse, slice, pad,
//! concatenate, reshape, broadcast, iota.

use super::{digits, Cfg, Res};
use crate::hlo::{Attrs, InstrId, Opcode, PadDim, Shape, SliceDim};
use crate::inputs::Role;
use crate::programs::catalogue::arr;

fn rank_dims(rank: usize) -> Vec<i64> {
    match rank {
        0 => vec![],
        1 => vec![5],
        2 => vec![3, 4],
        3 => vec![2, 3, 4],
        _ => vec![2, 3, 4, 5],
    }
}

/// (operand dims, slice) of a slice class; each dim `(start, limit, stride)`.
fn slice_spec(class: &str) -> (Vec<i64>, Vec<SliceDim>) {
    let two = vec![5, 7];
    let s = |v: &[(i64, i64, i64)]| -> Vec<SliceDim> {
        v.iter()
            .map(|&(start, limit, stride)| SliceDim {
                start,
                limit,
                stride,
            })
            .collect()
    };
    match class {
        "unit-stride" => (two, s(&[(1, 4, 1), (2, 6, 1)])),
        "stride2-minor" => (two, s(&[(0, 5, 1), (0, 7, 2)])),
        "stride2-major" => (two, s(&[(0, 5, 2), (0, 7, 1)])),
        "stride3-all" => (two, s(&[(0, 5, 3), (0, 7, 3)])),
        "stride-over-extent" => (two, s(&[(0, 5, 8), (1, 7, 9)])),
        "offset-stride2" => (two, s(&[(1, 5, 2), (3, 7, 2)])),
        "empty" => (two, s(&[(2, 2, 1), (0, 7, 1)])),
        "r1-stride2" => (vec![9], s(&[(1, 9, 2)])),
        "r3-mixed" => (vec![3, 4, 5], s(&[(0, 3, 2), (1, 4, 1), (4, 5, 3)])),
        _ => (two, s(&[(0, 5, 1), (0, 7, 1)])),
    }
}

/// (operand dims, padding) of a pad class; each dim `(low, high, interior)`.
fn pad_spec(class: &str) -> (Vec<i64>, Vec<PadDim>) {
    let s = |v: &[(i64, i64, i64)]| -> (Vec<i64>, Vec<PadDim>) {
        let pads = v.iter().map(|&(low, high, interior)| PadDim {
            low,
            high,
            interior,
        });
        (vec![3, 4], pads.collect())
    };
    match class {
        "low-high" => s(&[(1, 2, 0), (2, 1, 0)]),
        "negative-low" => s(&[(-1, 0, 0), (-2, 1, 0)]),
        "negative-high" => s(&[(0, -1, 0), (1, -2, 0)]),
        "negative-both" => s(&[(-1, -1, 0), (-1, -2, 0)]),
        "interior" => s(&[(0, 0, 1), (0, 0, 2)]),
        "interior-negative-low" => s(&[(-1, 1, 1), (-2, 0, 1)]),
        "interior-major-only" => s(&[(0, 0, 2), (0, 0, 0)]),
        "crop-all" => s(&[(-3, 0, 0), (0, 0, 0)]),
        _ => s(&[(0, 0, 0), (0, 0, 0)]),
    }
}

/// (output dims, mapping) of a broadcast class `to{R}-{dims}`.
fn broadcast_spec(class: &str) -> (Vec<i64>, Vec<i64>) {
    let (to, map) = class.split_once('-').unwrap_or(("to3", "none"));
    let out = rank_dims(if to == "to4" { 4 } else { 3 });
    (out, digits(map))
}

/// (operand dims, result dims) of a reshape class.
fn reshape_spec(class: &str) -> (Vec<i64>, Vec<i64>) {
    match class {
        "flatten" => (vec![2, 3, 4], vec![24]),
        "merge-minor" => (vec![2, 3, 4], vec![2, 12]),
        "split-major" => (vec![6, 4], vec![2, 3, 4]),
        "unit-dims" => (vec![3, 4], vec![1, 3, 1, 4]),
        _ => (vec![1, 1], vec![]),
    }
}

pub(super) fn first_dims(op: Opcode, class: &str) -> Vec<i64> {
    let rank_of = |prefix: &str| {
        class
            .strip_prefix(prefix)
            .map_or(0, |r| r.bytes().take_while(u8::is_ascii_digit).count())
    };
    match op {
        Opcode::Transpose => rank_dims(rank_of("perm-")),
        Opcode::Reverse => rank_dims(if class.starts_with("r4") { 4 } else { 3 }),
        Opcode::Slice => slice_spec(class).0,
        Opcode::Pad => pad_spec(class).0,
        Opcode::Concatenate => vec![2, 3, 2],
        Opcode::Reshape => reshape_spec(class).0,
        Opcode::Broadcast => {
            let (out, map) = broadcast_spec(class);
            map.iter().map(|&d| out[d as usize]).collect()
        }
        Opcode::Iota => {
            let r = class[1..2].parse().unwrap_or(1);
            if r == 4 {
                vec![2, 3, 2, 3]
            } else {
                rank_dims(r)
            }
        }
        _ => vec![],
    }
}

pub(super) fn build(c: &mut Cfg, op: Opcode, class: &str, dims: &[i64]) -> Res<InstrId> {
    let with = |f: &dyn Fn(&mut Attrs)| {
        let mut a = Attrs::default();
        f(&mut a);
        a
    };
    match op {
        Opcode::Transpose => {
            let x = c.main(dims, Role::Data);
            let perm = digits(class.strip_prefix("perm-").unwrap_or(""));
            c.op(op, vec![x], with(&|a| a.dimensions = Some(perm.clone())))
        }
        Opcode::Reverse => {
            let x = c.main(dims, Role::Data);
            let ds = digits(class.split_once('-').map_or("", |p| p.1));
            c.op(op, vec![x], with(&|a| a.dimensions = Some(ds.clone())))
        }
        Opcode::Slice => {
            let x = c.main(dims, Role::Data);
            let sl = slice_spec(class).1;
            c.op(op, vec![x], with(&|a| a.slice = Some(sl.clone())))
        }
        Opcode::Pad => {
            let x = c.main(dims, Role::Data);
            let v = c.param(c.t, &[], Role::Data);
            let pads = pad_spec(class).1;
            c.op(op, vec![x, v], with(&|a| a.padding = Some(pads.clone())))
        }
        Opcode::Concatenate => {
            let n: i64 = class[1..2].parse().map_err(|_| "bad operand count")?;
            let d: usize = class[4..5].parse().map_err(|_| "bad dimension")?;
            let mut operands = vec![c.main(dims, Role::Data)];
            for i in 1..n {
                let mut di = dims.to_vec();
                di[d] += i;
                operands.push(c.param(c.t, &di, Role::Data));
            }
            c.op(op, operands, with(&|a| a.dimensions = Some(vec![d as i64])))
        }
        Opcode::Reshape => {
            let x = c.main(dims, Role::Data);
            let shape = arr(c.t, reshape_spec(class).1, None);
            c.op_declared(op, vec![x], Attrs::default(), Some(shape))
        }
        Opcode::Broadcast => {
            let (out, map) = broadcast_spec(class);
            let x = c.main(dims, Role::Data);
            let shape = Shape::Array(crate::hlo::ArrayShape::new(c.t, out));
            c.op_declared(
                op,
                vec![x],
                with(&|a| a.dimensions = Some(map.clone())),
                Some(shape),
            )
        }
        Opcode::Iota => {
            let d: i64 = class[4..5].parse().map_err(|_| "bad iota dimension")?;
            let layout = c.take_layout(dims.len());
            let shape = arr(c.t, dims.to_vec(), layout);
            Ok(c.b.push(op, shape, vec![], with(&|a| a.iota_dimension = Some(d))))
        }
        _ => Err(format!("`{op}` is not a shape op")),
    }
}
