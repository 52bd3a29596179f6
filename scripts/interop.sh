#!/usr/bin/env bash
# Runs the integration suite's HTTPBinTests against httpbin — a server nobody here wrote (Python,
# Flask and Werkzeug under gunicorn) — over each transport. httpbin and gunicorn go into a virtual
# environment of the repository's own (.build-interop/venv, from PyPI, versions pinned), and the
# server runs on a free loopback port for the run and is stopped after.
#
#   scripts/interop.sh            # builds the integration tests if needed, then both transports
#   SKIP_BUILD=1 scripts/interop.sh   # the tests are built (scripts/test.sh has built them)
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.build-interop/venv
if [ ! -x "$venv/bin/gunicorn" ]; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        httpbin==0.10.4 gunicorn==27.0.1 flask==3.1.3 werkzeug==3.1.8 brotlicffi==1.2.1.0
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp)
# Four sync workers: each answers one request at a time and closes its connection after it.
"$venv/bin/gunicorn" --bind "127.0.0.1:$port" --workers 4 --access-logfile - --error-logfile - httpbin:app \
    >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -f "$log"' EXIT
# Up once it answers (python3, which the venv needs anyway, rather than a curl the machine may lack).
answers() { python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/get', timeout=1)" 2>/dev/null; }
for _ in $(seq 100); do
    answers && break
    sleep 0.1
done
answers || { cat "$log"; echo "httpbin did not start" >&2; exit 1; }

dependents=.build-dependents
[ -n "${SKIP_BUILD:-}" ] || swift build --package-path IntegrationTests --scratch-path $dependents --build-tests

for transport in urlsession asynchttpclient; do
    echo "== httpbin over $transport =="
    STRATA_HTTPBIN="http://127.0.0.1:$port" STRATA_TRANSPORT=$transport swift test --package-path IntegrationTests \
        --scratch-path $dependents --skip-build --no-parallel --filter HTTPBinTests
done
