/* SPDX-License-Identifier: MIT */

/* The compressed blocks of a Perfetto trace: zlib (compressed_packets) and zstd
 * (zstd_compressed_packets), inflated into the reader's one buffer, never past
 * PF_INFLATE_MAX_BYTES, and scanned in place of the packet that held them. */

#include <errno.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "perfetto-read-internal.h"

/* A zstd window larger than the largest block we inflate buys nothing but memory. */
#define ZSTD_WINDOW_LOG_MAX 26

/* Makes room for at least one more byte in r->inflated, up to the bound. */
static int grow_inflated(PfReader *r, const uint8_t *at) {
        size_t allocated;
        uint8_t *p;

        if (r->inflated_allocated >= PF_INFLATE_MAX_BYTES)
                return pf_fail_at(r, at, "compressed block inflates past %u MiB", PF_INFLATE_MAX_BYTES >> 20);
        allocated = r->inflated_allocated ? 2 * r->inflated_allocated : 256 * 1024;
        if (allocated > PF_INFLATE_MAX_BYTES)
                allocated = PF_INFLATE_MAX_BYTES;
        p = realloc(r->inflated, allocated);
        if (!p)
                return -ENOMEM;
        r->inflated = p;
        r->inflated_allocated = allocated;
        return 0;
}

static int inflate_zlib(PfReader *r, const Field *f, size_t *ret_size) {
        z_stream zs = { 0 };
        int z, k = 0;

        if (f->size > UINT32_MAX)
                return pf_fail_at(r, f->start, "compressed block of %zu bytes", f->size);
        if (inflateInit(&zs) != Z_OK)
                return -ENOMEM;
        zs.next_in = (Bytef *) f->data;
        zs.avail_in = (uInt) f->size;
        for (;;) {
                if (zs.total_out == r->inflated_allocated) {
                        k = grow_inflated(r, f->start);
                        if (k < 0)
                                break;
                }
                zs.next_out = r->inflated + zs.total_out;
                zs.avail_out = (uInt) (r->inflated_allocated - zs.total_out);
                z = inflate(&zs, Z_NO_FLUSH);
                if (z == Z_STREAM_END)
                        break;
                if (z == Z_MEM_ERROR) {
                        k = -ENOMEM;
                        break;
                }
                if (z != Z_OK && z != Z_BUF_ERROR) {
                        k = pf_fail_at(r, f->start, "compressed block: %s", zs.msg ? zs.msg : "not a zlib stream");
                        break;
                }
                if (zs.avail_out > 0 && zs.avail_in == 0) {
                        k = pf_fail_at(r, f->start, "compressed block ends inside its stream");
                        break;
                }
        }
        if (k >= 0)
                *ret_size = zs.total_out;
        inflateEnd(&zs);
        return k;
}

static int inflate_zstd(PfReader *r, const Field *f, size_t *ret_size) {
        ZSTD_inBuffer in = { .src = f->data, .size = f->size };
        ZSTD_outBuffer out = { 0 };
        unsigned long long content;
        size_t z;
        int k;

        if (!r->zstd) {
                r->zstd = ZSTD_createDCtx();
                if (!r->zstd)
                        return -ENOMEM;
                ZSTD_DCtx_setParameter(r->zstd, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX);
        }
        /* A frame that says its size (Perfetto's do) inflates in one call, faster than a stream;
         * what does not fit (more frames after it) goes the streaming way, bounded as well. */
        content = ZSTD_getFrameContentSize(f->data, f->size);
        if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != ZSTD_CONTENTSIZE_ERROR &&
            content <= PF_INFLATE_MAX_BYTES) {
                while (r->inflated_allocated < content) {
                        k = grow_inflated(r, f->start);
                        if (k < 0)
                                return k;
                }
                z = ZSTD_decompressDCtx(r->zstd, r->inflated, r->inflated_allocated, f->data, f->size);
                if (!ZSTD_isError(z)) {
                        *ret_size = z;
                        return 0;
                }
                if (ZSTD_getErrorCode(z) != ZSTD_error_dstSize_tooSmall)
                        return pf_fail_at(r, f->start, "zstd block: %s", ZSTD_getErrorName(z));
        }
        ZSTD_DCtx_reset(r->zstd, ZSTD_reset_session_only);
        for (;;) {
                if (out.pos == r->inflated_allocated) {
                        k = grow_inflated(r, f->start);
                        if (k < 0)
                                return k;
                }
                out.dst = r->inflated;
                out.size = r->inflated_allocated;
                z = ZSTD_decompressStream(r->zstd, &out, &in);
                if (ZSTD_isError(z))
                        return pf_fail_at(r, f->start, "zstd block: %s", ZSTD_getErrorName(z));
                if (in.pos == in.size && (z == 0 || out.pos < out.size)) {
                        if (z != 0)
                                return pf_fail_at(r, f->start, "zstd block ends inside its frame");
                        break;
                }
        }
        *ret_size = out.pos;
        return 0;
}

int pf_compressed(PfReader *r, const Field *f) {
        const uint8_t *base = r->base;
        size_t size = 0;
        int k;

        if (r->block_offset != PF_NO_BLOCK)
                return pf_fail_at(r, f->start, "a compressed block inside a compressed block");
        k = f->number == PF_PACKET_COMPRESSED ? inflate_zlib(r, f, &size) : inflate_zstd(r, f, &size);
        if (k < 0)
                return k;
        r->block_offset = (uint64_t) (f->start - base);
        r->base = r->inflated;
        k = pf_scan_buffer(r, r->inflated, r->inflated + size);
        r->base = base;
        r->block_offset = PF_NO_BLOCK;
        return k;
}
