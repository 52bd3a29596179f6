#!/usr/bin/env python3
"""Sums `perf record` samples by kind of work, for two recordings side by side.

    perf record -F 5000 -g -o raw.data    Benchmarks/.build/release/CallbackProbe raw URL 3000
    perf record -F 5000 -g -o strata.data Benchmarks/.build/release/CallbackProbe strata URL 3000
    scripts/profile-categories.py raw.data strata.data

Each sample counts once, for the function it was taken in (self time), and that function's name
says the kind: reference counting, the runtime's metadata look-ups, exclusivity checks, malloc,
Strata's own code, SwiftNIO's, AsyncHTTPClient's, Foundation's JSON decoding, and the rest.
"""
import subprocess
import sys


def kind(symbol):
    if symbol.startswith(("swift_retain", "swift_release", "swift_bridgeObject")) or "RefCount" in symbol:
        return "reference counting"
    if any(word in symbol for word in ("Metadata", "getCache", "GenericCache", "swift_once", "instantiate")):
        return "metadata look-ups"
    if "Access" in symbol or "tls_get" in symbol:
        return "exclusivity checks"
    if "malloc" in symbol or "free" in symbol:
        return "malloc and free"
    if "Strata" in symbol[:40]:
        return "Strata"
    if "AsyncHTTPClient" in symbol[:40]:
        return "AsyncHTTPClient"
    if "NIO" in symbol[:30]:
        return "SwiftNIO"
    if "FoundationEssentials" in symbol[:40] or "StackFixture" in symbol[:30]:
        return "JSON decoding"
    if "pthread" in symbol or "futex" in symbol or "spin" in symbol:
        return "locks"
    if symbol.startswith("$s"):
        return "other Swift"
    return "other"


def samples(recording):
    report = subprocess.run(
        ["perf", "report", "-i", recording, "--no-children", "--sort", "sym", "-g", "none", "--stdio", "-n"],
        capture_output=True, text=True, check=True).stdout
    totals = {}
    for line in report.splitlines():
        fields = line.split(None, 3)
        if len(fields) < 4 or line.startswith("#") or not fields[1].isdigit():
            continue
        symbol = fields[3].split("] ", 1)[-1].strip()
        totals[kind(symbol)] = totals.get(kind(symbol), 0) + int(fields[1])
    return totals


if len(sys.argv) != 3:
    sys.exit("usage: profile-categories.py BASELINE.data OTHER.data")
baseline, other = samples(sys.argv[1]), samples(sys.argv[2])
print(f"{'kind':20} {'baseline':>9} {'other':>9} {'more':>7}")
for name in sorted(set(baseline) | set(other), key=lambda name: baseline.get(name, 0) - other.get(name, 0)):
    print(f"{name:20} {baseline.get(name, 0):9} {other.get(name, 0):9} {other.get(name, 0) - baseline.get(name, 0):7}")
print(f"{'all':20} {sum(baseline.values()):9} {sum(other.values()):9} "
      f"{sum(other.values()) - sum(baseline.values()):7}")
