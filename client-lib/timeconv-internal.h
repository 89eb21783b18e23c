/* SPDX-License-Identifier: MIT */
#pragma once

/* What the library's files share and callers never see. */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "snapshot-graph.h"
#include "timeconv.h"

/* The library is built with -fvisibility=hidden; only what carries this is exported (and the
 * version script, libtimeconv.sym, limits that to timeconv_* as a second guard). */
#define TIMECONV_EXPORT __attribute__((visibility("default")))

#define SNAPSHOT_FILE_MAX_NAME 63
#define SNAPSHOT_FILE_MAX_DOMAINS 256
#define SNAPSHOT_FILE_MAX_SNAPSHOTS 1000000
#define SNAPSHOT_FILE_MAX_BYTES (1024u * 1024u * 1024u)
#define SNAPSHOT_FILE_MAX_RATE_PPB 100000000     /* 10 %: the snapshot graph's own limit */

struct timeconv_snapshots {
        SnapshotGraph *graph;
};

/* Fills *e (if not NULL) with a position and what + detail as its message. */
void snapshot_file_set_error(struct timeconv_error *e, unsigned line, unsigned column,
                             const char *what, const char *detail);

/* One step of a path into a JSON document: an object member (key) or an array element. */
typedef struct JsonStep {
        const char *key;        /* NULL: an array element, index */
        size_t index;
} JsonStep;

/* The 1-based line and column (in characters) where the element at path starts in a document
 * that parsed; where the path cannot be followed, the position of the last element reached. */
void json_locate(const char *text, size_t size, const JsonStep *path, size_t n_steps,
                 unsigned *ret_line, unsigned *ret_column);

/* Whether data is a Perfetto trace rather than a JSON snapshot file (told apart by content). */
bool perfetto_trace_detect(const char *data, size_t size);

/* A Perfetto trace's clock snapshots as a snapshot set (perfetto-load.c); errors name the byte. */
int perfetto_snapshots_load(const char *data, size_t size, struct timeconv_snapshots **ret,
                            struct timeconv_error *ret_error);
