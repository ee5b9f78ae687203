/*
 * state.c - load and save the filter's state file.
 *
 * Loading maps the file and hands the bytes to once_load, which validates every field
 * and the checksum; a file that fails is an error naming the file and is left as it
 * is.  Saving never writes over the old file in place: the new state goes to
 * "<path>.tmp.<pid>" and replaces the old one by rename(2) only once it is complete
 * and on disk, so a crash, a full disk or a kill at any moment leaves either the old
 * state or the new one, never a torn file.
 */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

state_result state_load(const char *path, once_filter **out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return STATE_ABSENT;
        fprintf(stderr, "once: cannot open state file '%s': %s\n", path, strerror(errno));
        return STATE_FAILED;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "once: state file '%s' is not a regular file\n", path);
        close(fd);
        return STATE_FAILED;
    }
    if (st.st_size == 0) {
        fprintf(stderr, "once: state file '%s' is empty (not a saved filter)\n", path);
        close(fd);
        return STATE_FAILED;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        fprintf(stderr, "once: cannot read state file '%s': %s\n", path, strerror(errno));
        return STATE_FAILED;
    }
    once_status s = once_load(out, map, (size_t)st.st_size);
    munmap(map, (size_t)st.st_size);
    if (s != ONCE_OK) {
        fprintf(stderr, "once: state file '%s' is unusable: %s\n", path, once_strerror(s));
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

int state_save(const char *path, const once_filter *filter)
{
    size_t len = strlen(path) + 32;
    char *tmp = malloc(len);
    file_sink *sink = malloc(sizeof *sink);
    if (tmp == NULL || sink == NULL) {
        fprintf(stderr, "once: cannot save state file '%s': out of memory\n", path);
        free(tmp);
        free(sink);
        return -1;
    }
    snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "once: cannot save state file '%s': %s: %s\n", path, tmp, strerror(errno));
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
        fprintf(stderr, "once: cannot save state file '%s': %s\n", path,
                s != ONCE_OK && s != ONCE_ERR_IO ? once_strerror(s) : strerror(saved_errno));
        unlink(tmp);
    } else {
        sync_directory_of(path);
    }
    free(tmp);
    free(sink);
    return failed ? -1 : 0;
}
