#!/usr/bin/env bash
# Instructions per record of kafkabench's own threads, before against after (bench/README.md,
# "The producer's cost per record" for the method): each workload run under
# `valgrind --tool=callgrind --separate-threads=yes` at two sizes, and the thread that runs the
# workload's loop found by its function (the producer thread: `run::producer::run`; the
# consumer thread: `run::consumer::`). Marginal = (Ir(large) − Ir(small)) / (large − small),
# which leaves out the client's creation and start-up.
#
#   producer  100 B records, no compression, unlimited rate, 3 partitions, no consumer
#   reader    a backlog of 100 B records, written before the clock, drained by one group
#             consumer (`consumers = 1`), every record's stamp verified
#   verifier  the producer's workload read back by the verification consumer (`consumer { }`)
#
#   bench/callgrind.sh [--small 100000] [--large 500000] [--only producer|reader|verifier]
#                      [--partitions 3] [--out DIR] BINARY...
#
# --partitions sets the topic's partition count (3 by default): at 1 000, the producer's
# per-partition recording (issue 52) is measured against a build without it.
#
# Every BINARY is counted on the same workloads (e.g. the build before a change and after it).
# A consumer's thread idle-polls until the first record, a fixed cost that varies by tens of
# millions of instructions: smaller sizes than the defaults make its marginal unstable.
# Uses the broker at KAFKA_BOOTSTRAP, or starts the local one. Writes DIR/results.md.
set -euo pipefail
cd "$(dirname "$0")/.."
small=100000
large=500000
partitions=3
only=()
bins=()
out="bench/out/callgrind-$(date +%Y%m%d-%H%M%S)"
while [ $# -gt 0 ]; do
  case "$1" in
    --small) small="${2:?--small needs a count}"; shift 2 ;;
    --large) large="${2:?--large needs a count}"; shift 2 ;;
    --only) only+=("${2:?--only needs a workload}"); shift 2 ;;
    --out) out="${2:?--out needs a directory}"; shift 2 ;;
    --partitions) partitions="${2:?--partitions needs a count}"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "callgrind.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    *) bins+=("$1"); shift ;;
  esac
done
[ ${#bins[@]} -gt 0 ] || { echo "callgrind.sh: name at least one kafkabench binary" >&2; exit 2; }
[ ${#only[@]} -gt 0 ] || only=(producer reader verifier)
command -v valgrind >/dev/null || { echo "callgrind.sh needs valgrind" >&2; exit 2; }
mkdir -p "$out"
# shellcheck source=../scripts/broker-env
. scripts/broker-env
kb_ensure_broker || exit 3
trap 'if [ "$KB_STARTED_BROKER" = 1 ]; then scripts/kafka-local down >&2 || true; fi' EXIT
bootstrap="${KAFKA_BOOTSTRAP:-127.0.0.1:9092}"
producer='linger.ms = 5  batch.size = 1000000  acks = 1'

# `scenario WORKLOAD N FILE`
scenario() {
  local body
  case "$1" in
    producer) body="workload { messages = $2  rate = unlimited  payload = random(size: 100B) }" ;;
    reader) body="consumer { }
  workload { messages = 0  backlog = $2  consumers = 1  payload = random(size: 100B) }" ;;
    verifier) body="consumer { }
  workload { messages = $2  rate = unlimited  payload = random(size: 100B) }" ;;
  esac
  cat >"$3" <<KBS
scenario "callgrind_$1" {
  cluster { bootstrap = "$bootstrap" }
  topic "callgrind-$1" { partitions = $partitions }
  producer { $producer }
  $body
}
KBS
}

# `count BINARY WORKLOAD N`: the Ir of the workload's thread.
count() {
  local bin=$1 w=$2 n=$3 dir pattern
  dir=$(mktemp -d "$out/cg-XXXX")
  scenario "$w" "$n" "$dir/s.kbs"
  case "$w" in
    producer) pattern='run::producer::run' ;;
    *) pattern='run::consumer::' ;;
  esac
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$dir/cg.out.%p" \
    "$bin" run "$dir/s.kbs" --quiet >"$dir/run.txt" 2>"$dir/valgrind.txt" || {
    echo "callgrind.sh: $bin $w $n failed, see $dir" >&2
    return 1
  }
  # The thread whose profile holds the loop's function; its total instructions.
  local best=0 f ir
  for f in "$dir"/cg.out.*; do
    grep -q "$pattern" "$f" || continue
    ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$f" | head -1)
    [ -n "$ir" ] && [ "$ir" -gt "$best" ] && best=$ir
  done
  echo "$best"
}

{
  echo "# bench/callgrind.sh, $(date -u +%Y-%m-%dT%H:%MZ): $small and $large records, $partitions partitions"
  echo
  echo "| workload | binary | Ir at $small | Ir at $large | Ir per record (marginal) |"
  echo "|---|---|---:|---:|---:|"
} >"$out/results.md"
for w in "${only[@]}"; do
  for bin in "${bins[@]}"; do
    a=$(count "$bin" "$w" "$small")
    b=$(count "$bin" "$w" "$large")
    per=$(python3 -c "print(f'{($b - $a) / ($large - $small):,.0f}')")
    echo "| $w | \`$bin\` | $a | $b | $per |" | tee -a "$out/results.md"
  done
done
echo "results in $out"
