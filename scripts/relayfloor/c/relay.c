/* relay.c: relayfloor's blocking mode in C, for comparison (see
 * ../main.go). Each of 2 threads owns two engine processes and, SEARCHES
 * times, alternating between them, writes one fixed `position` and
 * `go nodes 5000` and reads until `bestmove` with blocking read(2),
 * optionally sleeping QUIET_US microseconds first. Prints this process's
 * CPU time (getrusage: its threads, not the engines') per 137 searches.
 *
 *   cc -O2 -pthread -o relay relay.c && ./relay [QUIET_US] [ENGINE]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

enum { WORKERS = 2, SEARCHES = 20 * 137, PER_GAME = 137 };

struct engine {
	int in, out, len;
	char buf[1 << 16];
};

static long quiet_us;
static const char *engine_path = "/usr/games/stockfish";
static const char search_cmd[] = "position startpos moves e2e4 e7e5 g1f3 b8c6\ngo nodes 5000\n";

static void die(const char *what) {
	perror(what);
	exit(2);
}

static void put(int fd, const char *s) {
	size_t n = strlen(s);
	if (write(fd, s, n) != (ssize_t)n)
		die("write");
}

/* read_until reads until a line starting with word has arrived. */
static void read_until(struct engine *e, const char *word) {
	size_t wl = strlen(word);
	for (;;) {
		ssize_t n = read(e->out, e->buf + e->len, sizeof e->buf - 1 - e->len);
		if (n <= 0)
			die("read");
		e->len += n;
		e->buf[e->len] = 0;
		for (char *line = e->buf;;) {
			char *nl = strchr(line, '\n');
			if (!nl) {
				e->len = (int)(e->buf + e->len - line);
				memmove(e->buf, line, e->len);
				break;
			}
			if (strncmp(line, word, wl) == 0) {
				e->len = 0;
				return;
			}
			line = nl + 1;
		}
	}
}

static void start(struct engine *e) {
	int in[2], out[2];
	if (pipe(in) || pipe(out))
		die("pipe");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(engine_path, engine_path, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	e->in = in[1];
	e->out = out[0];
	e->len = 0;
	put(e->in, "uci\nsetoption name Hash value 16\nisready\n");
	read_until(e, "readyok");
}

static void *play(void *arg) {
	struct engine *pair = arg;
	struct timespec quiet = {quiet_us / 1000000, quiet_us % 1000000 * 1000};
	for (int i = 0; i < SEARCHES; i++) {
		struct engine *e = &pair[i % 2];
		put(e->in, search_cmd);
		if (quiet_us > 0)
			nanosleep(&quiet, NULL);
		read_until(e, "bestmove");
	}
	return NULL;
}

static double cpu_ms(void) {
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

int main(int argc, char **argv) {
	if (argc > 1)
		quiet_us = atol(argv[1]);
	if (argc > 2)
		engine_path = argv[2];
	static struct engine engines[WORKERS][2];
	for (int i = 0; i < WORKERS; i++)
		for (int j = 0; j < 2; j++)
			start(&engines[i][j]);
	double before = cpu_ms();
	pthread_t threads[WORKERS];
	for (int i = 0; i < WORKERS; i++)
		if (pthread_create(&threads[i], NULL, play, engines[i]))
			die("pthread_create");
	for (int i = 0; i < WORKERS; i++)
		pthread_join(threads[i], NULL);
	double cpu = cpu_ms() - before;
	printf("C blocking read, quiet=%ldus, %d searches: CPU %.0f ms, %.2f ms per %d searches\n", quiet_us,
	       WORKERS * SEARCHES, cpu, cpu / (WORKERS * SEARCHES) * PER_GAME, PER_GAME);
	return 0;
}
