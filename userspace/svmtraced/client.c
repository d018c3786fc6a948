// SPDX-License-Identifier: GPL-2.0
/* `svmtraced status` and `svmtraced stop`: ask running daemons over their sockets. */
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cli.h"
#include "svmtraced/svmtraced.h"

static const char client_usage[] =
	"usage: svmtraced status|stop [--socket PATH]\n"
	"Ask running svmtraced daemons over their status sockets (root only).\n"
	"\n"
	"  --socket PATH   this daemon's socket (default: every " SVMTRACED_SOCKET_DIR
	"/svmtraced-*.sock)\n"
	"  -h, --help      this text\n";

/* Send @req to the daemon at @path and copy its answer to stdout. */
static int ask(const char *path, const char *req)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[4096], line[64];
	ssize_t n;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		die("--socket %s: path too long", path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		warn("%s: %s%s", path, strerror(errno),
		     errno == ECONNREFUSED ? " (a daemon that is gone left it)" : "");
		close(fd);
		return 1;
	}
	/*
	 * One send with the newline: the daemon answers as soon as it has read
	 * the request and closes, so a second write could meet a closed socket
	 * and its SIGPIPE would kill us before the answer is printed.
	 */
	snprintf(line, sizeof(line), "%s\n", req);
	if (send(fd, line, strlen(line), MSG_NOSIGNAL) < 0)
		warn("%s: %s", path, strerror(errno));
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	close(fd);
	return 0;
}

int client_main(int argc, char **argv)
{
	static const struct option longopts[] = { { "socket", required_argument, NULL, 'S' },
						  { "help", no_argument, NULL, 'h' },
						  { 0 } };
	const char *cmd = argv[1], *path = NULL;
	glob_t g;
	size_t i;
	int c, rc = 0;

	optind = 2;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			path = optarg;
			break;
		case 'h':
			fputs(client_usage, stdout);
			return 0;
		default:
			fputs(client_usage, stderr);
			return 2;
		}
	}
	if (optind < argc)
		die("%s: unexpected argument '%s'", cmd, argv[optind]);
	if (path)
		return ask(path, cmd);
	if (glob(SVMTRACED_SOCKET_DIR "/svmtraced-*.sock", 0, NULL, &g) || !g.gl_pathc)
		die("no svmtraced is running (no socket in %s; root only)", SVMTRACED_SOCKET_DIR);
	if (!strcmp(cmd, "stop") && g.gl_pathc > 1)
		die("%zu daemons run: choose one with --socket (svmtraced status lists them)",
		    g.gl_pathc);
	for (i = 0; i < g.gl_pathc; i++) {
		if (i)
			putchar('\n');
		printf("socket: %s\n", g.gl_pathv[i]);
		fflush(stdout);
		rc |= ask(g.gl_pathv[i], cmd);
	}
	globfree(&g);
	return rc;
}
