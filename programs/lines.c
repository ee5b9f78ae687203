/*
 * lines.c - buffered line input and output.  See lines.h.
 */
#include "lines.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Until the input is readable (or at its end), unless a stop signal comes first: the
 * signals are blocked from the check of the flag to the wait, which lets them in, so
 * none can slip in between (see lines.h).  READER_LINES when a read will not block. */
static reader_status wait_for_input(line_reader *r)
{
    sigset_t outside;
    sigprocmask(SIG_BLOCK, r->stop_signals, &outside);
    int ready = 0, error = 0;
    if (!*r->stop_flag) {
        struct pollfd input = {r->fd, POLLIN, 0};
        ready = ppoll(&input, 1, NULL, &outside);
        error = errno;
    }
    sigprocmask(SIG_SETMASK, &outside, NULL);
    if (ready > 0)
        return READER_LINES;
    if (ready == 0 || error == EINTR)
        return READER_INTERRUPTED; /* the flag was set: the caller's loop sees it */
    errno = error;
    return READER_ERROR;
}

int reader_open(line_reader *r, const char *path, char terminator)
{
    memset(r, 0, sizeof *r);
    r->terminator = terminator;
    if (path == NULL || strcmp(path, "-") == 0) {
        r->fd = STDIN_FILENO;
    } else {
        r->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (r->fd < 0)
            return -1;
        r->owns_fd = true;
    }
    r->capacity = LINE_BUFFER_BYTES;
    r->buffer = malloc(r->capacity);
    if (r->buffer == NULL) {
        reader_close(r);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void reader_close(line_reader *r)
{
    if (r->owns_fd && r->fd >= 0)
        close(r->fd);
    free(r->buffer);
    r->buffer = NULL;
    r->fd = -1;
}

/* Make room at the end of the buffer: drop consumed bytes, grow if still full.  It is
 * called only when no complete line is left, so what moves is the one unfinished line;
 * the front then holds it until it completes, so each byte moves at most once. */
static reader_status make_room(line_reader *r)
{
    if (r->start > 0) {
        size_t keep = r->end - r->start;
        memmove(r->buffer, r->buffer + r->start, keep);
        r->moved += keep;
        r->scan -= r->start;
        r->end = keep;
        r->start = 0;
    }
    if (r->end < r->capacity)
        return READER_LINES;
    if (r->capacity >= LINE_MAX_BYTES)
        return READER_TOO_LONG;
    size_t grown = r->capacity * 2;
    char *b = realloc(r->buffer, grown);
    if (b == NULL) {
        errno = ENOMEM;
        return READER_ERROR;
    }
    r->buffer = b;
    r->capacity = grown;
    return READER_LINES;
}

reader_status reader_next(line_reader *r, line_span *lines, size_t max, size_t *count)
{
    *count = 0;
    for (;;) {
        size_t n = 0;
        /* The search resumes at `scan`, past the bytes earlier calls found no
         * terminator in, so each byte is examined once: searching from `start` after
         * every read would make a line that arrives in many short reads (a pipe)
         * quadratic. */
        while (n < max && r->scan < r->end) {
            char *from = r->buffer + r->scan;
            char *found = memchr(from, r->terminator, r->end - r->scan);
            if (found == NULL) {
                r->scanned += r->end - r->scan;
                r->scan = r->end;
                break;
            }
            r->scanned += (size_t)(found - from) + 1;
            lines[n].data = r->buffer + r->start;
            lines[n].len = (size_t)(found - lines[n].data);
            n++;
            r->start = r->scan = (size_t)(found - r->buffer) + 1;
        }
        if (n > 0) {
            *count = n;
            return READER_LINES;
        }
        if (r->stopping)
            return READER_END; /* a partial line read before the stop is not a line */
        if (r->eof) {
            if (r->start < r->end) { /* the last line, without its terminator */
                lines[0].data = r->buffer + r->start;
                lines[0].len = r->end - r->start;
                r->start = r->scan = r->end;
                *count = 1;
                return READER_LINES;
            }
            return READER_END;
        }
        reader_status s = make_room(r);
        if (s != READER_LINES)
            return s;
        if (r->last_short && r->before_block)
            r->before_block(r->context);
        if (r->stop_signals != NULL && (s = wait_for_input(r)) != READER_LINES)
            return s;
        size_t want = r->capacity - r->end;
        ssize_t got = read(r->fd, r->buffer + r->end, want);
        if (got < 0) {
            if (errno == EINTR)
                return READER_INTERRUPTED;
            return READER_ERROR;
        }
        if (got == 0)
            r->eof = true;
        r->end += (size_t)got;
        r->last_short = (size_t)got < want;
    }
}

int writer_init(line_writer *w, int fd, size_t capacity, char terminator)
{
    w->fd = fd;
    w->terminator = terminator;
    w->capacity = capacity;
    w->used = 0;
    w->error = 0;
    w->buffer = malloc(capacity);
    return w->buffer ? 0 : -1;
}

void writer_free(line_writer *w)
{
    free(w->buffer);
    w->buffer = NULL;
}

static int write_all(line_writer *w, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(w->fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            w->error = errno;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int writer_flush(line_writer *w)
{
    if (w->error)
        return -1;
    if (w->used > 0 && write_all(w, w->buffer, w->used) != 0)
        return -1;
    w->used = 0;
    w->pending = 0;
    return 0;
}

int writer_line(line_writer *w, const char *data, size_t len)
{
    if (w->error)
        return -1;
    if (len + 1 > w->capacity - w->used) {
        if (writer_flush(w) != 0)
            return -1;
        if (len + 1 > w->capacity) { /* a line larger than the buffer goes straight out */
            w->pending = 1;
            if (write_all(w, data, len) != 0 || write_all(w, &w->terminator, 1) != 0)
                return -1;
            w->pending = 0;
            return 0;
        }
    }
    memcpy(w->buffer + w->used, data, len);
    w->buffer[w->used + len] = w->terminator;
    w->used += len + 1;
    w->pending++;
    return 0;
}
