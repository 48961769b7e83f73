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
            "{:width$}  {status}\n{:width$}  {}\n",
            b.name, "", b.description
        ));
    }
    out
}

pub(super) fn run_backends() -> Result<u8, CliError> {
    print!("{}", backends_listing());
    Ok(0)
}
