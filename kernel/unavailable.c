/* unavailable.c — built instead of the kernel when configure did not find
 * libzmq and libcrypto (MF_KERNEL_MISSING names their Debian packages). */
#include <stdio.h>
#include <stdlib.h>

#include "kernel/kernel.h"

static int missing(const char *option)
{
    fprintf(stderr, "moonflow: %s: this moonflow was built without the Jupyter kernel; it "
            "needs libzmq and OpenSSL's libcrypto. Install them and rebuild:\n"
            "    sudo apt-get install -y%s && rm build/config.mk && make\n",
            option, MF_KERNEL_MISSING);
    return EXIT_FAILURE;
}

int mf_kernel_main(lua_State *L, const char *connection_file)
{
    (void)L;
    (void)connection_file;
    return missing("--kernel");
}

int mf_kernel_install(char **args)
{
    (void)args;
    return missing("--install-kernel");
}
