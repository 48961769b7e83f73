//! Literals to and from the worker's host arrays, checked against the
//! lowered entry's signature.

use super::error::XlaError;
use super::lower::Lowered;
use super::pjrt::{complex_from_host, complex_to_host, HostArray};
use crate::hlo::ArrayShape;
use crate::literal::Literal;

/// Checks arguments against the entry's parameters and converts them for the worker.
pub(super) fn host_args(lowered: &Lowered, args: &[&Literal]) -> Result<Vec<HostArray>, XlaError> {
    let params = &lowered.params;
    if args.len() != params.len() {
        return Err(XlaError::Signature(format!(
            "{} arguments given, the entry takes {}",
            args.len(),
            params.len()
        )));
    }
    let mut host = Vec::with_capacity(args.len());
    for (k, (arg, p)) in args.iter().zip(params).enumerate() {
        let shape = arg.shape();
        if !shape.compatible(p) {
            return Err(XlaError::Signature(format!(
                "argument {k} is {shape}, the entry expects {p}"
            )));
        }
        host.push(to_host(arg));
    }
    Ok(host)
}

/// The worker's outputs as literals, checked against the entry's results.
pub(super) fn outputs_of(
    lowered: &Lowered,
    outputs: Vec<HostArray>,
) -> Result<Vec<Literal>, XlaError> {
    let results = &lowered.results;
    if outputs.len() != results.len() {
        return Err(XlaError::Output(format!(
            "xla returned {} outputs, the entry has {}",
            outputs.len(),
            results.len()
        )));
    }
    outputs
        .into_iter()
        .zip(results)
        .enumerate()
        .map(|(k, (o, r))| from_host(o, r, k))
        .collect()
}

pub(super) fn to_host(l: &Literal) -> HostArray {
    if let Some(h) = complex_to_host(l) {
        return h;
    }
    let dtype = l.dtype();
    let width = dtype.byte_size();
    let mut bytes = Vec::with_capacity(l.element_count() * width);
    for i in 0..l.element_count() {
        bytes.extend_from_slice(&l.get_bits(i).to_le_bytes()[..width]);
    }
    HostArray {
        dtype,
        dims: l.dims().iter().map(|&d| d as i64).collect(),
        bytes,
    }
}

pub(super) fn from_host(
    o: HostArray,
    expected: &ArrayShape,
    k: usize,
) -> Result<Literal, XlaError> {
    if o.dtype != expected.dtype || o.dims != expected.dims {
        return Err(XlaError::Output(format!(
            "output {k} is {}{:?}, the entry declares {expected}",
            o.dtype, o.dims
        )));
    }
    if Some(o.bytes.len()) != o.expected_bytes() {
        return Err(XlaError::Output(format!(
            "output {k} has {} bytes for {expected}",
            o.bytes.len()
        )));
    }
    if o.dtype.is_complex() {
        return complex_from_host(&o, expected).map_err(|e| XlaError::Output(e.to_string()));
    }
    let shape = ArrayShape::new(expected.dtype, expected.dims.clone());
    Literal::from_le_bits(&shape, &o.bytes).map_err(|e| XlaError::Output(e.to_string()))
}
