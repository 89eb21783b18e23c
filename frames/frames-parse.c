/* SPDX-License-Identifier: MIT */

/* The frame parsers' front: tells the format from the first line with text, and reads
 * `dumpsys SurfaceFlinger --latency` itself. Such a dump is the refresh period on a line of its
 * own, then rows "desiredPresentTime actualPresentTime frameReadyTime" oldest first; several
 * dumps may follow one another, each starting with its refresh period. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frames-internal.h"

#define SF_MAX_FIELDS 4

static bool is_blank(char c) {
        return c == ' ' || c == '\t' || c == '\r';
}

/* Splits s on blanks into integers; how many there were, up to max + 1, or -EINVAL/-ERANGE.
 * Plain numbers of up to 18 digits, nearly all of a dump, are read in the same pass. */
static int parse_fields(const char *s, size_t n, int64_t *values, size_t max) {
        size_t count = 0, i = 0;

        while (i < n) {
                size_t start;
                uint64_t u = 0;
                unsigned d;
                int r;

                while (i < n && is_blank(s[i]))
                        i++;
                if (i == n)
                        break;
                if (count == max)
                        return (int) max + 1;
                start = i;
                while (i < n && i - start < 18 && (d = (unsigned) (unsigned char) s[i] - '0') <= 9) {
                        u = u * 10 + d;
                        i++;
                }
                if (i > start && (i == n || is_blank(s[i]))) {
                        values[count++] = (int64_t) u;
                        continue;
                }
                while (i < n && !is_blank(s[i]))
                        i++;
                r = parse_int64(s + start, i - start, &values[count]);
                if (r < 0)
                        return r;
                count++;
        }
        return (int) count;
}

static int sf_line(FramesParser *p, const char *line, size_t size, FramesError *ret_error) {
        int64_t v[SF_MAX_FIELDS];
        int n = parse_fields(line, size, v, SF_MAX_FIELDS - 1);
        Frame f;

        if (n == -ERANGE)
                return frames_fail(ret_error, p->line, "number out of range");
        if (n == 1) {
                if (v[0] < 0)
                        return frames_fail(ret_error, p->line, "negative refresh period");
                p->refresh_ns = v[0];
                p->log->dumps++;
                return 0;
        }
        if (n != 3)
                return frames_fail(ret_error, p->line, "expected a refresh period or three "
                                   "integers (desired, actual, ready present time)");
        f = (Frame) {
                .present_ns = v[1],
                .desired_ns = frames_time_valid(v[0]) ? v[0] : FRAMES_NO_TIME,
                .ready_ns = frames_time_valid(v[2]) ? v[2] : FRAMES_NO_TIME,
                .refresh_ns = p->refresh_ns,
        };
        return frames_log_add(p->log, &f) < 0 ? -ENOMEM : 0;
}

static FramesFormat detect(const char *line, size_t size) {
        int64_t v[2];

        if (line[0] == '{')
                return FRAMES_FORMAT_JSONL;
        if (parse_fields(line, size, v, 1) == 1)
                return FRAMES_FORMAT_SURFACEFLINGER;
        return FRAMES_FORMAT_GFXINFO;
}

int frames_parser_new(FramesLog *log, FramesParser **ret) {
        FramesParser *p = calloc(1, sizeof(*p));

        if (!p)
                return -ENOMEM;
        p->log = log;
        *ret = p;
        return 0;
}

FramesParser *frames_parser_free(FramesParser *p) {
        if (p)
                frames_gfxinfo_free(p);
        free(p);
        return NULL;
}

int frames_parser_line(FramesParser *p, const char *line, size_t size, FramesError *ret_error) {
        p->line++;
        if (p->format == FRAMES_FORMAT_GFXINFO)
                /* Its text around the sections is free, blank lines included. */
                return frames_gfxinfo_line(p, line, size, ret_error);
        parse_trim(&line, &size);
        if (size == 0)
                return 0;
        if (p->format == FRAMES_FORMAT_UNKNOWN) {
                p->format = detect(line, size);
                p->first_text_line = p->line;
                /* A frame log is one dump; the others count theirs as they go. */
                p->log->dumps += p->format == FRAMES_FORMAT_JSONL;
        }
        switch (p->format) {
        case FRAMES_FORMAT_SURFACEFLINGER:
                return sf_line(p, line, size, ret_error);
        case FRAMES_FORMAT_JSONL:
                return frames_jsonl_line(p, line, size, ret_error);
        default:
                return frames_gfxinfo_line(p, line, size, ret_error);
        }
}

int frames_parser_finish(FramesParser *p, FramesError *ret_error) {
        if (p->format == FRAMES_FORMAT_GFXINFO)
                return frames_gfxinfo_finish(p, ret_error);
        return 0;
}

FramesFormat frames_parser_format(const FramesParser *p) {
        return p->format;
}

unsigned frames_parser_lines(const FramesParser *p) {
        return p->line;
}

const char *frames_format_name(FramesFormat format) {
        switch (format) {
        case FRAMES_FORMAT_SURFACEFLINGER:
                return "SurfaceFlinger --latency";
        case FRAMES_FORMAT_GFXINFO:
                return "gfxinfo framestats";
        case FRAMES_FORMAT_JSONL:
                return "frame log";
        default:
                return "empty";
        }
}

int frames_parse_text(FramesLog *log, const char *text, size_t size, FramesError *ret_error) {
        FramesParser *p;
        int r;

        /* Line by line on this thread (frames_parser_text() reads in blocks, on two). */
        r = frames_parser_new(log, &p);
        if (r < 0)
                return r;
        while (size > 0 && r >= 0) {
                const char *nl = memchr(text, '\n', size);
                size_t n = nl ? (size_t) (nl - text) : size;

                r = frames_parser_line(p, text, n, ret_error);
                text += n + !!nl;
                size -= n + !!nl;
        }
        if (r >= 0)
                r = frames_parser_finish(p, ret_error);
        frames_parser_free(p);
        return r;
}
