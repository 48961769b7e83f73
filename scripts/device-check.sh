#!/usr/bin/env bash
# The device check: a filtered slice of the conformance suite on xla-gpu
# (jax's CUDA PJRT plugin), meant to finish in a few minutes on one GPU.
#
#   scripts/device-check.sh [OUT_DIR]
#
# Needs an NVIDIA GPU (/dev/nvidiactl) and jax's CUDA plugin, found the way
# the backend finds it: XLA_PJRT_PLUGIN_GPU, else
# jax_plugins/xla_cuda13/xla_cuda_plugin.so or .../xla_cuda12/... in the
# site-packages of any python3 (pip install jax-cuda12-pjrt jax-cuda12-plugin
# beforehand; a device machine may have no network). The conformance binary
# is built with cargo unless CONFORMANCE_BIN names a prebuilt one (e.g. one
# carried to the device machine from target/release/deps/conformance-*).
#
# The slice (override with XLA_PROPS_OPS / XLA_PROPS_DTYPES / DEVICE_SHARD):
# elementwise arithmetic and transcendentals, a dot, reductions and converts
# in f32/bf16/f16, one shard of it. Writes OUT_DIR/xla-gpu.json (the run's
# --json), OUT_DIR/xla-gpu.log and OUT_DIR/summary.txt; exits with the
# suite's code (0 all passed or skipped, 101 failures, 2 setup errors).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-${OUT:-$repo_root/target/xla-props/device-check}}"
mkdir -p "$out"
cd "$repo_root"

if [[ ! -e /dev/nvidiactl && -z "${XLA_PJRT_PLUGIN_GPU:-}" ]]; then
  echo "device-check: no NVIDIA GPU here (no /dev/nvidiactl); nothing run" | tee "$out/summary.txt"
  exit 2
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt" || true

# the plugin, the way the backend looks for it (reported, not required here:
# `xla-props backends` below says why when it is missing)
if [[ -z "${XLA_PJRT_PLUGIN_GPU:-}" ]]; then
  for py in python3 python; do
    command -v "$py" >/dev/null || continue
    found="$("$py" - <<'PY' 2>/dev/null || true
import glob, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()]
for r in roots:
    for cuda in ("xla_cuda13", "xla_cuda12"):
        for p in glob.glob(f"{r}/jax_plugins/{cuda}/xla_cuda_plugin.so"):
            print(p); sys.exit(0)
PY
)"
    if [[ -n "$found" ]]; then
      export XLA_PJRT_PLUGIN_GPU="$found"
      break
    fi
  done
fi
echo "device-check: plugin ${XLA_PJRT_PLUGIN_GPU:-not found in site-packages}" | tee "$out/plugin.txt"

bin="${CONFORMANCE_BIN:-}"
if [[ -z "$bin" ]]; then
  cargo build --release --test conformance --message-format=json-render-diagnostics \
    > "$out/build.json"
  bin="$(python3 -c '
import json, sys
for line in open(sys.argv[1]):
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "conformance" and m.get("executable"):
        print(m["executable"])
' "$out/build.json" | tail -1)"
fi
[[ -x "$bin" ]] || { echo "device-check: no conformance binary ($bin)" >&2; exit 2; }

export XLA_PROPS_BACKENDS=xla-gpu
export XLA_PROPS_OPS="${XLA_PROPS_OPS:-add,subtract,multiply,divide,exp,log,tanh,logistic,sqrt,rsqrt,dot,reduce,convert}"
export XLA_PROPS_DTYPES="${XLA_PROPS_DTYPES:-f32,bf16,f16}"
export XLA_PROPS_SHARD="${DEVICE_SHARD:-1/4}"
export XLA_PROPS_XLA_TIMEOUT_SECS="${XLA_PROPS_XLA_TIMEOUT_SECS:-60}"
export XLA_PROPS_FAILURES_DIR="$out/failures"

start=$(date +%s)
set +e
timeout "${DEVICE_TIMEOUT_SECS:-420}" "$bin" -q --json "$out/xla-gpu.json" > "$out/xla-gpu.log" 2>&1
code=$?
set -e
end=$(date +%s)
{
  echo "device-check: xla-gpu, ops $XLA_PROPS_OPS, dtypes $XLA_PROPS_DTYPES, shard $XLA_PROPS_SHARD"
  echo "exit code $code after $((end - start)) s (124: the timeout)"
  grep -E '^test result:|^total ' "$out/xla-gpu.log" || true
  sed -n '/^failures by signature/,/^$/p' "$out/xla-gpu.log" || true
} | tee "$out/summary.txt"
exit "$code"
