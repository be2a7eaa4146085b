/* cmd/probe.c - `tessera probe URL`: GET an endpoint of a running Tessera (/healthz, /readyz,
 * /metrics) and exit 0 when it answers 2xx, 1 otherwise; for the chart's `helm test` and exec
 * probes, in an image without curl. */
#include <curl/curl.h>
#include <string.h>

#include "cmd/cmd.h"

static void usage(FILE *f) {
  fputs("usage: tessera probe URL [--timeout SECONDS]\n"
        "  URL         an http:// endpoint of tessera run (/healthz, /readyz, /metrics)\n"
        "  --timeout   give up after this many seconds (5)\n"
        "exit status 0 when it answers 2xx (its body on standard output), 1 otherwise\n",
        f);
}

static const cmd_flag probe_flags[] = {{"--timeout", NULL, "SECONDS"}, {NULL, NULL, NULL}};

static size_t out(char *p, size_t size, size_t n, void *ud) {
  return fwrite(p, size, n, ud);
}

int cmd_probe(int argc, char **argv) {
  static cmd_arg v[CMD_ARGS_MAX];
  const char *url = NULL;
  long timeout = 5, status = 0;
  CURL *c;
  CURLcode rc;
  int n, parsed = cmd_flags_parse("probe", usage, probe_flags, argc, argv, v, &n);
  if (parsed != CMD_PARSED) return cmd_flags_exit(parsed);
  for (int i = 0; i < n; i++) {
    char *end;
    if (v[i].flag == 0 && ((timeout = strtol(v[i].value, &end, 10)) < 1 || *end || timeout > 300)) {
      fprintf(stderr, "tessera probe: --timeout %s: a number of seconds from 1 to 300\n",
              v[i].value);
      return 2;
    }
    if (v[i].flag < 0 && url) {
      fprintf(stderr, "tessera probe: one URL only\n");
      return 2;
    }
    if (v[i].flag < 0) url = v[i].value;
  }
  if (!url || strncmp(url, "http://", 7)) {
    fprintf(stderr, "tessera probe: give an http:// URL\n");
    usage(stderr);
    return 2;
  }
  if (!(c = curl_easy_init())) return 1;
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
  curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, out);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, stdout);
  rc = curl_easy_perform(c);
  if (rc == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK) {
    fprintf(stderr, "tessera probe: %s: %s\n", url, curl_easy_strerror(rc));
    return 1;
  }
  if (status < 200 || status > 299) {
    fprintf(stderr, "tessera probe: %s: HTTP %ld\n", url, status);
    return 1;
  }
  return 0;
}
