/* SPDX-License-Identifier: MIT */
#pragma once

/* Wakes the daemon the moment CLOCK_REALTIME is set (settimeofday, clock_settime, NTP stepping
 * the clock, and resume from suspend on current kernels): a timerfd armed at the end of time
 * with TFD_TIMER_CANCEL_ON_SET, whose read fails with ECANCELED when the clock jumps. */

#include <systemd/sd-event.h>

typedef void (*RealtimeChangedFn)(void *userdata);

typedef struct RealtimeWatch {
        int fd;
        sd_event_source *source;
        RealtimeChangedFn changed;
        void *userdata;
} RealtimeWatch;

int realtime_watch_new(sd_event *event, RealtimeChangedFn changed, void *userdata, RealtimeWatch **ret);
RealtimeWatch *realtime_watch_free(RealtimeWatch *w);

static inline void realtime_watch_freep(RealtimeWatch **w) {
        realtime_watch_free(*w);
}
