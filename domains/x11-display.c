/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "x11-display.h"
#include "x11.h"

struct X11Display {
        pthread_mutex_t lock;
        char *name;                     /* NULL: none */
        char reason[X11_DISPLAY_REASON_MAX];
        uint64_t generation;
        int want_fd;
};

int x11_display_new(const char *why_none, X11Display **ret) {
        X11Display *d;

        if (!ret)
                return -EINVAL;
        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->want_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (d->want_fd < 0) {
                int r = -errno;

                free(d);
                return r;
        }
        pthread_mutex_init(&d->lock, NULL);
        snprintf(d->reason, sizeof(d->reason), "%s", why_none ? why_none : "no X display");
        *ret = d;
        return 0;
}

X11Display *x11_display_free(X11Display *d) {
        if (!d)
                return NULL;
        pthread_mutex_destroy(&d->lock);
        close(d->want_fd);
        free(d->name);
        free(d);
        return NULL;
}

int x11_display_set(X11Display *d, const char *name, const char *why_none) {
        char *copy = NULL;
        int changed;

        if (!d)
                return -EINVAL;
        if (name && !name[0])
                name = NULL;
        if (name) {
                copy = strdup(name);
                if (!copy)
                        return -ENOMEM;
        }

        pthread_mutex_lock(&d->lock);
        changed = (!name != !d->name) || (name && strcmp(name, d->name) != 0);
        if (changed) {
                free(d->name);
                d->name = copy;
                copy = NULL;
                d->generation++;
        }
        if (!name)
                snprintf(d->reason, sizeof(d->reason), "%s", why_none ? why_none : "no X display");
        pthread_mutex_unlock(&d->lock);

        free(copy);
        return changed;
}

int x11_display_get(X11Display *d, char *ret, size_t size, uint64_t *ret_generation) {
        int r = 0, k;

        if (!d || !ret || size == 0)
                return -EINVAL;
        pthread_mutex_lock(&d->lock);
        k = snprintf(ret, size, "%s", d->name ? d->name : d->reason);
        if (!d->name)
                r = -ENXIO;
        else if (k < 0 || (size_t) k >= size)
                r = -ENOBUFS;
        if (ret_generation)
                *ret_generation = d->generation;
        pthread_mutex_unlock(&d->lock);
        return r;
}

void x11_display_want(X11Display *d) {
        uint64_t one = 1;

        /* A full counter (never, in practice) already wakes the reader: nothing to do. */
        if (d)
                (void) !write(d->want_fd, &one, sizeof(one));
}

int x11_display_want_fd(const X11Display *d) {
        return d ? d->want_fd : -EINVAL;
}

/* Why a source has no display, given what x11_display_get() said (name: what it wrote). */
static const char *no_display_reason(int r, const char *name) {
        return r == -ENXIO ? name :
               r == -ENOBUFS ? "no X display: its name is too long" : "no X display: out of memory";
}

int x11_display_seen_init(X11DisplaySeen *seen, const char *display) {
        if (!display) {
                /* No generation of d's is this one: the first look takes whatever d has. */
                *seen = (X11DisplaySeen) { .generation = UINT64_MAX };
                return 0;
        }
        *seen = (X11DisplaySeen) { .name = strdup(display) };
        return seen->name ? 0 : -ENOMEM;
}

int x11_display_follow(X11Display *d, X11DisplaySeen *seen, char *reason, size_t size) {
        char name[X11_DISPLAY_REASON_MAX];
        uint64_t generation = 0;
        int r;

        if (!d || !seen || (!reason && size > 0))
                return -EINVAL;
        r = x11_display_get(d, name, sizeof(name), &generation);
        if (r < 0 && r != -ENXIO && r != -ENOBUFS)
                return r;
        if (generation == seen->generation && (r >= 0) == !!seen->name) {
                /* Unchanged, but the caller may have written its own reason since: say it again. */
                if (r < 0)
                        snprintf(reason, size, "%s", no_display_reason(r, name));
                return 0;
        }
        free(seen->name);
        seen->name = r >= 0 ? strdup(name) : NULL;
        seen->generation = generation;
        if (!seen->name)
                snprintf(reason, size, "%s", no_display_reason(r < 0 ? r : -ENOMEM, name));
        return 1;
}

const char *x11_config_display(const X11Config *config) {
        const char *display = config && config->display ? config->display :
                              config && config->follow ? NULL : getenv("DISPLAY");

        return display && display[0] ? display : NULL;
}

X11Display *x11_config_follow(const X11Config *config) {
        return config && !x11_config_display(config) ? config->follow : NULL;
}

/* Both X sources: a server that goes away often comes back within a second (a restart); one
 * that stays away is asked for every few seconds at most. */
#define X11_LINK_BACKOFF_MIN_NS INT64_C(100000000)
#define X11_LINK_BACKOFF_MAX_NS INT64_C(5000000000)

int x11_link_init(X11Link *l, const X11Config *config) {
        const char *display = x11_config_display(config);
        X11Display *follow = x11_config_follow(config);
        int r;

        if (!l)
                return -EINVAL;
        if (!display && !follow)
                return -ENXIO;
        *l = (X11Link) { .follow = follow };
        r = x11_display_seen_init(&l->display, display);
        if (r < 0)
                return r;
        backoff_init(&l->backoff, X11_LINK_BACKOFF_MIN_NS, X11_LINK_BACKOFF_MAX_NS);
        return 0;
}

bool x11_link_follow(X11Link *l) {
        if (!l->follow || x11_display_follow(l->follow, &l->display, l->reason, sizeof(l->reason)) == 0)
                return false;
        backoff_init(&l->backoff, X11_LINK_BACKOFF_MIN_NS, X11_LINK_BACKOFF_MAX_NS);
        return true;
}

void x11_link_lost(X11Link *l) {
        backoff_defer(&l->backoff, clock_now_ns(CLOCK_MONOTONIC));
        snprintf(l->reason, sizeof(l->reason), "the X server on %s went away", l->display.name ?: "?");
}

const char *x11_link_reason(const X11Link *l) {
        return l->reason[0] ? l->reason : NULL;
}

void x11_link_done(X11Link *l) {
        free(l->display.name);
        l->display.name = NULL;
}
