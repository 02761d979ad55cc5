#include "sources/kafka_test_util.h"

// clang-format off
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
// clang-format on
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

extern char** environ;

namespace sluice::sources::testing {

MockCluster::MockCluster(rd_kafka_s* rk, rd_kafka_mock_cluster_s* mc, int brokers)
    : rk_(rk), mc_(mc), brokers_(brokers), bootstraps_(rd_kafka_mock_cluster_bootstraps(mc)) {}

MockCluster::~MockCluster() {
  rd_kafka_mock_cluster_destroy(mc_);
  rd_kafka_destroy(rk_);
}

Result<std::unique_ptr<MockCluster>> MockCluster::Start(int brokers) {
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::Internal("mock cluster handle: {}", errstr);
  }
  rd_kafka_mock_cluster_t* mc = rd_kafka_mock_cluster_new(rk, brokers);
  if (mc == nullptr) {
    rd_kafka_destroy(rk);
    return Status::Internal("could not start {} mock brokers", brokers);
  }
  return std::unique_ptr<MockCluster>(new MockCluster(rk, mc, brokers));
}

Status MockCluster::CreateTopic(const std::string& name, int partitions) {
  rd_kafka_resp_err_t err =
      rd_kafka_mock_topic_create(mc_, name.c_str(), partitions, brokers_ < 3 ? brokers_ : 3);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Internal("mock topic {}: {}", name, rd_kafka_err2str(err));
  }
  return Status::OK();
}

Status MockCluster::SetAllBrokersUp(bool up) {
  for (int id = 1; id <= brokers_; ++id) {
    rd_kafka_resp_err_t err =
        up ? rd_kafka_mock_broker_set_up(mc_, id) : rd_kafka_mock_broker_set_down(mc_, id);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Internal("mock broker {}: {}", id, rd_kafka_err2str(err));
    }
  }
  return Status::OK();
}

namespace {

struct DeliveryCounts {
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  std::string first_error;  // written from the poll thread only (rd_kafka_flush)
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto* counts = static_cast<DeliveryCounts*>(opaque);
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++counts->ok;
  } else {
    if (counts->failed++ == 0) counts->first_error = rd_kafka_err2str(m->err);
  }
}

}  // namespace

Status Produce(const std::string& bootstraps, const std::string& topic,
               const std::vector<std::pair<int, std::string>>& records, bool flush_each) {
  DeliveryCounts counts;
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (auto [k, v] : {std::pair<const char*, const char*>{"bootstrap.servers", bootstraps.c_str()},
                      {"acks", "all"},
                      {"linger.ms", "5"}}) {
    if (rd_kafka_conf_set(conf, k, v, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Status::Internal("producer conf {}: {}", k, errstr);
    }
  }
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  rd_kafka_conf_set_opaque(conf, &counts);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::Internal("producer: {}", errstr);
  }
  Status st;
  for (const auto& [partition, value] : records) {
    rd_kafka_resp_err_t err;
    while ((err = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic.c_str()),
                                    RD_KAFKA_V_PARTITION(partition),
                                    RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END)) ==
           RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(rk, 100);  // wait for acks to make room
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      st = Status::Internal("produce to {} [{}]: {}", topic, partition, rd_kafka_err2str(err));
      break;
    }
    if (flush_each) rd_kafka_flush(rk, 10000);
  }
  rd_kafka_flush(rk, 10000);
  rd_kafka_destroy(rk);
  RETURN_IF_ERROR(st);
  if (counts.ok != static_cast<int>(records.size())) {
    return Status::Internal("only {} of {} records acknowledged ({} failed: {})", counts.ok.load(),
                            records.size(), counts.failed.load(), counts.first_error);
  }
  return Status::OK();
}

Result<std::vector<Got>> Drain(Source& source, size_t want, int64_t max_bytes, int deadline_ms,
                               int quiet_ms) {
  std::vector<Got> got;
  auto sink = [&](const SourceRecord& r) {
    got.push_back(Got{r.partition, r.offset, r.timestamp_ms, std::string(r.value)});
  };
  auto now = [] { return std::chrono::steady_clock::now(); };
  const auto deadline = now() + std::chrono::milliseconds(deadline_ms);
  while (got.size() < want && now() < deadline) {
    size_t before = got.size();
    ASSIGN_OR_RETURN(int64_t n, source.Poll(max_bytes, 200, sink));
    if (n != static_cast<int64_t>(got.size() - before)) {
      return Status::Internal("Poll returned {} but delivered {}", n, got.size() - before);
    }
  }
  const auto quiet_end = now() + std::chrono::milliseconds(quiet_ms);
  while (now() < quiet_end) {
    ASSIGN_OR_RETURN(int64_t n, source.Poll(max_bytes, 50, sink));
    (void)n;
  }
  return got;
}

Result<std::unique_ptr<Child>> Child::Spawn(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::IOError("pipe: {}", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return Status::IOError("spawn {}: {}", argv[0], std::strerror(rc));
  }
  return std::unique_ptr<Child>(new Child(pid, fds[0]));
}

Child::~Child() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  close(fd_);
}

Result<std::string> Child::ReadLine() {
  std::string line;
  char c;
  while (true) {
    ssize_t n = read(fd_, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IOError("child {} closed stdout after '{}'", pid_, line);
    if (c == '\n') return line;
    line.push_back(c);
  }
}

Result<int> Child::Terminate() {
  if (kill(pid_, SIGTERM) != 0) return Status::IOError("kill {}: {}", pid_, std::strerror(errno));
  int status = 0;
  if (waitpid(pid_, &status, 0) != pid_) {
    return Status::IOError("waitpid {}: {}", pid_, std::strerror(errno));
  }
  pid_ = -1;
  return status;
}

bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

}  // namespace sluice::sources::testing
