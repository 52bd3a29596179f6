#!/usr/bin/env bash
# Runs the benchmarks (Benchmarks/, ordo-one/benchmark, release build) and prints one table of medians
# per operation; for each pair "<group> — baseline: …" / "<group> — Strata: …", Strata's ratios to the
# baseline. Memory benchmarks show peak resident memory instead of allocations.
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
if grep -q "failed with" "$out/run.log"; then
    cat "$out/run.log"
    exit 1
fi

python3 - "$out"/*.jmh.json <<'PY'
import json, sys, re

# Each benchmark records per iteration how many operations it ran ("Operations") and how many bytes
# each handled ("Bytes"); figures here are per operation. Times are in microseconds.
results = {}
for benchmark in json.load(open(sys.argv[1])):
    name = benchmark["benchmark"].split("StrataBenchmarks.", 1)[-1].replace("_", " ")
    metrics = benchmark["secondaryMetrics"]
    def median(metric):
        return (metrics.get(metric, {}).get("scorePercentiles", {}).get("50.0") or 0)
    operations = max(median("Operations"), 1)
    time = median("Time (wall clock)") / operations
    results[name] = {
        "time": time,
        "mallocs": median("Malloc (total)") / operations,
        "bytes": median("Bytes"),
        "rss": median("Memory (resident peak)"),
    }

def show_time(value):
    return f"{value / 1e6:.2f} s" if value >= 1e6 else f"{value / 1e3:.2f} ms" if value >= 1e3 else f"{value:.1f} µs"

def cells(values, memory):
    cells = [show_time(values["time"])]
    cells.append(f"{values['rss'] / 1_048_576:.0f} MiB" if memory else f"{values['mallocs']:.0f}")
    cells.append(f"{values['bytes'] / values['time']:.1f} MB/s" if values["bytes"] else "")
    return cells

rows = [("Benchmark", "side", "time/op", "mallocs/op · peak RSS", "MB/s", "ratio")]
pairs = {}
for name, values in results.items():
    match = re.match(r"(.+?) — (baseline|Strata): ", name)
    key = match.group(1) if match else name
    pairs.setdefault(key, {})[match.group(2) if match else ""] = values
for group in sorted(pairs):
    sides = pairs[group]
    memory = group.startswith("Memory")
    if set(sides) == {"baseline", "Strata"}:
        base, strata = sides["baseline"], sides["Strata"]
        measure = "rss" if memory else "mallocs"
        ratio = (f"time {strata['time'] / base['time']:.2f}x, "
                 f"{'memory' if memory else 'mallocs'} {strata[measure] / max(base[measure], 1):.2f}x")
        rows.append((group, "baseline", *cells(base, memory), ""))
        rows.append(("", "Strata", *cells(strata, memory), ratio))
    else:
        for side, values in sides.items():
            rows.append((group, side, *cells(values, memory), ""))

widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
for index, row in enumerate(rows):
    print("  ".join(cell.ljust(width) if i < 2 else cell.rjust(width) for i, (cell, width) in enumerate(zip(row, widths))).rstrip())
    if index == 0:
        print("  ".join("-" * width for width in widths))
PY
