/* Environment management: initialization, finalization, thread levels, time, versions,
 * MPI_Abort, and the communicator queries of the foundation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "objects.h"
#include "pmi/pmi.h"

/* The impl_ functions of this file are called by the entry points generated from
 * runtime/binding/functions.txt (entries_env.h, included at the end). Hand-written:
 * MPI_Initialized, MPI_Finalized, MPI_Get_version and MPI_Get_library_version (callable
 * from any thread, a rank or not, at any time), MPI_Wtime and MPI_Wtick (return a double,
 * no error to report). */

static int init_common(skn_rank *me, const char *fn, int required, int *provided) {
  if (me->state != SKN_RANK_CREATED)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_OTHER, fn, "MPI is already initialized in this rank");
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_ARG, fn, "required=%d", required);
  /* Every level is provided as asked: the rank's private state is locked only when its
   * threads may call MPI concurrently. */
  /* MPI_COMM_WORLD and MPI_COMM_SELF, made by the core with the rank, get their MPI state;
   * an error before this goes to the default handler (errors.c) */
  skn_api_rank *api = skn_api_of(me);
  api->world = (skn_api_comm_state){.errhandler = MPI_ERRORS_ARE_FATAL, .name = "MPI_COMM_WORLD"};
  api->self = (skn_api_comm_state){.errhandler = MPI_ERRORS_ARE_FATAL, .name = "MPI_COMM_SELF"};
  __atomic_store_n(&skn_api_comm(me, MPI_COMM_WORLD)->api, &api->world, __ATOMIC_RELEASE);
  __atomic_store_n(&skn_api_comm(me, MPI_COMM_SELF)->api, &api->self, __ATOMIC_RELEASE);
  me->thread_level = required;
  me->mt = required == MPI_THREAD_MULTIPLE;
  __atomic_store_n(&me->state, SKN_RANK_INITIALIZED, __ATOMIC_RELAXED); /* the watchdog reads it (boot.c) */
  __atomic_fetch_or(&me->api_gate, SKN_GATE_OPEN, __ATOMIC_RELAXED);
  if (provided) *provided = required;
  return MPI_SUCCESS;
}

static int impl_Init(skn_rank *me, const char *fn, int *argc, char ***argv) {
  return init_common(me, fn, MPI_THREAD_SINGLE, NULL);
}

static int impl_Init_thread(skn_rank *me, const char *fn, int *argc, char ***argv, int required, int *provided) {
  return init_common(me, fn, required, provided);
}

int PMPI_Initialized(int *flag) {
  skn_rank *me = skn_rank_self();
  *flag = me && me->state >= SKN_RANK_INITIALIZED;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Initialized);

static int impl_Finalize(skn_rank *me, const char *fn) {
  if (me->state != SKN_RANK_INITIALIZED)
    return skn_api_error(me, SKN_API_NOOBJ, MPI_ERR_OTHER, fn, "MPI is not initialized in this rank");
  /* As if MPI_COMM_SELF were freed first: libraries hang clean-up on its attributes. */
  int rc = skn_attr_delete_all(me, MPI_COMM_SELF, &skn_api_comm(me, MPI_COMM_SELF)->api->attrs);
  if (rc != MPI_SUCCESS)
    return skn_api_error(me, MPI_COMM_SELF, skn_attr_errclass(rc), fn,
                         "a delete callback of an MPI_COMM_SELF attribute failed with %d", rc);
  /* Buffered sends must reach their receivers before the rank may leave. */
  void *buf;
  int size;
  if (me->bsend_buf) PMPI_Buffer_detach(&buf, &size);
  __atomic_fetch_and(&me->api_gate, (uint8_t)~SKN_GATE_OPEN, __ATOMIC_RELAXED);
  __atomic_store_n(&me->state, SKN_RANK_FINALIZED, __ATOMIC_RELAXED);
  return MPI_SUCCESS;
}

int PMPI_Finalized(int *flag) {
  skn_rank *me = skn_rank_self();
  *flag = me && me->state >= SKN_RANK_FINALIZED;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Finalized);

static int impl_Query_thread(skn_rank *me, const char *fn, int *provided) {
  *provided = me->thread_level;
  return MPI_SUCCESS;
}

static int impl_Is_thread_main(skn_rank *me, const char *fn, int *flag) {
  *flag = skn_sched_self() == me->unit;
  return MPI_SUCCESS;
}

/* Ends the job whatever the state (anytime) and whatever comm is (nocheck). */
static int impl_Abort(skn_rank *me, const char *fn, MPI_Comm comm, int errorcode) {
  skn_flush_stdio();
  skn_flush_stdio_wait(); /* the other processes' end may come before ours */
  char msg[256];
  snprintf(msg, sizeof msg, "rank %d called MPI_Abort(%s, %d)", me->world_rank, skn_api_comm_name(me, comm), errorcode);
  if (skn_job_g.nprocs > 1) skn_pmi_abort(errorcode, msg); /* the launcher ends the other processes */
  skn_log("%s: ending the job", msg);
  _exit(errorcode);
}

double PMPI_Wtime(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
SKN_WEAK_ALIAS(Wtime);

double PMPI_Wtick(void) {
  struct timespec ts;
  clock_getres(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
SKN_WEAK_ALIAS(Wtick);

static int impl_Get_processor_name(skn_rank *me, const char *fn, char *name, int *resultlen) {
  if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0) strcpy(name, "localhost");
  name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
  *resultlen = (int)strlen(name);
  return MPI_SUCCESS;
}

int PMPI_Get_version(int *version, int *subversion) {
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Get_version);

int PMPI_Get_library_version(char *version, int *resultlen) {
  int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                   "Skein %s (MPI %d.%d; ranks as user-level threads)", SKEIN_VERSION_STRING, MPI_VERSION,
                   MPI_SUBVERSION);
  *resultlen = n;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Get_library_version);

int MPIX_Yield(void) {
  skn_sched_yield();
  return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ communicators */

static inline int impl_Comm_rank(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int *rank) {
  *rank = v->rank;
  return MPI_SUCCESS;
}

static inline int impl_Comm_size(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v, int *size) {
  *size = v->comm->size;
  return MPI_SUCCESS;
}

static int impl_Barrier(skn_rank *me, const char *fn, MPI_Comm comm, skn_comm_view *v) {
  skn_api_coll_order(me, v);
  skn_api_enter(me, fn, NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  v->comm->coll->barrier(v->comm, v->rank, NULL);
  skn_api_leave(me);
  return MPI_SUCCESS;
}

/* Profiling control: nothing to do in MPI itself (MPI-3.1 14.2.4); a profiling library
 * that wraps MPI_Pcontrol gets the calls. The entry drops the variadic tail. */
static int impl_Pcontrol(skn_rank *me, const char *fn, int level) { return MPI_SUCCESS; }

#include "entries_env.h"
