/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Race test attacker: exchanges a folder and a symlink to elsewhere as fast as it can. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * usage: race-swapper FOLDER SYMLINK [ROUNDS]
 *
 * Loops renameat2(FOLDER, SYMLINK, RENAME_EXCHANGE) with no pause, so that at
 * any instant FOLDER is either the real folder or a symlink to the attacker's
 * victim. Stops after ROUNDS exchanges (default 20000000), on SIGTERM/SIGINT,
 * or when its stdin is a pipe that gets closed. Failed exchanges (one of the
 * names briefly missing because the tool under test renamed it) are counted
 * and ignored. Prints "ready" on stdout after its first exchange and
 * "swaps=N failed=M" on stderr when it stops.
 *
 * This is test code: it uses path strings on purpose, as an attacker would.
 */

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* True when stdin is a pipe whose writer has gone away. */
static int
stdin_closed(int watch)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };

	if (!watch)
		return 0;
	if (poll(&p, 1, 0) <= 0)
		return 0;
	if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
		return 1;
	if (p.revents & POLLIN) {
		char buf[64];

		return read(0, buf, sizeof(buf)) <= 0;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned long long rounds = 20000000ULL, swaps = 0, failed = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	struct stat st;
	int watch;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: %s FOLDER SYMLINK [ROUNDS]\n", argv[0]);
		return 2;
	}
	if (argc == 4)
		rounds = strtoull(argv[3], NULL, 10);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	watch = fstat(0, &st) == 0 && S_ISFIFO(st.st_mode);

	for (unsigned long long i = 0; i < rounds && !stop; i++) {
		if (renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) == 0)
			swaps++;
		else
			failed++;
		if (i == 0) {
			/* The harness blocks on this line, so the tool under test
			 * starts only once the attack is under way. */
			puts("ready");
			fflush(stdout);
		}
		if ((i & 4095) == 0 && stdin_closed(watch))
			break;
	}
	fprintf(stderr, "swaps=%llu failed=%llu\n", swaps, failed);
	return 0;
}
