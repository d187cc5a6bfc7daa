// Unit tests of the privatizer's finder: which globals it sees, their kind and the action
// it chooses, on small sources parsed in memory.
#include "finder.h"

#include "clang/Frontend/ASTUnit.h"
#include "clang/Tooling/Tooling.h"
#include <gtest/gtest.h>

namespace {

struct Parsed {
  std::unique_ptr<clang::ASTUnit> ast;
  skn::TUResult res;
  const skn::GlobalRec *get(const std::string &name) const {
    for (const skn::GlobalRec &g : res.globals)
      if (g.name == name) return &g;
    return nullptr;
  }
};

Parsed parse(const std::string &code, bool cxx = false, std::set<std::string> shared = {},
             const std::string &header = "", bool headers = false) {
  Parsed p;
  std::vector<std::string> args = {cxx ? "-std=c++17" : "-std=gnu11", "-resource-dir=" CLANG_RESOURCE_DIR, "-I/virtual"};
  clang::tooling::FileContentMappings files;
  if (!header.empty()) files.push_back({"/virtual/lib.h", header});
  p.ast = clang::tooling::buildASTFromCodeWithArgs(code, args, cxx ? "input.cpp" : "input.c", "clang-tool",
                                                   std::make_shared<clang::PCHContainerOperations>(),
                                                   clang::tooling::getClangStripDependencyFileAdjuster(), files);
  skn::Options opt;
  opt.shared = shared;
  opt.headers = headers;
  p.res = skn::findGlobals(p.ast->getASTContext(), opt);
  return p;
}

TEST(Finder, FileScopeStaticAndLocal) {
  Parsed p = parse("int a; static int b = 3; int f(void) { static int c; int d = 0; return a + b + c + d; }");
  ASSERT_TRUE(p.get("a") && p.get("b") && p.get("c"));
  EXPECT_EQ(p.get("a")->action, skn::Action::PrivBss);
  EXPECT_EQ(p.get("b")->action, skn::Action::PrivData);
  EXPECT_EQ(p.get("c")->action, skn::Action::PrivBss);
  EXPECT_EQ(p.get("c")->kind, "static local");
  EXPECT_EQ(p.get("d"), nullptr);  // automatic
  EXPECT_EQ(p.res.uses.size(), 3u);
}

TEST(Finder, ZeroInitializersGoToBss) {
  Parsed p = parse("int a = 0; double g[100] = {0}; struct s { int x; void *p; } z = {0, 0}; int n = 1;");
  EXPECT_EQ(p.get("a")->action, skn::Action::PrivBss);
  EXPECT_EQ(p.get("g")->action, skn::Action::PrivBss);
  EXPECT_EQ(p.get("z")->action, skn::Action::PrivBss);
  EXPECT_EQ(p.get("n")->action, skn::Action::PrivData);
  EXPECT_EQ(p.get("g")->size, 800);
}

TEST(Finder, ConstAndSharedAreLeftAlone) {
  Parsed p = parse("const int k = 1; int __attribute__((annotate(\"skein_shared\"))) s; int cli; int mine;", false,
                   {"cli"});
  EXPECT_EQ(p.get("k")->action, skn::Action::KeepConst);
  EXPECT_EQ(p.get("s")->action, skn::Action::KeepShared);
  EXPECT_EQ(p.get("cli")->action, skn::Action::KeepShared);
  EXPECT_EQ(p.get("mine")->action, skn::Action::PrivBss);
}

TEST(Finder, AddressInitializersNeedAHook) {
  Parsed p = parse("int x; int *p = &x; int *q = 0;");
  EXPECT_TRUE(p.get("p")->needsHook);
  EXPECT_FALSE(p.get("q")->needsHook);
  EXPECT_TRUE(p.res.errors.empty());
}

TEST(Finder, ExternDeclarationsAreUsesOnly) {
  Parsed p = parse("extern int e; int f(void) { return e; }");
  ASSERT_TRUE(p.get("e"));
  EXPECT_EQ(p.get("e")->def, nullptr);
  EXPECT_EQ(p.res.uses.size(), 1u);
}

TEST(Finder, ThreadLocal) {
  Parsed p = parse("__thread int t = 4; _Thread_local int u;");
  EXPECT_EQ(p.get("t")->action, skn::Action::PrivTls);
  EXPECT_EQ(p.get("u")->action, skn::Action::PrivTls);
  EXPECT_NE(p.get("t")->kind.find("thread_local"), std::string::npos);
}

TEST(Finder, InlineAsmNamingAGlobalIsAnError) {
  Parsed p = parse("int g; void f(void) { __asm__(\"incl g(%rip)\"); }");
  ASSERT_EQ(p.res.errors.size(), 1u);
  EXPECT_NE(p.res.errors[0].msg.find("inline assembly"), std::string::npos);
}

TEST(Finder, CxxKinds) {
  Parsed p = parse(R"(
    #include <string>
    struct S { static int m; static inline int i = 2; };
    int S::m = 1;
    template <class T> struct B { static T v; };
    template <class T> T B<T>::v;
    inline int iv = 3;
    std::string name("x");
    constexpr int c = 4;
    int use() { return S::m + S::i + B<int>::v + B<long>::v + iv + (int)name.size() + c; })",
                   true);
  EXPECT_EQ(p.get("S::m")->action, skn::Action::PrivData);
  EXPECT_EQ(p.get("S::m")->kind, "static data member");
  EXPECT_TRUE(p.get("S::i")->slowPath);
  EXPECT_TRUE(p.get("B::v")->slowPath);
  EXPECT_NE(p.get("B::v")->kind.find("template"), std::string::npos);
  EXPECT_TRUE(p.get("iv")->slowPath);
  EXPECT_EQ(p.get("name")->action, skn::Action::PrivCtor);
  EXPECT_EQ(p.get("c")->action, skn::Action::KeepConst);
  // B<int>::v and B<long>::v are one pattern: one record, uses from both instantiations
  int n = 0;
  for (const skn::GlobalRec &g : p.res.globals) n += g.name == "B::v";
  EXPECT_EQ(n, 1);
}

TEST(Finder, CxxStaticLocalWithConstructor) {
  Parsed p = parse("#include <string>\nstd::string &f() { static std::string s(\"x\"); return s; }\n"
                   "std::string &g() { static std::string a, b; return a; }\n"
                   "std::string &h() { static auto c = std::string(); return c; }", true);
  EXPECT_EQ(p.get("s")->action, skn::Action::PrivCtor);
  EXPECT_TRUE(p.get("s")->localObject);
  EXPECT_EQ(p.get("a")->action, skn::Action::Error);  // two declarators
  EXPECT_EQ(p.get("c")->action, skn::Action::Error);  // auto
}

}  // namespace

// Definitions in a project header: privatized in this unit's copy of the header when
// headers are rewritten (a build, --report), refused when only the source is.
TEST(Finder, HeaderDefinitionsWithHeaders) {
  const char *header = "#include <vector>\nstatic std::vector<int> requests;\n#ifdef LIB_IMPLEMENTATION\nint level = 8;\n#endif\n";
  const char *code = "#define LIB_IMPLEMENTATION\n#include \"lib.h\"\nint f() { requests.push_back(level); return (int)requests.size(); }\n";
  Parsed with = parse(code, true, {}, header, true);
  ASSERT_TRUE(with.get("requests") && with.get("level"));
  EXPECT_EQ(with.get("requests")->action, skn::Action::PrivCtor);
  EXPECT_FALSE(with.get("requests")->slowPath);
  EXPECT_EQ(with.get("level")->action, skn::Action::PrivData);
  EXPECT_TRUE(with.res.errors.empty());
  Parsed without = parse(code, true, {}, header, false);
  EXPECT_EQ(without.get("level")->action, skn::Action::Error);
  EXPECT_EQ(without.get("requests")->action, skn::Action::Error);
}
