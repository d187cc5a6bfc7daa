// skein_fpriv: GCC plugin that makes a Fortran unit's static-storage variables per rank
// (mpifort -fprivatize). See privatizer/README.md and docs/architecture.md, "Privatizer:
// Fortran".
//
// The C path (skein-privatize) rewrites sources; gfortran has no such hook, so this plugin
// works on the middle end instead, with the same run-time contract:
//  - every privatizable definition of the unit is put in section skn_pdata (initialized)
//    or skn_pbss (NOBITS, all zero), so libskein gives each rank a copy of the module's
//    sections, made from the process image at rank start (BLOCK DATA and DATA values
//    included);
//  - each statement that uses such a variable V gets, just before it,
//      d = __skn_priv_delta ();  p = &V + d;
//    and V is replaced by *p. __skn_priv_delta is the stub's `const` accessor, so after
//    the optimizers' value numbering and loop-invariant motion one call per function (or
//    per loop nest) remains, as in the C path.
// The rewrite runs first in the lowering passes, on high GIMPLE, right after the
// gimplifier: V is given a DECL_VALUE_EXPR of *p and the statement is regimplified, which
// is how GCC's own OpenMP lowering redirects variables (it handles V as an lvalue, an
// address passed to a procedure, a COMMON member, an array element, ...).
//
// What gets privatized: variables with static storage that are not read-only (COMMON
// blocks, blank COMMON, module variables, SAVEd and DATA-initialized locals, main-program
// variables, EQUIVALENCE storage) and every variable the unit uses from another unit
// (module variables by use association). Left shared: Skein's own sentinels (skn_*
// COMMON blocks, the mpi and mpi_f08 modules) and variables named by shared=...
//
// Plugin arguments: report (list the variables as notes, change nothing),
// shared=a,b (Fortran names or /common/ names to leave shared).
#include "gcc-plugin.h"
#include "plugin-version.h"

#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "gimple-walk.h"
#include "gimplify.h"
#include "gimplify-me.h"
#include "cgraph.h"
#include "varasm.h"
#include "stringpool.h"
#include "attribs.h"
#include "diagnostic-core.h"
#include "langhooks.h"
#include "stor-layout.h"
#include "hash-set.h"

#include <string>
#include <set>

int plugin_is_GPL_compatible;

static bool report_only = false;
static std::set<std::string> shared_names; // lower case Fortran names
static hash_set<tree> *reported;           // decls already diagnosed
static tree delta_fn;                      // __skn_priv_delta
static hash_set<tree> *used_externals;     // privatized variables of other units used here

static const char *const kDataSection = "skn_pdata,\"aw\",@progbits#";
static const char *const kBssSection = "skn_pbss,\"aw\",@nobits#";

// "GNU Fortran2008" etc.: the name carries the language standard
static bool is_fortran() { return strncmp(lang_hooks.name, "GNU Fortran", 11) == 0; }

static const char *asm_name(tree v) {
  return IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(v));
}
static std::string fortran_name(tree v) {
  return DECL_NAME(v) ? IDENTIFIER_POINTER(DECL_NAME(v)) : asm_name(v);
}
static bool starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static bool is_common(tree v) {
  return TREE_PUBLIC(v) && DECL_CONTEXT(v) && TREE_CODE(DECL_CONTEXT(v)) == TRANSLATION_UNIT_DECL &&
         (DECL_COMMON(v) || TREE_CODE(TREE_TYPE(v)) == RECORD_TYPE || TREE_CODE(TREE_TYPE(v)) == UNION_TYPE);
}

// "COMMON /blk/", "module variable m::x", ... for diagnostics.
static std::string describe(tree v) {
  tree ctx = DECL_CONTEXT(v);
  std::string n = fortran_name(v);
  if (ctx && TREE_CODE(ctx) == NAMESPACE_DECL && DECL_NAME(ctx))
    return "module variable " + std::string(IDENTIFIER_POINTER(DECL_NAME(ctx))) + "::" + n;
  if (ctx && TREE_CODE(ctx) == FUNCTION_DECL) {
    std::string fn = DECL_NAME(ctx) ? IDENTIFIER_POINTER(DECL_NAME(ctx)) : "?";
    if (starts(n.c_str(), "equiv.")) return "EQUIVALENCE storage in " + fn;
    if (!strcmp(asm_name(ctx), "MAIN__")) return "main-program variable " + n;
    return "SAVE variable " + n + " of " + fn;
  }
  if (DECL_EXTERNAL(v)) return "variable " + n + " of another unit (" + asm_name(v) + ")";
  if (is_common(v)) return n == "__BLNK__" ? std::string("blank COMMON") : "COMMON /" + n + "/";
  return "variable " + n;
}

// Skein's own variables, shared by all ranks on purpose.
static bool skein_sentinel(tree v) {
  const char *a = asm_name(v);
  return starts(a, "skn_") || starts(a, "__skn") || starts(a, "__mpi_MOD_") || starts(a, "__mpi_f08_MOD_") ||
         starts(a, "__skein_");
}

static bool user_shared(tree v) {
  std::string n = fortran_name(v);
  for (auto &c : n) c = (char)TOLOWER(c);
  return shared_names.count(n) || shared_names.count("/" + n + "/");
}

// Whether V lives in per-rank storage once the unit is compiled with the plugin.
static bool privatizable(tree v) {
  if (!VAR_P(v) || !(TREE_STATIC(v) || DECL_EXTERNAL(v)) || TREE_READONLY(v)) return false;
  if (DECL_HAS_VALUE_EXPR_P(v)) return false; // a COMMON or EQUIVALENCE member: its storage is
  if (DECL_ARTIFICIAL(v) && !(DECL_NAME(v) && starts(IDENTIFIER_POINTER(DECL_NAME(v)), "equiv.")))
    return false; // vtables, default initializers, I/O descriptors: constant in effect
  if (DECL_HARD_REGISTER(v)) return false;
  if (skein_sentinel(v) || user_shared(v)) return false;
  // at file scope only COMMON blocks hold data (a BLOCK DATA unit also leaves a symbol of
  // its name, for EXTERNAL references to it)
  if (!DECL_EXTERNAL(v) && DECL_CONTEXT(v) && TREE_CODE(DECL_CONTEXT(v)) == TRANSLATION_UNIT_DECL && !is_common(v))
    return false;
  return true;
}

// Errors for what cannot be made per rank; each decl is diagnosed once.
static bool check_decl(tree v) {
  if (DECL_THREAD_LOCAL_P(v)) {
    if (!reported->add(v))
      error_at(DECL_SOURCE_LOCATION(v),
               "skein -fprivatize: cannot privatize %s: it is THREADPRIVATE (thread-local storage is "
               "shared by the ranks of a worker); remove THREADPRIVATE or leave it shared with "
               "-fprivatize-shared=%s",
               describe(v).c_str(), fortran_name(v).c_str());
    return false;
  }
  return true;
}

// A Skein sentinel COMMON block must hold only Skein's own members: EQUIVALENCE with a
// user variable would make that variable shared behind the user's back.
static void check_sentinel(tree v) {
  if (!is_common(v) || !starts(asm_name(v), "skn_")) return;
  tree t = TREE_TYPE(v);
  if (TREE_CODE(t) != RECORD_TYPE && TREE_CODE(t) != UNION_TYPE) return;
  for (tree f = TYPE_FIELDS(t); f; f = DECL_CHAIN(f)) {
    if (TREE_CODE(f) != FIELD_DECL || !DECL_NAME(f)) continue;
    const char *n = IDENTIFIER_POINTER(DECL_NAME(f));
    // mpif.h's own members are named after the sentinel (mpi_bottom, ...)
    if (!starts(n, "skn_") && !starts(n, "mpi_") && !reported->add(f))
      error_at(DECL_SOURCE_LOCATION(f),
               "skein -fprivatize: cannot privatize %qs: it shares storage (EQUIVALENCE) with Skein's "
               "COMMON /%s/, which stays shared by all ranks",
               n, fortran_name(v).c_str());
  }
}

// ---- the rewrite of uses ---------------------------------------------------------------

struct find_data {
  auto_vec<tree> vars;
};

static tree find_var(tree *tp, int *walk_subtrees, void *data) {
  struct walk_stmt_info *wi = (struct walk_stmt_info *)data;
  find_data *fd = (find_data *)wi->info;
  tree t = *tp;
  if (TYPE_P(t)) {
    *walk_subtrees = 0;
    return NULL_TREE;
  }
  if (VAR_P(t) && privatizable(t)) {
    if (DECL_EXTERNAL(t)) used_externals->add(t);
    if (check_decl(t) && !fd->vars.contains(t)) fd->vars.safe_push(t);
    *walk_subtrees = 0;
  }
  return NULL_TREE;
}

static tree delta_decl() {
  if (delta_fn) return delta_fn;
  tree type = build_function_type_list(sizetype, NULL_TREE);
  tree fn = build_decl(BUILTINS_LOCATION, FUNCTION_DECL, get_identifier("__skn_priv_delta"), type);
  TREE_PUBLIC(fn) = 1;
  DECL_EXTERNAL(fn) = 1;
  DECL_ARTIFICIAL(fn) = 1;
  TREE_READONLY(fn) = 1; // const: the rank's delta never changes under running code
  TREE_NOTHROW(fn) = 1;
  DECL_VISIBILITY(fn) = VISIBILITY_HIDDEN; // each module reaches its own stub
  DECL_VISIBILITY_SPECIFIED(fn) = 1;
  delta_fn = fn;
  return fn;
}

static void rewrite_stmt(gimple_stmt_iterator *gsi, find_data &fd) {
  gimple *stmt = gsi_stmt(*gsi);
  location_t loc = gimple_location(stmt);
  tree d = create_tmp_var(sizetype, "skn_delta");
  gcall *call = gimple_build_call(delta_decl(), 0);
  gimple_call_set_lhs(call, d);
  gimple_set_location(call, loc);
  gsi_insert_before(gsi, call, GSI_SAME_STMT);
  // A rank's copy mirrors whole pages (priv.c: map_module), so the delta is a multiple of
  // the page size. Saying so (one AND, hoisted with the call) lets gcc keep the alignment
  // it knows of V for the copy: aligned vector loads in stencils over COMMON arrays.
  tree dp = create_tmp_var(sizetype, "skn_delta");
  gassign *mask = gimple_build_assign(dp, BIT_AND_EXPR, d, build_int_cst(sizetype, -4096));
  gimple_set_location(mask, loc);
  gsi_insert_before(gsi, mask, GSI_SAME_STMT);
  d = dp;
  for (tree v : fd.vars) {
    tree type = TREE_TYPE(v);
    if (DECL_ALIGN(v) < TYPE_ALIGN(type)) type = build_aligned_type(type, DECL_ALIGN(v));
    tree ptype = build_pointer_type(type);
    tree p = create_tmp_var(ptype, "skn_priv");
    TREE_ADDRESSABLE(v) = 1;
    gassign *a = gimple_build_assign(p, POINTER_PLUS_EXPR, build_fold_addr_expr_with_type(v, ptype), d);
    gimple_set_location(a, loc);
    gsi_insert_before(gsi, a, GSI_SAME_STMT);
    SET_DECL_VALUE_EXPR(v, build2(MEM_REF, type, p, build_int_cst(reference_alias_ptr_type(v), 0)));
    DECL_HAS_VALUE_EXPR_P(v) = 1;
  }
  gimple_regimplify_operands(stmt, gsi);
  for (tree v : fd.vars) {
    DECL_HAS_VALUE_EXPR_P(v) = 0;
    SET_DECL_VALUE_EXPR(v, NULL_TREE);
  }
}

static tree rewrite_cb(gimple_stmt_iterator *gsi, bool *handled_ops, struct walk_stmt_info *) {
  gimple *stmt = gsi_stmt(*gsi);
  find_data fd;
  struct walk_stmt_info wi;
  memset(&wi, 0, sizeof wi);
  wi.info = &fd;
  switch (gimple_code(stmt)) {
    case GIMPLE_ASSIGN:
    case GIMPLE_CALL:
    case GIMPLE_COND:
    case GIMPLE_SWITCH:
    case GIMPLE_RETURN:
    case GIMPLE_ASM:
      *handled_ops = true;
      walk_gimple_op(stmt, find_var, &wi);
      if (!fd.vars.is_empty() && !report_only) rewrite_stmt(gsi, fd);
      return NULL_TREE;
    default:
      // containers (bind, try, OpenMP regions, ...): their operands (OpenMP clauses) must
      // not name a privatized variable; their bodies are walked as usual
      walk_gimple_op(stmt, find_var, &wi);
      for (tree v : fd.vars)
        if (!reported->add(v))
          error_at(gimple_location(stmt),
                   "skein -fprivatize: cannot privatize %s: it is named in an OpenMP construct's "
                   "clauses (leave it shared with -fprivatize-shared=%s)",
                   describe(v).c_str(), fortran_name(v).c_str());
      *handled_ops = false;
      return NULL_TREE;
  }
}

namespace {
const pass_data fpriv_pass_data = {
    GIMPLE_PASS, "skein_fpriv", OPTGROUP_NONE, TV_NONE, PROP_gimple_any, 0, 0, 0, 0,
};

struct fpriv_pass : gimple_opt_pass {
  fpriv_pass(gcc::context *ctx) : gimple_opt_pass(fpriv_pass_data, ctx) {}
  bool gate(function *) final override { return is_fortran(); }
  unsigned int execute(function *fun) final override {
    gimple_seq body = gimple_body(fun->decl);
    struct walk_stmt_info wi;
    memset(&wi, 0, sizeof wi);
    walk_gimple_seq_mod(&body, rewrite_cb, NULL, &wi);
    gimple_set_body(fun->decl, body);
    return 0;
  }
};
} // namespace

// ---- definitions: sections, COMMON, static initializers --------------------------------

static tree find_addr_of_private(tree *tp, int *walk_subtrees, void *) {
  if (TYPE_P(*tp)) *walk_subtrees = 0;
  else if (TREE_CODE(*tp) == ADDR_EXPR) {
    tree base = get_base_address(TREE_OPERAND(*tp, 0));
    if (base && VAR_P(base) && privatizable(base)) return base;
  }
  return NULL_TREE;
}

static void place_definitions(void *, void *) {
  if (!is_fortran()) return;
  varpool_node *node;
  FOR_EACH_VARIABLE(node) {
    tree v = node->decl;
    if (!VAR_P(v)) continue;
    check_sentinel(v);
    // no static initializer may hold the address of a per-rank variable: it would point at
    // the process copy in every rank
    tree init = DECL_INITIAL(v);
    if (init && init != error_mark_node) {
      if (tree target = walk_tree_without_duplicates(&init, find_addr_of_private, NULL))
        if (!reported->add(target))
          error_at(DECL_SOURCE_LOCATION(target),
                   "skein -fprivatize: cannot privatize %s: its address is in the static initializer of %s",
                   describe(target).c_str(), describe(v).c_str());
    }
    if (DECL_EXTERNAL(v) || !privatizable(v) || !check_decl(v)) continue;
    bool zero = !init || (init != error_mark_node && initializer_zerop(init));
    if (report_only) {
      unsigned HOST_WIDE_INT size =
          DECL_SIZE_UNIT(v) && tree_fits_uhwi_p(DECL_SIZE_UNIT(v)) ? tree_to_uhwi(DECL_SIZE_UNIT(v)) : 0;
      inform(DECL_SOURCE_LOCATION(v), "skein -fprivatize: %s (%s, %wu bytes) would be per rank",
             describe(v).c_str(), zero ? "zero-initialized" : "initialized", size);
      continue;
    }
    if (DECL_COMMON(v)) {
      // An uninitialized COMMON block is a common symbol, merged by the linker, which
      // cannot live in a named section. Each unit defines it weakly instead: the linker
      // keeps one, and a BLOCK DATA or DATA definition (strong, in skn_pdata) wins.
      DECL_COMMON(v) = 0;
      DECL_WEAK(v) = 1;
    }
    set_decl_section_name(v, zero ? kBssSection : kDataSection);
    // a marker for the units that use it (below); not for COMMON, defined in every unit
    if (TREE_PUBLIC(v) && !DECL_WEAK(v)) {
      std::string a = asm_name(v);
      std::string text = "\t.globl " + a + ".skn_priv\n\t.hidden " + a + ".skn_priv\n\t.set " + a + ".skn_priv, " + a + "\n";
      symtab->finalize_toplevel_asm(build_string(text.size(), text.c_str()));
    }
  }
  // A variable of another unit (a module variable) is per rank only if that unit was
  // compiled with -fprivatize too: reference the marker its definition then carries, so a
  // mismatch is a link error naming the variable rather than a wrong address at run time.
  if (!report_only)
    for (tree v : *used_externals) {
      std::string a = asm_name(v);
      std::string text = "\t.pushsection skn_pcheck,\"aw\",@progbits\n\t.quad " + a + ".skn_priv\n\t.popsection\n";
      symtab->finalize_toplevel_asm(build_string(text.size(), text.c_str()));
    }
}

// ---- plugin entry ----------------------------------------------------------------------

int plugin_init(struct plugin_name_args *info, struct plugin_gcc_version *version) {
  if (!plugin_default_version_check(version, &gcc_version)) {
    error("skein_fpriv: built for GCC %s, loaded in GCC %s", gcc_version.basever, version->basever);
    return 1;
  }
  for (int i = 0; i < info->argc; i++) {
    const char *k = info->argv[i].key, *val = info->argv[i].value;
    if (!strcmp(k, "report")) report_only = true;
    else if (!strcmp(k, "shared") && val) {
      std::string s(val);
      size_t b = 0;
      while (b <= s.size()) {
        size_t e = s.find(',', b);
        if (e == std::string::npos) e = s.size();
        std::string n = s.substr(b, e - b);
        for (auto &c : n) c = (char)TOLOWER(c);
        if (!n.empty()) shared_names.insert(n);
        b = e + 1;
      }
    } else {
      error("skein_fpriv: unknown argument %qs", k);
      return 1;
    }
  }
  reported = new hash_set<tree>;
  used_externals = new hash_set<tree>;
  register_pass_info pass;
  pass.pass = new fpriv_pass(g);
  pass.reference_pass_name = "*warn_unused_result";
  pass.ref_pass_instance_number = 1;
  pass.pos_op = PASS_POS_INSERT_AFTER;
  register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &pass);
  register_callback(info->base_name, PLUGIN_ALL_IPA_PASSES_START, place_definitions, NULL);
  static struct plugin_info pinfo = {"1", "Skein: per-rank Fortran globals (mpifort -fprivatize)"};
  register_callback(info->base_name, PLUGIN_INFO, NULL, &pinfo);
  return 0;
}
