#!/usr/bin/env bash
# Regenerates the example report, docs/report-example.html, and its
# screenshot, docs/report.png, from a real run of the conformance suite: the
# interpreter and two mutants (`xla-props backends` lists them) on a few float
# ops, compared with a run of the interpreter alone, plus the isolation of one
# disagreement inside a fusion.
#
#   scripts/example-report.sh [WORK_DIR]     # default target/report-example
#
# Needs chromium for the screenshot (apt-get install -y chromium); without it
# the page is still written and the screenshot is skipped with a message.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
work="${1:-target/report-example}"
ops="add,multiply,divide,exponential,log,tanh,sqrt"
dtypes="f32,f16,bf16"
mutants="mutant:exp-low-precision,mutant:undeclared-ftz"

rm -rf "$work"
mkdir -p "$work"
export XLA_PROPS_FAILURES_DIR="$work/failures"

echo "example-report: the interpreter alone (the earlier run)" >&2
cargo test --release -q --test conformance -- -q --backend interpreter \
    --op "$ops" --dtype "$dtypes" --json "$work/baseline.json" >"$work/baseline.log"

echo "example-report: the interpreter and $mutants" >&2
# the mutants fail cases on purpose: exit code 101
status=0
cargo test --release -q --test conformance -- -q --backend "interpreter,$mutants" \
    --op "$ops" --dtype "$dtypes" --json "$work/mutant-run.json" >"$work/mutant-run.log" || status=$?
if [ "$status" -ne 101 ]; then
    echo "example-report: expected the mutant run to fail (exit 101), got $status" >&2
    exit 1
fi

echo "example-report: isolating exp-low-precision inside a fusion" >&2
# a disagreement is isolated: exit code 1
status=0
cargo run --release -q -p xla-props -- isolate scripts/example-report/fused-exp.hlo \
    --backend mutant:exp-low-precision --out "$work/isolate" --quiet || status=$?
if [ "$status" -ne 1 ]; then
    echo "example-report: expected an isolated disagreement (exit 1), got $status" >&2
    exit 1
fi

echo "example-report: docs/report-example.html" >&2
cargo run --release -q -p xla-props -- report "$work/mutant-run.json" \
    --compare "$work/baseline.json" --isolation "$work/isolate/report.json" \
    -o docs/report-example.html
ls -l docs/report-example.html >&2

browser=""
for b in "${XLA_PROPS_CHROMIUM:-}" chromium chromium-browser google-chrome; do
    if [ -n "$b" ] && command -v "$b" >/dev/null; then
        browser="$b"
        break
    fi
done
if [ -z "$browser" ]; then
    echo "example-report: no chromium; docs/report.png not updated" >&2
    exit 0
fi
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$profile" --window-size=1200,1500 \
    --screenshot="$root/docs/report.png" "file://$root/docs/report-example.html" 2>/dev/null
ls -l docs/report.png >&2
