#!/usr/bin/env bash
# The independent harness's serial sweep, two code trees side by side in one run: per rep the bare AsyncOpenAI
# script (../shared/bench/raw_bench.py, the ceiling), then `metaeval sweep` (NIST, human_auto, runtime=serial,
# cache off) from OLD_TREE, then from this checkout, all against ../shared/bench/fake_openai.py at LAT s with CONC
# requests in flight.  OLD_TREE: a checkout of the commit to compare with (`git worktree add /tmp/old <commit>`),
# run with this checkout's .venv and PYTHONPATH=OLD_TREE.  Prints one line per run: process wall seconds and the
# sweep's own "Wall time ... (judging ...)".
# usage, from the project root: benchmarks/harness_ab.sh OLD_TREE [CONC] [LAT] [REPS]
set -u
OLD=$(cd "${1:?usage: benchmarks/harness_ab.sh OLD_TREE [CONC] [LAT] [REPS]}" && pwd); CONC=${2:-32}; LAT=${3:-0.2}
REPS=${4:-3}; NEW=$(pwd); PY=$NEW/.venv/bin/python
SHARED=${METAEVAL_SHARED_DATA:-$(cd "$(dirname "$0")/../.." && pwd)/shared/data}
BENCH=$SHARED/../bench; NIST=$SHARED/trec-rag-2024/nugget_assignment.20241108.jl
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_AUTH_MODE=disabled METAEVAL_SHARED_DATA=$SHARED
w=$(mktemp -d); python3 "$BENCH/fake_openai.py" "$w/port" auto "$LAT" & srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$w"' EXIT
for _ in $(seq 50); do [ -s "$w/port" ] && break; sleep 0.1; done
export OPENAI_BASE_URL=http://127.0.0.1:$(cat "$w/port")/v1 OPENAI_API_KEY=sk-x
ts() { date +%s.%N; }
for r in $(seq "$REPS"); do
  t0=$(ts); "$PY" "$BENCH/raw_bench.py" "$NIST" "$CONC" "$LAT" >/dev/null; t1=$(ts)
  echo "rep $r bare $(echo "$t1 - $t0" | bc)"
  for tree in "$OLD" "$NEW"; do
    t0=$(ts)
    (cd "$tree" && PYTHONPATH=$tree "$PY" -m metaeval sweep grid=single judge=vllm judge.deployment.base_url="$OPENAI_BASE_URL" \
      judge.deployment.limits.concurrency="$CONC" strategy=human_auto dataset=trec-rag-2024 dataset.source="$NIST" \
      runtime=serial cache=off name=ab_$r results_dir="$w/res_${r}_$(basename "$tree")" sweep.progress=false) >"$w/m.txt" 2>&1
    rc=$?; t1=$(ts)
    echo "rep $r $([ "$tree" = "$OLD" ] && echo old || echo new) rc=$rc $(echo "$t1 - $t0" | bc) $(grep -o 'Wall time[^.]*\.[0-9]* s (judging [0-9.]* s)' "$w/m.txt")"
  done
done
