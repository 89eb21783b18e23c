/* SPDX-License-Identifier: MIT */

/* File descriptors a client attaches to its calls, against the real timeconvd
 * on a private bus, held at a low limit of open files (RLIMIT_NOFILE: its own fds and 64 more).
 * Many connections each send calls carrying 16 fds: ConvertManyMemfd (its memfd and 15 its
 * signature does not name) and ConvertMany and ListDomains (16 that no signature names). sd-bus
 * does not let a client attach an fd its signature does not name, so these clients speak the
 * wire protocol themselves. Before, a queued job held its call and every fd it carried: 32
 * ConvertManyMemfd calls in flight held 512 fds, recvmsg() got MSG_CTRUNC and the daemon exited
 * ("the bus connection went away"). Now:
 *   - the daemon is still there, and answers another client's Convert;
 *   - every call of the attackers has an answer: a value, or an error of ours by name
 *     (QuotaExceeded beyond the calls in flight), never a lost connection;
 *   - once they are gone, the daemon holds no more fds than before;
 *   - held at its limit, it refuses a call that needs an fd with QuotaExceeded, says so once in
 *     its log, and goes on.
 * Counts and names only: nothing here depends on timing. */

#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bus-errors.h"
#include "harness-proc.h"
#include "harness.h"
#include "tap.h"

#define HEADROOM_FDS 64                 /* the daemon's limit: what it has open, and this many */
#define CONNECTIONS 24
#define FDS_PER_CALL 16                 /* dbus-daemon's default max_message_unix_fds */
#define MEMFD_VALUES BUS_API_CONVERT_MANY_MEMFD_MAX
#define TIMEOUT_NS (120 * NSEC_PER_SEC)

/* One connection that speaks D-Bus itself: a buffer to build a message in, the socket. */
typedef struct Raw {
        int fd;
        uint32_t serial;
        uint8_t buf[8192];
        size_t n;
        uint8_t in[65536];
        size_t n_in;
        unsigned replies, returns, quota, other, calls;
} Raw;

static void put(Raw *r, const void *p, size_t n) {
        if (n > 0)
                memcpy(r->buf + r->n, p, n);
        r->n += n;
}

static void align(Raw *r, size_t to) {
        while (r->n % to)
                r->buf[r->n++] = 0;
}

static void put_u32(Raw *r, uint32_t v) {
        align(r, 4);
        put(r, &v, 4);
}

static void put_string(Raw *r, const char *s) {
        put_u32(r, (uint32_t) strlen(s));
        put(r, s, strlen(s) + 1);
}

static void put_signature(Raw *r, const char *s) {
        uint8_t len = (uint8_t) strlen(s);

        put(r, &len, 1);
        put(r, s, len + 1u);
}

/* A header field: code, its type's signature, the value (string-like or u32). */
static void put_field(Raw *r, uint8_t code, char type, const char *s, uint32_t u) {
        char sig[2] = { type, 0 };

        align(r, 8);
        put(r, &code, 1);
        put_signature(r, sig);
        if (type == 'u')
                put_u32(r, u);
        else if (type == 'g')
                put_signature(r, s);
        else
                put_string(r, s);
}

/* Sends a method call with body (body_size bytes, signature sig, NULL: none) and fds (n_fds of
 * them, whatever the signature names). */
static int raw_call(Raw *r, const char *dest, const char *path, const char *interface, const char *member,
                    const char *sig, const void *body, size_t body_size, const int *fds, size_t n_fds) {
        uint32_t fields_len, body_len = (uint32_t) body_size;
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int) * FDS_PER_CALL)];
        } control = {};
        struct iovec iov;
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t k;

        r->n = 0;
        put(r, "l\1\0\1", 4);
        put(r, &body_len, 4);
        r->serial++;
        put(r, &r->serial, 4);
        put_u32(r, 0);                  /* fields' length, written below */
        put_field(r, 1, 'o', path, 0);
        put_field(r, 2, 's', interface, 0);
        put_field(r, 3, 's', member, 0);
        put_field(r, 6, 's', dest, 0);
        if (sig)
                put_field(r, 8, 'g', sig, 0);
        if (n_fds > 0)
                put_field(r, 9, 'u', NULL, (uint32_t) n_fds);
        fields_len = (uint32_t) (r->n - 16);
        memcpy(r->buf + 12, &fields_len, 4);
        align(r, 8);
        if (r->n + body_size > sizeof(r->buf) || n_fds > FDS_PER_CALL)
                return -E2BIG;
        put(r, body, body_size);

        iov = (struct iovec) { r->buf, r->n };
        if (n_fds > 0) {
                mh.msg_control = &control;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                control.h.cmsg_level = SOL_SOCKET;
                control.h.cmsg_type = SCM_RIGHTS;
                control.h.cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(&control.h), fds, sizeof(int) * n_fds);
        }
        k = sendmsg(r->fd, &mh, MSG_NOSIGNAL);
        if (k < 0)
                return -errno;
        if ((size_t) k != r->n)
                return -EIO;
        r->calls += r->serial > 1;
        return 0;
}

static int raw_line(int fd, const char *send_line, const char *want) {
        char buf[256];
        size_t n = 0;

        if (send_line && write(fd, send_line, strlen(send_line)) != (ssize_t) strlen(send_line))
                return -EIO;
        while (n < sizeof(buf) - 1) {
                ssize_t k = read(fd, buf + n, 1);

                if (k <= 0)
                        return -EIO;
                n++;
                if (n >= 2 && buf[n - 2] == '\r' && buf[n - 1] == '\n')
                        break;
        }
        buf[n] = 0;
        return strncmp(buf, want, strlen(want)) == 0 ? 0 : -EPROTO;
}

/* Connects to the bus at address (unix:path=...), authenticates with fds, says Hello. */
static int raw_connect(const char *address, Raw *r) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *p = strstr(address, "path="), *end;
        char auth[64];
        int fd;

        if (!p)
                return -EAFNOSUPPORT;
        p += 5;
        end = strchrnul(p, ',');
        if ((size_t) (end - p) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, p, (size_t) (end - p));
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        *r = (Raw) { .fd = fd };
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || write(fd, "", 1) != 1)
                return -errno;
        /* EXTERNAL with our uid in hex of its decimal digits. */
        {
                char uid[16], *q = auth;

                (void) snprintf(uid, sizeof(uid), "%u", (unsigned) getuid());
                q += sprintf(q, "AUTH EXTERNAL ");
                for (char *u = uid; *u; u++)
                        q += sprintf(q, "%02x", (unsigned) *u);
                (void) sprintf(q, "\r\n");
        }
        if (raw_line(fd, auth, "OK ") < 0 || raw_line(fd, "NEGOTIATE_UNIX_FD\r\n", "AGREE_UNIX_FD") < 0 ||
            write(fd, "BEGIN\r\n", 7) != 7)
                return -EPROTO;
        return raw_call(r, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "Hello", NULL,
                        NULL, 0, NULL, 0);
}

/* Waits for Hello's answer: bytes with fds that came along with BEGIN, while the bus daemon
 * still reads the connection as text, would cost the connection. */
static int raw_wait_hello(Raw *r) {
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int))];
        } control;
        uint8_t head[16];
        uint32_t body_len, fields_len;
        size_t total;

        struct iovec iov = { head, sizeof(head) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
                             .msg_controllen = sizeof(control) };

        /* The first message to come is Hello's answer: read it whole, and nothing after it. */
        if (recvmsg(r->fd, &mh, MSG_WAITALL) != (ssize_t) sizeof(head) || head[1] != 2)
                return -EPROTO;
        memcpy(&body_len, head + 4, 4);
        memcpy(&fields_len, head + 12, 4);
        total = ((fields_len + 7u) & ~7u) + body_len;
        while (total > 0) {
                uint8_t skip[256];
                ssize_t k = read(r->fd, skip, total < sizeof(skip) ? total : sizeof(skip));

                if (k <= 0)
                        return -EIO;
                total -= (size_t) k;
        }
        return 0;
}

/* Reads what has come, counting the answers to our calls (serial 1, Hello's, left out) by kind.
 * -ECONNRESET when the bus closed the connection. */
static int raw_read(Raw *r) {
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int) * 64)];
        } control;
        struct iovec iov = { r->in + r->n_in, sizeof(r->in) - r->n_in };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
                             .msg_controllen = sizeof(control) };
        ssize_t k = recvmsg(r->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

        if (k < 0)
                return errno == EAGAIN ? 0 : -errno;
        if (k == 0)
                return -ECONNRESET;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_type == SCM_RIGHTS)
                        for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
                                close(((int *) (void *) CMSG_DATA(c))[i]);
        r->n_in += (size_t) k;
        for (;;) {
                uint32_t body_len, fields_len, reply_serial = 0;
                size_t total, i;
                const char *error_name = NULL;

                if (r->n_in < 16)
                        break;
                memcpy(&body_len, r->in + 4, 4);
                memcpy(&fields_len, r->in + 12, 4);
                total = 16 + ((fields_len + 7u) & ~7u) + body_len;
                if (total > sizeof(r->in))
                        return -E2BIG;
                if (r->n_in < total)
                        break;
                /* The fields: code, signature, value, each 8-aligned. */
                for (i = 16; i < 16 + fields_len; ) {
                        uint8_t code = r->in[i], siglen = r->in[i + 1];
                        char type = (char) r->in[i + 2];
                        uint32_t len = 0;

                        i += 2 + siglen + 1;
                        if (type == 'u' || type == 's' || type == 'o') {
                                i = (i + 3) & ~(size_t) 3;
                                memcpy(&len, r->in + i, 4);
                                if (code == 5)
                                        reply_serial = len;
                                i += 4;
                                if (type != 'u') {
                                        if (code == 4)
                                                error_name = (const char *) r->in + i;
                                        i += len + 1;
                                }
                        } else if (type == 'g')
                                i += 1 + r->in[i] + 1u;
                        else
                                return -EPROTO;
                        i = (i + 7) & ~(size_t) 7;
                }
                if (reply_serial > 1 && (r->in[1] == 2 || r->in[1] == 3)) {
                        r->replies++;
                        if (r->in[1] == 2)
                                r->returns++;
                        else if (error_name && strcmp(error_name, BUS_ERROR_QUOTA_EXCEEDED) == 0)
                                r->quota++;
                        else if (r->other++ < 3)
                                diag("an attacker's call: %s", error_name ? error_name : "(no name)");
                }
                memmove(r->in, r->in + total, r->n_in - total);
                r->n_in -= total;
        }
        return 1;
}

/* A sealed memfd for MEMFD_VALUES values and their answers. */
static int memfd_of_values(void) {
        size_t size = BUS_API_MEMFD_BYTES(MEMFD_VALUES);
        int fd = memfd_create("test-fds", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        int64_t *map;

        if (fd < 0 || ftruncate(fd, (off_t) size) < 0)
                return -errno;
        map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
                return -errno;
        for (size_t i = 0; i < MEMFD_VALUES; i++)
                map[i] = clock_now_ns(CLOCK_MONOTONIC) - (int64_t) i;
        (void) munmap(map, size);
        return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0 ? -errno : fd;
}

/* The body of ConvertManyMemfd(monotonic, boottime, fd #0, count) and of ConvertMany(monotonic,
 * boottime, [value]). */
static size_t body_of(uint8_t *body, bool memfd) {
        Raw b = {};
        int64_t value = clock_now_ns(CLOCK_MONOTONIC);
        uint64_t count = MEMFD_VALUES;

        put_string(&b, "monotonic");
        put_string(&b, "boottime");
        if (memfd) {
                put_u32(&b, 0);
                align(&b, 8);
                put(&b, &count, 8);
        } else {
                put_u32(&b, 8);
                align(&b, 8);
                put(&b, &value, 8);
        }
        memcpy(body, b.buf, b.n);
        return b.n;
}

static int victim_convert(sd_bus *victim) {
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;

        return sd_bus_call_method(victim, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "Convert", &e, NULL,
                                  "ssx", "monotonic", "boottime", clock_now_ns(CLOCK_MONOTONIC));
}

/* The lowest fd number pid does not use: a limit of open files there leaves it none. */
static int lowest_free_fd(pid_t pid) {
        bool used[4096] = {};
        char path[64];
        DIR *d;

        (void) snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
        d = opendir(path);
        if (!d)
                return -errno;
        for (struct dirent *e; (e = readdir(d)); ) {
                int fd = atoi(e->d_name);

                if (e->d_name[0] != '.' && fd >= 0 && fd < 4096)
                        used[fd] = true;
        }
        closedir(d);
        for (int fd = 3; fd < 4096; fd++)
                if (!used[fd])
                        return fd;
        return -EMFILE;
}

/* At its limit of open files, the daemon refuses a call that needs one (GetSharedTable sends a
 * copy of the table's fd) with QuotaExceeded, says so once, and goes on answering the others. */
static void test_at_limit(Harness *h, sd_bus *victim, pid_t pid) {
        struct rlimit none, was = {};
        unsigned quota = 0;
        _cleanup_free_ char *log = NULL;
        const char *p;
        unsigned said = 0;
        int lowest = lowest_free_fd(pid), r;

        r = lowest < 0 ? lowest : prlimit(pid, RLIMIT_NOFILE, NULL, &was) < 0 ? -errno : 0;
        none = (struct rlimit) { (rlim_t) lowest, was.rlim_max };
        if (r >= 0 && prlimit(pid, RLIMIT_NOFILE, &none, NULL) < 0)
                r = -errno;
        ok(r >= 0, "the daemon may open no more file (%s)", strerror(-r));
        for (int i = 0; r >= 0 && i < 3; i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;

                if (sd_bus_call_method(victim, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "GetSharedTable", &e,
                                       NULL, "") < 0 && sd_bus_error_has_name(&e, BUS_ERROR_QUOTA_EXCEEDED))
                        quota++;
                else
                        diag("GetSharedTable: %s", e.message ? e.message : "answered");
        }
        ok(quota == 3, "GetSharedTable is QuotaExceeded (%u of 3)", quota);
        ok(victim_convert(victim) >= 0 && harness_daemon_alive(h), "the daemon goes on answering Convert");
        if (was.rlim_max > 0)
                (void) prlimit(pid, RLIMIT_NOFILE, &was, NULL);
        ok(victim_convert(victim) >= 0 && harness_daemon_log(h, &log) >= 0, "its log can be read");
        for (p = log; p && (p = strstr(p, "at the limit of open files")); p++)
                said++;
        ok(said == 1, "it said once that it is at the limit of open files (%u times)", said);
}

int main(int argc, char **argv) {
        _cleanup_(harness_freep) Harness *h = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *victim = NULL;
        static Raw raws[CONNECTIONS];
        uint8_t memfd_body[64], many_body[64];
        size_t memfd_size = body_of(memfd_body, true), many_size = body_of(many_body, false);
        int fds[FDS_PER_CALL], n0, n_after, memfd, r;
        unsigned calls = 0, replies = 0, returns = 0, quota = 0, other = 0, lost = 0;
        struct rlimit low;
        int64_t deadline_ns;
        pid_t pid = 0;

        tap_args(argc, argv, 1, "TIMECONVD");

        r = harness_new_started(argv[1], NULL, &h, &victim);
        if (r >= 0)
                r = harness_name_pid(victim, BUS_API_SERVICE, &pid);
        if (r < 0)
                bail_out("the daemon on the bus: %s", strerror(-r));
        r = victim_convert(victim);
        n0 = proc_count_fds(pid);
        if (r < 0 || n0 < 0)
                bail_out("the daemon's first answer or fds: %s", strerror(-(r < 0 ? r : n0)));
        low = (struct rlimit) { (rlim_t) n0 + HEADROOM_FDS, (rlim_t) n0 + HEADROOM_FDS };
        r = prlimit(pid, RLIMIT_NOFILE, &low, NULL) < 0 ? -errno : 0;
        ok(r >= 0, "the daemon has %d fds open, and may open %d more (%s)", n0, HEADROOM_FDS, strerror(-r));

        memfd = memfd_of_values();
        if (memfd < 0)
                bail_out("memfd: %s", strerror(-memfd));
        fds[0] = memfd;
        for (size_t i = 1; i < FDS_PER_CALL; i++)
                fds[i] = memfd;
        for (size_t c = 0; c < CONNECTIONS; c++) {
                Raw *raw = &raws[c];

                r = raw_connect(h->bus_address, raw);
                if (r >= 0)
                        r = raw_wait_hello(raw);
                /* Two of each: a job in flight per client holds its call till it ends. */
                for (int k = 0; r >= 0 && k < 2; k++) {
                        r = raw_call(raw, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "ConvertManyMemfd",
                                     "ssht", memfd_body, memfd_size, fds, FDS_PER_CALL);
                        if (r >= 0)
                                r = raw_call(raw, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "ConvertMany",
                                             "ssax", many_body, many_size, fds, FDS_PER_CALL);
                        if (r >= 0)
                                r = raw_call(raw, BUS_API_SERVICE, BUS_API_OBJECT, BUS_API_INTERFACE, "ListDomains",
                                             NULL, NULL, 0, fds, FDS_PER_CALL);
                }
                if (r < 0) {
                        diag("connection %zu, call %u: %s", c, raw->calls, strerror(-r));
                        break;
                }
                calls += raw->calls;
        }
        ok(r >= 0, "%d connections send %u calls, each with %d fds, %d of them a memfd's", CONNECTIONS, calls,
           FDS_PER_CALL, CONNECTIONS * 2);

        ok(victim_convert(victim) >= 0, "another client's Convert is answered");
        ok(harness_daemon_alive(h), "the daemon is still running");

        deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + TIMEOUT_NS;
        for (size_t c = 0; c < CONNECTIONS; c++) {
                Raw *raw = &raws[c];

                while (raw->fd >= 0 && raw->replies < raw->calls && clock_now_ns(CLOCK_MONOTONIC) < deadline_ns) {
                        r = raw_read(raw);
                        if (r < 0) {
                                if (lost++ < 3)
                                        diag("connection %zu, after %u answers: %s", c, raw->replies, strerror(-r));
                                break;
                        }
                        if (r == 0)
                                (void) poll(&(struct pollfd) { .fd = raw->fd, .events = POLLIN }, 1, 1000);
                }
                replies += raw->replies;
                returns += raw->returns;
                quota += raw->quota;
                other += raw->other;
        }
        diag("%u answers: %u values, %u QuotaExceeded, %u other errors; %u connections lost", replies, returns, quota,
             other, lost);
        ok(replies == calls && lost == 0, "every call has an answer (%u of %u)", replies, calls);
        ok(quota > 0 && other == 0, "the calls beyond the limits were QuotaExceeded (%u), no other error", quota);
        ok(victim_convert(victim) >= 0 && harness_daemon_alive(h), "the daemon still answers");

        for (size_t c = 0; c < CONNECTIONS; c++)
                if (raws[c].fd >= 0)
                        close(raws[c].fd);
        close(memfd);
        (void) victim_convert(victim);
        n_after = proc_count_fds(pid);
        ok(n_after >= 0 && n_after <= n0 + 2, "the daemon has %d fds open, as before (%d)", n_after, n0);

        test_at_limit(h, victim, pid);

        return done_testing();
}
