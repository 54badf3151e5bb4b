#!/usr/bin/env bash
# The mutation check: plausible one-line bugs, each of which must fail at least one test. The
# lists are tools/mutations/*.sh, one per area, each line `run NAME FILE SED-EXPR TEST-FILES...`. Each edit is made with sed, the tests that pin it run, and the file restored.
# By hand (a few minutes), never in CI:   bash tools/mutation_check.sh [tools/mutations/X.sh...]
# A line "NOT CAUGHT" is a hole in the tests; "changed nothing" means the code moved: update
# the sed expression.
set -u
cd "$(git rev-parse --show-toplevel)"
backup=$(mktemp)
LIMIT_S=${LIMIT_S:-300}
LIMIT_MB=${LIMIT_MB:-4096}
trap 'rm -f "$backup"' EXIT
run() { # name file sed-expr tests...
  local name=$1 file=$2 expr=$3; shift 3
  cp "$file" "$backup"
  sed -i "$expr" "$file"
  if cmp -s "$file" "$backup"; then echo "MUTATION $name: sed changed nothing (pattern moved?)"; return; fi
  # --no-check: a mutation is judged by the behaviour the tests see, not by the type checker
  # (with noUncheckedIndexedAccess a plausible edit often fails to type-check, which says nothing
  # of the tests).
  # A mutation may make a test loop or allocate without end (a mutated sort once took one to
  # 20 GB and the kernel's OOM killer): the run is stopped past LIMIT_S or LIMIT_MB, and a run
  # that never ends fails CI as surely as a failed assertion.
  local log; log=$(mktemp)
  NO_COLOR=1 deno test --no-check --unstable-no-legacy-abort --unstable-kv -A "$@" >"$log" 2>&1 &
  local pid=$! stopped="" ticks=0 rss
  while kill -0 "$pid" 2>/dev/null; do
    rss=$(ps -o rss= -p "$pid" 2>/dev/null || echo 0)
    if ((ticks >= LIMIT_S * 2)); then stopped="still running after ${LIMIT_S} s"
    elif ((${rss:-0} > LIMIT_MB * 1024)); then stopped="grew past ${LIMIT_MB} MB"
    fi
    if [ -n "$stopped" ]; then kill -9 "$pid" 2>/dev/null; break; fi
    sleep 0.5
    ticks=$((ticks + 1))
  done
  wait "$pid" 2>/dev/null
  out=$(cat "$log"); rm -f "$log"
  cp "$backup" "$file"
  if [ -n "$stopped" ]; then
    echo "MUTATION $name: caught: the tests never ended ($stopped)"
  elif grep -q "FAILED |" <<<"$out"; then
    echo "MUTATION $name: caught by: $(grep -E ' \.\.\. FAILED' <<<"$out" | sed -E 's/ \.\.\. FAILED.*//' | head -3 | paste -sd '|' -)"
  else echo "MUTATION $name: NOT CAUGHT"; fi
}
lists=("$@")
[ ${#lists[@]} -gt 0 ] || lists=(tools/mutations/*.sh)
for list in "${lists[@]}"; do
  # shellcheck source=/dev/null
  source "$list"
done
