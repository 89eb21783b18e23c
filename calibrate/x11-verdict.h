/* SPDX-License-Identifier: MIT */
#pragma once

/* The pure part of the X server clock (domains/x11.c): what one probe says, whether the server
 * stamps with CLOCK_MONOTONIC in ms (the "identity" verdict, tested on every probe and never
 * latched), and when to send the next probe so that its bracket tells the most.
 *
 * A probe: the server stamped server_ms (its clock, truncated to ms, mod 2^32) at some instant
 * inside our bracket. raw0/raw1 (CLOCK_MONOTONIC_RAW) are the outermost reads; the
 * CLOCK_MONOTONIC and CLOCK_MONOTONIC_COARSE reads sit inside them, so each pair brackets the
 * stamp too. All clocks here are in ns, all are >= 0. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"

#define X11_MS_NS INT64_C(1000000)

typedef struct X11Probe {
        int64_t raw0_ns, raw1_ns;
        int64_t mono0_ns, mono1_ns;
        int64_t coarse0_ns, coarse1_ns;
        uint32_t server_ms;
} X11Probe;

/* Which identity hypotheses one probe is consistent with. */
#define X11_CONSISTENT_MONOTONIC 0x1u  /* server_ms == floor(monotonic / 1 ms) mod 2^32 */
#define X11_CONSISTENT_COARSE    0x2u  /* the same with CLOCK_MONOTONIC_COARSE */

/* coarse_res_ns: clock_getres(CLOCK_MONOTONIC_COARSE). X servers pick the coarse clock only
 * when it ticks at least every ms, so above that the coarse hypothesis is never tested. */
unsigned x11_probe_consistency(const X11Probe *p, int64_t coarse_res_ns);

/* The server ms unwrapped to the occurrence nearest floor(mono1 / 1 ms): no state is needed
 * across the 2^32 ms wrap, and an identity server's value is CLOCK_MONOTONIC's. */
int64_t x11_probe_unwrapped_ms(const X11Probe *p);

/* Where the offset (server time - CLOCK_MONOTONIC, ns) may lie given this probe alone:
 * (lo, hi], as [T ms, T + 1 ms) minus [mono0, mono1]. The identity holds iff lo <= 0 < hi. */
void x11_probe_offset_range(const X11Probe *p, int64_t *ret_lo_ns, int64_t *ret_hi_ns);

/* The estimator's box: r in [raw0, raw1], x in [T ms, T ms + 1 ms + lag_ns]. lag_ns widens the
 * top for a server that may stamp with the coarse clock, which lags behind by up to a tick or
 * two. -EINVAL for a malformed probe (a bracket that runs backwards). */
int x11_probe_sample(const X11Probe *p, int64_t lag_ns, Sample *ret);

/* ---- the verdict: a window of recent probes ---- */

#define X11_VERDICT_WINDOW 64
#define X11_VERDICT_MIN_PROBES 16
/* The identity must be pinned at least this well (or twice the median bracket, if wider):
 * it is what a conversion through CLOCK_MONOTONIC then trusts with no model error. */
#define X11_VERDICT_MARGIN_MIN_NS INT64_C(50000)

typedef enum X11Identity {
        X11_IDENTITY_NONE,              /* "tracked" */
        X11_IDENTITY_MONOTONIC,         /* same_as "monotonic" */
        X11_IDENTITY_COARSE,            /* same_as "monotonic_coarse" */
} X11Identity;

typedef struct X11VerdictEntry {
        unsigned consistent;            /* X11_CONSISTENT_* */
        int64_t offset_lo_ns, offset_hi_ns;
        int64_t coarse_lo_ns, coarse_hi_ns;     /* the same against CLOCK_MONOTONIC_COARSE */
        int64_t mono_width_ns;
} X11VerdictEntry;

typedef struct X11Verdict {
        X11VerdictEntry ring[X11_VERDICT_WINDOW];
        size_t head, n;                 /* oldest at head */
        int64_t coarse_res_ns;
} X11Verdict;

void x11_verdict_init(X11Verdict *v, int64_t coarse_res_ns);
void x11_verdict_reset(X11Verdict *v);
void x11_verdict_add(X11Verdict *v, const X11Probe *p);

/* Identity only while the window holds X11_VERDICT_MIN_PROBES or more and every one of them is
 * consistent with one hypothesis; for CLOCK_MONOTONIC the window must also pin the offset to
 * within the margin on both sides (so an offset beyond it can never pass). */
X11Identity x11_verdict_get(const X11Verdict *v);

/* How far from the identity's clock the server may still be: the largest |offset| that every
 * probe in the window allows (their ranges' intersection holds the true offset, and 0). A
 * conversion through same_as is exact only up to this. 0 for X11_IDENTITY_NONE. */
int64_t x11_verdict_residual_ns(const X11Verdict *v, X11Identity identity);

/* ---- probe phases ---- */

/* The planner keeps a rough range of the offset (server - CLOCK_MONOTONIC) from recent probes.
 * Until it is known to better than X11_PLANNER_KNOWN_NS, probes start at random sub-ms phases;
 * then each is aimed so that the predicted server ms edge falls at a random point of its
 * bracket: only edge-straddling probes pin the offset to within a round trip. */
#define X11_PLANNER_KNOWN_NS INT64_C(500000)
/* Only for aiming: how fast the range widens with age (a remote server's clock drifts). */
#define X11_PLANNER_DRIFT_PPM 20
/* The typical bracket is the median of this many recent ones: slow outliers must not widen the
 * aim. */
#define X11_PLANNER_WIDTHS 15

typedef struct X11Planner {
        bool have_range;
        int64_t offset_lo_ns, offset_hi_ns;
        int64_t at_mono_ns;             /* when the range was last narrowed */
        int64_t width_ns;               /* typical bracket (CLOCK_MONOTONIC): median of recent */
        int64_t widths_ns[X11_PLANNER_WIDTHS];
        size_t n_widths;
        int64_t lateness_ns;            /* typical wake-up lateness, running average */
} X11Planner;

void x11_planner_init(X11Planner *p);
void x11_planner_add(X11Planner *p, const X11Probe *probe);

/* The CLOCK_MONOTONIC instant at which the next probe should start, in (now, now + 1 ms +
 * bracket]; random is a fresh uniform 64-bit draw. *ret_wake_ns is when to wake for it (earlier
 * by the typical lateness, never before now). */
int64_t x11_planner_next(const X11Planner *p, int64_t now_mono_ns, uint64_t random, int64_t *ret_wake_ns);

/* A sleep until wake_ns for a probe at target_ns ended at woke_ns: feeds the lateness average,
 * and says whether the probe is still worth taking (not so late that the edge has passed): if
 * not, plan again. */
bool x11_planner_woke(X11Planner *p, int64_t wake_ns, int64_t target_ns, int64_t woke_ns);
