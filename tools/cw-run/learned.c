/* SPDX-License-Identifier: MIT */
/* What auto learned, kept across runs in a file (learned.h). */
#include "learned.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cw.h"
#include "preload.h"

/*
 * The file: one line a platform, "SECONDS\tLINE", LINE as
 * cw_learned_export writes it and SECONDS the time a line for that
 * platform was first written. A process that seeded from it writes its
 * values back (the seeded decisions and what it learned besides) under the
 * same time, so a line is trusted for a day from when it was first
 * learned, then dropped and learned afresh: a machine's load, a driver's
 * settings or a kernel can change what is cheapest, and a decision never
 * made again would never be corrected.
 */
#define MAX_AGE_S 86400
#define FILE_MAX (64u * 1024u)
#define LINES_MAX 64

static pthread_once_t begun = PTHREAD_ONCE_INIT;
static atomic_bool began;
static unsigned seeded;

/* The file's lines, read whole (at most FILE_MAX bytes); NULL when there
 * is none. The caller frees it. */
static char *read_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = malloc(FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, FILE_MAX, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* Split `text` into its lines in place (no line ends left); at most
 * LINES_MAX. */
static int split_lines(char *text, char **lines) {
    int n = 0;
    for (char *s = text; s && *s && n < LINES_MAX;) {
        char *end = strchr(s, '\n');
        if (end)
            *end = '\0';
        if (*s)
            lines[n++] = s;
        s = end ? end + 1 : NULL;
    }
    return n;
}

/* The LINE of a file line still young enough to trust; NULL otherwise. */
static const char *trusted(const char *file_line, time_t now) {
    char *end;
    errno = 0;
    long long t = strtoll(file_line, &end, 10);
    if (errno || end == file_line || *end != '\t' || t > (long long)now + 60 ||
        (long long)now - t >= MAX_AGE_S)
        return NULL;
    return end + 1;
}

/* The length of LINE's key: through its fourth tab (cw/learned.h). */
static size_t key_len(const char *line) {
    const char *s = line;
    for (int i = 0; i < 4; ++i) {
        s = strchr(s, '\t');
        if (!s)
            return 0;
        ++s;
    }
    return (size_t)(s - line);
}

/* Import the file's trusted lines; with no file, or none trusted, an
 * empty text, which still names the platforms now, while the program
 * runs, so that the exit handler makes no OpenCL call (cw_learned_export
 * only reads what is named). */
static void begin(void) {
    char *file = read_file(cwp_cfg.learned_file);
    char *text = calloc(1, FILE_MAX + 1);
    if (file && text) {
        char *lines[LINES_MAX];
        int n = split_lines(file, lines);
        time_t now = time(NULL);
        size_t at = 0;
        for (int i = 0; i < n; ++i) {
            const char *line = trusted(lines[i], now);
            size_t len = line ? strlen(line) : 0;
            if (line && at + len + 1 <= FILE_MAX) {
                memcpy(text + at, line, len);
                at += len;
                text[at++] = '\n';
            }
        }
    }
    ++cwp_inside_cw; /* the platform queries are cw's own calls */
    cw_learned_import(text ? text : "", &seeded);
    --cwp_inside_cw;
    free(text);
    free(file);
    atomic_store_explicit(&began, true, memory_order_release);
}

void cwp_learned_begin(void) {
    if (cwp_cfg.learned_file)
        pthread_once(&begun, begin);
}

unsigned cwp_learned_seeded(void) {
    return atomic_load_explicit(&began, memory_order_acquire) ? seeded : 0;
}

/* mkdir -p of the file's directory, each new part private to the user
 * (a cache, as $XDG_CACHE_HOME's own parts are). */
static void make_dirs(const char *path) {
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return;
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return;
    *slash = '\0';
    for (char *s = dir + 1; *s; ++s) {
        if (*s != '/')
            continue;
        *s = '\0';
        mkdir(dir, 0700);
        *s = '/';
    }
    mkdir(dir, 0700);
}

/* Write `lines` (file lines) to the file through a temporary one renamed
 * over it, so that a reader never sees half a file; another process's
 * write at the same time may win, and its lines then stand. The temporary
 * file is made new (O_EXCL, which follows no link that stands in its
 * place) and readable by the user alone. */
static void write_file(const char *path, char **lines, int n) {
    make_dirs(path);
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof tmp)
        return;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        return;
    }
    bool ok = true;
    for (int i = 0; i < n; ++i)
        ok = fprintf(f, "%s\n", lines[i]) >= 0 && ok;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
}

void cwp_learned_end(void) {
    if (!atomic_load_explicit(&began, memory_order_acquire))
        return;
    /* Even a process that learned nothing drops the lines too old to
     * trust. */
    size_t needed = 0;
    cw_learned_export(NULL, 0, &needed);
    if (needed > FILE_MAX)
        return;
    char *mine = malloc(needed + 1);
    /* The file as it is now (another process may have written it since
     * this one began). */
    char *file = mine ? read_file(cwp_cfg.learned_file) : NULL;
    static char made[LINES_MAX][FILE_MAX / LINES_MAX];
    if (!mine)
        return;
    cw_learned_export(mine, needed + 1, NULL);
    char *lines[LINES_MAX], *exported[LINES_MAX], *out[LINES_MAX];
    int n = file ? split_lines(file, lines) : 0;
    int ne = split_lines(mine, exported);
    time_t now = time(NULL);
    int nout = 0, nmade = 0;
    bool changed = false;
    for (int i = 0; i < n; ++i) {
        const char *line = trusted(lines[i], now);
        if (!line) {
            changed = true; /* too old, or not a line of this file */
            continue;
        }
        /* A platform this process exported: its values now, with the time
         * the line was first written (the rule of a day, above). */
        size_t k = key_len(line);
        int at = -1;
        for (int j = 0; k && at < 0 && j < ne; ++j)
            if (exported[j] && key_len(exported[j]) == k && !strncmp(exported[j], line, k))
                at = j;
        if (at < 0 || !strcmp(exported[at], line)) {
            if (at >= 0)
                exported[at] = NULL;
            out[nout++] = lines[i];
            continue;
        }
        int len = snprintf(made[nmade], sizeof made[nmade], "%.*s%s", (int)(line - lines[i]),
                           lines[i], exported[at]);
        exported[at] = NULL;
        if (len > 0 && (size_t)len < sizeof made[nmade]) {
            out[nout++] = made[nmade++];
            changed = true;
        }
    }
    for (int j = 0; j < ne && nout < LINES_MAX; ++j) {
        if (!exported[j])
            continue;
        int len =
            snprintf(made[nmade], sizeof made[nmade], "%lld\t%s", (long long)now, exported[j]);
        if (len > 0 && (size_t)len < sizeof made[nmade]) {
            out[nout++] = made[nmade++];
            changed = true;
        }
    }
    if (changed)
        write_file(cwp_cfg.learned_file, out, nout);
    free(file);
    free(mine);
}
