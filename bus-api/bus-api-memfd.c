/* SPDX-License-Identifier: MIT */

/* ConvertManyMemfd: a large batch in a memfd of the caller's, answered into the same memfd, so
 * that its bytes never pass through the bus daemon (where they would delay every other client's
 * answer). The fd travels toward the daemon only, never in a reply: an unread reply holds
 * nothing. The memfd is checked before it is mapped, so that whatever the caller does to it
 * afterwards cannot make the daemon fault: sealed against shrinking and growing, on shmem (not
 * hugetlbfs, whose pages can be missing at fault time), large enough. Its contents may change
 * under the daemon's feet: each value is read once, and a changed value only gives its caller
 * a wrong answer. */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "bus-api-internal.h"
#include "bus-api-jobs.h"

#define SEALS_WANTED (F_SEAL_SHRINK | F_SEAL_GROW)

/* Whether fd may be mapped for count values: 0, or InvalidArgument saying why not. */
static int memfd_check(int fd, uint64_t count, size_t *ret_size, sd_bus_error *error) {
        struct statfs sfs;
        struct stat st;
        int seals;

        seals = fcntl(fd, F_GET_SEALS);
        if (seals < 0)
                return bus_timeconv_error_setf(error, -EINVAL, "argument 'memfd': not a memfd that takes seals "
                                               "(%s): make it with memfd_create(MFD_ALLOW_SEALING)",
                                               strerror(errno));
        if ((seals & SEALS_WANTED) != SEALS_WANTED)
                return bus_timeconv_error_setf(error, -EINVAL, "argument 'memfd': not sealed against shrinking "
                                               "and growing (F_SEAL_SHRINK | F_SEAL_GROW)");
        if (fstatfs(fd, &sfs) < 0 || sfs.f_type != TMPFS_MAGIC)
                return bus_timeconv_error_setf(error, -EINVAL, "argument 'memfd': not on shmem (a hugetlb memfd "
                                               "is not taken)");
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                return bus_timeconv_error_setf(error, -EINVAL, "argument 'memfd': not a regular file");
        if ((uint64_t) st.st_size < BUS_API_MEMFD_BYTES(count))
                return bus_timeconv_error_setf(error, -EINVAL, "argument 'memfd': %lld bytes, %llu values and "
                                               "their answers need %llu", (long long) st.st_size,
                                               (unsigned long long) count,
                                               (unsigned long long) BUS_API_MEMFD_BYTES(count));
        *ret_size = (size_t) BUS_API_MEMFD_BYTES(count);
        return 0;
}

/* Why mmap() failed: the caller's fault (a read-only fd, a write seal), or the daemon's limits
 * (memory, address space, vm.max_map_count, locked memory), which another try may pass. */
static int memfd_map_error(BusApi *a, int errnum, sd_bus_error *error) {
        switch (errnum) {
        case ENFILE:
        case EMFILE:
                bus_api_out_of_fds(a, errnum);
                __attribute__((fallthrough));
        case ENOMEM:
        case EAGAIN:
                return bus_timeconv_error_setf(error, -EDQUOT, "the daemon cannot map another memfd now (%s): "
                                               "try again later, or use ConvertMany", strerror(errnum));
        default:
                break;
        }
        return bus_timeconv_error_setf(error, -EINVAL, "argument 'memfd': cannot map it for writing (%s): "
                                       "open for reading and writing, no write seal", strerror(errnum));
}

int bus_api_method_convert_many_memfd(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusApi *a = userdata;
        const char *from, *to;
        BusClient *cl;
        uint64_t count;
        size_t size = 0;
        BusPair p = {};
        void *map;
        int fd, r;

        bus_api_touch(a);

        r = bus_api_read_pair_names(m, &from, &to, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(m, "ht", &fd, &count);
        if (r < 0)
                return r;
        if (count > BUS_API_CONVERT_MANY_MEMFD_MAX)
                return bus_timeconv_error_setf(error, -EINVAL, "argument 'count': %llu values, at most %d a call",
                                               (unsigned long long) count, BUS_API_CONVERT_MANY_MEMFD_MAX);
        r = memfd_check(fd, count, &size, error);
        if (r < 0)
                return r;
        /* As ConvertMany: an empty batch asks the core nothing. */
        if (count == 0)
                return sd_bus_reply_method_return(m, NULL);
        r = bus_api_batch_open(a, m, from, to, &p, &cl, error);
        if (r < 0)
                return r;

        map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
                return memfd_map_error(a, errno, error);
        /* Answered from the event loop, a slice at a time (bus-api-jobs.h); the job unmaps it. */
        return bus_api_jobs_submit_memfd(a, m, cl, &p, map, size, (size_t) count, error);
}
