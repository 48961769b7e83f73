//! An unstable sort (`is_stable=false`) may order elements whose keys tie in
//! any way: the keys must agree, the other operands carried along may be any
//! permutation within each run of tied keys. Comparing them needs both sides
//! in one canonical order per run.

use std::collections::BTreeSet;

use crate::hlo::{Module, Opcode};
use crate::literal::Literal;

/// The outputs of a module whose root is an unstable `sort`, with the
/// non-key operands of every run of equal keys put in one canonical order
/// (rows of non-key values sorted by their bits); the keys (the operands the
/// comparator reads) stay where they are. None when the root is not an
/// unstable sort, every operand is a key, or the outputs do not fit.
///
/// Both the reference's and the backend's outputs go through this before
/// they are compared: equal keys give equal runs, and within a run any
/// permutation of the carried values becomes the same.
pub fn canonical_unstable_sort(module: &Module, outputs: &[Literal]) -> Option<Vec<Literal>> {
    let entry = module.entry_computation();
    let root = entry.instr(entry.root);
    if root.opcode != Opcode::Sort || root.attrs.is_stable || outputs.len() != root.operands.len() {
        return None;
    }
    let cmp = module.computations.get(root.attrs.to_apply?.index())?;
    // parameter 2k and 2k+1 of the comparator are operand k's two elements
    let mut read: BTreeSet<usize> = BTreeSet::new();
    for i in &cmp.instructions {
        for o in &i.operands {
            let p = cmp.instr(*o);
            if p.opcode == Opcode::Parameter {
                read.insert(p.attrs.parameter_number? as usize / 2);
            }
        }
    }
    let keys: Vec<usize> = (0..outputs.len()).filter(|k| read.contains(k)).collect();
    let carried: Vec<usize> = (0..outputs.len()).filter(|k| !read.contains(k)).collect();
    if keys.is_empty() || carried.is_empty() {
        return None;
    }
    let dims = outputs[0].dims().to_vec();
    if outputs.iter().any(|o| o.dims() != dims.as_slice()) {
        return None;
    }
    let axis = *root.attrs.dimensions.as_ref()?.first()? as usize;
    let len = *dims.get(axis)?;
    let inner: usize = dims[axis + 1..].iter().product();
    let outer: usize = dims[..axis].iter().product();
    let mut out = outputs.to_vec();
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| (o * len + j) * inner + i;
            let key = |j: usize| -> Vec<u64> {
                keys.iter().map(|&k| outputs[k].get_bits(at(j))).collect()
            };
            let mut start = 0;
            while start < len {
                let mut end = start + 1;
                while end < len && key(end) == key(start) {
                    end += 1;
                }
                if end - start > 1 {
                    let mut rows: Vec<Vec<u64>> = (start..end)
                        .map(|j| {
                            carried
                                .iter()
                                .map(|&c| outputs[c].get_bits(at(j)))
                                .collect()
                        })
                        .collect();
                    rows.sort();
                    for (r, j) in rows.iter().zip(start..end) {
                        for (v, &c) in r.iter().zip(&carried) {
                            out[c].set_bits(at(j), *v);
                        }
                    }
                }
                start = end;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::{parse_module, ArrayShape, ElementType};

    const TEXT: &str = "HloModule m\ncmp {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  \
        c = s32[] parameter(2)\n  d = s32[] parameter(3)\n  ROOT lt = pred[] compare(a, b), direction=LT\n}\n\
        ENTRY e {\n  k = s32[5] parameter(0)\n  v = s32[5] parameter(1)\n  \
        ROOT s = (s32[5], s32[5]) sort(k, v), dimensions={0}, to_apply=cmp\n}\n";

    fn lit(v: &[f64]) -> Literal {
        Literal::from_f64s(&ArrayShape::new(ElementType::S32, vec![5]), v).unwrap()
    }

    #[test]
    fn values_within_a_tie_run_compare_as_a_multiset() {
        let m = parse_module(TEXT).unwrap();
        let keys = lit(&[1.0, 2.0, 2.0, 2.0, 3.0]);
        let a =
            canonical_unstable_sort(&m, &[keys.clone(), lit(&[9.0, 5.0, 7.0, 6.0, 0.0])]).unwrap();
        let b =
            canonical_unstable_sort(&m, &[keys.clone(), lit(&[9.0, 7.0, 6.0, 5.0, 0.0])]).unwrap();
        assert_eq!(a[1].to_f64_vec(), b[1].to_f64_vec());
        assert_eq!(a[1].to_f64_vec(), vec![9.0, 5.0, 6.0, 7.0, 0.0]);
        // a value moved across runs still differs
        let c = canonical_unstable_sort(&m, &[keys, lit(&[5.0, 9.0, 7.0, 6.0, 0.0])]).unwrap();
        assert_ne!(a[1].to_f64_vec(), c[1].to_f64_vec());
    }

    #[test]
    fn stable_sorts_are_left_alone() {
        let stable = TEXT.replace("to_apply=cmp", "is_stable=true, to_apply=cmp");
        let m = parse_module(&stable).unwrap();
        let keys = lit(&[1.0, 2.0, 2.0, 2.0, 3.0]);
        assert!(canonical_unstable_sort(&m, &[keys.clone(), keys]).is_none());
    }
}
