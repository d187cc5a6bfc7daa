// Report: one compiler-style diagnostic per global of the project's own sources, and
// nm-based warnings for prebuilt libraries.
#include "finder.h"

#include "clang/Basic/SourceManager.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdio>
#include <set>
#include <sys/wait.h>

using namespace clang;

namespace skn {

static const char *actionText(const GlobalRec &g) {
  switch (g.action) {
    case Action::PrivData: return g.slowPath ? "privatized: per-rank copy made on first use (inline or template: found by address)"
                                             : "privatized: per-rank copy of its initial value";
    case Action::PrivBss: return "privatized: per-rank, zero-initialized, memory only when touched";
    case Action::PrivCtor: return g.localObject ? "privatized: constructed per rank when the rank first passes it, destroyed at rank end"
                                                : "privatized: constructed per rank at rank start, destroyed at rank end";
    case Action::PrivTls: return "privatized: per rank and per thread";
    case Action::KeepConst: return "left shared";
    case Action::KeepShared: return "left shared";
    case Action::Error: return "cannot be privatized";
  }
  return "";
}

static std::string where(SourceManager &sm, SourceLocation l) {
  PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(l));
  if (p.isInvalid()) return "";
  return std::string(p.getFilename()) + ":" + std::to_string(p.getLine()) + ":" + std::to_string(p.getColumn());
}

std::vector<Diag> diagnose(ASTContext &ctx, const TUResult &res, bool all) {
  SourceManager &sm = ctx.getSourceManager();
  std::vector<Diag> out;
  std::set<std::string> explained;  // problems told by a global's own line
  for (const GlobalRec &g : res.globals) {
    bool error = g.action == Action::Error;
    if (!error && (!all || !g.def)) continue;  // extern: reported where defined
    const VarDecl *d = g.def ? g.def : g.decl;
    std::string at = where(sm, d->getLocation());
    if (at.empty()) continue;
    std::string size = g.size >= 0 ? std::to_string(g.size) + " bytes" : "size depends on template arguments";
    std::string why = (g.action == Action::KeepConst || g.action == Action::KeepShared) ? " (" + g.why + ")" : "";
    if (error) explained.insert(g.why);
    out.push_back({at + " " + g.name, error,
                   at + ": " + (error ? "error" : "warning") + ": " + g.kind + " '" + g.name + "' of type '" + g.type +
                       "', " + size + ": " + actionText(g) + why + (error ? ": " + g.why : "") + " [skein-privatize]"});
  }
  for (const Problem &p : res.errors) {
    if (explained.count(p.msg)) continue;
    std::string at = where(sm, p.loc);
    if (at.empty()) continue;
    std::string line = at + ": error: " + p.msg + " [skein-privatize]";
    out.push_back({line, true, line});
  }
  return out;
}

// nm types of writable data: D/d initialized, B/b zero, S/s small, V weak object, C common.
static bool mutableType(char t) { return strchr("DdBbSsVC", t) != nullptr; }

int reportLibrary(const std::string &path) {
  std::string cmd = "nm -S --defined-only " + std::string(path.find(".so") != std::string::npos ? "-D " : "") + "'" +
                    path + "' 2>&1";
  FILE *f = popen(cmd.c_str(), "r");
  if (!f) {
    llvm::errs() << path << ": error: cannot run nm\n";
    return 1;
  }
  char line[4096];
  int n = 0;
  std::string out;
  while (fgets(line, sizeof line, f)) {
    // "addr size type name" or "addr type name"
    char a[64], b[64], c[64], name[2048];
    int k = sscanf(line, "%63s %63s %63s %2047s", a, b, c, name);
    char type;
    std::string sz = "?";
    if (k == 4 && strlen(c) == 1) {
      type = c[0];
      sz = std::to_string(strtoull(b, nullptr, 16));
    } else if (k >= 3 && strlen(b) == 1) {
      type = b[0];
      snprintf(name, sizeof name, "%s", c);
    } else {
      continue;
    }
    if (!mutableType(type)) continue;
    std::string nm = name;
    // the toolchain's, not the library's state; __odr_asan.X: ASan's one-byte ODR
    // indicator of each global of a library built with -fsanitize=address
    if (nm.rfind("_IO_", 0) == 0 || nm == "__bss_start" || nm == "_edata" || nm == "_end" || nm.rfind("__TMC", 0) == 0 ||
        nm == "__dso_handle" || nm.rfind("__start_", 0) == 0 || nm.rfind("__stop_", 0) == 0 ||
        nm.rfind("__odr_asan", 0) == 0)
      continue;
    out += path + ": warning: prebuilt library defines mutable global '" + nm + "' (nm type " + type + ", " + sz +
           " bytes): shared by all ranks of a process, cannot be privatized [skein-privatize]\n";
    n++;
  }
  int rc = pclose(f);
  if (rc != 0 && n == 0) {
    llvm::errs() << path << ": error: nm failed\n";
    return 1;
  }
  llvm::outs() << out;
  return 0;
}

}  // namespace skn
