#!/usr/bin/env bash
# The noise-aware gate on the local broker (issue 24; the figures are in docs/results.md).
#
# A/A: the same scenario (bench/noise/aa.kbs) run as baseline and as current, PAIRS times, each
# side with REPEAT trials; `compare --fail-on throughput:-5%` must call at least 95 % of the
# pairs "no change". The same pairs compared one trial against one trial (trial k of each side,
# the plain gate) show how often noise alone fails a single-run gate.
# A/B: linger.ms 0 (baseline) against 20 ms (current) on a paced run (bench/noise/ab.kbs): the
# gate must call ack.p50 worse and fail `--fail-on ack.p50:+10%`.
#
# usage: bench/noise.sh [PAIRS] [REPEAT] [AB_PAIRS]     (defaults 20, 6, 5)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-20} repeat=${2:-6} ab_pairs=${3:-5}
bin=${KAFKABENCH:-target/release/kafkabench}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
echo "results in $out"

# Trial k of every run of a result file, as a one-trial file: the plain gate's view.
single() { jq --argjson k "$2" '.runs |= map(.trials.results[$k] + {label: .label, index: .index})' "$1"; }

aa_nochange=0 aa_pairs=0 single_fail=0 single_pairs=0
for i in $(seq 1 "$pairs"); do
  for side in base cur; do
    "$bin" run bench/noise/aa.kbs --quiet --repeat "$repeat" --json "$out/aa-$side-$i.json" >/dev/null
  done
  aa_pairs=$((aa_pairs + 1))
  if "$bin" compare "$out/aa-base-$i.json" "$out/aa-cur-$i.json" --fail-on throughput:-5% \
      >"$out/aa-compare-$i.txt"; then
    aa_nochange=$((aa_nochange + 1))
  fi
  for k in $(seq 0 $((repeat - 1))); do
    single "$out/aa-base-$i.json" "$k" >"$out/aa-base-$i-t$k.json"
    single "$out/aa-cur-$i.json" "$k" >"$out/aa-cur-$i-t$k.json"
    single_pairs=$((single_pairs + 1))
    "$bin" compare "$out/aa-base-$i-t$k.json" "$out/aa-cur-$i-t$k.json" \
      --fail-on throughput:-5% >/dev/null || single_fail=$((single_fail + 1))
  done
  echo "A/A pair $i: trials gate passed $aa_nochange of $aa_pairs; single-trial gate failed $single_fail of $single_pairs"
done

ab_detected=0
for i in $(seq 1 "$ab_pairs"); do
  KB_LINGER=0 "$bin" run bench/noise/ab.kbs --quiet --repeat "$repeat" --json "$out/ab-base-$i.json" >/dev/null
  KB_LINGER=20 "$bin" run bench/noise/ab.kbs --quiet --repeat "$repeat" --json "$out/ab-cur-$i.json" >/dev/null
  if ! "$bin" compare "$out/ab-base-$i.json" "$out/ab-cur-$i.json" --fail-on ack.p50:+10% \
      >"$out/ab-compare-$i.txt"; then
    ab_detected=$((ab_detected + 1))
  fi
  grep ack.p50 "$out/ab-compare-$i.txt" | head -1
done
echo
echo "A/A: $aa_nochange of $aa_pairs pairs no change with $repeat trials a side (--fail-on throughput:-5%)"
echo "A/A: the single-trial gate failed $single_fail of $single_pairs one-trial pairs"
echo "A/B: linger 0 → 20 ms detected on ack.p50 in $ab_detected of $ab_pairs pairs"
