/*
 * python/once/_once.c - the C core of the Python package `once` (python/once/__init__.py
 * is its face): one filter of libonce as a Python object.
 *
 * Design
 *   A Core owns one once_filter.  It is built from the command line the Python layer
 *   writes for its keyword arguments (`span="1h"` is `--span 1h`), parsed by the CLI's
 *   own parser and built by its own recipe (programs/options.c, programs/recipe.c), so
 *   that the same options build the same filter, and the same seed answers alike, in
 *   both; the parser's and the library's sentences become the exceptions' messages.
 *   The filter records its options in its metadata as the CLI's does (its profile), so
 *   a state saved here is the state file `once --state` saves for those options.
 *
 *   A ClusterCore is the same over a Redis Cluster: `once --cluster`'s options opened by
 *   the CLI's recipe (recipe_cluster_open), answering test-and-add alone.
 *
 *   Keys are str (their UTF-8 bytes), bytes or any bytes-like object; a batch takes an
 *   iterable of them, or one buffer of fixed-width keys (a 2-D array of bytes, each row
 *   a key; a 1-D array of numpy "S" strings, each item a key without its trailing NUL
 *   padding, as numpy reads it).  Answers of a batch are bytes, one 0 or 1 a key.
 *
 * Threads
 *   A batch converts its keys holding the GIL, then releases it for the library's call,
 *   so that other Python threads run meanwhile.  The library lets many readers or one
 *   writer at a time use a filter (once.h, "Threads"): each Core has a reader-writer
 *   lock, taken without the GIL (a thread waiting for it holds no other thread back),
 *   shared by the queries, exclusive for everything that writes.
 *
 * Invariants
 *   - `filter` is never NULL in a Core that __new__ returned; it is freed with the Core;
 *   - the lock is held only with the GIL released, or briefly by a one-key call that
 *     took it without waiting, so that no thread holds one and waits for the other.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "once.h"
#include "once_advanced.h"
#include "once_cluster.h"
#include "options.h"
#include "profile.h"
#include "recipe.h"
#include "state.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    once_filter *filter;
    pthread_rwlock_t lock;
    bool timed; /* a time window: every key carries its time */
} Core;

static PyTypeObject CoreType;

/* The package's exceptions (created in the module's init). */
static PyObject *OnceError, *FullError, *CorruptStateError, *TimeRefusedError;

/* ------------------------------------------------------------------ errors */

/* The exception for a status of the library, with its sentence. */
static PyObject *raise_status(once_status st)
{
    PyObject *type;
    switch (st) {
    case ONCE_ERR_NOMEM:
        return PyErr_NoMemory();
    case ONCE_ERR_FULL:
        type = FullError;
        break;
    case ONCE_ERR_TIME:
        type = TimeRefusedError;
        break;
    case ONCE_ERR_TRUNCATED:
    case ONCE_ERR_BAD_MAGIC:
    case ONCE_ERR_VERSION:
    case ONCE_ERR_CORRUPT:
    case ONCE_ERR_CHECKSUM:
    case ONCE_ERR_PROBE_MISMATCH:
        type = CorruptStateError;
        break;
    case ONCE_ERR_INVALID:
    case ONCE_ERR_TOO_LARGE:
    case ONCE_ERR_RATE:
    case ONCE_ERR_NO_WINDOW:
    case ONCE_ERR_UNSUPPORTED:
    case ONCE_ERR_MISMATCH:
        type = PyExc_ValueError;
        break;
    default:
        type = OnceError;
    }
    PyErr_SetString(type, once_strerror(st));
    return NULL;
}

/* The exception for what a state file function reported: OSError (its subclass for the
 * errno) for the file, CorruptStateError for bytes that are not a filter to run. */
static PyObject *raise_report(const state_report *r)
{
    if (r->error == 0) {
        PyErr_SetString(CorruptStateError, r->text);
        return NULL;
    }
    PyObject *e = PyObject_CallFunction(PyExc_OSError, "is", r->error, r->text);
    if (e != NULL) {
        PyErr_SetObject((PyObject *)Py_TYPE(e), e);
        Py_DECREF(e);
    }
    return NULL;
}

/* The path argument of a file call, as bytes (os.fspath, then the file system's
 * encoding); NULL with an exception set. */
static PyObject *path_bytes(PyObject *arg)
{
    PyObject *path = NULL;
    if (!PyUnicode_FSConverter(arg, &path))
        return NULL;
    return path;
}

/* ------------------------------------------------------------------ the lock */

/* Take the lock, for writing or not, without holding the GIL while waiting. */
static void lock_take(Core *c, bool write)
{
    int busy = write ? pthread_rwlock_trywrlock(&c->lock) : pthread_rwlock_tryrdlock(&c->lock);
    if (busy == 0)
        return;
    Py_BEGIN_ALLOW_THREADS
    if (write)
        pthread_rwlock_wrlock(&c->lock);
    else
        pthread_rwlock_rdlock(&c->lock);
    Py_END_ALLOW_THREADS
}

static void lock_give(Core *c)
{
    pthread_rwlock_unlock(&c->lock);
}

/* ------------------------------------------------------------------ keys */

/* One key's bytes: str as UTF-8, bytes, or a bytes-like object (its view kept in `view`
 * until key_release).  -1 with TypeError for anything else. */
static int key_bytes(PyObject *obj, const void **data, size_t *len, Py_buffer *view)
{
    view->obj = NULL;
    if (PyUnicode_Check(obj)) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(obj, &n);
        if (s == NULL)
            return -1;
        *data = s;
        *len = (size_t)n;
        return 0;
    }
    if (PyBytes_Check(obj)) {
        *data = PyBytes_AS_STRING(obj);
        *len = (size_t)PyBytes_GET_SIZE(obj);
        return 0;
    }
    if (PyObject_CheckBuffer(obj)) {
        if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) != 0)
            return -1;
        *data = view->buf;
        *len = (size_t)view->len;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "a key is str or bytes (or bytes-like), not %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
}

static void key_release(Py_buffer *view)
{
    if (view->obj != NULL)
        PyBuffer_Release(view);
}

/* An event time in ms, from a Python int (>= 0). */
static int time_of(PyObject *obj, uint64_t *ms)
{
    unsigned long long v = PyLong_AsUnsignedLongLong(obj);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "an event time is a whole number of ms since "
                                              "the epoch, from 0 to 2^64 - 1");
        }
        return -1;
    }
    *ms = v;
    return 0;
}

/* The keys of a batch, as once_key with their times, and what keeps their bytes alive. */
typedef struct batch {
    once_key *keys;
    size_t count;
    PyObject *items;    /* the sequence of keys (a list or tuple), or NULL for a buffer */
    Py_buffer *views;   /* the keys' own views, for bytes-like items (NULL: none) */
    Py_buffer array;    /* a buffer of fixed-width keys (array.obj NULL: none) */
} batch;

static void batch_free(batch *b)
{
    if (b->views != NULL) {
        for (size_t i = 0; i < b->count; i++)
            key_release(&b->views[i]);
        PyMem_Free(b->views);
    }
    if (b->array.obj != NULL)
        PyBuffer_Release(&b->array);
    Py_XDECREF(b->items);
    PyMem_Free(b->keys);
    memset(b, 0, sizeof *b);
}

/* A buffer of fixed-width keys: 2-D of bytes (a row a key), or 1-D of items of a "s"
 * format (numpy's "S" strings: a key is its item less the trailing NUL padding). */
static int batch_from_array(batch *b, PyObject *obj)
{
    if (PyObject_GetBuffer(obj, &b->array, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0)
        return -1;
    Py_buffer *a = &b->array;
    const char *format = a->format != NULL ? a->format : "B";
    size_t width, count;
    bool strings = format[0] != '\0' && format[strlen(format) - 1] == 's';
    if (a->ndim == 2 && a->itemsize == 1) {
        count = (size_t)a->shape[0];
        width = (size_t)a->shape[1];
    } else if (a->ndim == 1 && strings) {
        count = (size_t)a->shape[0];
        width = (size_t)a->itemsize;
    } else {
        PyErr_SetString(PyExc_TypeError,
                        "an array of keys is 2-D of bytes (a row a key) or 1-D of fixed-width "
                        "byte strings (numpy \"S\")");
        return -1;
    }
    b->keys = PyMem_Calloc(count ? count : 1, sizeof *b->keys);
    if (b->keys == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->count = count;
    const uint8_t *at = a->buf;
    for (size_t i = 0; i < count; i++, at += width) {
        size_t len = width;
        while (strings && len > 0 && at[len - 1] == 0)
            len--;
        b->keys[i].data = at;
        b->keys[i].len = len;
    }
    return 0;
}

/* The keys of `obj`: an iterable of keys, or an array of fixed-width keys. */
static int batch_of(batch *b, PyObject *obj)
{
    memset(b, 0, sizeof *b);
    if (PyUnicode_Check(obj) || PyBytes_Check(obj) || PyByteArray_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "a batch takes an iterable of keys (or an array of "
                                         "fixed-width keys), not one key: for one, use add");
        return -1;
    }
    if (PyObject_CheckBuffer(obj) && !PyList_Check(obj) && !PyTuple_Check(obj))
        return batch_from_array(b, obj);
    b->items = PySequence_Fast(obj, "a batch takes an iterable of keys");
    if (b->items == NULL)
        return -1;
    size_t count = (size_t)PySequence_Fast_GET_SIZE(b->items);
    b->keys = PyMem_Calloc(count ? count : 1, sizeof *b->keys);
    if (b->keys == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(b->items);
    for (size_t i = 0; i < count; i++) {
        Py_buffer view;
        if (key_bytes(items[i], &b->keys[i].data, &b->keys[i].len, &view) != 0)
            return -1;
        if (view.obj != NULL) {
            if (b->views == NULL) {
                b->views = PyMem_Calloc(count, sizeof *b->views);
                if (b->views == NULL) {
                    PyBuffer_Release(&view);
                    PyErr_NoMemory();
                    return -1;
                }
                b->count = count; /* batch_free releases views[0 .. count - 1] */
            }
            b->views[i] = view;
        }
    }
    b->count = count;
    return 0;
}

/* The batch's times: one for every key (an int), or one each (an iterable of ints of
 * the batch's length). */
static int batch_times(batch *b, PyObject *times)
{
    if (times == Py_None)
        return 0;
    if (PyLong_Check(times)) {
        uint64_t ms;
        if (time_of(times, &ms) != 0)
            return -1;
        for (size_t i = 0; i < b->count; i++)
            b->keys[i].time_ms = ms;
        return 0;
    }
    PyObject *seq = PySequence_Fast(times, "times are an int or an iterable of ints");
    if (seq == NULL)
        return -1;
    int rc = 0;
    if ((size_t)PySequence_Fast_GET_SIZE(seq) != b->count) {
        PyErr_Format(PyExc_ValueError, "%zd times for %zu keys: one each, or one for all",
                     PySequence_Fast_GET_SIZE(seq), b->count);
        rc = -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (size_t i = 0; rc == 0 && i < b->count; i++)
        rc = time_of(items[i], &b->keys[i].time_ms);
    Py_DECREF(seq);
    return rc;
}

/* ------------------------------------------------------------------ the type */

static Core *core_wrap(once_filter *f)
{
    Core *c = PyObject_New(Core, &CoreType);
    if (c == NULL) {
        once_free(f);
        return NULL;
    }
    c->filter = f;
    c->timed = once_structure_of(once_get_type(f))->kind == ONCE_KIND_TIME_WINDOW;
    pthread_rwlock_init(&c->lock, NULL);
    return c;
}

static void core_dealloc(Core *c)
{
    once_free(c->filter);
    pthread_rwlock_destroy(&c->lock);
    PyObject_Free(c);
}

/* A command line of `once` (argv[0] the program), from a list of str, parsed into *o.
 * Its strings stay the list's, which *held keeps (o points into them): the caller
 * releases both with command_line_free.  -1 with the exception set (ValueError with
 * the parser's sentence for a refusal). */
typedef struct command_line {
    PyObject *held;
    char **argv;
} command_line;

static void command_line_free(command_line *c)
{
    PyMem_Free(c->argv);
    Py_XDECREF(c->held);
}

static int command_line_parse(PyObject *arg, command_line *c, cli_options *o)
{
    c->argv = NULL;
    c->held = PySequence_Fast(arg, "options are a list of str");
    if (c->held == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(c->held);
    c->argv = PyMem_Calloc((size_t)n + 2, sizeof *c->argv);
    if (c->argv == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    c->argv[0] = "once";
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(c->held, i);
        c->argv[i + 1] = PyUnicode_Check(item) ? (char *)PyUnicode_AsUTF8(item) : NULL;
        if (c->argv[i + 1] == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "options are str");
            return -1;
        }
    }
    if (options_parse(o, (int)n + 1, c->argv) != 0) { /* holds the GIL: getopt's globals */
        PyErr_SetString(PyExc_ValueError, options_error()[0] ? options_error()
                                                              : "options that build nothing");
        return -1;
    }
    return 0;
}

/* _once.create(argv, max_time_jump): the filter of a command line of `once` (argv[0]
 * the program); a time window's bound on jumps ahead (the CLI's --max-time-jump, which
 * there applies to event times read from a field: here every time is an event's). */
static PyObject *core_create(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *arg;
    const char *jump_text;
    if (!PyArg_ParseTuple(args, "Os", &arg, &jump_text))
        return NULL;
    uint64_t jump_ms;
    if (options_time_jump(jump_text, &jump_ms) != 0) {
        PyErr_SetString(PyExc_ValueError, options_error());
        return NULL;
    }
    command_line line;
    cli_options o;
    PyObject *result = NULL;
    once_filter *f = NULL;
    char why[RECIPE_WHY_MAX];
    int code = 0;
    if (command_line_parse(arg, &line, &o) != 0) {
        /* the exception is set */
    } else if (o.input_count != 0 || o.state_path != NULL || o.cluster != NULL || o.sliced ||
               o.card) {
        PyErr_SetString(PyExc_ValueError, "options of a run (inputs, --state, --cluster, "
                                          "--slicing, card) build no filter here");
    } else if ((code = recipe_create(&o, 0, &f, why, sizeof why)) != 0) {
        if (code == EXIT_IO)
            PyErr_NoMemory();
        else
            PyErr_SetString(PyExc_ValueError, why);
    } else {
        run_profile profile;
        char text[PROFILE_TEXT_MAX];
        profile_of_options(&profile, &o, once_get_type(f));
        size_t len = profile_encode(&profile, text);
        once_status st = once_set_metadata(f, text, len);
        if (st == ONCE_OK && once_structure_of(once_get_type(f))->kind == ONCE_KIND_TIME_WINDOW)
            st = once_set_max_time_jump(f, jump_ms);
        if (st != ONCE_OK) {
            once_free(f);
            raise_status(st);
        } else {
            result = (PyObject *)core_wrap(f);
        }
    }
    command_line_free(&line);
    return result;
}

/* _once.loads(data): a filter saved by save (or by `once --state`, or a module's dump). */
static PyObject *core_loads(PyObject *module, PyObject *arg)
{
    (void)module;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) != 0)
        return NULL;
    once_filter *f = NULL;
    once_status st;
    Py_BEGIN_ALLOW_THREADS
    st = once_load(&f, view.buf, (size_t)view.len);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (st != ONCE_OK)
        return raise_status(st);
    return (PyObject *)core_wrap(f);
}

/* _once.load_file(path): the filter saved in the file at `path`, read as `once --state`
 * reads it (a link followed; a FIFO, a directory or a dangling link refused without
 * blocking). */
static PyObject *core_load_file(PyObject *module, PyObject *arg)
{
    (void)module;
    PyObject *path = path_bytes(arg);
    if (path == NULL)
        return NULL;
    state_report report = {0, ""};
    once_filter *f = NULL;
    state_result r = STATE_FAILED;
    Py_BEGIN_ALLOW_THREADS
    char *target = state_resolve(PyBytes_AS_STRING(path), &report);
    if (target != NULL) {
        r = state_load(target, &f, &report);
        free(target);
    }
    Py_END_ALLOW_THREADS
    if (r == STATE_ABSENT) {
        report.error = ENOENT;
        snprintf(report.text, sizeof report.text, "no state file '%s'", PyBytes_AS_STRING(path));
    }
    Py_DECREF(path);
    if (r != STATE_LOADED)
        return raise_report(&report);
    return (PyObject *)core_wrap(f);
}

/* The (key, time) arguments of a one-key call. */
static int one_key(Core *c, PyObject *const *args, Py_ssize_t nargs, const void **data,
                   size_t *len, Py_buffer *view, uint64_t *ms)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "takes a key and a time (ms, or None)");
        return -1;
    }
    *ms = 0;
    if (args[1] != Py_None && time_of(args[1], ms) != 0)
        return -1;
    if (c->timed && args[1] == Py_None) {
        PyErr_SetString(PyExc_ValueError, "a time window takes each key's time");
        return -1;
    }
    return key_bytes(args[0], data, len, view);
}

/* A one-key call: add (write: True when the key is new, and now added) or contains
 * (True when the key is, probably, there). */
static PyObject *one_key_call(Core *c, PyObject *const *args, Py_ssize_t nargs, bool write)
{
    const void *data;
    size_t len;
    Py_buffer view;
    uint64_t ms;
    if (one_key(c, args, nargs, &data, &len, &view, &ms) != 0)
        return NULL;
    bool answer = false;
    lock_take(c, write);
    once_status st = write ? once_test_and_add(c->filter, data, len, ms, &answer)
                           : once_query(c->filter, data, len, ms, &answer);
    lock_give(c);
    key_release(&view);
    if (st != ONCE_OK)
        return raise_status(st);
    return PyBool_FromLong(write ? !answer : answer);
}

static PyObject *core_add(Core *c, PyObject *const *args, Py_ssize_t nargs)
{
    return one_key_call(c, args, nargs, true);
}

static PyObject *core_contains(Core *c, PyObject *const *args, Py_ssize_t nargs)
{
    return one_key_call(c, args, nargs, false);
}

/* The keys and times of a batch call (args: keys, times), into *b, and the bytes its
 * answers go in (NULL with the exception set, *b freed). */
static PyObject *batch_start(PyObject *const *args, Py_ssize_t nargs, bool timed, batch *b)
{
    memset(b, 0, sizeof *b);
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "takes keys and their times (None, an int, or one "
                                         "each)");
        return NULL;
    }
    if (timed && args[1] == Py_None) {
        PyErr_SetString(PyExc_ValueError, "a window takes the keys' times");
        return NULL;
    }
    PyObject *out = NULL;
    if (batch_of(b, args[0]) == 0 && batch_times(b, args[1]) == 0)
        out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)b->count);
    if (out == NULL)
        batch_free(b);
    return out;
}

/* A batch call: add_many (write) or contains_many, over keys and times. */
static PyObject *batch_call(Core *c, PyObject *const *args, Py_ssize_t nargs, bool write)
{
    batch b;
    PyObject *out = batch_start(args, nargs, c->timed, &b);
    if (out == NULL)
        return NULL;
    uint8_t *answers = (uint8_t *)PyBytes_AS_STRING(out);
    once_status st;
    Py_BEGIN_ALLOW_THREADS
    if (write) {
        pthread_rwlock_wrlock(&c->lock);
        st = once_test_and_add_batch(c->filter, b.keys, b.count, answers);
        for (size_t i = 0; i < b.count; i++)
            answers[i] = !answers[i]; /* 1: new */
    } else {
        pthread_rwlock_rdlock(&c->lock);
        st = once_query_batch(c->filter, b.keys, b.count, answers);
        for (size_t i = 0; i < b.count; i++)
            answers[i] = answers[i] != 0;
    }
    pthread_rwlock_unlock(&c->lock);
    Py_END_ALLOW_THREADS
    batch_free(&b);
    if (st != ONCE_OK) {
        Py_DECREF(out);
        return raise_status(st);
    }
    return out;
}

static PyObject *core_add_many(Core *c, PyObject *const *args, Py_ssize_t nargs)
{
    return batch_call(c, args, nargs, true);
}

static PyObject *core_contains_many(Core *c, PyObject *const *args, Py_ssize_t nargs)
{
    return batch_call(c, args, nargs, false);
}

/* save_file(path): the state written as `once --state PATH` writes it: a link followed
 * to its target, a dangling link or a path that is not a regular file refused, the
 * state's lock held for the save (a run of `once --state` on it refuses the save:
 * EBUSY), the bytes put beside it and renamed over it once on disk (programs/state.c). */
static PyObject *core_save_file(Core *c, PyObject *arg)
{
    PyObject *path = path_bytes(arg);
    if (path == NULL)
        return NULL;
    state_report report = {0, ""};
    int saved = -1;
    Py_BEGIN_ALLOW_THREADS
    char *target = state_resolve(PyBytes_AS_STRING(path), &report);
    state_lock held = {.fd = -1, .path = NULL};
    if (target != NULL && state_lock_acquire(target, &held, &report) == 0) {
        pthread_rwlock_rdlock(&c->lock);
        saved = state_save(target, c->filter, &report);
        pthread_rwlock_unlock(&c->lock);
        state_lock_release(&held);
    }
    free(target);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (saved != 0)
        return raise_report(&report);
    Py_RETURN_NONE;
}

/* save() -> bytes: the state, as `once --state` writes it. */
static PyObject *core_save(Core *c, PyObject *unused)
{
    (void)unused;
    void *buffer = NULL;
    size_t len = 0;
    once_status st;
    Py_BEGIN_ALLOW_THREADS
    pthread_rwlock_rdlock(&c->lock);
    st = once_save_to_buffer(c->filter, &buffer, &len);
    pthread_rwlock_unlock(&c->lock);
    Py_END_ALLOW_THREADS
    if (st != ONCE_OK)
        return raise_status(st);
    PyObject *out = PyBytes_FromStringAndSize(buffer, (Py_ssize_t)len);
    once_free_buffer(buffer);
    return out;
}

/* Set d[name] = value, consuming value. */
static int put(PyObject *d, const char *name, PyObject *value)
{
    if (value == NULL)
        return -1;
    int rc = PyDict_SetItemString(d, name, value);
    Py_DECREF(value);
    return rc;
}

/* stats() -> dict: once_get_stats's fields, by their names. */
static PyObject *core_stats(Core *c, PyObject *unused)
{
    (void)unused;
    once_stats s;
    lock_take(c, false);
    once_status st = once_get_stats(c->filter, &s);
    lock_give(c);
    if (st != ONCE_OK)
        return raise_status(st);
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    if (put(d, "structure", PyUnicode_FromString(s.structure)) ||
        put(d, "bytes", PyLong_FromUnsignedLongLong(s.bytes)) ||
        put(d, "bits", PyLong_FromUnsignedLongLong(s.bits)) ||
        put(d, "bits_set", PyLong_FromUnsignedLongLong(s.bits_set)) ||
        put(d, "fill_ratio", PyFloat_FromDouble(s.fill_ratio)) ||
        put(d, "items", PyLong_FromUnsignedLongLong(s.items)) ||
        put(d, "capacity", PyLong_FromUnsignedLongLong(s.capacity)) ||
        put(d, "error", PyFloat_FromDouble(s.error)) ||
        put(d, "hashes", PyLong_FromUnsignedLong(s.hashes)) ||
        put(d, "fpr_estimate", PyFloat_FromDouble(s.fpr_estimate)) ||
        put(d, "seed", PyLong_FromUnsignedLongLong(s.seed)) ||
        put(d, "window", PyLong_FromUnsignedLongLong(s.window)) ||
        put(d, "slack", PyLong_FromUnsignedLongLong(s.slack)) ||
        put(d, "span_ms", PyLong_FromUnsignedLongLong(s.span_ms)) ||
        put(d, "lag_ms", PyLong_FromUnsignedLongLong(s.lag_ms)) ||
        put(d, "filters", PyLong_FromUnsignedLong(s.filters)) ||
        put(d, "shards", PyLong_FromUnsignedLong(s.shards))) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

/* cardinality(ms, confidence) -> (estimate, low, high). */
static PyObject *core_cardinality(Core *c, PyObject *args)
{
    unsigned long long ms;
    double confidence;
    if (!PyArg_ParseTuple(args, "Kd", &ms, &confidence))
        return NULL;
    once_cardinality card;
    lock_take(c, false);
    once_status st = once_estimate_cardinality(c->filter, ms, confidence, &card);
    lock_give(c);
    if (st != ONCE_OK)
        return raise_status(st);
    return Py_BuildValue("(ddd)", card.estimate, card.low, card.high);
}

/* clock() -> the latest event time written (ms), or None before the first. */
static PyObject *core_clock(Core *c, PyObject *unused)
{
    (void)unused;
    uint64_t ms = 0;
    bool started = false;
    lock_take(c, false);
    once_status st = once_clock(c->filter, &ms, &started);
    lock_give(c);
    if (st == ONCE_ERR_UNSUPPORTED || (st == ONCE_OK && !started))
        Py_RETURN_NONE;
    if (st != ONCE_OK)
        return raise_status(st);
    return PyLong_FromUnsignedLongLong(ms);
}

static PyObject *core_timed(Core *c, void *unused)
{
    (void)unused;
    return PyBool_FromLong(c->timed);
}

static PyObject *core_count_window(Core *c, void *unused)
{
    (void)unused;
    return PyBool_FromLong(once_structure_of(once_get_type(c->filter))->kind ==
                           ONCE_KIND_COUNT_WINDOW);
}

static PyMethodDef core_methods[] = {
    {"add", (PyCFunction)(void (*)(void))core_add, METH_FASTCALL,
     "add(key, ms) -> True when the key is new, and adds it"},
    {"contains", (PyCFunction)(void (*)(void))core_contains, METH_FASTCALL,
     "contains(key, ms) -> True when the key is (probably) there"},
    {"add_many", (PyCFunction)(void (*)(void))core_add_many, METH_FASTCALL,
     "add_many(keys, ms) -> bytes, 1 for each key that was new"},
    {"contains_many", (PyCFunction)(void (*)(void))core_contains_many, METH_FASTCALL,
     "contains_many(keys, ms) -> bytes, 1 for each key that is there"},
    {"save", (PyCFunction)core_save, METH_NOARGS, "save() -> the state's bytes"},
    {"save_file", (PyCFunction)core_save_file, METH_O,
     "save_file(path): the state written to a file as `once --state` writes it"},
    {"stats", (PyCFunction)core_stats, METH_NOARGS, "stats() -> dict"},
    {"cardinality", (PyCFunction)core_cardinality, METH_VARARGS,
     "cardinality(ms, confidence) -> (estimate, low, high)"},
    {"clock", (PyCFunction)core_clock, METH_NOARGS, "clock() -> ms, or None"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef core_getset[] = {
    {"timed", (getter)core_timed, NULL, "a time window: keys take their times", NULL},
    {"count_window", (getter)core_count_window, NULL, "a window of the last N keys", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "once._once.Core",
    .tp_basicsize = sizeof(Core),
    .tp_dealloc = (destructor)core_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One filter of libonce (the package's classes wrap it)",
    .tp_methods = core_methods,
    .tp_getset = core_getset,
};

/* ------------------------------------------------------------------ clusters */

/* A cluster filter (once_cluster.h): a filter sliced over a Redis Cluster's keys, shared
 * by every producer that opens it; this process one of them.  It answers test-and-add
 * (a query would race the other producers' writes). */
typedef struct {
    PyObject_HEAD
    once_cluster *cluster; /* NULL once closed */
    once_filter *local;    /* --local-filter's (NULL without) */
    pthread_mutex_t lock;  /* one call at a time: the client's connections are one set */
    bool timed;            /* a time window: keys carry the producers' times */
} Cluster;

static PyTypeObject ClusterType;

static void cluster_dealloc(Cluster *c)
{
    if (c->cluster != NULL) {
        Py_BEGIN_ALLOW_THREADS
        once_cluster_close(c->cluster); /* sends what it owes */
        Py_END_ALLOW_THREADS
    }
    once_free(c->local);
    pthread_mutex_destroy(&c->lock);
    PyObject_Free(c);
}

/* _once.open_cluster(argv): the cluster filter of a command line of `once --cluster`. */
static PyObject *cluster_open(PyObject *module, PyObject *arg)
{
    (void)module;
    command_line line;
    cli_options o;
    Cluster *c = NULL;
    int code = 0;
    if (command_line_parse(arg, &line, &o) != 0) {
        /* the exception is set */
    } else if (o.cluster == NULL || o.input_count != 0 || o.state_path != NULL || o.card) {
        PyErr_SetString(PyExc_ValueError, "a cluster filter takes --cluster and --key, and no "
                                          "inputs or --state");
    } else if ((c = PyObject_New(Cluster, &ClusterType)) != NULL) {
        c->cluster = NULL;
        c->local = NULL;
        pthread_mutex_init(&c->lock, NULL);
        c->timed = o.span_given || o.window_given; /* the shared count is the producers' */
        char why[RECIPE_WHY_MAX];
        uint32_t hold_ms;
        uint64_t bytes;
        Py_BEGIN_ALLOW_THREADS /* it connects */
        code = recipe_cluster_open(&o, NULL, NULL, &c->cluster, &c->local, &hold_ms, &bytes, why,
                                   sizeof why);
        Py_END_ALLOW_THREADS
        if (code != 0) {
            PyErr_SetString(code == EXIT_IO ? PyExc_ConnectionError : PyExc_ValueError, why);
            Py_DECREF(c);
            c = NULL;
        }
    }
    command_line_free(&line);
    return (PyObject *)c;
}

/* add_many(keys, ms) -> bytes, 1 for each key new to the cluster's filter. */
static PyObject *cluster_add_many(Cluster *c, PyObject *const *args, Py_ssize_t nargs)
{
    if (c->cluster == NULL) {
        PyErr_SetString(PyExc_ValueError, "the cluster filter is closed");
        return NULL;
    }
    batch b;
    PyObject *out = batch_start(args, nargs, c->timed, &b);
    if (out == NULL)
        return NULL;
    uint8_t *answers = (uint8_t *)PyBytes_AS_STRING(out);
    once_status st;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&c->lock);
    st = b.count == 0 ? ONCE_OK
                      : once_cluster_test_and_add_batch(c->cluster, b.keys, b.count, answers);
    pthread_mutex_unlock(&c->lock);
    Py_END_ALLOW_THREADS
    for (size_t i = 0; i < b.count; i++)
        answers[i] = answers[i] == 0; /* 1: new (a policy's "distinct" included) */
    batch_free(&b);
    if (st != ONCE_OK) {
        Py_DECREF(out);
        if (st == ONCE_ERR_UNAVAILABLE) {
            PyErr_SetString(PyExc_ConnectionError, once_strerror(st));
            return NULL;
        }
        return raise_status(st);
    }
    return out;
}

/* flush(): send now what the last batches owe (claims, and lines printed while a slice
 * failed); close() does it too. */
static PyObject *cluster_flush(Cluster *c, PyObject *unused)
{
    (void)unused;
    if (c->cluster == NULL)
        Py_RETURN_NONE;
    once_status st;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&c->lock);
    st = once_cluster_flush(c->cluster);
    pthread_mutex_unlock(&c->lock);
    Py_END_ALLOW_THREADS
    if (st != ONCE_OK && st != ONCE_ERR_UNAVAILABLE)
        return raise_status(st);
    Py_RETURN_NONE;
}

static PyObject *cluster_close(Cluster *c, PyObject *unused)
{
    (void)unused;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&c->lock);
    if (c->cluster != NULL)
        once_cluster_close(c->cluster);
    c->cluster = NULL;
    pthread_mutex_unlock(&c->lock);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* stats() -> dict: what the producer knows of the filter and the cluster. */
static PyObject *cluster_stats(Cluster *c, PyObject *unused)
{
    (void)unused;
    if (c->cluster == NULL) {
        PyErr_SetString(PyExc_ValueError, "the cluster filter is closed");
        return NULL;
    }
    once_cluster_stats s;
    pthread_mutex_lock(&c->lock);
    once_status st = once_cluster_get_stats(c->cluster, &s);
    pthread_mutex_unlock(&c->lock);
    if (st != ONCE_OK)
        return raise_status(st);
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    if (put(d, "layout", PyUnicode_FromString(s.layout_id)) ||
        put(d, "nodes", PyLong_FromUnsignedLong(s.nodes)) ||
        put(d, "slices", PyLong_FromUnsignedLong(s.is_tree ? 0 : s.sliced.sites)) ||
        put(d, "events", PyLong_FromUnsignedLongLong(s.is_tree ? s.tree.events
                                                                 : s.sliced.events)) ||
        put(d, "failed_slices", PyLong_FromUnsignedLong(s.failed_slices)) ||
        put(d, "failed_events", PyLong_FromUnsignedLongLong(s.failed_events)) ||
        put(d, "commands", PyLong_FromUnsignedLongLong(s.commands)) ||
        put(d, "owed", PyLong_FromUnsignedLongLong(s.owed)) ||
        put(d, "backfilled", PyLong_FromUnsignedLongLong(s.backfilled)) ||
        put(d, "given_up", PyLong_FromUnsignedLongLong(s.given_up))) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *cluster_timed(Cluster *c, void *unused)
{
    (void)unused;
    return PyBool_FromLong(c->timed);
}

static PyMethodDef cluster_methods[] = {
    {"add_many", (PyCFunction)(void (*)(void))cluster_add_many, METH_FASTCALL,
     "add_many(keys, ms) -> bytes, 1 for each key that was new"},
    {"flush", (PyCFunction)cluster_flush, METH_NOARGS, "flush(): send what is owed"},
    {"close", (PyCFunction)cluster_close, METH_NOARGS, "close(): flush, disconnect"},
    {"stats", (PyCFunction)cluster_stats, METH_NOARGS, "stats() -> dict"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef cluster_getset[] = {
    {"timed", (getter)cluster_timed, NULL, "a window: keys take their times", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ClusterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "once._once.ClusterCore",
    .tp_basicsize = sizeof(Cluster),
    .tp_dealloc = (destructor)cluster_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A filter sliced over a Redis Cluster (the package's ClusterFilter wraps it)",
    .tp_methods = cluster_methods,
    .tp_getset = cluster_getset,
};

static PyMethodDef module_methods[] = {
    {"create", core_create, METH_VARARGS,
     "create(options, max_time_jump) -> Core: the filter `once OPTIONS` builds"},
    {"loads", core_loads, METH_O, "loads(data) -> Core: a saved filter"},
    {"load_file", core_load_file, METH_O,
     "load_file(path) -> Core: the filter saved in a file, read as `once --state` reads it"},
    {"open_cluster", cluster_open, METH_O,
     "open_cluster(options) -> ClusterCore: the filter `once --cluster ... OPTIONS` opens"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "once._once", "The C core of the package once.", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__once(void); /* the interpreter's entry, exported */

PyMODINIT_FUNC PyInit__once(void)
{
    if (PyType_Ready(&CoreType) < 0 || PyType_Ready(&ClusterType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    OnceError = PyErr_NewExceptionWithDoc("once.OnceError", "An error of the once library.",
                                          NULL, NULL);
    FullError = PyErr_NewExceptionWithDoc(
        "once.FullError", "The filter cannot take more keys within its memory cap.", OnceError,
        NULL);
    PyObject *bases = OnceError ? PyTuple_Pack(2, OnceError, PyExc_ValueError) : NULL;
    CorruptStateError = bases ? PyErr_NewExceptionWithDoc(
                                    "once.CorruptStateError",
                                    "Saved bytes that are not a whole, valid filter.", bases, NULL)
                              : NULL;
    TimeRefusedError = bases ? PyErr_NewExceptionWithDoc(
                                   "once.TimeRefusedError",
                                   "An event time the window's clock refuses (past its bound "
                                   "on jumps ahead).",
                                   bases, NULL)
                             : NULL;
    Py_XDECREF(bases);
    if (OnceError == NULL || FullError == NULL || CorruptStateError == NULL ||
        TimeRefusedError == NULL || PyModule_AddObjectRef(m, "OnceError", OnceError) ||
        PyModule_AddObjectRef(m, "FullError", FullError) ||
        PyModule_AddObjectRef(m, "CorruptStateError", CorruptStateError) ||
        PyModule_AddObjectRef(m, "TimeRefusedError", TimeRefusedError) ||
        PyModule_AddObjectRef(m, "Core", (PyObject *)&CoreType) ||
        PyModule_AddObjectRef(m, "ClusterCore", (PyObject *)&ClusterType) ||
        PyModule_AddStringConstant(m, "library_version", ONCE_VERSION_STRING)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
