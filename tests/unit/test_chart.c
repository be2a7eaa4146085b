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

/* Every template rendered with values, in file-name order, as one multi-document text. */
static char *render_chart(json_t *values) {
  DIR *d = opendir(CHART "/templates");
  struct dirent *e;
  char *names[32], why[256];
  size_t n = 0;
  json_t *release = json_pack("{s:s, s:s}", "Name", "tessera", "Namespace", "tessera-system");
  ts_buf all;
  assert_non_null(d);
  while ((e = readdir(d)) && n < 32)
    if (strstr(e->d_name, ".yaml")) names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, n, sizeof *names, name_cmp);
  ts_buf_init(&all, 0);
  ts_buf_puts(&all, "# Rendered from deploy/helm/tessera with its default values (namespace\n"
                    "# tessera-system) by `make manifests`; `make test` checks it is current.\n");
  for (size_t i = 0; i < n; i++) {
    char path[300], *text, *out;
    snprintf(path, sizeof path, CHART "/templates/%s", names[i]);
    assert_non_null(text = slurp(path));
    if (!(out = chart_render(text, values, release, why, sizeof why)))
      fail_msg("%s: %s", path, why);
    if (strspn(out, " \n") != strlen(out)) { /* a template whose if was false renders nothing */
      ts_buf_printf(&all, "---\n# Source: tessera/templates/%s\n%s%s", names[i], out,
                    out[strlen(out) - 1] == '\n' ? "" : "\n");
    }
    free(out);
    free(text);
    free(names[i]);
  }
  json_decref(release);
  return ts_buf_steal(&all);
}

static json_t *at(json_t *o, const char *path) {
  char buf[256], *save = NULL, *p;
  snprintf(buf, sizeof buf, "%s", path);
  for (p = strtok_r(buf, ".", &save); p && o; p = strtok_r(NULL, ".", &save))
    o = json_is_array(o) ? json_array_get(o, (size_t)atoi(p)) : json_object_get(o, p);
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
    if (strncmp(kind, "Cluster", 7)) /* namespaced: in the release's namespace */
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
  assert_int_equal(kinds, 10); /* ConfigMap, Deployment, NetworkPolicy, PodDisruptionBudget,
                                  ServiceAccount, ClusterRole and Role with their bindings,
                                  Service */
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
  assert_int_equal(kinds, 10);
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
  assert_int_equal(kinds, 9); /* the 11 above (ServiceMonitor and NetworkPolicy on) less the
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
          if (strcmp(vb, "get") && strcmp(vb, "list") && strcmp(vb, "watch"))
            fail_msg("shadow RBAC grants %s on %s", vb, json_dumps(rule, JSON_COMPACT));
        }
    }
    assert_int_equal(roles, 1);
    assert_non_null(args);
    assert_string_equal(json_string_value(json_array_get(args, 3)), "--shadow");
    assert_string_equal(json_string_value(json_array_get(args, 5)), "/var/run/tessera");
    assert_string_equal(json_string_value(json_array_get(args, 7)), "default-scheduler");
    assert_non_null(strstr(out, "emptyDir: {sizeLimit: 64Mi}"));
  }
  json_decref(docs);
  free(out);
  json_decref(values);
  free(vtext);
}

/* The renderer, on the constructs the chart uses, as Helm's documentation defines them
 * (toYaml sorts keys, puts sequences at their key's column and quotes what would read back
 * as another type; nindent starts with a newline; {{- and -}} eat the white space beside). */
static void test_renderer(void **state) {
  json_t *v = yaml1("a: {b: 1, s: '0.1.0', t: 'true', e: {}, l: [x, {k: v, j: [1, 2]}]}\n"
                    "r: {limits: {memory: 2Gi}, requests: {cpu: 500m}}\nno: false\n");
  json_t *rel = json_pack("{s:s}", "Namespace", "ns");
  char why[256], *o;
  (void)state;
  o = chart_render("x: {{ .Values.a.b }}\nns: {{ .Release.Namespace }}\n", v, rel, why, sizeof why);
  assert_string_equal(o, "x: 1\nns: ns\n");
  free(o);
  o = chart_render("r: {{ toYaml .Values.r | nindent 2 }}\n", v, rel, why, sizeof why);
  assert_string_equal(o, "r: \n  limits:\n    memory: 2Gi\n  requests:\n    cpu: 500m\n");
  free(o);
  o = chart_render("{{ toYaml .Values.a | indent 2 }}", v, rel, why, sizeof why);
  assert_string_equal(o, "  b: 1\n  e: {}\n  l:\n  - x\n  - j:\n    - 1\n    - 2\n    k: v\n"
                         "  s: 0.1.0\n  t: \"true\"");
  free(o);
  o = chart_render("a\n{{- if .Values.no }}\nhidden\n{{- end }}\nb\n{{- with .Values.a.e }}\n"
                   "empty\n{{- end }}\n{{- with .Values.r }}\nc: {{ toYaml . | nindent 2 }}\n"
                   "{{- end }}\n",
                   v, rel, why, sizeof why);
  assert_string_equal(o, "a\nb\nc: \n  limits:\n    memory: 2Gi\n  requests:\n    cpu: 500m\n");
  free(o);
  o = chart_render("a\n{{- if not .Values.no }}\nshown\n{{- end }}\n{{- if not .Values.a.b }}\n"
                   "hidden\n{{- end }}\nb\n",
                   v, rel, why, sizeof why);
  assert_string_equal(o, "a\nshown\nb\n");
  free(o);
  o = chart_render("{{ toYaml .Values.r | sha256sum }}", v, rel, why, sizeof why);
  assert_int_equal(strlen(o), 64);
  free(o);
  /* what it does not know is an error, not a wrong rendering */
  assert_null(chart_render("{{ .Values.missing }}", v, rel, why, sizeof why));
  assert_string_equal(why, ".Values.missing: no value");
  assert_null(chart_render("{{ include \"x\" . }}", v, rel, why, sizeof why));
  assert_null(chart_render("{{ if .Values.no }}", v, rel, why, sizeof why));
  assert_string_equal(why, "{{ if .Values.no }} without {{ end }}");
  json_decref(v);
  json_decref(rel);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_renderer),
      cmocka_unit_test(test_chart_renders),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
