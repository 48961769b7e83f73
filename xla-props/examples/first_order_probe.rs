//! Prints, per output of a module, how wide the first-order bound is on
//! the default generated inputs under a backend's declared numerics (a
//! diagnostic for where the carried bound is unbounded or loose).
//!
//! ```text
//! cargo run --release -p xla-props --example first_order_probe -- MODULE.hlo [BACKEND]
//! ```

use xla_props::inputs::{generate_inputs, Distribution};

fn main() {
    let mut a = std::env::args().skip(1);
    let (Some(file), backend) = (a.next(), a.next()) else {
        eprintln!("usage: first_order_probe MODULE.hlo [BACKEND]");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{file}: {e}");
            std::process::exit(2);
        }
    };
    let module = match xla_props::hlo::parse_module(&text) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{file}: {e}");
            std::process::exit(2);
        }
    };
    let allow = match backend.as_deref() {
        None => xla_props::reference::Allowances::default(),
        Some(b) => match xla_props::backend::create(b) {
            Ok(b) => b.numerics().allowances(false),
            Err(e) => {
                eprintln!("{b}: {e}");
                std::process::exit(2);
            }
        },
    };
    let inputs = match generate_inputs(&module, Distribution::Uniform, 0) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("{file}: {e}");
            std::process::exit(2);
        }
    };
    let fo = match xla_props::reference::FirstOrder::of(&module, &inputs.args, &allow) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{file}: {e}");
            std::process::exit(1);
        }
    };
    let mut unbounded = 0;
    for (k, (v, r)) in fo.values.iter().zip(&fo.radii).enumerate() {
        let n = r.len();
        let inf = r.iter().filter(|x| !x.is_finite()).count();
        unbounded += inf;
        let max_r = r
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .fold(0.0, f64::max);
        let max_v = (0..v.element_count())
            .map(|i| v.get_f64(i).abs())
            .fold(0.0, f64::max);
        println!("output {k}: {n} elements, {inf} unbounded, widest finite radius {max_r:.3e}, largest |value| {max_v:.3e}");
    }
    println!("{file}: {unbounded} unbounded elements");
}
