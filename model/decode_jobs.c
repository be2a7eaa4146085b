/* model/decode_jobs.c - the jobs that own pods (batch Job, JobSet, the Kubeflow training jobs),
 * decoded to what gang scheduling needs of them: how many of their pods must start together.
 *
 * The rules are those of the gang schedulers these jobs are written for:
 *   - batch/v1 Job: its parallelism, capped by the completions still to come (completions -
 *     status.succeeded) when completions is set; as Kueue sizes a Job's pod set.
 *   - JobSet: the sum over spec.replicatedJobs of replicas x the Job template's parallelism
 *     (capped by its completions), as Kueue sizes a JobSet's pod sets.
 *   - PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob (kubeflow.org/v1) and MPIJob (v2beta1,
 *     v1): spec.runPolicy.schedulingPolicy.minAvailable when set, else the sum of the replicas
 *     of every replica type (the training operator's PodGroup minMember). An elastic
 *     PyTorchJob counts elasticPolicy.minReplicas workers; an MPIJob whose launcher is created
 *     only once the workers are ready (launcherCreationPolicy WaitForWorkersReady) leaves the
 *     launcher out. */
#include "model/model_int.h"

#include <string.h>

#define JOB_PODS_MAX 1000000 /* more pods than any job runs at once: refused as invalid */

/* A non-negative int32 at parent[key] (def when absent). */
static ts_rc count(mdec *d, json_t *parent, const char *key, int32_t def, int32_t *out) {
  bool has = false;
  ts_rc rc = model__int32(d, parent, key, out, &has);
  if (rc != TS_OK) return rc;
  if (!has) *out = def;
  if (*out < 0) return model__fail_at(d, key, "must be greater than or equal to 0");
  if (*out > JOB_PODS_MAX) return model__fail_at(d, key, "must be at most %d", JOB_PODS_MAX);
  return TS_OK;
}

/* Adds b to *a, refusing totals over JOB_PODS_MAX. */
static ts_rc add_pods(mdec *d, int32_t *a, int64_t b) {
  if ((int64_t)*a + b > JOB_PODS_MAX)
    return model__fail(d, TS_EINVAL, "more than %d pods at once", JOB_PODS_MAX);
  *a += (int32_t)b;
  return TS_OK;
}

/* Pods a batch Job spec runs at once: parallelism, capped by the completions left. */
static ts_rc job_spec_pods(mdec *d, json_t *spec, int32_t succeeded, int32_t *out) {
  int32_t parallelism = 1, completions = 0;
  bool has_completions = false;
  ts_rc rc = count(d, spec, "parallelism", 1, &parallelism);
  if (rc == TS_OK) rc = model__int32(d, spec, "completions", &completions, &has_completions);
  if (rc != TS_OK) return rc;
  if (has_completions && completions < 0)
    return model__fail_at(d, "completions", "must be greater than or equal to 0");
  *out = parallelism;
  if (has_completions && completions - succeeded < *out) *out = completions - succeeded;
  if (*out < 0) *out = 0;
  return TS_OK;
}

ts_rc model__decode_job(mdec *d, json_t *root, model_obj *o) {
  model_job *j = (model_job *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc), *status;
  int32_t succeeded = 0;
  size_t mark;
  if (rc != TS_OK) return rc;
  status = model__object(d, root, "status", &rc);
  if (rc != TS_OK) return rc;
  if (status) {
    mark = model__push(d, "status");
    if ((rc = count(d, status, "succeeded", 0, &succeeded)) != TS_OK) return rc;
    model__pop(d, mark);
  }
  mark = model__push(d, "spec");
  if ((rc = job_spec_pods(d, spec, succeeded, &j->pods)) != TS_OK) return rc;
  model__pop(d, mark);
  j->min_pods = j->pods;
  return TS_OK;
}

ts_rc model__decode_jobset(mdec *d, json_t *root, model_obj *o) {
  model_job *j = (model_job *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc), *rjobs, *rj;
  size_t mark, i;
  if (rc != TS_OK) return rc;
  mark = model__push(d, "spec");
  rjobs = model__array(d, spec, "replicatedJobs", &rc);
  if (rc != TS_OK) return rc;
  json_array_foreach(rjobs, i, rj) {
    size_t at = model__push(d, "replicatedJobs"), m2;
    json_t *tmpl, *jspec;
    int32_t replicas = 1, pods = 0;
    model__push_index(d, i);
    if (!json_is_object(rj)) return model__fail(d, TS_EINVAL, "must be an object");
    if ((rc = count(d, rj, "replicas", 1, &replicas)) != TS_OK) return rc;
    tmpl = model__object(d, rj, "template", &rc);
    if (rc != TS_OK) return rc;
    m2 = model__push(d, "template");
    jspec = model__object(d, tmpl, "spec", &rc);
    if (rc != TS_OK) return rc;
    model__push(d, "spec");
    if ((rc = job_spec_pods(d, jspec, 0, &pods)) != TS_OK) return rc;
    model__pop(d, m2);
    if ((rc = add_pods(d, &j->pods, (int64_t)replicas * pods)) != TS_OK) return rc;
    model__pop(d, at);
  }
  model__pop(d, mark);
  j->min_pods = j->pods;
  return TS_OK;
}

/* The replica-spec field of a Kubeflow kind. */
static const char *replica_field(const char *kind) {
  static const struct {
    const char *kind, *field;
  } map[] = {{"PyTorchJob", "pytorchReplicaSpecs"}, {"TFJob", "tfReplicaSpecs"},
             {"MPIJob", "mpiReplicaSpecs"},         {"XGBoostJob", "xgbReplicaSpecs"},
             {"PaddleJob", "paddleReplicaSpecs"},   {"JAXJob", "jaxReplicaSpecs"}};
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (!strcmp(map[i].kind, kind)) return map[i].field;
  return "replicaSpecs";
}

/* Sums the replicas of every replica type; *launcher and *master get those of the Launcher
 * and Master types (0 when absent). */
static ts_rc replica_sum(mdec *d, json_t *spec, int32_t *sum, int32_t *launcher, int32_t *master) {
  const char *field = replica_field(d->kind), *type;
  ts_rc rc;
  json_t *specs = model__object(d, spec, field, &rc), *rs;
  size_t mark;
  *sum = *launcher = *master = 0;
  if (rc != TS_OK) return rc;
  if (!specs) return model__fail_at(d, field, "is required");
  mark = model__push(d, field);
  json_object_foreach(specs, type, rs) {
    size_t at = model__push_key(d, type);
    int32_t replicas = 1;
    if (!json_is_object(rs)) return model__fail(d, TS_EINVAL, "must be an object");
    if ((rc = count(d, rs, "replicas", 1, &replicas)) != TS_OK) return rc;
    if (!strcmp(type, "Launcher")) *launcher = replicas;
    if (!strcmp(type, "Master")) *master = replicas;
    if ((rc = add_pods(d, sum, replicas)) != TS_OK) return rc;
    model__pop(d, at);
  }
  model__pop(d, mark);
  return TS_OK;
}

ts_rc model__decode_training_job(mdec *d, json_t *root, model_obj *o) {
  model_job *j = (model_job *)o;
  ts_rc rc;
  json_t *spec = model__object(d, root, "spec", &rc), *run, *sp, *elastic;
  int32_t launcher = 0, master = 0, min_available = 0, min_replicas = 0;
  bool has_min = false, has_elastic = false;
  const char *launcher_policy = NULL;
  size_t mark;
  if (rc != TS_OK) return rc;
  if (!spec) return model__fail(d, TS_EINVAL, "spec: is required");
  mark = model__push(d, "spec");
  if ((rc = replica_sum(d, spec, &j->pods, &launcher, &master)) != TS_OK) return rc;
  j->min_pods = j->pods;
  if ((rc = model__string(d, spec, "launcherCreationPolicy", &launcher_policy, false)) != TS_OK)
    return rc;
  if (launcher_policy && !strcmp(launcher_policy, "WaitForWorkersReady")) j->min_pods -= launcher;
  elastic = model__object(d, spec, "elasticPolicy", &rc);
  if (rc != TS_OK) return rc;
  if (elastic) {
    size_t at = model__push(d, "elasticPolicy");
    if ((rc = model__int32(d, elastic, "minReplicas", &min_replicas, &has_elastic)) != TS_OK)
      return rc;
    if (has_elastic && min_replicas < 1)
      return model__fail_at(d, "minReplicas", "must be at least 1");
    model__pop(d, at);
    if (has_elastic && master + min_replicas < j->min_pods) j->min_pods = master + min_replicas;
  }
  run = model__object(d, spec, "runPolicy", &rc);
  if (rc != TS_OK) return rc;
  sp = run ? model__object(d, run, "schedulingPolicy", &rc) : NULL;
  if (rc != TS_OK) return rc;
  if (sp) {
    size_t at = model__push(d, "runPolicy.schedulingPolicy");
    if ((rc = model__int32(d, sp, "minAvailable", &min_available, &has_min)) != TS_OK) return rc;
    if (has_min && min_available < 1)
      return model__fail_at(d, "minAvailable", "must be at least 1");
    model__pop(d, at);
    if (has_min) j->min_pods = min_available;
  }
  model__pop(d, mark);
  return TS_OK;
}

void model__free_job(model_obj *o) {
  (void)o;
}

void model__free_jobset(model_obj *o) {
  (void)o;
}

void model__free_training_job(model_obj *o) {
  (void)o;
}
