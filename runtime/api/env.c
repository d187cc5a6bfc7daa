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

static int init_common(const char *fn, int required, int *provided) {
  skn_rank *me = skn_api_self_any(fn);
  if (me->state != SKN_RANK_CREATED)
    return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_OTHER, fn, "MPI is already initialized in this rank");
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
    return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_ARG, fn, "required=%d", required);
  /* Every level is provided as asked: the rank's private state is locked only when its
   * threads may call MPI concurrently. */
  me->thread_level = required;
  me->mt = required == MPI_THREAD_MULTIPLE;
  me->state = SKN_RANK_INITIALIZED;
  if (provided) *provided = required;
  return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  return init_common("MPI_Init", MPI_THREAD_SINGLE, NULL);
}
SKN_WEAK_ALIAS(Init);

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  (void)argc;
  (void)argv;
  return init_common("MPI_Init_thread", required, provided);
}
SKN_WEAK_ALIAS(Init_thread);

int PMPI_Initialized(int *flag) {
  skn_rank *me = skn_rank_self();
  *flag = me && me->state >= SKN_RANK_INITIALIZED;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Initialized);

int PMPI_Finalize(void) {
  skn_rank *me = skn_api_self_any("MPI_Finalize");
  if (me->state != SKN_RANK_INITIALIZED)
    return skn_api_error(me, MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI_Finalize", "MPI is not initialized in this rank");
  /* As if MPI_COMM_SELF were freed first: libraries hang clean-up on its attributes. */
  int rc = skn_attr_delete_all(me, MPI_COMM_SELF, &skn_api_comm(me, MPI_COMM_SELF)->attrs);
  if (rc != MPI_SUCCESS)
    return skn_api_error(me, MPI_COMM_SELF, skn_attr_errclass(rc), "MPI_Finalize",
                         "a delete callback of an MPI_COMM_SELF attribute failed with %d", rc);
  /* Buffered sends must reach their receivers before the rank may leave. */
  void *buf;
  int size;
  if (me->bsend_buf) PMPI_Buffer_detach(&buf, &size);
  me->state = SKN_RANK_FINALIZED;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Finalize);

int PMPI_Finalized(int *flag) {
  skn_rank *me = skn_rank_self();
  *flag = me && me->state >= SKN_RANK_FINALIZED;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Finalized);

int PMPI_Query_thread(int *provided) {
  skn_rank *me = skn_api_self("MPI_Query_thread");
  *provided = me->thread_level;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Query_thread);

int PMPI_Is_thread_main(int *flag) {
  skn_rank *me = skn_api_self("MPI_Is_thread_main");
  *flag = skn_sched_self() == me->unit;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Is_thread_main);

int PMPI_Abort(MPI_Comm comm, int errorcode) {
  skn_rank *me = skn_api_self_any("MPI_Abort"); /* ends the job whatever the state */
  fflush(NULL);
  char msg[256];
  snprintf(msg, sizeof msg, "rank %d called MPI_Abort(%s, %d)", me->world_rank, skn_api_comm_name(me, comm), errorcode);
  if (skn_job_g.nprocs > 1) skn_pmi_abort(errorcode, msg); /* the launcher ends the other processes */
  skn_log("%s: ending the job", msg);
  _exit(errorcode);
}
SKN_WEAK_ALIAS(Abort);

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

int PMPI_Get_processor_name(char *name, int *resultlen) {
  if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0) strcpy(name, "localhost");
  name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
  *resultlen = (int)strlen(name);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Get_processor_name);

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

int PMPI_Comm_rank(MPI_Comm comm, int *rank) {
  skn_rank *me = skn_api_self("MPI_Comm_rank");
  skn_comm_view *v = skn_api_comm(me, comm);
  if (SKN_UNLIKELY(!v)) return skn_api_error(me, comm, MPI_ERR_COMM, "MPI_Comm_rank", "comm=%#x", (unsigned)comm);
  *rank = v->rank;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_rank);

int PMPI_Comm_size(MPI_Comm comm, int *size) {
  skn_rank *me = skn_api_self("MPI_Comm_size");
  skn_comm_view *v = skn_api_comm(me, comm);
  if (SKN_UNLIKELY(!v)) return skn_api_error(me, comm, MPI_ERR_COMM, "MPI_Comm_size", "comm=%#x", (unsigned)comm);
  *size = v->comm->size;
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Comm_size);

int PMPI_Barrier(MPI_Comm comm) {
  skn_rank *me = skn_api_self("MPI_Barrier");
  skn_comm_view *v = skn_api_comm(me, comm);
  if (SKN_UNLIKELY(!v)) return skn_api_error(me, comm, MPI_ERR_COMM, "MPI_Barrier", "comm=%#x", (unsigned)comm);
  skn_api_coll_order(me, v);
  skn_api_enter(me, "MPI_Barrier", NULL, MPI_UNDEFINED, MPI_UNDEFINED);
  skn_coll_barrier(me, skn_comm_is_inter(v->comm) ? v->comm->bridge : v->comm);
  skn_api_leave(me);
  return MPI_SUCCESS;
}
SKN_WEAK_ALIAS(Barrier);
