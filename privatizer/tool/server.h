// The compile server behind skein-privatize-client (server.cpp, client.c).
#pragma once

#include <functional>

namespace skn {
using ToolMain = int (*)(int argc, const char **argv);
// Serves requests on the Unix socket `path` until idle; `warm` runs once before the first
// request (its state is inherited by every request's child). Returns the exit code.
// Requests are run one at a time by worker processes that serve many (server.cpp).
// Each request's worker tells its clients they can go on as soon as `run` returns, then
// runs this if the tool set it (work for later requests: pch.h), its stdio on /dev/null.
// Served requests find the cache directory for that work in SKEIN_PRIVATIZE_PCH_DIR.
int serve(const char *path, ToolMain run, void (*warm)());
extern std::function<void()> afterReply;
// True in a worker: the process outlives the request (memory must be freed, state reset).
extern bool reused;
}  // namespace skn
