// Finder: records globals and their uses (see finder.h). A RecursiveASTVisitor rather
// than matchers: the decisions need the declaration context, the template pattern and
// the initializer together, and uses need to know whether they sit in a static
// initializer.
#include "finder.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/DeclOpenMP.h"
#include "clang/AST/OpenMPClause.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"

using namespace clang;

namespace skn {

bool TUResult::isPrivatized(const VarDecl *v) const {
  auto it = index.find(v);
  if (it == index.end()) return false;
  Action a = globals[it->second].action;
  return a == Action::PrivData || a == Action::PrivBss || a == Action::PrivCtor || a == Action::PrivTls;
}

// The declaration a use or an instantiation stands for: the template pattern of an
// instantiated static data member or variable template, canonical.
static const VarDecl *normalize(const VarDecl *v) {
  if (const VarDecl *p = v->getInstantiatedFromStaticDataMember()) v = p;
  if (auto *s = dyn_cast<VarTemplateSpecializationDecl>(v)) {
    llvm::PointerUnion<VarTemplateDecl *, VarTemplatePartialSpecializationDecl *> from =
        s->getSpecializedTemplateOrPartial();
    if (auto *t = from.dyn_cast<VarTemplateDecl *>()) v = t->getTemplatedDecl();
  }
  return v->getCanonicalDecl();
}

static bool isTemplated(const VarDecl *v) {
  if (v->getDescribedVarTemplate()) return true;
  for (const DeclContext *dc = v->getDeclContext(); dc; dc = dc->getParent())
    if (auto *rd = dyn_cast<CXXRecordDecl>(dc))
      if (rd->getDescribedClassTemplate() || isa<ClassTemplatePartialSpecializationDecl>(rd)) return true;
  return false;
}

// True when every byte of the constant value is zero.
static bool isZero(const APValue &v) {
  switch (v.getKind()) {
    case APValue::None:
    case APValue::Indeterminate: return true;
    case APValue::Int: return v.getInt() == 0;
    case APValue::Float: return v.getFloat().isPosZero();
    case APValue::LValue: return v.isNullPointer() || (!v.getLValueBase() && v.getLValueOffset().isZero());
    case APValue::Array:
      for (unsigned i = 0; i < v.getArrayInitializedElts(); i++)
        if (!isZero(v.getArrayInitializedElt(i))) return false;
      return !v.hasArrayFiller() || isZero(v.getArrayFiller());
    case APValue::Struct:
      for (unsigned i = 0; i < v.getStructNumBases(); i++)
        if (!isZero(v.getStructBase(i))) return false;
      for (unsigned i = 0; i < v.getStructNumFields(); i++)
        if (!isZero(v.getStructField(i))) return false;
      return true;
    case APValue::Union: return !v.getUnionField() || isZero(v.getUnionValue());
    default: return false;
  }
}

// The same for an initializer the constant evaluator will not fold (C aggregates).
static bool isZeroInit(const Expr *e, ASTContext &ctx) {
  e = e->IgnoreParenImpCasts();
  if (isa<ImplicitValueInitExpr>(e)) return true;
  if (auto *il = dyn_cast<InitListExpr>(e)) {
    for (const Expr *sub : il->inits())
      if (!isZeroInit(sub, ctx)) return false;
    return !il->hasArrayFiller() || isZeroInit(il->getArrayFiller(), ctx);
  }
  if (e->isNullPointerConstant(ctx, Expr::NPC_ValueDependentIsNotNull)) return true;
  Expr::EvalResult r;
  if (e->getType()->isScalarType() && e->EvaluateAsRValue(r, ctx) && !r.HasSideEffects) return isZero(r.Val);
  return false;
}

namespace {

class Visitor : public RecursiveASTVisitor<Visitor> {
 public:
  Visitor(ASTContext &c, const Options &o, TUResult &r) : ctx(c), sm(c.getSourceManager()), opt(o), res(r) {}
  bool shouldVisitTemplateInstantiations() const { return true; }
  bool shouldVisitImplicitCode() const { return false; }

  bool VisitVarDecl(VarDecl *v) {
    if (!v->hasGlobalStorage() || isa<ParmVarDecl>(v) || v->isImplicit()) return true;
    record(v);
    return true;
  }

  bool VisitDeclRefExpr(DeclRefExpr *e) {
    if (auto *v = dyn_cast<VarDecl>(e->getDecl())) use(e, v);
    return true;
  }
  bool VisitMemberExpr(MemberExpr *e) {
    if (auto *v = dyn_cast<VarDecl>(e->getMemberDecl())) use(e, v);
    return true;
  }

  bool TraverseVarDecl(VarDecl *v) {
    // Uses inside the initializer of a static-storage variable are not rewritten (the
    // initializer must stay constant); the variable gets a per-rank hook instead.
    bool outer = v->hasGlobalStorage() && !isa<ParmVarDecl>(v);
    const VarDecl *saved = inStaticInit;
    if (outer) inStaticInit = v;
    bool ok = RecursiveASTVisitor::TraverseVarDecl(v);
    inStaticInit = saved;
    return ok;
  }

  // OpenMP: a clause needs a variable's name, which a rewritten use no longer is; the
  // threadprivate directive only names its variables (they are handled as thread_local).
  bool VisitOMPExecutableDirective(OMPExecutableDirective *d) {
    for (OMPClause *c : d->clauses())
      for (Stmt *child : c->children()) markClauseRefs(child);
    return true;
  }
  void markClauseRefs(Stmt *st) {
    if (!st) return;
    if (auto *e = dyn_cast<DeclRefExpr>(st)) ompClauseRefs.insert(e);
    for (Stmt *child : st->children()) markClauseRefs(child);
  }
  bool TraverseOMPThreadPrivateDecl(OMPThreadPrivateDecl *) { return true; }

  bool VisitGCCAsmStmt(GCCAsmStmt *a) {
    std::string text = a->getAsmString()->getString().str();
    asms.push_back({a, text});
    return true;
  }

  void finish() {
    // Decide after every declaration is seen (a later definition may add an initializer).
    for (GlobalRec &g : res.globals) decide(g);
    // Static initializers that use privatized globals: re-run per rank, or refuse.
    for (auto &[user, used] : initUses) {
      if (!res.isPrivatized(used)) continue;
      auto it = res.index.find(user);
      if (it == res.index.end()) continue;
      GlobalRec &g = res.globals[it->second];
      if (g.action == Action::PrivData || g.action == Action::PrivBss) {
        g.needsHook = true;
        if (g.def && g.def->isStaticLocal())
          err(g.def->getLocation(), "static local '" + g.name + "' is initialized with the address of privatized global '" +
                                        used->getNameAsString() + "': move it to file scope");
        if (g.def && isTemplated(g.def))
          err(g.def->getLocation(), "template static '" + g.name + "' is initialized from privatized globals: not supported");
      } else if (g.action == Action::KeepConst) {
        g.action = Action::Error;
        g.why = "const object initialized from privatized global '" + used->getNameAsString() +
                "': drop the const so that it can be privatized";
        err(g.def ? g.def->getLocation() : g.decl->getLocation(), g.why);
      } else if (g.action == Action::KeepShared) {
        // The user asked for one shared copy: it keeps the process copy's address.
      }
    }
    for (auto &[e, v] : ompUses)
      if (res.isPrivatized(v))
        err(e->getBeginLoc(), "privatized global '" + v->getNameAsString() +
                                  "' in an OpenMP clause: use a local variable (copy the global in and out), "
                                  "or mark the global shared");
    for (auto &[a, text] : asms)
      for (const GlobalRec &g : res.globals)
        if ((g.action == Action::PrivData || g.action == Action::PrivBss || g.action == Action::PrivCtor ||
             g.action == Action::PrivTls) &&
            mentions(text, g.decl->getNameAsString()))
          err(a->getAsmLoc(), "privatized global '" + g.name +
                                  "' is named inside inline assembly: it cannot be privatized (mark it shared with "
                                  "SKEIN_SHARED or '#pragma skein shared(" + g.name + ")', or pass it as an operand)");
    // Uses of privatized globals spelled in project headers cannot be rewritten unless
    // the headers are rewritten too.
    for (const UseRec &u : res.uses) {
      if (opt.headers) break;
      if (!res.isPrivatized(u.var)) continue;
      SourceLocation l = u.expr->getBeginLoc();
      SourceLocation sp = sm.getSpellingLoc(l);
      if (sm.isWrittenInMainFile(sp)) continue;
      if (l.isMacroID() && sm.isWrittenInMainFile(sm.getExpansionLoc(l))) continue;  // macro from a header
      err(sp, "use of privatized global '" + u.var->getNameAsString() +
                  "' in a header (inline function or template): move the function into a source file, or mark the "
                  "global shared");
    }
  }

 private:
  ASTContext &ctx;
  SourceManager &sm;
  const Options &opt;
  TUResult &res;
  const VarDecl *inStaticInit = nullptr;
  std::set<const Expr *> ompClauseRefs;
  std::vector<std::pair<const Expr *, const VarDecl *>> ompUses;
  std::vector<std::pair<const VarDecl *, const VarDecl *>> initUses;
  std::vector<std::pair<GCCAsmStmt *, std::string>> asms;
  std::set<std::pair<unsigned, const VarDecl *>> seenUse;

  static bool mentions(const std::string &text, const std::string &name) {
    for (size_t p = text.find(name); p != std::string::npos; p = text.find(name, p + 1)) {
      auto id = [](char c) { return isalnum((unsigned char)c) || c == '_' || c == '$'; };
      if ((p == 0 || !id(text[p - 1])) && (p + name.size() >= text.size() || !id(text[p + name.size()]))) return true;
    }
    return false;
  }

  void err(SourceLocation l, const std::string &m) { res.errors.push_back({l, m}); }

  bool inSystem(SourceLocation l) const {
    if (l.isInvalid()) return true;
    return sm.isInSystemHeader(sm.getExpansionLoc(l)) || sm.isInSystemMacro(l);
  }

  void record(const VarDecl *v) {
    const VarDecl *n = normalize(v);
    if (inSystem(n->getLocation())) return;
    auto it = res.index.find(n);
    size_t i;
    if (it == res.index.end()) {
      i = res.globals.size();
      GlobalRec g;
      g.decl = n;
      g.def = nullptr;
      res.globals.push_back(g);
      res.index[n] = i;
    } else {
      i = it->second;
    }
    // The definition comes from the pattern, never from an instantiation.
    if (v->getTemplateSpecializationKind() >= TSK_ImplicitInstantiation && v != n) return;
    VarDecl::DefinitionKind k = v->isThisDeclarationADefinition();
    if (k == VarDecl::Definition || (k == VarDecl::TentativeDefinition && !res.globals[i].def))
      res.globals[i].def = v;
  }

  void use(Expr *e, VarDecl *v) {
    if (!v->hasGlobalStorage() || isa<ParmVarDecl>(v)) return;
    const VarDecl *n = normalize(v);
    if (inSystem(n->getLocation())) return;
    if (inStaticInit) {
      initUses.push_back({normalize(inStaticInit), n});
      res.initRefs.push_back({e, n});
      return;
    }
    if (ompClauseRefs.count(e)) {
      ompUses.push_back({e, n});
      return;
    }
    // Instantiations repeat the pattern's uses: keep one per written location.
    unsigned key = e->getBeginLoc().getRawEncoding();
    if (!seenUse.insert({key, n}).second) return;
    res.uses.push_back({e, n});
  }

  bool markedShared(const VarDecl *v) const {
    for (const VarDecl *r : v->redecls())
      for (const auto *a : r->specific_attrs<AnnotateAttr>())
        if (a->getAnnotation() == "skein_shared") return true;
    return opt.shared.count(v->getNameAsString()) || opt.shared.count(v->getQualifiedNameAsString());
  }

  std::string kindOf(const VarDecl *v) const {
    std::string k;
    if (v->isStaticDataMember()) k = "static data member";
    else if (v->isStaticLocal()) k = "static local";
    else k = "file-scope";
    if (v->getTLSKind() != VarDecl::TLS_None || v->hasAttr<OMPThreadPrivateDeclAttr>()) k += ", thread_local";
    if (isTemplated(v)) k += ", template";
    if (v->isInline()) k += ", inline";
    return k;
  }

  void decide(GlobalRec &g) {
    const VarDecl *v = g.decl;
    const VarDecl *d = g.def ? g.def : v->getDefinition();
    g.name = v->getQualifiedNameAsString();
    g.kind = kindOf(v);
    QualType t = (d ? d : v)->getType();
    g.type = t.getAsString(ctx.getPrintingPolicy());
    if (!t->isDependentType() && !t->isIncompleteType()) g.size = ctx.getTypeSizeInChars(t).getQuantity();
    if (markedShared(v)) {
      g.action = Action::KeepShared;
      g.why = "marked shared";
      return;
    }
    if (ctx.getBaseElementType(t).isConstQualified() || v->isConstexpr()) {
      g.action = Action::KeepConst;
      g.why = "const";
      return;
    }
    if (t->isReferenceType()) {
      g.action = Action::KeepConst;
      g.why = "reference (cannot be re-bound)";
      return;
    }
    SourceLocation where = (d ? d : v)->getLocation();
    bool cxx = ctx.getLangOpts().CPlusPlus;
    // Inline variables, template statics and internal-linkage definitions in headers have
    // no single defining file: their per-rank copies are found by address, a decision
    // every translation unit makes alike from the declaration alone.
    // With headers rewritten (what mpicc -fprivatize does, and what --report assumes), a
    // namespace-scope definition in a header is edited in this translation unit's copy of
    // the header like one in the source: an internal one (`static std::vector<T> v;`) is
    // this unit's own object, an external one (stb-style `#ifdef LIB_IMPLEMENTATION`) is
    // defined by one unit in a well-formed program, as the link checks. Static locals of
    // header functions stay found by address (inline functions merge across units).
    bool inHeader = !sm.isWrittenInMainFile(sm.getSpellingLoc(where));
    bool internalInHeader = d && inHeader && (d->isStaticLocal() || (!d->isExternallyVisible() && !opt.headers));
    g.slowPath = (cxx && (v->isInline() || isTemplated(v))) || internalInHeader;
    // `int x;` in C: a tentative definition, often in a header included by several files
    // (legacy codes built with -fcommon). It becomes a weak definition in the section, so
    // the copies merge like common symbols.
    g.weak = !cxx && d && d->isThisDeclarationADefinition() == VarDecl::TentativeDefinition &&
             d->isExternallyVisible() && !d->getInit() &&
             (opt.fcommon || inHeader);
    if (d && !g.slowPath && !opt.headers && inHeader && !d->isStaticLocal()) {
      fail(g, where, "definition of mutable global '" + g.name +
                         "' in a header: move the definition into a source file (keep an extern declaration in the "
                         "header), or mark it shared");
      return;
    }
    if (d && where.isMacroID()) {
      fail(g, where, "definition of '" + g.name + "' comes from a macro expansion: not supported");
      return;
    }
    for (const VarDecl *r : v->redecls())
      if (r->hasAttr<SectionAttr>()) {
        fail(g, where, "'" + g.name + "' already has a section attribute");
        return;
      }
    bool tlsDynamic = false;
    if (cxx && d && !t->isDependentType()) {
      const Expr *init = d->getInit();
      if (init && !init->isConstantInitializer(ctx, false)) tlsDynamic = true;
      if (const CXXRecordDecl *rd = ctx.getBaseElementType(t)->getAsCXXRecordDecl())
        if (rd->hasDefinition() && !rd->hasTrivialDestructor()) tlsDynamic = true;
    }
    if (v->getTLSKind() != VarDecl::TLS_None || v->hasAttr<OMPThreadPrivateDeclAttr>()) {
      if (tlsDynamic) {
        fail(g, where, "thread_local '" + g.name + "' with dynamic initialization or destruction: not supported");
        return;
      }
      if (v->isStaticDataMember() || isTemplated(v) || v->isInline()) {
        fail(g, where, "thread_local static data members, templates and inline variables are not supported ('" + g.name + "')");
        return;
      }
      g.action = Action::PrivTls;
      g.slowPath = false;
      return;
    }
    bool dynamicInit = false, nontrivialDtor = false;
    if (ctx.getLangOpts().CPlusPlus && d && !t->isDependentType()) {
      const Expr *init = d->getInit();
      if (init && !init->isConstantInitializer(ctx, t->isReferenceType())) dynamicInit = true;
      if (const CXXRecordDecl *rd = ctx.getBaseElementType(t)->getAsCXXRecordDecl())
        if (rd->hasDefinition() && !rd->hasTrivialDestructor()) nontrivialDtor = true;
    }
    if (dynamicInit || nontrivialDtor) {
      if (d->isStaticLocal()) {
        // Replaced by a reference to a per-rank object built when the rank first passes
        // the declaration (rewrite.cpp), as the compiler builds the static.
        const DeclStmt *ds = nullptr;
        for (const DynTypedNode &n : ctx.getParents(*d))
          if ((ds = n.get<DeclStmt>())) break;
        if (!ds || !ds->isSingleDecl() || t->getContainedDeducedType() || t->isArrayType() ||
            d->getTypeSourceInfo() == nullptr) {
          fail(g, where, "static local '" + g.name + "' with a constructor: declare it alone, with its type spelled out (not auto, not an array)");
          return;
        }
        g.action = Action::PrivCtor;
        g.localObject = true;
        return;
      }
      if (g.slowPath || t->isArrayType()) {
        fail(g, where, "'" + g.name + "' (" + std::string(t->isArrayType() ? "array of objects" : v->isInline() ? "inline variable" : isTemplated(v) ? "template static" : "static in a header, outside header mode") +
                           ") with a constructor or dynamic initializer: not supported");
        return;
      }
      g.action = Action::PrivCtor;
      return;
    }
    if (g.slowPath) {
      g.action = Action::PrivData;
      return;
    }
    g.action = Action::PrivBss;
    if (d && d->getInit()) {
      const Expr *init = d->getInit();
      if (!t->isDependentType() && !init->isValueDependent()) {
        if (const APValue *val = d->evaluateValue()) {
          if (!isZero(*val)) g.action = Action::PrivData;
        } else if (!isZeroInit(init, ctx)) {
          g.action = Action::PrivData;
        }
      } else {
        g.action = Action::PrivData;
      }
    }
  }

  void fail(GlobalRec &g, SourceLocation l, const std::string &m) {
    g.action = Action::Error;
    g.why = m;
    err(l, m);
  }
};

}  // namespace

TUResult findGlobals(ASTContext &ctx, const Options &opt) {
  TUResult res;
  Visitor v(ctx, opt, res);
  // With a PCH of system headers (main.cpp, pch.h), only this unit's own declarations: the
  // headers hold none of the program's globals, and walking them would load them all.
  if (ctx.getExternalSource()) {
    std::vector<Decl *> own;
    for (Decl *d : ctx.getTranslationUnitDecl()->noload_decls())
      if (!d->isFromASTFile()) own.push_back(d);
    ctx.setTraversalScope(own);
  }
  v.TraverseDecl(ctx.getTranslationUnitDecl());
  v.finish();
  return res;
}

}  // namespace skn
