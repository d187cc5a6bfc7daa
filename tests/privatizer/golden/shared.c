/* Golden test: three ways to keep a global shared. */
#include <skein_privatize.h>

SKEIN_SHARED int by_attribute;
int by_pragma;
#pragma skein shared(by_pragma)
int by_command_line;   /* the test passes --shared=by_command_line */
int privatized;

int use(void) { return by_attribute + by_pragma + by_command_line + privatized; }
