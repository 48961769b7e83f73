//! The XLA backend as a [`RowRunner`]: how the batcher (`many.rs`) compiles
//! a batch in one worker and runs its rows.

use super::backend::XlaBackend;
use super::error::XlaError;
use super::lower::Lowered;
use super::many::{batch_size, RowRunner, DEFAULT_BATCH};
use crate::literal::Literal;

/// XLA: one worker compiles a batch and runs its rows (`XlaBackend::run_rows`).
impl RowRunner for XlaBackend {
    type Error = XlaError;
    fn ready(&self) -> bool {
        self.availability().is_ok()
    }
    fn workers(&self) -> usize {
        XlaBackend::workers(self)
    }
    fn batch_size(&self) -> usize {
        batch_size("XLA_PROPS_XLA_BATCH", DEFAULT_BATCH)
    }
    fn is_unavailable(e: &XlaError) -> bool {
        matches!(e, XlaError::Unavailable(_))
    }
    fn output_error(message: String) -> XlaError {
        XlaError::Output(message)
    }
    fn run_rows(
        &self,
        lowered: &Lowered,
        modules: usize,
        rows: &[Vec<&Literal>],
    ) -> Result<Vec<Vec<Literal>>, XlaError> {
        XlaBackend::run_rows(self, lowered, modules, rows)
    }
    fn stats_line(&self) -> String {
        let stats = self.cache_stats();
        format!(
            "compiles so far: {} misses, {} hits (hit rate {:.3}), {} worker restarts",
            stats.misses,
            stats.hits,
            stats.hit_rate(),
            stats.restarts
        )
    }
}
