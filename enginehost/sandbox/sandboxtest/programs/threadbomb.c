/* threadbomb starts threads that sleep, without end (or up to argv[1]
 * when it is a number: the tests' control), and says how far it got and
 * why it stopped; refused a thread, it exits with status 3. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *sleeper(void *arg) { (void)arg; for (;;) pause(); return 0; }

int main(int argc, char **argv) {
	long most = argc > 1 && atol(argv[1]) > 0 ? atol(argv[1]) : -1;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (long n = 0; most < 0 || n < most; n++) {
		pthread_t th;
		int err = pthread_create(&th, &attr, sleeper, 0);
		if (err) { printf("bomb: stopped after %ld threads: %s\n", n, strerror(err)); fflush(stdout); return 3; }
	}
	printf("bomb: all %ld threads started\n", most);
	return 0;
}
