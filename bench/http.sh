#!/usr/bin/env bash
# Measures POST /api/playground/exec (a SET) against GET /healthz on the same
# server with wrk, one after the other, and prints the ratio. The playground
# target is at least half the throughput of /healthz.
# Usage: bench/http.sh [seconds] [connections]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
conns=${2:-32}
command -v wrk >/dev/null || { echo "wrk is not installed (Debian: apt-get install wrk)" >&2; exit 1; }
bin=$(mktemp -d)/locklab
go build -o "$bin" ./cmd/locklab
port=18181
data=$(mktemp -d)
# The per-learner rate limit is policy, not capacity: off for this measure.
"$bin" -addr 127.0.0.1:$port -data "$data" -log-format json -rate-limit 0 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$data" "$(dirname "$bin")"' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
rps() { awk '/Requests\/sec/ {print $2}'; }
health=$(wrk -t2 -c"$conns" -d"${secs}s" "http://127.0.0.1:$port/healthz" | tee /dev/stderr | rps)
execs=$(LEARNER=benchlearner0123456789 wrk -t2 -c"$conns" -d"${secs}s" -s bench/exec.lua "http://127.0.0.1:$port/api/playground/exec" | tee /dev/stderr | rps)
echo "healthz: $health req/s; exec SET: $execs req/s; ratio: $(awk -v a="$execs" -v b="$health" 'BEGIN {printf "%.2f", a/b}')"
