/* A small legacy code built by make or CMake with CC=mpicc CFLAGS=-fprivatize. */
#ifndef APP_H
#define APP_H
extern int app_rank;         /* app.c */
extern double app_total;     /* util.c */
void util_add(double v);
int counter_bump(int by);    /* libcounter.so: a second module with privatized globals */
int counter_get(void);
#endif
