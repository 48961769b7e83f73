//! `xla-props backends`: the backends this build knows, and whether each is available.

use super::CliError;
use crate::backend::{known_backends, Availability};

/// The listing, one backend per line: name, availability, description.
pub fn backends_listing() -> String {
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
    }
    out
}

pub(super) fn run_backends() -> Result<u8, CliError> {
    if let Some(e) = crate::backend::config_error() {
        return Err(CliError::input(e.to_string()));
    }
    print!("{}", backends_listing());
    Ok(0)
}
