#!/usr/bin/env bash
# The full-scale churn and compaction runs (issue 38): scenarios/group_protocols.kbs (members
# leaving and rejoining under four group protocol settings), scenarios/group_scale_out.kbs
# (a group growing from 2 to 6 members) and scenarios/compacted_topic.kbs (a changelog after
# forced compaction), without --scale. About 10 minutes here. CI runs the same scenarios at
# --scale 0.1 (tests/scenarios.rs); their tables for this machine are in docs/results.md.
#
#   bench/churn.sh                # the tables, and bench/churn/<scenario>-1.json
#   bench/churn.sh --reps 2       # twice, one result file each
#
# Uses the broker at KAFKA_BOOTSTRAP, or starts the local one (and stops it afterwards). The
# consumer_1s steps need the broker to allow a 1 s heartbeat
# (group.consumer.min.heartbeat.interval.ms = 1000, as scripts/kafka-local sets).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=1
case "${1:-}" in
  --reps) reps=${2:?--reps needs a count} ;;
  -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "unknown option: $1 (try --reps N)" >&2; exit 2 ;;
esac
cargo build --release --locked --quiet
# shellcheck source=../scripts/broker-env
. scripts/broker-env
kb_ensure_broker --tiered || exit 3
if [ "$KB_STARTED_BROKER" = 1 ]; then
  trap 'scripts/kafka-local down --wipe >&2' EXIT
fi
mkdir -p bench/churn
for ((i = 1; i <= reps; i++)); do
  for s in group_protocols group_scale_out compacted_topic; do
    target/release/kafkabench run "scenarios/$s.kbs" --json "bench/churn/$s-$i.json"
  done
done
