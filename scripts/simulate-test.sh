#!/bin/sh
# `tessera simulate` end to end: the hand-checked scenario's report files are exactly
# tests/scenarios/simulate-small/expected/ (test_sim checks the same timeline in the library),
# the HTML report is self-contained (SVG plots, no script, nothing fetched) and byte-identical
# run after run, usage errors say what is wrong, and (when ../shared/traces is there) ITP
# cluster04 runs whole with its 705,683 GPU-hours accounted for.
set -u
T=${1:-build/tessera}
S=tests/scenarios/simulate-small
fail() { echo "simulate-test: $*"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run() { "$T" simulate --trace $S/trace.csv --nodes 2x8 --queues $S/queues.yaml --report "$1" >"$1.out" 2>&1; }
run "$dir/a" || fail "simulate failed: $(cat "$dir/a.out")"
for f in jobs.csv timeline.csv queues.csv summary.json; do
  diff -u "$S/expected/$f" "$dir/a/$f" || fail "$f differs from $S/expected/$f"
done
grep -q 'GPU utilisation 81.4% (time-weighted)' "$dir/a.out" || fail "summary: $(cat "$dir/a.out")"
html="$dir/a/report.html"
[ "$(grep -c '<svg ' "$html")" = 4 ] || fail "report.html: want 4 plots"
grep -qi '<script' "$html" && fail "report.html has a script"
grep -Eq '(src|href)="?(https?:)?//' "$html" && fail "report.html fetches something"
grep -q '81.4%' "$html" || fail "report.html does not give the utilisation"
grep -q 'Fair sharing is off' "$html" || fail "report.html: weights drawn though fair sharing is off"
grep -q '<td>team-a</td><td>2</td><td>2</td><td>0</td><td>1</td>' "$html" || fail "report.html: team-a's row"
run "$dir/b" || fail "second run failed"
cmp -s "$html" "$dir/b/report.html" || fail "report.html differs between two runs"
"$T" simulate --trace $S/trace.csv --nodes 2x8 --queues $S/queues.yaml --output json >"$dir/j" ||
  fail "--output json failed"
grep -q '"utilisation": 0.814453125' "$dir/j" || fail "JSON: $(head -c 300 "$dir/j")"
# --policy all: every policy on the same inputs, a table and a report per policy.
"$T" simulate --trace $S/trace.csv --nodes 2x8 --queues $S/queues.yaml --policy all --report "$dir/all" >"$dir/all.out" ||
  fail "--policy all failed"
for p in binpack spread first-fit best-fit dot-product gpu-packing fgd; do
  grep -q "^$p  *81.4%" "$dir/all.out" || fail "--policy all: no row for $p: $(cat "$dir/all.out")"
  [ -f "$dir/all/$p/report.html" ] || fail "--policy all: no report for $p"
done
grep -q '"policy": "first-fit"' "$dir/all/first-fit/summary.json" || fail "first-fit's summary"
# --cluster: the bundled example cluster, whose GPU nodes are tainted nvidia.com/gpu:NoSchedule
# as the GPU operator leaves them; the trace's GPU pods tolerate it as the API server's
# ExtendedResourceToleration admission makes them, and run.
"$T" simulate --trace $S/trace.csv --cluster examples/cluster --report "$dir/c" >"$dir/c.out" ||
  fail "--cluster failed: $(cat "$dir/c.out")"
grep -q 'cluster 48 GPUs' "$dir/c.out" || fail "--cluster: $(head -1 "$dir/c.out")"
# b1 and a2 fit beside the cluster's running jobs (a1, two whole 8-GPU nodes, does not).
grep -q '^b1,team-b,10,10,10,60,0$' "$dir/c/jobs.csv" && grep -q '^a2,team-a,20,20,20,50,0$' "$dir/c/jobs.csv" ||
  fail "--cluster: jobs not run: $(cat "$dir/c/jobs.csv")"
# --config: fair sharing on in tessera.yaml reaches the run (weight lines drawn, summary says so).
printf 'apiVersion: tessera.dev/v1alpha1\nkind: SchedulerConfiguration\nqueueing: {fairSharing: {enable: true}}\n' >"$dir/fs.yaml"
"$T" simulate --trace $S/trace.csv --nodes 2x8 --queues $S/queues.yaml --config "$dir/fs.yaml" --report "$dir/fs" >/dev/null ||
  fail "--config failed"
grep -q '"fairSharing": true' "$dir/fs/summary.json" || fail "--config: fair sharing not on"
grep -q 'Fair sharing is off' "$dir/fs/report.html" && fail "--config: report says fair sharing is off"
# --nodes NxG:MODEL labels the nodes with the model, which an openb pod's gpu_spec selects.
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np,1000,1024,1,1000,A100|H100,LS,Running,0,100,0\n' >"$dir/spec.csv"
"$T" simulate --trace "$dir/spec.csv" --nodes 1x8:A100 --report "$dir/m1" >/dev/null || fail "--nodes MODEL failed"
"$T" simulate --trace "$dir/spec.csv" --nodes 1x8:T4 --report "$dir/m2" >/dev/null || fail "--nodes MODEL failed"
grep -q '^p,LS,0,0,0,100,0$' "$dir/m1/jobs.csv" || fail "gpu_spec A100|H100 on A100 nodes: $(cat "$dir/m1/jobs.csv")"
grep -q '^p,LS,0,-1,-1,-1,0$' "$dir/m2/jobs.csv" || fail "gpu_spec A100|H100 on T4 nodes: $(cat "$dir/m2/jobs.csv")"
# Usage and input errors: status 2 and a message naming the problem.
err=$("$T" simulate --trace $S/trace.csv --nodes 2x8 --policy worst-fit 2>&1)
[ $? -eq 2 ] && echo "$err" | grep -q -- '--policy worst-fit: not understood' || fail "bad --policy: $err"
err=$("$T" simulate --trace $S/trace.csv 2>&1)
[ $? -eq 2 ] || fail "no cluster: want status 2"
echo "$err" | grep -q 'give --trace, and --nodes or --cluster' || fail "no cluster: $err"
err=$("$T" simulate --trace $S/trace.csv --nodes 8by8 2>&1)
[ $? -eq 2 ] && echo "$err" | grep -q -- '--nodes 8by8: not understood' || fail "bad --nodes: $err"
printf 'job_id,submit_s,duration_s,queue,num_pods,gpus_per_pod,gpu_mem_gib,priority\nj,0,x,q,1,1,,\n' >"$dir/bad.csv"
err=$("$T" simulate --trace "$dir/bad.csv" --nodes 1x8 2>&1)
[ $? -eq 2 ] && echo "$err" | grep -q 'bad.csv:2: duration_s: must be a number of seconds' || fail "bad trace: $err"
ITP=../shared/traces/itp/itp_cluster04_replay.csv
if [ -f "$ITP" ]; then
  "$T" simulate --trace "$ITP" --nodes 128x8 --output json >"$dir/itp" || fail "ITP cluster04 failed"
  grep -q '"done": 15802' "$dir/itp" || fail "ITP: not every job finished"
  grep -Eq '"gpuHours": 70568[23]\.' "$dir/itp" || fail "ITP: GPU-hours $(grep gpuHours "$dir/itp" | head -1)"
fi
exit 0
