#!/bin/sh
# scripts/growth.sh: the growth curve from the benchmark results. Reads the `mix` lines of
# bench/results/sched.txt (one scheduling cycle, 2 pending pods per node), its `production`
# lines (the same on a recorded cluster's shape, with running load) and the lines of
# bench/results/replay.txt (`tessera replay` end to end, 10 pods per node), writes
# bench/results/growth.txt (a table: nodes, time, time per node, ratio to the smallest size)
# and bench/results/growth.svg (log-log: a line of slope 1 is linear growth, slope 2 quadratic;
# dashed lines of slope 1 through each series' first point show what linear would be).
set -eu
R=${1:-bench/results}
{
  awk '/^mix/ { n = $2; ms = $7; print "cycle", n, ms / 1000 }' "$R/sched.txt"
  awk '/^production/ { n = $2; ms = $7; print "prod", n, ms / 1000 }' "$R/sched.txt"
  awk '/nodes \+/ { n = $1; for (i = 1; i <= NF; i++) if ($i == "wall") s = $(i + 1); print "replay", n, s }' "$R/replay.txt"
} >"$R/growth.data"
awk '
  { kind[NR] = $1; n[NR] = $2; t[NR] = $3 }
  END {
    print "# growth: seconds as nodes grow (cycle: mix, 2 pending pods per node; prod: production shape, 2 pending and 3 running per node; replay: 10 pods per node, end to end)"
    printf "%-7s %8s %12s %16s %14s\n", "what", "nodes", "seconds", "us per node", "x first size"
    for (i = 1; i <= NR; i++) {
      if (!(kind[i] in first)) { first[kind[i]] = t[i]; firstn[kind[i]] = n[i] }
      printf "%-7s %8d %12.3f %16.2f %14.1f  (%.1fx the nodes)\n", kind[i], n[i], t[i],
             t[i] / n[i] * 1e6, t[i] / first[kind[i]], n[i] / firstn[kind[i]]
    }
  }' "$R/growth.data" >"$R/growth.txt"
awk '
  function lx(v) { return 70 + (log(v) - lnmin) / (lnmax - lnmin) * 560 }
  function ly(v) { return 380 - (log(v) - ltmin) / (ltmax - ltmin) * 340 }
  { kind[NR] = $1; n[NR] = $2; t[NR] = $3 }
  END {
    nmin = 1e18; nmax = 0; tmin = 1e18; tmax = 0
    for (i = 1; i <= NR; i++) {
      if (n[i] < nmin) nmin = n[i]; if (n[i] > nmax) nmax = n[i]
      if (t[i] < tmin) tmin = t[i]; if (t[i] > tmax) tmax = t[i]
    }
    lnmin = log(nmin / 1.2); lnmax = log(nmax * 1.2); ltmin = log(tmin / 2); ltmax = log(tmax * 2)
    print "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"700\" height=\"440\" font-family=\"sans-serif\" font-size=\"12\">"
    print "<rect width=\"700\" height=\"440\" fill=\"white\"/>"
    print "<text x=\"350\" y=\"20\" text-anchor=\"middle\">Tessera: seconds as the cluster grows (log-log; dashed: linear)</text>"
    print "<line x1=\"70\" y1=\"380\" x2=\"640\" y2=\"380\" stroke=\"black\"/><line x1=\"70\" y1=\"40\" x2=\"70\" y2=\"380\" stroke=\"black\"/>"
    for (i = 1; i <= NR; i++) if (!(n[i] in tick)) {
      tick[n[i]] = 1
      printf "<text x=\"%.1f\" y=\"398\" text-anchor=\"middle\">%dk</text>\n", lx(n[i]), n[i] / 1000
    }
    print "<text x=\"350\" y=\"425\" text-anchor=\"middle\">nodes</text>"
    for (e = -4; e <= 3; e++) { v = 10 ^ e; if (v >= tmin / 2 && v <= tmax * 2)
      printf "<text x=\"64\" y=\"%.1f\" text-anchor=\"end\">%gs</text><line x1=\"70\" y1=\"%.1f\" x2=\"640\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", ly(v) + 4, v, ly(v), ly(v) }
    color["cycle"] = "#1f77b4"; color["replay"] = "#d62728"; color["prod"] = "#2ca02c"
    label["cycle"] = "one cycle, mix (2 pending pods per node)"; label["replay"] = "tessera replay, end to end (10 pods per node)"
    label["prod"] = "one cycle, production shape (2 pending + 3 running per node)"
    for (k in color) {
      path = ""; f = 0
      for (i = 1; i <= NR; i++) if (kind[i] == k) {
        path = path sprintf("%s%.1f,%.1f ", path == "" ? "M" : "L", lx(n[i]), ly(t[i]))
        printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", lx(n[i]), ly(t[i]), color[k]
        if (!f) { f = 1; n0 = n[i]; t0 = t[i] }
        nl = n[i]
      }
      if (path == "") continue
      printf "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", path, color[k]
      printf "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"5,4\"/>\n", lx(n0), ly(t0), lx(nl), ly(t0 * nl / n0), color[k]
      y = k == "cycle" ? 50 : k == "replay" ? 68 : 86
      printf "<text x=\"90\" y=\"%d\" fill=\"%s\">%s</text>\n", y, color[k], label[k]
    }
    print "</svg>"
  }' "$R/growth.data" >"$R/growth.svg"
rm -f "$R/growth.data"
cat "$R/growth.txt"
