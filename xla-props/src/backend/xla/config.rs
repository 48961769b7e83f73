//! Backends declared in a file: `xla-props.toml` in the working directory, or
//! the file `XLA_PROPS_CONFIG` names, and the built-in file of the same
//! format (`builtin-backends.toml`: `xla-cpu`, `xla-cpu-0.81`).
//!
//! ```toml
//! [backend.my-xla]
//! plugin = "plugins/my_pjrt.so"          # or python_package = "jax_plugins.xla_cuda12"
//! compile_options = { xla_flags = ["--xla_cpu_enable_fast_min_max=false"] }
//! create_options = { visible_devices = [0] }
//! numerics = { flush_inputs = ["f32"], flush_outputs = ["f32"] }
//!
//! [[backend.my-xla.known_bugs]]
//! id = "my-xla/cbrt-subnormal"
//! summary = "cbrt of a subnormal is a constant"
//! documented = "https://example.com/bug/1"
//! model = [{ kind = "subnormal-inputs-give", op = "cbrt", dtypes = ["f32"], inputs = "nonzero", value = -5.595e-16 }]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::check::{BugModel, KnownBug, ModelSpec, Numerics};

/// The built-in file: the pinned XLA CPU builds.
pub const BUILTIN_FILE: &str = include_str!("builtin-backends.toml");
/// What [`BackendSource::Builtin`] is shown as.
pub const BUILTIN_NAME: &str = "built-in file xla-props/src/backend/xla/builtin-backends.toml";
/// The environment variable that names the user's file.
pub const CONFIG_ENV: &str = "XLA_PROPS_CONFIG";
/// The user's file in the working directory.
pub const CONFIG_FILE: &str = "xla-props.toml";

/// Where a declared backend came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendSource {
    /// The built-in file.
    Builtin,
    /// The user's file.
    File(PathBuf),
}

impl std::fmt::Display for BackendSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BackendSource::Builtin => f.write_str(BUILTIN_NAME),
            BackendSource::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// A bad config file: `FILE:LINE: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ConfigError {
    /// The file.
    pub file: String,
    /// The 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// A PJRT client create option (`PJRT_NamedValue`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CreateOption {
    /// `kBool`.
    Bool(bool),
    /// `kInt64`.
    Int(i64),
    /// `kFloat` (sent as f32).
    Float(f64),
    /// `kString`.
    Str(String),
    /// `kInt64List`.
    IntList(Vec<i64>),
}

/// Options of every compile.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompileOptions {
    /// XLA flags (debug options), given to the worker as `XLA_FLAGS`.
    #[serde(default)]
    pub xla_flags: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KnownBugDecl {
    id: String,
    summary: String,
    /// Where it is documented: a URL or a docs section.
    #[serde(alias = "url")]
    documented: String,
    model: Vec<ModelSpec>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BackendDecl {
    #[serde(default)]
    description: Option<String>,
    /// The XLA revision the plugin was built from, recorded with its pin
    /// (a PJRT plugin reports only version numbers of itself).
    #[serde(default)]
    revision: Option<String>,
    #[serde(default)]
    plugin: Option<PathBuf>,
    #[serde(default)]
    python_package: Option<String>,
    #[serde(default)]
    plugin_env: Option<String>,
    #[serde(default)]
    cache_file: Option<String>,
    #[serde(default)]
    create_options: BTreeMap<String, CreateOption>,
    #[serde(default)]
    compile_options: CompileOptions,
    #[serde(default)]
    numerics: Numerics,
    #[serde(default)]
    known_bugs: Vec<toml::Spanned<KnownBugDecl>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    backend: BTreeMap<String, toml::Spanned<BackendDecl>>,
}

/// How a declared backend's plugin is found, in this order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginLocation {
    /// An environment variable that overrides everything else.
    pub env: Option<String>,
    /// A path (relative ones are relative to the config file's directory).
    pub path: Option<PathBuf>,
    /// A python package in site-packages holding the plugin's `.so`.
    pub python_package: Option<String>,
    /// A file name in the plugin cache (`$XLA_PLUGIN_CACHE`, `.cache/xla-plugin`).
    pub cache_file: Option<String>,
}

/// A backend declared in a file.
#[derive(Clone, Debug)]
pub struct DeclaredBackend {
    /// Its name (the `[backend.NAME]` key).
    pub name: &'static str,
    /// One line saying what it is.
    pub description: &'static str,
    /// The XLA revision its plugin was built from, as recorded with its pin.
    pub revision: Option<&'static str>,
    /// Where it was declared.
    pub source: BackendSource,
    /// How its plugin is found.
    pub plugin: PluginLocation,
    /// PJRT client create options.
    pub create_options: BTreeMap<String, CreateOption>,
    /// Compile options.
    pub compile_options: CompileOptions,
    /// What it promises.
    pub numerics: Numerics,
    /// What it is known to get wrong.
    pub known_bugs: &'static [KnownBug],
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Parses a config file's text. `file` names it in errors; relative plugin
/// paths are relative to `dir`. Declared strings and models are leaked: a
/// process reads its config once.
pub fn parse_config(
    text: &str,
    file: &str,
    source: BackendSource,
    dir: &Path,
) -> Result<Vec<DeclaredBackend>, ConfigError> {
    let err = |offset: usize, message: String| ConfigError {
        file: file.to_string(),
        line: line_of(text, offset),
        message,
    };
    let parsed: ConfigFile = toml::from_str(text).map_err(|e| {
        let at = e.span().map(|s| s.start).unwrap_or(0);
        err(at, e.message().trim_end().to_string())
    })?;
    let mut out = Vec::new();
    for (name, decl) in parsed.backend {
        let at = decl.span().start;
        let decl = decl.into_inner();
        if name.is_empty() || name.contains(char::is_whitespace) || name.contains("::") {
            return Err(err(
                at,
                format!("backend name `{name}` must be one word without `::`"),
            ));
        }
        if matches!(name.as_str(), "reference" | "interpreter" | "xla-gpu")
            || name.starts_with("mutant:")
        {
            return Err(err(
                at,
                format!("backend `{name}` is built in and cannot be declared"),
            ));
        }
        if decl.plugin.is_some() && decl.python_package.is_some() {
            return Err(err(
                at,
                format!("backend `{name}`: give `plugin` or `python_package`, not both"),
            ));
        }
        if decl.plugin.is_none()
            && decl.python_package.is_none()
            && decl.plugin_env.is_none()
            && decl.cache_file.is_none()
        {
            return Err(err(
                at,
                format!("backend `{name}`: missing `plugin` (or `python_package`)"),
            ));
        }
        let mut bugs = Vec::new();
        for bug in decl.known_bugs {
            let bat = bug.span().start;
            let bug = bug.into_inner();
            if bug.model.is_empty() {
                return Err(err(
                    bat,
                    format!("known bug `{}`: `model` is empty", bug.id),
                ));
            }
            if let Some(why) = bug.model.iter().find_map(ModelSpec::validate) {
                return Err(err(bat, format!("known bug `{}`: {why}", bug.id)));
            }
            let specs: &'static [ModelSpec] = Box::leak(bug.model.into_boxed_slice());
            bugs.push(KnownBug {
                id: leak(bug.id),
                summary: leak(bug.summary),
                documented: leak(bug.documented),
                model: BugModel::Data(specs),
            });
        }
        let plugin = PluginLocation {
            env: decl.plugin_env,
            path: decl
                .plugin
                .map(|p| if p.is_relative() { dir.join(p) } else { p }),
            python_package: decl.python_package,
            cache_file: decl.cache_file,
        };
        let description = decl
            .description
            .unwrap_or_else(|| format!("a pjrt plugin declared in {source}"));
        out.push(DeclaredBackend {
            name: leak(name),
            description: leak(description),
            revision: decl.revision.map(leak),
            source: source.clone(),
            plugin,
            create_options: decl.create_options,
            compile_options: decl.compile_options,
            numerics: decl.numerics,
            known_bugs: Box::leak(bugs.into_boxed_slice()),
        });
    }
    Ok(out)
}

/// The user's config file, if any: `XLA_PROPS_CONFIG`, else `./xla-props.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(CONFIG_ENV) {
        return Some(PathBuf::from(p));
    }
    let p = std::env::current_dir().ok()?.join(CONFIG_FILE);
    p.is_file().then_some(p)
}

/// Reads and parses the file at `path`.
pub fn load_config_file(path: &Path) -> Result<Vec<DeclaredBackend>, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: file.clone(),
        line: 0,
        message: format!("cannot read the config file: {e}"),
    })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    parse_config(&text, &file, BackendSource::File(path.to_path_buf()), dir)
}

/// The built-in declarations (the built-in file is checked by a unit test).
pub fn builtin_backends() -> Vec<DeclaredBackend> {
    parse_config(
        BUILTIN_FILE,
        BUILTIN_NAME,
        BackendSource::Builtin,
        Path::new("."),
    )
    .unwrap_or_default()
}

/// Every declared backend: the built-in file's, then the user's (a user entry
/// with a built-in name replaces it). Read once per process.
pub fn declared_backends() -> &'static Result<Vec<DeclaredBackend>, ConfigError> {
    static DECLARED: std::sync::OnceLock<Result<Vec<DeclaredBackend>, ConfigError>> =
        std::sync::OnceLock::new();
    DECLARED.get_or_init(|| {
        let mut all = builtin_backends();
        if let Some(path) = user_config_path() {
            for d in load_config_file(&path)? {
                all.retain(|b| b.name != d.name);
                all.push(d);
            }
        }
        Ok(all)
    })
}

/// The built-in declaration called `name`.
pub fn builtin_backend(name: &str) -> Option<DeclaredBackend> {
    static BUILTIN: std::sync::OnceLock<Vec<DeclaredBackend>> = std::sync::OnceLock::new();
    BUILTIN
        .get_or_init(builtin_backends)
        .iter()
        .find(|b| b.name == name)
        .cloned()
}

impl PluginLocation {
    /// The plugin file, or why it was not found.
    pub fn locate(&self) -> Result<PathBuf, String> {
        if let Some(var) = &self.env {
            if let Some(p) = std::env::var_os(var) {
                let p = PathBuf::from(p);
                return if p.is_file() {
                    Ok(p)
                } else {
                    Err(format!("{var}={} is not a file", p.display()))
                };
            }
        }
        let mut tried = Vec::new();
        if let Some(p) = &self.path {
            if p.is_file() {
                return Ok(p.clone());
            }
            tried.push(format!("{} does not exist", p.display()));
        }
        if let Some(pkg) = &self.python_package {
            match find_in_site_packages(pkg) {
                Some(p) => return Ok(p),
                None => tried.push(format!(
                    "no `.so` of python package `{pkg}` in site-packages"
                )),
            }
        }
        if let Some(f) = &self.cache_file {
            if let Some(p) = cache_dirs().iter().map(|d| d.join(f)).find(|p| p.is_file()) {
                return Ok(p);
            }
            tried.push(format!("{f} is not in the plugin cache"));
        }
        if let Some(var) = &self.env {
            tried.push(format!("{var} is not set"));
        }
        Err(format!(
            "the pjrt plugin was not found: {}",
            tried.join("; ")
        ))
    }
}

/// The site-packages directories this machine's pythons use.
fn site_packages() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        roots.push(Path::new(&venv).join("lib"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        roots.push(Path::new(&home).join(".local/lib"));
    }
    roots.extend([PathBuf::from("/usr/local/lib"), PathBuf::from("/usr/lib")]);
    let mut out = Vec::new();
    for root in roots {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path())
            .collect();
        pythons.sort();
        for p in pythons {
            for sub in ["site-packages", "dist-packages"] {
                out.push(p.join(sub));
            }
        }
    }
    out
}

/// The first `.so` (by name) in the package directory `pkg` (dots are
/// directories) of some site-packages.
fn find_in_site_packages(pkg: &str) -> Option<PathBuf> {
    let rel: PathBuf = pkg.split('.').collect();
    for sp in site_packages() {
        let dir = sp.join(&rel);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut sos: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "so"))
            .collect();
        sos.sort();
        if let Some(p) = sos.into_iter().next() {
            return Some(p);
        }
    }
    None
}

/// The plugin cache directories: `$XLA_PLUGIN_CACHE`, `.cache/xla-plugin` in
/// the current directory or an ancestor, then in this workspace.
pub(crate) fn cache_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(c) = std::env::var_os("XLA_PLUGIN_CACHE") {
        dirs.push(PathBuf::from(c));
    }
    if let Ok(cwd) = std::env::current_dir() {
        dirs.extend(cwd.ancestors().map(|a| a.join(".cache/xla-plugin")));
    }
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cache/xla-plugin"));
    dirs
}

#[cfg(test)]
mod tests;
