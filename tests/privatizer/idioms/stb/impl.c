/* The one source that instantiates the library, as stb's users do. */
#define MYLIB_IMPLEMENTATION
#include "mylib.h"
