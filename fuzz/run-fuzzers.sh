#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Runs the libFuzzer targets of a -Dfuzz=true build for a bounded time each, as many at once as
# there are CPUs, over their seed corpus (fuzz/corpus/<target>/, only read) and a scratch corpus
# in the build directory. Prints one line per target and exits non-zero when any failed; the
# input that failed is kept in BUILD/fuzz-artifacts/ and printed in base64 with the report.
#
#   fuzz/run-fuzzers.sh BUILD [SECONDS [TARGET...]]     (default: 20 s, every target)
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:?usage: fuzz/run-fuzzers.sh BUILD [SECONDS [TARGET...]]}
seconds=${2:-20}
shift $(($# < 2 ? $# : 2))
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(frames snapshots perfetto state bus)
fi

work=$build/fuzz-work
rm -rf "$work" "$build/fuzz-artifacts"
mkdir -p "$work" "$build/fuzz-artifacts"

run_one() {
  local t=$1 rc=0
  mkdir -p "$work/corpus-$t"
  "$build/fuzz/fuzz-$t" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$t-" \
    "$work/corpus-$t" "$src/corpus/$t" >"$work/$t.log" 2>&1 </dev/null || rc=$?
  echo "$rc" >"$work/$t.rc"
}

jobs_max=$(nproc 2>/dev/null || echo 1)
for t in "${targets[@]}"; do
  if [[ ! -x $build/fuzz/fuzz-$t ]]; then
    echo "fuzz-$t: not built (meson setup with -Dfuzz=true, then ninja -C $build fuzzers)" >&2
    exit 1
  fi
  while (($(jobs -rp | wc -l) >= jobs_max)); do
    wait -n || true
  done
  run_one "$t" &
done
wait

status=0
for t in "${targets[@]}"; do
  rc=$(cat "$work/$t.rc")
  runs=$(sed -n 's/^Done \([0-9]*\) runs in .*/\1/p' "$work/$t.log")
  if [[ $rc == 0 ]]; then
    echo "fuzz-$t: ok, ${runs:-?} runs in $seconds s"
    continue
  fi
  status=1
  echo "fuzz-$t: FAILED (exit status $rc)"
  tail -n 60 "$work/$t.log" | sed 's/^/    /'
  for a in "$build/fuzz-artifacts/$t-"*; do
    [[ -f $a ]] || continue
    echo "    input $a (base64; reproduce with: base64 -d > in && $build/fuzz/fuzz-$t in):"
    base64 "$a" | head -n 120 | sed 's/^/    /'
  done
done
exit "$status"
