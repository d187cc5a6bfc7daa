/* skein-privatize-client: runs `skein-privatize ARGS` through a compile server that keeps
 * libclang loaded, so that a -fprivatize build does not pay the loading of the Clang and
 * LLVM shared libraries (about 0.14 s of CPU) for every source.
 *
 *   skein-privatize-client TOOL ARGS...     (what mpicc -fprivatize runs)
 *
 * The server is TOOL itself (`TOOL --serve SOCKET`, see server.cpp), started on demand by
 * the first client and shared by every build of this user with this tool (the socket is
 * $TMPDIR/skein-priv-<uid>/<key>.sock, the key from the tool's path, inode, size and
 * mtime: a rebuilt tool gets a new server). It forks a child per request, which runs the
 * tool's main in this client's directory, environment, umask and stdin/stdout/stderr (passed
 * over the socket), so concurrent requests (make -j, several builds) do not share state.
 * The server exits when idle. Whenever the server cannot be reached or started, or when
 * SKEIN_PRIVATIZE_SERVER=0, the client execs TOOL in-process: the result is the same. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "server_proto.h"

extern char **environ;

static int fallback(char **argv) {
  execv(argv[1], argv + 1);
  fprintf(stderr, "skein-privatize-client: cannot run %s: %s\n", argv[1], strerror(errno));
  return 127;
}

/* The socket's path, or 0 when none can be made safely (the directory must be ours). */
static int socket_path(const char *tool, char *path, size_t size, char *lock, size_t lsize) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
  if ((size_t)snprintf(dir, sizeof dir, "%s/skein-priv-%u", tmp, (unsigned)getuid()) >= sizeof dir - 24) {
    tmp = "/tmp";
    snprintf(dir, sizeof dir, "%s/skein-priv-%u", tmp, (unsigned)getuid());
  }
  if (mkdir(dir, 0700) != 0 && errno != EEXIST) return 0;
  struct stat st;
  if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077)) return 0;
  char real[4096];
  struct stat ts;
  if (!realpath(tool, real) || stat(real, &ts) != 0) return 0;
  uint64_t h = 1469598103934665603ull; /* FNV-1a of the path, then the file's identity */
  for (const char *c = real; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
  uint64_t id[4] = {(uint64_t)ts.st_ino, (uint64_t)ts.st_size, (uint64_t)ts.st_mtim.tv_sec,
                    (uint64_t)ts.st_mtim.tv_nsec};
  for (int i = 0; i < 4; i++) h = (h ^ id[i]) * 1099511628211ull;
  snprintf(path, size, "%s/%016llx.sock", dir, (unsigned long long)h);
  snprintf(lock, lsize, "%s/%016llx.lock", dir, (unsigned long long)h);
  return 1;
}

static int try_connect(const char *path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) return fd;
  int e = errno;
  close(fd);
  errno = e;
  return -1;
}

/* Starts `tool --serve path` as a daemon (its own session, stdio on /dev/null). */
static void start_server(const char *tool, const char *path) {
  pid_t p = fork();
  if (p < 0) return;
  if (p == 0) {
    setsid();
    if (fork() != 0) _exit(0);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
      if (null > 2) close(null);
    }
    close_range(3, ~0u, 0); /* make's jobserver pipe, a caller's output pipe */
    signal(SIGHUP, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    /* every symbol bound once in the server, not lazily again in each request's child */
    setenv("LD_BIND_NOW", "1", 1);
    execl(tool, tool, "--serve", path, (char *)0);
    _exit(127);
  }
  while (waitpid(p, 0, 0) < 0 && errno == EINTR) {
  }
}

/* A connection to a running server, started if none answers; -1 if that fails. */
static int connect_server(const char *tool, const char *path, const char *lockpath) {
  int fd = try_connect(path);
  if (fd >= 0) return fd;
  /* One client starts the server; the others wait on the lock, then find it. */
  int lk = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lk < 0) return -1;
  while (flock(lk, LOCK_EX) != 0 && errno == EINTR) {
  }
  fd = try_connect(path);
  if (fd < 0 && (errno == ECONNREFUSED || errno == ENOENT)) {
    unlink(path); /* a server that died without removing it */
    start_server(tool, path);
    struct timespec pause = {0, 5 * 1000 * 1000};
    for (int i = 0; i < 1000 && fd < 0; i++) { /* up to ~5 s on a loaded machine */
      fd = try_connect(path);
      if (fd < 0) nanosleep(&pause, 0);
    }
  }
  close(lk); /* releases the lock */
  return fd;
}

static int send_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return 0;
    c += k;
    n -= (size_t)k;
  }
  return 1;
}

static int recv_all(int fd, void *p, size_t n) {
  char *c = p;
  while (n) {
    ssize_t k = recv(fd, c, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return 0;
    c += k;
    n -= (size_t)k;
  }
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: skein-privatize-client TOOL [ARGS...]\n");
    return 2;
  }
  const char *env = getenv("SKEIN_PRIVATIZE_SERVER");
  char path[sizeof(((struct sockaddr_un *)0)->sun_path)], lockpath[4096];
  if ((env && !strcmp(env, "0")) || !socket_path(argv[1], path, sizeof path, lockpath, sizeof lockpath))
    return fallback(argv);
  int fd = connect_server(argv[1], path, lockpath);
  if (fd < 0) return fallback(argv);

  /* The request: the header, then NUL-terminated strings (directory, arguments from
   * TOOL on, environment); fds 0, 1 and 2 ride on the header. */
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return fallback(argv);
  size_t len = strlen(cwd) + 1;
  uint32_t nenv = 0;
  for (int i = 1; i < argc; i++) len += strlen(argv[i]) + 1;
  for (char **e = environ; *e; e++, nenv++) len += strlen(*e) + 1;
  mode_t mask = umask(0);
  umask(mask);
  struct skn_privd_request req = {SKN_PRIVD_MAGIC, (uint32_t)len, (uint32_t)(argc - 1), nenv, (uint32_t)mask};
  char *buf = malloc(len), *p = buf;
  if (!buf) return fallback(argv);
  p = stpcpy(p, cwd) + 1;
  for (int i = 1; i < argc; i++) p = stpcpy(p, argv[i]) + 1;
  for (char **e = environ; *e; e++) p = stpcpy(p, *e) + 1;

  int fds[3] = {0, 1, 2};
  char control[CMSG_SPACE(sizeof fds)];
  memset(control, 0, sizeof control);
  struct iovec iov = {&req, sizeof req};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof fds);
  memcpy(CMSG_DATA(c), fds, sizeof fds);
  ssize_t k;
  while ((k = sendmsg(fd, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  char started = 0;
  /* A server that goes away before it started on the request (it was exiting, idle):
   * nothing was done, do it in-process. */
  bool sent = k == (ssize_t)sizeof req && send_all(fd, buf, len);
  free(buf);
  if (!sent || !recv_all(fd, &started, 1) || started != 'S') {
    close(fd);
    return fallback(argv);
  }
  int32_t status;
  if (!recv_all(fd, &status, sizeof status)) {
    fprintf(stderr, "skein-privatize-client: the privatizer's server lost the request for %s\n",
            argc > 2 ? argv[argc - 1] : argv[1]);
    return 1;
  }
  if (status >= 256) { /* the tool died of a signal: die of the same one */
    signal(status - 256, SIG_DFL);
    raise(status - 256);
    return 128 + (status - 256);
  }
  return status;
}
