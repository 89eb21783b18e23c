/* SPDX-License-Identifier: MIT */

#include <stdbool.h>
#include <string.h>

#include "harness-tap.h"

int harness_tap_start(const char *daemon_path, const char *const *args, Harness **ret_h, sd_bus **ret_bus) {
        int r;

        r = harness_new(NULL, ret_h);
        is_int(r, 0, "a private dbus-daemon starts");
        if (r < 0)
                return r;
        r = args ? harness_start_daemon(*ret_h, daemon_path, args, HARNESS_READY_TIMEOUT_MS) :
                   harness_start_timeconvd(*ret_h, daemon_path, NULL);
        is_int(r, 0, "timeconvd starts and says READY=1");
        if (r >= 0 && ret_bus)
                r = harness_connect(*ret_h, ret_bus);
        return r;
}

/* text is a part of the message, or with whole the message itself; errno_want 0: any r < 0. */
static void check_bus_error(const char *what, int r, sd_bus_error *e, const char *name, int errno_want,
                            const char *text, bool whole) {
        bool good = (errno_want ? r == -errno_want : r < 0) && sd_bus_error_has_name(e, name) &&
                    (!text || (e->message && (whole ? strcmp(e->message, text) == 0 : !!strstr(e->message, text))));

        ok(good, "%s: %s (%s)", what, name, text ? text : "-");
        if (!good)
                diag("got r=%d name=%s message=%s", r, e->name ? e->name : "(none)",
                     e->message ? e->message : "(none)");
        sd_bus_error_free(e);
}

void check_error(const char *what, int r, sd_bus_error *e, const char *name, int errno_want, const char *substr) {
        check_bus_error(what, r, e, name, errno_want, substr, false);
}

void check_error_message(const char *what, int r, sd_bus_error *e, const char *name, const char *message) {
        check_bus_error(what, r, e, name, 0, message, true);
}
