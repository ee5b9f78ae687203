/*
 * lines.h - buffered line input and output for the CLI.
 *
 * A line ends with a terminator byte, given when the reader or writer is set up: a
 * newline, or NUL for -z.  The reader hands out batches of lines as (pointer, length)
 * spans into its own buffer - no allocation or copy per line - valid until the next
 * call.  It grows the buffer for a line longer than the buffer (up to LINE_MAX_BYTES),
 * returns a last line that lacks its terminator, and treats every other byte (NUL or
 * newline, invalid UTF-8) as an ordinary byte.
 *
 * Reading is linear in the input however it arrives: the terminator search resumes
 * where it stopped, so a line that comes in many short reads (a pipe) is searched
 * once, not once per read, and only the unfinished line is moved to the buffer's front.
 */
#ifndef ONCE_PROGRAMS_LINES_H
#define ONCE_PROGRAMS_LINES_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LINE_BUFFER_BYTES ((size_t)1 << 20) /* the reader's buffer, doubled for longer lines */
#define LINE_MAX_BYTES ((size_t)1 << 30)

typedef struct line_span {
    const char *data;
    size_t len; /* without the terminator */
} line_span;

typedef struct line_reader {
    int fd;
    bool owns_fd;
    char terminator; /* the byte that ends a line */
    char *buffer;
    size_t capacity, start, end;
    size_t scan; /* the terminator search goes on from here: [start, scan) holds none */
    bool eof;
    bool stopping;   /* hand out complete buffered lines, then stop without reading */
    bool last_short; /* the previous read returned less than asked: input may block */
    /* Called before a read that may block, so output can be flushed for a live stream. */
    void (*before_block)(void *context);
    void *context;
    /* Stop signals: with `stop_signals` set, every read first waits for input in
     * ppoll(2), the only place those signals are let in, and the signals are blocked
     * from the check of *stop_flag until that wait begins.  So a signal that comes after
     * the check still ends the wait (READER_INTERRUPTED), where a plain read would have
     * let its handler run first and then blocked until more input came. */
    const sigset_t *stop_signals;
    volatile sig_atomic_t *stop_flag;
    /* Work done, which tests bound to show that reading stays linear: bytes the
     * terminator search examined (each byte at most once) and bytes moved to the buffer's front. */
    uint64_t scanned, moved;
} line_reader;

typedef enum reader_status {
    READER_LINES,       /* *count lines returned */
    READER_END,         /* no more lines */
    READER_INTERRUPTED, /* a signal arrived while waiting for input */
    READER_TOO_LONG,    /* a line passes LINE_MAX_BYTES */
    READER_ERROR        /* read failed; errno says why */
} reader_status;

/* Open `path` (NULL or "-" is standard input) for lines ended by `terminator`.
 * Returns 0, or -1 with errno set. */
int reader_open(line_reader *r, const char *path, char terminator);
void reader_close(line_reader *r);
reader_status reader_next(line_reader *r, line_span *lines, size_t max, size_t *count);

typedef struct line_writer {
    int fd;
    char terminator; /* written after each line */
    char *buffer;
    size_t capacity, used;
    int error; /* errno of the first failed write, 0 if none */
    uint64_t pending; /* lines given but not yet written out (in the buffer, or the line
                         whose write failed): after a failure, the lines that may be lost */
} line_writer;

int writer_init(line_writer *w, int fd, size_t capacity, char terminator);
void writer_free(line_writer *w);
/* Append `len` bytes and the terminator.  Returns 0, or -1 once a write failed. */
int writer_line(line_writer *w, const char *data, size_t len);
int writer_flush(line_writer *w);

#endif
