// Precompiled system headers (pch.h). A served request whose source starts with
// `#include <...>` lines looks for DIR/<key>.pch, the key covering the prefix's text, the
// compile flags and the directory. The parse then loads the headers from it (-include-pch)
// instead of parsing them: the source's own #include lines find the headers' guards defined
// and skip them. Nothing the privatizer decides comes from these headers (system headers
// cannot name the program's globals), and a PCH is only made when every header the prefix
// enters is a system header. The first request of a key builds it after its reply; Clang
// checks the headers' sizes and dates when it loads one, and main.cpp parses again without
// it whenever a parse with it fails.
#include "pch.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA1.h"
#include "llvm/Support/raw_ostream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

using namespace clang;
using namespace clang::tooling;

namespace skn {

std::string systemPrefix(llvm::StringRef text) {
  size_t pos = 0, end = 0;
  bool inComment = false;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == llvm::StringRef::npos) eol = text.size();
    llvm::StringRef line = text.slice(pos, eol).rtrim(" \t\r\f\v");
    if (line.endswith("\\")) break;  // continued lines: not worth reading
    if (inComment) {
      size_t c = line.find("*/");
      if (c == llvm::StringRef::npos) {
        pos = eol + 1;
        continue;
      }
      line = line.substr(c + 2);
      inComment = false;
    }
    line = line.ltrim(" \t\f\v");
    if (line.startswith("/*")) {
      size_t c = line.find("*/", 2);
      if (c == llvm::StringRef::npos) inComment = true;
      else if (!line.substr(c + 2).trim().empty()) break;  // a comment, then something
      pos = eol + 1;
      continue;
    }
    if (line.empty() || line.startswith("//")) {
      pos = eol + 1;
      continue;
    }
    // #include <name>, optionally followed by a // comment
    if (!line.consume_front("#")) break;
    line = line.ltrim(" \t");
    if (!line.consume_front("include")) break;
    line = line.ltrim(" \t");
    if (!line.consume_front("<")) break;
    size_t close = line.find('>');
    if (close == llvm::StringRef::npos || close == 0) break;
    llvm::StringRef after = line.substr(close + 1).ltrim(" \t");
    if (!after.empty() && !after.startswith("//")) break;
    pos = eol + 1;
    end = std::min(pos, text.size());
  }
  return text.substr(0, end).str();
}

bool planPch(const std::string &dir, const std::string &file, const std::vector<std::string> &cmd, PchPlan &plan) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf = llvm::MemoryBuffer::getFile(file);
  if (!buf) return false;
  plan.prefix = systemPrefix((*buf)->getBuffer());
  if (plan.prefix.empty()) return false;
  // The command without the tool's name, the input and what names outputs (dependency
  // files): the same PCH serves every source compiled with the same flags.
  plan.args.clear();
  for (size_t i = 1; i < cmd.size(); i++) {
    llvm::StringRef a = cmd[i];
    if (a == file || (i + 1 == cmd.size() && !a.startswith("-"))) continue;
    if (a.startswith("-include") || a.startswith("--include") || a.startswith("-imacros") ||
        a.startswith("--imacros"))
      return false;  // text parsed before the prefix: the PCH would change the order
    if (a == "-o" || a == "-MF" || a == "-MT" || a == "-MQ") {
      i++;
      continue;
    }
    if (a.startswith("-o") || a.startswith("-MF") || a.startswith("-MT") || a.startswith("-MQ") || a == "-MD" ||
        a == "-MMD" || a == "-MP" || a == "-M" || a == "-MM")
      continue;
    plan.args.push_back(a.str());
  }
  llvm::SmallString<256> cwd;
  llvm::sys::fs::current_path(cwd);
  llvm::SHA1 h;
  h.update(cwd.str());
  h.update(llvm::StringRef("\0", 1));
  h.update(plan.prefix);
  for (const std::string &a : plan.args) {
    h.update(llvm::StringRef("\0", 1));
    h.update(a);
  }
  llvm::StringRef ext = llvm::sys::path::extension(file);
  if (ext.empty()) ext = ".c";
  h.update(ext);
  std::string key = llvm::toHex(h.final(), true).substr(0, 32);
  plan.pch = dir + "/" + key + ".pch";
  plan.source = dir + "/" + key + ext.str();
  plan.refused = dir + "/" + key + ".user";
  return true;
}

namespace {

// Did the prefix enter a file that is not a system header?
class UserFiles : public PPCallbacks {
 public:
  UserFiles(SourceManager &s, bool &u) : sm(s), user(u) {}
  void FileChanged(SourceLocation loc, FileChangeReason reason, SrcMgr::CharacteristicKind type, FileID) override {
    if (reason != EnterFile || type != SrcMgr::C_User) return;
    FileID f = sm.getFileID(loc);
    if (f.isValid() && f != sm.getMainFileID() && sm.getFileEntryForID(f)) user = true;
  }

 private:
  SourceManager &sm;
  bool &user;
};

class PchAction : public GeneratePCHAction {
 public:
  PchAction(const std::string &o, bool &u) : out(o), user(u) {}
  bool BeginSourceFileAction(CompilerInstance &ci) override {
    ci.getFrontendOpts().OutputFile = out;
    ci.getFrontendOpts().SkipFunctionBodies = true;  // system headers only, as in the parse
    ci.getPreprocessor().addPPCallbacks(std::make_unique<UserFiles>(ci.getSourceManager(), user));
    return GeneratePCHAction::BeginSourceFileAction(ci);
  }

 private:
  std::string out;
  bool &user;
};

class PchFactory : public FrontendActionFactory {
 public:
  PchFactory(const std::string &o, bool &u) : out(o), user(u) {}
  std::unique_ptr<FrontendAction> create() override { return std::make_unique<PchAction>(out, user); }

 private:
  std::string out;
  bool &user;
};

}  // namespace

void buildPch(const PchPlan &plan, const std::function<void(ClangTool &)> &adjust) {
  // one builder per key; a lock left by a builder that died is taken over after a minute
  std::string lock = plan.pch + ".lock";
  int fd = open(lock.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    struct stat st;
    if (stat(lock.c_str(), &st) != 0 || time(nullptr) - st.st_mtime < 60) return;
    unlink(lock.c_str());
    if ((fd = open(lock.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) return;
  }
  close(fd);
  std::error_code ec;
  if (llvm::sys::fs::exists(plan.pch)) {  // built meanwhile: its source must keep its date
    unlink(lock.c_str());
    return;
  }
  {
    llvm::raw_fd_ostream os(plan.source, ec, llvm::sys::fs::OF_Text);
    if (!ec) os << plan.prefix;
  }
  if (!ec) {
    llvm::SmallString<256> cwd;
    llvm::sys::fs::current_path(cwd);
    FixedCompilationDatabase db(cwd, plan.args);
    ClangTool tool(db, {plan.source});
    adjust(tool);
    IgnoringDiagConsumer quiet;
    tool.setDiagnosticConsumer(&quiet);
    bool user = false;
    PchFactory factory(plan.pch, user);
    int rc = tool.run(&factory);
    if (rc != 0 || user) llvm::sys::fs::remove(plan.pch);
    if (rc == 0 && user) {
      llvm::raw_fd_ostream mark(plan.refused, ec, llvm::sys::fs::OF_Text);
      mark << "the system prefix enters a project header: no PCH\n";
    }
  }
  unlink(lock.c_str());
}

}  // namespace skn
