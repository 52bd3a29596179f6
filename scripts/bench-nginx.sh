#!/usr/bin/env bash
# Runs the loopback pairs (scripts/bench.sh) against nginx on loopback instead of the test server
# in the benchmark's own process, whose event loops the clients share: every request then crosses
# processes, as against a real server. nginx serves the pairs' body (LoopbackBody writes it) at
# /items with keep-alive; it is started for the run and stopped after.
#
#   scripts/bench-nginx.sh                                       # every loopback pair
#   scripts/bench-nginx.sh 'Loopback GET over AsyncHTTPClient.*' # those matching a regular expression
#   scripts/bench-nginx.sh 'Monitor cost'                        # the observability monitors' cost
#   scripts/bench-nginx.sh 'Stream 1 GiB'                        # 1 GiB streamed to a consumer
#
# Needs nginx (Debian: apt-get install nginx); CI does not run it.
set -euo pipefail
cd "$(dirname "$0")/.."

filter="${1:-Loopback GET.*}"
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || { echo "nginx not found: install it (Debian: apt-get install nginx)" >&2; exit 2; }

dir=$(mktemp -d)
chmod a+rx "$dir" # nginx workers may run as another user
trap '[ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null; rm -rf "$dir"' EXIT

swift build -c release --package-path Benchmarks --product LoopbackBody >"$dir/build.log" 2>&1 ||
    { cat "$dir/build.log"; exit 1; }
"$(swift build -c release --package-path Benchmarks --show-bin-path)/LoopbackBody" >"$dir/items.json"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    # Every path in the run's directory, so that nginx needs no other (a user without root too).
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    keepalive_requests 10000000;
    keepalive_timeout 600s;
    server {
        listen 127.0.0.1:$port;
        location = /items { default_type application/json; alias $dir/items.json; }
        location = /big.bin { default_type application/octet-stream; alias $dir/big.bin; }
    }
}
CONF
"$nginx" -c "$dir/nginx.conf" -e "$dir/error.log"
for _ in $(seq 50); do
    [ -f "$dir/nginx.pid" ] && break
    sleep 0.1
done

[ "$filter" = "Monitor cost" ] || [ "$filter" = "Stream 1 GiB" ] || STRATA_BENCH_SERVER="http://127.0.0.1:$port" scripts/bench.sh "$filter"

# What each observability monitor costs a GET over each transport (see scripts/bench.sh).
if [[ "Monitor cost" =~ $filter ]]; then
    swift build -c release --package-path Benchmarks --product MonitorCost >"$dir/build.log" 2>&1 ||
        { cat "$dir/build.log"; exit 1; }
    binary="$(swift build -c release --package-path Benchmarks --show-bin-path)/MonitorCost"
    for transport in urlsession ahc; do
        echo
        if [ "${BENCH_SMOKE:-0}" = 1 ]; then
            "$binary" loopback "$transport" "http://127.0.0.1:$port" 20 1
        else
            "$binary" loopback "$transport" "http://127.0.0.1:$port" 500 9
        fi
    done
fi

# 1 GiB streamed to a consumer that counts it over AsyncHTTPClient: AsyncHTTPClient's own
# `response.body` against Strata's stream, read with `for try await` and through the callback API,
# over one client, in turn, the order turning each round (Benchmarks/Sources/StreamProbe). The file
# is sparse: nginx reads it from the page cache, so the disk plays no part.
if [[ "Stream 1 GiB" =~ $filter ]]; then
    swift build -c release --package-path Benchmarks --product StreamProbe >"$dir/build.log" 2>&1 ||
        { cat "$dir/build.log"; exit 1; }
    truncate -s "$([ "${BENCH_SMOKE:-0}" = 1 ] && echo 8M || echo 1G)" "$dir/big.bin"
    chmod a+r "$dir/big.bin"
    echo
    echo "Stream 1 GiB over AsyncHTTPClient from nginx:"
    "$(swift build -c release --package-path Benchmarks --show-bin-path)/StreamProbe" both \
        "http://127.0.0.1:$port/big.bin" "$([ "${BENCH_SMOKE:-0}" = 1 ] && echo 1 || echo 9)" | grep '^median'
fi
