#!/usr/bin/env python3
"""scripts/churn.py KUBECONFIG METRICS_URL RATE SECONDS [RATE SECONDS ...]: steady churn
against a running `tessera run` (scripts/e2e-scale.sh calls it once the cluster has settled).

For each phase, pods are created open-loop at RATE per second for SECONDS in namespace
`churn` (100m to 2 cpu and 128 MiB to 8 GiB, nearly every pod a shape of its own; no GPU:
the backlog may hold the GPUs; schedulerName tessera), and each pod is deleted
LIFETIME seconds after it was seen bound (a job that completed: no kubelet runs here), so the
cluster stays at a steady load. One watch sees every binding. Per phase it prints:
  - pods created, and bound within the phase plus a grace period
  - the latency a user sees: from the create call returning to the binding seen on the watch
    (p50, p99, max): Tessera's share, the API server's and the watch's together
  - Tessera's own: scheduler_pod_scheduling_sli_duration_seconds from its /metrics (first
    scheduling attempt to the binding's answer), p50 and p99 interpolated in the buckets as
    Prometheus' histogram_quantile does, from the difference of the histogram over the phase;
    and tessera_binding_duration_seconds, the binding write's part of it (the API server's)
  - creates/s and bindings/s the API server sustained.
Only the standard library: the kubeconfig's server, CA data and token are read with regexes.
"""
import base64, http.client, json, os, re, ssl, sys, tempfile, threading, time, urllib.parse

LIFETIME = float(os.environ.get("CHURN_LIFETIME", "20"))
GRACE = 30.0


def kubeconfig(path):
    text = open(path).read()
    server = re.search(r"server:\s*(\S+)", text).group(1)
    ca = re.search(r"certificate-authority-data:\s*(\S+)", text).group(1)
    token = re.search(r"token:\s*(\S+)", text).group(1)
    f = tempfile.NamedTemporaryFile(delete=False, suffix=".crt")
    f.write(base64.b64decode(ca))
    f.close()
    ctx = ssl.create_default_context(cafile=f.name)
    u = urllib.parse.urlparse(server)
    return u.hostname, u.port or 443, ctx, token


HOST, PORT, CTX, TOKEN = kubeconfig(sys.argv[1])
METRICS = sys.argv[2]
PHASES = [(float(sys.argv[i]), float(sys.argv[i + 1])) for i in range(3, len(sys.argv), 2)]
HDR = {"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"}
lock = threading.Lock()
created = {}  # name -> monotonic time the create returned
bound = {}  # name -> monotonic time the binding was seen
errors = []


def conn():
    return http.client.HTTPSConnection(HOST, PORT, context=CTX, timeout=30)


def request(c, method, path, body=None):
    c.request(method, path, body=json.dumps(body) if body is not None else None, headers=HDR)
    r = c.getresponse()
    data = r.read()
    return r.status, data


def pod(name, i):
    """Pod i: its own mix of cpu (100m to 2) and memory (128Mi to 8Gi), so that the churn is
    not one shape the cycle indexes once (nearly every pod a shape of its own)."""
    cpu, mem = 100 + (i * 37) % 1901, 128 * (1 + (i * 13) % 64)
    spec = {"schedulerName": "tessera",
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
            "containers": [{"name": "c", "image": "busybox", "resources": {
                "requests": {"cpu": "%dm" % cpu, "memory": "%dMi" % mem}}}]}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "churn", "labels": {"churn": "1"}},
            "spec": spec}


def watch(stop):
    """Every pod of the namespace whose spec.nodeName appears: bound now."""
    c = conn()
    s, data = request(c, "GET", "/api/v1/namespaces/churn/pods?limit=1")
    rv = json.loads(data)["metadata"]["resourceVersion"]
    c.request("GET", "/api/v1/namespaces/churn/pods?watch=1&allowWatchBookmarks=false"
              "&resourceVersion=" + rv, headers=HDR)
    r = c.getresponse()
    buf = b""
    while not stop.is_set():
        chunk = r.read1(65536) if hasattr(r, "read1") else r.read(4096)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if not line.strip():
                continue
            ev = json.loads(line)
            o = ev.get("object", {})
            name = o.get("metadata", {}).get("name")
            if o.get("spec", {}).get("nodeName") and name:
                with lock:
                    if name in created and name not in bound:
                        bound[name] = time.monotonic()


def deleter(stop):
    """Deletes each pod LIFETIME seconds after its binding was seen (it completed)."""
    c = conn()
    gone = set()
    while not stop.is_set():
        now = time.monotonic()
        with lock:
            due = [n for n, t in bound.items() if now - t >= LIFETIME and n not in gone]
        for n in due:
            try:
                request(c, "DELETE", "/api/v1/namespaces/churn/pods/" + n +
                        "?gracePeriodSeconds=0")
            except Exception as e:  # a dropped connection: open another
                errors.append("delete %s: %s" % (n, e))
                c = conn()
            gone.add(n)
        time.sleep(0.2)


def creator(rate, seconds, first, step, start, phase):
    """Creates pods first, first+step, ... at their open-loop times."""
    c = conn()
    i = first
    while True:
        at = start + i / rate
        if at - start >= seconds:
            return
        d = at - time.monotonic()
        if d > 0:
            time.sleep(d)
        name = "c%d-%d" % (phase, i)
        try:
            s, data = request(c, "POST", "/api/v1/namespaces/churn/pods", pod(name, i))
            if s == 201:
                with lock:
                    created[name] = time.monotonic()
            else:
                errors.append("create %s: HTTP %d" % (name, s))
        except Exception as e:
            errors.append("create %s: %s" % (name, e))
            c = conn()
        i += step


def histograms():
    """Tessera's SLI and binding histograms, each summed over its labels:
    ({le: cumulative count}, {le: cumulative count})."""
    c = http.client.HTTPConnection(urllib.parse.urlparse(METRICS).hostname,
                                   urllib.parse.urlparse(METRICS).port, timeout=10)
    c.request("GET", "/metrics")
    out = ({}, {})
    for line in c.getresponse().read().decode().splitlines():
        m = re.match(r'(scheduler_pod_scheduling_sli|tessera_binding)_duration_seconds_bucket'
                     r'\{.*le="([^"]+)".*\} (\S+)', line)
        if m:
            h = out[0 if m.group(1).startswith("scheduler") else 1]
            le = float("inf") if m.group(2) == "+Inf" else float(m.group(2))
            h[le] = h.get(le, 0) + float(m.group(3))
    return out


def quantile(q, before, after):
    """histogram_quantile over the difference of two cumulative histograms."""
    les = sorted(after)
    counts = [after[le] - before.get(le, 0) for le in les]
    total = counts[-1] if counts else 0
    if total <= 0:
        return None
    rank, prev_le, prev_c = q * total, 0.0, 0.0
    for le, c in zip(les, counts):
        if c >= rank:
            if le == float("inf"):
                return prev_le
            return prev_le + (le - prev_le) * (rank - prev_c) / max(c - prev_c, 1e-9)
        prev_le, prev_c = le, c
    return les[-1]


def pct(v, q):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def main():
    c = conn()
    request(c, "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                              "metadata": {"name": "churn"}})
    request(c, "POST", "/api/v1/namespaces/churn/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}})
    stop = threading.Event()
    for f in (watch, deleter):
        threading.Thread(target=f, args=(stop,), daemon=True).start()
    time.sleep(1)
    for p, (rate, seconds) in enumerate(PHASES):
        workers = max(1, min(8, int(rate // 25)))
        h0, start = histograms(), time.monotonic()
        ts = [threading.Thread(target=creator, args=(rate, seconds, w, workers, start, p))
              for w in range(workers)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        made_s = time.monotonic() - start
        names = [n for n in created if n.startswith("c%d-" % p)]
        deadline = time.monotonic() + GRACE
        while time.monotonic() < deadline:
            with lock:
                if all(n in bound for n in names):
                    break
            time.sleep(0.5)
        h1 = histograms()
        with lock:
            lat = [bound[n] - created[n] for n in names if n in bound]
            last = max((bound[n] for n in names if n in bound), default=start)
        q = [quantile(x, h0[k], h1[k]) for k in (0, 1) for x in (0.5, 0.99)]
        f = ["%.3f s" % v if v is not None else "-" for v in q]
        print("phase %d: %.0f pods/s asked for %.0f s" % (p + 1, rate, seconds))
        print("  created %d (%.1f/s sustained by the API server), bound %d (%.1f bindings/s)" % (
            len(names), len(names) / made_s, len(lat), len(lat) / max(last - start, 1e-9)))
        print("  create -> binding seen (user's view): p50 %.3f s  p99 %.3f s  max %.3f s" % (
            pct(lat, 0.5), pct(lat, 0.99), max(lat) if lat else float("nan")))
        print("  Tessera's SLI (first attempt -> binding answered): p50 %s  p99 %s" % (f[0], f[1]))
        print("    of which the binding's write (the API server's share): p50 %s  p99 %s" % (
            f[2], f[3]))
        sys.stdout.flush()
    stop.set()
    if errors:
        print("  %d request errors, first: %s" % (len(errors), errors[0]))


main()
