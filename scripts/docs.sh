#!/usr/bin/env bash
# Builds the DocC documentation of every product (and of the StrataObservability package) with the
# toolchain's docc, warnings as errors, and merges it into one archive:
# .build/documentation/Strata.doccarchive. No plugin is involved. Each module links to the layers
# below it with absolute links (``/StrataCore/HTTPHeaders``), resolved against their archives, so
# modules build bottom to top.
#
#   scripts/docs.sh                       # build and check
#   docc preview Sources/StrataSession/StrataSession.docc \
#       --additional-symbol-graph-dir .build/documentation/symbol-graphs/StrataSession   # browse one
set -euo pipefail
cd "$(dirname "$0")/.."

# The toolchain's docc: on PATH on Linux, through xcrun with Xcode.
if command -v docc >/dev/null; then docc=(docc); else docc=(xcrun docc); fi

modules=(StrataCore StrataConfiguration StrataEncoding StrataSession StrataEndpoint StrataService StrataTransfer
    StrataTesting Strata)
out=.build/documentation
rm -rf "$out"
mkdir -p "$out/symbol-graphs" "$out/modules"

# Symbol graphs of the library targets, from a build of its own (the flags would otherwise
# invalidate the main build). They are written next to that build, not under $out: a module the
# build finds up to date is not compiled again, and its graph must still be there.
written="$PWD/.build/docs-build/symbol-graphs"
mkdir -p "$written"
swift build --scratch-path .build/docs-build \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$written" \
    -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public \
    -Xswiftc -symbol-graph-skip-synthesized-members >"$out/symbol-graphs.log" 2>&1 ||
    { cat "$out/symbol-graphs.log"; exit 1; }

archives=()
for module in "${modules[@]}"; do
    graphs="$out/symbol-graphs/$module"
    mkdir -p "$graphs"
    cp "$written/$module.symbols.json" "$graphs/"
    cp "$written/$module"@*.symbols.json "$graphs/" 2>/dev/null || true
    dependencies=()
    for archive in "${archives[@]+"${archives[@]}"}"; do dependencies+=(--dependency "$archive"); done
    if ! "${docc[@]}" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$graphs" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.strata.$module" \
        --enable-experimental-external-link-support "${dependencies[@]+"${dependencies[@]}"}" \
        --warnings-as-errors \
        --output-path "$out/modules/$module.doccarchive" >"$out/modules/$module.log" 2>&1; then
        cat "$out/modules/$module.log"
        exit 1
    fi
    archives+=("$out/modules/$module.doccarchive")
    echo "documented $module"
done

# StrataObservability, a package of its own (on swift-log, swift-metrics and swift-distributed-tracing):
# its symbol graph from a build of its own, its catalog linked to the archives above.
written="$PWD/.build/docs-observability/symbol-graphs"
mkdir -p "$written" "$out/symbol-graphs/StrataObservability"
swift build --package-path StrataObservability --scratch-path .build/docs-observability --target StrataObservability \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$written" \
    -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public \
    -Xswiftc -symbol-graph-skip-synthesized-members >"$out/symbol-graphs-observability.log" 2>&1 ||
    { cat "$out/symbol-graphs-observability.log"; exit 1; }
cp "$written"/StrataObservability*.symbols.json "$out/symbol-graphs/StrataObservability/"
dependencies=()
for archive in "${archives[@]}"; do dependencies+=(--dependency "$archive"); done
if ! "${docc[@]}" convert StrataObservability/Sources/StrataObservability/StrataObservability.docc \
    --additional-symbol-graph-dir "$out/symbol-graphs/StrataObservability" \
    --fallback-display-name StrataObservability --fallback-bundle-identifier org.strata.StrataObservability \
    --enable-experimental-external-link-support "${dependencies[@]}" --warnings-as-errors \
    --output-path "$out/modules/StrataObservability.doccarchive" >"$out/modules/StrataObservability.log" 2>&1; then
    cat "$out/modules/StrataObservability.log"
    exit 1
fi
archives+=("$out/modules/StrataObservability.doccarchive")
echo "documented StrataObservability"

"${docc[@]}" merge "${archives[@]}" --synthesized-landing-page-name "Strata packages" --output-path "$out/Strata.doccarchive" \
    >"$out/merge.log" 2>&1 || { cat "$out/merge.log"; exit 1; }
echo "documentation: $out/Strata.doccarchive"
