#!/usr/bin/env bash
# The change-point search's figures (issue 49; quoted in docs/results.md), on simulated series:
#  - pure noise in all 8 figures of a series (KB_NOISE_SERIES series, default 5 000): the share
#    with a change point in any figure, which Holm holds to α;
#  - one figure of pure noise, and one shift of 1σ, 2σ and 3σ in 30–200 points
#    (KB_SHIFT_SERIES a case, default 500): found alone within ±1, at α and at α/8;
#  - Apache Otava 0.8.0's default analysis on the very same series (set OTAVA_PYTHON to a Python
#    that imports otava, e.g. a venv with `pip install apache-otava==0.8.0`; skipped without);
#  - the tail's p-values against 200 000 permutations, and the cost of a 200-point series with
#    199 permutations (the search before Holm) and with 999, back to back.
# Every part prints its runtime. Not in CI: about ten minutes on 2 cores, run under
# /tmp/kb-heavy.lock (KB_HEAVY_LOCK) so that no other heavy work shares the machine.
#
# usage: bench/changepoint.sh     OUT=DIR keeps the exported series (default: a temp dir);
#                                 PROFILE=quick builds without LTO (default: release)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
export KB_CHANGEPOINT_EXPORT="$out/series.jsonl"
echo "series in $KB_CHANGEPOINT_EXPORT; machine: $(nproc) cores, $(uptime)"
# Built first; the timed parts run under the machine's heavy-work lock, one at a time.
cargo test --profile "${PROFILE:-release}" --quiet --lib --no-run
lock=${KB_HEAVY_LOCK:-/tmp/kb-heavy.lock}
start=$(date +%s)
flock "$lock" cargo test --profile "${PROFILE:-release}" --quiet --lib measure::changepoint:: \
  -- --ignored --nocapture --test-threads=1 2>&1 | grep -v '^test \|^running\|^$\|test result'
echo "kafkabench: $(($(date +%s) - start)) s"
if [ -n "${OTAVA_PYTHON:-}" ]; then
  flock "$lock" "$OTAVA_PYTHON" bench/changepoint/otava_compare.py "$KB_CHANGEPOINT_EXPORT"
else
  echo "Otava skipped: set OTAVA_PYTHON to a Python with apache-otava 0.8.0"
fi
echo "machine after: $(uptime)"
