//! The report model: a run's cases aggregated by backend × op × dtype, the
//! failures, ULP distributions per op and dtype, and the differences between
//! two runs. Rendering only reads this.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::outcome::{Counts, Outcome};
use super::results::RunResults;

/// A heatmap cell's position: (backend, op, dtype).
pub type CellKey = (String, String, String);

/// One heatmap cell: the cases of one backend, op and dtype.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    /// Their outcomes.
    pub counts: Counts,
    /// The largest ULP distance over them.
    pub max_ulp: Option<u64>,
    /// Indices into `RunResults::cases` of the failed ones, in run order.
    pub failures: Vec<usize>,
    /// Why the skipped ones were skipped (the first line of each message), with how many.
    pub skip_reasons: BTreeMap<String, u64>,
}

/// The ULP distances of one op and dtype, over every backend and property
/// (exhaustive sweeps, vs_reference cases, ...), and per backend.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UlpDistribution {
    /// Per-element histogram (label, count), summed over the cases that carry one,
    /// ordered by distance.
    pub elements: Vec<(String, u64)>,
    /// Histogram of the per-case maximum ULP, in the same buckets.
    pub case_max: Vec<(String, u64)>,
    /// The largest ULP distance of any case.
    pub max_ulp: u64,
    /// Cases that reported a ULP distance.
    pub cases: u64,
    /// The same, per backend (in the run's backend order); each histogram
    /// has the buckets of the whole, so that they can be drawn side by side.
    pub by_backend: Vec<(String, UlpDistribution)>,
    /// Cases with a ULP distance or histogram per property, and their compared elements.
    pub properties: BTreeMap<String, (u64, u64)>,
    /// What accepted the distances of the cases that passed: each declared
    /// budget or tolerance (`budget` of the results) with its cases, and
    /// each legal reason (`legal: REASON`) with its elements.
    pub accepted_by: BTreeMap<String, u64>,
    /// Passed cases with a nonzero distance whose results record no budget.
    pub unexplained: u64,
    /// Failed cases with a nonzero distance (not accepted).
    pub failed: u64,
}

impl UlpDistribution {
    /// True when no case was ever off: the largest distance is 0 and every
    /// compared element is in the `0` bucket.
    pub fn is_exact(&self) -> bool {
        self.max_ulp == 0 && self.elements.iter().all(|(l, c)| l == "0" || *c == 0)
    }
}

/// ULP sums of one op and dtype (on one backend, or on all).
#[derive(Default)]
struct UlpAcc {
    elements: HashMap<String, u64>,
    case_max: HashMap<String, u64>,
    max_ulp: u64,
    cases: u64,
    accepted_by: BTreeMap<String, u64>,
    unexplained: u64,
    failed: u64,
}

impl UlpAcc {
    fn add(&mut self, c: &super::results::CaseResult) {
        if let Some(h) = &c.ulp_histogram {
            for b in h {
                *self.elements.entry(b.ulp.clone()).or_default() += b.count;
            }
        }
        if let Some(u) = c.max_ulp {
            *self.case_max.entry(ulp_bucket_label(u)).or_default() += 1;
            self.max_ulp = self.max_ulp.max(u);
            self.cases += 1;
        }
        if c.max_ulp.is_some_and(|u| u > 0) {
            let o = c.outcome();
            match &c.budget {
                _ if o.is_failed() => self.failed += 1,
                Some(b) if o.is_passed() => *self.accepted_by.entry(b.clone()).or_default() += 1,
                None if o.is_passed() => self.unexplained += 1,
                _ => {}
            }
        }
        for (reason, n) in &c.legal {
            *self
                .accepted_by
                .entry(format!("legal: {reason}"))
                .or_default() += n;
        }
    }

    /// The distribution, with the buckets of `axis` (label order) where given.
    fn finish(self, axis: Option<(&[String], &[String])>) -> UlpDistribution {
        let on = |m: HashMap<String, u64>, labels: Option<&[String]>| match labels {
            Some(l) => l
                .iter()
                .map(|k| (k.clone(), m.get(k).copied().unwrap_or(0)))
                .collect(),
            None => sorted_buckets(m),
        };
        UlpDistribution {
            elements: on(self.elements, axis.map(|a| a.0)),
            case_max: on(self.case_max, axis.map(|a| a.1)),
            max_ulp: self.max_ulp,
            cases: self.cases,
            accepted_by: self.accepted_by,
            unexplained: self.unexplained,
            failed: self.failed,
            ..UlpDistribution::default()
        }
    }
}

/// The bucket of a ULP distance, in the comparator's buckets: 0, 1, 2, 3-4, 5-8, ..., >2^31.
pub fn ulp_bucket_label(ulp: u64) -> String {
    match ulp {
        0 => "0".into(),
        1 => "1".into(),
        2 => "2".into(),
        u if u > 1 << 31 => ">2^31".into(),
        u => {
            let hi = u.next_power_of_two();
            format!("{}-{}", hi / 2 + 1, hi)
        }
    }
}

/// Orders bucket labels by distance: numbers by their lower bound, `>2^31` after
/// them, class differences (`nan/inf/sign`) and unknown labels last.
pub fn ulp_bucket_order(label: &str) -> (u8, u64, String) {
    let lo = label.split('-').next().unwrap_or(label);
    match lo.parse::<u64>() {
        Ok(n) => (0, n, String::new()),
        Err(_) if label.starts_with('>') => (1, 0, String::new()),
        Err(_) => (2, 0, label.to_string()),
    }
}

/// The comparator's numeric buckets in order: `0`, `1`, `2`, `3-4`, ..., `>2^31`.
fn standard_buckets() -> impl Iterator<Item = String> {
    (0..33)
        .map(|k| ulp_bucket_label(if k == 0 { 0 } else { 1u64 << (k - 1) }))
        .chain(std::iter::once(ulp_bucket_label(u64::MAX)))
}

/// Buckets in distance order, with the empty standard buckets from `0` up to
/// the largest present one filled in, so the axis has no gaps.
fn sorted_buckets(mut m: HashMap<String, u64>) -> Vec<(String, u64)> {
    let standard: Vec<String> = standard_buckets().collect();
    let last = standard.iter().rposition(|l| m.contains_key(l));
    let mut v: Vec<(String, u64)> = match last {
        Some(last) => standard[..=last]
            .iter()
            .map(|l| (l.clone(), m.remove(l).unwrap_or(0)))
            .collect(),
        None => Vec::new(),
    };
    let mut rest: Vec<(String, u64)> = m.into_iter().collect();
    rest.sort_by_key(|(l, _)| ulp_bucket_order(l));
    v.extend(rest);
    v
}

/// A run aggregated for the report.
#[derive(Clone, Debug, Default)]
pub struct RunModel {
    /// All cases.
    pub totals: Counts,
    /// Backends in order of first appearance.
    pub backends: Vec<String>,
    /// Ops, ordered by family then name.
    pub ops: Vec<String>,
    /// Dtypes, by name.
    pub dtypes: Vec<String>,
    /// The heatmap cells that have cases.
    pub cells: BTreeMap<CellKey, Cell>,
    /// ULP distributions by (op, dtype), only where some case reported a distance.
    pub ulp: BTreeMap<(String, String), UlpDistribution>,
    /// Sum of the case durations, in microseconds.
    pub case_time_us: u64,
}

impl RunModel {
    /// Aggregates a run.
    ///
    /// ```
    /// use xla_props::report::{RunModel, RunResults};
    /// let run = RunResults::parse(r#"{"cases": [
    ///   {"id": "p::add::f32::f32[2]{0}::u::b", "outcome": "passed", "max_ulp": 0},
    ///   {"id": "p::add::f32::f32[3]{0}::u::b", "outcome": "failed", "max_ulp": 7}
    /// ]}"#, "run").unwrap();
    /// let m = RunModel::new(&run);
    /// let cell = &m.cells[&("b".into(), "add".into(), "f32".into())];
    /// assert_eq!((cell.counts.passed, cell.counts.failed, cell.max_ulp), (1, 1, Some(7)));
    /// ```
    pub fn new(run: &RunResults) -> RunModel {
        let mut m = RunModel::default();
        let mut families: BTreeMap<String, String> = BTreeMap::new();
        let mut dtypes = BTreeSet::new();
        // (op, dtype) -> (over all, per backend, per property)
        type Ulps = (
            UlpAcc,
            BTreeMap<String, UlpAcc>,
            BTreeMap<String, (u64, u64)>,
        );
        let mut ulps: BTreeMap<(String, String), Ulps> = BTreeMap::new();
        for (i, c) in run.cases.iter().enumerate() {
            let outcome = c.outcome();
            m.totals.add(outcome);
            m.case_time_us += c.duration_us.unwrap_or(0);
            if !m.backends.iter().any(|b| b == c.backend()) {
                m.backends.push(c.backend().to_string());
            }
            families
                .entry(c.op().to_string())
                .or_insert_with(|| c.family.clone().unwrap_or_default());
            dtypes.insert(c.dtype().to_string());
            let cell = m
                .cells
                .entry((c.backend().into(), c.op().into(), c.dtype().into()))
                .or_default();
            cell.counts.add(outcome);
            if outcome.is_failed() {
                cell.failures.push(i);
            }
            if outcome.is_skipped() {
                let why = c
                    .message
                    .as_deref()
                    .and_then(|m| m.lines().next())
                    .filter(|m| !m.trim().is_empty())
                    .unwrap_or("no reason recorded");
                *cell.skip_reasons.entry(why.to_string()).or_default() += 1;
            }
            if let Some(u) = c.max_ulp {
                cell.max_ulp = Some(cell.max_ulp.map_or(u, |x| x.max(u)));
            }
            if c.max_ulp.is_some() || c.ulp_histogram.is_some() {
                let key = (c.op().to_string(), c.dtype().to_string());
                let (all, per_backend, per_property) = ulps.entry(key).or_default();
                all.add(c);
                per_backend
                    .entry(c.backend().to_string())
                    .or_default()
                    .add(c);
                let p = per_property.entry(c.property().to_string()).or_default();
                p.0 += 1;
                p.1 += c
                    .ulp_histogram
                    .iter()
                    .flatten()
                    .map(|b| b.count)
                    .sum::<u64>();
            }
        }
        for (key, (all, mut per_backend, properties)) in ulps {
            let mut d = all.finish(None);
            let elements: Vec<String> = d.elements.iter().map(|b| b.0.clone()).collect();
            let case_max: Vec<String> = d.case_max.iter().map(|b| b.0.clone()).collect();
            d.by_backend = m
                .backends
                .iter()
                .filter_map(|b| {
                    let acc = per_backend.remove(b)?;
                    Some((b.clone(), acc.finish(Some((&elements, &case_max)))))
                })
                .collect();
            d.properties = properties;
            m.ulp.insert(key, d);
        }
        let mut ops: Vec<(String, String)> = families.into_iter().map(|(o, f)| (f, o)).collect();
        ops.sort();
        m.ops = ops.into_iter().map(|(_, o)| o).collect();
        m.dtypes = dtypes.into_iter().collect();
        m
    }

    /// The ops that have cases on `backend`, in row order.
    pub fn ops_of(&self, backend: &str) -> Vec<&str> {
        self.ops
            .iter()
            .filter(|op| {
                self.dtypes.iter().any(|d| {
                    self.cells
                        .contains_key(&(backend.into(), op.to_string(), d.clone()))
                })
            })
            .map(String::as_str)
            .collect()
    }
}

/// A change of a cell's largest ULP distance between two runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UlpChange {
    /// Where.
    pub key: CellKey,
    /// Before.
    pub old: u64,
    /// Now.
    pub new: u64,
}

/// What changed from an older run to this one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Case ids that fail now and did not fail before (passed, skipped or absent).
    pub new_failures: BTreeSet<String>,
    /// Case ids that failed before and pass now.
    pub fixed: BTreeSet<String>,
    /// Case ids that failed before and are skipped or absent now.
    pub no_longer_run: BTreeSet<String>,
    /// Case ids that fail in both runs.
    pub still_failing: u64,
    /// Cells whose largest ULP distance changed (cells with a distance in both runs).
    pub ulp_changes: Vec<UlpChange>,
    /// The older run's totals.
    pub old_totals: Counts,
    /// Cells with a new failure.
    pub cells_with_new_failures: BTreeSet<CellKey>,
    /// Cells with a fixed case.
    pub cells_with_fixes: BTreeSet<CellKey>,
}

impl Comparison {
    /// Compares `new` against `old`.
    ///
    /// ```
    /// use xla_props::report::{Comparison, RunResults};
    /// let old = RunResults::parse(r#"{"cases": [
    ///   {"id": "p::add::f32::s::u::b", "outcome": "failed"},
    ///   {"id": "p::sub::f32::s::u::b", "outcome": "passed"}]}"#, "old").unwrap();
    /// let new = RunResults::parse(r#"{"cases": [
    ///   {"id": "p::add::f32::s::u::b", "outcome": "passed"},
    ///   {"id": "p::sub::f32::s::u::b", "outcome": "failed"}]}"#, "new").unwrap();
    /// let c = Comparison::new(&old, &new);
    /// assert!(c.fixed.contains("p::add::f32::s::u::b"));
    /// assert!(c.new_failures.contains("p::sub::f32::s::u::b"));
    /// ```
    pub fn new(old: &RunResults, new: &RunResults) -> Comparison {
        fn outcome_of(run: &RunResults) -> HashMap<String, &Outcome<()>> {
            run.cases
                .iter()
                .map(|c| (c.id.clone(), c.outcome()))
                .collect()
        }
        let before = outcome_of(old);
        let now = outcome_of(new);
        let mut c = Comparison::default();
        for (id, o) in &now {
            if o.is_failed() {
                if before.get(id).is_some_and(|b| b.is_failed()) {
                    c.still_failing += 1;
                } else {
                    c.new_failures.insert(id.clone());
                }
            }
        }
        for (id, o) in &before {
            if o.is_failed() {
                match now.get(id) {
                    Some(n) if n.is_passed() => {
                        c.fixed.insert(id.clone());
                    }
                    Some(n) if n.is_failed() => {}
                    _ => {
                        c.no_longer_run.insert(id.clone());
                    }
                }
            }
        }
        for case in &new.cases {
            let key =
                || -> CellKey { (case.backend().into(), case.op().into(), case.dtype().into()) };
            if c.new_failures.contains(&case.id) {
                c.cells_with_new_failures.insert(key());
            }
            if c.fixed.contains(&case.id) {
                c.cells_with_fixes.insert(key());
            }
        }
        let old_model = RunModel::new(old);
        let new_model = RunModel::new(new);
        c.old_totals = old_model.totals;
        for (key, cell) in &new_model.cells {
            let before = old_model.cells.get(key).and_then(|x| x.max_ulp);
            if let (Some(old), Some(new)) = (before, cell.max_ulp) {
                if old != new {
                    c.ulp_changes.push(UlpChange {
                        key: key.clone(),
                        old,
                        new,
                    });
                }
            }
        }
        c
    }
}
