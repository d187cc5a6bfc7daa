// skein-privatize: report or rewrite the mutable globals of a C/C++ translation unit so
// that each MPI rank (a thread in Skein) gets its own copy. See privatizer/README.md.
//   skein-privatize --report a.c b.c -- <compile flags>     (or -p <build dir>)
//   skein-privatize a.c -o a.priv.c -- <compile flags>
#include "finder.h"
#include "pch.h"
#include "server.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/Driver/Options.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Lex/Pragma.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CommonOptionsParser.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Option/ArgList.h"
#include "llvm/Option/OptTable.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/X86TargetParser.h"

#include <cstring>

using namespace clang;
using namespace clang::tooling;

static llvm::cl::OptionCategory Cat("skein-privatize options");
static llvm::cl::opt<bool> Report("report", llvm::cl::desc("List the globals and what will be done with them"),
                                  llvm::cl::cat(Cat));
static llvm::cl::opt<std::string> Output("o", llvm::cl::desc("Write the privatized source here (one input only)"),
                                         llvm::cl::value_desc("file"), llvm::cl::cat(Cat));
static llvm::cl::list<std::string> Shared("shared", llvm::cl::desc("Globals to leave shared (comma-separated names)"),
                                          llvm::cl::CommaSeparated, llvm::cl::cat(Cat));
static llvm::cl::opt<std::string> HeaderDir(
    "header-dir", llvm::cl::desc("Also rewrite the project headers the file includes, into DIR/<absolute path>"),
    llvm::cl::value_desc("dir"), llvm::cl::cat(Cat));
static llvm::cl::list<std::string> Libs("lib", llvm::cl::desc("Prebuilt library to check with nm (report mode)"),
                                        llvm::cl::cat(Cat));

namespace {

// #pragma skein shared(a, b)
class SharedPragma : public PragmaHandler {
 public:
  explicit SharedPragma(std::set<std::string> &s) : PragmaHandler("skein"), names(s) {}
  void HandlePragma(Preprocessor &pp, PragmaIntroducer, Token &first) override {
    Token t;
    pp.Lex(t);
    if (!t.is(tok::identifier) || t.getIdentifierInfo()->getName() != "shared") return bad(pp, t);
    pp.Lex(t);
    if (!t.is(tok::l_paren)) return bad(pp, t);
    for (;;) {
      pp.Lex(t);
      if (t.is(tok::identifier)) names.insert(t.getIdentifierInfo()->getName().str());
      else if (t.is(tok::r_paren)) break;
      else if (!t.is(tok::comma) && !t.is(tok::coloncolon)) return bad(pp, t);
      if (t.is(tok::eod)) return bad(pp, t);
    }
  }

 private:
  std::set<std::string> &names;
  void bad(Preprocessor &pp, Token &t) {
    DiagnosticsEngine &d = pp.getDiagnostics();
    d.Report(t.getLocation(), d.getCustomDiagID(DiagnosticsEngine::Error,
                                                "expected '#pragma skein shared(name, ...)'"));
    while (!t.is(tok::eod)) pp.Lex(t);
  }
};

// Records includes and entered files for the header rewriting.
class IncludeLog : public PPCallbacks {
 public:
  IncludeLog(skn::Options &o, SourceManager &s) : opt(o), sm(s) {}
  void InclusionDirective(SourceLocation hash, const Token &, StringRef, bool, CharSourceRange range,
                          OptionalFileEntryRef file, StringRef, StringRef, const Module *,
                          SrcMgr::CharacteristicKind type) override {
    opt.includes.push_back({hash, range, file ? std::string(file->getName()) : std::string(),
                            type != SrcMgr::C_User});
  }
  void FileChanged(SourceLocation loc, FileChangeReason reason, SrcMgr::CharacteristicKind type,
                   FileID) override {
    if (reason != EnterFile) return;
    FileID f = sm.getFileID(loc);
    if (f.isValid() && sm.getFileEntryForID(f)) opt.entered.push_back({f, type != SrcMgr::C_User});
  }

 private:
  skn::Options &opt;
  SourceManager &sm;
};

int g_failures = 0;
bool g_began = false;                    // a parse got past loading its PCH
llvm::raw_ostream *g_err = &llvm::errs();  // the build's messages (held back while a PCH is tried)

// --report over several units: one line per variable (a header's globals are seen by every
// unit that includes it); a variable refused by any unit is listed as refused only.
struct ReportLines {
  std::vector<skn::Diag> lines;
  std::map<std::string, size_t> at;
  void add(const skn::Diag &d) {
    auto it = at.find(d.key);
    if (it == at.end()) {
      at[d.key] = lines.size();
      lines.push_back(d);
    } else if (d.error && !lines[it->second].error) {
      lines[it->second] = d;
    }
  }
} g_report;

class Consumer : public ASTConsumer {
 public:
  explicit Consumer(skn::Options &o) : opt(o) {}
  void Initialize(ASTContext &ctx) override {
    sm = &ctx.getSourceManager();
    g_began = true;
  }
  // System headers cannot use the program's globals: their function bodies are not
  // parsed (Sema still parses the bodies it needs: constexpr, deduced return types).
  bool shouldSkipFunctionBody(Decl *d) override { return sm && sm->isInSystemHeader(d->getLocation()); }
  void HandleTranslationUnit(ASTContext &ctx) override {
    if (ctx.getDiagnostics().hasErrorOccurred()) {
      g_failures++;
      return;
    }
    // The same analysis in both modes: find, then rewrite (the report throws the text
    // away), so that every problem either finds refuses the variable in both.
    skn::TUResult res = skn::findGlobals(ctx, opt);
    std::string out;
    std::map<std::string, std::string> headers;
    bool ok = skn::rewriteMainFile(ctx, res, opt, HeaderDir, out, headers) && res.errors.empty();
    std::vector<skn::Diag> diags = skn::diagnose(ctx, res, Report);
    if (Report) {
      for (const skn::Diag &d : diags) g_report.add(d);
      if (!ok) g_failures++;
      return;
    }
    for (const skn::Diag &d : diags) *g_err << d.text << "\n";
    if (!ok) {
      g_failures++;
      return;
    }
    for (auto &[path, text] : headers) {
      std::string dest = HeaderDir + path;
      std::error_code ec = llvm::sys::fs::create_directories(llvm::sys::path::parent_path(dest));
      llvm::raw_fd_ostream hs(dest, ec, llvm::sys::fs::OF_Text);
      if (ec) {
        *g_err << "skein-privatize: cannot write " << dest << ": " << ec.message() << "\n";
        g_failures++;
        return;
      }
      hs << text;
    }
    if (Output.empty()) {
      llvm::outs() << out;
      return;
    }
    // the wrapper names a directory per source and leaves it to us to make (a process less)
    std::error_code ec;
    StringRef dir = llvm::sys::path::parent_path(Output);
    if (!dir.empty()) llvm::sys::fs::create_directories(dir);  // a failure shows below
    llvm::raw_fd_ostream os(Output, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      *g_err << "skein-privatize: cannot write " << Output << ": " << ec.message() << "\n";
      g_failures++;
      return;
    }
    os << out;
  }

 private:
  skn::Options &opt;
  const SourceManager *sm = nullptr;
};

class Action : public ASTFrontendAction {
 public:
  bool BeginSourceFileAction(CompilerInstance &ci) override {
    opt.shared.insert(Shared.begin(), Shared.end());
    // --report decides as a -fprivatize build, which always rewrites the project headers
    opt.headers = !HeaderDir.empty() || Report;
    opt.fcommon = !ci.getCodeGenOpts().NoCommon;
    ci.getFrontendOpts().SkipFunctionBodies = true;  // only where Consumer says so
    ci.setVerboseOutputStream(*g_err);               // "N errors generated."
    // one unit, then the process ends: no freeing of the AST (as clang -cc1 -disable-free);
    // a server's worker frees it, for its next request to reuse the memory
    if (!Output.empty() && !skn::reused) ci.getFrontendOpts().DisableFree = true;
    ci.getPreprocessor().addPPCallbacks(std::make_unique<IncludeLog>(opt, ci.getSourceManager()));
    ci.getPreprocessor().AddPragmaHandler(new SharedPragma(opt.shared));
    return true;
  }
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &, StringRef) override {
    return std::make_unique<Consumer>(opt);
  }

 private:
  skn::Options opt;
};

// The user compiles with gcc; Clang only parses. Options Clang does not know
// (-fconserve-stack, -ftree-vectorizer-verbose=0, -fipa-pta...), plugins, CPUs it does not
// know and -O levels above 3 are dropped or mapped, so that gcc's flags never stop the
// parse or add messages; -w keeps Clang's warnings (which gcc would not print) quiet, and
// the diagnostics Clang 16 makes errors by default but gcc 12 only warns about stay
// warnings. What is left is what changes the parse: -D, -I, -std, -f(no-)common, -fopenmp...
static CommandLineArguments gccCompatible(const CommandLineArguments &in, StringRef) {
  if (in.empty()) return in;
  std::vector<const char *> argv;
  for (size_t i = 1; i < in.size(); i++) argv.push_back(in[i].c_str());
  const llvm::opt::OptTable &table = clang::driver::getDriverOptTable();
  unsigned missingIndex = 0, missingCount = 0;
  namespace o = clang::driver::options;
  // as the gcc-style driver parses (no cl.exe, Flang or DXC spellings)
  llvm::opt::InputArgList args = table.ParseArgs(
      argv, missingIndex, missingCount, 0,
      o::CLOption | o::CLDXCOption | o::DXCOption | o::NoDriverOption | o::FlangOnlyOption);
  CommandLineArguments out{in[0]};
  for (const llvm::opt::Arg *a : args) {
    const llvm::opt::Option &opt = a->getOption();
    if (opt.matches(o::OPT_UNKNOWN) || opt.matches(o::OPT_fplugin_EQ) || opt.matches(o::OPT_fplugin_arg) ||
        opt.matches(o::OPT_mtune_EQ) || opt.matches(o::OPT_fpass_plugin_EQ))
      continue;
    if (opt.matches(o::OPT_march_EQ) || opt.matches(o::OPT_mcpu_EQ)) {
      StringRef cpu = a->getValue();
      if (cpu != "native" && llvm::X86::parseArchX86(cpu) == llvm::X86::CK_None) continue;
    }
    if (opt.matches(o::OPT_O) && a->getNumValues() == 1) {
      StringRef level = a->getValue();
      unsigned n = 0;
      if (!level.getAsInteger(10, n) && n > 3) {
        out.push_back("-O3");
        continue;
      }
    }
    llvm::opt::ArgStringList rendered;
    a->render(args, rendered);
    for (const char *r : rendered) out.push_back(r);
  }
  for (const char *w : {"-w", "-Wno-error=implicit-function-declaration", "-Wno-error=implicit-int",
                        "-Wno-error=int-conversion", "-Wno-error=incompatible-function-pointer-types",
                        "-Wno-error=return-type", "-Wno-unknown-warning-option", "-Wno-unused-command-line-argument"})
    out.push_back(w);
  return out;
}

}  // namespace

// The tool proper; main also serves skein-privatize-client's requests with it (--serve).
static int toolMain(int argc, const char **argv) {
  // A server's worker runs this once per request: nothing of the previous run carries over
  llvm::cl::ResetAllOptionOccurrences();
  g_failures = 0;
  g_began = false;
  g_err = &llvm::errs();
  g_report = ReportLines();
  auto parser = CommonOptionsParser::create(argc, argv, Cat, llvm::cl::ZeroOrMore,
                                            "Makes the mutable globals of MPI programs per rank for Skein.\n");
  if (!parser) {
    llvm::errs() << parser.takeError();
    return 2;
  }
  const std::vector<std::string> &files = parser->getSourcePathList();
  if (!Output.empty() && files.size() != 1) {
    llvm::errs() << "skein-privatize: -o takes exactly one input file\n";
    return 2;
  }
  if (files.empty() && Libs.empty()) {
    llvm::errs() << "skein-privatize: no input files\n";
    return 2;
  }
  if (!HeaderDir.empty()) {
    SmallString<256> abs(HeaderDir);
    llvm::sys::fs::make_absolute(abs);
    HeaderDir = std::string(abs);
  }
  int rc = 0;
  for (const std::string &lib : Libs) rc |= skn::reportLibrary(lib);
  if (files.empty()) return rc;
  std::string exe = llvm::sys::fs::getMainExecutable(argv[0], (void *)&toolMain);
  auto adjust = [exe](ClangTool &tool) {
    tool.appendArgumentsAdjuster(getInsertArgumentAdjuster("-resource-dir=" CLANG_RESOURCE_DIR, ArgumentInsertPosition::END));
    // Skein's mpi.h and skein_privatize.h (<prefix>/include, beside <prefix>/bin): compile
    // databases of mpicc builds name the wrapper, which adds them implicitly
    if (!exe.empty()) {
      SmallString<256> inc(llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
      llvm::sys::path::append(inc, "include");
      if (llvm::sys::fs::exists(inc + "/mpi.h"))
        tool.appendArgumentsAdjuster(getInsertArgumentAdjuster(("-idirafter" + inc).str().c_str(), ArgumentInsertPosition::END));
    }
    // gcc's own headers (omp.h, found through the wrapper's -idirafter) use gcc 11's
    // __malloc__(deallocator), which Clang 16 rejects: keep the plain attribute
    tool.appendArgumentsAdjuster(getInsertArgumentAdjuster("-D__malloc__(...)=__malloc__", ArgumentInsertPosition::END));
    tool.appendArgumentsAdjuster(gccCompatible);
  };
  // A served build request: its system headers from the server's cache (pch.h)
  skn::PchPlan plan;
  bool withPch = false;
  const char *pchDir = getenv("SKEIN_PRIVATIZE_PCH_DIR");
  if (pchDir && *pchDir && !Report && !Output.empty()) {
    std::vector<CompileCommand> cmds = parser->getCompilations().getCompileCommands(files[0]);
    if (cmds.size() == 1 && skn::planPch(pchDir, files[0], cmds[0].CommandLine, plan) &&
        !llvm::sys::fs::exists(plan.refused)) {
      withPch = llvm::sys::fs::exists(plan.pch);
      if (!withPch) skn::afterReply = [plan, adjust] { skn::buildPch(plan, adjust); };
    }
  }
  auto parse = [&](bool pch) {
    ClangTool tool(parser->getCompilations(), files);
    adjust(tool);
    if (!pch) return tool.run(newFrontendActionFactory<Action>().get());
    tool.appendArgumentsAdjuster(getInsertArgumentAdjuster({"-include-pch", plan.pch}, ArgumentInsertPosition::END));
    // Messages wait for the outcome: a parse that fails with the PCH is done again without
    // it, which says what there is to say (the PCH's own troubles are never shown).
    std::string text;
    llvm::raw_string_ostream os(text);
    IntrusiveRefCntPtr<DiagnosticOptions> dopts = new DiagnosticOptions();
    TextDiagnosticPrinter printer(os, dopts.get());
    tool.setDiagnosticConsumer(&printer);
    tool.setPrintErrorMessage(false);
    g_err = &os;
    int prc = tool.run(newFrontendActionFactory<Action>().get());
    g_err = &llvm::errs();
    if (prc == 0 && !g_failures) llvm::errs() << text;
    return prc;
  };
  int trc = parse(withPch);
  if (withPch && (trc != 0 || g_failures)) {
    bool loaded = g_began;  // else the PCH did not load (a header changed since): rebuilt later
    g_failures = 0;
    trc = parse(false);
    // A PCH that did not load is made again by a later request; one that loads but breaks
    // a parse that succeeds without it (a header that must not be read twice) is refused.
    // Otherwise the error is the source's own.
    bool refuse = loaded && trc == 0 && !g_failures;
    if (refuse) {
      std::error_code ec;
      llvm::raw_fd_ostream mark(plan.refused, ec, llvm::sys::fs::OF_Text);
    }
    if (refuse || !loaded) llvm::sys::fs::remove(plan.pch);
  }
  for (const skn::Diag &d : g_report.lines) llvm::outs() << d.text << "\n";
  if (trc != 0 || g_failures) rc = 1;
  llvm::outs().flush();  // a served request's worker never ends normally
  llvm::outs().clear_error();  // (a closed pipe of this request is not the next one's)
  llvm::errs().clear_error();
  return rc;
}

// Before the server forks its first child: what every parse initializes lazily (the
// driver's option table, targets, diagnostics, a small parse of a libc header).
static void warmUp() {
  gccCompatible({"clang", "-O2", "-c", "warm.c"}, "");
  runToolOnCodeWithArgs(std::make_unique<SyntaxOnlyAction>(), "#include <stdio.h>\nint skn_warm;\n",
                        {"-resource-dir=" CLANG_RESOURCE_DIR, "-w", "-fsyntax-only"}, "skn_warm.c");
}

int main(int argc, const char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--serve")) return skn::serve(argv[2], toolMain, warmUp);
  return toolMain(argc, argv);
}
