/*
 * test_lines.c - the CLI's line reader (programs/lines.c) on real pipes.
 *
 * A child process writes the input into a pipe in small writes, as `cat file | once`
 * does, and the reader reads it from standard input.  Every line must come back
 * byte-exact, and the reader's own counters must show linear work: the newline search
 * examines each byte at most once and each byte moves at most once.  (Searching the
 * whole unfinished line again after every short read examined a 64 MiB line from a
 * pipe about a thousand times over.)
 */
#include "lines.h"
#include "testing.h"

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Make standard input the read end of a pipe that a child fills with `data`, `chunk`
 * bytes per write.  Returns the child's pid, or -1. */
static pid_t feed_stdin(const char *data, size_t len, size_t chunk)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(fds[0]);
        for (size_t at = 0; at < len;) {
            size_t want = len - at < chunk ? len - at : chunk;
            ssize_t put = write(fds[1], data + at, want);
            if (put < 0)
                _exit(1);
            at += (size_t)put;
        }
        _exit(0);
    }
    close(fds[1]);
    dup2(fds[0], STDIN_FILENO);
    close(fds[0]);
    return pid;
}

/* Read `data` back through a pipe written `chunk` bytes at a time and check it: the
 * lines are the bytes between terminators, the last one without its terminator if the
 * data does not end with one. */
static void read_back(const char *data, size_t len, size_t chunk, char terminator)
{
    pid_t child = feed_stdin(data, len, chunk);
    REQUIRE(child > 0);
    line_reader r;
    REQUIRE(reader_open(&r, NULL, terminator) == 0);
    static line_span lines[64];
    const char *expect = data, *end = data + len;
    uint64_t got_lines = 0, wrong = 0;
    reader_status s;
    size_t n;
    while ((s = reader_next(&r, lines, 64, &n)) == READER_LINES) {
        for (size_t i = 0; i < n; i++, got_lines++) {
            const char *found = memchr(expect, terminator, (size_t)(end - expect));
            size_t want = (size_t)((found ? found : end) - expect);
            if (expect == end || lines[i].len != want ||
                memcmp(lines[i].data, expect, want) != 0) {
                if (wrong++ == 0)
                    fprintf(stderr, "line %" PRIu64 " (chunk %zu): %zu bytes, expected %zu\n",
                            got_lines, chunk, lines[i].len, want);
                expect = end;
                continue;
            }
            expect = found ? found + 1 : end;
        }
    }
    CHECK(s == READER_END);
    CHECK(wrong == 0);
    CHECK(expect == end); /* every line came back */
    /* Linear work: each byte searched once and moved at most once. */
    if (r.scanned > 2 * (uint64_t)len || r.moved > len)
        fprintf(stderr, "%zu bytes in writes of %zu: %" PRIu64 " scanned, %" PRIu64 " moved\n",
                len, chunk, r.scanned, r.moved);
    CHECK(r.scanned <= 2 * (uint64_t)len);
    CHECK(r.moved <= len);
    reader_close(&r);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* `len` bytes of text without a newline, varied so a misplaced byte shows. */
static void fill_text(char *p, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len; i++)
        p[i] = (char)('a' + (testing_mix(seed + i / 64) + i) % 26);
}

static void long_line_from_pipe_is_linear(void)
{
    /* One 64 MiB line, a short one, and a last line without its newline, in writes of
     * 4093 bytes: the reader sees thousands of short reads within the long line. */
    size_t long_len = (size_t)64 << 20;
    const char tail[] = "\nshort\nlast";
    size_t len = long_len + sizeof tail - 1;
    char *data = malloc(len);
    REQUIRE(data != NULL);
    fill_text(data, long_len, 1);
    memcpy(data + long_len, tail, sizeof tail - 1);
    read_back(data, len, 4093, '\n');
    free(data);
}

static void lines_around_buffer_boundaries(void)
{
    /* Lines one byte either side of the buffer's first sizes (the newline falling just
     * inside or just past it), between runs of short lines, at several write sizes. */
    const size_t sizes[] = {0, 1, LINE_BUFFER_BYTES - 2, LINE_BUFFER_BYTES - 1,
                            LINE_BUFFER_BYTES, LINE_BUFFER_BYTES + 1, 2 * LINE_BUFFER_BYTES - 1,
                            2 * LINE_BUFFER_BYTES, 2 * LINE_BUFFER_BYTES + 1, 3};
    size_t count = sizeof sizes / sizeof sizes[0];
    size_t cap = 0;
    for (size_t i = 0; i < count; i++)
        cap += sizes[i] + 1 + 1000 * 8;
    char *data = malloc(cap);
    REQUIRE(data != NULL);
    size_t len = 0;
    for (size_t i = 0; i < count; i++) {
        fill_text(data + len, sizes[i], i);
        len += sizes[i];
        data[len++] = '\n';
        for (int k = 0; k < 1000; k++) /* short lines: 1000 of up to 8 bytes */
            len += (size_t)snprintf(data + len, 9, "%d\n", k * (int)i);
    }
    const size_t chunks[] = {4097, 65536, LINE_BUFFER_BYTES + 3, len};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        read_back(data, len, chunks[c], '\n');
        read_back(data, len - 1, chunks[c], '\n'); /* the same ending without its newline */
    }
    /* Byte by byte: every read is one byte. */
    read_back("ab\n\nc\nlonger line\nend", 22, 1, '\n');
    free(data);
}

static void nul_terminated_lines(void)
{
    /* -z: NUL ends a line and a newline is an ordinary byte, in a long line too. */
    const char small[] = "a\nb\0\0c\r\0a\nb\0last\n";
    read_back(small, sizeof small - 1, 1, '\0');
    read_back(small, sizeof small - 1, 3, '\0');
    size_t long_len = 3 * LINE_BUFFER_BYTES + 5;
    char *data = malloc(long_len + 4);
    REQUIRE(data != NULL);
    fill_text(data, long_len, 9);
    for (size_t i = 0; i < long_len; i += 1000)
        data[i] = '\n';
    memcpy(data + long_len, "\0x\0y", 4);
    read_back(data, long_len + 4, 4093, '\0');
    free(data);
}

static const testing_case cases[] = {
    {"long_line_from_pipe_is_linear", long_line_from_pipe_is_linear},
    {"lines_around_buffer_boundaries", lines_around_buffer_boundaries},
    {"nul_terminated_lines", nul_terminated_lines},
};

TESTING_MAIN(cases)
