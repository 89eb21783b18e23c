/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#include "realtime-watch.h"
#include "cleanup.h"
#include "time-util.h"

#define TIME_T_MAX ((time_t) ((UINTMAX_C(1) << (sizeof(time_t) * 8 - 1)) - 1))

/* Arms (or re-arms, after a cancel) the timer: it never expires, it only gets cancelled. */
static int realtime_watch_arm(int fd) {
        const struct itimerspec its = {
                .it_value.tv_sec = TIME_T_MAX,
        };

        if (timerfd_settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL) < 0)
                return -errno;
        return 0;
}

static int realtime_watch_on_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        RealtimeWatch *w = userdata;
        uint64_t expirations;
        ssize_t n;

        n = read(fd, &expirations, sizeof(expirations));
        if (n < 0 && errno == EAGAIN)
                return 0;       /* spurious: nothing happened */

        /* ECANCELED is the news we wait for; the timer must be armed again to hear the next one.
         * Anything else (it cannot expire) is treated the same way: re-arm and re-calibrate. */
        (void) realtime_watch_arm(fd);
        w->changed(w->userdata);
        return 0;
}

int realtime_watch_new(sd_event *event, RealtimeChangedFn changed, void *userdata, RealtimeWatch **ret) {
        _cleanup_(realtime_watch_freep) RealtimeWatch *w = NULL;
        int r;

        if (!event || !changed || !ret)
                return -EINVAL;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->fd = -1;
        w->changed = changed;
        w->userdata = userdata;

        w->fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
        if (w->fd < 0)
                return -errno;
        r = realtime_watch_arm(w->fd);
        if (r < 0)
                return r;

        r = sd_event_add_io(event, &w->source, w->fd, EPOLLIN, realtime_watch_on_io, w);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(w->source, "realtime-watch");

        *ret = TAKE_PTR(w);
        return 0;
}

RealtimeWatch *realtime_watch_free(RealtimeWatch *w) {
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->source);
        if (w->fd >= 0)
                (void) close_nointr(w->fd);
        free(w);
        return NULL;
}
