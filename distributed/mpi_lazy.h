/* mpi_lazy.h — Open MPI, loaded only when a program runs under mpirun.
 *
 * Why: linking libmpi makes every start of moonflow load it and the eight
 * libraries it needs (its run-time, hwloc, libevent, udev...) and run their
 * constructors: about 1.5 ms of CPU per start, for scripts that never use
 * MPI. So moonflow is not linked with -lmpi; 'mf_mpi_load' dlopens libmpi
 * (RTLD_GLOBAL, as Open MPI's own components need) when mpirun started the
 * program, and the MPI names used by distributed/ are redirected here to the
 * functions and predefined objects (communicator, datatypes, ops) it found.
 * Types and constants (MPI_SUCCESS, MPI_IN_PLACE) still come from mpi.h.
 * Include this after <mpi.h>, in distributed/ only. */
#ifndef MF_DIST_MPI_LAZY_H
#define MF_DIST_MPI_LAZY_H

#include <mpi.h>

#include "core/err.h"

typedef struct MfMpi {
    __typeof__(&MPI_Init_thread) Init_thread;
    __typeof__(&MPI_Finalize) Finalize;
    __typeof__(&MPI_Abort) Abort;
    __typeof__(&MPI_Comm_rank) Comm_rank;
    __typeof__(&MPI_Comm_size) Comm_size;
    __typeof__(&MPI_Comm_set_errhandler) Comm_set_errhandler;
    __typeof__(&MPI_Error_string) Error_string;
    __typeof__(&MPI_Barrier) Barrier;
    __typeof__(&MPI_Bcast) Bcast;
    __typeof__(&MPI_Allreduce) Allreduce;
    __typeof__(&MPI_Allgather) Allgather;
    __typeof__(&MPI_Allgatherv) Allgatherv;
    __typeof__(&MPI_Iallreduce) Iallreduce;
    __typeof__(&MPI_Test) Test;
    __typeof__(&MPI_Wait) Wait;
    MPI_Comm comm_world;
    MPI_Errhandler errors_return;
    MPI_Datatype t_float, t_double, t_int32, t_int64, t_uint8, t_uint64, t_char, t_byte;
    MPI_Op op_sum, op_max, op_min;
} MfMpi;

extern MfMpi mf_mpi;

/* Loads libmpi and fills 'mf_mpi' (once). MF_EARG with dlopen's or
 * dlsym's message when Open MPI's library is missing or is not 4.x. */
MfStatus mf_mpi_load(void);

#undef MPI_COMM_WORLD
#undef MPI_ERRORS_RETURN
#undef MPI_FLOAT
#undef MPI_DOUBLE
#undef MPI_INT32_T
#undef MPI_INT64_T
#undef MPI_UINT8_T
#undef MPI_UINT64_T
#undef MPI_CHAR
#undef MPI_BYTE
#undef MPI_SUM
#undef MPI_MAX
#undef MPI_MIN
#define MPI_COMM_WORLD (mf_mpi.comm_world)
#define MPI_ERRORS_RETURN (mf_mpi.errors_return)
#define MPI_FLOAT (mf_mpi.t_float)
#define MPI_DOUBLE (mf_mpi.t_double)
#define MPI_INT32_T (mf_mpi.t_int32)
#define MPI_INT64_T (mf_mpi.t_int64)
#define MPI_UINT8_T (mf_mpi.t_uint8)
#define MPI_UINT64_T (mf_mpi.t_uint64)
#define MPI_CHAR (mf_mpi.t_char)
#define MPI_BYTE (mf_mpi.t_byte)
#define MPI_SUM (mf_mpi.op_sum)
#define MPI_MAX (mf_mpi.op_max)
#define MPI_MIN (mf_mpi.op_min)
#define MPI_Init_thread (*mf_mpi.Init_thread)
#define MPI_Finalize (*mf_mpi.Finalize)
#define MPI_Abort (*mf_mpi.Abort)
#define MPI_Comm_rank (*mf_mpi.Comm_rank)
#define MPI_Comm_size (*mf_mpi.Comm_size)
#define MPI_Comm_set_errhandler (*mf_mpi.Comm_set_errhandler)
#define MPI_Error_string (*mf_mpi.Error_string)
#define MPI_Barrier (*mf_mpi.Barrier)
#define MPI_Bcast (*mf_mpi.Bcast)
#define MPI_Allreduce (*mf_mpi.Allreduce)
#define MPI_Allgather (*mf_mpi.Allgather)
#define MPI_Allgatherv (*mf_mpi.Allgatherv)
#define MPI_Iallreduce (*mf_mpi.Iallreduce)
#define MPI_Test (*mf_mpi.Test)
#define MPI_Wait (*mf_mpi.Wait)

#endif
