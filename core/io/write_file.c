/* write_file.c — a whole file written through a temporary and a rename
 * (see write_file.h). */
#include "write_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

MfStatus mf_write_file_atomic(const char *who, const char *path, const void *data, size_t len)
{
    char tmp[4096];
    int err = 0;
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        err = ENAMETOOLONG;
    FILE *f = err ? NULL : fopen(tmp, "wb");
    if (!err && !f)
        err = errno;
    if (f) {
        errno = 0;
        if (fwrite(data, 1, len, f) != len)
            err = errno ? errno : EIO;
        if (fclose(f) != 0 && !err)
            err = errno;
        if (!err && rename(tmp, path) != 0)
            err = errno;
        if (err)
            remove(tmp);
    }
    if (err)
        return mf_err_set(MF_EIO, "%s: cannot write '%s': %s", who, path, strerror(err));
    return MF_OK;
}
