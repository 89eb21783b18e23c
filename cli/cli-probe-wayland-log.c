/* SPDX-License-Identifier: MIT */

/* timeconv frames --probe on Wayland: the client (cli-probe-wayland.c) commits the frames; here
 * each presented time goes from the clock the compositor announced to CLOCK_MONOTONIC through
 * timeconvd, with the conversion's bound (mutter presents in CLOCK_MONOTONIC, where the
 * conversion is the identity; weston in CLOCK_MONOTONIC_RAW, where it is not), the rows are
 * written (frames-wayland.c reads them) and read back through `timeconv frames`' report. */

#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-probe-wayland.h"
#include "cli-probe.h"
#include "cli.h"
#include "frames-report.h"
#include "timeconv.h"

static void optional(FILE *f, const char *key, bool known, int64_t v) {
        if (known)
                fprintf(f, ",\"%s\":%" PRId64, key, v);
        else
                fprintf(f, ",\"%s\":null", key);
}

/* What converts the presented times as their feedback comes (WaylandProbeOptions.on_feedback). */
typedef struct Converter {
        struct timeconv *tc;
        unsigned n_frames;
        bool said;                      /* the first feedback was said */
} Converter;

static bool convert(struct timeconv *tc, const char *domain, WaylandFrame *f) {
        int64_t mono_ns, unc_ns;

        if (!domain || timeconv_convert(tc, domain, "monotonic", f->presented_ns, &mono_ns, &unc_ns) < 0)
                return false;
        f->presented_mono_ns = mono_ns;
        f->presented_uncertainty_ns = unc_ns;
        f->converted = true;
        return true;
}

/* Each presented time is converted as it comes, while the run lasts: as the X probe does, so
 * that a daemon that goes on meanwhile is asked about times it still holds. */
static void on_feedback(void *userdata, const WaylandProbeRun *run, WaylandFrame *f) {
        Converter *c = userdata;

        if (f->state == WAYLAND_FRAME_PRESENTED && f->presented_ns > 0)
                (void) convert(c->tc, probe_wayland_clock_domain(run->clock_id), f);
        if (!c->said) {
                /* The same line as on X, for scripts and tests to wait for: the compositor answers. */
                fprintf(stderr, "timeconv: the compositor draws the probe's frames; measuring %u\n", c->n_frames);
                c->said = true;
        }
}

/* The row of one frame; its presented time converted (domain: the compositor's clock's), or
 * when timeconvd could not convert it, only as sent (presented_raw_ns). *ret_raw: written
 * unconverted. */
static int record(struct timeconv *tc, const WaylandProbeRun *run, const char *domain, WaylandFrame *f, FILE *out,
                  bool *ret_raw) {
        bool presented = f->state == WAYLAND_FRAME_PRESENTED && f->presented_ns > 0;
        bool converted = presented && (f->converted || convert(tc, domain, f));

        *ret_raw = presented && !converted;
        fprintf(out, "{\"surface\":%" PRIu32 ",\"counter\":%zu,\"begin_ns\":%" PRId64 ",\"commit_ns\":%" PRId64
                ",\"output\":", run->surface, (size_t) (f - run->frames), f->begin_ns, f->commit_ns);
        if (presented && *f->output)
                frames_json_string(out, f->output);
        else
                fputs("null", out);
        fprintf(out, ",\"presented_clock\":%d", (int) run->clock_id);
        optional(out, "presented_raw_ns", presented, f->presented_ns);
        optional(out, "presented_ns", converted, f->presented_mono_ns);
        optional(out, "presented_uncertainty_ns", converted, f->presented_uncertainty_ns);
        optional(out, "refresh_interval_ns", presented && f->refresh_ns > 0, f->refresh_ns);
        optional(out, "seq", presented, (int64_t) (f->seq & INT64_MAX));
        optional(out, "presentation_flags", presented, f->flags);
        fprintf(out, ",\"discarded\":%s", f->state == WAYLAND_FRAME_DISCARDED ? "true" : "false");
        optional(out, "feedback_received_ns", f->state != WAYLAND_FRAME_PENDING, f->feedback_received_ns);
        fputs("}\n", out);
        return ferror(out) ? -ENOMEM : 0;
}

typedef struct WaylandLog {
        struct timeconv *tc;
        WaylandProbeRun *run;
        const char *domain;
} WaylandLog;

static int wayland_record(void *userdata, size_t index, FILE *out, bool *ret_raw) {
        WaylandLog *l = userdata;

        return record(l->tc, l->run, l->domain, &l->run->frames[index], out, ret_raw);
}

typedef struct Header {
        const WaylandProbeOptions *o;
        const WaylandProbeRun *run;
        const char *domain;
} Header;

static size_t count_frames(const WaylandProbeRun *run, WaylandFrameState state) {
        size_t n = 0;

        for (size_t i = 0; i < run->n_frames; i++)
                n += run->frames[i].state == state;
        return n;
}

static void header_text(const Header *h, double cpu_percent) {
        const WaylandProbeRun *run = h->run;
        size_t discarded = count_frames(run, WAYLAND_FRAME_DISCARDED);
        size_t pending = count_frames(run, WAYLAND_FRAME_PENDING);
        printf("compositor      Wayland '%s' (wp_presentation, clock %s)\n", run->display, h->domain);
        printf("outputs        ");
        for (size_t i = 0; i < run->n_outputs; i++)
                printf("%s%s (%.3f Hz)", i ? ", " : " ", run->outputs[i].name, run->outputs[i].refresh_mhz / 1000.0);
        printf("%s\n", run->n_outputs ? "" : " none");
        printf("probe           surface %" PRIu32 "%s%s, %zu frames, ", run->surface,
               *run->fullscreen_output ? ", fullscreen on " : "", run->fullscreen_output, run->n_frames);
        if (h->o->rate_hz > 0)
                printf("%g Hz", h->o->rate_hz);
        else
                fputs("paced by frame callbacks", stdout);
        printf(", %zu discarded, %zu without feedback\n", discarded, pending);
        cli_probe_header_end(false, cpu_percent, run->stopped, run->stop_message);
}

static void header_json(const Header *h, double cpu_percent) {
        const WaylandProbeRun *run = h->run;
        size_t discarded = count_frames(run, WAYLAND_FRAME_DISCARDED);
        size_t pending = count_frames(run, WAYLAND_FRAME_PENDING);
        fputs("{\"probe\":{\"protocol\":\"wayland\",\"compositor\":", stdout);
        frames_json_string(stdout, run->display);
        printf(",\"clock_id\":%d,\"clock\":\"%s\",\"outputs\":[", (int) run->clock_id, h->domain);
        for (size_t i = 0; i < run->n_outputs; i++) {
                printf("%s{\"name\":", i ? "," : "");
                frames_json_string(stdout, run->outputs[i].name);
                printf(",\"refresh_mhz\":%" PRId32 "}", run->outputs[i].refresh_mhz);
        }
        printf("],\"surface\":%" PRIu32 ",\"fullscreen_output\":", run->surface);
        if (*run->fullscreen_output)
                frames_json_string(stdout, run->fullscreen_output);
        else
                fputs("null", stdout);
        printf(",\"frames\":%zu,\"discarded\":%zu,\"pending\":%zu,\"rate_hz\":", run->n_frames, discarded, pending);
        if (h->o->rate_hz > 0)
                printf("%g", h->o->rate_hz);
        else
                fputs("null", stdout);
        cli_probe_header_end(true, cpu_percent, run->stopped, run->stop_message);
}

static void header(const void *userdata, bool json, double cpu_percent) {
        if (json)
                header_json(userdata, cpu_percent);
        else
                header_text(userdata, cpu_percent);
}

int cli_probe_wayland(struct timeconv *tc, const WaylandProbeOptions *options, FILE *log, const char *log_path,
                      bool json, const char *plot) {
        WaylandProbeOptions o = *options;
        WaylandProbeRun run = {};
        Converter converter = { .tc = tc, .n_frames = o.n_frames };
        char message[512] = "", *text = NULL;
        const char *domain;
        size_t size = 0, n_raw = 0;
        int r, status;

        o.on_feedback = on_feedback;
        o.userdata = &converter;
        r = probe_wayland_run(&o, &run, message, sizeof(message));
        if (r < 0) {
                fprintf(stderr, "timeconv: %s\n", message);
                return r == -ENOMEM ? EXIT_FAILURE : EXIT_UNAVAILABLE;
        }
        domain = probe_wayland_clock_domain(run.clock_id);
        if (!domain) {
                fprintf(stderr, "timeconv: the compositor presents in clock %d, which timeconvd does not know\n",
                        (int) run.clock_id);
                probe_wayland_run_done(&run);
                return EXIT_UNAVAILABLE;
        }
        r = cli_probe_log_text(run.n_frames, wayland_record, &(WaylandLog) { tc, &run, domain }, log, &text, &size,
                               &n_raw);
        if (r < 0) {
                fprintf(stderr, "timeconv: %s: %s\n", log_path ? log_path : "the frame log", strerror(-r));
                status = r == -ENOMEM ? EXIT_FAILURE : EXIT_IOERR;
        } else {
                status = cli_probe_summary(text, size, json, plot, run.cpu_ns, run.wall_ns, header,
                                           &(Header) { &o, &run, domain });
                if (n_raw > 0)
                        fprintf(stderr, "timeconv: timeconvd could not convert the %s times of %zu presented frames; "
                                "%s has them as they came (presented_raw_ns), not as presented times\n", domain,
                                n_raw, log_path ? log_path : "the frame log");
                status = cli_probe_stopped(status, run.stopped, run.stop_message, log_path, n_raw);
        }
        free(text);
        probe_wayland_run_done(&run);
        return status;
}
