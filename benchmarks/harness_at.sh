#!/usr/bin/env bash
# The independent harness's three commands (../shared/bench/side_by_side.sh: bare AsyncOpenAI + semaphore via its
# raw_bench.py, then `metaeval sweep` on serial and on ray_local, all against its fake_openai.py) at a chosen
# number of requests in flight: that script fixes 32; this one sets raw_bench's semaphore and the judge's
# deployment.limits.concurrency to CONC.  Prints one line per run, as that script does.
# usage, from the project root: benchmarks/harness_at.sh CONC [LAT] [REPS]
set -u
CONC=${1:?usage: benchmarks/harness_at.sh CONC [LAT] [REPS]}; LAT=${2:-0.2}; REPS=${3:-3}
SHARED=${METAEVAL_SHARED_DATA:-$(cd "$(dirname "$0")/../.." && pwd)/shared/data}
BENCH=$SHARED/../bench; NIST=$SHARED/trec-rag-2024/nugget_assignment.20241108.jl
export RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 RAY_AUTH_MODE=disabled
w=$(mktemp -d); python3 "$BENCH/fake_openai.py" "$w/port" auto "$LAT" & srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$w"' EXIT
for _ in $(seq 50); do [ -s "$w/port" ] && break; sleep 0.1; done
export OPENAI_BASE_URL=http://127.0.0.1:$(cat "$w/port")/v1 OPENAI_API_KEY=sk-x
ts() { date +%s.%N; }
for r in $(seq "$REPS"); do
  t0=$(ts); .venv/bin/python "$BENCH/raw_bench.py" "$NIST" "$CONC" "$LAT" >"$w/raw.txt"; t1=$(ts)
  echo "rep $r bare-sdk-$CONC: $(cat "$w/raw.txt") process $(echo "$t1 - $t0" | bc) s"
  for rt in serial ray_local; do
    t0=$(ts)
    .venv/bin/metaeval sweep grid=single judge=vllm judge.deployment.base_url="$OPENAI_BASE_URL" \
      judge.deployment.limits.concurrency="$CONC" strategy=human_auto dataset=trec-rag-2024 dataset.source="$NIST" \
      runtime=$rt cache=off name=h_${rt}_$r results_dir="$w/res" sweep.progress=false >"$w/m.txt" 2>&1; rc=$?; t1=$(ts)
    echo "rep $r metaeval-$rt-$CONC: rc=$rc process $(echo "$t1 - $t0" | bc) s; $(grep -o 'Wall time[^.]*\.[0-9]* s (judging [0-9.]* s)\.\( Start-up [0-9.]* s ([^;]*\)\?' "$w/m.txt")"
  done
done
