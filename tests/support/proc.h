/* tests/support/proc.h - what the soak tests read of a process they started. */
#ifndef TESTS_SUPPORT_PROC_H
#define TESTS_SUPPORT_PROC_H

#include <sys/types.h>

/* The process's resident memory (VmRSS of /proc/PID/status) in kB, -1 when it cannot be
 * read. */
long proc_rss_kb(pid_t pid);
/* A TCP port of 127.0.0.1 free a moment ago (bound, read, closed). */
int proc_free_port(void);
/* A non-blocking TCP connection from 127.0.0.host (every 127/8 address is this machine's) to
 * 127.0.0.1:port; -1 when it cannot be made. */
int proc_connect_from(int host, int port);

#endif
