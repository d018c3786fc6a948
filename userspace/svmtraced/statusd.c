// SPDX-License-Identifier: GPL-2.0
/*
 * The status socket: a UNIX stream socket, root only (its directory is
 * 0700, the socket 0600), one request line per connection ("status" or
 * "stop"), a text answer, then the daemon closes the connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cli.h"
#include "svmtraced/svmtraced.h"

struct statusd {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/*
 * No socket is no reason to refuse a capture (an initramfs without /run):
 * warn and go on without status.
 */
static struct statusd *no_socket(struct statusd *sd, const char *what)
{
	warn("status socket %s: %s: %s (`svmtraced status` will not see this daemon)", sd->path,
	     what, strerror(errno));
	if (sd->fd >= 0)
		close(sd->fd);
	free(sd);
	return NULL;
}

struct statusd *statusd_open(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct statusd *sd = calloc(1, sizeof(*sd));
	mode_t old;
	int rc;

	if (!sd)
		die("out of memory");
	sd->fd = -1;
	if (path)
		snprintf(sd->path, sizeof(sd->path), "%s", path);
	else
		snprintf(sd->path, sizeof(sd->path), "%s/svmtraced-%d.sock", SVMTRACED_SOCKET_DIR,
			 (int)getpid());
	if (strlen(sd->path) >= sizeof(sa.sun_path) - 1)
		die("--socket %s: path too long for a UNIX socket", sd->path);
	if (!path && mkdir(SVMTRACED_SOCKET_DIR, 0700) && errno != EEXIST)
		return no_socket(sd, "mkdir " SVMTRACED_SOCKET_DIR);
	if (!path && chmod(SVMTRACED_SOCKET_DIR, 0700))
		return no_socket(sd, "chmod " SVMTRACED_SOCKET_DIR);
	strcpy(sa.sun_path, sd->path);
	unlink(sd->path);
	sd->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (sd->fd < 0)
		return no_socket(sd, "socket");
	old = umask(0177);
	rc = bind(sd->fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(sd->fd, 4);
	umask(old);
	if (rc)
		return no_socket(sd, "bind");
	return sd;
}

int statusd_fd(const struct statusd *sd)
{
	return sd ? sd->fd : -1;
}

void statusd_close(struct statusd *sd)
{
	if (!sd)
		return;
	close(sd->fd);
	unlink(sd->path);
	free(sd);
}

/*
 * Read one request line from client @c into @req: up to its newline, the end
 * of the connection or half a second of silence, whichever comes first (a
 * stream socket may deliver the line in pieces).
 */
static void read_request(int c, char *req, size_t size)
{
	struct pollfd p = { .fd = c, .events = POLLIN };
	size_t len = 0;
	ssize_t n;

	while (len < size - 1 && !memchr(req, '\n', len) && poll(&p, 1, 500) == 1) {
		n = read(c, req + len, size - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	req[len] = '\0';
	req[strcspn(req, "\r\n")] = '\0';
}

bool statusd_serve(struct statusd *sd, const struct status_view *v)
{
	char req[64], *answer;
	bool stop = false;
	int c;

	c = accept4(sd->fd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return false;
	read_request(c, req, sizeof(req));
	answer = malloc(65536);
	if (!answer)
		die("out of memory");
	if (!strcmp(req, "status")) {
		status_format(v, answer, 65536);
	} else if (!strcmp(req, "stop")) {
		snprintf(answer, 65536, "stopping\n");
		stop = true;
	} else {
		snprintf(answer, 65536, "error: unknown request '%.32s' (status or stop)\n", req);
	}
	/* A client gone before the answer must not kill us (SIGPIPE). */
	if (send(c, answer, strlen(answer), MSG_NOSIGNAL) < 0 && errno != EPIPE)
		warn("status socket: %s", strerror(errno));
	free(answer);
	close(c);
	return stop;
}

bool statusd_wait(struct statusd *sd, const struct status_view *v, int ms)
{
	struct pollfd p = { .fd = statusd_fd(sd), .events = POLLIN };

	if (poll(&p, 1, ms) == 1 && sd)
		return statusd_serve(sd, v);
	return false; /* without a socket (fd -1) poll() just sleeps */
}
