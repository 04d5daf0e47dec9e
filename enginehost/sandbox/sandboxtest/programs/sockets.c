/* sockets tries, in turn, a pathname UNIX socket (SOCKET_PATH), an
 * abstract one (ABSTRACT_NAME), TCP to 127.0.0.1:TCP_PORT and a socket
 * pair, and prints one line for each: "NAME: CONNECTED" or what failed.
 * sandboxtest.Program compiles it with the three as -D definitions. */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void unix_connect(const char *what, const char *path, int abstract) {
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0) { printf("%s: socket: %s\n", what, strerror(errno)); return; }
	struct sockaddr_un a = {0};
	a.sun_family = AF_UNIX;
	socklen_t len = sizeof a;
	if (abstract) {
		strncpy(a.sun_path + 1, path, sizeof a.sun_path - 2);
		len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path);
	} else {
		strncpy(a.sun_path, path, sizeof a.sun_path - 1);
	}
	if (connect(s, (struct sockaddr *)&a, len) < 0) printf("%s: connect: %s\n", what, strerror(errno));
	else printf("%s: CONNECTED\n", what);
	close(s);
}

int main(void) {
	unix_connect("unix-path", SOCKET_PATH, 0);
	unix_connect("unix-abstract", ABSTRACT_NAME, 1);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0) printf("tcp: socket: %s\n", strerror(errno));
	else {
		struct sockaddr_in a = {0};
		a.sin_family = AF_INET;
		a.sin_port = htons(TCP_PORT);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) printf("tcp: connect: %s\n", strerror(errno));
		else printf("tcp: CONNECTED\n");
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) printf("socketpair: %s\n", strerror(errno));
	else printf("socketpair: CONNECTED\n");
	fflush(stdout);
	return 0;
}
