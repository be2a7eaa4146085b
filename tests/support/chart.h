/* tests/support/chart.h - renders Helm templates of the subset Tessera's chart uses, as Helm
 * would: `{{ .Release.X }}`, `{{ .Chart.X }}`, `{{ .Values.a.b }}`, `$` (the root), string
 * literals; pipelines through toYaml, indent N, nindent N, sha256sum, quote and default X;
 * `{{ include "name" . }}` of a `{{ define "name" }}` (from _helpers.tpl, rendered first),
 * `{{ .Files.Get "path" }}`; `{{ if X }}` / `{{ if not X }}` / `{{ if eq A B }}` and
 * `{{ with X }}` with `{{ else }}` ... `{{ end }}` (with `.` inside a with); and `{{-` / `-}}`
 * trimming. Anything else is an error naming the action, so a template that uses more fails its
 * test instead of rendering wrong. toYaml writes block YAML with sorted keys and quotes strings
 * that would read back as another type, as Helm does. */
#ifndef CHART_H
#define CHART_H

#include <jansson.h>
#include <stddef.h>

/* What templates see. */
typedef struct chart_env {
  json_t *values;  /* .Values (borrowed) */
  json_t *release; /* .Release: {Name, Namespace, Service} (borrowed) */
  json_t *chart;   /* .Chart: Chart.yaml's fields by Helm's names (Name, Version, ...) */
  const char *dir; /* the chart's directory, for .Files.Get */
  json_t *defines; /* name -> body text: filled by define, read by include (caller's) */
} chart_env;

/* Renders template text in env. Returns new text (free()), or NULL with the problem in why. */
char *chart_render(const char *text, chart_env *env, char *why, size_t cap);

/* toYaml: block YAML of v without a final newline (new text, free()). */
char *chart_to_yaml(json_t *v);

#endif
