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

/* The cell's goals as "a P  c M": each goal of the cell and its verdict. */
static void cell_verdicts(const results *r, const char *kernel, int cfg, char *out, size_t len) {
    size_t pos = 0;
    out[0] = '\0';
    for (char g = 'a'; g <= 'f'; ++g) {
        int n[3] = {0, 0, 0}, any = 0;
        for (int i = 0; i < r->nchecks; ++i) {
            const check_rec *c = &r->checks[i];
            if (c->cfg == cfg && c->goal == g && !strcmp(c->kernel, kernel)) {
                n[c->v]++;
                any = 1;
            }
        }
        if (!any)
            continue;
        const char *v = n[V_MISS] ? "MISS" : n[V_UNDECIDED] ? "UNDEC" : "PASS";
        pos += (size_t)snprintf(out + pos, len - pos, "%s%c %s", pos ? " " : "", g, v);
        if (pos >= len)
            return;
    }
}

/* One row per (cell, strategy): the cell's index and label (kernel, CPUs,
 * model, its goals' verdicts), the strategy's index and name, then log2 of
 * its added latency (medians) and its CPU per launch (means) over
 * blocking's in the same cell, and the two ratios as text. */
static int write_data(FILE *f, const results *r, const config *cfgs, int ncfg,
                      const kernel_spec *ks, int nk, const cw_strategy *strat, int ns, bool sweep) {
    int x = 0;
    for (int c = 0; c < ncfg; ++c)
        for (int k = 0; k < nk; ++k) {
            const record *b = find_record(r, ks[k].name, c, "blocking");
            if (!b)
                continue;
            char verdicts[64];
            cell_verdicts(r, ks[k].name, c, verdicts, sizeof verdicts);
            for (int j = 0; j < ns; ++j) {
                const record *p = find_record(r, ks[k].name, c, strategy_name(strat[j]));
                double lat = p ? p->st[M_LATENCY][S_MEDIAN] / b->st[M_LATENCY][S_MEDIAN] : NAN;
                double cpu = p ? p->st[M_CPU][S_MEAN] / b->st[M_CPU][S_MEAN] : NAN;
                /* A drawn model's parameters would take the whole
                 * picture: the sweep's cells are named by their number in
                 * its table. */
                char model[32];
                if (sweep)
                    snprintf(model, sizeof model, "model %d", c + 1);
                fprintf(f, "%d\t%s %s %s  %s\t%d\t%s", x, sweep ? model : cfgs[c].model.spec,
                        ks[k].name, cfgs[c].spec, verdicts, j, strategy_name(strat[j]));
                for (int q = 0; q < 2; ++q) {
                    double v = q ? cpu : lat;
                    if (isfinite(v) && v > 0)
                        fprintf(f, "\t%.4f", log2(v));
                    else
                        fputs("\tNaN", f);
                }
                for (int q = 0; q < 2; ++q) {
                    double v = q ? cpu : lat;
                    if (isfinite(v) && v > 0)
                        fprintf(f, v >= 9.95 ? "\t%.0f" : v >= 0.095 ? "\t%.1f" : "\t%.2f", v);
                    else
                        fputs("\t-", f);
                }
                fputc('\n', f);
            }
            ++x;
        }
    return x;
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
    int cells = write_data(f, r, cfgs, ncfg, ks, nk, strat, ns, o->sweep > 0);
    fclose(f);
    /* Parameters, then the script from bench/plot.gp (embedded at build time).
     * strat_ids carries each column's cw_strategy value, so a strategy keeps
     * its colour and marker whatever subset was run. */
    fprintf(g, "datafile = '%s'\noutfile = ", dat);
    gp_string(g, png);
    /* A column per cell, wide enough for its figures. */
    int width = 300 + 52 * cells;
    fprintf(g, "\nplotwidth = %d\nncells = %d\nnstrat = %d", width < 1200 ? 1200 : width, cells,
            ns);
    fputs("\nsubtitle = ", g);
    char sub[1024];
    const char *platform = r->nheader ? r->header[0][1] : "";
    const char *device = r->nheader > 2 ? r->header[2][1] : "";
    snprintf(sub, sizeof sub, "%s, %s | cw %s (%s) | %s", platform, device, ri->cw_version,
             ri->git_commit, ri->date);
    gp_string(g, sub);
    char budget[64] = "";
    if (o->run_time > 0)
        snprintf(budget, sizeof budget, " within a run of %g s", o->run_time);
    snprintf(sub, sizeof sub,
             "each box: the strategy's figure over blocking's in the same cell (colour: log "
             "scale, blue lower, red higher) | under each cell its goals' verdicts | up to %g s "
             "per cell%s",
             o->max_time, budget);
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
