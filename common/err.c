/* common/err.c - the error table and the caller-owned error struct. */
#include "ts.h"

#include <stdio.h>
#include <string.h>

static const char *const err_names[] = {
#define TS__NAME(name, msg) #name,
    TS_ERRORS(TS__NAME)
#undef TS__NAME
};

static const char *const err_msgs[] = {
#define TS__MSG(name, msg) msg,
    TS_ERRORS(TS__MSG)
#undef TS__MSG
};

const char *ts_errname(ts_rc rc) {
  if ((unsigned)rc >= TS__ERR_COUNT) return "EUNKNOWN";
  return err_names[rc];
}

const char *ts_strerror(ts_rc rc) {
  if ((unsigned)rc >= TS__ERR_COUNT) return "unknown error";
  return err_msgs[rc];
}

void ts_err_clear(ts_err *e) {
  if (!e) return;
  e->code = TS_OK;
  e->line = e->column = 0;
  e->text[0] = '\0';
}

ts_rc ts_err_vset(ts_err *e, ts_rc code, const char *fmt, va_list ap) {
  if (!e) return code;
  e->code = code;
  vsnprintf(e->text, sizeof e->text, fmt, ap);
  return code;
}

ts_rc ts_err_set(ts_err *e, ts_rc code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ts_err_vset(e, code, fmt, ap);
  va_end(ap);
  return code;
}

ts_rc ts_err_prefix(ts_err *e, const char *fmt, ...) {
  char prefix[TS_ERR_TEXT_MAX];
  char old[TS_ERR_TEXT_MAX];
  va_list ap;
  if (!e) return TS_OK;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, e->text, sizeof old);
  /* "PREFIX: OLD", cut at the end of the text (a prefix never hides the message's start) */
  ts_strlcpy(e->text, prefix, sizeof e->text);
  ts_strlcpy(e->text + strlen(e->text), ": ", sizeof e->text - strlen(e->text));
  ts_strlcpy(e->text + strlen(e->text), old, sizeof e->text - strlen(e->text));
  return e->code;
}
