#!/usr/bin/env bash
# A history with a real change at a known point (issue 37; the figures are in docs/results.md).
#
# bench/history/linger.kbs runs RUNS times on the local broker, one result file each, with
# `linger.ms` 0 for runs 0 … CHANGE_AT-1 and 20 from run CHANGE_AT on (the change point is
# result #CHANGE_AT+1, counted from 1). `kafkabench history` over the directory must find a
# change point there (±1) and no other, in any figure. Files already in the directory are
# kept, so an interrupted history resumes where it stopped.
#
# usage: bench/history.sh [RUNS] [CHANGE_AT] [REPEAT]     (defaults 40, 25, 3)
#   OUT=DIR       where the history and the report go (default: a fresh temp dir)
#   FIXTURE=DIR   also write the history trimmed (no histograms, time series or client
#                 configuration) and gzipped to DIR: tests/fixtures/history/linger is made so
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-40} change_at=${2:-25} repeat=${3:-3}
bin=${KAFKABENCH:-target/release/kafkabench}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out/history"
echo "results in $out"

for i in $(seq 0 $((runs - 1))); do
  file=$(printf '%s/history/run-%03d.json' "$out" "$i")
  [ -e "$file" ] && continue
  linger=0
  [ "$i" -ge "$change_at" ] && linger=20
  KB_LINGER=$linger "$bin" run bench/history/linger.kbs --quiet --repeat "$repeat" \
    --json "$file" >/dev/null
  echo "run $i: linger.ms $linger, load before it $(jq .environment.host.load "$file")"
done

echo
status=0
"$bin" history "$out/history" --json "$out/history.json" --html "$out/history.html" || status=$?
echo "kafkabench history exited $status; the page is $out/history.html"

# Every change point of every figure, as results counted from 1.
found=$(jq -r '[.series[].figures[].change_points[].index + 1] | unique | map(tostring) | join(" ")' \
  "$out/history.json")
want=$((change_at + 1))
others=$(jq -r --argjson w "$want" \
  '[.series[].figures[].change_points[] | select((.index + 1 - $w) | fabs > 1) | .index + 1] | unique | map(tostring) | join(" ")' \
  "$out/history.json")
if [ -n "$found" ] && [ -z "$others" ]; then
  echo "PASS: the change at result #$want found (change points at #$found), and no other"
else
  echo "FAIL: the change is at result #$want; change points at #${found:-none}${others:+, others at #$others}"
fi

if [ -n "${FIXTURE:-}" ]; then
  mkdir -p "$FIXTURE"
  rm -f "$FIXTURE"/run-*.json.gz
  for f in "$out"/history/run-*.json; do
    jq -c 'walk(if type == "object" then
        del(.series)
        | (if has("histogram") then .histogram = null else . end)
        | (if has("producer_config") then .producer_config = [] else . end)
        | (if has("raw") then .raw = null else . end)
      else . end)' "$f" | gzip -9n >"$FIXTURE/$(basename "$f").gz"
  done
  echo "fixture: $(ls "$FIXTURE"/run-*.json.gz | wc -l) files, $(du -sh "$FIXTURE" | cut -f1) in $FIXTURE"
fi
