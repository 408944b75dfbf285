/* write_file.h — writing a whole file so that a failure never leaves a
 * half-written one in its place: the bytes go to "<path>.tmp.<pid>", which
 * is renamed over 'path' once written and closed. Used for pictures and
 * text files the user asks for (plots, DOT files). */
#ifndef MF_WRITE_FILE_H
#define MF_WRITE_FILE_H

#include <stddef.h>

#include "../err.h"

/* Writes 'len' bytes of 'data' to 'path'. MF_OK, or MF_EIO with the message
 * "<who>: cannot write '<path>': <the system's reason>" (the temporary file
 * removed, 'path' untouched). */
MfStatus mf_write_file_atomic(const char *who, const char *path, const void *data, size_t len);

#endif
