/* SPDX-License-Identifier: MIT */

/* The frame log that every parser adds to (frames.h), and the one rule that merges every input
 * into it: a frame is kept only when it was presented after the last kept one. Successive dumps
 * of a ring buffer overlap, and a frame repeated by a later dump has the same present time, so
 * it is not counted twice. A window's rows (the frame log's) join it in frames-desktop.c. */

#include <errno.h>
#include <stdlib.h>

#include "frames-memory.h"
#include "frames.h"

int frames_log_new(FramesLog **ret) {
        FramesLog *log = calloc(1, sizeof(*log));

        if (!log)
                return -ENOMEM;
        *ret = log;
        return 0;
}

FramesLog *frames_log_free(FramesLog *log) {
        if (log) {
                if (!log->frames_borrowed)
                        frames_array_free(log->frames, log->n_allocated, sizeof(Frame));
                for (size_t i = 0; i < log->n_windows; i++) {
                        FramesWindow *w = &log->windows[i];

                        frames_array_free(w->rows, w->n_allocated, sizeof(FramesWindowRow));
                        frames_array_free(w->frames, w->n_frames_allocated, sizeof(Frame));
                        free(w->wide);
                }
                free(log->windows);
        }
        free(log);
        return NULL;
}

int frames_log_add(FramesLog *log, const Frame *f) {
        log->rows++;
        log->android_rows++;
        if (f->present_ns == INT64_MAX) {
                log->pending++;
                return 0;
        }
        if (!frames_time_valid(f->present_ns) ||
            (log->n_frames > 0 && f->present_ns <= log->frames[log->n_frames - 1].present_ns)) {
                log->dropped++;
                return 0;
        }
        if (log->n_frames == log->n_allocated) {
                void *frames = log->frames;

                if (frames_array_grow(&frames, &log->n_allocated, log->n_allocated ? log->n_allocated * 2 : 1024,
                                      sizeof(Frame), true) < 0)
                        return -ENOMEM;
                log->frames = frames;
        }
        log->frames[log->n_frames++] = *f;
        return 1;
}
