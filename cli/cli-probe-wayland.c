/* SPDX-License-Identifier: MIT */

/* The probe's Wayland client: one xdg_toplevel (or a fullscreen one on a named output) showing
 * wl_shm buffers, a wp_presentation feedback per committed frame. Frames are committed at
 * t0 + k / rate (an absolute schedule: a late wake-up does not shift the later frames) or, with
 * no rate, on the previous frame's frame callback, which is how a client paced by the
 * compositor draws. Nothing here converts: the presented times stay in the compositor's clock. */

#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <wayland-client.h>

#include "cli-probe-wayland-internal.h"
#include "presentation-time-client-protocol.h"
#include "time-util.h"
#include "xdg-shell-client-protocol.h"

#define WIDTH 256
#define HEIGHT 256
#define STRIDE (WIDTH * 4)

static void xdg_surface_configure(void *data, struct xdg_surface *xdg_surface, uint32_t serial) {
        Probe *p = data;

        xdg_surface_ack_configure(xdg_surface, serial);
        p->configured = true;
}

static const struct xdg_surface_listener xdg_surface_listener = {
        .configure = xdg_surface_configure,
};

static void toplevel_configure(void *data, struct xdg_toplevel *t, int32_t width, int32_t height,
                               struct wl_array *states) {
}

static void toplevel_close(void *data, struct xdg_toplevel *t) {
        Probe *p = data;

        p->closed = true;
}

static const struct xdg_toplevel_listener toplevel_listener = {
        .configure = toplevel_configure,
        .close = toplevel_close,
};

static void buffer_release(void *data, struct wl_buffer *wl_buffer) {
        Buffer *b = data;

        b->busy = false;
}

static const struct wl_buffer_listener buffer_listener = {
        .release = buffer_release,
};

static void frame_done(void *data, struct wl_callback *callback, uint32_t time_ms) {
        Probe *p = data;

        wl_callback_destroy(callback);
        p->frame_callback = NULL;
        p->last_answer_ns = clock_now_ns(CLOCK_MONOTONIC);
}

static const struct wl_callback_listener frame_listener = {
        .done = frame_done,
};

static void feedback_finish(Feedback *f, WaylandFrameState state) {
        Probe *p = f->probe;

        f->frame->state = state;
        f->frame->feedback_received_ns = clock_now_ns(CLOCK_MONOTONIC);
        wp_presentation_feedback_destroy(f->feedback);
        f->feedback = NULL;
        p->n_outstanding--;
        p->n_answered++;
        p->last_answer_ns = f->frame->feedback_received_ns;
        if (p->o->on_feedback)
                p->o->on_feedback(p->o->userdata, p->run, f->frame);
}

static void feedback_sync_output(void *data, struct wp_presentation_feedback *feedback, struct wl_output *output) {
        Feedback *f = data;
        Probe *p = f->probe;

        for (size_t i = 0; i < p->n_outputs; i++)
                if (p->outputs[i].output == output)
                        snprintf(f->frame->output, sizeof(f->frame->output), "%s", p->outputs[i].info->name);
}

static void feedback_presented(void *data, struct wp_presentation_feedback *feedback, uint32_t tv_sec_hi,
                               uint32_t tv_sec_lo, uint32_t tv_nsec, uint32_t refresh_ns, uint32_t seq_hi,
                               uint32_t seq_lo, uint32_t flags) {
        Feedback *f = data;
        uint64_t sec = (uint64_t) tv_sec_hi << 32 | tv_sec_lo;

        /* A clock past 2^63 ns is no clock this machine has: 0 marks it unusable. */
        f->frame->presented_ns = sec < (uint64_t) INT64_MAX / 1000000000 - 1 ?
                (int64_t) sec * 1000000000 + tv_nsec : 0;
        f->frame->refresh_ns = refresh_ns;
        f->frame->seq = (uint64_t) seq_hi << 32 | seq_lo;
        f->frame->flags = flags;
        feedback_finish(f, WAYLAND_FRAME_PRESENTED);
}

static void feedback_discarded(void *data, struct wp_presentation_feedback *feedback) {
        feedback_finish(data, WAYLAND_FRAME_DISCARDED);
}

static const struct wp_presentation_feedback_listener feedback_listener = {
        .sync_output = feedback_sync_output,
        .presented = feedback_presented,
        .discarded = feedback_discarded,
};

/* Sends what is queued, waits until deadline_ns (CLOCK_MONOTONIC) at most for events, and
 * dispatches them: 0, or -ECONNRESET when the connection broke. */
static int dispatch_until(Probe *p, int64_t deadline_ns) {
        struct pollfd pfd = { .fd = wl_display_get_fd(p->display), .events = POLLIN };
        int64_t left_ns;
        int r;

        while (wl_display_prepare_read(p->display) != 0)
                if (wl_display_dispatch_pending(p->display) < 0)
                        return -ECONNRESET;
        if (wl_display_flush(p->display) < 0 && errno != EAGAIN) {
                wl_display_cancel_read(p->display);
                return -ECONNRESET;
        }
        left_ns = deadline_ns - clock_now_ns(CLOCK_MONOTONIC);
        r = poll(&pfd, 1, left_ns <= 0 ? 0 : (int) ((left_ns + 999999) / 1000000));
        if (r > 0) {
                if (wl_display_read_events(p->display) < 0)
                        return -ECONNRESET;
        } else
                wl_display_cancel_read(p->display);
        if (r < 0 && errno != EINTR)
                return -errno;
        if (wl_display_dispatch_pending(p->display) < 0)
                return -ECONNRESET;
        return 0;
}

static int buffers_new(Probe *p) {
        size_t size = (size_t) STRIDE * HEIGHT * N_BUFFERS;
        struct wl_shm_pool *pool;
        int fd, r = 0;

        fd = memfd_create("timeconv-probe", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, (off_t) size) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        p->pool_memory = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p->pool_memory == MAP_FAILED) {
                r = -errno;
                p->pool_memory = NULL;
                close(fd);
                return r;
        }
        pool = wl_shm_create_pool(p->shm, fd, (int32_t) size);
        for (size_t i = 0; i < N_BUFFERS; i++) {
                Buffer *b = &p->buffers[i];

                b->buffer = wl_shm_pool_create_buffer(pool, (int32_t) (i * STRIDE * HEIGHT), WIDTH, HEIGHT, STRIDE,
                                                      WL_SHM_FORMAT_XRGB8888);
                b->pixels = (uint32_t *) ((char *) p->pool_memory + i * STRIDE * HEIGHT);
                wl_buffer_add_listener(b->buffer, &buffer_listener, b);
        }
        wl_shm_pool_destroy(pool);
        close(fd);
        return 0;
}

static Buffer *free_buffer(Probe *p) {
        for (size_t i = 0; i < N_BUFFERS; i++)
                if (!p->buffers[i].busy)
                        return &p->buffers[i];
        return NULL;
}

/* A frame's picture: a grey that changes every frame, so that no compositor skips it as the same. */
static void paint(Buffer *b, size_t k) {
        uint32_t grey = (uint32_t) (k * 37 % 256);
        uint32_t pixel = 0xff000000u | grey << 16 | grey << 8 | grey;

        for (size_t i = 0; i < (size_t) WIDTH * HEIGHT; i++)
                b->pixels[i] = pixel;
}

static int commit_frame(Probe *p, size_t k, bool paced_by_callback) {
        WaylandFrame *f = &p->run->frames[k];
        Feedback *fb = &p->feedbacks[k];
        Buffer *b = free_buffer(p);

        if (!b)
                return -EBUSY;
        f->begin_ns = clock_now_ns(CLOCK_MONOTONIC);
        paint(b, k);
        wl_surface_attach(p->surface, b->buffer, 0, 0);
        wl_surface_damage_buffer(p->surface, 0, 0, WIDTH, HEIGHT);
        if (paced_by_callback) {
                p->frame_callback = wl_surface_frame(p->surface);
                wl_callback_add_listener(p->frame_callback, &frame_listener, p);
        }
        *fb = (Feedback) { .probe = p, .frame = f, .feedback = wp_presentation_feedback(p->presentation, p->surface) };
        wp_presentation_feedback_add_listener(fb->feedback, &feedback_listener, fb);
        p->n_outstanding++;
        wl_surface_commit(p->surface);
        b->busy = true;
        if (wl_display_flush(p->display) < 0 && errno != EAGAIN)
                return -ECONNRESET;
        f->commit_ns = clock_now_ns(CLOCK_MONOTONIC);
        p->run->n_frames = k + 1;
        return 0;
}

static void probe_destroy(Probe *p) {
        if (p->feedbacks)
                for (size_t i = 0; i < p->run->n_frames; i++)
                        if (p->feedbacks[i].feedback)
                                wp_presentation_feedback_destroy(p->feedbacks[i].feedback);
        free(p->feedbacks);
        if (p->frame_callback)
                wl_callback_destroy(p->frame_callback);
        for (size_t i = 0; i < N_BUFFERS; i++)
                if (p->buffers[i].buffer)
                        wl_buffer_destroy(p->buffers[i].buffer);
        if (p->pool_memory)
                munmap(p->pool_memory, (size_t) STRIDE * HEIGHT * N_BUFFERS);
        if (p->toplevel)
                xdg_toplevel_destroy(p->toplevel);
        if (p->xdg_surface)
                xdg_surface_destroy(p->xdg_surface);
        if (p->surface)
                wl_surface_destroy(p->surface);
        probe_wayland_globals_destroy(p);
}

static int create_window(Probe *p, const WaylandProbeOptions *o, char *message, size_t size) {
        struct wl_output *fullscreen = NULL;
        int64_t deadline_ns;
        int r;

        if (o->output) {
                char names[256] = "";
                size_t len = 0;

                for (size_t i = 0; i < p->n_outputs && !fullscreen; i++)
                        if (strcmp(p->run->outputs[i].name, o->output) == 0)
                                fullscreen = p->outputs[i].output;
                for (size_t i = 0; i < p->n_outputs && len < sizeof(names); i++) {
                        int n = snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
                                         p->run->outputs[i].name);

                        len = n < 0 ? sizeof(names) : len + (size_t) n;
                }
                if (!fullscreen)
                        return probe_wayland_fail(message, size, -ENOENT, "the Wayland compositor '%s' has no output "
                                                  "'%s' (it has: %s)", p->run->display, o->output,
                                                  p->n_outputs ? names : "none");
                snprintf(p->run->fullscreen_output, sizeof(p->run->fullscreen_output), "%s", o->output);
        }
        p->surface = wl_compositor_create_surface(p->compositor);
        p->run->surface = wl_proxy_get_id((struct wl_proxy *) p->surface);
        p->xdg_surface = xdg_wm_base_get_xdg_surface(p->wm_base, p->surface);
        xdg_surface_add_listener(p->xdg_surface, &xdg_surface_listener, p);
        p->toplevel = xdg_surface_get_toplevel(p->xdg_surface);
        xdg_toplevel_add_listener(p->toplevel, &toplevel_listener, p);
        xdg_toplevel_set_title(p->toplevel, "timeconv frames --probe");
        xdg_toplevel_set_app_id(p->toplevel, "org.timeconv.probe");
        if (fullscreen)
                xdg_toplevel_set_fullscreen(p->toplevel, fullscreen);
        wl_surface_commit(p->surface);
        deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + o->wait_ns;
        while (!p->configured) {
                if (clock_now_ns(CLOCK_MONOTONIC) >= deadline_ns)
                        return probe_wayland_fail(message, size, -ETIMEDOUT, "the Wayland compositor '%s' did not "
                                                  "configure the probe's window", p->run->display);
                r = dispatch_until(p, deadline_ns);
                if (r < 0)
                        return probe_wayland_fail(message, size, r, "the Wayland compositor '%s' closed the connection",
                                    p->run->display);
        }
        r = buffers_new(p);
        if (r < 0)
                return probe_wayland_fail(message, size, r, "shared memory for the frames: %s", strerror(-r));
        return 0;
}

/* Ends the frames early: what was measured stays (run->stopped says why). */
static void stop(Probe *p, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void stop(Probe *p, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(p->run->stop_message, sizeof(p->run->stop_message), fmt, ap);
        va_end(ap);
        p->run->stopped = r;
}

/* Since when the compositor has been silent on frames that wait for it (a frame callback or a
 * feedback); INT64_MAX when none waits. From the later of its last answer and the commit of the
 * first frame still waiting: a frame does not wait before it is committed. */
static int64_t silent_since_ns(Probe *p) {
        WaylandProbeRun *run = p->run;
        int64_t since_ns;

        while (p->oldest_pending < run->n_frames && run->frames[p->oldest_pending].state != WAYLAND_FRAME_PENDING)
                p->oldest_pending++;
        if (p->oldest_pending < run->n_frames)
                since_ns = run->frames[p->oldest_pending].commit_ns;
        else if (p->frame_callback && run->n_frames > 0)
                since_ns = run->frames[run->n_frames - 1].commit_ns;
        else
                return INT64_MAX;
        return since_ns > p->last_answer_ns ? since_ns : p->last_answer_ns;
}

static void stop_silent(Probe *p, const WaylandProbeOptions *o, int64_t silence_ns) {
        if (p->n_answered == 0 && !p->last_answer_ns)
                stop(p, -ETIME, "the Wayland compositor '%s' answered none of the probe's first %zu frames (no frame "
                     "callback, no presentation feedback in %.1f s)", p->run->display, p->run->n_frames,
                     (double) silence_ns / 1e9);
        else
                stop(p, -ETIME, "the Wayland compositor '%s' stopped answering the probe's frames (no frame callback, "
                     "no presentation feedback for %.1f s) since frame %zu of %u", p->run->display,
                     (double) silence_ns / 1e9, p->oldest_pending + 1, o->n_frames);
}

static void stop_gone(Probe *p, const WaylandProbeOptions *o, int r) {
        stop(p, r == -ENOMEM ? -ENOMEM : -ECONNRESET, "the Wayland compositor '%s' closed the connection (%s) after "
             "%zu of %u frames", p->run->display, strerror(-r), p->run->n_frames, o->n_frames);
}

/* Commits the frames at their pace. A frame callback or a buffer that does not come within
 * the wait does not stop the run: the frame is committed late, and its times say so. A
 * compositor that goes away, goes silent for the silence limit (the wait, or 8 frame periods
 * under a rate when longer) or closes the window ends the frames there, keeping them. */
static void frames(Probe *p, const WaylandProbeOptions *o) {
        bool by_callback = !(o->rate_hz > 0);
        int64_t silence_ns = o->wait_ns;
        int64_t t0_ns = clock_now_ns(CLOCK_MONOTONIC), cpu0_ns = clock_now_ns(CLOCK_PROCESS_CPUTIME_ID);
        int r;

        if (!by_callback && 8e9 / o->rate_hz > (double) silence_ns)
                silence_ns = (int64_t) (8e9 / o->rate_hz);
        for (size_t k = 0; k < o->n_frames && !p->closed && !p->run->stopped; k++) {
                int64_t due_ns = by_callback ? clock_now_ns(CLOCK_MONOTONIC) + o->wait_ns :
                        t0_ns + (int64_t) ((double) k * 1e9 / o->rate_hz);
                int64_t give_up_ns = by_callback ? due_ns : due_ns + o->wait_ns;

                for (;;) {
                        int64_t now_ns = clock_now_ns(CLOCK_MONOTONIC);
                        bool ready = free_buffer(p) && (by_callback ? !p->frame_callback : now_ns >= due_ns);
                        int64_t since_ns = silent_since_ns(p), deadline_ns;

                        if (since_ns != INT64_MAX && now_ns - since_ns >= silence_ns) {
                                stop_silent(p, o, silence_ns);
                                break;
                        }
                        if (ready || now_ns >= give_up_ns)
                                break;
                        deadline_ns = by_callback || now_ns >= due_ns ? give_up_ns : due_ns;
                        if (since_ns != INT64_MAX && since_ns + silence_ns < deadline_ns)
                                deadline_ns = since_ns + silence_ns;
                        r = dispatch_until(p, deadline_ns);
                        if (r < 0) {
                                stop_gone(p, o, r);
                                break;
                        }
                }
                if (p->run->stopped)
                        break;
                if (p->frame_callback) {
                        /* Not called back in time: a new callback for the next frame. */
                        wl_callback_destroy(p->frame_callback);
                        p->frame_callback = NULL;
                }
                r = commit_frame(p, k, by_callback);
                if (r == -EBUSY)
                        /* Every buffer still held: the compositor does not release them. */
                        stop(p, -ETIME, "the Wayland compositor '%s' held every buffer for %.1f s after %zu of %u "
                             "frames", p->run->display, (double) o->wait_ns / 1e9, p->run->n_frames, o->n_frames);
                else if (r < 0)
                        stop_gone(p, o, r);
        }
        p->run->cpu_ns = clock_now_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0_ns;
        p->run->wall_ns = clock_now_ns(CLOCK_MONOTONIC) - t0_ns;
        if (p->run->stopped)
                return;
        if (p->closed && p->run->n_frames < o->n_frames) {
                stop(p, -ESHUTDOWN, "the Wayland compositor '%s' closed the probe's window after %zu of %u frames",
                     p->run->display, p->run->n_frames, o->n_frames);
                return;
        }
        /* The last frames' feedback; what does not come in the wait stays pending. */
        {
                int64_t deadline_ns = clock_now_ns(CLOCK_MONOTONIC) + o->wait_ns;

                while (p->n_outstanding > 0 && clock_now_ns(CLOCK_MONOTONIC) < deadline_ns) {
                        r = dispatch_until(p, deadline_ns);
                        if (r < 0) {
                                stop(p, r == -ENOMEM ? -ENOMEM : -ECONNRESET, "the Wayland compositor '%s' closed the "
                                     "connection (%s) while %zu frames waited for their feedback", p->run->display,
                                     strerror(-r), p->n_outstanding);
                                return;
                        }
                }
        }
}

int probe_wayland_run(const WaylandProbeOptions *o, WaylandProbeRun *ret, char *message, size_t size) {
        WaylandProbeRun run = {};
        Probe p = { .run = &run, .o = o };
        int r;

        run.frames = calloc(o->n_frames, sizeof(WaylandFrame));
        p.feedbacks = calloc(o->n_frames, sizeof(Feedback));
        if (!run.frames || !p.feedbacks) {
                free(run.frames);
                free(p.feedbacks);
                return probe_wayland_fail(message, size, -ENOMEM, "out of memory");
        }
        r = probe_wayland_setup(&p, message, size);
        if (r >= 0)
                r = create_window(&p, o, message, size);
        if (r >= 0)
                frames(&p, o);
        probe_destroy(&p);
        if (r < 0) {
                free(run.frames);
                return r;
        }
        *ret = run;
        return 0;
}

void probe_wayland_run_done(WaylandProbeRun *run) {
        free(run->frames);
        run->frames = NULL;
        run->n_frames = 0;
}
