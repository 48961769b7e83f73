//! Reference and interpreter throughput: `cargo bench -p xla-props --bench evaluators`.
//!
//! Prints the median wall time of each workload on each backend over several
//! runs (plain `std::time`, no statistics crate): elementwise f32 add over
//! 2^20 elements, exp over every f16 bit pattern, and a 256x256 f32 dot.
//! Compilation happens once, outside the timed part.

use std::time::{Duration, Instant};

use xla_props::backend::create;
use xla_props::hlo::{parse_module, ArrayShape, ElementType};
use xla_props::literal::Literal;

fn median(mut f: impl FnMut(), runs: usize) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn bench(name: &str, hlo: &str, args: &[Literal]) {
    let module = parse_module(hlo).expect("benchmark module parses");
    for backend in ["reference", "interpreter"] {
        let exe = create(backend)
            .expect("built-in backend")
            .compile(&module)
            .expect("benchmark module compiles");
        exe.execute(args).expect("benchmark module runs");
        let t = median(
            || {
                exe.execute(args).expect("runs");
            },
            9,
        );
        println!(
            "{name:<28} {backend:<12} {:>10.3} ms",
            t.as_secs_f64() * 1e3
        );
    }
}

fn main() {
    let n = 1usize << 20;
    let s = ArrayShape::new(ElementType::F32, vec![n as i64]);
    let x = Literal::from_f64s(&s, &(0..n).map(|i| i as f64 * 0.37).collect::<Vec<_>>()).unwrap();
    let y = Literal::from_f64s(
        &s,
        &(0..n).map(|i| 1.0 / (i + 1) as f64).collect::<Vec<_>>(),
    )
    .unwrap();
    bench(
        "add f32[1048576]",
        "HloModule add\nENTRY e {\n  a = f32[1048576] parameter(0)\n  b = f32[1048576] parameter(1)\n  ROOT c = f32[1048576] add(a, b)\n}\n",
        &[x, y],
    );
    let h = ArrayShape::new(ElementType::F16, vec![65536]);
    let all = Literal::from_bits(&h, &(0..65536).collect::<Vec<_>>()).unwrap();
    bench(
        "exponential f16[65536]",
        "HloModule exp\nENTRY e {\n  a = f16[65536] parameter(0)\n  ROOT c = f16[65536] exponential(a)\n}\n",
        &[all],
    );
    let d = ArrayShape::new(ElementType::F32, vec![256, 256]);
    let m = Literal::from_f64s(
        &d,
        &(0..65536)
            .map(|i| ((i * 7) % 23) as f64 * 0.125 - 1.0)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    bench(
        "dot f32[256,256]x[256,256]",
        "HloModule dot\nENTRY e {\n  a = f32[256,256] parameter(0)\n  b = f32[256,256] parameter(1)\n  ROOT c = f32[256,256] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
        &[m.clone(), m],
    );
}
