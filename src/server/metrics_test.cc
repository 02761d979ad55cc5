#include "server/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <tuple>
#include <vector>

#include "common/testing.h"
#include "server/test_util.h"

namespace sluice::server {
namespace {

TEST(Metrics, RendersCountersGaugesWithLabelsSortedByName) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(auto* records, registry.AddCounter("sluice_records_in_total",
                                                          "Records accepted.", {"stream"}));
  ASSERT_OK_AND_ASSIGN(Counter * a, records->WithLabels({"b_stream"}));
  ASSERT_OK_AND_ASSIGN(Counter * b, records->WithLabels({"a_stream"}));
  a->Increment(3);
  b->Increment();
  b->Increment(0.5);
  ASSERT_OK_AND_ASSIGN(auto* lag, registry.AddGauge("sluice_lag_records", "Records behind."));
  ASSERT_OK_AND_ASSIGN(Gauge * g, lag->WithLabels({}));
  g->Set(10);
  g->Add(-2.5);

  EXPECT_EQ(registry.Render(),
            "# HELP sluice_lag_records Records behind.\n"
            "# TYPE sluice_lag_records gauge\n"
            "sluice_lag_records 7.5\n"
            "# HELP sluice_records_in_total Records accepted.\n"
            "# TYPE sluice_records_in_total counter\n"
            "sluice_records_in_total{stream=\"a_stream\"} 1.5\n"
            "sluice_records_in_total{stream=\"b_stream\"} 3\n");
}

TEST(Metrics, SameLabelsGiveTheSameHandle) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(auto* f, registry.AddCounter("x_total", "x", {"a", "b"}));
  ASSERT_OK_AND_ASSIGN(Counter * c1, f->WithLabels({"1", "2"}));
  ASSERT_OK_AND_ASSIGN(Counter * c2, f->WithLabels({"1", "2"}));
  ASSERT_OK_AND_ASSIGN(Counter * c3, f->WithLabels({"2", "1"}));
  EXPECT_EQ(c1, c2);
  EXPECT_NE(c1, c3);
  ASSERT_ERROR(f->WithLabels({"1"}), StatusCode::kInvalidArgument, "1 label values");
  // Re-registering the same definition returns the family; another one is refused.
  ASSERT_OK_AND_ASSIGN(auto* again, registry.AddCounter("x_total", "x", {"a", "b"}));
  EXPECT_EQ(again, f);
  ASSERT_ERROR(registry.AddCounter("x_total", "x", {"a"}), StatusCode::kAlreadyExists, "x_total");
  ASSERT_ERROR(registry.AddGauge("x_total", "x"), StatusCode::kInvalidArgument, "_total");
}

TEST(Metrics, NegativeCounterIncrementsAreIgnored) {
  Counter c;
  c.Increment(2);
  c.Increment(-1);
  c.Increment(std::nan(""));
  EXPECT_EQ(c.value(), 2);
}

TEST(Metrics, RefusesBadNames) {
  Registry r;
  ASSERT_ERROR(r.AddCounter("requests", "h"), StatusCode::kInvalidArgument, "_total");
  ASSERT_ERROR(r.AddCounter("9lives_total", "h"), StatusCode::kInvalidArgument, "9lives");
  ASSERT_ERROR(r.AddCounter("a-b_total", "h"), StatusCode::kInvalidArgument, "a-b");
  ASSERT_ERROR(r.AddGauge("g_count", "h"), StatusCode::kInvalidArgument, "_count");
  ASSERT_ERROR(r.AddGauge("g", ""), StatusCode::kInvalidArgument, "HELP");
  ASSERT_ERROR(r.AddGauge("g", "h", {"__x"}), StatusCode::kInvalidArgument, "__x");
  ASSERT_ERROR(r.AddGauge("g", "h", {"a", "a"}), StatusCode::kInvalidArgument, "repeated");
  ASSERT_ERROR(r.AddHistogram("h_seconds", "h", {1}, {"le"}), StatusCode::kInvalidArgument, "'le'");
  ASSERT_ERROR(r.AddHistogram("h_seconds", "h", {2, 1}), StatusCode::kInvalidArgument,
               "increasing");
  ASSERT_ERROR(r.AddHistogram("h_seconds", "h", {}), StatusCode::kInvalidArgument, "no buckets");
}

TEST(Metrics, HistogramBucketsAreCumulativeWithInclusiveBounds) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(auto* f,
                       registry.AddHistogram("lat_seconds", "Latency.", {0.5, 1}, {"route"}));
  ASSERT_OK_AND_ASSIGN(Histogram * h, f->WithLabels({"r"}));
  for (double v : {0.25, 0.5, 0.75, 1.0, 2.0, 3.0}) h->Observe(v);
  EXPECT_EQ(registry.Render(),
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{route=\"r\",le=\"0.5\"} 2\n"
            "lat_seconds_bucket{route=\"r\",le=\"1\"} 4\n"
            "lat_seconds_bucket{route=\"r\",le=\"+Inf\"} 6\n"
            "lat_seconds_sum{route=\"r\"} 7.5\n"
            "lat_seconds_count{route=\"r\"} 6\n");
}

TEST(Metrics, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapeHelp("x\\y\nz\"q"), "x\\\\y\\nz\"q");
  EXPECT_EQ(FormatSampleValue(1.0 / 0.0), "+Inf");
  EXPECT_EQ(FormatSampleValue(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(FormatSampleValue(std::nan("")), "NaN");
  EXPECT_EQ(FormatSampleValue(0.1), "0.1");
  EXPECT_EQ(FormatSampleValue(12345678901.0), "12345678901");
}

TEST(Metrics, ConcurrentIncrementsAreNotLost) {
  Registry registry;
  ASSERT_OK_AND_ASSIGN(auto* f, registry.AddCounter("n_total", "n"));
  ASSERT_OK_AND_ASSIGN(Counter * c, f->WithLabels({}));
  ASSERT_OK_AND_ASSIGN(auto* hf, registry.AddHistogram("d_seconds", "d", {0.5}));
  ASSERT_OK_AND_ASSIGN(Histogram * h, hf->WithLabels({}));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c->Increment();
        h->Observe(i % 2 == 0 ? 0.25 : 1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c->value(), 40000);
  EXPECT_EQ(h->BucketCounts(), (std::vector<uint64_t>{20000, 20000}));
  EXPECT_EQ(h->sum(), 20000 * 0.25 + 20000 * 1.0);
}

using testing::HavePromtool;
using testing::Promtool;

TEST(Metrics, PromtoolAcceptsTheRendering) {
  if (!HavePromtool()) GTEST_SKIP() << "promtool not installed";
  Registry registry;
  ASSERT_OK_AND_ASSIGN(auto* in,
                       registry.AddCounter("sluice_records_in_total",
                                           "Records accepted \\ \"by\" stream.\nOK.", {"stream"}));
  ASSERT_OK_AND_ASSIGN(Counter * c, in->WithLabels({"we\"ird\\na\nme"}));
  c->Increment(42);
  ASSERT_OK_AND_ASSIGN(auto* bytes, registry.AddCounter("sluice_bytes_in_total", "Bytes in."));
  (void)bytes;
  ASSERT_OK_AND_ASSIGN(auto* lag, registry.AddGauge("sluice_lag_records", "Lag.", {"stream"}));
  ASSERT_OK_AND_ASSIGN(Gauge * g, lag->WithLabels({"events_in"}));
  g->Set(-3);
  ASSERT_OK_AND_ASSIGN(
      auto* d, registry.AddHistogram("sluice_http_request_duration_seconds", "Request time.",
                                     DefaultSecondsBuckets(), {"route"}));
  for (const char* route : {"records", "metrics"}) {
    ASSERT_OK_AND_ASSIGN(Histogram * h, d->WithLabels({route}));
    h->Observe(0.003);
    h->Observe(42);
  }
  std::string text = registry.Render();
  auto [status, output] = Promtool(text);
  EXPECT_EQ(status, 0) << output << "\n" << text;
  EXPECT_EQ(output, "") << text;

  // The check is able to fail: the same label value unescaped, a counter without _total.
  auto [bad_status, bad_output] =
      Promtool("# HELP x_total x\n# TYPE x_total counter\nx_total{a=\"we\"ird\\na\nme\"} 1\n");
  EXPECT_NE(bad_status, 0) << bad_output;
  std::tie(bad_status, bad_output) = Promtool("# HELP x x\n# TYPE x counter\nx 1\n");
  EXPECT_NE(bad_status, 0) << bad_output;
}

}  // namespace
}  // namespace sluice::server
