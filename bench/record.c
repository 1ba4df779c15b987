/* SPDX-License-Identifier: MIT */
/*
 * cw-bench: the record protocol between a child and its parent, both sides.
 *
 * A child writes one record a line on the pipe it was given, fields separated
 * by tabs, the first field the record's type:
 *   H key value                   a header field (platform and device)
 *   N text                        a note for the reader of the results
 *   E text                        an error
 *   K kernel param                a kernel about to run, with its parameters
 *   C index iters target measured reached
 *                                 a busy size's calibration (reached: 0 or 1)
 *   F trips mean median p90 p99 max sd
 *                                 the config's floor, one-way, in us
 *   R kernel strategy launches ok mismatches {cpu,wall,kernel,overhead,
 *     wait_cpu,wait_wall} x {mean,median,p90,p99,max,sd}: one strategy's summary in a cell
 *   S kernel strategy counters... --stats: cw_stats and cw_stats_auto
 *                                 differences, after its R
 *   A learned...                  --stats: what cw learned of the platform
 *                                 (cw_stats_auto), at the end of the config
 *   V kernel goal strategy what verdict pairs rounds ncond {est,lo,hi} x 2
 *                                 a goal's check in a cell (verdict.c), after its R
 *   P kernel launches elapsed_s stopped_by profiling_ok
 *                                 a cell finished (the parent's progress line)
 * Text fields lose their tabs and newlines on the way.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Writes "\t" and s with its tabs and line breaks turned into spaces. */
static void field(FILE *f, const char *s) {
    fputc('\t', f);
    for (; *s; ++s)
        fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

/* Every record is flushed at once: the parent reports progress as records
 * arrive, and a child that dies must not lose the records before it. */
static void end(FILE *f) {
    fputc('\n', f);
    fflush(f);
}

void proto_header(FILE *f, const char *key, const char *value) {
    fputc('H', f);
    field(f, key);
    field(f, value);
    end(f);
}

void proto_note(FILE *f, const char *text) {
    fputc('N', f);
    field(f, text);
    end(f);
}

void proto_error(FILE *f, const char *text) {
    fputc('E', f);
    field(f, text);
    end(f);
}

void proto_kernel(FILE *f, const char *kernel, const char *param) {
    fputc('K', f);
    field(f, kernel);
    field(f, param);
    end(f);
}

void proto_calibration(FILE *f, int index, unsigned iters, double target_us, double measured_us,
                       bool reached) {
    fprintf(f, "C\t%d\t%u\t%.1f\t%.2f\t%d", index, iters, target_us, measured_us, reached);
    end(f);
}

void proto_floor(FILE *f, unsigned trips, const double st[S_COUNT]) {
    fprintf(f, "F\t%u", trips);
    for (int q = 0; q < S_COUNT; ++q)
        fprintf(f, "\t%.4f", st[q]);
    end(f);
}

void proto_result(FILE *f, const char *kernel, const char *strategy, unsigned launches, bool ok,
                  size_t mismatches, const double st[M_COUNT][S_COUNT]) {
    fputc('R', f);
    field(f, kernel);
    field(f, strategy);
    fprintf(f, "\t%u\t%d\t%zu", launches, ok, mismatches);
    for (int m = 0; m < M_COUNT; ++m)
        for (int q = 0; q < S_COUNT; ++q)
            fprintf(f, "\t%.4f", st[m][q]);
    end(f);
}

void proto_stats(FILE *f, const char *kernel, const char *strategy, const uint64_t v[NSTATS]) {
    fputc('S', f);
    field(f, kernel);
    field(f, strategy);
    for (int q = 0; q < NSTATS; ++q)
        fprintf(f, "\t%llu", (unsigned long long)v[q]);
    end(f);
}

void proto_learned(FILE *f, const uint64_t v[NLEARNED]) {
    fputc('A', f);
    for (int q = 0; q < NLEARNED; ++q)
        fprintf(f, "\t%llu", (unsigned long long)v[q]);
    end(f);
}

void proto_check(FILE *f, const char *kernel, int rounds, const vcheck *ck) {
    fputc('V', f);
    field(f, kernel);
    fprintf(f, "\t%c", ck->goal);
    field(f, strategy_name(ck->strat));
    field(f, ck->what);
    field(f, verdict_names[ck->v]);
    fprintf(f, "\t%d\t%d\t%d", ck->pairs, rounds, ck->ncond);
    for (int k = 0; k < 2; ++k)
        fprintf(f, "\t%.6g\t%.6g\t%.6g\t%.6g", k < ck->ncond ? ck->est[k] : NAN,
                k < ck->ncond ? ck->lo[k] : NAN, k < ck->ncond ? ck->hi[k] : NAN,
                k < ck->ncond ? ck->res[k] : NAN);
    fprintf(f, "\t%d\t%.6g\t%.6g", (int)ck->lean, ck->to_decide_pairs, ck->to_decide_s);
    end(f);
}

void proto_cell(FILE *f, const char *kernel, unsigned launches, double elapsed_s,
                const char *stopped_by, bool profiling_ok) {
    fputc('P', f);
    field(f, kernel);
    fprintf(f, "\t%u\t%.3f", launches, elapsed_s);
    field(f, stopped_by);
    fprintf(f, "\t%d", profiling_ok);
    end(f);
}

/* --- reader --- */

static int split_tabs(char *line, char **f, int max) {
    int n = 0;
    char *p = line;
    while (n < max) {
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t)
            break;
        *t = '\0';
        p = t + 1;
    }
    return n;
}

static record *add_record(results *r) {
    if (r->nrec == r->caprec) {
        r->caprec = r->caprec ? 2 * r->caprec : 64;
        r->rec = realloc(r->rec, sizeof *r->rec * (size_t)r->caprec);
        if (!r->rec)
            die("out of memory");
    }
    record *p = &r->rec[r->nrec++];
    memset(p, 0, sizeof *p);
    return p;
}

static void read_result(char **f, int cfg, results *r) {
    record *p = add_record(r);
    snprintf(p->kernel, sizeof p->kernel, "%s", f[1]);
    snprintf(p->strategy, sizeof p->strategy, "%s", f[2]);
    p->cfg = cfg;
    p->launches = (unsigned)strtoul(f[3], NULL, 10);
    p->ok = atoi(f[4]) != 0;
    p->mismatches = (size_t)strtoull(f[5], NULL, 10);
    for (int m = 0; m < M_COUNT; ++m)
        for (int q = 0; q < S_COUNT; ++q)
            p->st[m][q] = atof(f[6 + m * S_COUNT + q]);
}

static void read_stats(char **f, int cfg, results *r) {
    for (int i = r->nrec - 1; i >= 0; --i) {
        record *p = &r->rec[i];
        if (p->cfg == cfg && !strcmp(p->kernel, f[1]) && !strcmp(p->strategy, f[2])) {
            p->has_stats = true;
            for (int q = 0; q < NSTATS; ++q)
                p->stats[q] = strtoull(f[3 + q], NULL, 10);
            return;
        }
    }
}

static void read_header(char **f, results *r) {
    for (int i = 0; i < r->nheader; ++i)
        if (!strcmp(r->header[i][0], f[1]))
            return;
    if (r->nheader < 8) {
        snprintf(r->header[r->nheader][0], 256, "%s", f[1]);
        snprintf(r->header[r->nheader][1], 256, "%s", f[2]);
        r->nheader++;
    }
}

static void read_note(char **f, results *r) {
    for (int i = 0; i < r->nnotes; ++i)
        if (!strcmp(r->notes[i], f[1]))
            return;
    if (r->nnotes < 8)
        snprintf(r->notes[r->nnotes++], 512, "%s", f[1]);
}

static void read_kernel(char **f, results *r) {
    for (int i = 0; i < r->nkparam; ++i)
        if (!strcmp(r->kparam[i][0], f[1]))
            return;
    if (r->nkparam < MAX_KERNELS) {
        snprintf(r->kparam[r->nkparam][0], 64, "%s", f[1]);
        snprintf(r->kparam[r->nkparam][1], 64, "%s", f[2]);
        r->nkparam++;
    }
}

static void read_calibration(char **f, calibration *cal) {
    int b = atoi(f[1]);
    if (b < 0 || b >= MAX_BUSY)
        return;
    cal->have[b] = true;
    cal->iters[b] = (unsigned)strtoul(f[2], NULL, 10);
    cal->target_us[b] = atof(f[3]);
    cal->measured_us[b] = atof(f[4]);
    cal->reached[b] = atoi(f[5]) != 0;
}

static void read_cell(char **f, int cfg, results *r) {
    if (r->ncells == MAX_CELLS)
        return;
    cell *c = &r->cells[r->ncells++];
    snprintf(c->kernel, sizeof c->kernel, "%s", f[1]);
    c->cfg = cfg;
    c->launches = (unsigned)strtoul(f[2], NULL, 10);
    c->elapsed_s = atof(f[3]);
    snprintf(c->stopped_by, sizeof c->stopped_by, "%s", f[4]);
    c->profiling_ok = atoi(f[5]) != 0;
}

static void read_check(char **f, int cfg, results *r) {
    if (r->nchecks == r->capchecks) {
        r->capchecks = r->capchecks ? 2 * r->capchecks : 256;
        r->checks = realloc(r->checks, sizeof *r->checks * (size_t)r->capchecks);
        if (!r->checks)
            die("out of memory");
    }
    check_rec *c = &r->checks[r->nchecks++];
    memset(c, 0, sizeof *c);
    snprintf(c->kernel, sizeof c->kernel, "%s", f[1]);
    c->cfg = cfg;
    c->goal = f[2][0];
    snprintf(c->strategy, sizeof c->strategy, "%s", f[3]);
    snprintf(c->what, sizeof c->what, "%s", f[4]);
    c->v = V_UNDECIDED;
    for (int v = 0; v < 3; ++v)
        if (!strcmp(f[5], verdict_names[v]))
            c->v = (verdict)v;
    c->pairs = atoi(f[6]);
    c->rounds = atoi(f[7]);
    c->ncond = atoi(f[8]);
    for (int k = 0; k < 2; ++k) {
        c->est[k] = atof(f[9 + 4 * k]);
        c->lo[k] = atof(f[10 + 4 * k]);
        c->hi[k] = atof(f[11 + 4 * k]);
        c->res[k] = atof(f[12 + 4 * k]);
    }
    int lean = atoi(f[17]);
    c->lean = lean >= 0 && lean < 3 ? lean : V_UNDECIDED;
    c->to_decide_pairs = atof(f[18]);
    c->to_decide_s = atof(f[19]);
}

static void read_floor(char **f, int cfg, results *r) {
    if (cfg < 0 || cfg >= MAX_CONFIGS)
        return;
    floor_result *fl = &r->floors[cfg];
    fl->have = true;
    fl->trips = (unsigned)strtoul(f[1], NULL, 10);
    for (int q = 0; q < S_COUNT; ++q)
        fl->st[q] = atof(f[2 + q]);
}

char proto_read(char *line, int cfg, results *r, calibration *cal) {
    size_t len = strlen(line);
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = '\0';
    char *f[8 + M_COUNT * S_COUNT + NSTATS];
    int n = split_tabs(line, f, (int)(sizeof f / sizeof f[0]));
    char type = strlen(f[0]) == 1 ? f[0][0] : 0;
    switch (type) {
    case 'H':
        if (n != 3)
            return 0;
        read_header(f, r);
        break;
    case 'N':
        if (n != 2)
            return 0;
        read_note(f, r);
        break;
    case 'E':
        if (n != 2)
            return 0;
        if (r->nerr < 32)
            snprintf(r->errors[r->nerr++], 512, "%s", f[1]);
        break;
    case 'K':
        if (n != 3)
            return 0;
        read_kernel(f, r);
        break;
    case 'C':
        if (n != 6 || !cal)
            return 0;
        read_calibration(f, cal);
        break;
    case 'F':
        if (n != 2 + S_COUNT)
            return 0;
        read_floor(f, cfg, r);
        break;
    case 'R':
        if (n != 6 + M_COUNT * S_COUNT)
            return 0;
        read_result(f, cfg, r);
        break;
    case 'S':
        if (n != 3 + NSTATS)
            return 0;
        read_stats(f, cfg, r);
        break;
    case 'A':
        if (n != 1 + NLEARNED || cfg < 0 || cfg >= MAX_CONFIGS)
            return 0;
        r->have_learned[cfg] = true;
        for (int q = 0; q < NLEARNED; ++q)
            r->learned[cfg][q] = strtoull(f[1 + q], NULL, 10);
        break;
    case 'V':
        if (n != 20)
            return 0;
        read_check(f, cfg, r);
        break;
    case 'P':
        if (n != 6)
            return 0;
        read_cell(f, cfg, r);
        break;
    default:
        return 0;
    }
    return type;
}
