//! Measures a backend's complex functions (c64, c128) against the exact
//! reference, normwise: per element, `max(|Δre|, |Δim|) / (eps · |z|)` with
//! `z` the reference's value and `eps` the component type's epsilon (what a
//! normwise budget of `check::complex` allows), for `docs/numerics.md`
//! ("Complex functions on xla-cpu"). `abs` has a real result: its relative
//! error in units of `eps`.
//!
//! ```sh
//! cargo build --release -p xla-props --example xla_complex_numerics
//! $CARGO_TARGET_DIR/release/examples/xla_complex_numerics [xla-cpu|BACKEND] [N]
//! ```
//!
//! Three input sets per op and type, N points each (default 100000):
//! `harness` (each part uniform in [-64, 64], the harness corpus's inputs),
//! `wide` (each part ±2^e, e uniform in [-20, 20], mantissa random) and
//! `edge` (parts from 0, ±1, ±0.5, ±1e-6, ±2^20, ±pi, ±64 in every pair).
//! Elements where either side is not finite, or the reference is 0, are
//! counted apart (a class difference is never excused by a budget), and so
//! are results below `min_normal / eps` (their intermediates can be
//! subnormal, flushed by xla-cpu); a subnormal component returned as 0 is a
//! flushed output (legal), not an error.

mod common;

use xla_props::backend::Backend;
use xla_props::hlo::{ArrayShape, ElementType, InstrId, Instruction, Module, Opcode, Shape};
use xla_props::literal::{component_type, Literal};

const UNARY: &[Opcode] = &[
    Opcode::Abs,
    Opcode::Exponential,
    Opcode::ExponentialMinusOne,
    Opcode::Log,
    Opcode::LogPlusOne,
    Opcode::Sqrt,
    Opcode::Rsqrt,
    Opcode::Sine,
    Opcode::Cosine,
    Opcode::Tan,
    Opcode::Tanh,
    Opcode::Logistic,
    Opcode::Sign,
];

const BINARY: &[Opcode] = &[Opcode::Multiply, Opcode::Divide, Opcode::Power];

fn module(op: Opcode, t: ElementType, arity: usize, n: i64) -> Module {
    let s = Shape::array(t, vec![n]);
    let mut instructions = common::parameters(&s, arity);
    let ops = (0..arity as u32).map(InstrId).collect();
    // `abs` of a complex number is real: |z| in the component type
    let out = match (op, component_type(t)) {
        (Opcode::Abs, Some(c)) => Shape::array(c, vec![n]),
        _ => s,
    };
    instructions.push(Instruction::new("r", op, out, ops));
    common::one_computation("m", instructions)
}

/// xorshift64: reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn inputs(set: &str, n: usize, rng: &mut Rng) -> Vec<(f64, f64)> {
    let edges = [
        0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1e-6,
        -1e-6,
        1048576.0,
        -1048576.0,
        std::f64::consts::PI,
        -std::f64::consts::PI,
        64.0,
        -64.0,
    ];
    (0..n)
        .map(|i| match set {
            "harness" => (rng.unit() * 128.0 - 64.0, rng.unit() * 128.0 - 64.0),
            "wide" => {
                let mut part = || {
                    let e = (rng.unit() * 41.0).floor() - 20.0;
                    let s = if rng.next() & 1 == 0 { 1.0 } else { -1.0 };
                    s * (1.0 + rng.unit()) * 2f64.powf(e)
                };
                (part(), part())
            }
            _ => {
                let k = edges.len();
                (edges[i % k], edges[(i / k) % k])
            }
        })
        .collect()
}

/// The worst point: inputs x, y, then the backend's and the reference's values.
type Worst = ((f64, f64), (f64, f64), (f64, f64), (f64, f64));

#[derive(Default)]
struct Stat {
    finite: usize,
    max: f64,
    worst: Option<Worst>,
    class: usize,
    tiny: usize,
}

fn measure(
    b: &dyn Backend,
    op: Opcode,
    t: ElementType,
    xs: &[Vec<(f64, f64)>],
) -> Result<Stat, String> {
    let n = xs[0].len();
    let shape = ArrayShape::new(t, vec![n as i64]);
    let args: Vec<Literal> = xs
        .iter()
        .map(|v| Literal::from_complex(&shape, v).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let m = module(op, t, xs.len(), n as i64);
    let want = xla_props::reference::evaluate(&m, &args).map_err(|e| e.to_string())?;
    let got = b
        .compile(&m)
        .and_then(|e| e.execute(&args))
        .map_err(|e| e.to_string())?;
    let fmt = component_type(t)
        .and_then(|c| c.float_format())
        .ok_or("not a complex type")?;
    let (eps, min_normal) = (fmt.epsilon(), fmt.min_normal());
    let tiny = min_normal / eps;
    // a real result (`abs`) is a complex one with no imaginary part
    let values = |l: &Literal| {
        if l.dtype().is_complex() {
            l.to_complex_vec()
        } else {
            (0..l.element_count())
                .map(|i| (l.get_f64(i), 0.0))
                .collect()
        }
    };
    let (w, g) = (values(&want[0]), values(&got[0]));
    // the inputs as the type holds them
    let held: Vec<Vec<(f64, f64)>> = args.iter().map(Literal::to_complex_vec).collect();
    let mut st = Stat::default();
    for i in 0..n {
        let (w, g) = (w[i], g[i]);
        let m = w.0.hypot(w.1);
        let fin = |z: (f64, f64)| z.0.is_finite() && z.1.is_finite();
        if !fin(w) || !fin(g) || m == 0.0 {
            let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
            if !(same(w.0, g.0) && same(w.1, g.1)) {
                st.class += 1;
            }
            continue;
        }
        if m < tiny {
            // intermediates of so small a result can be subnormal (flushed)
            st.tiny += 1;
            continue;
        }
        st.finite += 1;
        // a subnormal component written as zero is a flushed output (legal)
        let err = |w: f64, g: f64| {
            if g == 0.0 && w.abs() < min_normal {
                0.0
            } else {
                (w - g).abs()
            }
        };
        let r = err(w.0, g.0).max(err(w.1, g.1)) / (eps * m);
        if r > st.max {
            st.max = r;
            let y = held.get(1).map_or((0.0, 0.0), |v| v[i]);
            st.worst = Some((held[0][i], y, g, w));
        }
    }
    Ok(st)
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().map(String::as_str).unwrap_or("xla-cpu");
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let b = common::backend_or_exit("xla_complex_numerics", name);
    let b = b.as_ref();
    println!("backend: {name}, {n} points per set\n");
    println!("| op | type | harness max | wide max | edge max | class differences + tiny results (h/w/e) | worst (x, y -> backend, reference) |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let ops = BINARY
        .iter()
        .map(|&o| (o, 2))
        .chain(UNARY.iter().map(|&o| (o, 1)));
    for (op, arity) in ops {
        for t in [ElementType::C64, ElementType::C128] {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
            let mut cells = Vec::new();
            let mut classes = Vec::new();
            let mut worst = (0.0, None);
            for set in ["harness", "wide", "edge"] {
                let xs: Vec<Vec<(f64, f64)>> =
                    (0..arity).map(|_| inputs(set, n, &mut rng)).collect();
                match measure(b, op, t, &xs) {
                    Ok(s) => {
                        cells.push(format!("{:.2}", s.max));
                        classes.push(format!("{}+{}", s.class, s.tiny));
                        if s.max > worst.0 {
                            worst = (s.max, s.worst);
                        }
                    }
                    Err(e) => {
                        cells.push(format!("error: {}", e.lines().next().unwrap_or("")));
                        classes.push("-".into());
                    }
                }
            }
            let w = worst.1.map_or(String::new(), |(x, y, g, r)| {
                format!("{x:?}, {y:?} -> {g:?}, {r:?}")
            });
            println!(
                "| {op} | {t} | {} | {} | {} | {} | {w} |",
                cells[0],
                cells[1],
                cells[2],
                classes.join("/")
            );
        }
    }
    std::process::ExitCode::SUCCESS
}
