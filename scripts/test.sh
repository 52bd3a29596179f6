#!/usr/bin/env bash
# Everything CI runs, in order. Run it from anywhere: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s ==\n' "$*"; }

step "Format (swift format lint --strict)"
swift format lint --strict --recursive --parallel Package.swift Sources Tests IntegrationTests/Package.swift \
    IntegrationTests/Sources IntegrationTests/Tests Example/Package.swift Example/Sources Example/Tests \
    Benchmarks/Package.swift Benchmarks/Benchmarks Benchmarks/Sources

step "Module graph: the README's table of layers matches Package.swift"
python3 scripts/check-module-graph.py

step "Build with warnings as errors and explicit target dependency import check"
swift build -Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error

step "Documentation: every product's DocC catalog, warnings as errors (toolchain docc, no plugin)"
scripts/docs.sh

step "Unit tests"
swift test -Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error

step "Unit tests under ThreadSanitizer (the cancellation races among them)"
# The nesting tests build values 100,000 levels deep, which has no race to find and, instrumented,
# starves the timing of the others on 2 cores.
swift test --sanitize=thread --scratch-path .build-tsan --skip NestingDepthTests

step "Integration tests against the loopback server"
swift test --package-path IntegrationTests --no-parallel

step "Integration load and cancellation tests under ThreadSanitizer"
swift test --package-path IntegrationTests --no-parallel --sanitize=thread --scratch-path IntegrationTests/.build-tsan \
    --filter 'LoadTests|cancelling|LinuxDefectTests|AuthenticationTests|Cancelled|aStorm' \
    --skip residentMemoryDoesNotGrowOverALongRun  # ThreadSanitizer's shadow memory makes RSS meaningless

step "Multipart upload memory check: 256 MiB through the loopback server, peak resident memory under 100 MiB"
swift run -c release --package-path IntegrationTests UploadMemoryCheck --size-mib 256 --limit-mib 100

step "Download memory check: 256 MiB to a file through every layer, peak resident memory under 100 MiB"
IntegrationTests/.build/release/UploadMemoryCheck --download --size-mib 256 --limit-mib 100

step "Example: its tests (each layer mocked separately), then the tour against the embedded demo API"
swift test --package-path Example
swift run --package-path Example

step "Benchmarks: a short smoke run, so they keep building and running (figures: scripts/bench.sh)"
BENCH_SMOKE=1 scripts/bench.sh
