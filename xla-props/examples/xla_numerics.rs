//! Measures what a compiler (XLA CPU, IREE) really does with f16/bf16/f32
//! transcendentals and subnormals, for `docs/numerics.md` (sections
//! "xla-cpu" and "iree-cpu").
//!
//! ```sh
//! scripts/fetch-xla-plugin.sh && cargo build --release -p xla-props --bin xla-props --example xla_numerics
//! ./target/release/examples/xla_numerics ../shared/oracle/f16 [xla-cpu|xla-cpu-0.81|iree-cpu|BACKEND]
//! ```
//!
//! f16: every one of the 65536 inputs against the correctly rounded oracle.
//! bf16: every input against f64 `std` functions rounded once to bf16 (the
//! f64 functions are faithful, so a reported 1-ulp difference can be a tie
//! case of the f64 reference; 2+ ulp are XLA's).
//! f64: every (2^44 + 7)-th bit pattern (1,048,575 inputs, all exponents and
//! signs) against the reference's own f64 functions (`reference::evaluate`
//! of the same module: the platform libm, faithful, so 1 ulp can be the
//! reference's; 2+ ulp are XLA's).
//!
//! `XLA_NUMERICS_TYPES=f64` (a comma list of f16, bf16, f32, f64) measures
//! only those types; the default is f16, bf16 and f32.

mod common;

use xla_props::backend::Backend;
use xla_props::hlo::{ArrayShape, ElementType, Module, ModuleBuilder, Opcode, Shape};
use xla_props::literal::{round_to_type, Literal};

const OPS: &[(&str, Opcode)] = &[
    ("exponential", Opcode::Exponential),
    ("exponential-minus-one", Opcode::ExponentialMinusOne),
    ("log", Opcode::Log),
    ("log-plus-one", Opcode::LogPlusOne),
    ("logistic", Opcode::Logistic),
    ("sine", Opcode::Sine),
    ("cosine", Opcode::Cosine),
    ("tan", Opcode::Tan),
    ("tanh", Opcode::Tanh),
    ("sqrt", Opcode::Sqrt),
    ("rsqrt", Opcode::Rsqrt),
    ("cbrt", Opcode::Cbrt),
    ("erf", Opcode::Erf),
];

fn unary_module(op: Opcode, t: ElementType, n: i64) -> Module {
    ModuleBuilder::new("m")
        .build("main", |b| {
            let x = b.parameter(Shape::array(t, vec![n]))?;
            b.unary(op, x)
        })
        .expect("a unary float op on a float array")
}

/// Position of a float of `t` on the number line (sign-magnitude -> ordered).
fn ordinal(bits: u64, t: ElementType) -> i64 {
    let sign = 1u64 << (t.bit_width() - 1);
    let mag = (bits & (sign - 1)) as i64;
    if bits & sign != 0 {
        -mag
    } else {
        mag
    }
}

fn is_nan16(bits: u64, t: ElementType) -> bool {
    let fmt = t.float_format().unwrap_or_else(|| unreachable!());
    let exp = (bits >> fmt.mantissa_bits) & ((1 << fmt.exponent_bits) - 1);
    let mant = bits & ((1 << fmt.mantissa_bits) - 1);
    exp == (1 << fmt.exponent_bits) - 1 && mant != 0
}

fn is_subnormal(bits: u64, t: ElementType) -> bool {
    let fmt = t.float_format().unwrap_or_else(|| unreachable!());
    let exp = (bits >> fmt.mantissa_bits) & ((1 << fmt.exponent_bits) - 1);
    let mant = bits & ((1 << fmt.mantissa_bits) - 1);
    exp == 0 && mant != 0
}

struct Tally {
    exact: usize,
    one_ulp: usize,
    max_ulp: i64,
    worst: Vec<(u64, u64, u64)>,
    nan_mismatch: usize,
    /// Differences where the input or the reference result is subnormal.
    subnormal_diffs: usize,
}

/// Compares `got` with `want` for `inputs`; cases with a subnormal input or
/// reference result are counted apart (XLA CPU flushes those, see below).
fn tally(t: ElementType, inputs: &[u64], got: &[u64], want: &[u64]) -> Tally {
    let mut s = Tally {
        exact: 0,
        one_ulp: 0,
        max_ulp: 0,
        worst: Vec::new(),
        nan_mismatch: 0,
        subnormal_diffs: 0,
    };
    for ((&x, &g), &w) in inputs.iter().zip(got).zip(want) {
        let (gn, wn) = (is_nan16(g, t), is_nan16(w, t));
        if gn && wn {
            s.exact += 1;
            continue;
        }
        let d = if gn || wn {
            i64::MAX
        } else {
            (ordinal(g, t) - ordinal(w, t)).abs()
        };
        if d == 0 {
            s.exact += 1;
            continue;
        }
        if is_subnormal(x, t) || is_subnormal(w, t) {
            s.subnormal_diffs += 1;
            continue;
        }
        if gn || wn {
            s.nan_mismatch += 1;
            if s.worst.len() < 3 {
                s.worst.push((x, g, w));
            }
            continue;
        }
        if d == 1 {
            s.one_ulp += 1;
        }
        if d > s.max_ulp {
            s.max_ulp = d;
            s.worst
                .retain(|&(_, gg, ww)| is_nan16(gg, t) != is_nan16(ww, t));
        }
        if d == s.max_ulp && d > 1 && s.worst.len() < 3 {
            s.worst.push((x, g, w));
        }
    }
    s
}

fn f64_reference(op: Opcode, x: f64) -> Option<f64> {
    Some(match op {
        Opcode::Exponential => x.exp(),
        Opcode::ExponentialMinusOne => x.exp_m1(),
        Opcode::Log => x.ln(),
        Opcode::LogPlusOne => x.ln_1p(),
        Opcode::Logistic => 1.0 / (1.0 + (-x).exp()),
        Opcode::Sine => x.sin(),
        Opcode::Cosine => x.cos(),
        Opcode::Tan => x.tan(),
        Opcode::Tanh => x.tanh(),
        Opcode::Sqrt => x.sqrt(),
        Opcode::Rsqrt => 1.0 / x.sqrt(),
        Opcode::Cbrt => x.cbrt(),
        Opcode::Erf => erf(x),
        _ => return None,
    })
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let oracle = common::first_path(&args, "../shared/oracle/f16");
    let name = args.get(1).map(String::as_str).unwrap_or("xla-cpu");
    let b = common::backend_or_exit("xla_numerics", name);
    let b = b.as_ref();
    println!(
        "backend: {name} ({})\n",
        b.version().unwrap_or_else(|| "no version".into())
    );
    let types: Vec<ElementType> = match std::env::var("XLA_NUMERICS_TYPES") {
        Ok(list) => list
            .split(',')
            .filter_map(|t| t.trim().parse().ok())
            .collect(),
        Err(_) => vec![ElementType::F16, ElementType::Bf16, ElementType::F32],
    };
    for t in types {
        // 16-bit types: every input. f32: every 4099th bit pattern (1,047,812
        // inputs). f64: every (2^44 + 7)-th (1,048,575).
        let all: Vec<u64> = match t {
            ElementType::F32 => (0..(1u64 << 32)).step_by(4099).collect(),
            ElementType::F64 => (0..u64::MAX).step_by((1usize << 44) + 7).collect(),
            _ => (0..65536u64).collect(),
        };
        let n = all.len();
        let shape = ArrayShape::new(t, vec![n as i64]);
        let input = Literal::from_bits(&shape, &all).unwrap_or_else(|e| panic!("{e}"));
        println!("### {t}: {n} inputs\n");
        println!("| op | exact | 1 ulp | max ulp | NaN-class mismatches | differences at subnormal input or result | worst (input -> xla, reference) |");
        println!("| --- | --- | --- | --- | --- | --- | --- |");
        for &(name, op) in OPS {
            let want: Vec<u64> = if t == ElementType::F16 {
                match std::fs::read(oracle.join(format!("{name}.bin"))) {
                    Ok(bytes) => bytes
                        .chunks_exact(2)
                        .map(|c| u16::from_le_bytes([c[0], c[1]]) as u64)
                        .collect(),
                    Err(e) => {
                        eprintln!("skipping {name}: {e}");
                        continue;
                    }
                }
            } else if t == ElementType::F64 {
                match xla_props::reference::evaluate(
                    &unary_module(op, t, n as i64),
                    std::slice::from_ref(&input),
                ) {
                    Ok(out) => out[0].to_bits_vec(),
                    Err(e) => {
                        println!("| {name} | reference error: {e} | | | | | |");
                        continue;
                    }
                }
            } else {
                let Some(_) = f64_reference(op, 1.0) else {
                    continue;
                };
                (0..n)
                    .map(|i| {
                        let x = input.get_f64(i);
                        let y = f64_reference(op, x).unwrap_or(f64::NAN);
                        let r = Literal::scalar(t, round_to_type(y, t));
                        r.get_bits(0)
                    })
                    .collect()
            };
            let got = match b
                .compile(&unary_module(op, t, n as i64))
                .and_then(|e| e.execute(std::slice::from_ref(&input)))
            {
                Ok(out) => out[0].to_bits_vec(),
                Err(e) => {
                    println!("| {name} | error: {e} | | | | | |");
                    continue;
                }
            };
            let s = tally(t, &all, &got, &want);
            let worst: Vec<String> = s
                .worst
                .iter()
                .map(|&(x, g, w)| format!("0x{x:04x} -> 0x{g:04x}, 0x{w:04x}"))
                .collect();
            println!(
                "| {name} | {} | {} | {} | {} | {} | {} |",
                s.exact,
                s.one_ulp,
                s.max_ulp,
                s.nan_mismatch,
                s.subnormal_diffs,
                worst.join("; ")
            );
        }
        println!();
    }
    subnormals(b);
    cbrt_subnormals(b);
    std::process::ExitCode::SUCCESS
}

/// Does XLA CPU flush subnormal inputs or outputs to zero?
fn subnormals(b: &dyn Backend) {
    println!("### subnormals\n");
    for t in [
        ElementType::F32,
        ElementType::F64,
        ElementType::Bf16,
        ElementType::F16,
    ] {
        let fmt = t.float_format().unwrap_or_else(|| unreachable!());
        let tiny = fmt.min_subnormal();
        let shape = ArrayShape::new(t, vec![3]);
        // x * 1 keeps a subnormal input; min_normal * 0.5 makes a subnormal output.
        let xs = Literal::from_f64s(&shape, &[tiny, 3.0 * tiny, fmt.min_normal()])
            .unwrap_or_else(|e| panic!("{e}"));
        let ones = Literal::from_f64s(&shape, &[1.0, 1.0, 0.5]).unwrap_or_else(|e| panic!("{e}"));
        let m = ModuleBuilder::new("m")
            .build("main", |mb| {
                let a = mb.parameter(Shape::array(t, vec![3]))?;
                let c = mb.parameter(Shape::array(t, vec![3]))?;
                mb.binary(Opcode::Multiply, a, c)
            })
            .expect("a multiply of two float arrays");
        match b.compile(&m).and_then(|e| e.execute(&[xs, ones])) {
            Ok(out) => println!(
                "- {t}: [min_subnormal, 3*min_subnormal] * 1 = {:?}; min_normal * 0.5 = {:e} (exact: {:e})",
                &out[0].to_f64_vec()[..2],
                out[0].get_f64(2),
                fmt.min_normal() * 0.5
            ),
            Err(e) => println!("- {t}: error {e}"),
        }
    }
}

fn unary_run(b: &dyn Backend, op: Opcode, t: ElementType, xs: &[f64]) -> Result<Vec<f64>, String> {
    let shape = ArrayShape::new(t, vec![xs.len() as i64]);
    let input = Literal::from_f64s(&shape, xs).map_err(|e| e.to_string())?;
    b.compile(&unary_module(op, t, xs.len() as i64))
        .and_then(|e| e.execute(&[input]))
        .map(|out| out[0].to_f64_vec())
        .map_err(|e| e.to_string())
}

/// cbrt of subnormal inputs: flushing (DAZ) would give +-0.
fn cbrt_subnormals(b: &dyn Backend) {
    println!("\n### cbrt of subnormal inputs\n");
    for t in [ElementType::F32, ElementType::F64] {
        let fmt = t.float_format().unwrap_or_else(|| unreachable!());
        let xs = [
            fmt.min_subnormal(),
            fmt.min_normal() / 2.0,
            fmt.min_normal() - fmt.min_subnormal(),
            -fmt.min_normal() / 2.0,
            fmt.min_normal(),
        ];
        match unary_run(b, Opcode::Cbrt, t, &xs) {
            Ok(ys) => {
                for (x, y) in xs.iter().zip(ys) {
                    println!("- {t} cbrt({x:e}) = {y:e} (exact {:e})", x.cbrt());
                }
            }
            Err(e) => println!("- {t}: error {e}"),
        }
    }
}

/// erf in f64, accurate to ~1e-13 relative: a Taylor series below 2.5, the
/// erfc continued fraction above (std has no erf).
fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let r = if a < 2.5 {
        let (mut term, mut sum, x2) = (a, a, a * a);
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -x2 / n;
            sum += term / (2.0 * n + 1.0);
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else if a.is_infinite() {
        1.0
    } else {
        // erfc(a) = exp(-a^2)/sqrt(pi) * 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + 2/(a + ...)))))
        let mut f = a;
        for k in (1..200).rev() {
            f = a + (k as f64 / 2.0) / f;
        }
        1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / f
    };
    r.copysign(x)
}
