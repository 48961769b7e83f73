//! Per-parameter sampling: the interval and distribution one parameter's
//! elements are drawn from, and how an interval is shrunk. A complex
//! parameter draws each element's real and imaginary parts one after the
//! other, each as a float of the component type (`f32` for `c64`, `f64` for
//! `c128`) from the same interval and distribution.

use super::distribution::{log_uniform, uniform, Distribution};
use super::interval::Interval;
use super::rng::SplitMix;
use crate::hlo::ElementType;
use crate::literal::Literal;

/// Per-parameter sampler state.
pub(super) struct Sampler {
    /// The type each drawn value has: the parameter's element type, or the
    /// component type of a complex parameter.
    pub dtype: ElementType,
    /// Whether the parameter is complex: each element is two draws, real
    /// part first (see [`Sampler::draw_complex`]).
    pub complex: bool,
    pub interval: Interval,
    pub distribution: Distribution,
    /// The values the duplicates distribution draws from.
    pub pool: Vec<f64>,
    /// The edge values the edge distributions draw from.
    pub edges: Vec<f64>,
    /// Whether it feeds an index operand (drawn out of range on purpose by
    /// the clamping distribution).
    pub index_param: bool,
}

impl Sampler {
    /// Draws from `to` from now on (a duplicates pool is redrawn inside it).
    pub fn narrow(&mut self, to: Interval, rng: &mut SplitMix) {
        self.interval = to;
        if !self.pool.is_empty() {
            let n = self.pool.len();
            self.pool = (0..n).map(|_| uniform(rng, to, self.dtype)).collect();
        }
    }

    /// One complex element: the real part, then the imaginary part, each a
    /// [`Sampler::draw`]. A parameter narrowed to a single value (a reduce's
    /// identity) is that real value: its imaginary part is 0.
    pub fn draw_complex(&self, rng: &mut SplitMix) -> (f64, f64) {
        let re = self.draw(rng);
        let im = if self.interval.lo == self.interval.hi {
            0.0
        } else {
            self.draw(rng)
        };
        (re, im)
    }

    /// Redraws element `i` of `lit`, this parameter's argument (both parts
    /// of a complex element).
    pub fn redraw(&self, lit: &mut Literal, i: usize, rng: &mut SplitMix) {
        if self.complex {
            let (re, im) = self.draw_complex(rng);
            lit.set_complex(i, re, im);
        } else {
            lit.set_f64(i, self.draw(rng));
        }
    }

    pub fn draw(&self, rng: &mut SplitMix) -> f64 {
        let i = self.interval;
        match self.distribution {
            Distribution::Uniform => uniform(rng, i, self.dtype),
            Distribution::LogUniform => log_uniform(rng, i, self.dtype),
            Distribution::Duplicates => {
                if self.pool.is_empty() {
                    uniform(rng, i, self.dtype)
                } else {
                    self.pool[rng.below(self.pool.len())]
                }
            }
            Distribution::Special if !self.edges.is_empty() => {
                self.edges[rng.below(self.edges.len())]
            }
            Distribution::Special => uniform(rng, i, self.dtype),
            Distribution::Mixed | Distribution::EdgeValues | Distribution::IntegerEdges => {
                if !self.edges.is_empty() && rng.coin() {
                    self.edges[rng.below(self.edges.len())]
                } else {
                    uniform(rng, i, self.dtype)
                }
            }
            Distribution::Exhaustive => uniform(rng, i, self.dtype),
            Distribution::OutOfRangeIndices => {
                if self.index_param && rng.coin() {
                    let (min, max) = self.dtype.int_range().unwrap_or((i128::MIN, i128::MAX));
                    let off = rng.range(1, 4) as f64;
                    let v = if rng.coin() { i.hi + off } else { i.lo - off };
                    v.clamp(min as f64, max as f64)
                } else {
                    uniform(rng, i, self.dtype)
                }
            }
        }
    }
}

/// Half of `i`, around 0 when it holds 0, else around its bound nearest 0.
pub(super) fn shrink(i: Interval) -> Interval {
    let c = if i.contains(0.0) {
        0.0
    } else if i.lo > 0.0 {
        i.lo
    } else {
        i.hi
    };
    let half = |b: f64| {
        if b.is_finite() {
            c + (b - c) / 2.0
        } else {
            b / 2.0
        }
    };
    Interval::new(half(i.lo), half(i.hi))
}
