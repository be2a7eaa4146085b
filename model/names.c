/* model/names.c - the API server's rules for names, label keys and label values
 * (apimachinery's validation: IsQualifiedName, IsValidLabelValue), worded as it words them. */
#include "model/model_int.h"

#include <string.h>

#define LABEL_VALUE_MAX 63
#define QNAME_MAX       63  /* the name part of a qualified name */
#define PREFIX_MAX      253 /* its DNS subdomain prefix */

static bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], or empty when empty_ok. */
static bool label_like(const char *v, size_t n, bool empty_ok) {
  if (!n) return empty_ok;
  if (!alnum(v[0]) || !alnum(v[n - 1])) return false;
  for (size_t i = 1; i + 1 < n; i++)
    if (!alnum(v[i]) && v[i] != '-' && v[i] != '_' && v[i] != '.') return false;
  return true;
}

/* A lowercase RFC 1123 subdomain. */
static bool subdomain(const char *v, size_t n) {
  size_t label = 0;
  if (!n || n > PREFIX_MAX) return false;
  for (size_t i = 0; i <= n; i++) {
    char c = i < n ? v[i] : '.';
    if (c == '.') {
      if (!label || v[i - 1] == '-') return false;
      label = 0;
      continue;
    }
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c == '-' && label))) return false;
    label++;
  }
  return true;
}

const char *model_subdomain_error(const char *v) {
  size_t n = strlen(v);
  if (n > PREFIX_MAX) return "must be no more than 253 characters";
  if (!subdomain(v, n))
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
           "'-' or '.', and must start and end with an alphanumeric character (e.g. "
           "'example.com', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  return NULL;
}

const char *model_dns_label_error(const char *v) {
  size_t n = strlen(v);
  if (strchr(v, '.')) return "must not contain dots";
  if (n > QNAME_MAX) return "must be no more than 63 characters";
  if (!n || !subdomain(v, n))
    return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
           "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
           "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
  return NULL;
}

const char *model__c_identifier_error(const char *v) {
  bool ok = (v[0] >= 'a' && v[0] <= 'z') || (v[0] >= 'A' && v[0] <= 'Z') || v[0] == '_';
  for (size_t i = 1; ok && v[i]; i++) ok = alnum(v[i]) || v[i] == '_';
  if (!ok)
    return "a valid C identifier must start with alphabetic character or '_', followed by a "
           "string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or "
           "'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')";
  return NULL;
}

const char *model__label_value_error(const char *v) {
  size_t n = strlen(v);
  if (n > LABEL_VALUE_MAX) return "must be no more than 63 characters";
  if (!label_like(v, n, true))
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', "
           "'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  "
           "or 'my_value',  or '12345', regex used for validation is "
           "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  return NULL;
}

const char *model__qualified_name_error(const char *v) {
  const char *slash = strchr(v, '/'), *name = slash ? slash + 1 : v;
  if (slash && strchr(name, '/'))
    return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
           "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
           "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
           "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
  if (slash && !subdomain(v, (size_t)(slash - v)))
    return slash == v ? "prefix part must be non-empty"
                      : "prefix part a lowercase RFC 1123 subdomain must consist of lower case "
                        "alphanumeric characters, '-' or '.', and must start and end with an "
                        "alphanumeric character (e.g. 'example.com', regex used for validation "
                        "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  if (!*name) return "name part must be non-empty";
  if (strlen(name) > QNAME_MAX) return "name part must be no more than 63 characters";
  if (!label_like(name, strlen(name), false))
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
           "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
           "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  return NULL;
}
