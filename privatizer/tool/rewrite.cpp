// Rewriter: turns the finder's records into a privatized main file.
//  - a definition gets a section attribute (skn_pdata, or NOBITS skn_pbss when its image
//    is all zeros), so the runtime can give each rank a copy of the module's sections;
//  - every use `x` becomes SKN_PRIV(x): the rank's copy at &x + delta, where delta comes
//    from a const accessor the compiler hoists;
//  - initializers that use privatized globals and C++ constructors get per-rank hooks;
//  - thread_local variables and template instantiations (which gcc will not place in a
//    section) find the rank's copy by address (SKN_PRIV_TLS / SKN_PRIV_ADDR).
// Nothing is inserted across lines except around macro expansions, and #line directives
// keep the original line numbers for the compiler's diagnostics and __LINE__.
#include "finder.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/TypeLoc.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;

namespace skn {

static const char *kPreludeC =
    "#ifndef SKN_PRIV_PRELUDE\n#define SKN_PRIV_PRELUDE /* privatized by skein-privatize: every mutable global is per rank */\n"
    "__attribute__((const, visibility(\"hidden\"))) long __skn_priv_delta(void);\n"
    "__attribute__((const, visibility(\"hidden\"))) void *__skn_priv_addr(void *, unsigned long);\n"
    "__attribute__((const, visibility(\"hidden\"))) void *__skn_priv_tls(void *, unsigned long);\n"
    "#define SKN_PRIV(...) (*(__typeof__(__VA_ARGS__) *)((char *)&(__VA_ARGS__) + __skn_priv_delta()))\n"
    "#define SKN_PRIV_ADDR(...) (*(__typeof__(__VA_ARGS__) *)__skn_priv_addr((void *)&(__VA_ARGS__), sizeof(__VA_ARGS__)))\n"
    "#define SKN_PRIV_TLS(...) (*(__typeof__(__VA_ARGS__) *)__skn_priv_tls((void *)&(__VA_ARGS__), sizeof(__VA_ARGS__)))\n#endif\n";

static const char *kPreludeCxx =
    "#ifndef SKN_PRIV_PRELUDE\n#define SKN_PRIV_PRELUDE /* privatized by skein-privatize: every mutable global is per rank */\n"
    "#include <new>\n"
    "extern \"C\" __attribute__((const, visibility(\"hidden\"))) long __skn_priv_delta(void);\n"
    "extern \"C\" __attribute__((const, visibility(\"hidden\"))) void *__skn_priv_addr(void *, unsigned long);\n"
    "extern \"C\" __attribute__((const, visibility(\"hidden\"))) void *__skn_priv_tls(void *, unsigned long);\n"
    "extern \"C\" void skein_priv_atexit(void (*)(void *), void *);\n"
    "#define SKN_PRIV(...) (*(__typeof__(__VA_ARGS__) *)((char *)__builtin_addressof(__VA_ARGS__) + __skn_priv_delta()))\n"
    "#define SKN_PRIV_ADDR(...) (*(__typeof__(__VA_ARGS__) *)__skn_priv_addr((void *)__builtin_addressof(__VA_ARGS__), sizeof(__VA_ARGS__)))\n"
    "#define SKN_PRIV_TLS(...) (*(__typeof__(__VA_ARGS__) *)__skn_priv_tls((void *)__builtin_addressof(__VA_ARGS__), sizeof(__VA_ARGS__)))\n"
    "extern \"C\" void *skein_priv_local(void *, unsigned long, unsigned long, int *);\n"
    "template <class T> static void __skn_priv_destroy(void *p) { static_cast<T *>(p)->~T(); }\n"
    "template <class T, class F> static inline T &__skn_priv_local(char *key, F &&make) {\n"
    "  int fresh = 0;\n"
    "  void *p = skein_priv_local(key, sizeof(T), alignof(T), &fresh);\n"
    "  if (fresh) { make(p); skein_priv_atexit(__skn_priv_destroy<T>, p); }\n"
    "  return *static_cast<T *>(p);\n"
    "}\n"
    "#endif\n";

// gcc takes the whole string as the section's name (so comdat and plain variables do not
// conflict) but the assembler stops at '#': every variant lands in the same section.
static std::string sectionAttr(bool bss, bool comdat) {
  std::string s = bss ? "skn_pbss,\\\"aw\\\",@nobits#" : "skn_pdata,\\\"aw\\\",@progbits#";
  if (comdat) s += "c";
  return " __attribute__((section(\"" + s + "\")))";
}

namespace {

struct Rw {
  ASTContext &ctx;
  SourceManager &sm;
  const LangOptions &lo;
  const TUResult &res;
  const Options &opt;
  std::string headerDir;
  Rewriter rw;
  std::map<const FileEntry *, FileID> firstFid;  // project headers: the FileID edits go to
  std::set<std::pair<unsigned, std::string>> done; // (canonical location, text) inserted
  bool ok = true;
  std::set<unsigned> doneSpelling;
  // macro expansions (outermost, in the main file) -> names to redefine around them
  std::map<std::pair<unsigned, unsigned>, std::map<std::string, std::string>> expansions;
  std::vector<std::string> hookCalls;
  int nhooks = 0;
  std::map<std::string, std::string> *headersOut = nullptr;

  Rw(ASTContext &c, const TUResult &r, const Options &o, const std::string &hd)
      : ctx(c), sm(c.getSourceManager()), lo(c.getLangOpts()), res(r), opt(o), headerDir(hd) {
    rw.setSourceMgr(sm, lo);
    if (opt.headers)
      for (auto &[fid, system] : opt.entered) {
        const FileEntry *fe = sm.getFileEntryForID(fid);
        if (!system && fe && fid != sm.getMainFileID() && !firstFid.count(fe)) firstFid[fe] = fid;
      }
  }

  // A file location we may edit: the main file, or a project header when headers are
  // rewritten (edits of a header included twice go to its first inclusion).
  bool editable(SourceLocation l) const {
    if (l.isInvalid() || l.isMacroID()) return false;
    FileID f = sm.getFileID(l);
    if (f == sm.getMainFileID()) return true;
    const FileEntry *fe = sm.getFileEntryForID(f);
    return opt.headers && fe && firstFid.count(fe);
  }
  SourceLocation canon(SourceLocation l) const {
    FileID f = sm.getFileID(l);
    if (f == sm.getMainFileID()) return l;
    const FileEntry *fe = sm.getFileEntryForID(f);
    auto it = firstFid.find(fe);
    if (it == firstFid.end() || it->second == f) return l;
    return sm.getComposedLoc(it->second, sm.getFileOffset(l));
  }
  void wrap(SourceLocation b, SourceLocation e, const std::string &w) {
    b = canon(b);
    e = canon(e);
    if (!done.insert({b.getRawEncoding(), w}).second) return;
    rw.InsertTextBefore(b, w + "(");
    rw.InsertTextAfterToken(e, ")");
  }
  std::string shadowPath(const std::string &orig) const { return headerDir + orig; }

  // Problems found while rewriting refuse the variable (when there is one) exactly as the
  // finder's do, so that --report (which rewrites too, into nothing) lists them alike.
  std::vector<std::pair<const VarDecl *, Problem>> failed;
  void error(SourceLocation l, const std::string &m, const VarDecl *d = nullptr) {
    failed.push_back({d, Problem{l, m}});
    ok = false;
  }

  const GlobalRec &rec(const VarDecl *v) const { return res.globals[res.index.at(v)]; }

  std::string wrapper(const GlobalRec &g) const {
    if (g.action == Action::PrivTls) return "SKN_PRIV_TLS";
    if (g.slowPath) return "SKN_PRIV_ADDR";
    return "SKN_PRIV";
  }

  std::string text(SourceRange r) const {
    return Lexer::getSourceText(CharSourceRange::getTokenRange(r), sm, lo).str();
  }

  // Text of the initializer of g with uses of privatized globals wrapped.
  bool initText(const VarDecl *d, std::string &out) { return rangeText(d, d->getInit()->getSourceRange(), out); }
  bool rangeText(const VarDecl *d, SourceRange r, std::string &out) {
    if (r.getBegin().isMacroID() || r.getEnd().isMacroID()) {
      error(d->getLocation(), "initializer of '" + d->getNameAsString() + "' comes from a macro: not supported", d);
      return false;
    }
    FileID fid = sm.getFileID(r.getBegin());
    unsigned b = sm.getFileOffset(r.getBegin());
    unsigned e = sm.getFileOffset(Lexer::getLocForEndOfToken(r.getEnd(), 0, sm, lo));
    std::vector<std::pair<unsigned, unsigned>> cuts;  // [start, end) file offsets
    std::vector<std::string> wraps;
    for (const UseRec &u : res.initRefs) {
      if (!res.isPrivatized(u.var)) continue;
      SourceRange ur = u.expr->getSourceRange();
      if (ur.getBegin().isMacroID()) {
        if (sm.getFileOffset(sm.getExpansionLoc(ur.getBegin())) >= b &&
            sm.getFileOffset(sm.getExpansionLoc(ur.getBegin())) < e) {
          error(ur.getBegin(), "privatized global used through a macro in a static initializer: not supported", d);
          return false;
        }
        continue;
      }
      if (sm.getFileID(ur.getBegin()) != fid) continue;
      unsigned ub = sm.getFileOffset(ur.getBegin());
      unsigned ue = sm.getFileOffset(Lexer::getLocForEndOfToken(ur.getEnd(), 0, sm, lo));
      if (ub < b || ue > e) continue;
      cuts.push_back({ub, ue});
      wraps.push_back(wrapper(rec(u.var)));
    }
    std::vector<size_t> order(cuts.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return cuts[x].first < cuts[y].first; });
    StringRef buf = sm.getBufferData(fid);
    unsigned pos = b;
    out.clear();
    for (size_t i : order) {
      if (cuts[i].first < pos) continue;
      out += buf.substr(pos, cuts[i].first - pos).str();
      out += wraps[i] + "(" + buf.substr(cuts[i].first, cuts[i].second - cuts[i].first).str() + ")";
      pos = cuts[i].second;
    }
    out += buf.substr(pos, e - pos).str();
    return true;
  }

  // The location just after the ';' that ends the declaration containing d.
  SourceLocation afterDecl(const VarDecl *d) {
    SourceLocation l = d->getEndLoc();
    for (int guard = 0; guard < 100000; guard++) {
      std::optional<Token> t = Lexer::findNextToken(l, sm, lo);
      if (!t) break;
      if (t->is(tok::semi)) return t->getEndLoc();
      l = t->getLocation();
      if (t->isOneOf(tok::l_brace, tok::l_paren, tok::l_square)) {
        // skip a balanced group (a lambda or braces in a later declarator)
        int depth = 1;
        while (depth > 0) {
          std::optional<Token> u = Lexer::findNextToken(l, sm, lo);
          if (!u) return SourceLocation();
          l = u->getLocation();
          if (u->isOneOf(tok::l_brace, tok::l_paren, tok::l_square)) depth++;
          if (u->isOneOf(tok::r_brace, tok::r_paren, tok::r_square)) depth--;
        }
      }
    }
    return SourceLocation();
  }

  // Qualified prefix ("::ns::") of the namespace holding d, or "" at global scope; false
  // when d sits in a class (no place for a hook function there).
  bool scopePrefix(const VarDecl *d, std::string &p) {
    p.clear();
    for (const DeclContext *dc = d->getDeclContext(); dc; dc = dc->getParent()) {
      if (dc->isTranslationUnit() || dc->isExternCContext() || dc->isExternCXXContext() ||
          isa<LinkageSpecDecl>(dc))
        continue;
      if (auto *ns = dyn_cast<NamespaceDecl>(dc)) {
        if (!ns->isAnonymousNamespace()) p = "::" + ns->getNameAsString() + p;
        continue;
      }
      return false;
    }
    p += "::";
    return true;
  }

  void addHook(const VarDecl *d, const std::string &body) {
    std::string prefix;
    bool cxx = lo.CPlusPlus;
    if (d->getLexicalDeclContext()->isRecord() || (cxx && !scopePrefix(d, prefix))) {
      error(d->getLocation(), "'" + d->getNameAsString() +
                                  "' needs a per-rank initializer but is defined inside a class: define it out of class", d);
      return;
    }
    // after the definition: in the source, or in this unit's copy of a project header
    SourceLocation after = afterDecl(d);
    if (after.isInvalid() || !editable(after)) {
      error(d->getLocation(), "cannot find the end of the declaration of '" + d->getNameAsString() + "'", d);
      return;
    }
    std::string name = "__skn_priv_hook" + std::to_string(nhooks++);
    rw.InsertTextAfter(canon(after), " static void " + name + "(void) { " + body + " }");
    hookCalls.push_back(cxx ? prefix + name : name);
  }

  // static T x(args);  ->  static char __skn_key_x; T &x = __skn_priv_local<T>(&__skn_key_x, <construct>);
  // Each rank builds its object when it first passes the declaration; uses keep the name.
  void localObject(const VarDecl *d) {
    SourceLocation b = d->getBeginLoc(), end = afterDecl(d);
    if (b.isMacroID() || end.isInvalid() || !editable(b)) {
      error(d->getLocation(), "cannot rewrite the declaration of static local '" + d->getNameAsString() + "'", d);
      return;
    }
    std::string type = text(d->getTypeSourceInfo()->getTypeLoc().getSourceRange());
    // drop the storage class and qualifiers written before the type
    std::string v = d->getNameAsString(), args;
    const Expr *init = d->getInit();
    const auto *ce = init ? dyn_cast<CXXConstructExpr>(init->IgnoreImplicit()) : nullptr;
    if (ce && ce->getParenOrBraceRange().isValid()) {
      if (!rangeText(d, ce->getParenOrBraceRange(), args)) return;
    } else if (init && !(ce && ce->getNumArgs() == 0)) {
      std::string it;
      if (!initText(d, it)) return;
      args = isa<InitListExpr>(init->IgnoreImplicit()) ? it : "(" + it + ")";
    }
    std::string key = "__skn_key_" + v;
    std::string repl = "static char " + key + "; " + type + " &" + v + " = __skn_priv_local<" + type + " >(&" + key +
                       ", [&](void *__skn_p) { ::new (__skn_p) " + type + args + "; });";
    SourceLocation cb = canon(b);
    if (!done.insert({cb.getRawEncoding(), "local"}).second) return;
    rw.ReplaceText(CharSourceRange::getCharRange(cb, canon(end)), repl);
  }

  void definitions() {
    for (const GlobalRec &g : res.globals) {
      const VarDecl *d = g.def;
      bool priv = g.action == Action::PrivData || g.action == Action::PrivBss || g.action == Action::PrivCtor;
      if (!priv || !d) continue;
      if (g.localObject) {
        localObject(d);
        continue;
      }
      if (!editable(d->getLocation())) continue;
      if (!g.slowPath) {
        // after the declarator: the name, or the end of its type (arrays, function pointers)
        SourceLocation end = d->getLocation();
        if (TypeSourceInfo *tsi = d->getTypeSourceInfo()) {
          SourceLocation te = tsi->getTypeLoc().getEndLoc();
          if (te.isValid() && !te.isMacroID() && sm.isBeforeInTranslationUnit(end, te)) end = te;
        }
        bool comdat = d->isInline();
        std::string attr = sectionAttr(g.action == Action::PrivBss, comdat);
        if (g.weak) attr.replace(attr.find("((") + 2, 0, "weak, ");
        SourceLocation ce = canon(end);
        if (done.insert({ce.getRawEncoding(), "section"}).second) rw.InsertTextAfterToken(ce, attr);
      }
      std::string v = d->getNameAsString();
      if (g.action == Action::PrivCtor) {
        // Per rank: construct the rank's copy (over the bytes copied from the process's
        // object) and destroy it when the rank ends.
        std::string args;
        const Expr *init = d->getInit();
        std::string t = "__typeof__(" + v + ")";
        const auto *ce = init ? dyn_cast<CXXConstructExpr>(init->IgnoreImplicit()) : nullptr;
        if (ce && ce->getParenOrBraceRange().isValid()) {
          if (!rangeText(d, ce->getParenOrBraceRange(), args)) continue;  // "(a, b)" or "{a, b}"
        } else if (ce && ce->getNumArgs() == 0) {
          args = "";
        } else if (init) {
          std::string it;
          if (!initText(d, it)) continue;
          args = isa<InitListExpr>(init->IgnoreImplicit()) ? it : "(" + it + ")";
        }
        std::string body = "using __skn_t = " + t + "; __skn_t *__skn_p = &SKN_PRIV(" + v +
                           "); ::new ((void *)__skn_p) __skn_t" + args + "; ";
        if (const CXXRecordDecl *rd = d->getType()->getAsCXXRecordDecl())
          if (!rd->hasTrivialDestructor())
            body += "skein_priv_atexit([](void *__skn_q) { static_cast<__skn_t *>(__skn_q)->~__skn_t(); }, __skn_p);";
        addHook(d, body);
      } else if (g.needsHook && d->getInit()) {
        std::string it;
        if (!initText(d, it)) continue;
        addHook(d, "__typeof__(" + v + ") __skn_v = " + it + "; __builtin_memcpy((void *)&" + wrapper(g) + "(" + v +
                       "), (const void *)&__skn_v, sizeof __skn_v);");
      }
    }
  }

  void uses() {
    for (const UseRec &u : res.uses) {
      if (!res.isPrivatized(u.var)) continue;
      const GlobalRec &g = rec(u.var);
      if (g.localObject) continue;  // the name now is a reference to the rank's object
      std::string w = wrapper(g);
      SourceRange r = u.expr->getSourceRange();
      SourceLocation b = r.getBegin(), e = r.getEnd();
      if (!b.isMacroID() && !e.isMacroID()) {
        if (!editable(b)) continue;  // reported by the finder
        wrap(b, e, w);
        continue;
      }
      SourceLocation sb = sm.getSpellingLoc(b), se = sm.getSpellingLoc(e);
      if (editable(sb) && editable(se) && sm.getFileID(sb) == sm.getFileID(se) && !sm.isBeforeInTranslationUnit(se, sb)) {
        // a macro argument, or the body of a macro defined in a file we rewrite: once
        wrap(sb, se, w);
        continue;
      }
      // The body of a macro from a project header: redefine the name around the expansion.
      auto *dre = dyn_cast<DeclRefExpr>(u.expr);
      CharSourceRange ex = sm.getExpansionRange(b);
      while (ex.getBegin().isMacroID()) ex = sm.getExpansionRange(ex.getBegin());
      if (!dre || dre->hasQualifier() || !sm.isWrittenInMainFile(ex.getBegin())) {
        error(sb, "use of privatized global '" + g.name + "' inside a macro: cannot rewrite it", g.decl);
        continue;
      }
      CharSourceRange ex2 = sm.getExpansionRange(e);
      while (ex2.getBegin().isMacroID()) ex2 = sm.getExpansionRange(ex2.getBegin());
      unsigned eb = sm.getFileOffset(ex.getBegin()), ee = sm.getFileOffset(ex2.getEnd());
      std::string n = u.var->getNameAsString();
      expansions[{eb, std::max(ee, eb)}][n] = w;
    }
    for (auto &[range, names] : expansions) {
      SourceLocation fb = sm.getLocForStartOfFile(sm.getMainFileID());
      SourceLocation b = fb.getLocWithOffset(range.first), e = fb.getLocWithOffset(range.second);
      unsigned line = sm.getSpellingLineNumber(b), col = sm.getSpellingColumnNumber(b);
      unsigned eline = sm.getSpellingLineNumber(e);
      SourceLocation after = Lexer::getLocForEndOfToken(e, 0, sm, lo);
      unsigned acol = sm.getSpellingColumnNumber(after);
      std::string pre = "\n", post = "\n";
      for (auto &[n, w] : names) {
        pre += "#pragma push_macro(\"" + n + "\")\n#undef " + n + "\n#define " + n + " " + w + "(" + n + ")\n";
        post += "#pragma pop_macro(\"" + n + "\")\n";
      }
      pre += "#line " + std::to_string(line) + "\n" + std::string(col - 1, ' ');
      post += "#line " + std::to_string(eline) + "\n" + std::string(acol - 1, ' ');
      rw.InsertTextBefore(b, pre);
      rw.InsertTextAfter(after, post);
    }
  }

  // "#pragma skein ..." means nothing to the compiler that builds the rewritten file.
  void dropPragmas() {
    FileID main = sm.getMainFileID();
    StringRef buf = sm.getBufferData(main);
    size_t pos = 0;
    while (pos < buf.size()) {
      size_t eol = buf.find('\n', pos);
      if (eol == StringRef::npos) eol = buf.size();
      StringRef line = buf.slice(pos, eol).ltrim();
      bool skein = line.consume_front("#");
      line = line.ltrim();
      skein = skein && line.consume_front("pragma");
      if (skein && line.ltrim().startswith("skein")) {
        SourceLocation l = sm.getLocForStartOfFile(main).getLocWithOffset(pos);
        rw.ReplaceText(l, eol - pos, "");
      }
      pos = eol + 1;
    }
  }

  // Includes of project headers in rewritten files name the rewritten copies.
  void redirectIncludes() {
    if (!opt.headers) return;
    std::set<std::string> project;
    for (auto &[fe, fid] : firstFid) project.insert(std::string(sm.getFileEntryRefForID(fid)->getName()));
    for (const IncludeRec &inc : opt.includes) {
      if (inc.system || inc.target.empty() || !editable(inc.hash)) continue;
      SmallString<256> abs(inc.target);
      llvm::sys::fs::make_absolute(abs);
      llvm::sys::path::remove_dots(abs, true);
      std::string target = std::string(abs);
      std::string name = project.count(inc.target) || project.count(target) ? shadowPath(target) : target;
      SourceLocation b = canon(inc.nameRange.getBegin());
      if (!done.insert({b.getRawEncoding(), "#include"}).second) continue;
      rw.ReplaceText(CharSourceRange::getCharRange(b, canon(inc.nameRange.getEnd())), "\"" + name + "\"");
    }
  }

  bool run(std::string &out) {
    definitions();
    uses();
    redirectIncludes();
    dropPragmas();
    if (!ok) return false;
    FileID main = sm.getMainFileID();
    std::string file = sm.getFileEntryRefForID(main)->getName().str();
    std::string pre = lo.CPlusPlus ? kPreludeCxx : kPreludeC;
    std::string esc;
    for (char c : file) {
      if (c == '"' || c == '\\') esc += '\\';
      esc += c;
    }
    pre += "#line 1 \"" + esc + "\"\n";
    rw.InsertTextBefore(sm.getLocForStartOfFile(main), pre);
    std::string tail;
    if (!hookCalls.empty()) {
      // One hook per file runs the variables' hooks in declaration order.
      tail += "\nstatic void __skn_priv_init(void) {";
      for (const std::string &h : hookCalls) tail += " " + h + "();";
      tail += " }\nstatic void (*const __skn_priv_init_p)(void) __attribute__((section(\"skn_pinit\"), used)) = "
              "__skn_priv_init;\n";
    }
    for (auto &[fe, fid] : firstFid) {
      std::string name = std::string(sm.getFileEntryRefForID(fid)->getName());
      SmallString<256> abs(name);
      llvm::sys::fs::make_absolute(abs);
      llvm::sys::path::remove_dots(abs, true);
      const RewriteBuffer *hb = rw.getRewriteBufferFor(fid);
      std::string body = hb ? std::string(hb->begin(), hb->end()) : std::string(sm.getBufferData(fid));
      std::string hesc;
      for (char c : name) {
        if (c == '"' || c == '\\') hesc += '\\';
        hesc += c;
      }
      (*headersOut)[std::string(abs)] = std::string(lo.CPlusPlus ? kPreludeCxx : kPreludeC) + "#line 1 \"" + hesc + "\"\n" + body;
    }
    const RewriteBuffer *buf = rw.getRewriteBufferFor(main);
    out = buf ? std::string(buf->begin(), buf->end()) : std::string(sm.getBufferData(main));
    if (!buf) out = pre + out;
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += tail;
    return true;
  }
};

}  // namespace

bool rewriteMainFile(ASTContext &ctx, TUResult &res, const Options &opt, const std::string &headerDir,
                     std::string &out, std::map<std::string, std::string> &headers) {
  Rw r(ctx, res, opt, headerDir);
  r.headersOut = &headers;
  bool ok = r.run(out);
  for (auto &[d, p] : r.failed) {
    res.errors.push_back(p);
    auto it = d ? res.index.find(d->getCanonicalDecl()) : res.index.end();
    if (it == res.index.end()) continue;
    GlobalRec &g = res.globals[it->second];
    if (g.action == Action::Error) continue;
    g.action = Action::Error;
    g.why = p.msg;
  }
  return ok;
}

}  // namespace skn
