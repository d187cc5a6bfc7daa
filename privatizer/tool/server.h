// The compile server behind skein-privatize-client (server.cpp, client.c).
#pragma once

namespace skn {
using ToolMain = int (*)(int argc, const char **argv);
// Serves requests on the Unix socket `path` until idle; `warm` runs once before the first
// request (its state is inherited by every request's child). Returns the exit code.
int serve(const char *path, ToolMain run, void (*warm)());
}  // namespace skn
