/* SPDX-License-Identifier: MIT */
/* cw-bench: the results as JSON (header + records) and as CSV (one row a record). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "bench.h"

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Ten significant digits, not a fixed count of decimals: CPU per second
 * waited is a fraction of a second (its goal's margin 0.0005), and its
 * differences would print as 0. */
static void json_number(FILE *f, double v) {
    if (isfinite(v))
        fprintf(f, "%.10g", v);
    else
        fputs("null", f);
}

/* ", \"key\": " then the string or number. */
static void jstr(FILE *f, const char *key, const char *v) {
    fprintf(f, ", \"%s\": ", key);
    json_string(f, v);
}

static void jnum(FILE *f, const char *key, double v) {
    fprintf(f, ", \"%s\": ", key);
    json_number(f, v);
}

static const char *header_value(const results *r, const char *key) {
    for (int i = 0; i < r->nheader; ++i)
        if (!strcmp(r->header[i][0], key))
            return r->header[i][1];
    return "";
}

static void json_list(FILE *f, const char *key, const char (*items)[512], int n) {
    fprintf(f, ",\n    \"%s\": [", key);
    for (int i = 0; i < n; ++i) {
        fputs(i ? ", " : "", f);
        json_string(f, items[i]);
    }
    fputc(']', f);
}

static void json_header(FILE *f, const options *o, const run_info *ri, const results *r,
                        const config *cfgs, int ncfg) {
    fputs("  \"header\": {\n    \"cw_version\": ", f);
    json_string(f, ri->cw_version);
    jstr(f, "git_commit", ri->git_commit);
    jstr(f, "compiler", ri->compiler);
    for (int i = 0; i < r->nheader; ++i)
        jstr(f, r->header[i][0], r->header[i][1]);
    fputs(",\n    \"host\": {\"uname\": ", f);
    json_string(f, ri->host);
    fprintf(f, ", \"nproc\": %ld, \"allowed_cpus\": %d}", ri->nproc_online, ri->nallowed);
    jstr(f, "date", ri->date);
    jstr(f, "command", ri->command);
    fprintf(f,
            ",\n    \"elapsed_s\": %.1f, \"launches\": %u, \"min_time_s\": %g, "
            "\"max_time_s\": %g, \"block\": %u, \"warmup\": %u, \"quick\": %s, "
            "\"saxpy_n\": %lu, \"busy_global\": %lu, \"floor_trips\": %u, \"long_time_s\": %g, "
            "\"long_us\": %g",
            ri->elapsed_s, o->launches, o->min_time, o->max_time, o->block, o->warmup,
            o->quick ? "true" : "false", o->saxpy_n, o->busy_global, o->floor_trips, o->long_time,
            LONG_US);
    fputs(",\n    \"busy_calibration\": [", f);
    for (int b = 0; b < o->nbusy; ++b) {
        char name[32];
        busy_name(o->busy_us[b], o->busy_iters[b], name, sizeof name);
        bool have = ri->calibrated && ri->cal.have[b];
        fprintf(f, "%s{\"kernel\": \"%s\", \"iters\": %u", b ? ", " : "", name, o->busy_iters[b]);
        jnum(f, "target_us", o->busy_us[b] > 0 ? o->busy_us[b] : NAN);
        jnum(f, "measured_us_one_worker", have ? ri->cal.measured_us[b] : NAN);
        fprintf(f, ", \"calibrated\": %s, \"reached\": %s}", have ? "true" : "false",
                !have                ? "null"
                : ri->cal.reached[b] ? "true"
                                     : "false");
    }
    fputs("],\n    \"strategies\": [", f);
    cw_strategy strat[NSTRAT];
    int ns = selected_strategies(o, strat);
    for (int j = 0; j < ns; ++j)
        fprintf(f, "%s\"%s\"", j ? ", " : "", strategy_name(strat[j]));
    fputs("],\n    \"driver_models\": [", f);
    for (int m = 0; m < o->nmodels; ++m) {
        driver_model dm;
        model_info(o->models[m], &dm);
        fprintf(f, "%s{\"name\": ", m ? ", " : "");
        json_string(f, dm.spec);
        jstr(f, "preset", dm.preset);
        fprintf(f, ", \"layer\": %s}", dm.layer ? "true" : "false");
    }
    fputs("],\n    \"driver_model_layer\": ", f);
    if (ri->layer)
        json_string(f, ri->layer);
    else
        fputs("null", f);
    fputs(",\n    \"configs\": [", f);
    /* The CPU configurations, once each: every model ran all of them. */
    for (int c = 0; c < ncfg && cfgs[c].model_index == 0; ++c) {
        fprintf(f, "%s{\"config\": ", c ? ", " : "");
        json_string(f, cfgs[c].spec);
        fprintf(f, ", \"cpus\": %d, \"workers\": %d", cfgs[c].ncpus, cfgs[c].ncpus);
        jstr(f, "cpu_list", cfgs[c].cpu_list);
        fputc('}', f);
    }
    kernel_spec ks[MAX_KERNELS];
    int nk = build_kernels(o, ks);
    fputs("],\n    \"kernels\": [", f);
    for (int i = 0; i < nk; ++i)
        fprintf(f, "%s\"%s\"", i ? ", " : "", ks[i].name);
    fputs("],\n    \"kernel_launches\": {", f);
    for (int i = 0; i < nk; ++i)
        fprintf(f, "%s\"%s\": {\"launches\": %u, \"warmup\": %u, \"block\": %u, \"long\": %s}",
                i ? ", " : "", ks[i].name, ks[i].launches, ks[i].warmup, ks[i].block,
                ks[i].is_long ? "true" : "false");
    fputc('}', f);
    json_list(f, "notes", r->notes, r->nnotes);
    json_list(f, "errors", r->errors, r->nerr);
    fputs(",\n    \"units\": \"microseconds per launch (wakeups_*: voluntary context switches "
          "of the launching thread per launch); added_latency: the wait's return - the command's "
          "end (event profiling); ratios against blocking in the same (kernel, config); floor: "
          "one-way futex wake-to-run latency; checks: each goal check's median paired "
          "difference per round and its 95% interval (the sign test's), PASS wholly <= 0, MISS "
          "wholly > 0\"\n  },\n",
          f);
}

static void json_floor(FILE *f, const results *r, const config *cfgs, int ncfg) {
    fputs("  \"floor\": [", f);
    for (int c = 0; c < ncfg; ++c) {
        const floor_result *fl = &r->floors[c];
        fprintf(f, "%s\n    {\"driver_model\": ", c ? "," : "");
        json_string(f, cfgs[c].model.spec);
        fputs(", \"config\": ", f);
        json_string(f, cfgs[c].spec);
        fprintf(f, ", \"cpus\": %d", cfgs[c].ncpus);
        jstr(f, "cpu_list", cfgs[c].cpu_list);
        fprintf(f, ", \"trips\": %u", fl->have ? fl->trips : 0);
        for (int q = 0; q < S_COUNT; ++q) {
            char key[32];
            snprintf(key, sizeof key, "one_way_us_%s", stat_names[q]);
            jnum(f, key, fl->have ? fl->st[q] : NAN);
        }
        bool from_wall = false;
        double over = coop_latency_overhead(r, c, &from_wall);
        jnum(f, "cooperative_latency_overhead_us_median", over);
        if (isfinite(over))
            jstr(f, "cooperative_latency_overhead_basis",
                 from_wall ? "median wall (event profiling unusable): an upper bound"
                           : "median wall - kernel");
        else
            fputs(", \"cooperative_latency_overhead_basis\": null", f);
        jnum(f, "cooperative_overhead_to_floor", coop_floor_ratio(r, c));
        if (r->have_learned[c]) {
            fputs(", \"auto_learned\": {", f);
            for (int q = 0; q < NLEARNED; ++q)
                fprintf(f, "%s\"%s\": %llu", q ? ", " : "", learned_names[q],
                        (unsigned long long)r->learned[c][q]);
            fputc('}', f);
        }
        fputc('}', f);
    }
    fputs("\n  ],\n", f);
}

static void json_record(FILE *f, const results *r, const record *p, const config *c,
                        const kernel_spec *ks, int nk) {
    fprintf(f, "\n    {\"kernel\": \"%s\"", p->kernel);
    jstr(f, "kernel_param", kernel_param(r, p->kernel));
    jstr(f, "driver_model", c->model.spec);
    jstr(f, "config", c->spec);
    fprintf(f, ", \"cpus\": %d, \"workers\": %d", c->ncpus, c->ncpus);
    jstr(f, "cpu_list", c->cpu_list);
    const kernel_spec *k = NULL;
    for (int i = 0; i < nk; ++i)
        if (!strcmp(ks[i].name, p->kernel))
            k = &ks[i];
    fprintf(f, ", \"long\": %s", k && k->is_long ? "true" : "false");
    fprintf(f, ", \"strategy\": \"%s\", \"launches\": %u, \"ok\": %s, \"mismatches\": %zu",
            p->strategy, p->launches, p->ok ? "true" : "false", p->mismatches);
    const cell *ce = find_cell(r, p->kernel, p->cfg);
    jnum(f, "cell_elapsed_s", ce ? ce->elapsed_s : NAN);
    jstr(f, "stopped_by", ce ? ce->stopped_by : "");
    for (int m = 0; m < M_COUNT; ++m)
        for (int q = 0; q < S_COUNT; ++q) {
            char key[48];
            snprintf(key, sizeof key, "%s%s_%s", metric_names[m], metric_units[m], stat_names[q]);
            jnum(f, key, p->st[m][q]);
        }
    jnum(f, "cpu_ratio_mean", ratio_to_blocking(r, p, M_CPU, S_MEAN));
    jnum(f, "cpu_ratio_median", ratio_to_blocking(r, p, M_CPU, S_MEDIAN));
    jnum(f, "wall_ratio_mean", ratio_to_blocking(r, p, M_WALL, S_MEAN));
    jnum(f, "wall_ratio_median", ratio_to_blocking(r, p, M_WALL, S_MEDIAN));
    jnum(f, "cpu_per_wait_s", cpu_per_wait_s(p));
    if (p->has_stats) {
        fputs(", \"stats\": {", f);
        for (int q = 0; q < 8; ++q)
            fprintf(f, "%s\"%s\": %llu", q ? ", " : "", stats_names[q],
                    (unsigned long long)p->stats[q]);
        fputs(", \"latency_us_log2_buckets\": [", f);
        for (int b = 0; b < CW_STATS_LATENCY_BUCKETS; ++b)
            fprintf(f, "%s%llu", b ? ", " : "", (unsigned long long)p->stats[8 + b]);
        fputs("], \"auto\": {", f);
        for (int q = 0; q < NSTATS_AUTO; ++q)
            fprintf(f, "%s\"%s\": %llu", q ? ", " : "", auto_stats_names[q],
                    (unsigned long long)p->stats[AUTO_BASE + q]);
        fputs("}}", f);
    }
    fputc('}', f);
}

static int close_file(FILE *f, const char *path) {
    if (fclose(f) != 0) {
        fprintf(stderr, "%s: error writing %s\n", prog, path);
        return -1;
    }
    return 0;
}

int write_json(const char *path, const options *o, const run_info *ri, const results *r,
               const config *cfgs, int ncfg) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    fputs("{\n", f);
    json_header(f, o, ri, r, cfgs, ncfg);
    json_floor(f, r, cfgs, ncfg);
    fputs("  \"results\": [", f);
    kernel_spec ks[MAX_KERNELS];
    int nk = build_kernels(o, ks);
    for (int i = 0; i < r->nrec; ++i) {
        fputs(i ? "," : "", f);
        json_record(f, r, &r->rec[i], &cfgs[r->rec[i].cfg], ks, nk);
    }
    fputs("\n  ],\n  \"checks\": [", f);
    for (int i = 0; i < r->nchecks; ++i) {
        const check_rec *c = &r->checks[i];
        const config *cf = &cfgs[c->cfg];
        fprintf(f, "%s\n    {\"kernel\": ", i ? "," : "");
        json_string(f, c->kernel);
        jstr(f, "driver_model", cf->model.spec);
        jstr(f, "config", cf->spec);
        fprintf(f, ", \"goal\": \"%c\"", c->goal);
        jstr(f, "strategy", c->strategy);
        jstr(f, "check", c->what);
        jstr(f, "verdict", verdict_names[c->v]);
        fprintf(f, ", \"pairs\": %d, \"rounds\": %d, \"conditions\": [", c->pairs, c->rounds);
        for (int k = 0; k < c->ncond; ++k) {
            fprintf(f, "%s{\"difference\": ", k ? ", " : "");
            json_number(f, c->est[k]);
            jnum(f, "lo", c->lo[k]);
            jnum(f, "hi", c->hi[k]);
            jnum(f, "resolution", c->res[k]);
            fputc('}', f);
        }
        fputc(']', f);
        /* An UNDECIDED check's projection: null pairs where a median sits
         * on its bound. */
        if (c->v == V_UNDECIDED) {
            fprintf(f, ", \"to_decide\": {\"verdict\": ");
            json_string(f, c->lean == V_UNDECIDED ? "none" : verdict_names[c->lean]);
            jnum(f, "pairs", c->to_decide_pairs);
            jnum(f, "seconds", c->to_decide_s);
            fputc('}', f);
        }
        fputc('}', f);
    }
    fputs("\n  ]", f);
    if (ri->draws) {
        fprintf(f, ",\n  \"sweep\": {\"seed\": %lu, \"models\": [", o->seed);
        for (int i = 0; i < o->sweep; ++i) {
            int n[3];
            int v = goal_verdict(r, i, 'c', n);
            fprintf(f, "%s\n    {\"index\": %d", i ? "," : "", i + 1);
            jstr(f, "driver_model", ri->draws[i].spec);
            jstr(f, "kernel", ri->draws[i].kernel);
            jstr(f, "config", cfgs[i].spec);
            jstr(f, "goal_c", verdict_names[v]);
            fprintf(f, ", \"checks_pass\": %d, \"checks_miss\": %d, \"checks_undecided\": %d}",
                    n[V_PASS], n[V_MISS], n[V_UNDECIDED]);
        }
        fputs("\n  ]}", f);
    }
    fputs("\n}\n", f);
    return close_file(f, path);
}

static void csv_string(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_number(FILE *f, double v) {
    fputc(',', f);
    if (isfinite(v))
        fprintf(f, "%.10g", v); /* as json_number */
}

int write_csv(const char *path, const run_info *ri, const results *r, const config *cfgs) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    /* One header row, then data rows: the run's identity repeats on every row
     * so each row stands alone (the JSON holds the rest of the run's header). */
    fputs("kernel,kernel_param,driver_model,config,cpus,workers,cpu_list,strategy,launches,ok", f);
    for (int m = 0; m < M_COUNT; ++m)
        for (int q = 0; q < S_COUNT; ++q)
            fprintf(f, ",%s%s_%s", metric_names[m], metric_units[m], stat_names[q]);
    fputs(",cpu_ratio_mean,cpu_ratio_median,wall_ratio_mean,wall_ratio_median,cpu_per_wait_s,"
          "cell_elapsed_s,"
          "stopped_by,floor_one_way_us_median,cw_version,git_commit,compiler,platform,device,"
          "command\n",
          f);
    for (int i = 0; i < r->nrec; ++i) {
        const record *p = &r->rec[i];
        const config *c = &cfgs[p->cfg];
        const cell *ce = find_cell(r, p->kernel, p->cfg);
        fprintf(f, "%s,", p->kernel);
        csv_string(f, kernel_param(r, p->kernel));
        fputc(',', f);
        csv_string(f, c->model.spec);
        fprintf(f, ",%s,%d,%d,", c->spec, c->ncpus, c->ncpus);
        csv_string(f, c->cpu_list);
        fprintf(f, ",%s,%u,%d", p->strategy, p->launches, p->ok);
        for (int m = 0; m < M_COUNT; ++m)
            for (int q = 0; q < S_COUNT; ++q)
                csv_number(f, p->st[m][q]);
        csv_number(f, ratio_to_blocking(r, p, M_CPU, S_MEAN));
        csv_number(f, ratio_to_blocking(r, p, M_CPU, S_MEDIAN));
        csv_number(f, ratio_to_blocking(r, p, M_WALL, S_MEAN));
        csv_number(f, ratio_to_blocking(r, p, M_WALL, S_MEDIAN));
        csv_number(f, cpu_per_wait_s(p));
        csv_number(f, ce ? ce->elapsed_s : NAN);
        fputc(',', f);
        csv_string(f, ce ? ce->stopped_by : "");
        csv_number(f, r->floors[p->cfg].have ? r->floors[p->cfg].st[S_MEDIAN] : NAN);
        const char *ident[] = {ri->cw_version,
                               ri->git_commit,
                               ri->compiler,
                               header_value(r, "platform_name"),
                               header_value(r, "device_name"),
                               ri->command};
        for (size_t j = 0; j < sizeof ident / sizeof ident[0]; ++j) {
            fputc(',', f);
            csv_string(f, ident[j]);
        }
        fputc('\n', f);
    }
    return close_file(f, path);
}
