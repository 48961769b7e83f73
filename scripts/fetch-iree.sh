#!/usr/bin/env bash
# Fetches the pinned IREE compiler and runtime wheels (iree-base-compiler and
# iree-base-runtime 3.13.0, CPython 3.11, x86_64 Linux) into the git-ignored
# cache, verifies their sha256, unpacks the tools the iree-cpu backend runs
# and prints the directory that holds them.
#
#   scripts/fetch-iree.sh        # prints .cache/iree/3.13.0
#
# That directory holds `iree-compile` (with the libIREECompiler.so it loads
# from its own directory), `iree-lld` and `iree-run-module`. Idempotent: a
# cached wheel whose checksum matches is not downloaded again, and unpacked
# tools whose checksums match are not unpacked again. The backend finds the
# tools here (or in the directory `IREE_TOOLS_DIR` names).
set -euo pipefail

version="3.13.0"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${IREE_CACHE:-$repo_root/.cache/iree}"
out="$cache/$version"

compiler_wheel="iree_base_compiler-3.13.0-cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl"
compiler_sha256="6e1f83dc404f5dcdd76354a869cbbb389bd3f93b4623096de3195799ceb323a7"
runtime_wheel="iree_base_runtime-3.13.0-cp311-cp311-manylinux_2_28_x86_64.whl"
runtime_sha256="4ecb03d5a33989d765eaa8bf1fe6199a937c88c1004e56c85714532cd95934fa"

# member of the wheel -> sha256 of the unpacked file
compiler_members=(
  "iree/compiler/_mlir_libs/iree-compile"
  "iree/compiler/_mlir_libs/iree-lld"
  "iree/compiler/_mlir_libs/libIREECompiler.so"
)
runtime_members=(
  "iree/_runtime_libs/iree-run-module"
)

mkdir -p "$cache" "$out"

fetch_wheel() { # package wheel sha256
  local package="$1" wheel="$2" sha="$3" path="$cache/$2"
  if [ -f "$path" ] && echo "$sha  $path" | sha256sum --check --status; then
    return
  fi
  rm -f "$path"
  echo "fetch-iree: downloading $package" >&2
  # --python-version/--platform let any pip fetch the cp311 wheels, whatever
  # python runs it (the tools in them are plain executables)
  python3 -m pip download --quiet --no-deps --only-binary=:all: \
    --python-version 3.11 --implementation cp --abi cp311 \
    --platform manylinux_2_28_x86_64 "$package" -d "$cache" >&2
  if ! echo "$sha  $path" | sha256sum --check --status; then
    echo "fetch-iree: sha256 mismatch for $path (expected $sha)" >&2
    exit 1
  fi
}

# unpacks the members when the wheel is newer than the stamp
unpack() { # wheel sha256 members...
  local wheel="$1" sha="$2"
  shift 2
  local stamp="$out/.unpacked-$sha"
  local missing=0 m
  for m in "$@"; do
    [ -x "$out/$(basename "$m")" ] || missing=1
  done
  if [ "$missing" = 0 ] && [ -f "$stamp" ]; then
    return
  fi
  local tmp
  tmp="$(mktemp -d "$cache/unpack.XXXXXX")"
  unzip -q -o "$cache/$wheel" "$@" -d "$tmp"
  for m in "$@"; do
    chmod +x "$tmp/$m"
    mv -f "$tmp/$m" "$out/$(basename "$m")"
  done
  rm -rf "$tmp"
  touch "$stamp"
}

fetch_wheel "iree-base-compiler==$version" "$compiler_wheel" "$compiler_sha256"
fetch_wheel "iree-base-runtime==$version" "$runtime_wheel" "$runtime_sha256"
unpack "$compiler_wheel" "$compiler_sha256" "${compiler_members[@]}"
unpack "$runtime_wheel" "$runtime_sha256" "${runtime_members[@]}"

echo "$out"
