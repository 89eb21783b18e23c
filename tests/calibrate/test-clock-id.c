/* SPDX-License-Identifier: MIT */

#include <stdint.h>
#include <string.h>

#include "clock-id.h"
#include "tap.h"

/* FNV-1a 32-bit test vectors published with the reference implementation (isthe.com/chongo). */
static const struct {
        const char *input;
        uint32_t hash;
        const char *label;      /* for the TAP line: the input, escaped */
} fnv_vectors[] = {
        { "",       UINT32_C(0x811c9dc5), "" },
        { "a",      UINT32_C(0xe40c292c), "a" },
        { "b",      UINT32_C(0xe70c2de5), "b" },
        { "c",      UINT32_C(0xe60c2c52), "c" },
        { "d",      UINT32_C(0xe10c2473), "d" },
        { "e",      UINT32_C(0xe00c22e0), "e" },
        { "f",      UINT32_C(0xe30c2799), "f" },
        { "fo",     UINT32_C(0x6222e842), "fo" },
        { "foo",    UINT32_C(0xa9f37ed7), "foo" },
        { "foob",   UINT32_C(0x3f5076ef), "foob" },
        { "fooba",  UINT32_C(0x39aaa18a), "fooba" },
        { "foobar", UINT32_C(0xbf9cf968), "foobar" },
        /* A byte above 0x7f must be hashed as unsigned, not sign-extended. */
        { "\xff",   UINT32_C(0x7a0b824e), "\\xff" },
};

static const struct {
        const char *name;
        uint32_t id;
} builtin_ids[] = {
        { "realtime",         1 },
        { "realtime_coarse",  2 },
        { "monotonic",        3 },
        { "monotonic_coarse", 4 },
        { "monotonic_raw",    5 },
        { "boottime",         6 },
};

/* Names that are not Perfetto builtins, with FNV-1a("org.timeconv." + name) | 0x80000000 worked
 * out separately (Perfetto's recommended global id of a fully qualified name). */
static const struct {
        const char *name;
        uint32_t id;
} hashed_ids[] = {
        { "tai",       UINT32_C(0xf36e151e) },     /* FNV-1a 0xf36e151e, top bit already set */
        { "x11",       UINT32_C(0xef53e4ca) },     /* FNV-1a 0x6f53e4ca */
        { "x11_us",    UINT32_C(0x8c4fff47) },     /* FNV-1a 0x0c4fff47 */
        { "gpu0",      UINT32_C(0xad762dfe) },     /* FNV-1a 0x2d762dfe */
        { "Monotonic", UINT32_C(0xd0e429e0) },     /* case matters: not the builtin 3 */
};

static void test_fnv(void) {
        for (size_t i = 0; i < sizeof(fnv_vectors) / sizeof(fnv_vectors[0]); i++)
                ok(clock_id_fnv1a32(fnv_vectors[i].input) == fnv_vectors[i].hash,
                   "fnv1a32(\"%s\") = 0x%08" PRIx32 " (got 0x%08" PRIx32 ")",
                   fnv_vectors[i].label, fnv_vectors[i].hash, clock_id_fnv1a32(fnv_vectors[i].input));

        is_int(clock_id_fnv1a32(NULL), 0x811c9dc5, "fnv1a32(NULL) hashes like the empty string");
}

static void test_builtin(void) {
        for (size_t i = 0; i < sizeof(builtin_ids) / sizeof(builtin_ids[0]); i++) {
                const char *name;

                is_int(clock_id_for_name(builtin_ids[i].name), builtin_ids[i].id, builtin_ids[i].name);
                name = clock_id_builtin_name(builtin_ids[i].id);
                ok(name && strcmp(name, builtin_ids[i].name) == 0, "builtin name of id %" PRIu32 " is %s",
                   builtin_ids[i].id, builtin_ids[i].name);
        }

        ok(clock_id_builtin_name(0) == NULL, "id 0 has no builtin name");
        ok(clock_id_builtin_name(7) == NULL, "id 7 has no builtin name");
        ok(clock_id_builtin_name(UINT32_C(0x80000003)) == NULL, "a hashed-looking id has no builtin name");
        is_int(clock_id_for_name(NULL), 0, "NULL name gets id 0");
}

static void test_hashed(void) {
        for (size_t i = 0; i < sizeof(hashed_ids) / sizeof(hashed_ids[0]); i++) {
                const char *name = hashed_ids[i].name;
                uint32_t id = clock_id_for_name(name);

                ok(id == hashed_ids[i].id, "id of %s is 0x%08" PRIx32 " (got 0x%08" PRIx32 ")",
                   name, hashed_ids[i].id, id);
                ok(id != (clock_id_fnv1a32(name) | UINT32_C(0x80000000)),
                   "id of %s hashes the qualified name, not the bare one", name);
                ok(id & UINT32_C(0x80000000), "id of %s has the top bit set", name);
                ok(clock_id_builtin_name(id) == NULL, "id of %s is not a builtin", name);
        }
}

/* Ids timeconv gives are named back (a trace shows "x11_us", not 2354052935); others are not. */
static void test_known_names(void) {
        static const char *const names[] = { "realtime", "boottime", "tai", "x11", "x11_us", "msc", "gpu0", "gpu7",
                                             "gpu15", "x11.ns", "gpu3.ns" };
        static const uint32_t unknown[] = { 0, 7, 64, 127, 128, 0xd0e429e0 /* Monotonic */, 0x80000000 };
        char buf[64];
        bool all = true;

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                const char *got = clock_id_known_name(clock_id_for_name(names[i]), buf, sizeof(buf));

                if (!got || strcmp(got, names[i]) != 0) {
                        diag("%s: got %s", names[i], got ? got : "NULL");
                        all = false;
                }
        }
        ok(all, "the ids of builtin clocks, tai, x11, x11_us, msc, gpu0..gpu15 (and .ns) are named back");
        ok(clock_id_known_name(UINT32_C(0x8c4fff47), buf, sizeof(buf)) && strcmp(buf, "x11_us") == 0,
           "0x8c4fff47 is x11_us");
        all = true;
        for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
                all &= clock_id_known_name(unknown[i], buf, sizeof(buf)) == NULL;
        ok(all, "other ids (sequence-scoped, plain, hashed from other names) have no name");
        ok(clock_id_known_name(clock_id_for_name("gpu16"), buf, sizeof(buf)) == NULL, "gpu16 is past the table");
}

int main(void) {
        test_fnv();
        test_builtin();
        test_hashed();
        test_known_names();
        return done_testing();
}
