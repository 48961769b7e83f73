//! `xla-props backends`: the backends this build knows, and whether each is available.

use super::CliError;
use crate::backend::{create, known_backends, Availability};

/// The listing, one backend per line: name, availability, description.
pub fn backends_listing() -> String {
    listing(false)
}

/// The listing; `verbose` adds each backend's revision (recorded with its
/// pin) and its version (what a plugin says of itself, its file and sha256;
/// this loads each available plugin in a worker process).
pub fn listing(verbose: bool) -> String {
    let infos = known_backends();
    let width = infos.iter().map(|b| b.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for b in infos {
        let status = match &b.availability {
            Availability::Available => "available".to_string(),
            Availability::Unavailable(reason) => format!("unavailable: {reason}"),
        };
        out.push_str(&format!(
            "{:width$}  {status}\n{:width$}  {}\n{:width$}  from {}\n",
            b.name, "", b.description, "", b.source
        ));
        if !verbose {
            continue;
        }
        if let Some(r) = b.revision {
            out.push_str(&format!("{:width$}  xla revision: {r}\n", ""));
        }
        if b.availability == Availability::Available {
            let version = create(b.name)
                .map(|x| x.version().unwrap_or_else(|| "not reported".into()))
                .unwrap_or_else(|e| format!("unavailable: {e}"));
            out.push_str(&format!("{:width$}  version: {version}\n", ""));
        }
    }
    out
}

pub(super) fn run_backends(args: &super::BackendsArgs) -> Result<u8, CliError> {
    if let Some(e) = crate::backend::config_error() {
        return Err(CliError::input(e.to_string()));
    }
    print!("{}", listing(args.verbose));
    Ok(0)
}
