//! The built-in backends, by name.

use super::api::Backend;
use super::error::BackendError;
use super::interpreter::Interpreter;
use super::mutant::{Mutant, Mutation};

/// Whether a backend can be used in this build on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Availability {
    /// Ready to use.
    Available,
    /// Known but not usable, and why.
    Unavailable(String),
}

/// A backend this build knows about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendInfo {
    /// Its name, as given to [`create`] and used in case names.
    pub name: &'static str,
    /// One line saying what it is.
    pub description: &'static str,
    /// Whether it can be used.
    pub availability: Availability,
}

/// One registry entry: how to describe a backend and how to make it.
struct Entry {
    name: &'static str,
    description: &'static str,
    /// `Err(reason)` when the backend is unavailable.
    make: fn() -> Result<Box<dyn Backend>, String>,
}

/// The registry. Adding a built-in backend means adding one entry here.
const ENTRIES: &[Entry] = &[
    // `reference` (the exact evaluator wrapped as a backend) is registered here by the integrator.
    Entry {
        name: "interpreter",
        description: "native-dtype evaluation the way a simple cpu compiler computes (f32 math for narrow floats)",
        make: || Ok(Box::new(Interpreter::default())),
    },
    Entry {
        name: "xla-cpu",
        description: "the xla cpu compiler through a pjrt c api plugin",
        make: || Err("not built yet: the PJRT plugin backend arrives with the XLA issue".to_string()),
    },
];

/// Every backend this build knows, with its availability.
///
/// ```
/// use xla_props::backend::{known_backends, Availability};
/// let all = known_backends();
/// let interp = all.iter().find(|b| b.name == "interpreter").unwrap();
/// assert_eq!(interp.availability, Availability::Available);
/// ```
pub fn known_backends() -> Vec<BackendInfo> {
    ENTRIES
        .iter()
        .map(|e| BackendInfo {
            name: e.name,
            description: e.description,
            availability: match (e.make)() {
                Ok(_) => Availability::Available,
                Err(reason) => Availability::Unavailable(reason),
            },
        })
        .collect()
}

/// Makes the backend called `name`.
///
/// ```
/// use xla_props::backend::{create, BackendError};
/// assert_eq!(create("interpreter").unwrap().name(), "interpreter");
/// match create("nope") {
///     Err(BackendError::UnknownBackend { known, .. }) => assert!(known.contains(&"interpreter".to_string())),
///     _ => panic!("expected an unknown-backend error"),
/// }
/// ```
pub fn create(name: &str) -> Result<Box<dyn Backend>, BackendError> {
    if let Some(spec) = name.strip_prefix("mutant:") {
        return create_mutant(name, spec);
    }
    let entry =
        ENTRIES
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| BackendError::UnknownBackend {
                name: name.to_string(),
                known: ENTRIES.iter().map(|e| e.name.to_string()).collect(),
            })?;
    (entry.make)().map_err(|reason| BackendError::Unavailable {
        backend: name.to_string(),
        reason,
    })
}

/// `mutant:NAME` wraps the interpreter, `mutant:NAME@BASE` wraps the backend `BASE`.
fn create_mutant(full: &str, spec: &str) -> Result<Box<dyn Backend>, BackendError> {
    let (name, base) = spec.split_once('@').unwrap_or((spec, "interpreter"));
    let mutation: Mutation = name.parse().map_err(|_| BackendError::UnknownBackend {
        name: full.to_string(),
        known: Mutation::ALL
            .iter()
            .map(|m| format!("mutant:{}", m.name()))
            .collect(),
    })?;
    let base = create(base)?;
    Ok(Box::new(Mutant::new(base, mutation)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_backend_lists_known_names() {
        let err = create("tpu-magic").err().unwrap();
        let msg = err.to_string();
        assert!(msg.contains("unknown backend `tpu-magic`"), "{msg}");
        assert!(msg.contains("interpreter"), "{msg}");
        assert!(msg.contains("xla-cpu"), "{msg}");
    }

    #[test]
    fn unavailable_backend_says_why() {
        match create("xla-cpu") {
            Err(BackendError::Unavailable { backend, reason }) => {
                assert_eq!(backend, "xla-cpu");
                assert!(reason.contains("not built yet"));
            }
            other => panic!(
                "expected unavailable, got {:?}",
                other.map(|b| b.name().to_string())
            ),
        }
        let infos = known_backends();
        let xla = infos.iter().find(|b| b.name == "xla-cpu").unwrap();
        assert!(matches!(xla.availability, Availability::Unavailable(_)));
    }

    #[test]
    fn names_are_unique() {
        let infos = known_backends();
        let mut names: Vec<_> = infos.iter().map(|b| b.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), infos.len());
    }
}
