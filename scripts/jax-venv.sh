# Sourced by the JAX corpus scripts (gen-jax-corpus.sh, gen-spmd-corpus.sh,
# gen-harness-corpus.sh): the pins of the JAX (CPU) they export with, and
# the git-ignored virtual environment that holds it, one for all three.
#
# Sets repo_root and venv (JAX_VENV overrides it); ensure_jax_venv makes the
# venv hold the pinned jax and jaxlib, reusing it when its pins match.

JAX_VERSION="0.10.2"
JAXLIB_VERSION="0.10.2"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${JAX_VENV:-$repo_root/.cache/jax-venv}"

ensure_jax_venv() {
  if ! "$venv/bin/python" -c "import jax, jaxlib; assert jax.__version__ == '$JAX_VERSION' and jaxlib.__version__ == '$JAXLIB_VERSION'" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "jax==$JAX_VERSION" "jaxlib==$JAXLIB_VERSION"
  fi
}
