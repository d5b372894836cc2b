#!/usr/bin/env bash
# The full-scale cold read (issue 38): scenarios/cold_reads.kbs without --scale, a 1 GiB
# backlog replayed from tiered storage while a producer writes 5 000 records/s, beside a run
# without the replay. About 4 minutes and 2 GiB of disk here. CI runs the same scenario at
# --scale 0.1 (tests/scenarios.rs); its table for this machine is in docs/results.md.
#
#   bench/cold_reads.sh                      # the table, and bench/cold_reads/cold_reads-1.json
#   bench/cold_reads.sh --reps 3             # three times, one result file each
#
# Uses the broker at KAFKA_BOOTSTRAP (it needs remote storage), or starts the local one with
# --tiered (and stops it afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=1
case "${1:-}" in
  --reps) reps=${2:?--reps needs a count} ;;
  -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
mkdir -p bench/cold_reads
for ((i = 1; i <= reps; i++)); do
  target/release/kafkabench run scenarios/cold_reads.kbs --quiet --json "bench/cold_reads/cold_reads-$i.json"
done
