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
grep -q '<td>team-a</td><td>2</td><td>2</td><td>0</td><td>1</td>.*<td>8</td></tr>' "$html" || fail "report.html: team-a's row"
# Each team's nominal quota (8 GPUs, queues.yaml) is drawn dotted on the per-queue plot, whose
# axis goes to a round top holding the cluster's 16 GPUs: 0, 5, ... 20.
[ "$(grep -c 'class="quota"' "$html")" = 2 ] || fail "report.html: want a quota line per team"
grep -q 'y2="[0-9.]*" stroke="#1f77b4" class="quota"' "$html" || fail "report.html: team-a's quota line"
for v in 0 5 10 15 20; do grep -q "class=\"yl\">$v</text>" "$html" || fail "report.html: no round tick $v"; done
run "$dir/b" || fail "second run failed"
cmp -s "$html" "$dir/b/report.html" || fail "report.html differs between two runs"
"$T" simulate --trace $S/trace.csv --nodes 2x8 --queues $S/queues.yaml --output json >"$dir/j" ||
  fail "--output json failed"
grep -q '"utilisation": 0.814453125' "$dir/j" || fail "JSON: $(head -c 300 "$dir/j")"
# --policy all: every policy on the same inputs, a table and a report per policy.
"$T" simulate --trace $S/trace.csv --nodes 2x8 --queues $S/queues.yaml --policy all --report "$dir/all" >"$dir/all.out" ||
  fail "--policy all failed"
for p in binpack spread first-fit best-fit dot-product gpu-packing fgd random gpu-clustering; do
  grep -q "^$p  *81.4%" "$dir/all.out" || fail "--policy all: no row for $p: $(cat "$dir/all.out")"
  [ -f "$dir/all/$p/report.html" ] || fail "--policy all: no report for $p"
done
grep -q '"policy": "first-fit"' "$dir/all/first-fit/summary.json" || fail "first-fit's summary"
# ... and one page comparing them: every policy's GPUs in use on one plot, the tables.
idx="$dir/all/index.html"
[ "$(grep -c '<svg ' "$idx")" = 1 ] || fail "index.html: want one plot"
[ "$(grep -c '<polyline' "$idx")" = 9 ] || fail "index.html: want a line per policy"
for p in binpack spread first-fit best-fit dot-product gpu-packing fgd random gpu-clustering; do
  grep -q "<tr><td>$p</td><td>81.4%</td>" "$idx" || fail "index.html: no row for $p"
  grep -q "<th>$p</th>" "$idx" || fail "index.html: no wait column for $p"
done
grep -q '<tr><td>team-a</td><td>0.0 / 1.0</td>' "$idx" || fail "index.html: team-a's waits"
grep -qi '<script' "$idx" && fail "index.html has a script"
# Two configurations side by side: fair sharing on and spreading, on the same trace.
printf 'apiVersion: tessera.dev/v1alpha1\nkind: SchedulerConfiguration\nscoring: spread\n' >"$dir/spread.yaml"
printf 'apiVersion: tessera.dev/v1alpha1\nkind: SchedulerConfiguration\nqueueing: {fairSharing: {enable: true}}\n' >"$dir/fair.yaml"
two() { "$T" simulate --trace $S/trace.csv --nodes 2x8 --queues $S/queues.yaml --config "$dir/fair.yaml" --config "$dir/spread.yaml" --report "$1"; }
two "$dir/two" >"$dir/two.out" || fail "two --config failed: $(cat "$dir/two.out")"
grep -q '^fair.yaml  *81.4%' "$dir/two.out" && grep -q '^spread.yaml  *81.4%' "$dir/two.out" || fail "two --config: $(cat "$dir/two.out")"
grep -q '"fairSharing": true' "$dir/two/fair.yaml/summary.json" || fail "two --config: fair.yaml's run is not fair"
grep -q '"policy": "spread"' "$dir/two/spread.yaml/summary.json" || fail "two --config: spread.yaml's run does not spread"
grep -q '<tr><td>spread.yaml</td>' "$dir/two/index.html" || fail "two --config: index.html"
two "$dir/two2" >/dev/null && cmp -s "$dir/two/index.html" "$dir/two2/index.html" || fail "two --config: index.html differs between runs"
"$T" simulate --trace $S/trace.csv --nodes 2x8 --config "$dir/fair.yaml" --config "$dir/spread.yaml" -o json |
  grep -q '"config": ".*spread.yaml"' || fail "two --config -o json: no config named"
err=$("$T" simulate --trace $S/trace.csv --nodes 2x8 --config "$dir/fair.yaml" --config "$dir/none.yaml" 2>&1)
[ $? -eq 2 ] && echo "$err" | grep -q 'none.yaml: No such file' || fail "a missing second --config: $err"
err=$("$T" simulate --trace $S/trace.csv --nodes 2x8 --config a --config b --config c --config d --config e 2>&1)
[ $? -eq 2 ] && echo "$err" | grep -q -- '--config e: at most 4' || fail "a fifth --config: $err"
# --cluster: the bundled example cluster, whose GPU nodes are tainted nvidia.com/gpu:NoSchedule
# as the GPU operator leaves them; the trace's GPU pods tolerate it as the API server's
# ExtendedResourceToleration admission makes them, and run.
"$T" simulate --trace $S/trace.csv --cluster examples/cluster --report "$dir/c" >"$dir/c.out" ||
  fail "--cluster failed: $(cat "$dir/c.out")"
grep -q 'cluster 48 GPUs' "$dir/c.out" || fail "--cluster: $(head -1 "$dir/c.out")"
# b1 and a2 fit beside the cluster's running jobs (a1, two whole 8-GPU nodes, does not).
grep -q '^b1,team-b,10,10,10,60,0,4,,-1$' "$dir/c/jobs.csv" && grep -q '^a2,team-a,20,20,20,50,0,4,,-1$' "$dir/c/jobs.csv" ||
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
grep -q '^p,LS,0,0,0,100,0,1,,-1$' "$dir/m1/jobs.csv" || fail "gpu_spec A100|H100 on A100 nodes: $(cat "$dir/m1/jobs.csv")"
grep -q '^p,LS,0,-1,-1,-1,0,1,Unschedulable,-1$' "$dir/m2/jobs.csv" || fail "gpu_spec A100|H100 on T4 nodes: $(cat "$dir/m2/jobs.csv")"
# --seeds: every seed in a process of its own; each run is the one --seed N gives, and the
# table and JSON give mean and standard deviation per policy.
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,5,1000\np1,1000,1024,3,1000\np2,1000,1024,2,1000\np3,1000,1024,1,500\np4,1000,1024,1,250\n' >"$dir/fill.csv"
"$T" simulate --trace "$dir/fill.csv" --nodes 2x8 --fill --seeds 3 --policy first-fit >"$dir/s.out" ||
  fail "--seeds failed: $(cat "$dir/s.out")"
grep -q 'fill mode, seeds 1-3' "$dir/s.out" && grep -q '^first-fit  *3 ' "$dir/s.out" || fail "--seeds: $(cat "$dir/s.out")"
"$T" simulate --trace "$dir/fill.csv" --nodes 2x8 --fill --seeds 2-4 --policy all -o json >"$dir/s.json" ||
  fail "--seeds -o json failed"
[ "$(grep -o '"policy": "[a-z-]*"' "$dir/s.json" | sort -u | wc -l)" = 9 ] || fail "--seeds --policy all: not every policy"
"$T" simulate --trace "$dir/fill.csv" --nodes 2x8 --fill --seed 3 --policy fgd -o json >"$dir/one.json" ||
  fail "--seed 3 failed"
one=$(tr -d ' \n' <"$dir/one.json" | grep -o '"curve":\[[^]]*\]')
tr -d ' \n' <"$dir/s.json" | grep -q "$(printf '%s' "$one" | sed 's/[][]/\\&/g')" ||
  fail "--seeds: seed 3's run is not --seed 3's: $one"
# --seeds --report: the mean curves with error bars on one page, and the summary.
"$T" simulate --trace "$dir/fill.csv" --nodes 2x8 --fill --seeds 3 --policy all --report "$dir/sr" >/dev/null ||
  fail "--seeds --report failed"
[ "$(grep -c '<polyline' "$dir/sr/index.html")" = 9 ] || fail "--seeds --report: want a curve per policy"
grep -q 'class="bar"' "$dir/sr/index.html" || fail "--seeds --report: no error bars"
grep -q '"seeds": \[' "$dir/sr/seeds.json" || fail "--seeds --report: seeds.json"
# Fill mode's own report: the curve and the table.
"$T" simulate --trace "$dir/fill.csv" --nodes 2x8 --fill --report "$dir/fr" >/dev/null || fail "--fill --report failed"
[ "$(grep -c '<svg ' "$dir/fr/report.html")" = 1 ] && grep -q '<tr><td>binpack</td><td>5</td>' "$dir/fr/report.html" ||
  fail "--fill --report: report.html"
for bad in "--seeds 0" "--seeds 5-2" "--seeds x"; do
  err=$("$T" simulate --trace "$dir/fill.csv" --nodes 2x8 --fill $bad 2>&1)
  [ $? -eq 2 ] && echo "$err" | grep -q 'not understood' || fail "$bad: $err"
done
err=$("$T" simulate --trace "$dir/fill.csv" --nodes 2x8 --seeds 3 2>&1)
[ $? -eq 2 ] && echo "$err" | grep -q -- '--seeds goes with --fill' || fail "--seeds without --fill: $err"
# scripts/fgd-compare.sh: the paper's published mean and sd beside a saved --seeds table
# (bench/simulate/fgd-paper/unallocated.csv: default's FGD, seeds 42-51, 4.77 ± 0.11).
mkdir -p "$dir/fgd"
printf 'header\npolicy runs placed unallocated\nfgd 10 8348 ± 23.2 4.75 ± 0.13 4.69 ± 0.14 4.63 ± 0.13\nspread 10 8703 ± 27.9 10.79 ± 0.24 9.67 ± 0.31 8.66 ± 0.33\n' >"$dir/fgd/default.txt"
FROM="$dir/fgd" scripts/fgd-compare.sh "$T" nodes.csv openb_pod_list_default.csv >"$dir/fgd.md" || fail "fgd-compare failed"
grep -q '^| fgd | 4.75 ± 0.13 | 4.77 ± 0.11 | -0.02 |$' "$dir/fgd.md" || fail "fgd-compare: $(cat "$dir/fgd.md")"
grep -q '^| spread | 10.79 ± 0.24 | — | — |$' "$dir/fgd.md" || fail "fgd-compare: spread: $(cat "$dir/fgd.md")"
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
# Hostile input (issue 30): times past what a run can cover are refused, naming the job (a
# submission at 8e9 s once overflowed the event loop's nanoseconds); --until 0.5 is a second, not
# 0 (which means no limit); a GPU-less trace in fill mode is refused at once (it drew jobs
# without end); a node listed twice in an openb node list is refused (it replaced the first).
printf 'job_id,submit_s,duration_s,queue,num_pods,gpus_per_pod,gpu_mem_gib,priority\nlate,8000000000,9,q,1,1,,\n' >"$dir/late.csv"
err=$("$T" simulate --trace "$dir/late.csv" --nodes 1x8 2>&1)
[ $? -eq 2 ] && echo "$err" | grep -q 'job late: submitted at 8000000000s and running 9s ends past 10^9 s' || fail "late job: $err"
printf 'job_id,submit_s,duration_s,queue,num_pods,gpus_per_pod,gpu_mem_gib,priority\na,0,5,q,1,8,,\nb,0,5,q,1,8,,\n' >"$dir/two.csv"
"$T" simulate --trace "$dir/two.csv" --nodes 1x8 --until 0.5 --output json >"$dir/until" || fail "--until 0.5 failed"
grep -q '"done": 0' "$dir/until" && grep -q '"neverStarted": 1' "$dir/until" || fail "--until 0.5: $(head -c 400 "$dir/until")"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\nc,1000,1024,0,0,,BE,Running,0,,0\n' >"$dir/cpu.csv"
err=$("$T" simulate --trace "$dir/cpu.csv" --nodes 4x8 --fill --seed 1 2>&1)
[ $? -eq 1 ] && echo "$err" | grep -q 'no job of the trace asks for a GPU' || fail "GPU-less fill: $err"
printf 'sn,cpu_milli,memory_mib,gpu,model\nn1,96000,1000,8,A\nn1,96000,1000,4,B\n' >"$dir/nodes.csv"
err=$("$T" simulate --trace "$dir/two.csv" --nodes "$dir/nodes.csv" 2>&1)
[ $? -eq 2 ] && echo "$err" | grep -q 'nodes.csv:3: sn: node "n1" is listed again (first on line 2)' || fail "node twice: $err"
# --report: a symlink planted in the directory is replaced, its target never written; a cell
# that a spreadsheet would read as a formula goes out as text.
printf 'job_id,submit_s,duration_s,queue,num_pods,gpus_per_pod,gpu_mem_gib,priority\n=HYPERLINK(1),0,5,@q,1,1,,\n' >"$dir/inj.csv"
mkdir "$dir/rep" && echo precious >"$dir/target" && ln -s "$dir/target" "$dir/rep/jobs.csv"
"$T" simulate --trace "$dir/inj.csv" --nodes 1x8 --report "$dir/rep" >/dev/null || fail "--report with a planted symlink failed"
[ "$(cat "$dir/target")" = precious ] || fail "--report wrote through a symlink"
[ -f "$dir/rep/jobs.csv" ] && [ ! -L "$dir/rep/jobs.csv" ] || fail "--report: jobs.csv is still a symlink"
grep -q "^'=HYPERLINK(1),'@q,0,0,0,5,0,1,,-1$" "$dir/rep/jobs.csv" || fail "CSV injection: $(cat "$dir/rep/jobs.csv")"
grep -q "^'@q,1," "$dir/rep/queues.csv" || fail "CSV injection (queues): $(cat "$dir/rep/queues.csv")"
ls "$dir/rep" | grep -q tmp && fail "--report left a temporary file: $(ls "$dir/rep")"
ITP=../shared/traces/itp/itp_cluster04_replay.csv
if [ -f "$ITP" ]; then
  "$T" simulate --trace "$ITP" --nodes 128x8 --output json >"$dir/itp" || fail "ITP cluster04 failed"
  grep -q '"done": 15802' "$dir/itp" || fail "ITP: not every job finished"
  grep -Eq '"gpuHours": 70568[23]\.' "$dir/itp" || fail "ITP: GPU-hours $(grep gpuHours "$dir/itp" | head -1)"
fi
# --predict: each job's start estimated at its submission, in jobs.csv (test_sim counts the
# same case: d, coming later with a higher priority, starts b and c 40 s after their estimates;
# their waits are under 10 minutes, so the summary's error counts none)
"$T" simulate --trace tests/scenarios/simulate-predict/trace.csv --nodes 1x8 --predict \
  --report "$dir/pred" >"$dir/pred.out" || fail "--predict failed: $(cat "$dir/pred.out")"
grep -q '^predicted starts: 0 jobs waited over 10 min, 0 of them got an estimate' "$dir/pred.out" ||
  fail "--predict summary: $(tail -1 "$dir/pred.out")"
grep -q '^b,team,10,140,140,190,0,8,,100$' "$dir/pred/jobs.csv" &&
  grep -q '^c,team,20,190,190,200,0,8,,150$' "$dir/pred/jobs.csv" ||
  fail "--predict: jobs.csv: $(cat "$dir/pred/jobs.csv")"
"$T" simulate --trace tests/scenarios/simulate-predict/trace.csv --nodes 1x8 --report "$dir/nopred" >/dev/null &&
  grep -q '^b,team,10,140,140,190,0,8,,-1$' "$dir/nopred/jobs.csv" || fail "without --predict: $(cat "$dir/nopred/jobs.csv")"
# scripts/openb-lists.sh: each list fetched is checked against its SHA-256 (a mirror here: the
# lists ../shared/traces holds are taken, junk in place of the others is refused and removed).
mkdir -p "$dir/mirror"
for f in openb_node_list_gpu_node.csv openb_pod_list_default.csv openb_pod_list_cpu050.csv; do echo junk >"$dir/mirror/$f"; done
cp ../shared/traces/openb/openb_*.csv "$dir/mirror/" 2>/dev/null
OPENB_BASE="file://$dir/mirror" sh scripts/openb-lists.sh "$dir/openb" >"$dir/ol.out" 2>&1 && fail "openb-lists: junk accepted"
grep -q 'openb_pod_list_cpu050.csv: SHA-256 is not 747f4324' "$dir/ol.out" || fail "openb-lists: $(cat "$dir/ol.out")"
[ -e "$dir/openb/openb_pod_list_cpu050.csv" ] || [ -e "$dir/openb/openb_pod_list_cpu050.csv.part" ] &&
  fail "openb-lists: a file that failed its check was kept"
if [ -f ../shared/traces/openb/openb_pod_list_default.csv ]; then
  grep -q "^got  $dir/openb/openb_pod_list_default.csv" "$dir/ol.out" || fail "openb-lists: default not taken: $(cat "$dir/ol.out")"
fi
exit 0
