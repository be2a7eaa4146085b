/* cmd/probe.c - `tessera probe URL`: GET an endpoint of a running Tessera (/healthz, /readyz,
 * /metrics) and exit 0 when it answers 2xx, 1 otherwise; for the chart's `helm test` and exec
 * probes, in an image without curl. Plain HTTP/1.0 on a socket: those endpoints serve nothing
 * else (kubeclient/ alone talks to the API server). */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"

static void usage(FILE *f) {
  fputs("usage: tessera probe URL [--timeout SECONDS]\n"
        "  URL         an http:// endpoint of tessera run (/healthz, /readyz, /metrics)\n"
        "  --timeout   give up after this many seconds (5)\n"
        "exit status 0 when it answers 2xx (its body on standard output), 1 otherwise\n",
        f);
}

static const cmd_flag probe_flags[] = {{"--timeout", NULL, "SECONDS"}, {NULL, NULL, NULL}};

/* http://HOST[:PORT][/PATH] into its parts; false when it is not one. */
static bool split_url(const char *url, char *host, size_t hcap, char *port, size_t pcap,
                      const char **path) {
  const char *h = url + 7, *end, *colon;
  size_t hlen;
  if (strncmp(url, "http://", 7)) return false;
  end = h + strcspn(h, "/");
  *path = *end ? end : "/";
  if (*h == '[') { /* [IPv6]:port */
    const char *close = memchr(h, ']', (size_t)(end - h));
    if (!close) return false;
    hlen = (size_t)(close - h - 1), h++;
    colon = close + 1 < end && close[1] == ':' ? close + 1 : NULL;
  } else {
    colon = memchr(h, ':', (size_t)(end - h));
    hlen = (size_t)((colon ? colon : end) - h);
  }
  if (!hlen || hlen >= hcap) return false;
  memcpy(host, h, hlen), host[hlen] = '\0';
  snprintf(port, pcap, "%.*s", colon ? (int)(end - colon - 1) : 2, colon ? colon + 1 : "80");
  return *port != '\0';
}

/* Waits until fd is ready for events, at most until deadline; false on a timeout. */
static bool wait_fd(int fd, short events, double deadline) {
  struct pollfd p = {fd, events, 0};
  double left = deadline - ts_time_mono_s();
  return left > 0 && poll(&p, 1, (int)(left * 1000) + 1) == 1;
}

int cmd_probe(int argc, char **argv) {
  static cmd_arg v[CMD_ARGS_MAX];
  const char *url = NULL, *path;
  char host[256], port[16], req[1200], buf[8192];
  long timeout = 5;
  struct addrinfo hints = {0}, *ai = NULL;
  int n, fd = -1, status = 0, parsed;
  size_t got = 0;
  ssize_t r;
  double deadline;
  parsed = cmd_flags_parse("probe", usage, probe_flags, argc, argv, v, &n);
  if (parsed != CMD_PARSED) return cmd_flags_exit(parsed);
  for (int i = 0; i < n; i++) {
    char *end;
    if (v[i].flag == 0 && ((timeout = strtol(v[i].value, &end, 10)) < 1 || *end || timeout > 300))
      return cmd_usage_error("probe", usage, "--timeout %s: a number of seconds from 1 to 300",
                             v[i].value);
    if (v[i].flag < 0 && url) return cmd_usage_error("probe", usage, "one URL only");
    if (v[i].flag < 0) url = v[i].value;
  }
  if (!url || !split_url(url, host, sizeof host, port, sizeof port, &path) || strlen(path) > 1000)
    return cmd_usage_error("probe", usage, "give an http://HOST:PORT/PATH URL");
  deadline = ts_time_mono_s() + (double)timeout;
  hints.ai_socktype = SOCK_STREAM;
  if ((r = getaddrinfo(host, port, &hints, &ai)) != 0) {
    fprintf(stderr, "tessera probe: %s: %s\n", url, gai_strerror((int)r));
    return 1;
  }
  for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
    if ((fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK, a->ai_protocol)) < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 ||
        (errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline))) {
      int e = 0;
      socklen_t el = sizeof e;
      if (!getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) && !e) break;
    }
    close(fd), fd = -1;
  }
  freeaddrinfo(ai);
  if (fd < 0) {
    fprintf(stderr, "tessera probe: %s: cannot connect\n", url);
    return 1;
  }
  n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s:%s\r\nConnection: close\r\n\r\n", path,
               host, port);
  for (int sent = 0; sent < n;) {
    if (!wait_fd(fd, POLLOUT, deadline) || (r = send(fd, req + sent, (size_t)(n - sent), 0)) < 0) {
      fprintf(stderr, "tessera probe: %s: the request could not be sent\n", url);
      close(fd);
      return 1;
    }
    sent += (int)r;
  }
  /* the head (status line and headers, at most sizeof buf), then the body as it comes */
  const char *body = NULL;
  while (!body && got < sizeof buf - 1 && wait_fd(fd, POLLIN, deadline) &&
         (r = recv(fd, buf + got, sizeof buf - 1 - got, 0)) > 0) {
    got += (size_t)r;
    buf[got] = '\0';
    body = strstr(buf, "\r\n\r\n");
  }
  if (!body || sscanf(buf, "HTTP/%*d.%*d %d", &status) != 1) {
    fprintf(stderr, "tessera probe: %s: no HTTP answer within %ld s\n", url, timeout);
    close(fd);
    return 1;
  }
  fwrite(body + 4, 1, got - (size_t)(body + 4 - buf), stdout);
  while (wait_fd(fd, POLLIN, deadline) && (r = recv(fd, buf, sizeof buf, 0)) > 0)
    fwrite(buf, 1, (size_t)r, stdout);
  close(fd);
  if (status < 200 || status > 299) {
    fprintf(stderr, "tessera probe: %s: HTTP %d\n", url, status);
    return 1;
  }
  return 0;
}
