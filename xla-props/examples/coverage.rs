//! Prints `docs/coverage.md`: every op's attribute classes with their reasons
//! and case counts per dtype family.
//!
//! `cargo run -p xla-props --example coverage > docs/coverage.md`

fn main() {
    print!("{}", xla_props::property::coverage_markdown());
}
