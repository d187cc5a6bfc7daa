// Unit tests of skeinrun's key-value service (netlayer/pmi/server.c), driven in-process:
// raw protocol clients on one thread, the server pumped between their steps. Covers what
// the end-to-end tests cannot reach: malformed messages from authenticated processes, fence
// semantics step by step, the abort hook, values at the size limit.
#include <gtest/gtest.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <string>
#include <vector>

extern "C" {
#include "server.h"
}

namespace {

const char kSecret[] = "0123456789abcdef0123456789abcdef";

struct AbortSeen {
  int proc = -1, code = 0;
  std::string msg;
};

class Service {
 public:
  explicit Service(int nprocs) {
    char tmpl[] = "/tmp/skn-pmi-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/s";
    s_ = skn_pmi_server_create(path_.c_str(), nprocs, kSecret, OnAbort, &abort_);
  }
  ~Service() {
    if (s_) skn_pmi_server_destroy(s_);
    rmdir(dir_.c_str());
  }
  // Lets the server handle whatever is pending (a few rounds, short timeouts).
  void Pump(int rounds = 4) {
    std::vector<pollfd> fds(skn_pmi_server_maxfds(s_));
    for (int i = 0; i < rounds; i++) {
      int n = skn_pmi_server_pollfds(s_, fds.data());
      int rc = poll(fds.data(), n, 5);
      if (rc < 0) rc = 0;
      for (int k = 0; k < n && rc == 0; k++) fds[k].revents = 0;
      skn_pmi_server_handle(s_, fds.data(), n);
    }
  }
  int Dial() {
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    strcpy(sa.sun_path, path_.c_str());
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    EXPECT_EQ(connect(fd, (sockaddr *)&sa, sizeof sa), 0);
    Pump(1);
    return fd;
  }
  // Sends bytes without blocking the test: pumps the server while the socket is full.
  void Send(int fd, const void *b, size_t n) {
    const char *p = static_cast<const char *>(b);
    while (n > 0) {
      ssize_t w = send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (w < 0) {
        if (lenient_ && errno != EAGAIN) return; // the service closed on us: expected
        ASSERT_TRUE(errno == EAGAIN) << strerror(errno);
        Pump(1);
        continue;
      }
      p += w;
      n -= (size_t)w;
    }
    Pump();
  }
  void Frame(int fd, uint8_t op, const std::string &body) {
    uint32_t len = (uint32_t)(1 + body.size());
    std::string f((const char *)&len, 4);
    f += (char)op;
    f += body;
    Send(fd, f.data(), f.size());
  }
  // Next answer frame (opcode + payload), "" if none arrives, "EOF" if closed.
  std::string Answer(int fd) {
    std::string got;
    for (int tries = 0; tries < 200; tries++) {
      char b[65536];
      ssize_t r = recv(fd, b, sizeof b, MSG_DONTWAIT);
      if (r == 0 || (r < 0 && errno == ECONNRESET)) return got.empty() ? "EOF" : got;
      if (r > 0) got.append(b, (size_t)r);
      if (got.size() >= 4) {
        uint32_t n;
        memcpy(&n, got.data(), 4);
        if (got.size() >= 4 + n) return got.substr(4, n);
      }
      if (r < 0 && tries > 20 && got.empty()) return "";
      Pump(1);
    }
    return got.empty() ? "" : "PARTIAL";
  }
  int Join(uint32_t proc) {
    int fd = Dial();
    std::string b((const char *)&proc, 4);
    b += std::string(kSecret, SKN_PMI_SECRET_LEN);
    Frame(fd, SKN_PMI_HELLO, b);
    EXPECT_EQ(Answer(fd), std::string(1, (char)SKN_PMI_WELCOME));
    return fd;
  }
  void Put(int fd, const std::string &key, const std::string &value) {
    uint16_t kl = (uint16_t)key.size();
    Frame(fd, SKN_PMI_PUT, std::string((const char *)&kl, 2) + key + value);
  }
  std::string Get(int fd, uint32_t proc, const std::string &key) {
    Frame(fd, SKN_PMI_GET, std::string((const char *)&proc, 4) + key);
    return Answer(fd);
  }
  skn_pmi_server *s_ = nullptr;
  AbortSeen abort_;
  bool lenient_ = false; // sends to a closed connection are not failures

 private:
  static void OnAbort(void *ctx, int proc, int code, const char *msg) {
    auto *a = static_cast<AbortSeen *>(ctx);
    a->proc = proc;
    a->code = code;
    a->msg = msg;
  }
  std::string dir_, path_;
};

std::string Value(const std::string &v) { return std::string(1, (char)SKN_PMI_VALUE) + v; }
const std::string kMissing(1, (char)SKN_PMI_MISSING);
const std::string kFenced(1, (char)SKN_PMI_FENCED);

TEST(PmiServer, FencePublishesOnlyWhenEveryProcessHasJoined) {
  Service sv(3);
  ASSERT_NE(sv.s_, nullptr);
  int c0 = sv.Join(0), c1 = sv.Join(1), c2 = sv.Join(2);
  sv.Put(c0, "k", "v0");
  sv.Put(c1, "k", std::string("v1\0x", 4)); // values are bytes, NULs included
  EXPECT_EQ(sv.Get(c0, 1, "k"), kMissing);
  sv.Frame(c0, SKN_PMI_FENCE, "");
  sv.Frame(c1, SKN_PMI_FENCE, "");
  EXPECT_EQ(sv.Answer(c0), "");             // not before the last process joins
  EXPECT_EQ(sv.Get(c2, 0, "k"), kMissing);  // still pending
  EXPECT_EQ(skn_pmi_server_fence_stuck(sv.s_), -1);
  sv.Frame(c2, SKN_PMI_FENCE, "");
  EXPECT_EQ(sv.Answer(c0), kFenced);
  EXPECT_EQ(sv.Answer(c1), kFenced);
  EXPECT_EQ(sv.Answer(c2), kFenced);
  EXPECT_EQ(sv.Get(c2, 0, "k"), Value("v0"));
  EXPECT_EQ(sv.Get(c2, 1, "k"), Value(std::string("v1\0x", 4)));
  EXPECT_EQ(sv.Get(c2, 2, "k"), kMissing);
  // A second round: a new put is invisible until the next fence, then replaces the value.
  sv.Put(c0, "k", "w0");
  EXPECT_EQ(sv.Get(c1, 0, "k"), Value("v0"));
  for (int c : {c0, c1, c2}) sv.Frame(c, SKN_PMI_FENCE, "");
  for (int c : {c0, c1, c2}) EXPECT_EQ(sv.Answer(c), kFenced);
  EXPECT_EQ(sv.Get(c1, 0, "k"), Value("w0"));
  for (int c : {c0, c1, c2}) close(c);
}

TEST(PmiServer, MalformedMessagesFromProcessesCloseOnlyTheirConnection) {
  const int kRogues = 9;
  Service sv(1 + kRogues);
  int good = sv.Join(0);
  sv.Put(good, "mine", "ok");
  std::vector<int> r;
  for (int p = 1; p <= kRogues; p++) r.push_back(sv.Join((uint32_t)p));
  for (int i = 0; i < kRogues; i++) sv.Put(r[i], "r", "pending"); // must never be published
  uint16_t big = 500;
  uint32_t proc_far = 77, huge = SKN_PMI_FRAME_MAX + 1;
  sv.Frame(r[0], SKN_PMI_PUT, std::string((const char *)&big, 2) + "abc");  // key beyond the body
  sv.Put(r[1], "a b", "x");                                                 // space in the key
  sv.Put(r[2], std::string(SKN_PMI_KEY_MAX + 1, 'k'), "x");                 // key too long
  sv.Frame(r[3], SKN_PMI_GET, std::string((const char *)&proc_far, 4) + "k"); // no such process
  sv.Frame(r[4], SKN_PMI_FENCE, "x");                                       // fence with a body
  sv.Frame(r[5], 200, "");                                                  // unknown opcode
  sv.Send(r[6], &huge, 4);                                                  // oversized frame
  sv.Frame(r[7], SKN_PMI_HELLO, std::string(4 + SKN_PMI_SECRET_LEN, 'h')); // hello twice
  sv.Frame(r[8], SKN_PMI_FENCE, "");
  sv.Frame(r[8], SKN_PMI_FENCE, "");                                        // the same fence twice
  for (int i = 0; i < kRogues; i++) EXPECT_EQ(sv.Answer(r[i]), "EOF") << "rogue " << i;
  // The service still serves the good process, and nothing pending was published.
  EXPECT_EQ(sv.Get(good, 0, "mine"), kMissing);
  EXPECT_EQ(sv.Get(good, 1, "r"), kMissing);
  // A dropped process cannot come back under its index.
  int again = sv.Dial();
  uint32_t one = 1;
  sv.Frame(again, SKN_PMI_HELLO, std::string((const char *)&one, 4) + std::string(kSecret, SKN_PMI_SECRET_LEN));
  EXPECT_EQ(sv.Answer(again), "EOF");
  close(again);
  for (int fd : r) close(fd);
  close(good);
}

TEST(PmiServer, FenceStuckOnAnEndedProcess) {
  Service sv(2);
  int c0 = sv.Join(0);
  skn_pmi_server_proc_exited(sv.s_, 1);
  EXPECT_EQ(skn_pmi_server_fence_stuck(sv.s_), -1); // no fence under way
  sv.Frame(c0, SKN_PMI_FENCE, "");
  EXPECT_EQ(skn_pmi_server_fence_stuck(sv.s_), 1);
  close(c0);
}

TEST(PmiServer, AbortReachesTheLauncherWithAPrintableMessage) {
  Service sv(2);
  int c1 = sv.Join(1);
  int32_t code = 7;
  sv.Frame(c1, SKN_PMI_ABORT, std::string((const char *)&code, 4) + "bad\x1b[2Jthing");
  EXPECT_EQ(sv.Answer(c1), std::string(1, (char)SKN_PMI_ACK));
  EXPECT_EQ(sv.abort_.proc, 1);
  EXPECT_EQ(sv.abort_.code, 7);
  EXPECT_EQ(sv.abort_.msg, "bad?[2Jthing"); // no escape sequences reach the terminal
  close(c1);
}

TEST(PmiServer, LargestValueRoundTrips) {
  Service sv(1);
  int c = sv.Join(0);
  std::string v(SKN_PMI_VALUE_MAX, '\0');
  for (size_t i = 0; i < v.size(); i++) v[i] = (char)(i * 131 + 7);
  sv.Put(c, std::string(SKN_PMI_KEY_MAX, 'k'), v);
  sv.Frame(c, SKN_PMI_FENCE, "");
  EXPECT_EQ(sv.Answer(c), kFenced);
  EXPECT_EQ(sv.Get(c, 0, std::string(SKN_PMI_KEY_MAX, 'k')), Value(v));
  close(c);
}

TEST(PmiServer, StrangersAreHeldBackNotServed) {
  Service sv(1);
  std::vector<int> idle;
  for (int i = 0; i < 40; i++) idle.push_back(sv.Dial()); // more than the 32 held
  usleep(1100 * 1000);                                     // the oldest may now give way
  int c = sv.Join(0);                                      // the job's process still gets in
  sv.Frame(c, SKN_PMI_FENCE, "");
  EXPECT_EQ(sv.Answer(c), kFenced);
  for (int fd : idle) close(fd);
  close(c);
}

TEST(PmiServer, RandomFramesNeverCrashTheServiceNorReachTheStore) {
  const int kFuzzers = 120;
  Service sv(1 + kFuzzers);
  unsigned seed = 12345;
  sv.lenient_ = true;
  auto rnd = [&seed](unsigned n) { seed = seed * 1103515245u + 12345u; return (seed >> 8) % n; };
  for (int f = 1; f <= kFuzzers; f++) {
    int fd = sv.Dial();
    if (rnd(4) != 0) { // most get in, so their later frames reach the parser
      uint32_t proc = (uint32_t)f;
      std::string secret(kSecret, SKN_PMI_SECRET_LEN);
      if (rnd(3) == 0) secret[rnd(SKN_PMI_SECRET_LEN)] ^= 1;
      sv.Frame(fd, SKN_PMI_HELLO, std::string((const char *)&proc, 4) + secret);
    }
    for (unsigned k = rnd(6); k > 0; k--) {
      std::string body;
      for (unsigned b = rnd(80); b > 0; b--) body += (char)rnd(256);
      uint8_t op = rnd(2) ? (uint8_t)(1 + rnd(6)) : (uint8_t)rnd(256);
      if (op == SKN_PMI_ABORT) op = SKN_PMI_FENCE; // an abort would end the job: not junk
      if (rnd(5) == 0) { // a lying length
        uint32_t len = rnd(2) ? (uint32_t)rnd(1u << 31) : 0;
        sv.Send(fd, &len, 4);
      } else {
        sv.Frame(fd, op, body);
      }
    }
    close(fd);
    sv.Pump(1);
  }
  sv.Pump();
  sv.lenient_ = false;
  EXPECT_EQ(sv.abort_.proc, -1);
  // The real process is still served, and no fuzzer's put was published (no fence can
  // complete while they are gone without joining).
  int c = sv.Join(0);
  sv.Put(c, "key", "value");
  for (uint32_t p = 1; p <= (uint32_t)kFuzzers; p += 7) EXPECT_EQ(sv.Get(c, p, "key"), kMissing);
  EXPECT_EQ(sv.Get(c, 0, "key"), kMissing); // pending until a fence
  close(c);
}

} // namespace
