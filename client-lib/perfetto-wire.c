/* SPDX-License-Identifier: MIT */

/* The wire format of the Perfetto reader: fields, and errors that name the byte they are at. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "perfetto-read-internal.h"

static int vfail(PfReader *r, uint64_t offset, bool in_block, const char *fmt, va_list ap) {
        int n;

        if (in_block && r->block_offset != PF_NO_BLOCK)
                n = snprintf(r->message, sizeof(r->message), "byte %llu of the block compressed at byte %llu: ",
                             (unsigned long long) offset, (unsigned long long) r->block_offset);
        else
                n = snprintf(r->message, sizeof(r->message), "byte %llu: ", (unsigned long long) offset);
        if (n >= 0 && (size_t) n < sizeof(r->message))
                vsnprintf(r->message + n, sizeof(r->message) - (size_t) n, fmt, ap);
        return -EBADMSG;
}

int pf_reader_fail(PfReader *r, uint64_t offset, const char *fmt, ...) {
        va_list ap;
        int ret;

        va_start(ap, fmt);
        ret = vfail(r, offset, false, fmt, ap);
        va_end(ap);
        return ret;
}

/* Fails at p, a position in the buffer being read (the file or an inflated block). */
int pf_fail_at(PfReader *r, const uint8_t *p, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int pf_fail_at(PfReader *r, const uint8_t *p, const char *fmt, ...) {
        va_list ap;
        int ret;

        va_start(ap, fmt);
        ret = vfail(r, (uint64_t) (p - r->base), true, fmt, ap);
        va_end(ap);
        return ret;
}

/* The file offset that a packet event carries: its own, or its block's. */
uint64_t pf_file_offset(const PfReader *r, const uint8_t *p) {
        return r->block_offset != PF_NO_BLOCK ? r->block_offset : (uint64_t) (p - r->base);
}


/* Reads the field at *pp: 1 when one was read, 0 at the end, or an error. */
int pf_next_field(PfReader *r, const uint8_t **pp, const uint8_t *end, Field *f) {
        const uint8_t *p = *pp;
        uint64_t key, len;
        int k;

        if (p >= end)
                return 0;
        f->start = p;
        k = pf_read_varint(&p, end, &key);
        if (k < 0)
                return pf_fail_at(r, f->start, "%s field key", k == -EPIPE ? "truncated" : "over-long");
        if (key >> 3 == 0 || key >> 3 > 0x1fffffff)
                return pf_fail_at(r, f->start, "field number %llu", (unsigned long long) (key >> 3));
        f->number = (uint32_t) (key >> 3);
        f->wire = (unsigned) (key & 7);
        switch (f->wire) {
        case PF_WIRE_VARINT:
                k = pf_read_varint(&p, end, &f->value);
                if (k < 0)
                        return pf_fail_at(r, f->start, "field %u: %s varint", f->number,
                                       k == -EPIPE ? "truncated" : "over-long");
                break;
        case PF_WIRE_FIXED64:
        case PF_WIRE_FIXED32: {
                size_t n = f->wire == PF_WIRE_FIXED64 ? 8 : 4;

                if ((size_t) (end - p) < n)
                        return pf_fail_at(r, f->start, "field %u: truncated fixed%zu", f->number, n * 8);
                f->value = 0;
                for (size_t i = n; i > 0; i--)
                        f->value = f->value << 8 | p[i - 1];
                p += n;
                break;
        }
        case PF_WIRE_LEN:
                k = pf_read_varint(&p, end, &len);
                if (k < 0)
                        return pf_fail_at(r, f->start, "field %u: %s length", f->number,
                                       k == -EPIPE ? "truncated" : "over-long");
                if (len > (uint64_t) (end - p))
                        return pf_fail_at(r, f->start, "field %u: length %llu past the end (%zu bytes left)",
                                       f->number, (unsigned long long) len, (size_t) (end - p));
                f->data = p;
                f->size = (size_t) len;
                p += len;
                break;
        default:
                return pf_fail_at(r, f->start, "field %u: wire type %u (groups and unknown types are not read)",
                               f->number, f->wire);
        }
        *pp = p;
        return 1;
}

int pf_expect_wire(PfReader *r, const Field *f, unsigned wire) {
        static const char *const names[] = { "varint", "fixed64", "length-delimited", "group", "group end",
                                             "fixed32" };

        if (f->wire == wire)
                return 0;
        return pf_fail_at(r, f->start, "field %u: wire type %s, expected %s", f->number, names[f->wire],
                       names[wire]);
}
