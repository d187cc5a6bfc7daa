#include "app.h"

double app_total;

void util_add(double v) { app_total += v; }
