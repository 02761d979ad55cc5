#!/usr/bin/env bash
# What a page fault costs on this machine: one byte written in each 4 KiB page
# of a fresh 256 MiB mapping, as ordinary pages and as one advised huge
# (MADV_HUGEPAGE, 2 MiB aligned, as common/huge_pages.h maps a block). Prints
# each run's time and minor faults. bench/README.md, "Page faults of a batch's
# records; shard ids from the value".
#   bench/page_faults.sh [ROUNDS]   (default 2; needs a C compiler)
set -euo pipefail
rounds=${1:-2}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/faults.c" <<'C'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
int main(int argc, char** argv) {
  const size_t n = (size_t)256 << 20, huge = (size_t)2 << 20;
  const int advise = atoi(argv[1]);
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  char* p = mmap(NULL, n + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 1;
  char* q = (char*)(((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1));
  if (advise) madvise(q, n, MADV_HUGEPAGE);
  for (size_t i = 0; i < n; i += 4096) q[i] = 1;
  clock_gettime(CLOCK_MONOTONIC, &b);
  getrusage(RUSAGE_SELF, &after);
  printf("%-12s %8.1f ms %8ld page faults\n", advise ? "huge pages" : "4 KiB pages",
         (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6,
         after.ru_minflt - before.ru_minflt);
  return 0;
}
C
"${CC:-cc}" -O2 -o "$dir/faults" "$dir/faults.c"
echo "256 MiB written one byte a 4 KiB page (THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo none))"
for _ in $(seq "$rounds"); do
  "$dir/faults" 0
  "$dir/faults" 1
done
