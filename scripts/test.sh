#!/usr/bin/env bash
# Everything CI runs, in order. Run it from anywhere: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s ==\n' "$*"; }

step "Format (swift format lint --strict)"
swift format lint --strict --recursive --parallel Package.swift Sources Tests IntegrationTests/Package.swift \
    IntegrationTests/Sources IntegrationTests/Tests Example/Package.swift Example/Sources Example/Tests \
    Benchmarks/Package.swift Benchmarks/Benchmarks Benchmarks/Sources \
    StrataAsyncHTTPClient/Package.swift StrataAsyncHTTPClient/Sources StrataAsyncHTTPClient/Tests \
    StrataObservability/Package.swift StrataObservability/Sources StrataObservability/Tests

step "Module graph: the README's table of layers matches Package.swift"
python3 scripts/check-module-graph.py

step "Build with warnings as errors and explicit target dependency import check"
swift build -Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error

step "Documentation: every product's DocC catalog, warnings as errors (toolchain docc, no plugin)"
scripts/docs.sh

# The packages that depend on Strata by path (StrataAsyncHTTPClient, StrataObservability,
# IntegrationTests, Example)
# share one debug build directory, so that SwiftNIO and AsyncHTTPClient are compiled once for the
# four of them instead of once each (five minutes apiece on 2 cores). Sanitized and release builds
# keep their own.
dependents=.build-dependents

step "StrataAsyncHTTPClient: its own package, built with warnings as errors, and its tests"
swift build --package-path StrataAsyncHTTPClient --scratch-path $dependents --build-tests -Xswiftc -warnings-as-errors
swift test --package-path StrataAsyncHTTPClient --scratch-path $dependents --skip-build

step "StrataObservability: its own package, built with warnings as errors, and its tests"
swift build --package-path StrataObservability --scratch-path $dependents --build-tests -Xswiftc -warnings-as-errors
swift test --package-path StrataObservability --scratch-path $dependents --skip-build

step "Unit tests"
swift test -Xswiftc -warnings-as-errors --explicit-target-dependency-import-check error

# Known false positives outside Strata (the file says which and why).
export TSAN_OPTIONS="suppressions=$PWD/scripts/tsan-suppressions.txt"

step "Unit tests under ThreadSanitizer (the cancellation races among them)"
# The nesting tests build values 100,000 levels deep, which has no race to find and, instrumented,
# starves the timing of the others on 2 cores.
swift test --sanitize=thread --scratch-path .build-tsan --skip NestingDepthTests

step "Unit tests under AddressSanitizer (the byte-level parsers, searches and encoders read and write within bounds)"
# The nesting tests run on 512 KiB stacks, which AddressSanitizer's larger frames overflow. Leaks are
# not checked here: over the whole suite LeakSanitizer reports a few hundred blocks, mostly the tests'
# own fixtures, where 400 requests through the whole stack (one in seven cancelled) leak nothing.
ASAN_OPTIONS=detect_leaks=0 swift test --sanitize=address --scratch-path .build-asan --skip NestingDepthTests

# The integration suite runs once per transport: STRATA_TRANSPORT names the one every test builds
# its session manager on (TestTransport in IntegrationTests). Where behaviour differs by transport,
# the test says so.
for transport in urlsession asynchttpclient; do
    export STRATA_TRANSPORT=$transport

    step "Integration tests against the loopback server, over $transport, built with warnings as errors"
    swift test --package-path IntegrationTests --scratch-path $dependents --no-parallel -Xswiftc -warnings-as-errors

    step "Integration load and cancellation tests under ThreadSanitizer, over $transport"
    swift test --package-path IntegrationTests --no-parallel --sanitize=thread --scratch-path IntegrationTests/.build-tsan \
        --filter 'LoadTests|cancelling|LinuxDefectTests|AuthenticationTests|Cancelled|aStorm|StaleConnection' \
        --skip residentMemoryDoesNotGrowOverALongRun  # ThreadSanitizer's shadow memory makes RSS meaningless

    step "Memory checks over $transport: 256 MiB multipart upload, raw file upload and download, peak resident memory under 100 MiB; a slow consumer of a 64 MiB stream and of an endless one (under 64 MiB over AsyncHTTPClient)"
    swift run -c release --package-path IntegrationTests UploadMemoryCheck --size-mib 256 --limit-mib 100
    IntegrationTests/.build/release/UploadMemoryCheck --raw --size-mib 256 --limit-mib 100
    IntegrationTests/.build/release/UploadMemoryCheck --download --size-mib 256 --limit-mib 100
    # A consumer slower than the network: AsyncHTTPClient holds the server back; URLSession cannot
    # (its data tasks push, and suspend/resume restarts them), so there it holds the difference, up
    # to the stream's buffer limit (64 MiB), which ends an endless stream with a typed error. Then
    # FoundationNetworking's cancel() waits for its work queue, which the loopback transfer keeps
    # busy: the parts read meanwhile are dropped as they come, but the more the server got ahead
    # (84 MiB to 4.7 GiB seen), the higher the peak (111 to 167 MiB seen), hence the endless
    # check's own limit over URLSession.
    if [ "$transport" = asynchttpclient ]; then stream_limit=64; endless_limit=64; else
        stream_limit=160; endless_limit=224
    fi
    IntegrationTests/.build/release/UploadMemoryCheck --stream --size-mib 64 --sleep-ms 1 --limit-mib $stream_limit
    IntegrationTests/.build/release/UploadMemoryCheck --stream --endless --size-mib 128 --sleep-ms 1 \
        --limit-mib $endless_limit
done
unset STRATA_TRANSPORT

step "Interoperability: httpbin and Starlette streams, servers nobody here wrote (from PyPI, in a virtual environment), over both transports"
SKIP_BUILD=1 scripts/interop.sh

step "Example: built with warnings as errors, its tests (each layer mocked separately), then the tour against the embedded demo API"
swift test --package-path Example --scratch-path $dependents -Xswiftc -warnings-as-errors
swift run --package-path Example --scratch-path $dependents -Xswiftc -warnings-as-errors
swift run --package-path Example --scratch-path $dependents -Xswiftc -warnings-as-errors StrataExample --transport asynchttpclient

step "Benchmarks: a short smoke run, so they keep building and running (figures: scripts/bench.sh)"
BENCH_SMOKE=1 scripts/bench.sh
if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then
    step "Benchmarks: the loopback pairs against nginx, a short smoke run (nginx is installed here)"
    BENCH_SMOKE=1 scripts/bench-nginx.sh
fi
