//! A triage (`triage.json` of `xla-props triage`) in the report: each
//! failure links to its group, and the groups are listed with their cause
//! and representative reproducer.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use serde::Deserialize;

use super::markup::escape;
use super::results::ReportError;

/// One member of a group (only its name is read).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct TriageMember {
    /// The case name (or file) of the failure.
    pub name: String,
}

/// One group of a triage.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct TriageGroup {
    /// `G1`, `G2`, ...
    pub id: String,
    /// The cause in a line.
    pub title: String,
    /// Members.
    pub count: usize,
    /// The representative reproducer, relative to the triage's directory.
    pub representative: String,
    /// Instructions of the representative.
    pub representative_instructions: usize,
    /// The members.
    pub members: Vec<TriageMember>,
}

/// A triage, as the report reads it.
///
/// ```
/// use xla_props::report::TriageLinks;
/// let t = TriageLinks::parse(r#"{"groups": [{"id": "G1", "title": "add", "count": 1,
///     "members": [{"name": "vs_reference::add::s8::s8[2]{0}::uniform::b"}]}]}"#, "t.json", "out").unwrap();
/// assert_eq!(t.group_of("vs_reference::add::s8::s8[2]{0}::uniform::b"), Some("G1"));
/// assert!(TriageLinks::parse("[]", "t.json", "out").is_err());
/// ```
#[derive(Clone, Debug, Default)]
pub struct TriageLinks {
    /// Where the triage was read from.
    pub origin: String,
    /// Its directory (the representatives' paths are relative to it).
    pub dir: String,
    /// Its groups.
    pub groups: Vec<TriageGroup>,
    by_member: BTreeMap<String, usize>,
}

#[derive(Deserialize)]
struct TriageFile {
    groups: Vec<TriageGroup>,
}

impl TriageLinks {
    /// Parses `triage.json`'s text; `origin` names it in errors, `dir` is its folder.
    pub fn parse(text: &str, origin: &str, dir: &str) -> Result<TriageLinks, ReportError> {
        let file: TriageFile = serde_json::from_str(text)
            .map_err(|e| ReportError(format!("{origin}: not a triage file: {e}")))?;
        let mut by_member = BTreeMap::new();
        for (k, g) in file.groups.iter().enumerate() {
            for m in &g.members {
                by_member.insert(m.name.clone(), k);
            }
        }
        Ok(TriageLinks {
            origin: origin.to_string(),
            dir: dir.to_string(),
            groups: file.groups,
            by_member,
        })
    }

    /// Reads `triage.json`.
    pub fn load(path: &Path) -> Result<TriageLinks, ReportError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ReportError(format!("{origin}: cannot read: {e}")))?;
        let dir = path
            .parent()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        TriageLinks::parse(&text, &origin, &dir)
    }

    /// The id of the group of failure `name`.
    pub fn group_of(&self, name: &str) -> Option<&str> {
        self.by_member
            .get(name)
            .map(|&k| self.groups[k].id.as_str())
    }
}

/// The link from a failure's row to its group (empty when it has none).
pub(crate) fn group_link(triage: Option<&TriageLinks>, name: &str) -> String {
    match triage.and_then(|t| t.group_of(name)) {
        Some(id) => format!(
            " <a class=\"group-link\" href=\"#triage-{0}\">group {0}</a>",
            escape(id)
        ),
        None => String::new(),
    }
}

/// The section listing the groups.
pub(crate) fn triage_section(h: &mut String, triage: Option<&TriageLinks>) {
    let Some(t) = triage else { return };
    let _ = writeln!(
        h,
        "<h2 id=\"triage\">Triage</h2>\n<p>{} group(s), from <code>{}</code>.</p>",
        t.groups.len(),
        escape(&t.origin)
    );
    h.push_str(
        "<table id=\"triage-table\">\n<tr><th>group</th><th>failures</th><th>cause</th>\
         <th>representative</th></tr>\n",
    );
    for g in &t.groups {
        let rep = if g.representative.is_empty() {
            String::new()
        } else {
            let path = Path::new(&t.dir).join(&g.representative);
            format!(
                "<code>{}</code> ({} instructions)",
                escape(&path.display().to_string()),
                g.representative_instructions
            )
        };
        let _ = writeln!(
            h,
            "<tr id=\"triage-{0}\"><td>{0}</td><td>{1}</td><td>{2}</td><td>{rep}</td></tr>",
            escape(&g.id),
            g.count,
            escape(&g.title)
        );
    }
    h.push_str("</table>\n");
}
