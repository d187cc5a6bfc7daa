// C++ error cases (see errors.c for the convention).
#include <string>

thread_local std::string tls_name;  // expected-error {{thread_local 'tls_name' with dynamic initialization}}

std::string &name_ref() {
  static std::string cached("x"), other("y");  // expected-error {{declare it alone}}
  return cached;
}
