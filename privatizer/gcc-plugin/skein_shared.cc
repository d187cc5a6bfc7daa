// skein_shared: GCC plugin that gives `#pragma skein shared(a, b)` its meaning in a plain
// C/C++ build (mpicc/mpicxx without -fprivatize load it). skein-privatize reads the pragma
// when it rewrites a source; gcc alone ignores it, so a global the user marked shared was
// still named by the link-time warning and the runtime's start-up line. With this plugin
// the named variables go to section skn_shared, exactly as SKEIN_SHARED puts them, and both
// checks (which skip that section) leave them out.
//
// Same reading as skein-privatize (privatizer/tool/main.cpp, SharedPragma): identifiers,
// commas and `::` between the parentheses; every identifier names the variables of that
// name anywhere in the unit (file-scope, static members, static locals), wherever the
// pragma sits; a malformed pragma is an error with the tool's words.
#include "gcc-plugin.h"
#include "plugin-version.h"

#include "tree.h"
#include "c-family/c-common.h"
#include "c-family/c-pragma.h"
#include "cgraph.h"
#include "diagnostic-core.h"
#include "varasm.h"

#include <set>
#include <string>

int plugin_is_GPL_compatible;

static std::set<std::string> shared_names;

static void bad(location_t loc) { error_at(loc, "expected %<#pragma skein shared(name, ...)%>"); }

// #pragma skein shared(a, b, ns::c)
static void handle_shared(cpp_reader *) {
  tree t;
  location_t loc;
  if (pragma_lex(&t, &loc) != CPP_OPEN_PAREN) return bad(loc);
  for (;;) {
    enum cpp_ttype k = pragma_lex(&t, &loc);
    if (k == CPP_NAME) shared_names.insert(IDENTIFIER_POINTER(t));
    else if (k == CPP_CLOSE_PAREN) break;
    else if (k != CPP_COMMA && k != CPP_SCOPE && k != CPP_COLON) return bad(loc);
  }
}

static void register_pragmas(void *, void *) { c_register_pragma("skein", "shared", handle_shared); }

// After the parse, before any variable is output: every definition of the unit is known.
static void place_shared(void *, void *) {
  if (shared_names.empty()) return;
  varpool_node *node;
  FOR_EACH_VARIABLE(node) {
    tree v = node->decl;
    // const data is not in the checks' sections; TLS and explicit sections stay where they are
    if (!VAR_P(v) || DECL_EXTERNAL(v) || DECL_ARTIFICIAL(v) || !DECL_NAME(v) || TREE_READONLY(v) ||
        DECL_THREAD_LOCAL_P(v) || DECL_SECTION_NAME(v))
      continue;
    if (shared_names.count(IDENTIFIER_POINTER(DECL_NAME(v)))) set_decl_section_name(v, "skn_shared");
  }
}

int plugin_init(struct plugin_name_args *info, struct plugin_gcc_version *version) {
  if (!plugin_default_version_check(version, &gcc_version)) {
    error("skein_shared: built for GCC %s, loaded by GCC %s", gcc_version.basever, version->basever);
    return 1;
  }
  static struct plugin_info pinfo = {"1", "#pragma skein shared(...) for plain mpicc/mpicxx builds"};
  register_callback(info->base_name, PLUGIN_INFO, NULL, &pinfo);
  register_callback(info->base_name, PLUGIN_PRAGMAS, register_pragmas, NULL);
  register_callback(info->base_name, PLUGIN_ALL_IPA_PASSES_START, place_shared, NULL);
  return 0;
}
