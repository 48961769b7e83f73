//! Which XLA build a backend loads (`XlaPlugin`: where its plugin is found)
//! and what it promises (`Profile`: revision, numerics, known bugs, and the
//! environment its worker is started with).

use std::path::{Path, PathBuf};

use super::config::{builtin_backend, CreateOption, DeclaredBackend};
use super::numerics::{measured_xla_cpu_numerics, XLA_CPU_BUDGETS};
use crate::check::{KnownBug, Numerics};

/// Which pinned XLA build a backend loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XlaPlugin {
    /// `xla-cpu`: lammps-jax-pjrt-cpu 0.11.2, PJRT C API 0.115, StableHLO 1.20.
    Cpu,
    /// `xla-cpu-0.81`: xla-cpu-pjrt 0.0.1, PJRT C API 0.81, StableHLO 1.13.
    Cpu081,
    /// `xla-gpu`: jax's CUDA PJRT plugin (`jax-cuda12-pjrt`/`jax-cuda13-pjrt`),
    /// found in site-packages beside its CUDA libraries; needs an NVIDIA GPU.
    Gpu,
}

impl XlaPlugin {
    /// The backend name.
    pub fn backend_name(self) -> &'static str {
        match self {
            XlaPlugin::Cpu => "xla-cpu",
            XlaPlugin::Cpu081 => "xla-cpu-0.81",
            XlaPlugin::Gpu => "xla-gpu",
        }
    }
    /// The environment variable that overrides the plugin path.
    pub fn env_var(self) -> &'static str {
        match self {
            XlaPlugin::Cpu => "XLA_PJRT_PLUGIN",
            XlaPlugin::Cpu081 => "XLA_PJRT_PLUGIN_0_81",
            XlaPlugin::Gpu => "XLA_PJRT_PLUGIN_GPU",
        }
    }
    /// The file name `scripts/fetch-xla-plugin.sh` unpacks into the cache.
    pub fn cache_file(self) -> &'static str {
        match self {
            XlaPlugin::Cpu => "xla-cpu.so",
            XlaPlugin::Cpu081 => "xla-cpu-0.81.so",
            XlaPlugin::Gpu => "xla-gpu.so",
        }
    }
    /// The argument of `scripts/fetch-xla-plugin.sh` that fetches it.
    pub fn fetch_arg(self) -> &'static str {
        self.backend_name()
    }

    /// Finds the plugin: the environment variable, then the cache
    /// (`$XLA_PLUGIN_CACHE`, or `.cache/xla-plugin` in the current directory or
    /// an ancestor, or in this workspace).
    pub fn locate(self) -> Result<PathBuf, String> {
        if let Some(p) = std::env::var_os(self.env_var()) {
            let p = PathBuf::from(p);
            return if p.is_file() {
                Ok(p)
            } else {
                Err(format!("{}={} is not a file", self.env_var(), p.display()))
            };
        }
        if self == XlaPlugin::Gpu {
            return locate_cuda_plugin();
        }
        for d in &super::config::cache_dirs() {
            let f = d.join(self.cache_file());
            if f.is_file() {
                return Ok(f);
            }
        }
        Err(format!(
            "the {} pjrt plugin was not found: run `scripts/fetch-xla-plugin.sh {}` or set {}",
            self.backend_name(),
            self.fetch_arg(),
            self.env_var()
        ))
    }
}

/// What a backend promises and how its worker is started, beyond its plugin.
#[derive(Clone, Debug)]
pub(super) struct Profile {
    /// The XLA revision of the plugin, as recorded with its pin.
    pub(super) revision: Option<&'static str>,
    pub(super) numerics: Numerics,
    pub(super) known_bugs: &'static [KnownBug],
    /// Environment of the worker process (`XLA_FLAGS`, create options).
    pub(super) worker_env: Vec<(String, String)>,
}

impl Profile {
    /// A declared backend's profile.
    pub(super) fn declared(d: &DeclaredBackend) -> Profile {
        let mut worker_env = Vec::new();
        if !d.compile_options.xla_flags.is_empty() {
            worker_env.push((
                "XLA_FLAGS".to_string(),
                d.compile_options.xla_flags.join(" "),
            ));
        }
        let create_options = with_device_count(&d.create_options);
        if !create_options.is_empty() {
            let json = serde_json::to_string(&create_options).unwrap_or_default();
            worker_env.push((super::worker::CREATE_OPTIONS_ENV.to_string(), json));
        }
        Profile {
            revision: d.revision,
            numerics: d.numerics.clone(),
            known_bugs: d.known_bugs,
            worker_env,
        }
    }

    /// A pinned plugin's: its entry of the built-in file, else what XLA CPU
    /// was measured to do with no known bugs (xla-gpu).
    pub(super) fn pinned(plugin: XlaPlugin) -> Profile {
        match builtin_backend(plugin.backend_name()) {
            Some(d) => Profile::declared(&d),
            None => Profile {
                revision: None,
                numerics: measured_xla_cpu_numerics(XLA_CPU_BUDGETS),
                known_bugs: &[],
                worker_env: Vec::new(),
            },
        }
    }
}

/// The environment variable that sets the CPU plugins' device count.
const DEVICES_ENV: &str = "XLA_PROPS_XLA_DEVICES";

/// `options` with `cpu_device_count` set by [`DEVICES_ENV`] when it is a
/// positive number and the options name that option (a CPU plugin's).
fn with_device_count(
    options: &std::collections::BTreeMap<String, CreateOption>,
) -> std::collections::BTreeMap<String, CreateOption> {
    let mut options = options.clone();
    let n = std::env::var(DEVICES_ENV).ok();
    if let Some(n) = n
        .and_then(|n| n.trim().parse::<i64>().ok())
        .filter(|&n| n > 0)
    {
        if let Some(o) = options.get_mut("cpu_device_count") {
            *o = CreateOption::Int(n);
        }
    }
    options
}

/// Finds jax's CUDA plugin in the usual site-packages directories, if this
/// machine has an NVIDIA GPU.
fn locate_cuda_plugin() -> Result<PathBuf, String> {
    if !Path::new("/dev/nvidiactl").exists() {
        return Err("no nvidia gpu on this machine (no /dev/nvidiactl); set XLA_PJRT_PLUGIN_GPU to force a plugin".into());
    }
    let mut roots: Vec<PathBuf> = vec![PathBuf::from("/usr/lib"), PathBuf::from("/usr/local/lib")];
    if let Some(home) = std::env::var_os("HOME") {
        roots.push(Path::new(&home).join(".local/lib"));
    }
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        roots.push(Path::new(&venv).join("lib"));
    }
    for root in roots {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            if !name.to_string_lossy().starts_with("python3") {
                continue;
            }
            for sub in ["site-packages", "dist-packages"] {
                for cuda in ["xla_cuda13", "xla_cuda12"] {
                    let p = e
                        .path()
                        .join(sub)
                        .join("jax_plugins")
                        .join(cuda)
                        .join("xla_cuda_plugin.so");
                    if p.is_file() {
                        return Ok(p);
                    }
                }
            }
        }
    }
    Err("jax's cuda pjrt plugin (jax_plugins/xla_cuda1{2,3}/xla_cuda_plugin.so) was not found in site-packages; install jax-cuda12-pjrt or set XLA_PJRT_PLUGIN_GPU".into())
}
