#!/usr/bin/env bash
# Runs the benchmarks (Benchmarks/, ordo-one/benchmark, release build) and prints one table of medians
# per operation, with Strata's ratio to the baseline for each pair. Pairs of time and allocations run
# side by side in one process; the 1 GiB memory pairs run in a process each, for peak resident memory.
#
#   scripts/bench.sh                    # every benchmark
#   scripts/bench.sh 'Stack overhead.*' # those matching a regular expression
#   scripts/bench.sh 'Monitor cost'     # what each observability monitor costs a request
#   BENCH_SMOKE=1 scripts/bench.sh      # a short run that only proves they build and run (CI)
set -euo pipefail
cd "$(dirname "$0")/.."

filter="${1:-.*}"
out=$(mktemp -d)
trap '[ -n "${BENCH_KEEP:-}" ] || rm -rf "$out"' EXIT
export BENCH_SMOKE="${BENCH_SMOKE:-0}"

# `scripts/bench.sh 'Monitor cost'` runs only the monitors' figures at the end.
if [ "$filter" != "Monitor cost" ]; then
swift package --package-path Benchmarks benchmark --filter "$filter" --format jmh --path "$out" --no-progress \
    >"$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }
if grep -q "failed with\|must be present" "$out/run.log"; then
    cat "$out/run.log"
    exit 1
fi

python3 - "$out"/*.jmh.json <<'PY'
import json, sys, re

# Each benchmark records per iteration how many operations it ran ("Operations") and how many bytes
# each handled ("Bytes"); figures here are per operation. Side-by-side benchmarks record both sides'
# times and allocations in one run and are named "… vs …"; memory pairs are separate processes named
# "… — baseline: …" and "… — Strata: …".
def us(value):
    return f"{value / 1e6:.2f} s" if value >= 1e6 else f"{value / 1e3:.2f} ms" if value >= 1e3 else f"{value:.1f} µs"

rows = [("Benchmark", "side", "time/op", "mallocs/op or peak RSS", "MB/s", "Strata/baseline")]
memory = {}
for benchmark in sorted(json.load(open(sys.argv[1])), key=lambda b: b["benchmark"]):
    name = benchmark["benchmark"].split("StrataBenchmarks.", 1)[-1].replace("_", " ")
    metrics = benchmark["secondaryMetrics"]
    def median(metric):
        return metrics.get(metric, {}).get("scorePercentiles", {}).get("50.0") or 0
    operations = max(median("Operations"), 1)
    size = median("Bytes")
    def throughput(time):
        return f"{size / time:.1f} MB/s" if size and time else ""
    # The JMH export carries metrics over from one benchmark to the next, so a benchmark's kind is
    # read from its name, never from which metrics it lists.
    if " vs " in name:
        base = (median("Baseline time (ns)") / 1e3 / operations, median("Baseline mallocs") / operations)
        strata = (median("Strata time (ns)") / 1e3 / operations, median("Strata mallocs") / operations)
        rows.append((name, "baseline", us(base[0]), f"{base[1]:.0f}", throughput(base[0]), ""))
        rows.append(("", "Strata", us(strata[0]), f"{strata[1]:.0f}", throughput(strata[0]),
                     f"time {strata[0] / base[0]:.2f}x, mallocs {strata[1] / max(base[1], 1):.2f}x"))
        continue
    match = re.match(r"(.+?) — (baseline|Strata): ", name)
    if match:
        memory.setdefault(match.group(1), {})[match.group(2)] = (
            median("Transfer time (µs)"), median("Peak resident (KiB)") * 1024, size)
        continue
    time = median("Time (wall clock)") / operations
    rows.append((name, "", us(time), f"{median('Malloc (total)') / operations:.0f}", throughput(time), ""))

for group, sides in sorted(memory.items()):
    for side in ("baseline", "Strata"):
        if side not in sides:
            continue
        time, rss, size = sides[side]
        ratio = ""
        if side == "Strata" and "baseline" in sides:
            ratio = f"memory {rss / max(sides['baseline'][1], 1):.2f}x, time {time / sides['baseline'][0]:.2f}x"
        rows.append((group if side == "baseline" else "", side, us(time), f"{rss / 1_048_576:.0f} MiB",
                     f"{size / time:.1f} MB/s" if size else "", ratio))

widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
for index, row in enumerate(rows):
    print("  ".join(cell.ljust(width) if i < 2 else cell.rjust(width)
                    for i, (cell, width) in enumerate(zip(row, widths))).rstrip())
    if index == 0:
        print("  ".join("-" * width for width in widths))
PY
fi

# Instructions per request of the stack-overhead pair, counted by valgrind's callgrind: the same on
# every run, where wall-clock medians on a shared machine move by ±15 %. The difference between
# runs of 2n and n requests leaves out the program's start-up.
if command -v valgrind >/dev/null && [[ "Stack overhead — Strata" =~ $filter ]]; then
    swift build -c release --package-path Benchmarks --product StackInstructions >"$out/build.log" 2>&1 ||
        { cat "$out/build.log"; exit 1; }
    binary="$(swift build -c release --package-path Benchmarks --show-bin-path)/StackInstructions"
    n=$([ "$BENCH_SMOKE" = 1 ] && echo 20 || echo 1000)
    count() {
        SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$binary" "$1" "$2" 2>&1 |
            sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    }
    base=$(( ($(count baseline $((2 * n))) - $(count baseline "$n")) / n ))
    strata=$(( ($(count strata $((2 * n))) - $(count strata "$n")) / n ))
    python3 -c "import sys; b, s = int(sys.argv[1]), int(sys.argv[2]); print(
        f'\nStack overhead, instructions per request (callgrind): baseline {b:,}, Strata {s:,}, ratio {s / b:.3f}x')" \
        "$base" "$strata"
fi
# What each observability monitor costs a request (StrataObservability), through the callback API
# over a SessionManager on an in-memory transport: instructions per request counted by callgrind
# (on a copy without debug information, which valgrind cannot read for this binary), then the
# sides side by side in wall-clock and CPU time. Loopback figures: scripts/bench-nginx.sh.
if [[ "Monitor cost" =~ $filter ]]; then
    swift build -c release --package-path Benchmarks --product MonitorCost >"$out/build.log" 2>&1 ||
        { cat "$out/build.log"; exit 1; }
    binary="$(swift build -c release --package-path Benchmarks --show-bin-path)/MonitorCost"
    smoke=$([ "$BENCH_SMOKE" = 1 ] && echo 1 || echo 0)
    if command -v valgrind >/dev/null; then
        objcopy --strip-debug "$binary" "$out/MonitorCost"
        n=$([ "$smoke" = 1 ] && echo 20 || echo 1000)
        count() {
            SWIFT_DETERMINISTIC_HASHING=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
                "$out/MonitorCost" instructions "$1" "$2" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
        }
        echo
        echo "Monitor cost, instructions per request (callgrind), in-memory transport:"
        base=0
        # `-otel`: the tracing monitor over swift-otel's tracer, as a server runs it; `-noop`: over
        # `NoOpTracer`, what the monitors cost whatever the tracer.
        for side in none logging metrics tracing all tracing-otel all-otel tracing-noop all-noop; do
            per=$(( ($(count "$side" $((2 * n))) - $(count "$side" "$n")) / n ))
            [ "$side" = none ] && base=$per
            python3 -c "import sys; s, p, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]); print(
                f'  {s:12} {p:>9,}  {p / max(b, 1):.3f}x')" "$side" "$per" "$base"
        done
    fi
    echo
    echo "Monitor cost, in-memory transport, sides in turn (median per GET):"
    if [ "$smoke" = 1 ]; then "$binary" memory 50 1; else "$binary" memory 2000 9; fi
fi
