//! `xla-props report`: a run's `--json` results as one self-contained HTML
//! page (heatmap, failures, ULP histograms, isolation graphs, metadata), and
//! the differences from an earlier run.

mod graph;
mod html;
mod identity;
mod markup;
mod model;
mod outcome;
mod plot;
mod results;
#[cfg(test)]
mod tests;
mod triage;
mod write;

pub use graph::graph_from_module;
pub use html::{cell_anchor, render_html, ReportOptions, MAX_FAILURES_PER_CELL};
pub use identity::{CaseSelection, CaseSpaceId, ShardInfo};
pub use markup::escape;
pub use model::{
    ulp_bucket_label, ulp_bucket_order, Cell, CellKey, Comparison, RunModel, UlpChange,
    UlpDistribution,
};
pub use outcome::{Counts, Outcome};
pub use results::{
    BackendInfo, CaseResult, Culprit, GraphEdge, GraphNode, HistogramBucket, Isolation,
    ReportError, RunMetadata, RunResults,
};
pub use triage::{TriageGroup, TriageLinks, TriageMember};
pub use write::{write_report, write_report_of, write_report_triaged};
