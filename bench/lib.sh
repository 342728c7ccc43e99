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
