#!/usr/bin/env bash
# steady_after against the local broker (issue 37, part 3): each scenario in bench/steady/
# run REPS times at 250 ms intervals; prints each run's steady_after. Not in CI: a minute per
# scenario and rep. Usage: bench/steady.sh [REPS] (needs a broker at 127.0.0.1:9092).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
bin=target/release/kafkabench
cargo build --release --quiet
out=$(mktemp -d)
for f in bench/steady/*.kbs; do
  for r in $(seq 1 "$reps"); do
    "$bin" run "$f" --quiet --interval 250ms --json "$out/r.json" >/dev/null || true
    python3 - "$f" "$r" "$out/r.json" <<'PY'
import json, sys
f, r, path = sys.argv[1:]
for run in json.load(open(path))["runs"]:
    print(f"{f} rep {r}: elapsed {run['elapsed_secs']:.1f}s steady_after {json.dumps(run.get('steady_after'))}")
PY
  done
done
