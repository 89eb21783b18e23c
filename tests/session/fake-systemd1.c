/* SPDX-License-Identifier: MIT */

/* A stand-in for the systemd user manager on a test's private bus: it owns
 * org.freedesktop.systemd1 and implements what timeconvd and dbus-update-activation-environment
 * use of org.freedesktop.systemd1.Manager at /org/freedesktop/systemd1: the Environment property
 * (as) and SetEnvironment, UnsetEnvironment and UnsetAndSetEnvironment. Like systemd's, the
 * property has no change signal (vtable flags 0) and the methods emit no PropertiesChanged: a
 * client learns of a change only by reading the property again. The real user manager cannot run inside a test: it is PID 1's child
 * per user, owns the user's cgroup and its own private bus, and would start the user's real
 * units; this is the smallest thing that answers the same calls on our bus.
 * usage: fake-systemd1 [NAME=VALUE...]    (the initial environment; the bus from
 *        DBUS_SESSION_BUS_ADDRESS). It ends on SIGTERM or when the bus goes away. */

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#define SERVICE "org.freedesktop.systemd1"
#define PATH "/org/freedesktop/systemd1"
#define INTERFACE "org.freedesktop.systemd1.Manager"
#define ENV_MAX 128

typedef struct Manager {
        sd_bus *bus;
        char *env[ENV_MAX + 1];         /* NULL-terminated, "NAME=VALUE" */
        size_t n_env;
} Manager;

static size_t name_length(const char *assignment) {
        const char *eq = strchr(assignment, '=');

        return eq ? (size_t) (eq - assignment) : strlen(assignment);
}

/* The index of the entry for name (name_len bytes), or n_env. */
static size_t env_find(const Manager *m, const char *name, size_t name_len) {
        for (size_t i = 0; i < m->n_env; i++)
                if (name_length(m->env[i]) == name_len && strncmp(m->env[i], name, name_len) == 0)
                        return i;
        return m->n_env;
}

static void env_unset(Manager *m, const char *name) {
        size_t i = env_find(m, name, name_length(name));

        if (i == m->n_env)
                return;
        free(m->env[i]);
        memmove(&m->env[i], &m->env[i + 1], (m->n_env - i) * sizeof(char *));
        m->n_env--;
}

static int env_set(Manager *m, const char *assignment) {
        size_t i = env_find(m, assignment, name_length(assignment));
        char *copy;

        if (!strchr(assignment, '='))
                return -EINVAL;
        if (i == m->n_env && m->n_env == ENV_MAX)
                return -E2BIG;
        copy = strdup(assignment);
        if (!copy)
                return -ENOMEM;
        if (i == m->n_env)
                m->n_env++;
        else
                free(m->env[i]);
        m->env[i] = copy;
        m->env[m->n_env] = NULL;
        return 0;
}

static int property_environment(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;

        return sd_bus_message_append_strv(reply, m->env);
}

/* Reads an "as" of names (unset) or assignments (set) and applies it. */
static int apply_array(Manager *m, sd_bus_message *message, bool set) {
        const char *s;
        int r;

        r = sd_bus_message_enter_container(message, 'a', "s");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(message, "s", &s)) > 0) {
                if (set)
                        r = env_set(m, s);
                else
                        env_unset(m, s);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(message);
}

static int method_set(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        r = apply_array(m, message, true);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "invalid environment assignment");
        return sd_bus_reply_method_return(message, NULL);
}

static int method_unset(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        r = apply_array(m, message, false);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(message, NULL);
}

static int method_unset_and_set(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        int r;

        r = apply_array(m, message, false);
        if (r >= 0)
                r = apply_array(m, message, true);
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "invalid environment assignment");
        return sd_bus_reply_method_return(message, NULL);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        /* systemd's dbus-manager.c declares it so: no PropertiesChanged, ever. */
        SD_BUS_PROPERTY("Environment", "as", property_environment, 0, 0),
        SD_BUS_METHOD("SetEnvironment", "as", "", method_set, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("UnsetEnvironment", "as", "", method_unset, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("UnsetAndSetEnvironment", "asas", "", method_unset_and_set, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END
};

static int on_disconnected(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        return sd_event_exit(sd_bus_get_event(sd_bus_message_get_bus(message)), 0);
}

int main(int argc, char *argv[]) {
        Manager m = {};
        sd_event *event = NULL;
        sigset_t mask;
        int r;

        for (int i = 1; i < argc; i++)
                if (env_set(&m, argv[i]) < 0) {
                        fprintf(stderr, "fake-systemd1: bad assignment '%s'\n", argv[i]);
                        return 2;
                }

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        r = sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ? -errno : 0;
        if (r >= 0)
                r = sd_event_default(&event);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, NULL, NULL);
        if (r >= 0)
                r = sd_bus_open_user(&m.bus);
        if (r >= 0)
                r = sd_bus_add_object_vtable(m.bus, NULL, PATH, INTERFACE, manager_vtable, &m);
        if (r >= 0)
                r = sd_bus_match_signal(m.bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                                        "org.freedesktop.DBus.Local", "Disconnected", on_disconnected, NULL);
        if (r >= 0)
                r = sd_bus_attach_event(m.bus, event, 0);
        /* Last: whoever waits for the name may call at once. */
        if (r >= 0)
                r = sd_bus_request_name(m.bus, SERVICE, 0);
        if (r >= 0)
                r = sd_event_loop(event);
        if (r < 0)
                fprintf(stderr, "fake-systemd1: %s\n", strerror(-r));

        sd_bus_flush_close_unref(m.bus);
        sd_event_unref(event);
        for (size_t i = 0; i < m.n_env; i++)
                free(m.env[i]);
        return r < 0 ? 1 : 0;
}
