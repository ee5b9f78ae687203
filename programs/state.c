/*
 * state.c - load and save the filter's state file.
 *
 * Loading maps the file and hands the bytes to once_load, which validates every field
 * and the checksum; a file that fails is an error naming the file and is left as it
 * is.  Saving never writes over the old file in place: the new state goes to
 * "<path>.tmp.<pid>" and replaces the old one by rename(2) only once it is complete
 * and on disk, so a crash, a full disk or a kill at any moment leaves either the old
 * state or the new one, never a torn file.
 *
 * A run holds "<path>.lock" with flock(2) from before the load to after the save, and
 * removes it at the end.  A second run refuses at once rather than waiting: a stream
 * that never ends would make it wait for ever, and the refusal says who holds it.
 * Holding it, a run removes the temporary files of saves that never finished (a kill
 * -9 mid-save): no other run can be saving this state.
 *
 * A path is resolved once, before the lock (state_resolve): a symbolic link is
 * followed to its target, which is locked, loaded and replaced, so the link stays a
 * link and a run through it and a run on the target share one lock; a link to nothing
 * (an unmounted disk) is refused, not taken for a new filter; anything but a regular
 * file (a FIFO, a directory, a device) is refused at once, before any open that could
 * block.
 */
#include "state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file that is not a regular file is, for a refusal. */
static const char *file_kind(mode_t mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a regular file";
}

/* Say why: into the report (its errno, 0 for a file whose bytes are not a filter), or
 * on stderr after "once: " without one. */
static void report(state_report *r, int error, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    if (r != NULL) {
        r->error = error;
        vsnprintf(r->text, sizeof r->text, format, ap);
    } else {
        fputs("once: ", stderr);
        vfprintf(stderr, format, ap);
        fputc('\n', stderr);
    }
    va_end(ap);
}

char *state_resolve(const char *path, state_report *r)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return strdup(path); /* a new state */
        report(r, errno, "cannot use state file '%s': %s", path, strerror(errno));
        return NULL;
    }
    char *target = NULL;
    if (S_ISLNK(st.st_mode)) {
        char to[PATH_MAX];
        ssize_t n = readlink(path, to, sizeof to - 1);
        to[n > 0 ? n : 0] = '\0';
        target = realpath(path, NULL);
        if (target == NULL) {
            int error = errno;
            report(r, error,
                   "state file '%s' is a symbolic link to '%s', which %s: refused rather than "
                   "start a new filter there",
                   path, to, error == ENOENT ? "does not exist" : strerror(error));
            return NULL;
        }
        if (stat(target, &st) != 0) {
            report(r, errno, "cannot use state file '%s' (a link to '%s'): %s", path, target,
                   strerror(errno));
            free(target);
            return NULL;
        }
    }
    if (!S_ISREG(st.st_mode)) {
        report(r, S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
               "state file '%s'%s%s%s is %s, not a saved filter", path,
               target ? " (a link to '" : "", target ? target : "", target ? "')" : "",
               file_kind(st.st_mode));
        free(target);
        return NULL;
    }
    return target != NULL ? target : strdup(path);
}

void state_remove_stale_temporaries(const char *path)
{
    char *dir_copy = strdup(path), *base_copy = strdup(path);
    DIR *dir = dir_copy && base_copy ? opendir(dirname(dir_copy)) : NULL;
    if (dir == NULL) {
        free(dir_copy);
        free(base_copy);
        return;
    }
    const char *base = basename(base_copy);
    size_t base_len = strlen(base);
    unsigned removed = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        /* "<base>.tmp.<pid>": digits alone after the prefix */
        const char *name = e->d_name;
        if (strncmp(name, base, base_len) != 0 || strncmp(name + base_len, ".tmp.", 5) != 0)
            continue;
        const char *digits = name + base_len + 5;
        size_t n = strspn(digits, "0123456789");
        if (n == 0 || digits[n] != '\0')
            continue;
        removed += unlinkat(dirfd(dir), name, 0) == 0;
    }
    closedir(dir);
    if (removed)
        fprintf(stderr, "once: removed %u temporary %s of '%s' left by a save that never "
                        "finished\n",
                removed, removed == 1 ? "file" : "files", path);
    free(dir_copy);
    free(base_copy);
}

state_result state_load(const char *path, once_filter **out, state_report *r)
{
    *out = NULL;
    /* Not blocking: a FIFO would wait in open(2) for a writer (fstat refuses it next). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT)
            return STATE_ABSENT;
        report(r, errno, "cannot open state file '%s': %s", path, strerror(errno));
        return STATE_FAILED;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        report(r, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, "state file '%s' is %s, not a saved filter",
               path, file_kind(st.st_mode));
        close(fd);
        return STATE_FAILED;
    }
    if (st.st_size == 0) {
        report(r, 0, "state file '%s' is empty (not a saved filter)", path);
        close(fd);
        return STATE_FAILED;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        report(r, errno, "cannot read state file '%s': %s", path, strerror(errno));
        return STATE_FAILED;
    }
    once_status s = once_load(out, map, (size_t)st.st_size);
    munmap(map, (size_t)st.st_size);
    if (s != ONCE_OK) {
        report(r, 0, "state file '%s' is unusable: %s", path, once_strerror(s));
        return STATE_FAILED;
    }
    if (once_structure_of(once_get_type(*out))->kind == ONCE_KIND_SLICE) {
        report(r, 0, "state file '%s' holds one slice of a sliced filter (positions, not keys): "
                     "it is not a filter once can run", path);
        once_free(*out);
        *out = NULL;
        return STATE_FAILED;
    }
    return STATE_LOADED;
}

/* Buffered writes to a file descriptor for once_save. */
typedef struct file_sink {
    int fd;
    int error; /* errno of the first failure */
    size_t used;
    char buffer[1 << 16];
} file_sink;

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

static int sink_flush(file_sink *s)
{
    if (s->used > 0 && write_all(s->fd, s->buffer, s->used) != 0) {
        s->error = errno;
        return -1;
    }
    s->used = 0;
    return 0;
}

static int sink_write(void *context, const void *data, size_t len)
{
    file_sink *s = context;
    if (len >= sizeof s->buffer) {
        if (sink_flush(s) != 0)
            return -1;
        if (write_all(s->fd, data, len) != 0) {
            s->error = errno;
            return -1;
        }
        return 0;
    }
    if (len > sizeof s->buffer - s->used && sink_flush(s) != 0)
        return -1;
    memcpy(s->buffer + s->used, data, len);
    s->used += len;
    return 0;
}

static void sync_directory_of(const char *path)
{
    char *copy = strdup(path);
    if (copy == NULL)
        return;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd); /* best effort: some filesystems refuse fsync on directories */
        close(fd);
    }
    free(copy);
}

int state_save(const char *path, const once_filter *filter, state_report *r)
{
    size_t len = strlen(path) + 32;
    char *tmp = malloc(len);
    file_sink *sink = malloc(sizeof *sink);
    if (tmp == NULL || sink == NULL) {
        report(r, ENOMEM, "cannot save state file '%s': out of memory", path);
        free(tmp);
        free(sink);
        return -1;
    }
    snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        report(r, errno, "cannot save state file '%s': %s: %s", path, tmp, strerror(errno));
        free(tmp);
        free(sink);
        return -1;
    }
    sink->fd = fd;
    sink->error = 0;
    sink->used = 0;
    once_status s = once_save(filter, sink_write, sink);
    int failed = s != ONCE_OK || sink_flush(sink) != 0 || fsync(fd) != 0;
    int saved_errno = sink->error ? sink->error : errno;
    if (close(fd) != 0 && !failed) {
        failed = 1;
        saved_errno = errno;
    }
    if (!failed && rename(tmp, path) != 0) {
        failed = 1;
        saved_errno = errno;
    }
    if (failed) {
        report(r, s != ONCE_OK && s != ONCE_ERR_IO ? EIO : saved_errno,
               "cannot save state file '%s': %s", path,
               s != ONCE_OK && s != ONCE_ERR_IO ? once_strerror(s) : strerror(saved_errno));
        unlink(tmp);
    } else {
        sync_directory_of(path);
    }
    free(tmp);
    free(sink);
    return failed ? -1 : 0;
}

/* The directory the state is saved in must take new files: the save creates a
 * temporary file there and renames it over the state. */
static int check_directory_writable(const char *path, state_report *r)
{
    char *copy = strdup(path);
    if (copy == NULL) {
        report(r, ENOMEM, "cannot use state file '%s': out of memory", path);
        return -1;
    }
    const char *directory = dirname(copy);
    struct stat st;
    int error = 0;
    if (stat(directory, &st) != 0)
        error = errno;
    else if (!S_ISDIR(st.st_mode))
        error = ENOTDIR;
    else if (faccessat(AT_FDCWD, directory, W_OK | X_OK, AT_EACCESS) != 0)
        error = errno;
    if (error)
        report(r, error, "cannot save state file '%s': directory '%s': %s", path, directory,
               strerror(error));
    free(copy);
    return error ? -1 : 0;
}

/* Say who holds the lock on `fd`: the holder writes its pid there once it has it. */
static void report_holder(const char *path, int fd, state_report *r)
{
    char text[32];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    long pid = 0;
    if (n > 0) {
        text[n] = '\0';
        char *end = NULL;
        pid = strtol(text, &end, 10);
        if (end == text || (*end != '\n' && *end != '\0'))
            pid = 0;
    }
    if (pid > 0)
        report(r, EBUSY, "state file '%s' is in use by another once process (pid %ld)", path,
               pid);
    else
        report(r, EBUSY, "state file '%s' is in use by another once process", path);
}

int state_lock_acquire(const char *path, state_lock *lock, state_report *r)
{
    lock->fd = -1;
    lock->path = NULL;
    if (check_directory_writable(path, r) != 0)
        return -1;
    size_t len = strlen(path) + sizeof ".lock";
    char *lock_path = malloc(len);
    if (lock_path == NULL) {
        report(r, ENOMEM, "cannot use state file '%s': out of memory", path);
        return -1;
    }
    snprintf(lock_path, len, "%s.lock", path);
    /* A holder removes the lock file before it lets go, so a lock taken on a file that
     * is no longer under the name protects nothing: take it again on the new one.  Each
     * retry follows another run's whole lifetime, so a few are plenty. */
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
            report(r, errno, "cannot lock state file '%s': %s: %s", path, lock_path,
                   strerror(errno));
            free(lock_path);
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            if (errno == EWOULDBLOCK)
                report_holder(path, fd, r);
            else
                report(r, errno, "cannot lock state file '%s': %s: %s", path, lock_path,
                       strerror(errno));
            close(fd);
            free(lock_path);
            return -1;
        }
        struct stat held, named;
        if (fstat(fd, &held) == 0 && stat(lock_path, &named) == 0 &&
            held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
            char text[32];
            int n = snprintf(text, sizeof text, "%ld\n", (long)getpid());
            bool written = ftruncate(fd, 0) == 0 && pwrite(fd, text, (size_t)n, 0) == n;
            (void)written; /* best effort: the pid only makes a second run's refusal clearer */
            lock->fd = fd;
            lock->path = lock_path;
            return 0;
        }
        close(fd);
    }
    report(r, EAGAIN, "cannot lock state file '%s': %s keeps being replaced", path, lock_path);
    free(lock_path);
    return -1;
}

void state_lock_release(state_lock *lock)
{
    if (lock->fd >= 0) {
        /* Removed while still held: a run that opened it before finds, once it has the
         * lock, that the name leads elsewhere, and takes the lock again there. */
        unlink(lock->path);
        close(lock->fd);
    }
    free(lock->path);
    lock->fd = -1;
    lock->path = NULL;
}
