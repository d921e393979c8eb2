/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Benchmark timer, run by hand: runs one command and appends its wall time, CPU time and peak RSS
 * (the rusage wait4 reports, as /usr/bin/time's %M) to a results file. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Usage: timeit RESULTS LABEL TIMEOUT-SECONDS CMD [ARG...]
 *
 * Appends "LABEL WALL_S CPU_S USER_S SYS_S MAXRSS_KIB STATUS" to RESULTS. STATUS is the exit
 * code, or "timeout" when the command ran past TIMEOUT-SECONDS and was killed, or "sigN". The
 * command's stdout and stderr pass through. A separate tiny program instead of /usr/bin/time:
 * its %e has 10 ms resolution, too coarse for the dotfiles shape.
 */

static volatile sig_atomic_t timed_out;
static pid_t child;

static void
on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
	if (child > 0)
		kill(child, SIGKILL);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
tv(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

int
main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct rusage ru;
	double t0, t1;
	int status = 0;
	char st[32];
	FILE *out;

	if (argc < 5) {
		fprintf(stderr, "usage: timeit RESULTS LABEL TIMEOUT CMD [ARG...]\n");
		return 2;
	}
	sigaction(SIGALRM, &sa, NULL);
	t0 = now();
	child = fork();
	if (child < 0) {
		perror("timeit: fork");
		return 1;
	}
	if (child == 0) {
		execvp(argv[4], argv + 4);
		fprintf(stderr, "timeit: exec '%s': %s\n", argv[4], strerror(errno));
		_exit(127);
	}
	alarm((unsigned)atoi(argv[3]));
	while (wait4(child, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("timeit: wait4");
			return 1;
		}
	}
	t1 = now();
	alarm(0);
	if (timed_out)
		snprintf(st, sizeof(st), "timeout");
	else if (WIFSIGNALED(status))
		snprintf(st, sizeof(st), "sig%d", WTERMSIG(status));
	else
		snprintf(st, sizeof(st), "%d", WEXITSTATUS(status));
	out = fopen(argv[1], "ae");
	if (!out) {
		perror("timeit: results");
		return 1;
	}
	fprintf(out, "%s %.6f %.6f %.6f %.6f %ld %s\n", argv[2], t1 - t0,
		tv(ru.ru_utime) + tv(ru.ru_stime), tv(ru.ru_utime), tv(ru.ru_stime), ru.ru_maxrss,
		st);
	fclose(out);
	return timed_out ? 124 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128);
}
