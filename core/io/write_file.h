/* write_file.h — the one way moonflow writes a file the user names
 * (mf.save and the Saver's checkpoints, ONNX models, DOT files and rendered
 * graphs, plots, profiler traces), so that no failure, crash or attack
 * leaves anything but the old file or the new one at the path:
 *
 *   - a target that exists and is not a regular file (a FIFO, a device such
 *     as /dev/null, a directory) is refused before anything is opened, so
 *     nothing blocks on a FIFO or writes into a device;
 *   - the bytes go to a temporary file "<path>.tmp.<pid>.XXXXXX" made by
 *     mkstemp (O_EXCL: a unique name, never a link planted at a predictable
 *     name, never shared by two writers of one path);
 *   - it takes the replaced file's permission bits (a 0444 or 0600 file
 *     stays so), else 0666 less the umask;
 *   - it is flushed and fsynced, renamed over the path, and the directory
 *     is fsynced so the rename itself is durable;
 *   - on any failure the temporary file is removed and the path untouched.
 *
 * A process killed while writing (SIGKILL, a crash) leaves its temporary
 * file; the next write of the same path removes it as soon as the process
 * named in it is gone (or, for a name whose process is alive or unknown, when
 * nobody wrote to it for 10 minutes). The program's SIGTERM/SIGHUP handler
 * (repl/main.c) removes the temporary files being written with
 * mf_write_file_remove_pending before the process ends.
 *
 * Append-style files (TensorBoard event files, core/io/events.c) cannot be
 * renamed into place per record; they follow their own rule, see events.h.
 *
 * Ownership: an MfSafeWrite owns its FILE and its temporary name from
 * mf_safe_write_begin until mf_safe_write_commit or mf_safe_write_abort,
 * exactly one of which must be called after a successful begin. */
#ifndef MF_WRITE_FILE_H
#define MF_WRITE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "../err.h"

typedef struct MfSafeWrite {
    FILE *f;          /* the temporary file: write the contents here */
    char *tmp;        /* its name (owned) */
    const char *who;  /* the function the user called, for messages */
    const char *path; /* the target (borrowed for the write's duration) */
    int slot;         /* its entry in the pending list (-1: none) */
    bool created;     /* whether 'tmp' exists (to be removed on failure) */
} MfSafeWrite;

/* Checks the target and creates the temporary file. MF_OK with 'w->f' open,
 * or MF_EIO ("<who>: cannot write '<path>': <reason>") with nothing created.
 * Also removes temporary files of 'path' left by killed writers. */
MfStatus mf_safe_write_begin(MfSafeWrite *w, const char *who, const char *path);

/* Flushes, fsyncs and closes the temporary file, renames it over the path
 * and fsyncs the directory. On failure (a write error seen by the FILE, a
 * full disk, the test hook) the temporary file is removed, the path is
 * untouched and MF_EIO says why. Ends the write either way. */
MfStatus mf_safe_write_commit(MfSafeWrite *w);

/* Ends the write without touching the path: closes and removes the
 * temporary file. */
void mf_safe_write_abort(MfSafeWrite *w);

/* Writes 'len' bytes of 'data' to 'path' (begin, write, commit). */
MfStatus mf_write_file_atomic(const char *who, const char *path, const void *data, size_t len);

/* mkdir -p: creates every missing directory of 'dir'. Errors (MF_EIO, "who:
 * cannot create directory ..."; MF_ENOMEM) name 'who'. */
MfStatus mf_make_dirs(const char *who, const char *dir);

/* Removes every temporary file being written now. Async-signal-safe (only
 * unlink), for a handler of a signal that ends the process. */
void mf_write_file_remove_pending(void);

/* Removes the temporary files of 'path' left by writers that were killed
 * (see above); called by mf_safe_write_begin and by mf_safetensors_read. */
void mf_write_file_reap(const char *path);

/* Test hook: when non-zero, mf_safe_write_commit fails with MF_EIO right
 * after the temporary file is completely written and synced, before the
 * rename (as a crash or full disk would), so tests can check that the old
 * file is intact and no temporary file is left. 0 in normal use. */
extern int mf_ckpt_fail_after_write;

#endif
