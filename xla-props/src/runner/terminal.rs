//! The terminal reporter: a progress bar with counts, each failure printed as
//! it happens, one closing line like libtest's (what a person at a terminal
//! reads instead of one line per case).

use std::io::Write;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::events::{Reporter, RunEvent};
use crate::report::Counts;

/// The progress bar reporter.
pub struct TerminalReporter {
    bar: ProgressBar,
    counts: Counts,
}

impl TerminalReporter {
    /// Draws on stderr (as nextest does), so stdout keeps only the failures
    /// and the summary.
    pub fn new() -> TerminalReporter {
        TerminalReporter::with_target(ProgressDrawTarget::stderr_with_hz(10))
    }

    /// Draws on `target`.
    pub fn with_target(target: ProgressDrawTarget) -> TerminalReporter {
        let bar = ProgressBar::with_draw_target(Some(0), target);
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:>8.green.bold} [{elapsed_precise}] [{wide_bar:.cyan/blue}] {pos}/{len}: {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix("Running");
        TerminalReporter {
            bar,
            counts: Counts::default(),
        }
    }

    fn message(&self) -> String {
        format_counts(&self.counts)
    }
}

impl Default for TerminalReporter {
    fn default() -> Self {
        TerminalReporter::new()
    }
}

/// `12 passed, 1 failed, 3 skipped`.
pub fn format_counts(c: &Counts) -> String {
    format!(
        "{} passed, {} failed, {} skipped",
        c.passed, c.failed, c.skipped
    )
}

/// libtest's closing line, which scripts and people look for.
pub fn result_line(c: &Counts, elapsed: Duration) -> String {
    format!(
        "test result: {}. {} passed; {} failed; {} ignored; 0 measured; {} filtered out; finished in {:.2}s",
        if c.failed == 0 { "ok" } else { "FAILED" },
        c.passed,
        c.failed,
        c.skipped,
        c.filtered_out,
        elapsed.as_secs_f64()
    )
}

impl Reporter for TerminalReporter {
    fn event(&mut self, event: &RunEvent<'_>) -> Result<(), String> {
        match event {
            RunEvent::Started {
                total,
                filtered_out,
            } => {
                self.counts.filtered_out = *filtered_out as u64;
                self.bar.set_length(*total as u64);
                self.bar.println(format!(
                    "    Starting {total} cases ({filtered_out} filtered out)"
                ));
                self.bar.set_message(self.message());
            }
            RunEvent::CaseFinished(case) => {
                self.counts.add(&case.outcome);
                if case.outcome.is_failed() {
                    let msg = case.message.as_deref().unwrap_or("failed");
                    // above the bar, which redraws below it
                    self.bar.suspend(|| {
                        let mut out = std::io::stdout().lock();
                        let _ = writeln!(
                            out,
                            "        FAIL [{:>7.3}s] {}\n{}\n",
                            case.duration.as_secs_f64(),
                            case.id,
                            indent(msg)
                        );
                        let _ = out.flush();
                    });
                }
                self.bar.inc(1);
                self.bar.set_message(self.message());
            }
            RunEvent::Finished {
                counts, elapsed, ..
            } => {
                self.bar.finish_and_clear();
                let mut out = std::io::stdout().lock();
                let _ = writeln!(
                    out,
                    "    Finished {} cases in {:.2}s: {}",
                    counts.total(),
                    elapsed.as_secs_f64(),
                    format_counts(counts)
                );
                let _ = out.flush();
            }
        }
        Ok(())
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_line_reads_like_libtests() {
        let c = Counts {
            passed: 3,
            failed: 1,
            skipped: 2,
            filtered_out: 7,
        };
        assert_eq!(
            result_line(&c, Duration::from_millis(1500)),
            "test result: FAILED. 3 passed; 1 failed; 2 ignored; 0 measured; 7 filtered out; finished in 1.50s"
        );
        assert!(result_line(&Counts::default(), Duration::ZERO).starts_with("test result: ok."));
    }

    #[test]
    fn the_reporter_counts_every_case() {
        use crate::property::{CaseId, Outcome};
        use crate::runner::events::CaseFinished;
        let mut r = TerminalReporter::with_target(ProgressDrawTarget::hidden());
        r.event(&RunEvent::Started {
            total: 3,
            filtered_out: 1,
        })
        .unwrap();
        let id: CaseId = "vs_reference::add::f32::f32[7]{0}::uniform::interpreter"
            .parse()
            .expect("a case name");
        for outcome in [Outcome::Pass, Outcome::Skip("why".into()), Outcome::XPass] {
            let case = CaseFinished::new(id, outcome, None);
            r.event(&RunEvent::CaseFinished(&case)).unwrap();
        }
        assert_eq!(r.message(), "2 passed, 0 failed, 1 skipped");
        assert_eq!(r.bar.position(), 3);
    }
}
