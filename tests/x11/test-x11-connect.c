/* SPDX-License-Identifier: MIT */

/* Connecting to an X server (domains/xcb-connect.h, x11-socket.h) against a real Xvfb and a
 * silent server (silent-x.h): display names as xcb_connect() reads them (TCP ones against a
 * listener of ours); the authorization, found as libXau finds it for the peer (this host's name
 * and the display number, among decoys) and accepted by an Xvfb that lets in only cookie
 * holders; an attempt on a server that never answers ends with -ETIMEDOUT after
 * X11_CONNECT_TIMEOUT_NS and leaves its connection closed; an abandoned one closes its
 * connection at once. */

#define _GNU_SOURCE

#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>
#include <X11/Xauth.h>

#include "cleanup.h"
#include "harness-proc.h"
#include "silent-x.h"
#include "tap.h"
#include "time-util.h"
#include "x11-socket.h"
#include "xcb-connect.h"
#include "xvfb.h"

#define WAIT_MS 20000
#define COOKIE_BYTES 16
#define AUTH_NAME "MIT-MAGIC-COOKIE-1"

/* One entry of an authority file, as libXau reads it: five counted fields, lengths big-endian. */
static void put_field(FILE *f, const void *data, size_t size) {
        uint16_t be = htons((uint16_t) size);

        fwrite(&be, sizeof(be), 1, f);
        fwrite(data, 1, size, f);
}

static void put_entry(FILE *f, uint16_t family, const char *address, const char *number, const uint8_t *cookie) {
        uint16_t be = htons(family);

        fwrite(&be, sizeof(be), 1, f);
        put_field(f, address, strlen(address));
        put_field(f, number, strlen(number));
        put_field(f, AUTH_NAME, strlen(AUTH_NAME));
        put_field(f, cookie, COOKIE_BYTES);
}

/* Connects to display with the attempt API, waiting for the end: what finish() said. */
static int connect_wait(const char *display, xcb_connection_t **ret) {
        X11Connect *a = NULL;
        int screen = 0, r;

        r = x11_connect_start(display, &a);
        if (r < 0)
                return r;
        r = x11_connect_finish(a, clock_now_ns(CLOCK_MONOTONIC) + X11_CONNECT_TIMEOUT_NS + INT64_C(1000000000),
                               ret, &screen);
        if (r == -EINPROGRESS)
                (void) x11_connect_abandon(a);
        return r;
}

static void test_names(const Xvfb *live) {
        char name[64];
        int fd = -1, number = -1, screen = -1, r;

        is_int(x11_socket_open("nonsense", 0, &fd, &number, &screen), -EINVAL, "\"nonsense\" is no display");
        r = x11_socket_open(live->name, clock_now_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000, &fd, &number,
                            &screen);
        ok(r == 0 && number == live->display && screen == 0, "%s: its socket, display %d, screen %d", live->name,
           number, screen);
        if (r == 0)
                close(fd);
        snprintf(name, sizeof(name), "unix:%d.1", live->display);
        r = x11_socket_open(name, clock_now_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000, &fd, &number,
                            &screen);
        ok(r == 0 && number == live->display && screen == 1, "%s: the same socket, screen %d", name, screen);
        if (r == 0)
                close(fd);
        /* A display of our own claiming, with no socket: refused at once, not a timeout. */
        {
                SilentX none = {};

                if (silent_x_start(&none) < 0)
                        return (void) ok(false, "a free display");
                snprintf(name, sizeof(name), "%s", none.name);
                silent_x_stop(&none);
                r = x11_socket_open(name, clock_now_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000, &fd, &number,
                                    &screen);
                ok(r < 0 && r != -ETIMEDOUT, "%s, where no server listens: %s", name, strerror(-r));
        }
}

/* TCP displays, against a listener of ours on the loopback (Xvfb here listens on none): the
 * name's host (or "tcp/" with none) and port 6000 + N. */
static void test_tcp(void) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        _cleanup_close_ int listen_fd = -1;
        const char *forms[] = { "localhost:%d", "tcp/:%d", "127.0.0.1:%d.2" };
        int number = -1;

        for (int n = 100; n < 200 && number < 0; n++) {
                listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                sa.sin_port = htons((uint16_t) (6000 + n));
                if (listen_fd >= 0 && bind(listen_fd, (struct sockaddr *) &sa, sizeof(sa)) == 0 &&
                    listen(listen_fd, 8) == 0)
                        number = n;
                else if (listen_fd >= 0)
                        close(listen_fd);
        }
        if (number < 0)
                return (void) ok(false, "a free TCP port from 6100 on");
        for (size_t i = 0; i < ELEMENTSOF(forms); i++) {
                char name[64];
                int fd = -1, n = -1, screen = -1, r;

                snprintf(name, sizeof(name), forms[i], number);
                r = x11_socket_open(name, clock_now_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000, &fd, &n,
                                    &screen);
                ok(r == 0 && n == number && screen == (i == 2 ? 2 : 0), "%s: TCP to port %d (%s)", name,
                   6000 + number, r < 0 ? strerror(-r) : "connected");
                if (r == 0)
                        close(fd);
        }
}

static void test_silent(SilentX *sx) {
        xcb_connection_t *xcb = NULL;
        X11Connect *a = NULL;
        unsigned accepted = 0, closed = 0;
        int64_t start_ns = clock_now_ns(CLOCK_MONOTONIC);
        int screen, r;

        r = connect_wait(sx->name, &xcb);
        ok(r == -ETIMEDOUT, "an attempt on the silent %s ends with -ETIMEDOUT (%d)", sx->name, r);
        ok(clock_now_ns(CLOCK_MONOTONIC) - start_ns >= X11_CONNECT_TIMEOUT_NS,
           "  not before its timeout (%.3f s)", (double) (clock_now_ns(CLOCK_MONOTONIC) - start_ns) / 1e9);
        r = silent_x_wait(sx, 1, 1, WAIT_MS, &accepted, &closed);
        ok(r >= 0, "  and its connection is closed (%u of %u)", closed, accepted);

        r = x11_connect_start(sx->name, &a);
        ok(r >= 0, "another attempt");
        if (r < 0)
                return;
        r = silent_x_wait(sx, accepted + 1, 0, WAIT_MS, &accepted, &closed);
        ok(r >= 0 && x11_connect_finish(a, 0, &xcb, &screen) == -EINPROGRESS, "  accepted, in progress");
        (void) x11_connect_abandon(a);
        r = silent_x_wait(sx, 0, accepted, WAIT_MS, &accepted, &closed);
        ok(r >= 0, "  abandoned: its connection is closed at once (%u of %u)", closed, accepted);
}

static void test_auth(const char *dir) {
        _cleanup_free_ char *server_auth = NULL, *client_auth = NULL, *other_auth = NULL;
        uint8_t cookie[COOKIE_BYTES], wrong[COOKIE_BYTES];
        char host[256] = "", number[16], next[16];
        xcb_connection_t *xcb = NULL;
        xcb_auth_info_t info = {};
        Xvfb x = {};
        FILE *f;
        int fd = -1, n, screen, r;

        if (getrandom(cookie, sizeof(cookie), 0) != sizeof(cookie) ||
            getrandom(wrong, sizeof(wrong), 0) != sizeof(wrong))
                abort();
        (void) gethostname(host, sizeof(host) - 1);
        if (asprintf(&server_auth, "%s/server.auth", dir) < 0 || asprintf(&client_auth, "%s/client.auth", dir) < 0 ||
            asprintf(&other_auth, "%s/other.auth", dir) < 0)
                abort();
        /* The server's file: any address, any display (what it reads is only the cookie). */
        f = fopen(server_auth, "w");
        if (!f)
                return (void) ok(false, "%s: %m", server_auth);
        put_entry(f, FamilyWild, "", "", cookie);
        fclose(f);
        r = xvfb_start_auth(server_auth, &x);
        ok(r >= 0, "an Xvfb that lets in only cookie holders, on %s", x.name);
        if (r < 0)
                return;

        /* The client's: the right one for this host and display, among decoys for another
         * display and another host, as a session's ~/.Xauthority holds them. */
        snprintf(number, sizeof(number), "%d", x.display);
        snprintf(next, sizeof(next), "%d", x.display + 1);
        f = fopen(client_auth, "w");
        if (f) {
                put_entry(f, FamilyLocal, host, next, wrong);
                put_entry(f, FamilyLocal, "not-this-host", number, wrong);
                put_entry(f, FamilyLocal, host, number, cookie);
                fclose(f);
        }
        f = fopen(other_auth, "w");
        if (f) {
                put_entry(f, FamilyLocal, host, number, wrong);
                fclose(f);
        }

        setenv("XAUTHORITY", client_auth, 1);
        r = x11_socket_open(x.name, clock_now_ns(CLOCK_MONOTONIC) + (int64_t) WAIT_MS * 1000000, &fd, &n, &screen);
        if (r >= 0) {
                r = x11_auth_lookup(fd, n, &info);
                close(fd);
        }
        ok(r >= 0 && info.namelen == (int) strlen(AUTH_NAME) && memcmp(info.name, AUTH_NAME, info.namelen) == 0 &&
           info.datalen == COOKIE_BYTES && memcmp(info.data, cookie, COOKIE_BYTES) == 0,
           "the lookup finds this host's cookie for %s among the decoys (%s)", x.name, r < 0 ? strerror(-r) : "found");
        x11_auth_done(&info);
        r = connect_wait(x.name, &xcb);
        ok(r == 0, "with it, %s lets us in", x.name);
        if (r == 0)
                xcb_disconnect(xcb);

        setenv("XAUTHORITY", other_auth, 1);
        r = connect_wait(x.name, &xcb);
        is_int(r, -ENOTCONN, "with a wrong cookie, it does not");
        setenv("XAUTHORITY", "/dev/null", 1);
        r = connect_wait(x.name, &xcb);
        is_int(r, -ENOTCONN, "nor with none");
        (void) xvfb_stop(&x);
}

int main(int argc, char *argv[]) {
        _cleanup_free_ char *dir = strdup("/tmp/timeconv-x11-connect-XXXXXX");
        SilentX sx = {};
        Xvfb live = {};
        int r;

        tap_require_program("Xvfb", "xvfb");
        unsetenv("DISPLAY");
        setenv("XAUTHORITY", "/dev/null", 1);
        if (!dir || !mkdtemp(dir))
                bail_out("a temporary directory: %m");

        r = xvfb_start(-1, &live);
        ok(r >= 0, "Xvfb on %s", live.name);
        if (r >= 0)
                test_names(&live);
        test_tcp();
        r = silent_x_start(&sx);
        ok(r >= 0, "a silent X server on %s", sx.name);
        if (r >= 0)
                test_silent(&sx);
        test_auth(dir);

        if (live.pid > 0)
                (void) xvfb_stop(&live);
        silent_x_stop(&sx);
        (void) proc_rm_rf(dir);
        return done_testing();
}
