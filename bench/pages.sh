#!/usr/bin/env bash
# Measures the course pages (home, lesson, race) against the same bytes
# served from memory by a bare net/http server (bench/samebytes), with wrk
# in alternating rounds (each side first in every other round), for a
# visitor without a cookie and for a learner with progress (one question
# of the lesson's quiz answered right, one wrong). Prints each round's
# ratio, and per page and visitor the median ratio and the spread (lowest
# and highest). The target is 0.8.
# Usage: bench/pages.sh [seconds] [connections] [rounds] [-- server flags]
# LOCKLAB_BIN=path measures that locklab binary instead of building one
# (for example an older build, to compare).
# SAME_HEADERS=1 has the yardstick send Lock Lab's headers with the bytes
# (samebytes -headers), to tell what the security headers, Cache-Control
# and Vary cost apart from Lock Lab's own work.
# AT_ONCE=1 loads both sides at the same time, each with half of wrk's
# threads and connections, so that whatever else the machine does in a
# round slows both alike: on a shared machine whose speed drifts from one
# second to the next, the ratio then varies far less from round to round
# than when the sides take turns.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
conns=${2:-32}
rounds=${3:-5}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = "--" ] && shift
for tool in wrk curl jq; do
  command -v $tool >/dev/null || { echo "$tool is not installed (Debian: apt-get install $tool)" >&2; exit 1; }
done
tmp=$(mktemp -d)
if [ -n "${LOCKLAB_BIN:-}" ]; then
  cp "$LOCKLAB_BIN" "$tmp/locklab"
else
  go build -o "$tmp/locklab" ./cmd/locklab
fi
go build -o "$tmp/samebytes" ./bench/samebytes
port=18182 visitor=18183 learner=18184
. bench/lib.sh
for p in $port $visitor $learner; do freeport $p; done
base=http://127.0.0.1:$port
mkdir "$tmp/data"
# The rate limits are policy, not capacity: off for this measure.
"$tmp/locklab" -addr 127.0.0.1:$port -data "$tmp/data" -log-format json -rate-limit 0 "$@" 2>/dev/null >/dev/null &
pids=$!
trap 'kill $pids 2>/dev/null; rm -rf "$tmp"' EXIT
await "$base/healthz" $pids

# A learner with progress: the first question right, the second wrong.
jar=$tmp/jar
topic=distributed-locks
curl -fs -c "$jar" -b "$jar" "$base/" >/dev/null
token=$(awk '$6 == "_csrf" {print $7}' "$jar")
quiz=$(curl -fs -c "$jar" -b "$jar" "$base/api/topics/$topic/quiz")
answer() { curl -fs -c "$jar" -b "$jar" -H "X-CSRF-Token: $token" -H 'Content-Type: application/json' \
  -d "{\"choice\":\"$2\"}" "$base/api/topics/$topic/quiz/$1" | jq -r .correct; }
q1=$(jq -r '.questions[0].id' <<<"$quiz")
for ch in $(jq -r '.questions[0].choices[].id' <<<"$quiz"); do
  [ "$(answer "$q1" "$ch")" = true ] && break
done
q2=$(jq -r '.questions[1].id' <<<"$quiz")
for ch in $(jq -r '.questions[1].choices[].id' <<<"$quiz"); do
  [ "$(answer "$q2" "$ch")" = false ] && break
done
cookie="locklab_learner=$(awk '$6 == "locklab_learner" {print $7}' "$jar"); _csrf=$token"
progress=$(curl -fs -b "$jar" "$base/api/topics/$topic/quiz" | jq -c .progress)
echo "learner: $progress"

pages=(/ /topics/$topic /race)
same=()
if [ "${SAME_HEADERS:-}" = 1 ]; then
  same=(-headers)
  echo "yardstick: the same bytes and headers"
fi
"$tmp/samebytes" -origin "$base" -addr 127.0.0.1:$visitor "${same[@]}" "${pages[@]}" 2>"$tmp/visitor.log" &
vpid=$!
"$tmp/samebytes" -origin "$base" -addr 127.0.0.1:$learner -cookie "$cookie" "${same[@]}" "${pages[@]}" 2>"$tmp/learner.log" &
lpid=$!
pids="$pids $vpid $lpid"
for p in "${pages[@]}"; do
  await "http://127.0.0.1:$visitor$p" $vpid
  await "http://127.0.0.1:$learner$p" $lpid
done
cat "$tmp/visitor.log"

load() { wrk -t2 -c"$conns" -d"$1" "${@:2}" | rps; }
# A short warm-up of both, so that the first round does not pay for it.
for p in "${pages[@]}"; do
  load 1s "$base$p" >/dev/null
  load 1s "http://127.0.0.1:$visitor$p" >/dev/null
done
declare -A ratios
for r in $(seq "$rounds"); do
  for p in "${pages[@]}"; do
    for who in visitor learner; do
      if [ $who = visitor ]; then
        hdr=() yard=http://127.0.0.1:$visitor$p
      else
        hdr=(-H "Cookie: $cookie") yard=http://127.0.0.1:$learner$p
      fi
      # Every other round measures the yardstick first, so that a drift of
      # the machine within a round favours neither side.
      if [ "${AT_ONCE:-}" = 1 ]; then
        half=(-t1 -c$((conns / 2)) -d"${secs}s" "${hdr[@]}")
        wrk "${half[@]}" "$base$p" >"$tmp/ours.out" &
        o=$!
        wrk "${half[@]}" "$yard" >"$tmp/bare.out" &
        y=$!
        wait $o $y
        ours=$(rps <"$tmp/ours.out")
        bare=$(rps <"$tmp/bare.out")
      elif ((r % 2)); then
        ours=$(load "${secs}s" "${hdr[@]}" "$base$p")
        bare=$(load "${secs}s" "${hdr[@]}" "$yard")
      else
        bare=$(load "${secs}s" "${hdr[@]}" "$yard")
        ours=$(load "${secs}s" "${hdr[@]}" "$base$p")
      fi
      ratio=$(awk -v a="$ours" -v b="$bare" 'BEGIN {printf "%.2f", a/b}')
      ratios[$p $who]="${ratios[$p $who]:-} $ratio"
      echo "round $r: $p, $who: locklab $ours req/s; same bytes $bare req/s; ratio $ratio"
    done
  done
done
for p in "${pages[@]}"; do
  for who in visitor learner; do
    printf '%s, %s: median ratio %s (%s)\n' "$p" $who \
      "$(tr ' ' '\n' <<<"${ratios[$p $who]}" | sed '/^$/d' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)] " from " a[1] " to " a[NR]}')" \
      "${ratios[$p $who]# }"
  done
done
echo "load: $(uptime | sed 's/.*load average: //')"
