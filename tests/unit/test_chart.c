/* tests/unit/test_chart.c - the Helm chart (deploy/helm/tessera) as Helm would render it: every
 * template renders with the chart's values (tests/support/chart), every manifest parses and
 * has what the API requires of its kind, the Deployment meets the restricted Pod Security
 * profile, selectors match the pods, the ConfigMap holds a tessera.yaml Tessera accepts, and
 * the plain manifests beside the chart (deploy/manifests/tessera.yaml) are its current
 * rendering. TESSERA_WRITE_MANIFESTS=1 rewrites them instead. The renderer itself is checked
 * on Helm's own outputs for the constructs used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ts.h"
#include "config/config.h"
#include "input/input.h"
#include "tests/support/chart.h"

#define CHART     "deploy/helm/tessera"
#define MANIFESTS "deploy/manifests/tessera.yaml"

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  char *s;
  long n;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  rewind(f);
  s = malloc((size_t)n + 1);
  if (fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
  s[n] = '\0';
  fclose(f);
  return s;
}

static json_t *yaml1(const char *text) {
  in_docs d = {0};
  ts_err e;
  json_t *v;
  ts_err_clear(&e);
  if (in_yaml_parse(text, strlen(text), &d, &e) != TS_OK || d.n != 1)
    fail_msg("yaml: %s\n%s", e.text, text);
  v = json_incref(d.v[0].value);
  in_docs_free(&d);
  return v;
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Chart.yaml as .Chart sees it (Helm's names: Name, Version, AppVersion). */
static json_t *chart_meta(void) {
  char *t = slurp(CHART "/Chart.yaml");
  json_t *y, *c;
  assert_non_null(t);
  y = yaml1(t);
  c = json_pack("{s:O, s:O, s:O}", "Name", json_object_get(y, "name"), "Version",
                json_object_get(y, "version"), "AppVersion", json_object_get(y, "appVersion"));
  json_decref(y);
  free(t);
  return c;
}

/* The files of dir (relative to the chart) whose names end with suffix, sorted (free each). */
static size_t list(const char *dir, const char *suffix, char **names, size_t cap) {
  char path[300];
  DIR *d;
  struct dirent *e;
  size_t n = 0;
  snprintf(path, sizeof path, CHART "/%s", dir);
  assert_non_null(d = opendir(path));
  while ((e = readdir(d)) && n < cap) {
    size_t len = strlen(e->d_name), sl = strlen(suffix);
    if (len > sl && !strcmp(e->d_name + len - sl, suffix)) names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, name_cmp);
  return n;
}

/* The chart's _*.tpl rendered into env, for their defines, as Helm reads them first. */
static void load_helpers(chart_env *env) {
  char *names[32], why[256];
  size_t n = list("templates", ".tpl", names, 32);
  for (size_t i = 0; i < n; i++) {
    char path[300], *text, *out;
    snprintf(path, sizeof path, CHART "/templates/%s", names[i]);
    assert_non_null(text = slurp(path));
    if (!(out = chart_render(text, env, why, sizeof why))) fail_msg("%s: %s", path, why);
    free(out), free(text), free(names[i]);
  }
}

/* The templates of dir ("templates", "templates/tests") rendered with values, in file-name
 * order, as one multi-document text; the _*.tpl helpers first, as Helm reads them. With
 * header, the plain manifests' header and the release's Namespace first. */
static char *render_as(json_t *values, const char *dir, bool header, const char *release_name,
                       const char *release_ns) {
  char *names[32], why[256];
  size_t n;
  json_t *release = json_pack("{s:s, s:s, s:s}", "Name", release_name, "Namespace", release_ns,
                              "Service", "Helm");
  chart_env env = {values, release, chart_meta(), CHART, json_object()};
  ts_buf all;
  load_helpers(&env);
  ts_buf_init(&all, 0);
  if (header)
    ts_buf_puts(&all,
                "# Rendered from deploy/helm/tessera with its default values (release tessera,\n"
                "# namespace tessera-system) by `make manifests`; `make test` checks it is\n"
                "# current. `kubectl apply -f` it on a fresh cluster: the Namespace comes first.\n"
                "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: tessera-system\n");
  n = list(dir, ".yaml", names, 32);
  for (size_t i = 0; i < n; i++) {
    char path[300], *text, *out;
    snprintf(path, sizeof path, CHART "/%s/%s", dir, names[i]);
    assert_non_null(text = slurp(path));
    if (!(out = chart_render(text, &env, why, sizeof why))) fail_msg("%s: %s", path, why);
    if (strspn(out, " \n") != strlen(out)) { /* a template whose if was false renders nothing */
      ts_buf_printf(&all, "---\n# Source: tessera/%s/%s\n%s%s", dir, names[i], out,
                    out[strlen(out) - 1] == '\n' ? "" : "\n");
    }
    free(out);
    free(text);
    free(names[i]);
  }
  json_decref(release);
  json_decref(env.chart);
  json_decref(env.defines);
  return ts_buf_steal(&all);
}

static char *render_chart(json_t *values) {
  return render_as(values, "templates", true, "tessera", "tessera-system");
}

/* The value at a dotted path ("a.b.0.c"; "\\." a dot inside a key), or NULL. */
static json_t *at(json_t *o, const char *path) {
  char key[256];
  const char *p = path;
  while (o && *p) {
    size_t n = 0;
    for (; *p && *p != '.' && n + 1 < sizeof key; p++)
      key[n++] = (*p == '\\' && p[1] == '.') ? *++p : *p;
    key[n] = '\0';
    if (*p == '.') p++;
    o = json_is_array(o) ? json_array_get(o, (size_t)atoi(key)) : json_object_get(o, key);
  }
  return o;
}

static const char *str(json_t *o, const char *path) {
  return json_string_value(at(o, path));
}

/* Every key of want is in have with the same value. */
static bool selects(json_t *want, json_t *have) {
  const char *k;
  json_t *v;
  if (!json_is_object(want) || !json_object_size(want)) return false;
  json_object_foreach(want, k, v)
    if (!json_equal(v, json_object_get(have, k))) return false;
  return true;
}

static void check_deployment(json_t *d) {
  json_t *pod = at(d, "spec.template.spec"), *c;
  size_t i;
  assert_true(selects(at(d, "spec.selector.matchLabels"), at(d, "spec.template.metadata.labels")));
  assert_true(json_integer_value(at(d, "spec.replicas")) >= 2); /* leader and standby */
  /* restricted Pod Security */
  assert_true(json_is_true(at(pod, "securityContext.runAsNonRoot")));
  assert_string_equal(str(pod, "securityContext.seccompProfile.type"), "RuntimeDefault");
  assert_true(json_array_size(at(pod, "containers")) >= 1);
  json_array_foreach(at(pod, "containers"), i, c) {
    assert_non_null(str(c, "name"));
    assert_non_null(str(c, "image"));
    assert_true(json_is_false(at(c, "securityContext.allowPrivilegeEscalation")));
    assert_true(json_is_true(at(c, "securityContext.readOnlyRootFilesystem")));
    assert_string_equal(str(c, "securityContext.capabilities.drop.0"), "ALL");
    assert_null(at(c, "securityContext.capabilities.add"));
    assert_string_equal(str(c, "livenessProbe.httpGet.path"), "/healthz");
    assert_string_equal(str(c, "readinessProbe.httpGet.path"), "/readyz");
    assert_non_null(at(c, "resources.requests.cpu"));
    assert_non_null(at(c, "resources.limits.memory"));
  }
  json_array_foreach(at(pod, "volumes"), i, c) { /* only the kinds restricted allows */
    assert_true(at(c, "configMap") || at(c, "secret") || at(c, "emptyDir") || at(c, "projected"));
  }
  assert_null(at(pod, "hostNetwork"));
  assert_null(at(pod, "hostPID"));
}

/* What the API requires of each kind, and how the objects fit together. */
static void check(json_t *docs, int *kinds) {
  json_t *o, *dep = NULL, *svc = NULL;
  size_t i;
  json_array_foreach(docs, i, o) {
    const char *kind = str(o, "kind");
    assert_non_null(str(o, "apiVersion"));
    assert_non_null(kind);
    assert_non_null(str(o, "metadata.name"));
    if (!strcmp(kind, "Namespace")) continue; /* the manifests' own, first */
    if (strncmp(kind, "Cluster", 7))          /* namespaced: in the release's namespace */
      assert_non_null(str(o, "metadata.namespace"));
    (*kinds)++;
    if (!strcmp(kind, "Deployment")) check_deployment(dep = o);
    if (!strcmp(kind, "Service")) {
      svc = o;
      assert_true(json_array_size(at(o, "spec.ports")) >= 1);
    }
    if (!strcmp(kind, "ConfigMap")) { /* a tessera.yaml Tessera accepts */
      cfg_tessera t;
      ts_err e;
      const char *y =
          json_string_value(json_object_get(json_object_get(o, "data"), "tessera.yaml"));
      assert_non_null(y);
      cfg_tessera_default(&t);
      ts_err_clear(&e);
      if (cfg_tessera_parse(y, strlen(y), &t, &e) != TS_OK) fail_msg("tessera.yaml: %s", e.text);
      cfg_tessera_free(&t);
    }
    if (!strcmp(kind, "ClusterRole") || !strcmp(kind, "Role")) {
      json_t *r;
      size_t k;
      json_array_foreach(at(o, "rules"), k, r) {
        if (at(r, "nonResourceURLs")) { /* a ClusterRole's only, without resources */
          assert_string_equal(kind, "ClusterRole");
          assert_null(at(r, "resources"));
          assert_true(json_array_size(at(r, "verbs")) >= 1);
          continue;
        }
        assert_non_null(at(r, "apiGroups"));
        assert_true(json_array_size(at(r, "resources")) >= 1);
        assert_true(json_array_size(at(r, "verbs")) >= 1);
      }
    }
  }
  assert_non_null(dep);
  assert_non_null(svc);
  json_array_foreach(docs, i, o) { /* every selector selects Tessera's pods */
    const char *kind = str(o, "kind");
    json_t *pods = at(dep, "spec.template.metadata.labels");
    if (!strcmp(kind, "Service")) assert_true(selects(at(o, "spec.selector"), pods));
    if (!strcmp(kind, "PodDisruptionBudget") || !strcmp(kind, "NetworkPolicy"))
      assert_true(selects(at(o, !strcmp(kind, "NetworkPolicy") ? "spec.podSelector.matchLabels"
                                                               : "spec.selector.matchLabels"),
                          pods));
    if (!strcmp(kind, "ServiceMonitor")) {
      assert_true(selects(at(o, "spec.selector.matchLabels"), at(svc, "metadata.labels")));
      assert_string_equal(str(o, "spec.endpoints.0.port"), str(svc, "spec.ports.0.name"));
    }
  }
}

static json_t *parse_all(const char *text) {
  in_docs d = {0};
  ts_err e;
  json_t *arr = json_array();
  ts_err_clear(&e);
  if (in_yaml_parse(text, strlen(text), &d, &e) != TS_OK)
    fail_msg("rendered: %s\n%s", e.text, text);
  for (size_t i = 0; i < d.n; i++) json_array_append(arr, d.v[i].value);
  in_docs_free(&d);
  return arr;
}

static void test_chart_renders(void **state) {
  char *vtext = slurp(CHART "/values.yaml"), *out, *have;
  json_t *values, *docs;
  int kinds = 0;
  (void)state;
  assert_non_null(vtext);
  values = yaml1(vtext);
  out = render_chart(values);
  docs = parse_all(out);
  check(docs, &kinds);
  assert_int_equal(kinds, 11); /* ConfigMap, Deployment, NetworkPolicy, PodDisruptionBudget,
                                  ServiceAccount, ClusterRole and Role with their bindings,
                                  the metrics-reader ClusterRole, Service */
  { /* every ingress rule names who may come: none is open to the whole cluster (the probes come
     * from the pod's node, which a NetworkPolicy always allows) */
    json_t *o, *rule;
    size_t i, k, rules = 0;
    json_array_foreach(docs, i, o) {
      if (strcmp(str(o, "kind"), "NetworkPolicy")) continue;
      json_array_foreach(at(o, "spec.ingress"), k, rule) {
        assert_true(json_array_size(json_object_get(rule, "from")) >= 1);
        rules++;
      }
    }
    assert_int_equal(rules, 1); /* /metrics from monitoring */
  }
  json_decref(docs);
  /* the plain manifests are this rendering */
  if (getenv("TESSERA_WRITE_MANIFESTS")) {
    FILE *f = fopen(MANIFESTS, "w");
    assert_non_null(f);
    fputs(out, f);
    fclose(f);
  }
  have = slurp(MANIFESTS);
  if (!have || strcmp(have, out))
    fail_msg("%s is not the chart's current rendering: run `make manifests`", MANIFESTS);
  free(have);
  free(out);
  /* with the ServiceMonitor on and the NetworkPolicy off */
  json_object_set_new(json_object_get(values, "serviceMonitor"), "enabled", json_true());
  json_object_set_new(json_object_get(values, "networkPolicy"), "enabled", json_false());
  out = render_chart(values);
  docs = parse_all(out);
  kinds = 0;
  check(docs, &kinds);
  assert_int_equal(kinds, 11);
  assert_non_null(strstr(out, "kind: ServiceMonitor"));
  assert_null(strstr(out, "kind: NetworkPolicy"));
  json_decref(docs);
  free(out);
  /* networkPolicy.healthFrom opens the health port to those peers only */
  json_object_set_new(json_object_get(values, "networkPolicy"), "enabled", json_true());
  json_object_set_new(json_object_get(values, "networkPolicy"), "healthFrom",
                      json_pack("[{s:{s:s}}]", "ipBlock", "cidr", "10.0.0.0/8"));
  out = render_chart(values);
  docs = parse_all(out);
  {
    json_t *o, *rule;
    size_t i, k;
    bool health = false;
    json_array_foreach(docs, i, o) {
      if (strcmp(str(o, "kind"), "NetworkPolicy")) continue;
      json_array_foreach(at(o, "spec.ingress"), k, rule) {
        if (json_integer_value(json_object_get(json_array_get(json_object_get(rule, "ports"), 0),
                                               "port")) != 10259)
          continue;
        health = true;
        assert_string_equal(str(rule, "from.0.ipBlock.cidr"), "10.0.0.0/8");
      }
    }
    assert_true(health);
  }
  json_decref(docs);
  free(out);
  /* shadow mode: read-only RBAC (every verb get, list or watch), no leader election, the
   * Deployment runs --shadow with its report on a volume of its own */
  json_object_set_new(json_object_get(values, "shadow"), "enabled", json_true());
  json_object_set_new(json_object_get(values, "shadow"), "schedulerName",
                      json_string("default-scheduler"));
  out = render_chart(values);
  docs = parse_all(out);
  kinds = 0;
  check(docs, &kinds);
  assert_int_equal(kinds, 10); /* the 12 above (ServiceMonitor and NetworkPolicy on) less the
                                  Role and RoleBinding of the Lease */
  {
    json_t *o, *rule, *verb, *args = NULL;
    size_t i, k, x;
    int roles = 0;
    json_array_foreach(docs, i, o) {
      if (!strcmp(str(o, "kind"), "Deployment"))
        args = at(o, "spec.template.spec.containers.0.args");
      if (strcmp(str(o, "kind"), "ClusterRole") && strcmp(str(o, "kind"), "Role")) continue;
      roles++;
      json_array_foreach(at(o, "rules"), k, rule)
        json_array_foreach(json_object_get(rule, "verbs"), x, verb) {
          const char *vb = json_string_value(verb);
          const char *res =
              json_string_value(json_array_get(json_object_get(rule, "resources"), 0));
          if (res && (!strcmp(res, "tokenreviews") || !strcmp(res, "subjectaccessreviews")))
            continue; /* reviews of who scrapes /metrics: asked, nothing stored */
          if (strcmp(vb, "get") && strcmp(vb, "list") && strcmp(vb, "watch"))
            fail_msg("shadow RBAC grants %s on %s", vb, json_dumps(rule, JSON_COMPACT));
        }
    }
    assert_int_equal(roles, 2); /* Tessera's and the metrics reader's */
    assert_non_null(args);
    assert_string_equal(json_string_value(json_array_get(args, 2)), "--shadow");
    assert_string_equal(json_string_value(json_array_get(args, 3)),
                        "--shadow-report=/var/run/tessera");
    assert_string_equal(json_string_value(json_array_get(args, 4)),
                        "--shadow-scheduler-name=default-scheduler");
    assert_non_null(strstr(out, "emptyDir: {sizeLimit: 64Mi}"));
  }
  json_decref(docs);
  free(out);
  json_decref(values);
  free(vtext);
}

/* The renderer, on the constructs the chart uses, as Helm's documentation defines them
 * (toYaml sorts keys, puts sequences at their key's column and quotes what would read back
 * as another type; nindent starts with a newline; {{- and -}} eat the white space beside;
 * sprig's default takes its argument when the value is empty; include renders a define with
 * the dot it is given; else runs when the condition is false). */
static void test_renderer(void **state) {
  json_t *v = yaml1("a: {b: 1, s: '0.1.0', t: 'true', e: {}, l: [x, {k: v, j: [1, 2]}]}\n"
                    "r: {limits: {memory: 2Gi}, requests: {cpu: 500m}}\nno: false\nempty: ''\n");
  json_t *rel = json_pack("{s:s, s:s}", "Namespace", "ns", "Name", "rel");
  json_t *chart = json_pack("{s:s, s:s}", "Name", "tessera", "Version", "0.1.0");
  chart_env env = {v, rel, chart, CHART, json_object()};
  char why[256], *o;
  (void)state;
  o = chart_render("x: {{ .Values.a.b }}\nns: {{ .Release.Namespace }}\n", &env, why, sizeof why);
  assert_string_equal(o, "x: 1\nns: ns\n");
  free(o);
  o = chart_render("r: {{ toYaml .Values.r | nindent 2 }}\n", &env, why, sizeof why);
  assert_string_equal(o, "r: \n  limits:\n    memory: 2Gi\n  requests:\n    cpu: 500m\n");
  free(o);
  o = chart_render("{{ toYaml .Values.a | indent 2 }}", &env, why, sizeof why);
  assert_string_equal(o, "  b: 1\n  e: {}\n  l:\n  - x\n  - j:\n    - 1\n    - 2\n    k: v\n"
                         "  s: 0.1.0\n  t: \"true\"");
  free(o);
  o = chart_render("a\n{{- if .Values.no }}\nhidden\n{{- end }}\nb\n{{- with .Values.a.e }}\n"
                   "empty\n{{- end }}\n{{- with .Values.r }}\nc: {{ toYaml . | nindent 2 }}\n"
                   "{{- end }}\n",
                   &env, why, sizeof why);
  assert_string_equal(o, "a\nb\nc: \n  limits:\n    memory: 2Gi\n  requests:\n    cpu: 500m\n");
  free(o);
  o = chart_render("a\n{{- if not .Values.no }}\nshown\n{{- end }}\n{{- if not .Values.a.b }}\n"
                   "hidden\n{{- end }}\nb\n",
                   &env, why, sizeof why);
  assert_string_equal(o, "a\nshown\nb\n");
  free(o);
  o = chart_render("{{ toYaml .Values.r | sha256sum }}", &env, why, sizeof why);
  assert_int_equal(strlen(o), 64);
  free(o);
  /* else, eq, default, .Chart, literals, define and include (whitespace as Helm trims it) */
  o = chart_render("{{ if .Values.no }}yes{{ else }}no{{ end }} "
                   "{{ if eq .Release.Name \"rel\" }}same{{ else }}other{{ end }} "
                   "{{ .Values.empty | default .Chart.Name }} {{ .Values.a.b | default \"x\" }}",
                   &env, why, sizeof why);
  assert_string_equal(o, "no same tessera 1");
  free(o);
  o = chart_render("{{/* a comment */}}\n{{- define \"t.labels\" -}}\nname: {{ .Chart.Name }}\n"
                   "release: {{ .Release.Name }}\n{{- end }}\nlabels: {{ include \"t.labels\" . "
                   "| nindent 2 }}\n",
                   &env, why, sizeof why);
  assert_string_equal(o, "\nlabels: \n  name: tessera\n  release: rel\n");
  free(o);
  /* what it does not know is an error, not a wrong rendering */
  assert_null(chart_render("{{ .Values.missing }}", &env, why, sizeof why));
  assert_string_equal(why, ".Values.missing: no value");
  assert_null(chart_render("{{ include \"nope\" . }}", &env, why, sizeof why));
  assert_string_equal(why, "include \"nope\": no such define");
  assert_null(chart_render("{{ range .Values.a.l }}x{{ end }}", &env, why, sizeof why));
  assert_null(chart_render("{{ if .Values.no }}", &env, why, sizeof why));
  assert_string_equal(why, "{{ if .Values.no }} without {{ end }}");
  assert_null(chart_render("{{ .Files.Get \"../../README.md\" }}", &env, why, sizeof why));
  json_decref(v);
  json_decref(rel);
  json_decref(chart);
  json_decref(env.defines);
}

/* The document of kind (and name, when not NULL) in docs, or NULL. */
static json_t *doc(json_t *docs, const char *kind, const char *name) {
  json_t *o;
  size_t i;
  json_array_foreach(docs, i, o)
    if (!strcmp(str(o, "kind"), kind) && (!name || !strcmp(str(o, "metadata.name"), name)))
      return o;
  return NULL;
}

/* Helm's conventions: every object carries the recommended labels; two releases (of any name,
 * in any namespace) share no name and select none of each other's pods; the Lease is in the
 * release's namespace; the values a platform team expects are honoured. */
static void test_chart_conventions(void **state) {
  char *vtext = slurp(CHART "/values.yaml"), *a, *b;
  json_t *values, *da, *db, *o;
  size_t i;
  (void)state;
  values = yaml1(vtext);
  a = render_as(values, "templates", false, "sched-a", "team-a");
  b = render_as(values, "templates", false, "sched-b", "team-a");
  da = parse_all(a), db = parse_all(b);
  json_array_foreach(da, i, o) {
    const char *kind = str(o, "kind"), *name = str(o, "metadata.name");
    json_t *other = doc(db, kind, NULL);
    assert_string_equal(str(o, "metadata.labels.app\\.kubernetes\\.io/instance"), "sched-a");
    assert_string_equal(str(o, "metadata.labels.app\\.kubernetes\\.io/managed-by"), "Helm");
    assert_non_null(str(o, "metadata.labels.helm\\.sh/chart"));
    assert_non_null(other);
    assert_string_not_equal(name, str(other, "metadata.name"));
  }
  /* b's Deployment selects none of a's pods */
  assert_false(selects(at(doc(db, "Deployment", NULL), "spec.selector.matchLabels"),
                       at(doc(da, "Deployment", NULL), "spec.template.metadata.labels")));
  /* the same release name in another namespace: cluster-wide names still differ */
  free(b), json_decref(db);
  b = render_as(values, "templates", false, "sched-a", "team-b");
  db = parse_all(b);
  assert_string_not_equal(str(doc(da, "ClusterRole", NULL), "metadata.name"),
                          str(doc(db, "ClusterRole", NULL), "metadata.name"));
  assert_string_equal(str(doc(da, "Role", NULL), "metadata.namespace"), "team-a"); /* Lease */
  assert_null(at(doc(da, "Deployment", NULL), "spec.template.spec.priorityClassName"));
  assert_string_equal(str(doc(da, "Deployment", NULL),
                          "spec.template.spec.containers.0.env.1.valueFrom.fieldRef.fieldPath"),
                      "metadata.namespace");
  free(a), free(b), json_decref(da), json_decref(db);
  /* the values: extraArgs, imagePullSecrets, pod annotations and labels, a ServiceAccount
   * made elsewhere, an affinity of one's own, the API server's port and address */
  json_object_set_new(values, "extraArgs", json_pack("[s, s]", "-v=2", "--logging-format=json"));
  json_object_set_new(values, "imagePullSecrets", json_pack("[{s:s}]", "name", "regcred"));
  json_object_set_new(values, "podAnnotations", json_pack("{s:s}", "example.com/a", "1"));
  json_object_set_new(values, "podLabels", json_pack("{s:s}", "team", "ml"));
  json_object_set_new(
      values, "serviceAccount",
      json_pack("{s:b, s:s, s:{}}", "create", 0, "name", "existing", "annotations"));
  json_object_set_new(values, "affinity",
                      yaml1("nodeAffinity: {requiredDuringSchedulingIgnored"
                            "DuringExecution: {nodeSelectorTerms: [{matchE"
                            "xpressions: [{key: pool, operator: In, values: "
                            "[system]}]}]}}\n"));
  json_object_set_new(json_object_get(values, "networkPolicy"), "apiServer",
                      yaml1("ports: [{port: 8443, protocol: TCP}]\n"
                            "to: [{ipBlock: {cidr: 10.0.0.1/32}}]\n"));
  json_object_set_new(values, "priorityClassName", json_string("system-cluster-critical"));
  a = render_chart(values);
  da = parse_all(a);
  o = doc(da, "Deployment", NULL);
  assert_string_equal(str(o, "spec.template.spec.containers.0.args.2"), "-v=2");
  assert_string_equal(str(o, "spec.template.spec.containers.0.args.3"), "--logging-format=json");
  assert_string_equal(str(o, "spec.template.spec.imagePullSecrets.0.name"), "regcred");
  assert_string_equal(str(o, "spec.template.metadata.annotations.example\\.com/a"), "1");
  assert_string_equal(str(o, "spec.template.metadata.labels.team"), "ml");
  assert_string_equal(str(o, "spec.template.spec.serviceAccountName"), "existing");
  assert_string_equal(str(o, "spec.template.spec.priorityClassName"), "system-cluster-critical");
  assert_non_null(at(o, "spec.template.spec.affinity.nodeAffinity"));
  assert_null(at(o, "spec.template.spec.affinity.podAntiAffinity"));
  assert_null(doc(da, "ServiceAccount", NULL));
  assert_string_equal(str(doc(da, "ClusterRoleBinding", NULL), "subjects.0.name"), "existing");
  o = doc(da, "NetworkPolicy", NULL);
  assert_int_equal(json_integer_value(at(o, "spec.egress.0.ports.0.port")), 8443);
  assert_string_equal(str(o, "spec.egress.0.to.0.ipBlock.cidr"), "10.0.0.1/32");
  free(a), json_decref(da);
  /* monitoring: the ServiceMonitor's labels for kube-prometheus-stack, the alerts, the
   * dashboard for Grafana's sidecar (the dashboard file itself, parsed) */
  json_object_set_new(json_object_get(values, "serviceMonitor"), "enabled", json_true());
  json_object_set_new(json_object_get(values, "serviceMonitor"), "labels",
                      json_pack("{s:s}", "release", "kube-prometheus-stack"));
  json_object_set_new(json_object_get(values, "prometheusRule"), "enabled", json_true());
  json_object_set_new(json_object_get(values, "prometheusRule"), "slowCycleSeconds",
                      json_real(2.5));
  json_object_set_new(json_object_get(values, "prometheusRule"), "pendingGrowth", json_integer(40));
  json_object_set_new(json_object_get(values, "prometheusRule"), "labels",
                      json_pack("{s:s}", "release", "kps"));
  json_object_set_new(json_object_get(values, "grafanaDashboard"), "enabled", json_true());
  json_object_set_new(json_object_get(values, "grafanaDashboard"), "annotations",
                      json_pack("{s:s}", "grafana_folder", "Scheduling"));
  a = render_chart(values);
  da = parse_all(a);
  assert_string_equal(str(doc(da, "PrometheusRule", NULL), "metadata.labels.release"), "kps");
  assert_non_null(
      strstr(str(doc(da, "PrometheusRule", NULL), "spec.groups.0.rules.2.expr"), "[10m]))) > 2.5"));
  assert_non_null(
      strstr(str(doc(da, "PrometheusRule", NULL), "spec.groups.0.rules.4.expr"), "[1h:5m]) > 40"));
  assert_string_equal(
      str(doc(da, "ConfigMap", "tessera-dashboard"), "metadata.annotations.grafana_folder"),
      "Scheduling");
  assert_string_equal(str(doc(da, "ServiceMonitor", NULL), "metadata.labels.release"),
                      "kube-prometheus-stack");
  /* /metrics over HTTPS by default: scraped as Kueue's chart scrapes it, with the scraper's
   * token, and the self-signed certificate not verified */
  o = doc(da, "ServiceMonitor", NULL);
  assert_string_equal(str(o, "spec.endpoints.0.scheme"), "https");
  assert_string_equal(str(o, "spec.endpoints.0.bearerTokenFile"),
                      "/var/run/secrets/kubernetes.io/serviceaccount/token");
  assert_true(json_is_true(at(o, "spec.endpoints.0.tlsConfig.insecureSkipVerify")));
  free(a), json_decref(da);
  /* serviceMonitor.tlsConfig reaches the endpoint as given (a CA to verify with) */
  json_object_set_new(
      json_object_get(values, "serviceMonitor"), "tlsConfig",
      json_pack("{s:s, s:s}", "caFile", "/etc/prom/ca.crt", "serverName", "tessera-metrics"));
  a = render_chart(values);
  da = parse_all(a);
  o = doc(da, "ServiceMonitor", NULL);
  assert_string_equal(str(o, "spec.endpoints.0.tlsConfig.caFile"), "/etc/prom/ca.crt");
  assert_string_equal(str(o, "spec.endpoints.0.tlsConfig.serverName"), "tessera-metrics");
  assert_null(at(o, "spec.endpoints.0.tlsConfig.insecureSkipVerify"));
  json_object_set_new(json_object_get(values, "serviceMonitor"), "tlsConfig",
                      json_pack("{s:b}", "insecureSkipVerify", 1));
  assert_non_null(strstr(str(doc(da, "ConfigMap", "tessera-config"), "data.tessera\\.yaml"),
                         "metricsSecure: true"));
  assert_null(at(doc(da, "Deployment", NULL), "spec.template.spec.volumes.1"));
  o = doc(da, "PrometheusRule", NULL);
  assert_non_null(o);
  {
    const char *want[] = {"TesseraDown", "TesseraNoLeader", "TesseraCyclesSlow",
                          "TesseraWritesFailing", "TesseraPendingGrowing"};
    for (size_t k = 0; k < 5; k++) {
      char path[64];
      snprintf(path, sizeof path, "spec.groups.0.rules.%zu.alert", k);
      assert_string_equal(str(o, path), want[k]);
    }
  }
  o = doc(da, "ConfigMap", "tessera-dashboard");
  assert_non_null(o);
  assert_string_equal(str(o, "metadata.labels.grafana_dashboard"), "1");
  {
    json_error_t je;
    json_t *dash = json_loads(str(o, "data.tessera\\.json"), 0, &je);
    if (!dash) fail_msg("the dashboard in the ConfigMap: %s", je.text);
    assert_non_null(json_object_get(dash, "panels"));
    json_decref(dash);
  }
  free(a), json_decref(da);
  /* a certificate from a Secret: mounted, and tessera.yaml points at it; plain HTTP when
   * metricsSecure is off */
  json_object_set_new(values, "metricsCertSecret", json_string("tessera-metrics-tls"));
  a = render_chart(values);
  da = parse_all(a);
  o = doc(da, "Deployment", NULL);
  assert_string_equal(str(o, "spec.template.spec.volumes.1.secret.secretName"),
                      "tessera-metrics-tls");
  assert_string_equal(str(o, "spec.template.spec.containers.0.volumeMounts.1.mountPath"),
                      "/etc/tessera-tls");
  assert_non_null(strstr(str(doc(da, "ConfigMap", "tessera-config"), "data.tessera\\.yaml"),
                         "metricsCertDir: /etc/tessera-tls"));
  free(a), json_decref(da);
  json_object_set_new(values, "metricsCertSecret", json_string(""));
  json_object_set_new(json_object_get(values, "config"), "metricsSecure", json_false());
  a = render_chart(values);
  da = parse_all(a);
  assert_null(at(doc(da, "ServiceMonitor", NULL), "spec.endpoints.0.scheme"));
  free(a), json_decref(da);
  json_object_set_new(json_object_get(values, "config"), "metricsSecure", json_true());
  /* names: nameOverride in the name label and selectors, fullnameOverride in every object's
   * name; the ServiceAccount's annotations; where the pods may run */
  json_object_set_new(values, "nameOverride", json_string("gpu-sched"));
  json_object_set_new(values, "fullnameOverride", json_string("batch"));
  json_object_set_new(values, "serviceAccount",
                      yaml1("{create: true, name: '', annotations: {iam.example.com/role: r}}\n"));
  json_object_set_new(values, "nodeSelector", json_pack("{s:s}", "pool", "system"));
  json_object_set_new(values, "tolerations", yaml1("[{key: dedicated, operator: Exists}]\n"));
  a = render_chart(values);
  da = parse_all(a);
  o = doc(da, "Deployment", NULL);
  assert_string_equal(str(o, "metadata.name"), "batch");
  assert_string_equal(str(o, "spec.selector.matchLabels.app\\.kubernetes\\.io/name"), "gpu-sched");
  assert_string_equal(str(o, "spec.template.spec.serviceAccountName"), "batch");
  assert_string_equal(str(o, "spec.template.spec.volumes.0.configMap.name"), "batch-config");
  assert_string_equal(str(o, "spec.template.spec.nodeSelector.pool"), "system");
  assert_string_equal(str(o, "spec.template.spec.tolerations.0.key"), "dedicated");
  assert_non_null(doc(da, "ConfigMap", "batch-config"));
  assert_string_equal(str(doc(da, "ClusterRole", NULL), "metadata.name"), "batch-tessera-system");
  assert_string_equal(str(doc(da, "ServiceAccount", NULL), "metadata.name"), "batch");
  assert_string_equal(
      str(doc(da, "ServiceAccount", NULL), "metadata.annotations.iam\\.example\\.com/role"), "r");
  assert_string_equal(str(doc(da, "Service", NULL), "spec.selector.app\\.kubernetes\\.io/name"),
                      "gpu-sched");
  free(a), json_decref(da);
  json_decref(values);
  free(vtext);
}

/* NOTES.txt and the `helm test` pod render, the pod within the restricted profile. */
static void test_chart_notes_and_tests(void **state) {
  char *vtext = slurp(CHART "/values.yaml"), *t, *out, why[256];
  json_t *values = yaml1(vtext), *docs, *pod;
  json_t *release = json_pack("{s:s, s:s, s:s}", "Name", "tessera", "Namespace", "tessera-system",
                              "Service", "Helm");
  chart_env env = {values, release, chart_meta(), CHART, json_object()};
  (void)state;
  load_helpers(&env);
  t = slurp(CHART "/templates/NOTES.txt");
  assert_non_null(t);
  if (!(out = chart_render(t, &env, why, sizeof why))) fail_msg("NOTES.txt: %s", why);
  assert_non_null(strstr(out, "get lease tessera"));
  assert_non_null(strstr(out, "-n tessera-system get lease")); /* the release's namespace */
  free(out), free(t);
  out = render_as(values, "templates/tests", false, "tessera", "tessera-system");
  docs = parse_all(out);
  pod = doc(docs, "Pod", NULL);
  assert_non_null(pod);
  assert_string_equal(str(pod, "metadata.annotations.helm\\.sh/hook"), "test");
  assert_string_equal(str(pod, "spec.containers.0.args.0"), "probe");
  assert_non_null(strstr(str(pod, "spec.containers.0.args.1"), "/readyz"));
  assert_true(json_is_true(at(pod, "spec.securityContext.runAsNonRoot")));
  free(out), json_decref(docs);
  json_decref(release), json_decref(env.chart), json_decref(env.defines), json_decref(values);
  free(vtext);
}

/* ---- values.schema.json, as Helm applies it (the JSON Schema keywords it uses) --------- */

static bool type_is(json_t *v, const char *t) {
  if (!strcmp(t, "object")) return json_is_object(v);
  if (!strcmp(t, "array")) return json_is_array(v);
  if (!strcmp(t, "string")) return json_is_string(v);
  if (!strcmp(t, "integer")) return json_is_integer(v);
  if (!strcmp(t, "number")) return json_is_number(v);
  if (!strcmp(t, "boolean")) return json_is_boolean(v);
  return false;
}

/* v against schema sch at path: the first violation into why (false), else true. Knows type,
 * properties, additionalProperties (false or a schema), required, items, enum, minLength,
 * minItems, minimum, exclusiveMinimum; refuses a schema keyword it does not know. */
static bool conforms(json_t *sch, json_t *v, const char *path, char *why, size_t cap) {
  const char *k;
  json_t *x;
  json_object_foreach(sch, k, x) {
    static const char *const known[] = {"$schema",
                                        "title",
                                        "description",
                                        "type",
                                        "properties",
                                        "additionalProperties",
                                        "required",
                                        "items",
                                        "enum",
                                        "minLength",
                                        "minItems",
                                        "minimum",
                                        "exclusiveMinimum"};
    bool ok = false;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) ok |= !strcmp(k, known[i]);
    if (!ok) fail_msg("values.schema.json: %s: keyword %s not checked here", path, k);
  }
  if ((x = json_object_get(sch, "type")) && !type_is(v, json_string_value(x)))
    return snprintf(why, cap, "%s: must be %s", path, json_string_value(x)), false;
  if ((x = json_object_get(sch, "enum"))) {
    size_t i;
    json_t *e;
    bool in = false;
    json_array_foreach(x, i, e) in |= json_equal(e, v);
    if (!in) return snprintf(why, cap, "%s: not one of the allowed values", path), false;
  }
  if ((x = json_object_get(sch, "minLength")) && json_is_string(v) &&
      strlen(json_string_value(v)) < (size_t)json_integer_value(x))
    return snprintf(why, cap, "%s: too short", path), false;
  if ((x = json_object_get(sch, "minItems")) && json_is_array(v) &&
      json_array_size(v) < (size_t)json_integer_value(x))
    return snprintf(why, cap, "%s: too few items", path), false;
  if ((x = json_object_get(sch, "minimum")) && json_is_number(v) &&
      json_number_value(v) < json_number_value(x))
    return snprintf(why, cap, "%s: below the minimum", path), false;
  if ((x = json_object_get(sch, "exclusiveMinimum")) && json_is_number(v) &&
      json_number_value(v) <= json_number_value(x))
    return snprintf(why, cap, "%s: not above the minimum", path), false;
  if ((x = json_object_get(sch, "required")) && json_is_object(v)) {
    size_t i;
    json_t *r;
    json_array_foreach(x, i, r)
      if (!json_object_get(v, json_string_value(r)))
        return snprintf(why, cap, "%s: %s is required", path, json_string_value(r)), false;
  }
  if (json_is_object(v)) {
    json_t *props = json_object_get(sch, "properties"),
           *add = json_object_get(sch, "additionalProperties");
    json_object_foreach(v, k, x) {
      char sub[300];
      json_t *ps = json_object_get(props, k);
      snprintf(sub, sizeof sub, "%s.%s", path, k);
      if (!ps && json_is_false(add))
        return snprintf(why, cap, "%s: not a value of the chart", sub), false;
      if (!ps && json_is_object(add)) ps = add;
      if (ps && !conforms(ps, x, sub, why, cap)) return false;
    }
  }
  if (json_is_array(v) && (x = json_object_get(sch, "items"))) {
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
      char sub[300];
      snprintf(sub, sizeof sub, "%s[%zu]", path, i);
      if (!conforms(x, e, sub, why, cap)) return false;
    }
  }
  return true;
}

/* The chart's values conform to values.schema.json, and values a user gets wrong do not,
 * named by their path. */
static void test_chart_values_schema(void **state) {
  char *vtext = slurp(CHART "/values.yaml"), why[400];
  json_error_t je;
  json_t *sch = json_load_file(CHART "/values.schema.json", 0, &je), *values;
  static const struct {
    const char *yaml, *why;
  } bad[] = {
      {"replicas: two\n", ".replicas: must be integer"},
      {"replica: 2\n", ".replica: not a value of the chart"},
      {"image: {repository: r, tag: ''}\n", ".image.tag: too short"},
      {"image: {repository: r, tag: t, pullPolicy: Sometimes}\n",
       ".image.pullPolicy: not one of the allowed values"},
      {"networkPolicy: {apiServer: {ports: []}}\n",
       ".networkPolicy.apiServer.ports: too few items"},
      {"extraArgs: [-v, 2]\n", ".extraArgs[1]: must be string"},
      {"podLabels: {team: 1}\n", ".podLabels.team: must be string"},
  };
  (void)state;
  if (!sch) fail_msg("values.schema.json: %s", je.text);
  values = yaml1(vtext);
  if (!conforms(sch, values, "", why, sizeof why)) fail_msg("values.yaml: %s", why);
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    json_t *b = yaml1(bad[i].yaml);
    if (conforms(sch, b, "", why, sizeof why)) fail_msg("accepted: %s", bad[i].yaml);
    assert_string_equal(why, bad[i].why);
    json_decref(b);
  }
  json_decref(values);
  json_decref(sch);
  free(vtext);
}

/* The real helm, when it is installed (it is not a Debian package: `make test` runs this only
 * where an operator put it on PATH, e.g. from https://get.helm.sh or the distribution's
 * snap): `helm lint --strict` passes, and `helm template` renders exactly the objects this
 * renderer does (compared as parsed documents, so whitespace and order do not matter). */
static void test_chart_real_helm(void **state) {
  const char *path = getenv("PATH");
  char helm[600] = "", cmd[1200];
  FILE *p;
  ts_buf out;
  json_t *theirs, *ours, *o, *values;
  char *vtext, *mine, buf[4096];
  size_t i, n;
  int st;
  (void)state;
  for (const char *d = path; d && *d && !*helm;) {
    size_t len = strcspn(d, ":");
    snprintf(helm, sizeof helm, "%.*s/helm", (int)len, d);
    if (access(helm, X_OK)) helm[0] = '\0';
    d += len + (d[len] == ':');
  }
  if (!*helm) {
    print_message("helm is not installed: the real-helm comparison is skipped\n");
    skip();
  }
  snprintf(cmd, sizeof cmd, "'%s' lint --strict " CHART " 2>&1", helm);
  assert_non_null(p = popen(cmd, "r"));
  while (fgets(buf, sizeof buf, p)) print_message("%s", buf);
  st = pclose(p);
  assert_int_equal(st, 0);
  snprintf(cmd, sizeof cmd,
           "'%s' template tessera " CHART " --namespace tessera-system --skip-tests", helm);
  assert_non_null(p = popen(cmd, "r"));
  ts_buf_init(&out, 0);
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) ts_buf_append(&out, buf, n);
  assert_int_equal(pclose(p), 0);
  ts_buf_putc(&out, '\0');
  theirs = parse_all(out.data);
  vtext = slurp(CHART "/values.yaml");
  values = yaml1(vtext);
  mine = render_chart(values);
  ours = parse_all(mine);
  json_array_foreach(theirs, i, o) {
    json_t *same = doc(ours, str(o, "kind"), str(o, "metadata.name"));
    if (!same || !json_equal(same, o))
      fail_msg("helm renders %s %s differently", str(o, "kind"), str(o, "metadata.name"));
  }
  assert_int_equal(json_array_size(theirs) + 1, json_array_size(ours)); /* + the Namespace */
  json_decref(theirs), json_decref(ours), json_decref(values);
  free(vtext), free(mine), ts_buf_free(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_renderer),
      cmocka_unit_test(test_chart_renders),
      cmocka_unit_test(test_chart_conventions),
      cmocka_unit_test(test_chart_notes_and_tests),
      cmocka_unit_test(test_chart_values_schema),
      cmocka_unit_test(test_chart_real_helm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
