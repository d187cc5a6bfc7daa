/* Error cases: each line marked expected-error with a text in double braces must get an
 * error containing the text, and no other line may get one (check_tool.py errors). */
#include "errors.h"

int in_asm;
static int ok_operand;
__attribute__((section("mine"))) int has_section;  /* expected-error {{already has a section attribute}} */
int target;
const int *const fixed = &target;  /* expected-error {{drop the const}} */
#define DEFINE(name) int name
DEFINE(from_macro);  /* expected-error {{comes from a macro expansion}} */

void f(void) {
  static int *local_ptr = &target;  /* expected-error {{move it to file scope}} */
  __asm__ volatile("incl in_asm(%%rip)" ::: "memory");  /* expected-error {{named inside inline assembly}} */
  __asm__ volatile("" : "+m"(ok_operand));
  (void)local_ptr;
  (void)fixed;
  header_defined++;
}
