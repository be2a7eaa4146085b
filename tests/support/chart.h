/* tests/support/chart.h - renders Helm templates of the subset Tessera's chart uses, as Helm
 * would: `{{ .Release.Namespace }}`, `{{ .Values.a.b }}`, pipelines through toYaml, indent N,
 * nindent N, sha256sum and quote, `{{ if X }}`/`{{ with X }}` ... `{{ end }}` (with `.` inside
 * a with), and `{{-` / `-}}` trimming. Anything else is an error naming the action, so a
 * template that uses more fails its test instead of rendering wrong. toYaml writes block YAML
 * with sorted keys and quotes strings that would read back as another type, as Helm does. */
#ifndef CHART_H
#define CHART_H

#include <jansson.h>
#include <stddef.h>

/* Renders template text with values (.Values) and release (.Release: {Name, Namespace}).
 * Returns new text (free()), or NULL with the problem in why. */
char *chart_render(const char *text, json_t *values, json_t *release, char *why, size_t cap);

/* toYaml: block YAML of v without a final newline (new text, free()). */
char *chart_to_yaml(json_t *v);

#endif
