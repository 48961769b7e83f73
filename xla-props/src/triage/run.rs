//! The triage run: analyse every failure (several at once), group them,
//! write one representative per group, `triage.json` and `triage.md`.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use super::analyze::{analyse, Analysed, TriageOptions};
use super::collect::{Failure, NotTriaged};
use super::group::{dir_name, group, Triage};
use crate::backend::Backend;
use crate::filetest::write_isolation_results;

/// Analyses `failures` on `backend`, groups them by root cause and writes
/// `out/triage.json`, `out/triage.md` and one minimized representative per
/// group (`out/G1-OPCODE-DTYPE/reproducer.hlotest`, with its isolation
/// report). `progress` is told each finished failure (done, total).
pub fn triage(
    failures: &[Failure],
    not_triaged: Vec<NotTriaged>,
    backend: &dyn Backend,
    inputs: &[String],
    options: &TriageOptions,
    out: &Path,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> std::io::Result<Triage> {
    let start = Instant::now();
    let analysed = analyse_all(failures, backend, options, progress);
    let total = analysed.len();
    let (groups, ungrouped) = group(analysed);
    std::fs::create_dir_all(out)?;
    let mut kept = Vec::new();
    for (g, isolated) in groups {
        if let Some(mut iso) = isolated {
            let dir = out.join(dir_name(&g.id, &g.cause));
            write_isolation_results(&mut iso, &dir, &[])?;
        }
        kept.push(g);
    }
    let t = Triage {
        backend: backend.name().to_string(),
        inputs: inputs.to_vec(),
        failures: total,
        grouped: total - ungrouped.len(),
        groups: kept,
        ungrouped,
        not_triaged,
        seconds: start.elapsed().as_secs_f64(),
    };
    let json = serde_json::to_string_pretty(&t).map_err(std::io::Error::other)?;
    std::fs::write(out.join("triage.json"), json + "\n")?;
    std::fs::write(out.join("triage.md"), super::markdown::markdown(&t))?;
    Ok(t)
}

/// Every failure analysed, in order, `options.jobs` at a time.
fn analyse_all(
    failures: &[Failure],
    backend: &dyn Backend,
    options: &TriageOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<Analysed> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Analysed)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..options.jobs.max(1).min(failures.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(f) = failures.get(i) else { break };
                let a = analyse(i, f, backend, options);
                if let Ok(mut r) = results.lock() {
                    r.push((i, a));
                }
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, failures.len());
            });
        }
    });
    let mut r = results.into_inner().unwrap_or_else(|e| e.into_inner());
    r.sort_by_key(|(i, _)| *i);
    r.into_iter().map(|(_, a)| a).collect()
}
