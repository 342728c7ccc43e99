# Shared by the bench/ scripts; sourced, not run.

# rps prints the requests per second of a wrk run, and fails the measure
# when some answers were errors (a refused request is measured as fast).
rps() {
  local out
  out=$(cat)
  if grep -q "Non-2xx" <<<"$out"; then
    echo "some answers were not 2xx: $(grep Non-2xx <<<"$out")" >&2
    exit 1
  fi
  awk '/Requests\/sec/ {print $2}' <<<"$out"
}

# freeport fails the measure when something already answers on port: a
# server left from an earlier run would be measured in place of ours.
freeport() {
  if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$1/"; then
    echo "port $1 is in use: stop what serves it first" >&2
    exit 1
  fi
}

# await waits until url answers 2xx, and fails the measure when the
# process pid (the server that should answer) has exited or url never
# answers.
await() {
  local url=$1 pid=$2
  for _ in $(seq 100); do
    curl -fs -o /dev/null "$url" && return 0
    kill -0 "$pid" 2>/dev/null || { echo "the server for $url exited" >&2; exit 1; }
    sleep 0.1
  done
  echo "$url never answered" >&2
  exit 1
}
