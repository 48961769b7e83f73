#!/usr/bin/env bash
# Measures whether and when `xla-props fuzz` finds each mutation of the
# mutant catalogue: one run per mutation, stopping at the first failure or
# after TIME seconds. Prints a markdown table (docs/detection.md, "Fuzz").
#
#   cargo build --release -p xla-props
#   scripts/fuzz-detection.sh [TIME=60] [SEED=1] [OUT=target/fuzz-detection]
set -euo pipefail
TIME=${1:-60}
SEED=${2:-1}
OUT=${3:-target/fuzz-detection}
BIN=${XLA_PROPS:-target/release/xla-props}
MUTATIONS="elide-convert-pair bf16-convert-truncates undeclared-ftz exp-low-precision
dot-bf16-accumulate max-min-drop-nan compare-nan-equal int-add-saturates
shift-right-logical-as-arithmetic slice-limit-off-by-one reduce-ignores-init
reduce-window-ignores-padding dynamic-slice-no-clamp sort-unstable pad-negative-as-zero
iota-wrong-dimension concat-offset-wrong round-afz-as-even int-divide-by-zero-zero
convert-float-int-wraps transpose-inverse-permutation broadcast-dims-reversed
select-swapped-on-broadcast-pred gather-no-clamp scatter-drops-duplicates
dot-batch-contract-swap conv-ignores-feature-groups"
echo "| mutation | found | programs until | seconds until | signature |"
echo "| --- | --- | ---: | ---: | --- |"
found=0
total=0
for m in $MUTATIONS; do
  total=$((total + 1))
  dir="$OUT/$m"
  rm -rf "$dir"
  log=$("$BIN" fuzz --backend "mutant:$m" --time "$TIME" --seed "$SEED" --out "$dir" \
    --stop-at-first-failure 2>/dev/null || true)
  first=$(printf '%s\n' "$log" | sed -n 's/^first failure: program \([0-9]*\), after \([0-9.]*\) s$/\1 \2/p')
  if [ -n "$first" ]; then
    found=$((found + 1))
    sig=$(printf '%s\n' "$log" | grep -v '^first failure\|^fuzz:' | head -1 | sed 's/: .*//')
    set -- $first
    echo "| \`$m\` | yes | $1 | $2 | $sig |"
  else
    echo "| \`$m\` | **no** (${TIME} s) | - | - | - |"
  fi
done
echo
echo "$found of $total mutations found within ${TIME} s each (seed $SEED)."
