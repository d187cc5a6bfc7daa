// `skein-privatize --serve SOCKET`: the compile server of skein-privatize-client (client.c,
// where the protocol and the socket's place are described). Listens, and hands each
// request to a worker: an idle one, else a new one forked from the server. A worker runs the
// tool's main as if it had been exec'd by the client (the client's directory, environment,
// umask and stdio), then waits for its next request. The fork keeps the loaded and
// relocated Clang and LLVM libraries and the warm-up's state; keeping the worker keeps the
// pages the previous parse touched (a new child would fault them all in again, which
// was most of a request's CPU time). One request at a time per worker: concurrent requests
// never share a process. The tool resets its own state at each run (main.cpp). The server
// exits after SKEIN_PRIVATIZE_SERVER_IDLE seconds (default 20) without a request.
#include "server.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

extern "C" {
#include "server_proto.h"
}

std::function<void()> skn::afterReply;
bool skn::reused = false;

namespace {

int g_conn = -1;
std::string g_pchDir;  // this server's cache (pch.h), removed when it exits

bool recvAll(int fd, void *p, size_t n) {
  char *c = static_cast<char *>(p);
  while (n) {
    ssize_t k = recv(fd, c, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

void sendStatus(int fd, int32_t status) {
  const char *c = reinterpret_cast<const char *>(&status);
  size_t n = sizeof status;
  while (n) {
    ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return;
    c += k;
    n -= static_cast<size_t>(k);
  }
}

// A connection passed between the server and a worker (one byte with the fd attached).
bool sendFd(int chan, int fd) {
  char control[CMSG_SPACE(sizeof fd)] = {};
  char byte = 'R';
  iovec iov = {&byte, 1};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof fd);
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  ssize_t k;
  while ((k = sendmsg(chan, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  return k == 1;
}

int recvFd(int chan) {
  int fd = -1;
  char control[CMSG_SPACE(sizeof fd)];
  char byte;
  iovec iov = {&byte, 1};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t k;
  while ((k = recvmsg(chan, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  cmsghdr *c = CMSG_FIRSTHDR(&msg);
  if (k != 1 || !c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof fd)) return -1;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

// A crash of the tool is reported to the client as the signal, which it re-raises.
void onCrash(int sig) {
  if (g_conn >= 0) sendStatus(g_conn, 256 + sig);
  signal(sig, SIG_DFL);
  raise(sig);
}

// One request in a worker: the client's stdio, directory, umask and environment for the
// tool's run; the client is answered as soon as it returns, then the later-requests work
// runs (afterReply, its stdio on /dev/null). On return the worker holds nothing of the
// client's: stdio on /dev/null, directory "/", the connection closed. A malformed request
// ends the worker (only a foreign client sends one).
void handle(int conn, skn::ToolMain run) {
  skn_privd_request req;
  int fds[3] = {-1, -1, -1};
  char control[CMSG_SPACE(sizeof fds)];
  iovec iov = {&req, sizeof req};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t k;
  while ((k = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL)) < 0 && errno == EINTR) {
  }
  cmsghdr *c = CMSG_FIRSTHDR(&msg);
  ucred cred;
  socklen_t clen = sizeof cred;
  if (k != static_cast<ssize_t>(sizeof req) || req.magic != SKN_PRIVD_MAGIC || req.len > (64u << 20) ||
      req.argc < 1 || !c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof fds) ||
      getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 || cred.uid != getuid())
    _exit(1);
  memcpy(fds, CMSG_DATA(c), sizeof fds);
  // the environment of the previous request points into its buffer
  static char *buf;
  clearenv();
  free(buf);
  buf = static_cast<char *>(malloc(req.len + 1));
  if (!buf || !recvAll(conn, buf, req.len)) _exit(1);
  buf[req.len] = 0;
  std::vector<char *> strs;
  for (char *p = buf; p < buf + req.len; p += strlen(p) + 1) strs.push_back(p);
  if (strs.size() != 1 + req.argc + req.nenv) _exit(1);
  if (send(conn, "S", 1, MSG_NOSIGNAL) != 1) _exit(1);
  for (int i = 0; i < 3; i++) {
    dup2(fds[i], i);
    close(fds[i]);
  }
  if (chdir(strs[0]) != 0) {
    fprintf(stderr, "skein-privatize: cannot enter %s: %s\n", strs[0], strerror(errno));
    sendStatus(conn, 1);
    _exit(1);
  }
  umask(static_cast<mode_t>(req.umask));
  for (uint32_t i = 0; i < req.nenv; i++) putenv(strs[1 + req.argc + i]);
  const char *pch = getenv("SKEIN_PRIVATIZE_PCH");
  if (!g_pchDir.empty() && !(pch && !strcmp(pch, "0"))) setenv("SKEIN_PRIVATIZE_PCH_DIR", g_pchDir.c_str(), 1);
  std::vector<const char *> argv(strs.begin() + 1, strs.begin() + 1 + req.argc);
  argv.push_back(nullptr);
  g_conn = conn;
  skn::afterReply = nullptr;
  int rc = run(static_cast<int>(req.argc), argv.data());
  fflush(stdout);
  fflush(stderr);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) _exit(1);
  // the client's pipes must not stay open behind it (a reader waits for their end)
  for (int i = 0; i < 3; i++) dup2(null, i);
  sendStatus(conn, rc);
  g_conn = -1;
  close(conn);
  if (skn::afterReply) skn::afterReply();
  skn::afterReply = nullptr;
  close(null);
  if (chdir("/") != 0) _exit(1);
}

// A worker (the server's child): serves requests one after the other, the first `conn`,
// then each one the server passes over `chan` when the worker has said it is idle. Ends
// when the server closes `chan` or after kMaxRequests (what leaks from one parse to the
// next stays bounded).
[[noreturn]] void work(int chan, int conn, skn::ToolMain run) {
  constexpr int kMaxRequests = 100;
  signal(SIGPIPE, SIG_DFL);
  signal(SIGCHLD, SIG_DFL);
  skn::reused = true;
  // Grow the heap in large steps and never give it back: a worker's next request finds
  // its pages mapped (page faults and munmap were most of the kernel time of a request)
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 32 << 20);
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) signal(sig, onCrash);
  for (int served = 1;; served++) {
    handle(conn, run);
    if (served == kMaxRequests || send(chan, "I", 1, MSG_NOSIGNAL) != 1) _exit(0);
    conn = recvFd(chan);
    if (conn < 0) _exit(0);
  }
}

void removeDir(const std::string &dir) {
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlink((dir + "/" + e->d_name).c_str());
    closedir(d);
  }
  rmdir(dir.c_str());
}

double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

int skn::serve(const char *path, ToolMain run, void (*warm)()) {
  if (chdir("/") != 0) return 1;
  signal(SIGPIPE, SIG_IGN);
  int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a = {};
  a.sun_family = AF_UNIX;
  if (ls < 0 || strlen(path) >= sizeof a.sun_path) return 1;
  strcpy(a.sun_path, path);
  struct stat st;
  if (bind(ls, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || stat(path, &st) != 0 || listen(ls, 128) != 0)
    return 1;
  const ino_t ino = st.st_ino;
  // per server (a new server may take the socket's name while this one finishes)
  g_pchDir = std::string(path) + ".pch." + std::to_string(getpid());
  if (mkdir(g_pchDir.c_str(), 0700) != 0) g_pchDir.clear();
  warm();  // requests queue meanwhile
  malloc_trim(0);  // workers get fresh pages rather than copies of the server's free ones
  const char *e = getenv("SKEIN_PRIVATIZE_SERVER_IDLE");
  double idle = e && *e ? atof(e) : 20.0;
  struct Worker {
    int chan;  // the server's end of the worker's socket pair
    bool idle;
  };
  std::vector<Worker> workers;
  int busy = 0;
  double last = now();
  auto drop = [&](size_t i) {
    if (!workers[i].idle) busy--;
    close(workers[i].chan);
    workers.erase(workers.begin() + static_cast<long>(i));
  };
  // To an idle worker, else to a new one (forked from this warm process).
  auto dispatch = [&](int conn) {
    last = now();
    for (size_t i = workers.size(); i-- > 0;) {
      if (!workers[i].idle) continue;
      if (sendFd(workers[i].chan, conn)) {
        workers[i].idle = false;
        busy++;
        close(conn);
        return;
      }
      drop(i);  // gone (its requests' limit, a crash): try another
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
      close(conn);  // the client runs the tool in-process
      return;
    }
    pid_t p = fork();
    if (p == 0) {
      close(ls);
      close(sv[0]);
      for (const Worker &w : workers) close(w.chan);
      work(sv[1], conn, run);
    }
    close(sv[1]);
    close(conn);
    if (p < 0) {
      close(sv[0]);
      return;
    }
    workers.push_back({sv[0], false});
    busy++;
  };
  auto reap = [] {
    int status;
    while (waitpid(-1, &status, WNOHANG) > 0) {
    }
  };
  for (;;) {
    reap();
    std::vector<pollfd> pf{{ls, POLLIN, 0}};
    for (const Worker &w : workers) pf.push_back({w.chan, POLLIN, 0});
    int n = poll(pf.data(), pf.size(), 200);
    if (n > 0) {
      // a worker that is idle again ('I'), or gone
      for (size_t i = pf.size() - 1; i > 0; i--) {
        if (!pf[i].revents) continue;
        char b;
        if (recv(workers[i - 1].chan, &b, 1, MSG_DONTWAIT) == 1 && b == 'I') {
          if (!workers[i - 1].idle) busy--;
          workers[i - 1].idle = true;
          last = now();
        } else {
          drop(i - 1);
        }
      }
      if (pf[0].revents) {
        int conn = accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
        if (conn >= 0) dispatch(conn);
      }
      continue;
    }
    if (busy == 0 && now() - last >= idle) break;
  }
  // Idle: take the name away (unless another server owns it now), then serve whoever
  // connected before that; a client that connects later starts a new server. Workers end
  // when their channel closes, after the request they hold.
  if (stat(path, &st) == 0 && st.st_ino == ino) unlink(path);
  fcntl(ls, F_SETFL, O_NONBLOCK);
  for (int conn; (conn = accept4(ls, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) dispatch(conn);
  close(ls);
  for (const Worker &w : workers) close(w.chan);
  for (int status; waitpid(-1, &status, 0) > 0 || errno == EINTR;) {
  }
  if (!g_pchDir.empty()) removeDir(g_pchDir);
  return 0;
}
