/* mpi_lazy.c — dlopen of Open MPI's libmpi and the look-up of what distributed/
 * uses from it (see mpi_lazy.h). Open MPI's predefined handles
 * (MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM...) are the addresses of global
 * objects named ompi_mpi_*; they are looked up by those names. */
#include <dlfcn.h>

#include "dist_impl.h"

MfMpi mf_mpi;

/* Debian's Open MPI 4.x soname first, then the development link. */
static const char *const libnames[] = {"libmpi.so.40", "libmpi.so"};

typedef struct Sym {
    const char *name;
    void **slot;
} Sym;

/* The address of every symbol into its slot; false (message set) on the
 * first one missing. Function pointers are stored through 'void *' as
 * POSIX dlsym requires. */
static bool find_all(void *lib, const Sym *syms, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        void *p = dlsym(lib, syms[i].name);
        if (!p) {
            mf_err_set(MF_EARG, "mf.dist: %s is not in Open MPI's libmpi (need Open MPI 4)",
                       syms[i].name);
            return false;
        }
        *syms[i].slot = p;
    }
    return true;
}

MfStatus mf_mpi_load(void)
{
    static void *lib;
    if (lib)
        return MF_OK;
    for (size_t i = 0; i < sizeof libnames / sizeof libnames[0] && !lib; i++)
        lib = dlopen(libnames[i], RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
        return mf_err_set(MF_EARG, "mf.dist: cannot load Open MPI (%s); install libopenmpi3 "
                          "(tools/configure.sh does)", dlerror());
    MfMpi m;
    const Sym syms[] = {
        {"MPI_Init_thread", (void **)&m.Init_thread}, {"MPI_Finalize", (void **)&m.Finalize},
        {"MPI_Abort", (void **)&m.Abort}, {"MPI_Comm_rank", (void **)&m.Comm_rank},
        {"MPI_Comm_size", (void **)&m.Comm_size},
        {"MPI_Comm_set_errhandler", (void **)&m.Comm_set_errhandler},
        {"MPI_Error_string", (void **)&m.Error_string}, {"MPI_Barrier", (void **)&m.Barrier},
        {"MPI_Bcast", (void **)&m.Bcast}, {"MPI_Allreduce", (void **)&m.Allreduce},
        {"MPI_Allgather", (void **)&m.Allgather}, {"MPI_Allgatherv", (void **)&m.Allgatherv},
        {"MPI_Iallreduce", (void **)&m.Iallreduce}, {"MPI_Test", (void **)&m.Test},
        {"MPI_Wait", (void **)&m.Wait},
        {"ompi_mpi_comm_world", (void **)&m.comm_world},
        {"ompi_mpi_errors_return", (void **)&m.errors_return},
        {"ompi_mpi_float", (void **)&m.t_float}, {"ompi_mpi_double", (void **)&m.t_double},
        {"ompi_mpi_int32_t", (void **)&m.t_int32}, {"ompi_mpi_int64_t", (void **)&m.t_int64},
        {"ompi_mpi_uint8_t", (void **)&m.t_uint8}, {"ompi_mpi_uint64_t", (void **)&m.t_uint64},
        {"ompi_mpi_char", (void **)&m.t_char}, {"ompi_mpi_byte", (void **)&m.t_byte},
        {"ompi_mpi_op_sum", (void **)&m.op_sum}, {"ompi_mpi_op_max", (void **)&m.op_max},
        {"ompi_mpi_op_min", (void **)&m.op_min},
    };
    if (!find_all(lib, syms, sizeof syms / sizeof syms[0])) {
        dlclose(lib);
        lib = NULL;
        return MF_EARG;
    }
    mf_mpi = m;
    return MF_OK;
}
