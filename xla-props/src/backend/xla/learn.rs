//! What the batcher learns from failed batches (`many`): the ops a backend
//! rejects, so later batches leave out the modules that use them instead of
//! failing and being split again for the same reason.
//!
//! An op is known by its key ([`op_key`]): the StableHLO op name, the rank
//! and element type of each tensor it takes and gives, and its attributes
//! with every integer reduced to a class (0, 1, or many), so `window_strides
//! = array<i64: 2, 2>` and `array<i64: 3, 3>` are one class while strides of
//! 1 are another. A key is learned as rejected when a compile error points
//! at a line holding it, or (errors that name no line, such as an undefined
//! symbol at link time) when one module failing alone holds keys that no
//! successful batch ever held. A module left out runs directly later, so a
//! key learned wrongly costs time, never a verdict.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// The keys of every op line of a lowered module's entry body and regions
/// (deduplicated, in order).
pub(crate) fn module_keys(mlir: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    (1..=mlir.lines().count())
        .filter_map(|line| op_key(mlir, line))
        .filter(|k| seen.insert(k.clone()))
        .collect()
}

/// The key of the op that starts on 1-based `line` of `mlir`; `None` for a
/// line that starts no op (a return, a brace, the module and function
/// headers). An op that opens a region carries its attributes and types on
/// the line that closes it (same indentation), which is read too.
pub(crate) fn op_key(mlir: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = mlir.lines().collect();
    let first = *lines.get(line.checked_sub(1)?)?;
    let trimmed = first.trim();
    let mut text = trimmed.to_string();
    if trimmed.ends_with('{') {
        let indent = first.len() - first.trim_start().len();
        let close = lines[line..]
            .iter()
            .find(|l| l.len() - l.trim_start().len() == indent && l.trim_start().starts_with('}'));
        if let Some(close) = close {
            text.push(' ');
            text.push_str(close.trim());
        }
    }
    normalize(&text)
}

/// See [`op_key`]: result names dropped, operands as `%`, tensors as
/// `rN:TYPE`, dense constants' values dropped, integers as `0`, `1` or `n`.
fn normalize(text: &str) -> Option<String> {
    let body = match (text.starts_with('%'), text.find(" = ")) {
        (true, Some(at)) => &text[at + 3..],
        _ => text,
    };
    let name_end = body
        .trim_start_matches('"')
        .find(|c: char| !(c.is_alphanumeric() || c == '.' || c == '_'))
        .unwrap_or(body.trim_start_matches('"').len());
    let name = &body.trim_start_matches('"')[..name_end];
    if !name.contains('.') || name.ends_with(".return") || name.starts_with("func.") {
        return None;
    }
    let mut out = String::with_capacity(body.len());
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    let starts =
        |i: usize, word: &str| chars[i..].iter().take(word.len()).copied().eq(word.chars());
    while i < chars.len() {
        let c = chars[i];
        if starts(i, "tensor<") {
            let (inner, next) = bracketed(&chars, i + "tensor".len());
            out.push_str(&tensor_class(&inner));
            i = next;
        } else if starts(i, "dense<") {
            let (_, next) = bracketed(&chars, i + "dense".len());
            out.push_str("dense");
            i = next;
        } else if c == '%' {
            out.push('%');
            i += 1;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '#')
            {
                i += 1;
            }
        } else if c.is_ascii_digit()
            && !(i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
        {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let digits: String = chars[start..i].iter().collect();
            out.push_str(match digits.trim_start_matches('0') {
                "" => "0",
                "1" => "1",
                _ => "n",
            });
        } else {
            out.push(c);
            i += 1;
        }
    }
    Some(out)
}

/// The text inside the `<...>` that opens at `open` (nesting counted), and
/// the index after its `>`.
fn bracketed(chars: &[char], open: usize) -> (String, usize) {
    let mut depth = 0usize;
    for (k, &c) in chars.iter().enumerate().skip(open) {
        match c {
            '<' => depth += 1,
            '>' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return (chars[open + 1..k].iter().collect(), k + 1);
                }
            }
            _ => {}
        }
    }
    (chars[open.min(chars.len())..].iter().collect(), chars.len())
}

/// `2x3xf32` as `r2:f32`, `f32` as `r0:f32`.
fn tensor_class(inner: &str) -> String {
    let mut rest = inner;
    let mut rank = 0;
    while let Some((dim, tail)) = rest.split_once('x') {
        if dim.is_empty() || !dim.chars().all(|c| c.is_ascii_digit() || c == '?') {
            break;
        }
        rank += 1;
        rest = tail;
    }
    format!("r{rank}:{rest}")
}

/// The op of a key without its dialect: `tanh` of `"stablehlo.tanh"(%) : ...`.
fn op_name(key: &str) -> &str {
    let name = key.trim_start_matches('"');
    let name = &name[..name
        .find(|c: char| !(c.is_alphanumeric() || c == '.' || c == '_'))
        .unwrap_or(name.len())];
    name.rsplit('.').next().unwrap_or(name)
}

/// The rejected and accepted keys of one batched run, shared by its workers.
#[derive(Debug, Default)]
pub(crate) struct Learned {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Rejected keys, each with how it was learned.
    rejected: HashMap<String, String>,
    /// Keys some successful batch held.
    accepted: HashSet<String>,
    /// Modules left out of batches for a rejected key.
    left_out: usize,
}

impl Learned {
    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        f(&mut self.inner.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// True (and counted) when `keys` hold a rejected key.
    pub(crate) fn leaves_out(&self, keys: &[String]) -> bool {
        self.with(|l| {
            let out = keys.iter().any(|k| l.rejected.contains_key(k));
            l.left_out += usize::from(out);
            out
        })
    }

    /// Learns `key` as rejected, for `why`.
    pub(crate) fn reject(&self, key: String, why: &str) {
        self.with(|l| {
            l.rejected.entry(key).or_insert_with(|| why.to_string());
        });
    }

    /// Learns `key` as rejected unless a successful batch held it (then the
    /// error's location named an op that compiles elsewhere: nothing is
    /// learned).
    pub(crate) fn reject_unless_accepted(&self, key: String, why: &str) {
        self.with(|l| {
            if !l.accepted.contains(&key) {
                l.rejected.entry(key).or_insert_with(|| why.to_string());
            }
        });
    }

    /// Learns from a module (its `keys`) that failed to link for a missing
    /// `symbol`: of its ops that never compiled, those named like the symbol
    /// (`tanh` for `stablehlo.tanh`), else the only one; nothing when that
    /// is ambiguous.
    pub(crate) fn learn_link(&self, symbol: &str, keys: &[String]) {
        let suspects = self.suspects(keys);
        let stem = symbol.trim_start_matches('_');
        let named: Vec<&String> = suspects
            .iter()
            .filter(|k| {
                let op = op_name(k);
                !stem.is_empty() && (op == stem || op == stem.trim_end_matches('f'))
            })
            .collect();
        let why = format!("undefined symbol `{symbol}` at link time");
        match (named.as_slice(), suspects.as_slice()) {
            ([], [only]) => self.reject(only.clone(), &why),
            ([], _) => {}
            (named, _) => named.iter().for_each(|k| self.reject((*k).clone(), &why)),
        }
    }

    /// Learns that `keys` compiled.
    pub(crate) fn accept<'a>(&self, keys: impl IntoIterator<Item = &'a String>) {
        self.with(|l| l.accepted.extend(keys.into_iter().cloned()));
    }

    /// Those of `keys` that no successful batch held.
    pub(crate) fn suspects(&self, keys: &[String]) -> Vec<String> {
        self.with(|l| {
            keys.iter()
                .filter(|k| !l.accepted.contains(*k))
                .cloned()
                .collect()
        })
    }

    /// The rejected keys and why, sorted.
    pub(crate) fn rejected(&self) -> Vec<(String, String)> {
        let mut r: Vec<(String, String)> = self.with(|l| l.rejected.clone().into_iter().collect());
        r.sort();
        r
    }

    /// Modules left out so far.
    pub(crate) fn left_out(&self) -> usize {
        self.with(|l| l.left_out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MLIR: &str = "module @m {\n  func.func @main(%arg0: tensor<1x4x1x3xf32>, %arg1: tensor<f32>) -> tensor<1x2x1x1xf32> {\n    %0 = \"stablehlo.reduce_window\"(%arg0, %arg1) ({\n    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n      %1 = stablehlo.add %a, %b : tensor<f32>\n      stablehlo.return %1 : tensor<f32>\n    }) {window_dimensions = array<i64: 1, 2, 1, 2>, window_strides = array<i64: 2, 2, 2, 2>} : (tensor<1x4x1x3xf32>, tensor<f32>) -> tensor<1x2x1x1xf32>\n    %2 = stablehlo.constant dense<[1.5, 2.0]> : tensor<2xf64>\n    return %0 : tensor<1x2x1x1xf32>\n  }\n}\n";

    #[test]
    fn a_key_is_the_op_its_types_and_its_attribute_classes() {
        let rw = op_key(MLIR, 3).unwrap();
        assert!(rw.starts_with("\"stablehlo.reduce_window\"(%, %)"), "{rw}");
        // the attributes after the region, integers as classes, shapes as ranks
        assert!(
            rw.ends_with(
                "{window_dimensions = array<i64: 1, n, 1, n>, window_strides = array<i64: n, n, n, n>} : (r4:f32, r0:f32) -> r4:f32"
            ),
            "{rw}"
        );
        assert_eq!(op_key(MLIR, 5).unwrap(), "stablehlo.add %, % : r0:f32");
        assert_eq!(
            op_key(MLIR, 8).unwrap(),
            "stablehlo.constant dense : r1:f64"
        );
        // headers, returns and braces start no op
        for line in [1, 2, 4, 7, 9, 10, 11, 12] {
            assert_eq!(op_key(MLIR, line), None, "line {line}");
        }
        // strides of 1 are another class than strides of 2 or 3
        let unit = MLIR.replace(
            "window_strides = array<i64: 2, 2, 2, 2>",
            "window_strides = array<i64: 1, 1, 1, 1>",
        );
        let three = MLIR.replace(
            "window_strides = array<i64: 2, 2, 2, 2>",
            "window_strides = array<i64: 3, 3, 3, 3>",
        );
        assert_ne!(op_key(&unit, 3), op_key(MLIR, 3));
        assert_eq!(op_key(&three, 3), op_key(MLIR, 3));
        // another element type is another key; another shape of the same rank is not
        assert_ne!(op_key(&MLIR.replace("f32", "bf16"), 5), op_key(MLIR, 5));
        assert_eq!(module_keys(MLIR).len(), 3);
    }

    #[test]
    fn rejected_keys_leave_modules_out_and_accepted_keys_are_not_suspects() {
        let l = Learned::default();
        let a = vec!["a".to_string(), "b".to_string()];
        let c = vec!["c".to_string()];
        assert!(!l.leaves_out(&a));
        l.reject("b".into(), "cannot legalize");
        assert!(l.leaves_out(&a));
        assert!(!l.leaves_out(&c));
        assert_eq!(l.left_out(), 1);
        l.accept(&c);
        assert_eq!(l.suspects(&["c".into(), "d".into()]), ["d"]);
        assert_eq!(
            l.rejected(),
            [("b".to_string(), "cannot legalize".to_string())]
        );
        // an op that compiled elsewhere is not what a located error rejects
        l.reject_unless_accepted("c".into(), "located");
        l.reject_unless_accepted("e".into(), "located");
        let keys: Vec<String> = l.rejected().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["b", "e"]);
    }

    #[test]
    fn a_link_error_teaches_the_op_named_like_its_symbol_or_the_only_new_one() {
        let tanh = "\"stablehlo.tanh\"(%) : (r1:f64) -> r1:f64".to_string();
        let neg = "\"stablehlo.negate\"(%) : (r1:f64) -> r1:f64".to_string();
        let conv = "stablehlo.convert % : (r1:i32) -> r1:bf16".to_string();
        let keys =
            |l: &Learned| -> Vec<String> { l.rejected().into_iter().map(|(k, _)| k).collect() };
        // named like the symbol: only tanh, though negate is new too
        let l = Learned::default();
        l.learn_link("tanh", &[neg.clone(), tanh.clone()]);
        assert_eq!(keys(&l), std::slice::from_ref(&tanh));
        // `tanhf` is the f32 one of the same op
        let l = Learned::default();
        l.learn_link("tanhf", std::slice::from_ref(&tanh));
        assert_eq!(keys(&l), std::slice::from_ref(&tanh));
        // no op named like `__truncsfbf2`: the only op never compiled
        let l = Learned::default();
        l.accept(std::slice::from_ref(&neg));
        l.learn_link("__truncsfbf2", &[neg.clone(), conv.clone()]);
        assert_eq!(keys(&l), std::slice::from_ref(&conv));
        // two new ops and neither named: nothing is guessed
        let l = Learned::default();
        l.learn_link("__truncsfbf2", &[neg.clone(), conv.clone()]);
        assert!(keys(&l).is_empty());
        assert!(!l.leaves_out(&[conv]));
    }
}
