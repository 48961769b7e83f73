//! The flags the runner adds to libtest's, with their environment twins.
//! They are stripped before the rest is handed to libtest-mimic.

use std::path::PathBuf;

use crate::hlo::{ElementType, Opcode};

/// A shard: this process runs the cases whose name hash is `index` modulo `total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 0-based shard index.
    pub index: u64,
    /// Number of shards.
    pub total: u64,
}

impl Shard {
    /// Parses `K/N` with 1-based K (as `--shard 1/4` .. `--shard 4/4`).
    ///
    /// ```
    /// use xla_props::runner::Shard;
    /// assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 1, total: 4 });
    /// assert!(Shard::parse("0/4").is_err());
    /// assert!(Shard::parse("5/4").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Shard, ArgError> {
        let bad = || {
            ArgError(format!(
                "invalid shard `{s}`: expected K/N with 1 <= K <= N"
            ))
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (u64, u64) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard {
            index: k - 1,
            total: n,
        })
    }
    /// True when the name belongs to this shard (a stable hash of the name).
    pub fn contains(&self, name: &str) -> bool {
        crate::property::Fnv::hash_str(name) % self.total == self.index
    }

    /// The shard the environment asks for, in this order: `XLA_PROPS_SHARD`
    /// (`K/N`); Bazel's `TEST_SHARD_INDEX` (0-based) with `TEST_TOTAL_SHARDS`;
    /// a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` (0-based) with
    /// `XLA_PROPS_SHARDS` (the job's `completions`). An Indexed Job without
    /// `XLA_PROPS_SHARDS` is not sharded; `XLA_PROPS_SHARDS` without an index
    /// is an error.
    ///
    /// ```
    /// use xla_props::runner::Shard;
    /// let env = |k: &str| match k {
    ///     "JOB_COMPLETION_INDEX" => Some("2".to_string()),
    ///     "XLA_PROPS_SHARDS" => Some("4".to_string()),
    ///     _ => None,
    /// };
    /// assert_eq!(Shard::from_env(&env).unwrap(), Some(Shard { index: 2, total: 4 }));
    /// assert_eq!(Shard::from_env(&|_: &str| None).unwrap(), None);
    /// ```
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Shard>, ArgError> {
        let get = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        if let Some(v) = get("XLA_PROPS_SHARD") {
            return Shard::parse(&v)
                .map(Some)
                .map_err(|e| ArgError(format!("XLA_PROPS_SHARD: {}", e.0)));
        }
        let zero_based = |var: &str, i: &str, n: &str| {
            let i: u64 = i
                .trim()
                .parse()
                .map_err(|_| ArgError(format!("{var}: invalid index `{i}`")))?;
            Shard::parse(&format!("{}/{}", i + 1, n.trim()))
                .map(Some)
                .map_err(|e| ArgError(format!("{var}={i} of {n}: {}", e.0)))
        };
        if let (Some(i), Some(n)) = (get("TEST_SHARD_INDEX"), get("TEST_TOTAL_SHARDS")) {
            return zero_based("TEST_SHARD_INDEX", &i, &n);
        }
        match (get("JOB_COMPLETION_INDEX"), get("XLA_PROPS_SHARDS")) {
            (Some(i), Some(n)) => zero_based("JOB_COMPLETION_INDEX", &i, &n),
            (None, Some(n)) => Err(ArgError(format!(
                "XLA_PROPS_SHARDS={n} is set but JOB_COMPLETION_INDEX is not (a Kubernetes \
                 Indexed Job sets it; elsewhere use --shard K/N or XLA_PROPS_SHARD=K/N)"
            ))),
            _ => Ok(None),
        }
    }
}

impl std::fmt::Display for Shard {
    /// `K/N`, 1-based, as `--shard` takes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index + 1, self.total)
    }
}

/// A bad runner flag or environment value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ArgError(pub String);

/// The runner's own settings (everything that is not a libtest flag).
#[derive(Clone, Debug, Default)]
pub struct RunnerArgs {
    /// `--op` / `XLA_PROPS_OPS`.
    pub ops: Vec<Opcode>,
    /// `--dtype` / `XLA_PROPS_DTYPES`.
    pub dtypes: Vec<ElementType>,
    /// `--backend` / `XLA_PROPS_BACKENDS`.
    pub backends: Vec<String>,
    /// `--shard K/N` / `XLA_PROPS_SHARD` / Bazel's `TEST_SHARD_INDEX` + `TEST_TOTAL_SHARDS`
    /// / a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` + `XLA_PROPS_SHARDS` ([`Shard::from_env`]).
    pub shard: Option<Shard>,
    /// Bazel's `TEST_SHARD_STATUS_FILE`, touched when sharding is understood.
    pub shard_status_file: Option<PathBuf>,
    /// `--seed` / `XLA_PROPS_SEED`.
    pub seed: u64,
    /// `--junit PATH` / `XLA_PROPS_JUNIT` / Bazel's `XML_OUTPUT_FILE`.
    pub junit: Option<PathBuf>,
    /// `--json PATH` / `XLA_PROPS_JSON`.
    pub json: Option<PathBuf>,
    /// `--summary`: print the case space composition and exit.
    pub summary: bool,
    /// Bazel's `TESTBRIDGE_TEST_ONLY`, used as the filter when none is given.
    pub test_only: Option<String>,
}

const VALUE_FLAGS: &[&str] = &[
    "--op",
    "--dtype",
    "--backend",
    "--shard",
    "--seed",
    "--junit",
    "--json",
];

fn list(s: &str) -> impl Iterator<Item = &str> {
    s.split(',').map(str::trim).filter(|x| !x.is_empty())
}

/// The names of a comma list, each parsed; an unknown one is named as a
/// `what` of `flag`.
fn parsed<T: std::str::FromStr>(value: &str, what: &str, flag: &str) -> Result<Vec<T>, ArgError> {
    list(value)
        .map(|name| {
            name.parse::<T>()
                .map_err(|_| ArgError(format!("unknown {what} `{name}` in {flag}")))
        })
        .collect()
}

impl RunnerArgs {
    fn apply(&mut self, flag: &str, value: &str) -> Result<(), ArgError> {
        match flag {
            "--op" => self.ops.extend(parsed::<Opcode>(value, "op", flag)?),
            "--dtype" => self
                .dtypes
                .extend(parsed::<ElementType>(value, "dtype", flag)?),
            "--backend" => self.backends.extend(list(value).map(str::to_string)),
            "--shard" => self.shard = Some(Shard::parse(value)?),
            "--seed" => {
                self.seed = value.parse().map_err(|_| {
                    ArgError(format!(
                        "invalid seed `{value}`: expected an unsigned integer"
                    ))
                })?
            }
            "--junit" => self.junit = Some(PathBuf::from(value)),
            "--json" => self.json = Some(PathBuf::from(value)),
            _ => {}
        }
        Ok(())
    }

    /// Splits the command line into the runner's flags and libtest's, reading
    /// environment twins through `env` (flags win over the environment).
    ///
    /// ```
    /// use xla_props::runner::RunnerArgs;
    /// let args: Vec<String> = ["prog", "--op", "add,subtract", "--quiet", "--shard=2/3", "add"]
    ///     .iter().map(|s| s.to_string()).collect();
    /// let (ours, rest) = RunnerArgs::split(args, |_| None).unwrap();
    /// assert_eq!(ours.ops.len(), 2);
    /// assert_eq!(ours.shard.unwrap().index, 1);
    /// assert_eq!(rest, vec!["prog", "--quiet", "add"]);
    /// ```
    pub fn split(
        args: Vec<String>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<(RunnerArgs, Vec<String>), ArgError> {
        let mut ours = RunnerArgs::default();
        let env_twins = [
            ("XLA_PROPS_OPS", "--op"),
            ("XLA_PROPS_DTYPES", "--dtype"),
            ("XLA_PROPS_BACKENDS", "--backend"),
            ("XLA_PROPS_SEED", "--seed"),
            ("XML_OUTPUT_FILE", "--junit"),
            ("XLA_PROPS_JUNIT", "--junit"),
            ("XLA_PROPS_JSON", "--json"),
        ];
        let mut from_flags = RunnerArgs::default();
        let mut rest = Vec::new();
        // the value flags given, with their values, in order
        let mut given: Vec<(&'static str, String)> = Vec::new();
        let mut it = args.into_iter();
        if let Some(prog) = it.next() {
            rest.push(prog);
        }
        while let Some(arg) = it.next() {
            if arg == "--summary" {
                from_flags.summary = true;
                continue;
            }
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
                _ => (arg.clone(), None),
            };
            if let Some(&known) = VALUE_FLAGS.iter().find(|f| **f == flag) {
                let value = match inline {
                    Some(v) => v,
                    None => it
                        .next()
                        .ok_or_else(|| ArgError(format!("{known} needs a value")))?,
                };
                from_flags.apply(known, &value)?;
                given.push((known, value));
            } else {
                rest.push(arg);
            }
        }
        let is_given = |flag: &str| given.iter().any(|(g, _)| *g == flag);
        for (var, flag) in env_twins {
            if is_given(flag) {
                continue;
            }
            if let Some(v) = env(var).filter(|v| !v.is_empty()) {
                ours.apply(flag, &v)
                    .map_err(|e| ArgError(format!("{var}: {}", e.0)))?;
            }
        }
        if !is_given("--shard") {
            ours.shard = Shard::from_env(&env)?;
        }
        ours.shard_status_file = env("TEST_SHARD_STATUS_FILE").map(PathBuf::from);
        ours.test_only = env("TESTBRIDGE_TEST_ONLY").filter(|s| !s.is_empty());
        // flags override the environment (whose twins of given flags were
        // left unread): applied over it, in order, as checked above
        for (flag, value) in &given {
            ours.apply(flag, value)?;
        }
        ours.summary = from_flags.summary;
        Ok((ours, rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| vars.iter().find(|v| v.0 == k).map(|v| v.1.to_string())
    }

    #[test]
    fn an_indexed_job_shards_by_its_completion_index() {
        let job = [("JOB_COMPLETION_INDEX", "3"), ("XLA_PROPS_SHARDS", "4")];
        let shard = Shard::from_env(&env(&job)).unwrap().unwrap();
        assert_eq!(shard, Shard { index: 3, total: 4 });
        assert_eq!(shard.to_string(), "4/4");
        // an Indexed Job that does not say how many shards is not sharded
        let alone = [("JOB_COMPLETION_INDEX", "3")];
        assert_eq!(Shard::from_env(&env(&alone)).unwrap(), None);
        let no_index = [("XLA_PROPS_SHARDS", "4")];
        let e = Shard::from_env(&env(&no_index)).unwrap_err().0;
        assert!(e.contains("JOB_COMPLETION_INDEX is not"), "{e}");
        let past = [("JOB_COMPLETION_INDEX", "4"), ("XLA_PROPS_SHARDS", "4")];
        let e = Shard::from_env(&env(&past)).unwrap_err().0;
        assert!(e.starts_with("JOB_COMPLETION_INDEX=4 of 4"), "{e}");
        // XLA_PROPS_SHARD, then Bazel's variables, come first; a flag beats them all
        let both = [("XLA_PROPS_SHARD", "1/2"), ("JOB_COMPLETION_INDEX", "3")];
        let both = [both.as_slice(), &[("XLA_PROPS_SHARDS", "4")]].concat();
        let shard = Shard::from_env(&env(&both)).unwrap().unwrap();
        assert_eq!(shard, Shard { index: 0, total: 2 });
        let args = vec!["prog".to_string(), "--shard".into(), "2/3".into()];
        let (ours, _) = RunnerArgs::split(args, env(&both)).unwrap();
        assert_eq!(ours.shard, Some(Shard { index: 1, total: 3 }));
        let (ours, _) = RunnerArgs::split(vec!["prog".into()], env(&job)).unwrap();
        assert_eq!(ours.shard, Some(Shard { index: 3, total: 4 }));
    }
}
