// Precompiled system headers for served requests (the compile server's cache): most of a
// request's parse is the system headers a source includes first (<mpi.h>, <stdio.h>...),
// the same for every source of a code base. See pch.cpp.
#pragma once

#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include <functional>
#include <string>
#include <vector>

namespace skn {

// The system-header prefix of a source: its leading `#include <...>` lines with the
// blank lines and comments among them, up to the first line that is anything else; empty
// when the source does not start so.
std::string systemPrefix(llvm::StringRef text);

// A cache entry: DIR/<key>.pch for this prefix, compile command and directory.
struct PchPlan {
  std::string pch;     // the precompiled header (exists when usable)
  std::string source;  // the prefix as a source file, what the PCH is built from
  std::string refused; // marker: the prefix reaches a project header, never precompiled
  std::string prefix;
  std::vector<std::string> args;  // the compile command, without input and outputs
};

// Plans the cache entry for `file` compiled with `args` (the compilation database's
// command); false when the source has no system prefix or the flags rule a PCH out
// (-include, -imacros, a PCH of the user's own).
bool planPch(const std::string &dir, const std::string &file, const std::vector<std::string> &args, PchPlan &plan);

// Builds plan.pch (skipping function bodies, as the parse does for system headers), unless
// another request is building it; when the prefix enters a project header, writes the
// refusal marker instead. `adjust` adds the tool's own arguments, as for the parse.
void buildPch(const PchPlan &plan, const std::function<void(clang::tooling::ClangTool &)> &adjust);

}  // namespace skn
