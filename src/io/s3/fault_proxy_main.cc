// sluice-s3-fault-proxy UPSTREAM [RATE [SEED]]: a FaultProxy (fault_proxy.h) in
// front of an S3 server for shell tests: prints its endpoint
// ("http://127.0.0.1:PORT") on stdout, then fails each request with probability
// RATE (default 0.05) until killed, and prints its counts on SIGTERM/SIGINT.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "io/s3/fault_proxy.h"

namespace {
volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sluice-s3-fault-proxy UPSTREAM [RATE [SEED]]\n");
    return 2;
  }
  double rate = argc > 2 ? std::atof(argv[2]) : 0.05;
  uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  signal(SIGPIPE, SIG_IGN);
  sluice::s3::FaultProxy proxy(argv[1]);
  proxy.SetRandom(rate, seed);
  std::printf("%s\n", proxy.endpoint().c_str());
  std::fflush(stdout);
  while (!g_stop) usleep(50 * 1000);
  std::fprintf(stderr, "sluice-s3-fault-proxy: %lld requests, %lld faults\n",
               static_cast<long long>(proxy.requests()), static_cast<long long>(proxy.faults()));
  return 0;
}
