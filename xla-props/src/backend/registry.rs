//! The built-in backends, by name.

use super::api::{Backend, BackendTraits};
use super::error::BackendError;
use super::interpreter::Interpreter;
use super::mutant::{Buggy, Mutant, Mutation};
use super::xla::config::declared_backends;
use super::xla::{ConfigError, DeclaredBackend, XlaBackend, XlaPlugin};

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
pub struct KnownBackend {
    /// Its name, as given to [`create`] and used in case names.
    pub name: &'static str,
    /// One line saying what it is.
    pub description: &'static str,
    /// Whether it can be used.
    pub availability: Availability,
    /// Where it comes from: `built-in`, the built-in file, or the path of
    /// the user's `xla-props.toml`.
    pub source: String,
    /// The XLA revision of its plugin, as recorded with the pin (declared
    /// backends that record one).
    pub revision: Option<&'static str>,
    /// What its backend's `traits()` says, known without making it (an
    /// unavailable backend keeps them: listing does not depend on what is
    /// installed).
    pub traits: BackendTraits,
}

/// One registry entry: how to describe a backend and how to make it.
struct Entry {
    name: &'static str,
    description: &'static str,
    /// `Err(reason)` when the backend is unavailable.
    make: fn() -> Result<Box<dyn Backend>, String>,
    /// Its traits (what `make`'s backend returns from `traits()`).
    traits: BackendTraits,
}

/// The registry. Adding a built-in backend means adding one entry here.
const ENTRIES: &[Entry] = &[
    Entry {
        name: "reference",
        description: "the exact reference evaluator (every float op rounded once from an exact or f64 result)",
        make: || Ok(Box::new(super::ReferenceBackend::default())),
        traits: BackendTraits::NONE,
    },
    Entry {
        name: "interpreter",
        description: "native-dtype evaluation the way a simple cpu compiler computes (f32 math for narrow floats)",
        make: || Ok(Box::new(Interpreter::default())),
        traits: BackendTraits::NONE,
    },
    Entry {
        name: "iree-cpu",
        description: "the iree compiler (3.13.0, llvm-cpu target, generic x86-64) through iree-compile and iree-run-module",
        make: || {
            let backend = super::iree::IreeBackend::new();
            backend.availability()?;
            Ok(Box::new(backend))
        },
        traits: BackendTraits::BATCHING_COMPILER,
    },
    Entry {
        name: "xla-gpu",
        description: "the xla gpu compiler through jax's cuda pjrt plugin",
        make: || make_xla(XlaPlugin::Gpu),
        traits: BackendTraits::BATCHING_COMPILER,
    },
];

/// A backend declared in a file, or why it is unavailable.
fn make_declared(d: &DeclaredBackend) -> Result<Box<dyn Backend>, String> {
    let backend = XlaBackend::declared(d);
    backend.availability()?;
    Ok(Box::new(backend))
}

/// The declared backends (the built-in file's and the user's), or none when
/// the user's file is bad (see [`config_error`]).
fn declared() -> &'static [DeclaredBackend] {
    match declared_backends() {
        Ok(v) => v,
        Err(_) => &[],
    }
}

/// The located error of a bad `xla-props.toml` (`FILE:LINE: message`), if any.
///
/// ```
/// // without a user config file there is nothing to report
/// if std::env::var_os("XLA_PROPS_CONFIG").is_none() && !std::path::Path::new("xla-props.toml").exists() {
///     assert!(xla_props::backend::config_error().is_none());
/// }
/// ```
pub fn config_error() -> Option<&'static ConfigError> {
    declared_backends().as_ref().err()
}

/// An XLA backend, or why it is unavailable (plugin or worker binary missing).
fn make_xla(plugin: XlaPlugin) -> Result<Box<dyn Backend>, String> {
    let backend = XlaBackend::new(plugin);
    backend.availability()?;
    Ok(Box::new(backend))
}

/// Every backend this build knows, with its availability.
///
/// ```
/// use xla_props::backend::{known_backends, Availability};
/// let all = known_backends();
/// let interp = all.iter().find(|b| b.name == "interpreter").unwrap();
/// assert_eq!(interp.availability, Availability::Available);
/// ```
pub fn known_backends() -> Vec<KnownBackend> {
    let availability = |r: Result<Box<dyn Backend>, String>| match r {
        Ok(_) => Availability::Available,
        Err(reason) => Availability::Unavailable(reason),
    };
    let mut out: Vec<KnownBackend> = ENTRIES
        .iter()
        .map(|e| KnownBackend {
            name: e.name,
            description: e.description,
            availability: availability((e.make)()),
            source: "built-in".to_string(),
            revision: None,
            traits: e.traits,
        })
        .collect();
    // declared ones after the interpreter, in file order (built-in file first)
    let at = out.len().saturating_sub(1);
    let declared: Vec<KnownBackend> = declared()
        .iter()
        .map(|d| KnownBackend {
            name: d.name,
            description: d.description,
            availability: availability(make_declared(d)),
            source: d.source.to_string(),
            revision: d.revision,
            traits: BackendTraits::BATCHING_COMPILER,
        })
        .collect();
    out.splice(at..at, declared);
    out
}

/// Makes the backend called `name`: a registered or declared one,
/// `mutant:NAME[@BASE]` (a catalogue mutation, see [`Mutation`]) or
/// `buggy:BUG@COMPUTATION` (a fusion-only miscompilation, see [`Buggy`]).
/// The one way to make a backend from a name.
///
/// ```
/// use xla_props::backend::{create, BackendError};
/// assert_eq!(create("interpreter").unwrap().name(), "interpreter");
/// let b = create("buggy:wrong-constant@fused.1").unwrap();
/// assert_eq!(b.name(), "buggy:wrong-constant@fused.1");
/// match create("nope") {
///     Err(BackendError::UnknownBackend { known, .. }) => assert!(known.contains(&"interpreter".to_string())),
///     _ => panic!("expected an unknown-backend error"),
/// }
/// ```
pub fn create(name: &str) -> Result<Box<dyn Backend>, BackendError> {
    if let Some(spec) = name.strip_prefix("mutant:") {
        return create_mutant(name, spec);
    }
    if name.starts_with("buggy:") {
        return Buggy::from_name(name)
            .map(|b| Box::new(b) as Box<dyn Backend>)
            .ok_or_else(|| BackendError::UnknownBackend {
                name: name.to_string(),
                known: super::mutant::Bug::ALL
                    .iter()
                    .map(|b| format!("buggy:{}@COMPUTATION", b.name()))
                    .collect(),
            });
    }
    let unavailable = |reason| BackendError::Unavailable {
        backend: name.to_string(),
        reason,
    };
    if let Some(entry) = ENTRIES.iter().find(|e| e.name == name) {
        return (entry.make)().map_err(unavailable);
    }
    if let Some(d) = declared().iter().find(|d| d.name == name) {
        return make_declared(d).map_err(unavailable);
    }
    if let Some(e) = config_error() {
        return Err(unavailable(format!("the config file is bad: {e}")));
    }
    Err(BackendError::UnknownBackend {
        name: name.to_string(),
        known: ENTRIES
            .iter()
            .map(|e| e.name.to_string())
            .chain(declared().iter().map(|d| d.name.to_string()))
            .collect(),
    })
}

/// `mutant:NAME` wraps the interpreter, `mutant:NAME@BASE` wraps the backend
/// `BASE`; `mutant:A+B+...` carries several mutations at once.
fn create_mutant(full: &str, spec: &str) -> Result<Box<dyn Backend>, BackendError> {
    let (names, base) = spec.split_once('@').unwrap_or((spec, "interpreter"));
    let mutations = names
        .split('+')
        .map(|name| {
            name.parse::<Mutation>()
                .map_err(|_| BackendError::UnknownBackend {
                    name: full.to_string(),
                    known: Mutation::ALL
                        .iter()
                        .map(|m| format!("mutant:{}", m.name()))
                        .collect(),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let base = create(base)?;
    if let [mutation] = mutations[..] {
        return Ok(Box::new(Mutant::new(base, mutation)));
    }
    Mutant::stacked(base, &mutations)
        .map(|m| Box::new(m) as Box<dyn Backend>)
        .map_err(|reason| BackendError::Unavailable {
            backend: full.to_string(),
            reason,
        })
}

/// Every backend of the built-in registry that is available in this build.
pub fn available_backends() -> Vec<Box<dyn super::api::Backend>> {
    known_backends()
        .into_iter()
        .filter(|info| info.availability == Availability::Available)
        .filter_map(|info| create(info.name).ok())
        .collect()
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
    fn xla_backends_are_registered_and_say_why_when_unavailable() {
        let infos = known_backends();
        for name in ["xla-cpu", "xla-cpu-0.81", "xla-gpu", "iree-cpu"] {
            let info = infos.iter().find(|b| b.name == name).unwrap();
            match (&info.availability, create(name)) {
                (Availability::Available, Ok(b)) => assert_eq!(b.name(), name),
                (
                    Availability::Unavailable(why),
                    Err(BackendError::Unavailable { backend, reason }),
                ) => {
                    assert_eq!(backend, name);
                    assert_eq!(&reason, why);
                    assert!(!reason.is_empty());
                }
                (a, b) => panic!(
                    "{name}: listing says {a:?}, create says {:?}",
                    b.map(|b| b.name().to_string())
                ),
            }
        }
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
