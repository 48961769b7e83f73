//! The detection matrix: every mutation of the catalogue against the built-in
//! suite (first detection, which property, cases and seconds until then), and
//! the false alarms of every benign variant.
//!
//! `cargo run --release --example detection`

use xla_props::backend::mutant::Mutation;
use xla_props::detection::{detect, DetectionOptions};

fn main() {
    // the ops a mutation touches first, then the whole suite
    let options = DetectionOptions {
        relevant_only: false,
        ..DetectionOptions::default()
    };
    println!(
        "| mutation | category | detected | caught by | cases until | seconds until | first case |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut missed = 0;
    for m in Mutation::bugs() {
        let d = detect(m, &options);
        let (yes, by, case) = match &d.first {
            Some(c) => ("yes", c.property, c.case.as_str()),
            None => {
                missed += 1;
                ("**no**", "-", "-")
            }
        };
        println!(
            "| `{}` | {} | {yes} | {by} | {} | {:.2} | `{case}` |",
            m.name(),
            m.category().name(),
            d.cases,
            d.seconds
        );
    }
    println!();
    println!("| benign variant | false alarms | cases run | seconds | first false alarm |");
    println!("| --- | --- | --- | --- | --- |");
    let mut alarms = 0;
    for m in Mutation::benign() {
        let d = detect(m, &options);
        alarms += d.false_alarms;
        let first = d
            .first
            .as_ref()
            .map_or("-".to_string(), |c| format!("`{}`", c.case));
        println!(
            "| `{}` | {} | {} | {:.2} | {first} |",
            m.name(),
            d.false_alarms,
            d.cases,
            d.seconds
        );
    }
    println!();
    println!(
        "{} of {} mutations detected; {alarms} false alarms",
        Mutation::bugs().count() - missed,
        Mutation::bugs().count()
    );
}
