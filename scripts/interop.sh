#!/usr/bin/env bash
# Runs integration suites against servers nobody here wrote, over each transport: HTTPBinTests
# against httpbin (Python, Flask and Werkzeug under gunicorn), and StarletteStreamingTests against
# Starlette's streamed responses and sse-starlette's event streams under uvicorn
# (IntegrationTests/Interop/streaming_app.py). The servers go into a virtual environment of the
# repository's own (.build-interop/venv, from PyPI, versions pinned), and run on free loopback
# ports for the run, stopped after.
#
#   scripts/interop.sh            # builds the integration tests if needed, then both transports
#   SKIP_BUILD=1 scripts/interop.sh   # the tests are built (scripts/test.sh has built them)
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.build-interop/venv
if [ ! -x "$venv/bin/gunicorn" ] || [ ! -x "$venv/bin/uvicorn" ]; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        httpbin==0.10.4 gunicorn==27.0.1 flask==3.1.3 werkzeug==3.1.8 brotlicffi==1.2.1.0 \
        uvicorn==0.55.0 starlette==1.10.0 sse-starlette==3.7.1
fi

# Two free ports, taken while both are held, so that they differ.
read -r httpbin_port starlette_port < <(python3 -c '
import socket
held = [socket.socket() for _ in range(2)]
for s in held: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in held))')
log=$(mktemp -d)
servers=()
# A server stopped by the signal reports it as its status, which is no failure of the run.
trap 'kill "${servers[@]}" 2>/dev/null || true; wait "${servers[@]}" 2>/dev/null || true; rm -rf "$log"' EXIT
# Four sync workers: each answers one request at a time and closes its connection after it.
"$venv/bin/gunicorn" --bind "127.0.0.1:$httpbin_port" --workers 4 --access-logfile - --error-logfile - httpbin:app \
    >"$log/httpbin" 2>&1 &
servers+=($!)
# One uvicorn process, its event loop serving every connection.
"$venv/bin/uvicorn" --app-dir IntegrationTests/Interop --host 127.0.0.1 --port "$starlette_port" \
    --log-level warning streaming_app:app >"$log/starlette" 2>&1 &
servers+=($!)

# Up once it answers (python3, which the venv needs anyway, rather than a curl the machine may lack).
answers() { python3 -c "import urllib.request; urllib.request.urlopen('$1', timeout=1)" 2>/dev/null; }
for url in "http://127.0.0.1:$httpbin_port/get" "http://127.0.0.1:$starlette_port/state?key=up"; do
    for _ in $(seq 100); do
        answers "$url" && break
        sleep 0.1
    done
    answers "$url" || { cat "$log"/*; echo "$url did not answer" >&2; exit 1; }
done

dependents=.build-dependents
[ -n "${SKIP_BUILD:-}" ] || swift build --package-path IntegrationTests --scratch-path $dependents --build-tests

for transport in urlsession asynchttpclient; do
    echo "== httpbin, then Starlette and sse-starlette, over $transport =="
    STRATA_HTTPBIN="http://127.0.0.1:$httpbin_port" STRATA_STARLETTE="http://127.0.0.1:$starlette_port" \
        STRATA_TRANSPORT=$transport swift test --package-path IntegrationTests --scratch-path $dependents \
        --skip-build --no-parallel --filter 'HTTPBinTests|StarletteStreamingTests'
done
