// sluice-kafka-mock: librdkafka's in-memory mock Kafka cluster as a standalone
// process, for tests that feed it with other clients (kcat).
//
//   sluice-kafka-mock [--brokers N] [--topic NAME:PARTITIONS]...
//
// Starts N brokers (default 3), creates the topics, prints the bootstrap
// address ("127.0.0.1:port,...") as one line on stdout, and serves until
// SIGTERM or SIGINT. Ports are random on each start. Exit code 0 on a signal,
// 2 on bad arguments, 1 when the cluster cannot start.
// clang-format off
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
// clang-format on
#include <signal.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

bool ParseInt(std::string_view s, int* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size() && *out > 0;
}

int Usage(const char* why) {
  std::fprintf(stderr,
               "sluice-kafka-mock: %s\nusage: sluice-kafka-mock [--brokers N] "
               "[--topic NAME:PARTITIONS]...\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int brokers = 3;
  std::vector<std::pair<std::string, int>> topics;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if ((arg == "--brokers" || arg == "--topic") && i + 1 >= argc) {
      return Usage("missing value after an option");
    }
    if (arg == "--brokers") {
      if (!ParseInt(argv[++i], &brokers)) return Usage("--brokers needs a positive number");
    } else if (arg == "--topic") {
      std::string_view spec = argv[++i];
      size_t colon = spec.rfind(':');
      int partitions = 0;
      if (colon == std::string_view::npos || colon == 0 ||
          !ParseInt(spec.substr(colon + 1), &partitions)) {
        return Usage("--topic needs NAME:PARTITIONS, e.g. events:4");
      }
      topics.emplace_back(std::string(spec.substr(0, colon)), partitions);
    } else {
      return Usage("unknown argument");
    }
  }

  // Block the stop signals before librdkafka starts its threads, so that they
  // inherit the mask and only sigwait() below receives them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    std::fprintf(stderr, "sluice-kafka-mock: client handle: %s\n", errstr);
    return 1;
  }
  rd_kafka_mock_cluster_t* mc = rd_kafka_mock_cluster_new(rk, brokers);
  if (mc == nullptr) {
    std::fprintf(stderr, "sluice-kafka-mock: could not start %d mock brokers\n", brokers);
    rd_kafka_destroy(rk);
    return 1;
  }
  for (const auto& [name, partitions] : topics) {
    rd_kafka_resp_err_t err =
        rd_kafka_mock_topic_create(mc, name.c_str(), partitions, brokers < 3 ? brokers : 3);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      std::fprintf(stderr, "sluice-kafka-mock: topic %s: %s\n", name.c_str(),
                   rd_kafka_err2str(err));
      rd_kafka_mock_cluster_destroy(mc);
      rd_kafka_destroy(rk);
      return 1;
    }
  }
  std::printf("%s\n", rd_kafka_mock_cluster_bootstraps(mc));
  std::fflush(stdout);

  int sig = 0;
  sigwait(&stop, &sig);
  rd_kafka_mock_cluster_destroy(mc);
  rd_kafka_destroy(rk);
  return 0;
}
