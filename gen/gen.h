/*
 * gen/gen.h - generated clusters for benchmarks: `tessera bench` and make bench build each
 * scenario in memory at the size asked for and time what Tessera does with it.
 */
#ifndef GEN_H
#define GEN_H

#include "common/ts.h"
#include "model/model.h"

typedef struct gen gen;

/* One scenario: how to build a cluster of `nodes` nodes and about `pods` pending pods. */
typedef struct gen_scenario {
  const char *name;                           /* "mix" */
  const char *what;                           /* one line for the help */
  int nodes, pods;                            /* default size */
  void (*build)(gen *g, int nodes, int pods); /* private */
} gen_scenario;

/* Every scenario, in a fixed order. */
const gen_scenario *gen_scenarios(size_t *n);
/* The scenario of that name, or NULL. */
const gen_scenario *gen_find(const char *name);
/* Adds the scenario's objects to m (deterministic for a seed; 0: the default). TS_EINVAL for a
 * bad size, or the first object the model refused (err names it). */
ts_rc gen_build(const gen_scenario *s, model *m, int nodes, int pods, uint32_t seed, ts_err *err);

#endif
