/* cmd/outfile.c - writing a file the way a report or a snapshot must be written: into a new
 * temporary file beside it (created with O_EXCL: nothing planted there is followed or
 * overwritten), then renamed over the name, which replaces a symlink itself and never writes
 * through it. A failed write (a full disk) leaves the previous file whole. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"

FILE *cmd_out_open(cmd_out *o, const char *path) {
  int fd;
  memset(o, 0, sizeof *o);
  if (snprintf(o->path, sizeof o->path, "%s", path) >= (int)sizeof o->path ||
      snprintf(o->tmp, sizeof o->tmp, "%s.tmp-XXXXXX", path) >= (int)sizeof o->tmp) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  if ((fd = mkstemp(o->tmp)) < 0) return NULL;
  if (fchmod(fd, 0644) != 0 || !(o->f = fdopen(fd, "w"))) {
    int e = errno;
    close(fd);
    unlink(o->tmp);
    errno = e;
    return NULL;
  }
  return o->f;
}

int cmd_out_commit(cmd_out *o) {
  int e = 0;
  if (!o->f) return -1;
  if (fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0) e = errno ? errno : EIO;
  if (fclose(o->f) != 0 && !e) e = errno;
  o->f = NULL;
  if (!e && rename(o->tmp, o->path) != 0) e = errno;
  if (e) {
    unlink(o->tmp);
    errno = e;
    return -1;
  }
  return 0;
}

void cmd_out_abort(cmd_out *o) {
  if (!o->f) return;
  fclose(o->f);
  o->f = NULL;
  unlink(o->tmp);
}

void cmd_csv_cell(FILE *f, const char *s) {
  bool quote = strpbrk(s, ",\"\r\n") != NULL;
  if (quote) fputc('"', f);
  if (strchr("=+-@\t\r", *s) && *s) fputc('\'', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  if (quote) fputc('"', f);
}
