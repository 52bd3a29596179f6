#!/usr/bin/env bash
# Runs the benchmarks (Benchmarks/, ordo-one/benchmark, release build) and prints one table: for each
# pair "<group> — baseline: …" / "<group> — Strata: …", the medians and Strata's ratio to the baseline.
#
#   scripts/bench.sh                    # every benchmark
#   scripts/bench.sh 'Stack overhead.*' # those matching a regular expression
#   BENCH_SMOKE=1 scripts/bench.sh      # a short run that only proves they build and run (CI)
set -euo pipefail
cd "$(dirname "$0")/.."

filter="${1:-.*}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export BENCH_SMOKE="${BENCH_SMOKE:-0}"

swift package --package-path Benchmarks benchmark --filter "$filter" --format jmh --path "$out" --no-progress \
    >"$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }

python3 - "$out"/*.jmh.json <<'PY'
import json, sys, re

# Every benchmark runs 1,000 iterations per sample (scalingFactor .kilo): per-request figures are
# the sample's divided by 1,000. Times are in microseconds.
results = {}
for benchmark in json.load(open(sys.argv[1])):
    name = benchmark["benchmark"].split("StrataBenchmarks.", 1)[-1].replace("_", " ")
    metrics = benchmark["secondaryMetrics"]
    results[name] = {
        "time": metrics["Time (wall clock)"]["scorePercentiles"]["50.0"] / 1000,
        "mallocs": (metrics.get("Malloc (total)", {}).get("scorePercentiles", {}).get("50.0") or 0) / 1000,
    }

pairs = {}
for name, values in results.items():
    match = re.match(r"(.+?) — (baseline|Strata): ", name)
    if match:
        pairs.setdefault(match.group(1), {})[match.group(2)] = values

print(f"{'Per request (median)':<32} {'baseline':>10} {'Strata':>10} {'ratio':>7} {'mallocs':>9} {'Strata':>8} {'ratio':>7}")
for group, pair in sorted(pairs.items()):
    if set(pair) != {"baseline", "Strata"}:
        continue
    base, strata = pair["baseline"], pair["Strata"]
    print(f"{group:<32} {base['time']:>7.1f} µs {strata['time']:>7.1f} µs {strata['time'] / base['time']:>6.2f}x"
          f" {base['mallocs']:>9.0f} {strata['mallocs']:>8.0f} {strata['mallocs'] / max(base['mallocs'], 1):>6.2f}x")
for name in sorted(name for name in results if not re.match(r".+? — (baseline|Strata): ", name)):
    print(f"{name:<32} {results[name]['time']:>7.1f} µs, {results[name]['mallocs']:.0f} mallocs")
PY
