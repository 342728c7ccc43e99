#!/usr/bin/env bash
# Measures POST /api/playground/exec (a SET) against GET /healthz on the same
# server with wrk, in alternating rounds (each side first in every other
# round), and prints each round's ratio and the median and the spread. The
# playground target is at least 0.6 of the throughput of /healthz.
# Usage: bench/http.sh [seconds] [connections] [learners] [rounds] [-- server flags]
# With learners > 1 the SETs come from that many learners in turn (their
# sandboxes spread over the worker processes); the default is one learner.
# Server flags go to locklab, for example -- -sandbox-workers 0.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
conns=${2:-32}
learners=${3:-1}
rounds=${4:-5}
shift $(($# < 4 ? $# : 4))
[ "${1:-}" = "--" ] && shift
command -v wrk >/dev/null || { echo "wrk is not installed (Debian: apt-get install wrk)" >&2; exit 1; }
bin=$(mktemp -d)/locklab
# LOCKLAB_BIN=path measures that binary instead (an older build, to compare).
if [ -n "${LOCKLAB_BIN:-}" ]; then
  cp "$LOCKLAB_BIN" "$bin"
else
  go build -o "$bin" ./cmd/locklab
fi
port=18181
. bench/lib.sh
freeport $port
data=$(mktemp -d)
# The rate limits are policy, not capacity: off for this measure.
"$bin" -addr 127.0.0.1:$port -data "$data" -log-format json -rate-limit 0 "$@" 2>/dev/null >/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$data" "$(dirname "$bin")"' EXIT
await "http://127.0.0.1:$port/healthz" $pid
# The measured request must really run: a refused one (403, 429) would be
# measured as fast.
tok=BenchTokenAbcdefghijklmnopqrstuv
out=$(curl -fs -H 'Content-Type: application/json' -H "X-CSRF-Token: $tok" \
  -H "Cookie: locklab_learner=benchlearner0123456789; _csrf=$tok" \
  -d '{"line": "SET lock:invoice:7 3f9a1c PX 30000", "client": "A"}' "http://127.0.0.1:$port/api/playground/exec") || true
case $out in *'"output":"OK"'*) ;; *) echo "exec does not answer OK: $out" >&2; exit 1 ;; esac
# A short warm-up of both, so that the first round does not pay for it.
wrk -t2 -c"$conns" -d2s "http://127.0.0.1:$port/healthz" >/dev/null
LEARNERS=$learners wrk -t2 -c"$conns" -d2s -s bench/exec.lua "http://127.0.0.1:$port/api/playground/exec" >/dev/null
ratios=()
health() { wrk -t2 -c"$conns" -d"${secs}s" "http://127.0.0.1:$port/healthz" | rps; }
execs() { LEARNERS=$learners LEARNER=benchlearner0123456789 wrk -t2 -c"$conns" -d"${secs}s" -s bench/exec.lua "http://127.0.0.1:$port/api/playground/exec" | rps; }
for r in $(seq "$rounds"); do
  # Every other round measures exec first, so that a drift of the machine
  # within a round favours neither side.
  if ((r % 2)); then
    health=$(health)
    execs=$(execs)
  else
    execs=$(execs)
    health=$(health)
  fi
  ratio=$(awk -v a="$execs" -v b="$health" 'BEGIN {printf "%.2f", a/b}')
  ratios+=("$ratio")
  echo "round $r: healthz $health req/s; exec SET ($learners learners) $execs req/s; ratio $ratio"
done
echo "median ratio: $(printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)] " (from " a[1] " to " a[NR] ")"}')"
echo "load: $(uptime | sed 's/.*load average: //')"
