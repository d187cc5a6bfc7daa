// skein-privatize finder: walks one translation unit and records every global of the
// project's own sources (kind, type, size, the action to take) and every use of a
// privatized one. Analysis only: rewrite.cpp and report.cpp turn records into output.
#pragma once

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/Basic/SourceLocation.h"
#include <map>
#include <set>
#include <string>
#include <vector>

namespace skn {

// An #include seen by the preprocessor (for redirecting project headers to their
// rewritten copies).
struct IncludeRec {
  clang::SourceLocation hash;
  clang::CharSourceRange nameRange;
  std::string target;  // resolved path ("" when not found)
  bool system;
};

struct Options {
  std::set<std::string> shared;  // names given with --shared (and #pragma skein shared)
  bool headers = false;           // rewrite project headers too (--header-dir)
  bool fcommon = false;           // -fcommon: C tentative definitions merge across files
  std::vector<IncludeRec> includes;
  std::vector<std::pair<clang::FileID, bool>> entered;  // files entered, and whether system
};

enum class Action {
  PrivData,    // per rank, initial image copied (section skn_pdata)
  PrivBss,     // per rank, zero-initialized, demand-paged (section skn_pbss)
  PrivCtor,    // per rank, C++ object constructed at rank start, destroyed at rank end
  PrivTls,     // thread_local: per rank and per thread
  KeepConst,   // left alone: const
  KeepShared,  // left alone: marked shared
  Error,       // cannot be handled: see `why`
};

struct GlobalRec {
  const clang::VarDecl *decl;  // canonical declaration
  const clang::VarDecl *def;   // definition in this TU, or null
  std::string name, kind, type;
  long long size = -1;
  Action action = Action::Error;
  std::string why;             // reason for Error / Keep*
  bool needsHook = false;      // initializer uses privatized globals: re-run per rank
  bool slowPath = false;       // template instantiations: per-rank copy found by address
  bool weak = false;           // C tentative definition (`int x;`): weak, so that copies in several files merge as -fcommon would
  bool localObject = false;    // C++ static local with a constructor: per-rank object made on first use
};

struct UseRec {
  const clang::Expr *expr;     // DeclRefExpr or MemberExpr
  const clang::VarDecl *var;   // canonical
};

struct Problem {
  clang::SourceLocation loc;
  std::string msg;
};

struct TUResult {
  std::vector<GlobalRec> globals;                 // in source order of first sight
  std::map<const clang::VarDecl *, size_t> index;  // canonical decl -> globals[i]
  std::vector<UseRec> uses;
  std::vector<UseRec> initRefs;  // uses inside static initializers (for per-rank hooks)
  std::vector<Problem> errors;
  bool isPrivatized(const clang::VarDecl *v) const;
};

// Returns the analysis of a parsed translation unit.
TUResult findGlobals(clang::ASTContext &ctx, const Options &opt);

// Rewrites the main file (and with opt.headers, every project header it includes, into
// headers: original absolute path -> text); returns false on failure, with the problems
// added to res.errors and the variables concerned turned into errors.
bool rewriteMainFile(clang::ASTContext &ctx, TUResult &res, const Options &opt, const std::string &headerDir,
                     std::string &out, std::map<std::string, std::string> &headers);

// The privatizer's decisions as gcc-style diagnostics, one line each ("file:line:col:
// error: ... [skein-privatize]"): every refused global and every other problem, and with
// all, a warning for each global this unit defines. --report prints all of them and a
// -fprivatize build prints the errors: the same words for the same decisions.
struct Diag {
  std::string key;   // file:line:col and name: one line per variable across units
  bool error;
  std::string text;  // the whole line, without newline
};
std::vector<Diag> diagnose(clang::ASTContext &ctx, const TUResult &res, bool all);

// Warns about mutable globals that the prebuilt library `path` defines (nm).
int reportLibrary(const std::string &path);

}  // namespace skn
