/* SPDX-License-Identifier: MIT */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bus-errors.h"
#include "fuzz-bus-args.h"

static const char *const wrong_signatures[] = {
        "", "s", "ss", "sss", "ssx", "ssxx", "sx", "x", "xss", "ssat", "ssas", "ssax", "ssaxs",
        "a(sx)", "a(ss)", "a(sxx)", "a(xs)", "(sx)", "a{sx}", "as", "ax", "v", "a{sv}", "sv",
        "ssv", "a(sx)a(sx)", "y", "b", "d", "u", "t", "o", "g", "aax", "a(sa(sx))", "ssh", "ssth",
        "ssht", "sshx", "ssahx",
};

/* Names the stub knows and does not, at and past the length limit, the names of our
 * interface and properties (for Properties.Get), and raw text. */
static const char *const dictionary[] = {
        "monotonic_raw", "monotonic", "x11", "gpu0", "app_a", "",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "org.timeconv.Clock1", "Version", "ReferenceDomain",
};

#define N_DICTIONARY (sizeof(dictionary) / sizeof(dictionary[0]))
#define RAW_STRING_MAX 80

const char *fuzz_args_wrong_signature(FuzzInput *in) {
        return wrong_signatures[fuzz_u8(in) % (sizeof(wrong_signatures) / sizeof(wrong_signatures[0]))];
}

/* A string for 's': from the dictionary, or raw bytes made into ASCII without NUL (the bus
 * refuses invalid UTF-8 before any handler could see it). */
static int take_string(FuzzInput *in, FuzzArgs *args, const char **ret) {
        unsigned kind = fuzz_u8(in);
        const uint8_t *raw;
        char *s;
        size_t n;

        if (kind % (N_DICTIONARY + 3) < N_DICTIONARY) {
                *ret = dictionary[kind % (N_DICTIONARY + 3)];
                return 0;
        }
        n = fuzz_bytes(in, RAW_STRING_MAX, &raw);
        if (args->pool_used + n + 1 > sizeof(args->pool))
                return -E2BIG;
        s = args->pool + args->pool_used;
        for (size_t i = 0; i < n; i++)
                s[i] = raw[i] & 0x7f ? (char) (raw[i] & 0x7f) : '?';
        s[n] = 0;
        args->pool_used += n + 1;
        *ret = s;
        return 0;
}

/* Past one complete type. The signatures here are ours, so well-formed. */
static const char *skip_type(const char *s) {
        char close;
        int depth = 0;

        if (*s == 'a')
                return skip_type(s + 1);
        if (*s != '(' && *s != '{')
                return s + 1;
        close = *s == '(' ? ')' : '}';
        do {
                if (*s == '(' || *s == '{')
                        depth++;
                else if (*s == ')' || *s == '}')
                        depth--;
                s++;
        } while (depth > 0 || s[-1] != close);
        return s;
}

static int append_type(sd_bus_message *m, const char **sig, FuzzInput *in, FuzzArgs *args, unsigned depth);

/* Appends the complete types in [start, end) inside a container of type kind. */
static int append_container(sd_bus_message *m, char kind, const char *start, const char *end, unsigned count,
                            FuzzInput *in, FuzzArgs *args, unsigned depth) {
        char contents[64];
        size_t len = (size_t) (end - start);
        int r;

        if (len >= sizeof(contents))
                return -E2BIG;
        memcpy(contents, start, len);
        contents[len] = 0;

        r = sd_bus_message_open_container(m, kind, contents);
        for (unsigned i = 0; r >= 0 && i < count; i++) {
                const char *p = contents;

                while (r >= 0 && *p)
                        r = append_type(m, &p, in, args, depth + 1);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

void fuzz_args_init(FuzzArgs *args) {
        *args = (FuzzArgs) { .memfd = -1 };
}

void fuzz_args_done(FuzzArgs *args) {
        if (args->memfd >= 0)
                close(args->memfd);
        args->memfd = -1;
}

/* A memfd of up to FUZZ_ARGS_ARRAY_MAX values, its size and seals chosen by the input: mostly
 * as ConvertManyMemfd wants it, sometimes a value short, unsealed, or write-sealed. */
static int append_memfd(sd_bus_message *m, FuzzInput *in, FuzzArgs *args) {
        size_t n = fuzz_u8(in) % (FUZZ_ARGS_ARRAY_MAX + 1);
        uint8_t how = fuzz_u8(in);
        static const int seals[] = { F_SEAL_SHRINK | F_SEAL_GROW, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL, 0,
                                     F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE };
        uint64_t size = BUS_API_MEMFD_BYTES(n);
        int fd;

        if (args->memfd >= 0 || args->n_ints + n > FUZZ_ARGS_INTS_MAX)
                return -E2BIG;
        fd = memfd_create("fuzz-many", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        args->memfd = fd;
        for (size_t i = 0; i < n; i++) {
                int64_t v = (int64_t) fuzz_u64(in);

                args->ints[args->n_ints++] = v;
                if (pwrite(fd, &v, sizeof(v), (off_t) (i * sizeof(v))) != sizeof(v))
                        return -errno;
        }
        if ((how & 0x30) == 0x30)
                size = size > 0 ? size - 1 - fuzz_u8(in) % size : 0;
        else if ((how & 0x30) == 0x20)
                size += fuzz_u8(in);
        args->memfd_values = n;
        args->memfd_size = size;
        args->memfd_seals = (how & 0xc0) == 0xc0 ? seals[how % (sizeof(seals) / sizeof(seals[0]))] : seals[0];
        if (ftruncate(fd, (off_t) size) < 0 || (args->memfd_seals && fcntl(fd, F_ADD_SEALS, args->memfd_seals) < 0))
                return -errno;
        return sd_bus_message_append_basic(m, 'h', &fd);
}

/* A 't' after the memfd: its count of values, one off, or anything. */
static uint64_t take_count(FuzzInput *in, FuzzArgs *args) {
        uint8_t how = fuzz_u8(in);
        size_t n = args->memfd_values;
        uint64_t v = how & 0x80 ? fuzz_u64(in) : how % 3 == 0 ? n : how % 3 == 1 ? n + 1 : n > 0 ? n - 1 : 0;

        if (args->memfd >= 0 && !args->seen_count) {
                args->seen_count = true;
                args->count = v;
        }
        return v;
}

static int append_type(sd_bus_message *m, const char **sig, FuzzInput *in, FuzzArgs *args, unsigned depth) {
        static const char *const variants[] = { "s", "x", "ax", "(sx)", "as", "u" };
        static const char *const paths[] = { "/", "/org/timeconv/Clock1", "/a/b" };
        static const char *const signatures[] = { "", "s", "a(sx)" };
        const char *s = *sig, *end = skip_type(s);
        const char *str;
        unsigned count;
        int64_t x;
        int r;

        *sig = end;
        if (depth > 8)
                return -E2BIG;
        switch (*s) {
        case 'y': { uint8_t v = fuzz_u8(in); return sd_bus_message_append_basic(m, 'y', &v); }
        case 'b': { int v = fuzz_u8(in) & 1; return sd_bus_message_append_basic(m, 'b', &v); }
        case 'n': case 'q': { uint16_t v = (uint16_t) fuzz_u64(in); return sd_bus_message_append_basic(m, *s, &v); }
        case 'i': case 'u': { uint32_t v = (uint32_t) fuzz_u64(in); return sd_bus_message_append_basic(m, *s, &v); }
        case 't': { uint64_t v = args->memfd >= 0 ? take_count(in, args) : fuzz_u64(in);
                    return sd_bus_message_append_basic(m, 't', &v); }
        case 'h':
                return append_memfd(m, in, args);
        case 'd': { uint64_t bits = fuzz_u64(in); double v; memcpy(&v, &bits, sizeof(v));
                    return sd_bus_message_append_basic(m, 'd', &v); }
        case 'x':
                x = (int64_t) fuzz_u64(in);
                if (args->n_ints == FUZZ_ARGS_INTS_MAX)
                        return -E2BIG;
                args->ints[args->n_ints++] = x;
                return sd_bus_message_append_basic(m, 'x', &x);
        case 's':
                r = take_string(in, args, &str);
                if (r < 0)
                        return r;
                if (args->n_strings == FUZZ_ARGS_STRINGS_MAX)
                        return -E2BIG;
                args->strings[args->n_strings++] = str;
                return sd_bus_message_append_basic(m, 's', str);
        case 'o':
                return sd_bus_message_append_basic(m, 'o', paths[fuzz_u8(in) % 3]);
        case 'g':
                return sd_bus_message_append_basic(m, 'g', signatures[fuzz_u8(in) % 3]);
        case 'a':
                count = fuzz_u8(in) % (FUZZ_ARGS_ARRAY_MAX + 1);
                if (depth == 0 && !args->seen_array) {
                        args->seen_array = true;
                        args->n_elements = count;
                }
                return append_container(m, 'a', s + 1, end, count, in, args, depth);
        case '(':
                return append_container(m, 'r', s + 1, end - 1, 1, in, args, depth);
        case '{':
                return append_container(m, 'e', s + 1, end - 1, 1, in, args, depth);
        case 'v':
                str = variants[fuzz_u8(in) % (sizeof(variants) / sizeof(variants[0]))];
                return append_container(m, 'v', str, str + strlen(str), 1, in, args, depth);
        default:
                return -EINVAL;
        }
}

int fuzz_args_append(sd_bus_message *m, const char *signature, FuzzInput *in, FuzzArgs *args) {
        const char *p = signature;
        int r = 0;

        while (r >= 0 && *p)
                r = append_type(m, &p, in, args, 0);
        return r;
}
