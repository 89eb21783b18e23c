/* SPDX-License-Identifier: MIT */

/* Built with -std=c89 -pedantic-errors: the public headers must compile there, and a C89
 * program must be able to load and convert, and pack a frame-sync message. Plain printf TAP: tap.h is not C89. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <timeconv-framesync.h>
#include <timeconv.h>

static const char snapshots_json[] =
        "{\"snapshots\":[{\"clocks\":[{\"domain\":\"monotonic\",\"ts\":1000},"
        "{\"domain\":\"boottime\",\"ts\":2000}]}]}";

int main(void) {
        struct timeconv_snapshots *s = NULL;
        struct timeconv_error error;
        int64_t value = 0, uncertainty_ns = -1;
        int r, failed = 0;

        r = timeconv_snapshots_load_buffer(snapshots_json, strlen(snapshots_json), &s, &error);
        failed += r != 0;
        printf("%sok 1 - a C89 program loads snapshots (%d)\n", r == 0 ? "" : "not ", r);

        r = timeconv_snapshots_convert(s, TIMECONV_MODE_NEAREST, "monotonic", "boottime", 1104,
                                       &value, &uncertainty_ns);
        failed += r != 0 || value != 2104 || uncertainty_ns != 1;
        printf("%sok 2 - and converts monotonic 1104 to boottime 2104\n",
               r == 0 && value == 2104 && uncertainty_ns == 1 ? "" : "not ");

        r = timeconv_snapshots_convert(s, TIMECONV_MODE_DRIFT, "monotonic", "tai", 1, &value, NULL);
        failed += r != -ENOENT;
        printf("%sok 3 - an unknown domain is -ENOENT\n", r == -ENOENT ? "" : "not ");

        s = timeconv_snapshots_free(s);

        {
                struct timeconv *tc = NULL;
                struct timeconv_domain **domains = NULL;

                r = timeconv_open_address("unix:path=/nonexistent/timeconv-c89-bus", &tc);
                failed += r >= 0 || tc != NULL;
                printf("%sok 4 - a C89 program opens a live handle: a bus that is not there is an error (%d)\n",
                       r < 0 && !tc ? "" : "not ", r);
                r = timeconv_list_domains(tc, &domains);
                failed += r != -EINVAL || domains != NULL;
                printf("%sok 5 - and a NULL handle is -EINVAL\n", r == -EINVAL && !domains ? "" : "not ");
                {
                        struct timeconv_pair pair;

                        r = timeconv_pair_get(tc, "monotonic", "boottime", &pair);
                        failed += r != -EINVAL;
                        printf("%sok 6 - a pair of a NULL handle is -EINVAL\n", r == -EINVAL ? "" : "not ");
                        r = timeconv_pair_convert(NULL, 1, &value, NULL);
                        failed += r != -EINVAL;
                        printf("%sok 7 - converting through no pair is -EINVAL\n", r == -EINVAL ? "" : "not ");
                }
                failed += timeconv_free(tc) != NULL || timeconv_close(tc) != NULL;
                printf("%sok 8 - timeconv_free() and its deprecated name timeconv_close() take NULL\n",
                       timeconv_free(tc) == NULL && timeconv_close(tc) == NULL ? "" : "not ");
                domains = timeconv_domains_free(domains);
        }
        {
                struct timeconv_frame_drawn drawn, back;
                uint32_t data[5];

                drawn.counter = 8;
                drawn.drawn_x11_us = 123456789;
                r = timeconv_frame_drawn_pack(&drawn, data);
                if (r == 0)
                        r = timeconv_frame_drawn_unpack(data, &back);
                failed += r != 0 || back.counter != 8 || back.drawn_x11_us != 123456789;
                printf("%sok 9 - and packs and unpacks _NET_WM_FRAME_DRAWN through timeconv-framesync.h\n",
                       r == 0 && back.counter == 8 && back.drawn_x11_us == 123456789 ? "" : "not ");
        }
        printf("1..9\n");
        return failed ? 1 : 0;
}
