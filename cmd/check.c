/* cmd/check.c - `tessera check [--config FILE] [PATH...]`: validate a configuration and
 * manifests without a cluster, with the errors the API server and the admission webhooks
 * Tessera knows of would give, naming the file, line, object and field. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "config/config.h"
#include "model/model.h"

typedef struct check {
  int objects; /* objects of kinds Tessera reads */
  int errors;  /* problems found */
} check;

static ts_rc on_object(void *ud, json_t *obj, const char *file, int line, int index) {
  check *c = ud;
  model_decode_opts opts = {.admission = true};
  model_obj *o = NULL;
  ts_err err;
  ts_err_clear(&err);
  if (model_decode(obj, &opts, &o, &err) != TS_OK) {
    if (line)
      fprintf(stderr, "%s:%d: %s\n", file, line, err.text);
    else
      fprintf(stderr, "%s: items[%d]: %s\n", file, index, err.text);
    c->errors++;
    c->objects++;
    return TS_OK;
  }
  if (o) c->objects++;
  model_obj_free(o);
  return TS_OK;
}

static void on_error(void *ud, const ts_err *err) {
  fprintf(stderr, "%s\n", err->text);
  ((check *)ud)->errors++;
}

int cmd_check(int argc, char **argv) {
  check c = {0};
  int paths = 0;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--config") && i + 1 < argc) {
      cfg_tessera cfg;
      ts_err err;
      cfg_tessera_default(&cfg);
      ts_err_clear(&err);
      if (cfg_tessera_load(argv[++i], &cfg, &err) != TS_OK) {
        fprintf(stderr, "%s\n", err.text);
        c.errors++;
      } else {
        printf("%s: configuration is valid\n", argv[i]);
      }
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "usage: tessera check [--config FILE] [PATH...]\n");
      return 2;
    } else {
      paths++;
      if (cfg_load_path(argv[i], on_object, on_error, &c) != TS_OK) c.errors++;
    }
  }
  if (paths) printf("%d objects checked, %d errors\n", c.objects, c.errors);
  if (!paths && argc == 0) {
    fprintf(stderr, "usage: tessera check [--config FILE] [PATH...]\n");
    return 2;
  }
  return c.errors ? 1 : 0;
}
