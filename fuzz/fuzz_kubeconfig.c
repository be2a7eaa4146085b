/* libFuzzer target: kubeconfig loading (kubeclient/auth.c) from an in-memory file. Refusals are
 * fine; crashes and leaks are not. kc_auth_parse: an exec plugin is read, never run (a fuzzer
 * must not run the commands it makes up). */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kubeclient/kc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("kubeconfig", 0);
  char path[64];
  kc_auth a;
  ts_err err;
  if (fd < 0) return 0;
  if (write(fd, data, size) == (ssize_t)size) {
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (kc_auth_parse(path, NULL, &a, &err) == TS_OK) kc_auth_free(&a);
    if (kc_auth_parse(path, "other", &a, &err) == TS_OK) kc_auth_free(&a);
  }
  close(fd);
  return 0;
}
