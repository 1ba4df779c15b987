/* SPDX-License-Identifier: MIT */
/* Layer 6.0: what auto learned of the drivers, as text that outlives the process. */
#include "cw/learned.h"
#include "base.h"
#include "driver.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* A key: "cw VERSION", the platform's name, its version and its devices'
 * names, tab-separated. Longer names are cut, which can only make two
 * platforms share a line: a hint off, never a wrong wait. */
#define KEY_MAX 512u
#define DEVICES_MAX 16u
/* The longest line: the key, a tab, the values (eighteen numbers of at
 * most 20 digits and their names), the line end. */
#define LINE_MAX (KEY_MAX + 480u)

/* The keys of the platforms named so far, by platform handle (which lives
 * as long as the process). Naming asks OpenCL, so it happens at an import
 * or an export, never in a wait; the lock is for these calls alone. */
static struct {
    cl_platform_id platform;
    char key[KEY_MAX];
} named[CW__DRIVER_SLOTS];
static pthread_mutex_t named_lock = PTHREAD_MUTEX_INITIALIZER;

/* Append `s` to the key at *at, anything not printable ASCII (a tab, a
 * line end) made a space, so that no name can forge a field or a line. */
static void put(char *k, size_t *at, const char *s) {
    for (; *s && *at + 1 < KEY_MAX; ++s)
        k[(*at)++] = (*s >= 0x20 && *s < 0x7f) ? *s : ' ';
    k[*at] = '\0';
}

static void put_tab(char *k, size_t *at) {
    if (*at + 1 < KEY_MAX)
        k[(*at)++] = '\t';
    k[*at] = '\0';
}

static void put_platform_info(char *k, size_t *at, cl_platform_id p, cl_platform_info what) {
    char s[256];
    if (clGetPlatformInfo(p, what, sizeof s, s, NULL) != CL_SUCCESS)
        s[0] = '\0';
    s[sizeof s - 1] = '\0';
    put(k, at, s);
}

/* The key of platform p, under named_lock; NULL when every entry is
 * taken (more platforms than cw keeps records of). */
static const char *key_of(cl_platform_id p) {
    unsigned i = 0;
    for (; i < CW__DRIVER_SLOTS && named[i].platform; ++i)
        if (named[i].platform == p)
            return named[i].key;
    if (i == CW__DRIVER_SLOTS)
        return NULL;
    char *k = named[i].key;
    size_t at = 0;
    put(k, &at, "cw ");
    put(k, &at, cw_version_string());
    put_tab(k, &at);
    put_platform_info(k, &at, p, CL_PLATFORM_NAME);
    put_tab(k, &at);
    put_platform_info(k, &at, p, CL_PLATFORM_VERSION);
    put_tab(k, &at);
    cl_device_id devs[DEVICES_MAX];
    cl_uint n = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, DEVICES_MAX, devs, &n) != CL_SUCCESS)
        n = 0;
    for (cl_uint j = 0; j < n && j < DEVICES_MAX; ++j) {
        char name[256];
        if (clGetDeviceInfo(devs[j], CL_DEVICE_NAME, sizeof name, name, NULL) != CL_SUCCESS)
            name[0] = '\0';
        name[sizeof name - 1] = '\0';
        if (j)
            put(k, &at, ", ");
        put(k, &at, name);
    }
    named[i].platform = p;
    return k;
}

/* The values of one line: "lateness=NS own=TRIALS/ASLEEP
 * long=TICKETS/DRIVER_N/DRIVER_CPU_NS/CB_N/CB_CPU_NS short=..."
 * ("own": the driver-wait vote; "long": the near class of the waits auto
 * parks for, short the other, alike; the keys are those files written by
 * cw 1.1 have, so that they still seed), "-" for a part not known. */
static void format_long(char *out, size_t size, const cw__class_learned *l) {
    if (!l->known)
        snprintf(out, size, "-");
    else
        snprintf(out, size, "%" PRIu32 "/%" PRIu32 "/%" PRIu64 "/%" PRIu32 "/%" PRIu64, l->tickets,
                 l->driver_n, l->driver_cpu_ns, l->cb_n, l->cb_cpu_ns);
}

/* The line names each class: near `long=`, short `short=`, in the order
 * of their indices. */
_Static_assert(CW__CLASSES == 2 && CW__CLASS_NEAR == 0 && CW__CLASS_SHORT == 1,
               "a learned line has a long= and a short= part, in this order");

/* Whether a platform learned anything a line would carry. */
static bool learned_any(const cw__driver_learned *l) {
    bool any = l->lateness_known || l->vote_known;
    for (unsigned c = 0; c < CW__CLASSES; ++c)
        any = any || l->cls[c].known;
    return any;
}

static int format_values(char *out, size_t size, const cw__driver_learned *l) {
    char late[32] = "-", vote[48] = "-", cls[CW__CLASSES][120];
    if (l->lateness_known)
        snprintf(late, sizeof late, "%" PRIu64, l->lateness_ns);
    if (l->vote_known)
        snprintf(vote, sizeof vote, "%" PRIu32 "/%" PRIu32, l->vote_trials, l->vote_asleep);
    for (unsigned c = 0; c < CW__CLASSES; ++c)
        format_long(cls[c], sizeof cls[c], &l->cls[c]);
    return snprintf(out, size, "lateness=%s own=%s long=%s short=%s", late, vote,
                    cls[CW__CLASS_NEAR], cls[CW__CLASS_SHORT]);
}

/* One class's long-wait part, "-" or its five numbers; false when
 * malformed. Counts and sums are bounded (2^16, 2^40 ns: 18 minutes of
 * thread CPU time, past any trials') so that the driver's cross products
 * of a sum, a count and its edge stay under 2^64. */
static bool parse_long(const char *s, cw__class_learned *l) {
    if (!strcmp(s, "-"))
        return true;
    int n = 0;
    if (sscanf(s, "%" SCNu32 "/%" SCNu32 "/%" SCNu64 "/%" SCNu32 "/%" SCNu64 "%n", &l->tickets,
               &l->driver_n, &l->driver_cpu_ns, &l->cb_n, &l->cb_cpu_ns, &n) != 5 ||
        s[n] || l->tickets > (1u << 16) || l->driver_n > (1u << 16) || l->cb_n > (1u << 16) ||
        l->driver_cpu_ns > (1ull << 40) || l->cb_cpu_ns > (1ull << 40))
        return false;
    l->known = true;
    return true;
}

/* Parse the values of a line (the text after the key's tab, to the line's
 * end); false when they are malformed. A `far=` part after `long=` (a class
 * of waits from CW__CLASS_NEAR_END_NS that cw 1.1 wrote and auto no longer
 * has) must be well formed and is read past. The short part may be left
 * off (a line written by a cw without it): that class is unknown then. */
static bool parse_values(const char *s, cw__driver_learned *l) {
    *l = (cw__driver_learned){0};
    char late[32], vote[48], cls[CW__CLASSES][120], far[120];
    strcpy(cls[CW__CLASS_SHORT], "-");
    int used = 0, part_used = 0;
    if (sscanf(s, "lateness=%31[-0-9] own=%47[-/0-9] long=%119[-/0-9]%n", late, vote,
               cls[CW__CLASS_NEAR], &used) != 3)
        return false;
    cw__class_learned ignored;
    if (s[used] == ' ' && sscanf(s + used, " far=%119[-/0-9]%n", far, &part_used) == 1) {
        if (!parse_long(far, &ignored))
            return false;
        used += part_used;
    }
    if (s[used] == ' ' &&
        sscanf(s + used, " short=%119[-/0-9]%n", cls[CW__CLASS_SHORT], &part_used) == 1)
        used += part_used;
    if (s[used] != '\0' && s[used] != '\n')
        return false;
    int n = 0;
    if (strcmp(late, "-")) {
        if (sscanf(late, "%" SCNu64 "%n", &l->lateness_ns, &n) != 1 || late[n])
            return false;
        l->lateness_known = true;
    }
    if (strcmp(vote, "-")) {
        if (sscanf(vote, "%" SCNu32 "/%" SCNu32 "%n", &l->vote_trials, &l->vote_asleep, &n) != 2 ||
            vote[n] || l->vote_asleep > l->vote_trials || l->vote_trials > 1000000u)
            return false;
        l->vote_known = true;
    }
    bool any_long = false;
    for (unsigned c = 0; c < CW__CLASSES; ++c) {
        if (!parse_long(cls[c], &l->cls[c]))
            return false;
        any_long = any_long || l->cls[c].known;
    }
    return l->lateness_known || l->vote_known || any_long;
}

int cw_learned_export(char *buf, size_t size, size_t *needed) {
    if (!buf && size)
        return CW_ERR_INVALID_ARGUMENT;
    size_t total = 0, kept = 0;
    pthread_mutex_lock(&named_lock);
    for (unsigned i = 0; i < CW__DRIVER_SLOTS; ++i) {
        cw__driver *d;
        cl_platform_id p = cw__driver_slot(i, &d);
        if (!p)
            continue;
        cw__driver_learned l;
        cw__driver_learned_get(d, &l);
        if (!learned_any(&l))
            continue;
        const char *key = key_of(p);
        if (!key)
            continue;
        char line[LINE_MAX];
        int len = snprintf(line, sizeof line, "%s\t", key);
        len += format_values(line + len, sizeof line - (size_t)len, &l);
        len += snprintf(line + len, sizeof line - (size_t)len, "\n");
        total += (size_t)len;
        /* Whole lines only, and only while every line before fit. */
        if (kept == total - (size_t)len && total < size) {
            memcpy(buf + kept, line, (size_t)len);
            kept = total;
        }
    }
    pthread_mutex_unlock(&named_lock);
    if (size)
        buf[kept] = '\0';
    if (needed)
        *needed = total;
    return CW_OK;
}

int cw_learned_import(const char *text, unsigned *seeded) {
    if (seeded)
        *seeded = 0;
    if (!text)
        return CW_ERR_INVALID_ARGUMENT;
    cl_platform_id ps[CW__DRIVER_SLOTS];
    cl_uint np = 0;
    if (clGetPlatformIDs(CW__DRIVER_SLOTS, ps, &np) != CL_SUCCESS)
        np = 0;
    if (np > CW__DRIVER_SLOTS)
        np = CW__DRIVER_SLOTS;
    unsigned count = 0;
    pthread_mutex_lock(&named_lock);
    const char *keys[CW__DRIVER_SLOTS];
    for (cl_uint j = 0; j < np; ++j)
        keys[j] = key_of(ps[j]);
    bool done[CW__DRIVER_SLOTS] = {false};
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        for (cl_uint j = 0; j < np; ++j) {
            size_t klen = keys[j] ? strlen(keys[j]) : 0;
            cw__driver_learned l;
            /* The first line for a platform counts; a platform is seeded
             * once. */
            if (!keys[j] || done[j] || len <= klen || strncmp(line, keys[j], klen) ||
                line[klen] != '\t')
                continue;
            char values[LINE_MAX];
            size_t vlen = len - klen - 1;
            if (vlen >= sizeof values)
                break;
            memcpy(values, line + klen + 1, vlen);
            values[vlen] = '\0';
            if (!parse_values(values, &l))
                break;
            done[j] = true;
            if (cw__driver_seed(cw__driver_of_platform(ps[j]), &l))
                ++count;
            break;
        }
        line += len + (end ? 1 : 0);
    }
    pthread_mutex_unlock(&named_lock);
    if (seeded)
        *seeded = count;
    return CW_OK;
}
