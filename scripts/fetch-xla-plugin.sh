#!/usr/bin/env bash
# Fetches a pinned XLA CPU PJRT plugin wheel into the git-ignored cache,
# verifies its sha256, unpacks the plugin `.so` and prints its path.
#
#   scripts/fetch-xla-plugin.sh            # the main plugin (xla-cpu, PJRT C API 0.115)
#   scripts/fetch-xla-plugin.sh xla-cpu-0.81   # the older build (PJRT C API 0.81)
#
# Idempotent: a cached wheel whose checksum matches is not downloaded again.
# The backend finds the unpacked plugin here (or through XLA_PJRT_PLUGIN).
set -euo pipefail

which_plugin="${1:-xla-cpu}"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${XLA_PLUGIN_CACHE:-$repo_root/.cache/xla-plugin}"

case "$which_plugin" in
  xla-cpu)
    package="lammps-jax-pjrt-cpu==0.11.2"
    wheel="lammps_jax_pjrt_cpu-0.11.2-py3-none-manylinux_2_27_x86_64.whl"
    wheel_sha256="1319390d948b39f69f7dade496b7c385149d9ca6097a6b62114da113216d9ad1"
    member="lammps_jax_pjrt_cpu/pjrt_c_api_cpu_plugin.so"
    so_name="xla-cpu.so"
    so_sha256="ad1309ac822b1b24d51b7f9947c7c9fa9ef5d67f390584cbc3d1fa2428fed9c2"
    ;;
  xla-cpu-0.81)
    package="xla-cpu-pjrt==0.0.1"
    wheel="xla_cpu_pjrt-0.0.1-py3-none-manylinux_2_27_x86_64.whl"
    wheel_sha256="55837b6b7b47daa717f2d9a5a03563ea0ceaa338d06a81a1e2d3f060d960decc"
    member="xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so"
    so_name="xla-cpu-0.81.so"
    so_sha256="88c3f28c5900f48ad4a82cab9e79bba9537809743395e341485f8794268820dc"
    ;;
  *)
    echo "fetch-xla-plugin: unknown plugin '$which_plugin' (expected xla-cpu or xla-cpu-0.81)" >&2
    exit 2
    ;;
esac

mkdir -p "$cache"
wheel_path="$cache/$wheel"

verify() {
  [ -f "$wheel_path" ] && echo "$wheel_sha256  $wheel_path" | sha256sum --check --status
}

if ! verify; then
  rm -f "$wheel_path"
  echo "fetch-xla-plugin: downloading $package" >&2
  python3 -m pip download --quiet --no-deps --only-binary=:all: "$package" -d "$cache" >&2
  if ! verify; then
    echo "fetch-xla-plugin: sha256 mismatch for $wheel_path (expected $wheel_sha256)" >&2
    exit 1
  fi
fi

so_path="$cache/$so_name"
so_ok() {
  [ -f "$so_path" ] && echo "$so_sha256  $so_path" | sha256sum --check --status
}
if ! so_ok; then
  tmp="$(mktemp -d "$cache/unpack.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  unzip -q -o "$wheel_path" "$member" -d "$tmp"
  mv "$tmp/$member" "$so_path"
  if ! so_ok; then
    echo "fetch-xla-plugin: sha256 mismatch for the unpacked $so_path (expected $so_sha256)" >&2
    exit 1
  fi
fi

echo "$so_path"
