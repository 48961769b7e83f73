//! A pass bisection as text: the summary lines the command prints and the
//! markdown report it writes.

use super::passes::{PassBisection, PassVerdict, ProbeResult};

impl PassBisection {
    /// The conclusion in one line.
    pub fn conclusion(&self) -> String {
        match &self.verdict {
            PassVerdict::Culprits(p) if p.len() == 1 => format!(
                "culprit pass: `{}` (disabling it alone makes the disagreement vanish)",
                p[0]
            ),
            PassVerdict::Culprits(p) => format!(
                "culprit passes: {} (the disagreement vanishes only with all of them disabled)",
                quoted(p)
            ),
            PassVerdict::EachSuffices(p) => format!(
                "culprit passes: {} (disabling any one of them alone makes the disagreement vanish: they take part together)",
                quoted(p)
            ),
            PassVerdict::NotAPass if self.required.is_empty() => "no hlo pass: the disagreement persists with every pass that changed the module disabled; it is in code generation or a kernel".into(),
            PassVerdict::NotAPass => format!(
                "no pass that can be disabled: the disagreement persists with every other pass that changed the module disabled; the compile cannot do without {}, so those stay untested (else the cause is code generation or a kernel)",
                quoted(&self.required)
            ),
            PassVerdict::Agrees => "the backend agrees with every pass on: nothing to bisect".into(),
            PassVerdict::Inconclusive(why) => format!("inconclusive: {why}"),
        }
    }

    /// Every probe in a line: the passes disabled and what it gave.
    pub fn probe_lines(&self) -> Vec<String> {
        self.probes
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let disabled = if p.disabled.is_empty() {
                    "none (every pass on, dumped)".to_string()
                } else {
                    p.disabled.join(",")
                };
                let (kind, detail) = match &p.result {
                    ProbeResult::Disagrees(d) => ("disagrees", d),
                    ProbeResult::Agrees(d) => ("agrees", d),
                    ProbeResult::Failed(d) => ("compile or run failed", d),
                };
                let detail: String = detail.chars().take(160).collect();
                format!(
                    "probe {}: disabled {disabled}: {kind} ({detail}) [{:.2} s]",
                    k + 1,
                    p.seconds
                )
            })
            .collect()
    }

    /// The markdown report: conclusion, passes, probes, HLO before and after.
    pub fn to_markdown(&self, file: &str) -> String {
        let mut md = format!(
            "# Pass bisection of `{file}` on `{}`\n\n{}\n\n",
            self.backend,
            self.conclusion()
        );
        md.push_str(&format!(
            "## Passes that changed the module ({} steps, {} distinct passes)\n\n",
            self.steps.iter().filter(|s| s.is_pass()).count(),
            self.candidates.len()
        ));
        md.push_str("| step | pipeline | pass | next |\n| --- | --- | --- | --- |\n");
        for s in self.steps.iter().filter(|s| s.is_pass()) {
            md.push_str(&format!(
                "| {} | {} | `{}` | {} |\n",
                s.step, s.pipeline, s.pass, s.next
            ));
        }
        if !self.required.is_empty() {
            md.push_str(&format!(
                "\nThe compile fails with any of these disabled (left on): {}\n",
                quoted(&self.required)
            ));
        }
        md.push_str(&format!("\n## Probes ({})\n\n", self.probes.len()));
        for l in self.probe_lines() {
            md.push_str(&format!("- {l}\n"));
        }
        for c in &self.culprit_hlo {
            md.push_str(&format!(
                "\n## `{}`: change {} of {} (pipeline `{}`)\n\nBefore: `{}`\nAfter: `{}`\n\n```diff\n{}```\n",
                c.pass,
                c.change,
                c.times_changed,
                c.pipeline,
                c.before_file.display(),
                c.after_file.display(),
                c.diff
            ));
        }
        md
    }
}

fn quoted(passes: &[String]) -> String {
    passes
        .iter()
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
