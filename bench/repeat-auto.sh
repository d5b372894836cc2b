#!/usr/bin/env bash
# `repeat = auto(±5%, max 20)` on the local broker (issue 37, part 4; the figures are in
# docs/results.md): a quiet scenario (a paced run, bench/repeat-auto/quiet.kbs) and a noisy one
# (an unlimited burst, bench/repeat-auto/noisy.kbs), each run REPS times; prints how many trials
# each used, the interval reached and why it stopped. The quiet one should stop sooner.
#
# usage: bench/repeat-auto.sh [REPS]     (default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-1}
bin=${KAFKABENCH:-target/release/kafkabench}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
echo "results in $out; load before: $(cut -d' ' -f1-3 /proc/loadavg)"

for i in $(seq 1 "$reps"); do
  for kind in quiet noisy; do
    "$bin" run "bench/repeat-auto/$kind.kbs" --quiet --json "$out/$kind-$i.json" >/dev/null
    jq -r --arg kind "$kind" '.runs[0] | .trials as $t |
      "\($kind): \($t.results | length) trials, throughput \(.throughput_msgs | floor)/s, reached ±\(($t.auto.reached // 0) * 1000 | round / 10)% (\($t.auto.stop)); looks \($t.auto.looks | map(tostring) | join(","))"' \
      "$out/$kind-$i.json"
  done
done
