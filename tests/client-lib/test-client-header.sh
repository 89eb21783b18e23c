#!/bin/sh
# SPDX-License-Identifier: MIT
# Each public header (timeconv.h, timeconv-framesync.h) compiles alone, with each standard a user
# may pick, pedantic and with warnings as errors; timeconv.h without <stdio.h>, which only frame
# sync needs. Usage: test-client-header.sh INCLUDE_DIR CC [CC_ARGS...]
set -u
inc=$1
shift
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
printf '#include <timeconv.h>\n#include <timeconv.h>\nint main(void) { return timeconv_version() ? 0 : 1; }\n' > "$tmp/timeconv.h.c"
printf '#include <timeconv-framesync.h>\n#include <timeconv-framesync.h>\nint main(void) {\n%s\n}\n' \
        '        size_t i = 0; return timeconv_sync_fence_index(4, 2, &i) || !stdout;' > "$tmp/timeconv-framesync.h.c"

n=0
failed=0
for header in timeconv.h timeconv-framesync.h; do
        for std in c89 c99 c11 gnu89 gnu17; do
                n=$((n + 1))
                if "$@" -std=$std -pedantic-errors -Wall -Wextra -Wstrict-prototypes \
                        -Wmissing-prototypes -Wdeclaration-after-statement -Werror -fsyntax-only \
                        -I"$inc" "$tmp/$header.c" > "$tmp/out" 2>&1; then
                        echo "ok $n - $header compiles with -std=$std -pedantic-errors -Werror"
                else
                        echo "not ok $n - $header compiles with -std=$std -pedantic-errors -Werror"
                        sed 's/^/# /' "$tmp/out"
                        failed=1
                fi
        done
done

# timeconv.h alone declares no frame sync and brings no <stdio.h>: each of these must fail.
for decl in 'FILE *f;' 'struct timeconv_frame_drawn d;'; do
        n=$((n + 1))
        printf '#include <timeconv.h>\n%s\n' "$decl" > "$tmp/alone.c"
        if "$@" -std=c89 -pedantic-errors -Werror -fsyntax-only -I"$inc" "$tmp/alone.c" > /dev/null 2>&1; then
                echo "not ok $n - timeconv.h alone does not declare '$decl' (timeconv-framesync.h does)"
                failed=1
        else
                echo "ok $n - timeconv.h alone does not declare '$decl' (timeconv-framesync.h does)"
        fi
done

# A header with a // comment must fail, or the test proves nothing.
n=$((n + 1))
printf '// c99 comment\nint x;\n' > "$tmp/bad.h"
printf '#include "bad.h"\n' > "$tmp/bad.c"
if "$@" -std=c89 -pedantic-errors -Werror -fsyntax-only -I"$tmp" "$tmp/bad.c" > /dev/null 2>&1; then
        echo "not ok $n - the compiler refuses a // comment in C89"
        failed=1
else
        echo "ok $n - the compiler refuses a // comment in C89"
fi
echo "1..$n"
exit $failed
