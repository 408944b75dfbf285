/* kernel.h — moonflow as a Jupyter kernel (messaging protocol 5.3), and the
 * kernelspec that lets Jupyter start it. See kernel/README.md for the
 * message types handled. */
#ifndef MF_KERNEL_H
#define MF_KERNEL_H

#include <lua.h>

/* moonflow --kernel -f CONNECTION_FILE: serves the connection file's
 * sockets with the state 'L' (the libraries open) until a shutdown
 * request. Returns the process's exit status. */
int mf_kernel_main(lua_State *L, const char *connection_file);

/* moonflow --install-kernel [--user | --prefix DIR]: writes the kernelspec
 * (kernel.json, logos) naming this binary. 'args' are the options after
 * --install-kernel (NULL-terminated). Returns the exit status. */
int mf_kernel_install(char **args);

#endif
