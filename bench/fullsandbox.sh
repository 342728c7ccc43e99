#!/usr/bin/env bash
# Measures what a full sandbox costs the other learners of its worker: one
# learner fills their sandbox with 1,000 keys and sends GETs over 8
# connections, while a bystander in the same worker (one worker) sends
# GETs over one; prints the bystander's latency alone and meanwhile.
# Usage: bench/fullsandbox.sh [seconds]   (LOCKLAB_BIN=path: that build)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-4}
command -v wrk >/dev/null || { echo "wrk is not installed (Debian: apt-get install wrk)" >&2; exit 1; }
tmp=$(mktemp -d)
if [ -n "${LOCKLAB_BIN:-}" ]; then cp "$LOCKLAB_BIN" "$tmp/locklab"; else go build -o "$tmp/locklab" ./cmd/locklab; fi
port=18185
. bench/lib.sh
freeport $port
mkdir "$tmp/data"
# Limits off: the measure is the worker's, not the rate limiter's.
"$tmp/locklab" -addr 127.0.0.1:$port -data "$tmp/data" -log-format json -rate-limit 0 -ip-rate-limit 0 -sandbox-workers 1 2>/dev/null >/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
await "http://127.0.0.1:$port/healthz" $pid
url=http://127.0.0.1:$port/api/playground/exec
tok=BenchTokenAbcdefghijklmnopqrstuv
full=fullsandboxlearner0123 bystander=bystanderlearner012345
exec_line() { # learner line
  curl -fs -H 'Content-Type: application/json' -H "X-CSRF-Token: $tok" -H "Cookie: locklab_learner=$1; _csrf=$tok" \
    -d "{\"line\": \"$2\", \"client\": \"A\"}" "$url"
}
for i in $(seq 0 9); do
  line=MSET; for j in $(seq 0 99); do line="$line k$((i * 100 + j)) v"; done
  exec_line $full "$line" >/dev/null
done
case $(exec_line $full DBSIZE) in *'(integer) 1000'*) ;; *) echo "the sandbox was not filled" >&2; exit 1 ;; esac
exec_line $bystander "SET k7 v" >/dev/null
cat >"$tmp/get.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"line": "GET k7", "client": "A"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-CSRF-Token"] = "BenchTokenAbcdefghijklmnopqrstuv"
wrk.headers["Cookie"] = "locklab_learner=" .. os.getenv("LEARNER") .. "; _csrf=BenchTokenAbcdefghijklmnopqrstuv"
LUA
latency() { awk '/^ +50%/ {p50=$2} /^ +99%/ {p99=$2} /Requests\/sec/ {r=$2} END {printf "p50 %s, p99 %s, %s req/s", p50, p99, r}'; }
echo "bystander alone: $(LEARNER=$bystander wrk -t1 -c1 -d"${secs}s" --latency -s "$tmp/get.lua" "$url" | latency)"
LEARNER=$full wrk -t1 -c8 -d"$((secs + 2))s" -s "$tmp/get.lua" "$url" >"$tmp/full.out" &
sleep 1
echo "bystander meanwhile: $(LEARNER=$bystander wrk -t1 -c1 -d"${secs}s" --latency -s "$tmp/get.lua" "$url" | latency)"
wait $!
echo "full sandbox's GETs: $(awk '/Requests\/sec/ {print $2}' "$tmp/full.out") req/s"
