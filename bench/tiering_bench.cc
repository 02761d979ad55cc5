// What size-tiered compaction makes of a streaming partition over a day, from
// the service's own selection rule (maintenance::ModelTiering over TieredRun):
// for each tier factor and min-input-files, the files a partition holds (mean, most) and how
// often each committed byte is rewritten, after 5 minutes, an hour, the
// issue's 20,000 commits and a day of one-second commits. Planning a scan
// costs about the same per live file, so "mean files" is about planning
// against a table compacted to one file a partition (bench/README.md,
// "A day of streaming"). No I/O: a model, in a second.
//
//   build/bench/tiering_bench [COMMIT_BYTES=2000] [TARGET_FILE_BYTES=536870912 (the writer's
//   default)] (small files: under a quarter of the target, the policy's default)
#include <cstdio>
#include <cstdlib>

#include "maintenance/policy.h"

int main(int argc, char** argv) {
  const long long commit_bytes = argc > 1 ? std::atoll(argv[1]) : 2000;
  const long long target = argc > 2 ? std::atoll(argv[2]) : 512LL << 20;
  const long long small = target / 4;
  std::printf("one file of %lld bytes a commit; small files under %lld bytes\n", commit_bytes,
              small);
  std::printf("%6s %9s %8s %10s %9s %14s %8s %12s\n", "factor", "min files", "commits",
              "mean files", "max files", "rewrites/byte", "merges", "compacted f");
  struct Rule {
    long long factor, min;
  };
  // The default (factor 2, min 5), the min-input-files range, then larger factors.
  for (Rule rule :
       {Rule{2, 2}, Rule{2, 5}, Rule{2, 8}, Rule{4, 5}, Rule{16, 5}, Rule{16, 2}, Rule{64, 2}}) {
    for (long long commits : {300, 3600, 20000, 86400}) {
      auto o =
          sluice::maintenance::ModelTiering(commits, commit_bytes, small, rule.min, rule.factor);
      // The same bytes compacted from scratch: files of the target size.
      long long compacted = (commits * commit_bytes + target - 1) / target;
      std::printf("%6lld %9lld %8lld %10.2f %9lld %14.2f %8lld %12lld\n", rule.factor, rule.min,
                  commits, o.mean_files, static_cast<long long>(o.max_files), o.rewrites_per_byte,
                  static_cast<long long>(o.merges), compacted);
    }
  }
  return 0;
}
