/* write_file.c — every file the user names is written here: a unique
 * temporary file, renamed into place (see write_file.h for the rules).
 *
 * The pending list: a fixed table of the temporary names being written, so
 * that a signal handler can remove them without allocating or locking. A
 * slot is claimed (FILLING) with a compare-and-swap, its name copied, then
 * published (READY); the handler only reads READY slots. A name too long
 * for a slot is not listed (the next write of the path still reaps it). */
#include "write_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "../op.h"

int mf_ckpt_fail_after_write = 0;

/* A temporary file whose process is alive or unknown is abandoned when
 * nobody wrote to it for this long (a writer in progress writes
 * continuously). */
#define STALE_SECONDS 600
#define PENDING_MAX 8
#define PENDING_NAME 4096

enum { SLOT_FREE, SLOT_FILLING, SLOT_READY };
static _Atomic int pending_state[PENDING_MAX];
static char pending_name[PENDING_MAX][PENDING_NAME];

static int pending_add(const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; n < PENDING_NAME && i < PENDING_MAX; i++) {
        int expected = SLOT_FREE;
        if (atomic_compare_exchange_strong(&pending_state[i], &expected, SLOT_FILLING)) {
            memcpy(pending_name[i], name, n + 1);
            atomic_store(&pending_state[i], SLOT_READY);
            return i;
        }
    }
    return -1;
}

static void pending_remove(int slot)
{
    if (slot >= 0)
        atomic_store(&pending_state[slot], SLOT_FREE);
}

void mf_write_file_remove_pending(void)
{
    for (int i = 0; i < PENDING_MAX; i++)
        if (atomic_load(&pending_state[i]) == SLOT_READY)
            unlink(pending_name[i]);
}

/* Records "<who>: cannot write '<path>': <reason>" and returns MF_EIO. */
static MfStatus cannot_write(const MfSafeWrite *w, const char *reason, const char *during)
{
    if (during)
        return mf_err_set(MF_EIO, "%s: cannot write '%s': %s (%s '%s')", w->who, w->path,
                          reason, during, w->tmp);
    return mf_err_set(MF_EIO, "%s: cannot write '%s': %s", w->who, w->path, reason);
}

/* ---- abandoned temporary files ---------------------------------------------------- */

static bool all_of(const char *s, size_t n, const char *set)
{
    return strlen(s) == n && strspn(s, set) == n;
}

/* The process id in a temporary name's tail "<pid>.XXXXXX" (ours), 0 for
 * the tail "XXXXXX" of earlier versions, -1 for anything else. */
static long pid_in_tail(const char *tail)
{
    static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    if (all_of(tail, 6, alnum))
        return 0;
    size_t digits = strspn(tail, "0123456789");
    if (digits == 0 || digits > 9 || tail[digits] != '.' || !all_of(tail + digits + 1, 6, alnum))
        return -1;
    return strtol(tail, NULL, 10);
}

/* Whether the temporary file 'name' (its 'tail' after ".tmp.") was left by
 * a writer that is gone: ours (same user, a regular file), and its process
 * has ended, or nobody wrote to it for STALE_SECONDS. */
static bool abandoned(const char *name, const char *tail, time_t now)
{
    long pid = pid_in_tail(tail);
    struct stat st;
    if (pid < 0 || lstat(name, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
        return false;
    if (now - st.st_mtime >= STALE_SECONDS)
        return true;
    return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

void mf_write_file_reap(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dlen;
    size_t blen = strlen(base);
    char name[PENDING_NAME];
    if (dlen >= sizeof name)
        return;
    memcpy(name, path, dlen);
    name[dlen] = '\0';
    DIR *d = opendir(dlen ? name : ".");
    if (!d)
        return;
    time_t now = time(NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *nm = e->d_name;
        if (strncmp(nm, base, blen) != 0 || strncmp(nm + blen, ".tmp.", 5) != 0)
            continue;
        if (snprintf(name + dlen, sizeof name - dlen, "%s", nm) >= (int)(sizeof name - dlen))
            continue;
        if (abandoned(name, nm + blen + 5, now))
            remove(name);
    }
    closedir(d);
}

/* ---- one write ---------------------------------------------------------------------- */

/* The mode for the new file: the replaced file's permission bits, else 0666
 * less the umask. Anything but a regular file is refused, not replaced. */
static MfStatus target_mode(const MfSafeWrite *w, mode_t *mode)
{
    struct stat st;
    if (stat(w->path, &st) == 0) {
        if (!S_ISREG(st.st_mode))
            return cannot_write(w, "it exists and is not a regular file (a directory, device "
                                "or FIFO); refusing to replace it", NULL);
        *mode = st.st_mode & 07777;
        return MF_OK;
    }
    mode_t mask = umask(0);
    umask(mask);
    *mode = 0666 & ~mask;
    return MF_OK;
}

/* Creates "<path>.tmp.<pid>.XXXXXX" with 'mode' and opens it as w->f. */
static MfStatus create_temp(MfSafeWrite *w, mode_t mode)
{
    int fd = mkstemp(w->tmp);
    if (fd < 0) {
        MfStatus st = cannot_write(w, strerror(errno), "cannot create the temporary file");
        mf_safe_write_abort(w);
        return st;
    }
    w->created = true;
    w->slot = pending_add(w->tmp);
    int err = 0;
    if (fchmod(fd, mode) != 0 || !(w->f = fdopen(fd, "wb")))
        err = errno;
    if (!err)
        return MF_OK;
    close(fd);
    MfStatus st = cannot_write(w, strerror(err), "opening the temporary file");
    mf_safe_write_abort(w);
    return st;
}

MfStatus mf_safe_write_begin(MfSafeWrite *w, const char *who, const char *path)
{
    *w = (MfSafeWrite){.who = who, .path = path, .slot = -1};
    if (!path || !path[0])
        return mf_err_set(MF_EARG, "%s: expected a path, got an empty string", who);
    mode_t mode = 0;
    MfStatus st = target_mode(w, &mode);
    if (st != MF_OK)
        return st;
    size_t cap = strlen(path) + 32;
    if (!(w->tmp = malloc(cap)))
        return mf_err_nomem(who, cap);
    mf_write_file_reap(path);
    snprintf(w->tmp, cap, "%s.tmp.%ld.XXXXXX", path, (long)getpid());
    return create_temp(w, mode);
}

void mf_safe_write_abort(MfSafeWrite *w)
{
    if (w->f)
        fclose(w->f);
    if (w->created)
        remove(w->tmp);
    pending_remove(w->slot);
    free(w->tmp);
    *w = (MfSafeWrite){.slot = -1};
}

/* fsyncs the directory holding the path so the rename itself is durable. */
static MfStatus sync_dir(const MfSafeWrite *w)
{
    const char *slash = strrchr(w->path, '/');
    size_t len = slash ? (slash == w->path ? 1 : (size_t)(slash - w->path)) : 1;
    char dir[PENDING_NAME];
    if (len >= sizeof dir)
        return MF_OK;   /* the file is in place; a path this long has no syncable parent */
    memcpy(dir, slash ? w->path : ".", len);
    dir[len] = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    int rc = fd < 0 ? -1 : fsync(fd);
    int err = errno;
    if (fd >= 0)
        close(fd);
    if (rc != 0 && err != EINVAL && err != EBADF)
        return mf_err_set(MF_EIO, "%s: '%s' is written and in place, but syncing its "
                          "directory failed: %s", w->who, w->path, strerror(err));
    return MF_OK;
}

/* Flushes, syncs and closes w->f; 0 or the errno of the first failure. */
static int finish_temp(MfSafeWrite *w)
{
    int err = 0;
    errno = 0;
    if (ferror(w->f) || fflush(w->f) != 0 || fsync(fileno(w->f)) != 0)
        err = errno ? errno : EIO;
    if (fclose(w->f) != 0 && !err)
        err = errno;
    w->f = NULL;
    return err;
}

MfStatus mf_safe_write_commit(MfSafeWrite *w)
{
    int err = finish_temp(w);
    MfStatus st = MF_OK;
    if (err)
        st = cannot_write(w, strerror(err), "writing the temporary file");
    else if (mf_interrupted)
        st = mf_err_set(MF_EINTR, "%s: interrupted; '%s' is untouched", w->who, w->path);
    else if (mf_ckpt_fail_after_write)
        st = cannot_write(w, "simulated failure after writing the temporary file (test hook "
                          "mf_ckpt_fail_after_write)", NULL);
    else if (rename(w->tmp, w->path) != 0)
        st = cannot_write(w, strerror(errno), "renaming the temporary file");
    if (st != MF_OK) {
        remove(w->tmp);
    } else {
        pending_remove(w->slot);   /* the name is the path's now */
        w->slot = -1;
        st = sync_dir(w);
    }
    pending_remove(w->slot);
    free(w->tmp);
    *w = (MfSafeWrite){.slot = -1};
    return st;
}

MfStatus mf_write_file_atomic(const char *who, const char *path, const void *data, size_t len)
{
    MfSafeWrite w;
    MfStatus st = mf_safe_write_begin(&w, who, path);
    if (st != MF_OK)
        return st;
    if (len > 0 && fwrite(data, 1, len, w.f) != len) {
        st = cannot_write(&w, strerror(errno), "writing the temporary file");
        mf_safe_write_abort(&w);
        return st;
    }
    return mf_safe_write_commit(&w);
}

/* mkdir -p (write_file.h). */
MfStatus mf_make_dirs(const char *who, const char *dir)
{
    size_t n = strlen(dir);
    char *p = malloc(n + 1);
    if (!p)
        return mf_err_nomem(who, n + 1);
    memcpy(p, dir, n + 1);
    MfStatus st = MF_OK;
    for (size_t i = 1; i <= n && st == MF_OK; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        char c = p[i];
        p[i] = '\0';
        struct stat sb;
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            st = mf_err_set(MF_EIO, "%s: cannot create directory '%s': %s", who, p,
                            strerror(errno));
        else if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode))
            st = mf_err_set(MF_EIO, "%s: '%s' is not a directory", who, p);
        p[i] = c;
    }
    free(p);
    return st;
}
