# shellcheck shell=bash
# `sharded NAME FILE [COLLECT-ARGS…]`: FILE run by $shards `run --shard I/$shards` processes and
# a `collect` (given COLLECT-ARGS), into $out/NAME.json, each process's output in $out/NAME*.txt.
# Needs $kb, $out and $shards. Sourced by the bench scripts that run across shards.
sharded() {
  local name=$1 file=$2 id pids=() i status=0
  shift 2
  id="sb$$${name//[^a-z0-9]/}"
  $kb collect "$file" --run-id "$id" --shards "$shards" --json "$out/$name.json" "$@" \
    >"$out/$name.txt" 2>&1 &
  local collector=$!
  for ((i = 0; i < shards; i++)); do
    $kb run "$file" --quiet --shard "$i/$shards" --run-id "$id" >"$out/$name-shard$i.txt" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || status=$?; done
  wait "$collector" || status=$?
  return "$status"
}
