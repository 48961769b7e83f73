//! Failures grouped by root cause: the groups, their representatives, and
//! what `triage.json` holds.

use std::collections::BTreeMap;

use super::analyze::{Analysed, Member};
use super::cause::RootCause;
use super::collect::NotTriaged;
use crate::isolate::Isolated;

/// Failures with one root cause (one bug, most likely).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Group {
    /// `G1`, `G2`, ... by decreasing size.
    pub id: String,
    /// The cause in a line.
    pub title: String,
    /// The cause.
    pub cause: RootCause,
    /// Members.
    pub count: usize,
    /// The smallest member's minimized reproducer, relative to the triage
    /// directory (empty when no member could be isolated).
    pub representative: String,
    /// That member's name.
    pub representative_of: String,
    /// Instructions of the representative.
    pub representative_instructions: usize,
    /// Members per exact culprit dtype and mismatch kind.
    pub details: BTreeMap<String, usize>,
    /// Every member.
    pub members: Vec<Member>,
}

/// What `xla-props triage` found: `triage.json`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Triage {
    /// The backend the failures were analysed on.
    pub backend: String,
    /// The paths given.
    pub inputs: Vec<String>,
    /// Failures analysed.
    pub failures: usize,
    /// Of those, in a group.
    pub grouped: usize,
    /// The groups, largest first.
    pub groups: Vec<Group>,
    /// Failures analysed but in no group: they agree now, their departure
    /// is legal, or they could not be isolated (each says why).
    pub ungrouped: Vec<Member>,
    /// Failures named but not analysed (no reproducer, unreadable).
    pub not_triaged: Vec<NotTriaged>,
    /// Wall time.
    pub seconds: f64,
}

impl Triage {
    /// The group of the failure called `name`.
    pub fn group_of(&self, name: &str) -> Option<&Group> {
        self.groups
            .iter()
            .find(|g| g.members.iter().any(|m| m.name == name))
    }
}

/// A group with the isolation of its smallest member (its representative).
pub(crate) type Represented = (Group, Option<Box<Isolated>>);

/// The groups of `analysed` (largest first, then by cause), each with the
/// isolation of its smallest member; and the members in no group.
pub(crate) fn group(analysed: Vec<Analysed>) -> (Vec<Represented>, Vec<Member>) {
    let mut by_cause: BTreeMap<RootCause, Vec<Analysed>> = BTreeMap::new();
    let mut ungrouped = Vec::new();
    for a in analysed {
        match a.member.cause.clone() {
            Some(c) => by_cause.entry(c).or_default().push(a),
            None => ungrouped.push(a.member),
        }
    }
    let mut groups: Vec<(RootCause, Vec<Analysed>)> = by_cause.into_iter().collect();
    groups.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    let out = groups
        .into_iter()
        .enumerate()
        .map(|(k, (cause, members))| {
            let best = members
                .iter()
                .enumerate()
                .filter(|(_, a)| a.isolated.is_some())
                .min_by_key(|(_, a)| {
                    let m = &a.member;
                    (
                        m.reproducer_instructions,
                        m.reproducer_elements,
                        m.name.clone(),
                    )
                })
                .map(|(i, _)| i);
            let mut details = BTreeMap::new();
            for a in &members {
                *details.entry(a.member.detail.clone()).or_insert(0) += 1;
            }
            let (rep_name, rep_instructions) = best
                .map(|i| {
                    let m = &members[i].member;
                    (m.name.clone(), m.reproducer_instructions)
                })
                .unwrap_or_default();
            let mut members = members;
            let isolated = best.and_then(|i| members[i].isolated.take());
            let id = format!("G{}", k + 1);
            let group = Group {
                representative: if isolated.is_some() {
                    format!("{}/reproducer.hlotest", dir_name(&id, &cause))
                } else {
                    String::new()
                },
                id,
                title: cause.title(),
                count: members.len(),
                cause,
                representative_of: rep_name,
                representative_instructions: rep_instructions,
                details,
                members: members.into_iter().map(|a| a.member).collect(),
            };
            (group, isolated)
        })
        .collect();
    (out, ungrouped)
}

/// The folder of a group's representative: `G1-add-integer`.
pub(crate) fn dir_name(id: &str, cause: &RootCause) -> String {
    let what = match &cause.known_bug {
        Some(b) => format!("known-{b}"),
        None => format!("{}-{}", cause.opcode, cause.dtype.replace("->", "-to-")),
    };
    let safe = crate::hlo::rewrite::replace_other_chars(&what, "-", '_');
    format!("{id}-{safe}")
}
