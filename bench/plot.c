/* SPDX-License-Identifier: MIT */
/* cw-bench: the plot, drawn by gnuplot from a data file and bench/plot.gp. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#include "cw_bench_plot_gp.h" /* generated from plot.gp: static const char cw_bench_plot_gp[] */

static bool find_in_path(const char *name) {
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    char dir[4096];
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(dir, sizeof dir, "%.*s/%s", (int)n, path, name);
        if (n && access(dir, X_OK) == 0)
            return true;
        path += n + (path[n] == ':');
    }
    return false;
}

/* A gnuplot single-quoted string: only ' needs escaping, as ''. */
static void gp_string(FILE *f, const char *s) {
    fputc('\'', f);
    for (; *s; ++s) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

/* Columns: group label, then mean CPU per strategy, then mean wall per
 * strategy, then the row's config floor (median one-way wake). */
static void write_data(FILE *f, const results *r, const config *cfgs, int ncfg,
                       const kernel_spec *ks, int nk, const cw_strategy *strat, int ns) {
    fputs("group", f);
    for (int pass = 0; pass < 2; ++pass)
        for (int j = 0; j < ns; ++j)
            fprintf(f, "\t%s", cw_strategy_name(strat[j]));
    fputs("\tfloor\n", f);
    for (int k = 0; k < nk; ++k)
        for (int c = 0; c < ncfg; ++c) {
            /* The model in every label: the same kernel and CPUs under
             * another driver is another row. */
            fprintf(f, "%s %dcpu %s", ks[k].name, cfgs[c].ncpus, cfgs[c].model.spec);
            for (int pass = 0; pass < 2; ++pass)
                for (int j = 0; j < ns; ++j) {
                    const record *p = find_record(r, ks[k].name, c, cw_strategy_name(strat[j]));
                    double v = p ? p->st[pass ? M_WALL : M_CPU][S_MEAN] : NAN;
                    if (isfinite(v) && v > 0)
                        fprintf(f, "\t%.3f", v);
                    else
                        fputs("\tNaN", f);
                }
            const floor_result *fl = &r->floors[c];
            if (fl->have && fl->st[S_MEDIAN] > 0)
                fprintf(f, "\t%.3f\n", fl->st[S_MEDIAN]);
            else
                fputs("\tNaN\n", f);
        }
}

static int run_gnuplot(const char *script) {
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

void plot_preflight(const char *png) {
    if (!find_in_path("gnuplot")) {
        fprintf(stderr,
                "%s: gnuplot not found in PATH: the plot %s will be skipped "
                "(install it with: apt-get install gnuplot-nox)\n",
                prog, png);
        return;
    }
    /* The scratch folder write_plot makes, made and removed once now. */
    char dir[] = "/tmp/cw-bench-plot.XXXXXX";
    if (!mkdtemp(dir))
        die("--plot %s: cannot make the plot's scratch folder in /tmp: %s", png, strerror(errno));
    rmdir(dir);
}

int write_plot(const char *png, const options *o, const results *r, const config *cfgs, int ncfg,
               const kernel_spec *ks, int nk, const run_info *ri) {
    if (!find_in_path("gnuplot")) {
        fprintf(stderr,
                "%s: gnuplot not found in PATH: skipping the plot %s "
                "(install it with: apt-get install gnuplot-nox)\n",
                prog, png);
        return 1;
    }
    char dir[] = "/tmp/cw-bench-plot.XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "%s: mkdtemp: %s\n", prog, strerror(errno));
        return -1;
    }
    char dat[64], gp[64];
    snprintf(dat, sizeof dat, "%s/data.tsv", dir);
    snprintf(gp, sizeof gp, "%s/plot.gp", dir);
    FILE *f = fopen(dat, "w");
    FILE *g = f ? fopen(gp, "w") : NULL;
    if (!f || !g) {
        fprintf(stderr, "%s: cannot write plot files in %s\n", prog, dir);
        if (f)
            fclose(f);
        return -1;
    }
    cw_strategy strat[NSTRAT];
    int ns = selected_strategies(o, strat);
    write_data(f, r, cfgs, ncfg, ks, nk, strat, ns);
    fclose(f);
    /* Parameters, then the script from bench/plot.gp (embedded at build time).
     * strat_ids carries each column's cw_strategy value, so a strategy keeps
     * its colour and marker whatever subset was run. */
    fprintf(g, "datafile = '%s'\noutfile = ", dat);
    gp_string(g, png);
    /* Wide enough for every row's label: kernels x configs x models. */
    int rows = nk * ncfg, width = 400 + 60 * rows;
    fprintf(g, "\nplotwidth = %d", width < 1500 ? 1500 : width);
    fprintf(g, "\nnstrat = %d\nstrat_ids = '", ns);
    for (int j = 0; j < ns; ++j)
        fprintf(g, "%s%d", j ? " " : "", (int)strat[j]);
    fputs("'\nsubtitle = ", g);
    char sub[1024];
    const char *platform = r->nheader ? r->header[0][1] : "";
    const char *device = r->nheader > 2 ? r->header[2][1] : "";
    snprintf(sub, sizeof sub, "%s, %s | cw %s (%s) | %s", platform, device, ri->cw_version,
             ri->git_commit, ri->date);
    gp_string(g, sub);
    snprintf(sub, sizeof sub,
             "up to %u launches or %g s per cell | Ncpu: pinned to N CPUs, N workers", o->launches,
             o->max_time);
    fputs("\nsubtitle2 = ", g);
    gp_string(g, sub);
    fputc('\n', g);
    fputs(cw_bench_plot_gp, g);
    fclose(g);

    int rc = run_gnuplot(gp);
    if (rc != 0) {
        fprintf(stderr, "%s: gnuplot failed; its input is kept in %s\n", prog, dir);
    } else {
        unlink(dat);
        unlink(gp);
        rmdir(dir);
    }
    return rc;
}
