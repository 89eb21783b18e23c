/* SPDX-License-Identifier: MIT */
#pragma once

/* The frame log's windows as frame series, and the figures only the desktop has: how long a
 * compositor takes from a frame's end to drawing it and from drawing to presenting it, how
 * late its messages arrive, and whether its clock is the X server's. Times in, figures out. */

#include "frames-stats.h"
#include "frames.h"

/* The time a series is timed by: what its frame rate, intervals and janks are of. */
typedef enum FramesTimedBy {
        FRAMES_TIMED_BY_ACTUAL_PRESENT,         /* Android: SurfaceFlinger, gfxinfo's DisplayPresentTime */
        FRAMES_TIMED_BY_COMPLETED,              /* gfxinfo without present times: FrameCompleted */
        FRAMES_TIMED_BY_PRESENTED,              /* the frame log: _NET_WM_FRAME_TIMINGS' presentation, or
                                                 * wp_presentation's on Wayland */
        FRAMES_TIMED_BY_DRAWN,                  /* the frame log, no presentation time at all */
} FramesTimedBy;

const char *frames_timed_by_name(FramesTimedBy t);

/* One window's frames: timed by their presentation when any row has one (rows drawn and not
 * presented are pending), else by their drawn times. Rows never drawn are left out. */
int frames_window_series(const FramesWindow *w, FramesLog **ret_series, FramesTimedBy *ret_timed_by);

typedef struct FramesDesktopStats {
        size_t n_rows, n_drawn, n_presented;
        double client_fps;                      /* from the frames' begin times; NAN */
        size_t n_client;
        FramesSpread end_to_drawn;              /* drawn - end */
        size_t n_end_to_drawn;
        FramesSpread drawn_to_presented;        /* presented - drawn */
        size_t n_drawn_to_presented;
        FramesSpread drawn_message;             /* _NET_WM_FRAME_DRAWN arrived - drawn */
        size_t n_drawn_message;
        FramesSpread timings_message;           /* _NET_WM_FRAME_TIMINGS arrived - drawn */
        size_t n_timings_message;
        /* The drawn time as sent, read as CLOCK_MONOTONIC us, against its conversion through
         * the X server's clock: the same within the bound (identity) or not. */
        size_t n_clock, n_clock_identity;
        FramesSpread clock_offset;              /* sent - converted */
        /* Drawn after the frame's end and before its message arrived, within its bound. */
        size_t n_causal, n_causal_outside;
        /* Wayland rows: drawn is committed, drawn_to_presented commit -> presented. */
        bool wayland;
        size_t n_discarded;
        size_t n_vsync, n_hw_clock, n_hw_completion, n_zero_copy;   /* presented frames with the flag */
} FramesDesktopStats;

int frames_desktop_stats_compute(const FramesWindow *w, FramesDesktopStats *ret);

/* Whether any figure of d could be computed. */
bool frames_desktop_stats_any(const FramesDesktopStats *d);
