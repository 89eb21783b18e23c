/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <X11/Xauth.h>

#include "cleanup.h"
#include "time-util.h"
#include "x11-socket.h"

#define X11_TCP_PORT 6000
#define X11_UNIX_PATH "/tmp/.X11-unix/X%d"
/* The address families of an authority file entry (X.h's FamilyInternet and FamilyInternet6;
 * FamilyLocal is Xauth.h's). */
#define AUTH_FAMILY_INTERNET 0
#define AUTH_FAMILY_INTERNET6 6
#define AUTH_NAME "MIT-MAGIC-COOKIE-1"

/* XauGetBestAuthByAddr() is not safe against itself: XauFileName() returns a static buffer. Every
 * lookup of the process takes turns, and only for the time it reads the authority file: the one
 * static of this code, guarding a library's static state, which is process-wide too. */
static pthread_mutex_t auth_lock = PTHREAD_MUTEX_INITIALIZER;

/* Waits until a non-blocking connect() on fd is done, or deadline_ns: 0, -ETIMEDOUT, -errno. */
static int connect_wait(int fd, int64_t deadline_ns) {
        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLOUT };
                int64_t left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
                int error = 0, r;
                socklen_t len = sizeof(error);

                if (left_ns <= 0)
                        return -ETIMEDOUT;
                r = poll(&pfd, 1, (int) ((left_ns + 999999) / 1000000));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) < 0)
                        return -errno;
                return -error;
        }
}

/* One connect() without blocking past deadline_ns: the connected fd, or -errno. A unix socket
 * whose listener's queue is full answers EAGAIN at once: a server that takes no connections is
 * one that does not answer. */
static int connect_to(int family, const struct sockaddr *sa, socklen_t len, int64_t deadline_ns) {
        _cleanup_close_ int fd = -1;
        int r;

        fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, sa, len) < 0) {
                if (errno == EAGAIN)
                        return -ETIMEDOUT;
                if (errno != EINPROGRESS)
                        return -errno;
                r = connect_wait(fd, deadline_ns);
                if (r < 0)
                        return r;
        }
        return TAKE_FD(fd);
}

/* A unix socket by path, abstract (the kernel's namespace, no file) when abstract is set. */
static int connect_unix(const char *path, bool abstract, int64_t deadline_ns) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t n = strlen(path), skip = abstract ? 1 : 0;

        if (n + skip >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path + skip, path, n);
        return connect_to(AF_UNIX, (const struct sockaddr *) &sa,
                          (socklen_t) (offsetof(struct sockaddr_un, sun_path) + skip + n + (abstract ? 0 : 1)),
                          deadline_ns);
}

/* The local display N: its abstract socket where the server made one, else its file. */
static int open_local(int display, int64_t deadline_ns) {
        char path[64];
        int fd;

        snprintf(path, sizeof(path), X11_UNIX_PATH, display);
        fd = connect_unix(path, true, deadline_ns);
        if (fd == -ECONNREFUSED || fd == -ENOENT)
                fd = connect_unix(path, false, deadline_ns);
        return fd;
}

/* TCP to host, port 6000 + display: each of its addresses in turn, until deadline_ns. The name
 * lookup itself may block (a slow resolver): the caller runs in a thread of its own. */
static int open_tcp(const char *host, int display, int64_t deadline_ns) {
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *list = NULL;
        char port[16];
        int fd = -EHOSTUNREACH;

        snprintf(port, sizeof(port), "%d", X11_TCP_PORT + display);
        if (getaddrinfo(host, port, &hints, &list) != 0)
                return -EHOSTUNREACH;
        for (struct addrinfo *a = list; a; a = a->ai_next) {
                fd = connect_to(a->ai_family, a->ai_addr, a->ai_addrlen, deadline_ns);
                if (fd >= 0 || fd == -ETIMEDOUT)
                        break;
        }
        freeaddrinfo(list);
        if (fd >= 0)
                (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int) { 1 }, sizeof(int));
        return fd;
}

/* "protocol/host:N": xcb_parse_display() drops the protocol, which still decides TCP for "tcp/:N". */
static bool names_tcp(const char *name) {
        return strncmp(name, "tcp/", 4) == 0 || strncmp(name, "inet/", 5) == 0 || strncmp(name, "inet6/", 6) == 0;
}

int x11_socket_open(const char *display, int64_t deadline_ns, int *ret_fd, int *ret_display, int *ret_screen) {
        _cleanup_free_ char *host = NULL;
        const char *name = display ?: getenv("DISPLAY");
        int number = 0, screen = 0, fd;
        size_t n;

        if (!ret_fd || !ret_display || !ret_screen)
                return -EINVAL;
        if (!name || !xcb_parse_display(name, &host, &number, &screen)) {
                host = NULL;
                return -EINVAL;
        }
        if (host[0] && strcmp(host, "unix") != 0) {
                /* "[::1]": an IPv6 address as the name carries it. */
                n = strlen(host);
                if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
                        memmove(host, host + 1, n - 2);
                        host[n - 2] = '\0';
                }
                fd = open_tcp(host, number, deadline_ns);
        } else if (names_tcp(name))
                fd = open_tcp("localhost", number, deadline_ns);
        else
                fd = open_local(number, deadline_ns);
        if (fd < 0)
                return fd;
        *ret_fd = fd;
        *ret_display = number;
        *ret_screen = screen;
        return 0;
}

/* The authority file's address of the peer of fd: this host's name for a local connection (unix,
 * or TCP to the loopback), else the peer's IP address. */
static int auth_address(int fd, unsigned short *ret_family, char *buf, size_t size, size_t *ret_len) {
        struct sockaddr_storage ss = {};
        socklen_t len = sizeof(ss);
        const void *addr = NULL;
        size_t n = 0;

        if (getpeername(fd, (struct sockaddr *) &ss, &len) < 0)
                return -errno;
        if (ss.ss_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *) &ss;

                if (in->sin_addr.s_addr != htonl(INADDR_LOOPBACK)) {
                        addr = &in->sin_addr;
                        n = sizeof(in->sin_addr);
                        *ret_family = AUTH_FAMILY_INTERNET;
                }
        } else if (ss.ss_family == AF_INET6) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) &ss;

                if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
                        struct in_addr v4;

                        memcpy(&v4, in6->sin6_addr.s6_addr + 12, sizeof(v4));
                        if (v4.s_addr != htonl(INADDR_LOOPBACK)) {
                                memcpy(buf, &v4, sizeof(v4));
                                *ret_family = AUTH_FAMILY_INTERNET;
                                *ret_len = sizeof(v4);
                                return 0;
                        }
                } else if (!IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) {
                        addr = &in6->sin6_addr;
                        n = sizeof(in6->sin6_addr);
                        *ret_family = AUTH_FAMILY_INTERNET6;
                }
        } else if (ss.ss_family != AF_UNIX)
                return -EAFNOSUPPORT;

        if (addr) {
                memcpy(buf, addr, n);
                *ret_len = n;
                return 0;
        }
        if (gethostname(buf, size) < 0)
                return -errno;
        buf[size - 1] = '\0';
        *ret_family = FamilyLocal;
        *ret_len = strlen(buf);
        return 0;
}

int x11_auth_lookup(int fd, int display, xcb_auth_info_t *ret) {
        char *types[] = { (char *) AUTH_NAME };
        int type_lengths[] = { (int) strlen(AUTH_NAME) };
        char address[256], number[16];
        unsigned short family = FamilyLocal;
        size_t address_len = 0;
        xcb_auth_info_t auth = {};
        Xauth *entry;
        int r;

        if (!ret)
                return -EINVAL;
        r = auth_address(fd, &family, address, sizeof(address), &address_len);
        if (r < 0)
                return r;
        snprintf(number, sizeof(number), "%d", display);

        pthread_mutex_lock(&auth_lock);
        entry = XauGetBestAuthByAddr(family, (unsigned short) address_len, address, (unsigned short) strlen(number),
                                     number, 1, types, type_lengths);
        pthread_mutex_unlock(&auth_lock);
        if (!entry)
                return -ENOENT;

        auth.namelen = entry->name_length;
        auth.datalen = entry->data_length;
        auth.name = malloc(auth.namelen + 1u);
        auth.data = malloc(auth.datalen + 1u);
        if (auth.name && auth.data) {
                memcpy(auth.name, entry->name, auth.namelen);
                memcpy(auth.data, entry->data, auth.datalen);
        }
        XauDisposeAuth(entry);
        if (!auth.name || !auth.data) {
                x11_auth_done(&auth);
                return -ENOMEM;
        }
        *ret = auth;
        return 0;
}

void x11_auth_done(xcb_auth_info_t *auth) {
        if (!auth)
                return;
        free(auth->name);
        if (auth->data)
                /* A cookie: not left lying in freed memory. */
                explicit_bzero(auth->data, (size_t) auth->datalen);
        free(auth->data);
        *auth = (xcb_auth_info_t) {};
}
