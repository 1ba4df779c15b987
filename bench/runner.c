/* SPDX-License-Identifier: MIT */
/*
 * cw-bench: CPU configurations and the children that run them. For every
 * configuration, under every driver model, the parent re-executes this
 * program (fork + exec of /proc/self/exe with --child) pinned to that many
 * CPUs, with the OpenCL runtime's worker count set to match and the driver
 * model's layer in its environment, then reads the child's records.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static void cpu_list_string(const cpu_set_t *set, char *out, size_t len) {
    size_t pos = 0;
    out[0] = '\0';
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, set))
            continue;
        int end = cpu;
        while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, set))
            ++end;
        int w = end > cpu ? snprintf(out + pos, len - pos, "%s%d-%d", pos ? "," : "", cpu, end)
                          : snprintf(out + pos, len - pos, "%s%d", pos ? "," : "", cpu);
        if (w < 0 || (size_t)w >= len - pos)
            return;
        pos += (size_t)w;
        cpu = end;
    }
}

int allowed_cpus(void) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        die("sched_getaffinity: %s", strerror(errno));
    return CPU_COUNT(&allowed);
}

int build_configs(const options *o, config *cfg) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        die("sched_getaffinity: %s", strerror(errno));
    int nallowed = CPU_COUNT(&allowed);
    if (o->nmodels * o->ncfg > MAX_CONFIGS)
        die("--driver-model x --configs: %d x %d runs, at most %d", o->nmodels, o->ncfg,
            MAX_CONFIGS);
    int n = 0;
    for (int m = 0; m < o->nmodels; ++m)
        for (int i = 0; i < o->ncfg; ++i) {
            config *c = &cfg[n++];
            memset(c, 0, sizeof *c);
            snprintf(c->spec, sizeof c->spec, "%s", o->cfg_spec[i]);
            c->cpu_index = i;
            c->model_index = m;
            model_info(o->models[m], &c->model);
            int want = o->cfg_cpus[i] ? o->cfg_cpus[i] : nallowed;
            if (want > nallowed)
                die("--configs: %d CPUs asked, only %d allowed", want, nallowed);
            CPU_ZERO(&c->set);
            int got = 0;
            for (int cpu = 0; cpu < CPU_SETSIZE && got < want; ++cpu)
                if (CPU_ISSET(cpu, &allowed)) {
                    CPU_SET(cpu, &c->set);
                    ++got;
                }
            c->ncpus = got;
            cpu_list_string(&c->set, c->cpu_list, sizeof c->cpu_list);
        }
    return n;
}

void config_title(const config *c, char *out, size_t len) {
    snprintf(out, len, "%s | %s%d CPU%s (cpu %s), %d worker%s", c->model.spec,
             strcmp(c->spec, "all") ? "" : "all ", c->ncpus, c->ncpus == 1 ? "" : "s", c->cpu_list,
             c->ncpus, c->ncpus == 1 ? "" : "s");
}

static void print_progress(const results *r, const config *c, progress *pg) {
    const cell *ce = &r->cells[r->ncells - 1];
    pg->cell++;
    double elapsed = now_s() - pg->t_start;
    /* The plan knows the caps, not the run's budget, which ends the run
     * sooner wherever cells run to their caps. */
    double to_go = plan_to_go(pg->plan, pg->cell);
    if (pg->run_time > 0 && to_go > pg->run_time - elapsed)
        to_go = pg->run_time > elapsed ? pg->run_time - elapsed : 0;
    fprintf(stderr,
            "[cell %d/%d] %s on %s, config %s: %u launches per strategy in %.1f s (stopped by "
            "%s); %.0f s so far, about %.0f s to go\n",
            pg->cell, pg->ncells, ce->kernel, c->model.spec, c->spec, ce->launches, ce->elapsed_s,
            ce->stopped_by, elapsed, to_go);
}

/* The child's side of the fork: pin, set the worker count, exec. */
static void exec_child(const options *o, const config *c, char **args) {
    char n[16];
    snprintf(n, sizeof n, "%d", c->ncpus);
    /* PoCL reads its environment once, at initialisation: the worker count
     * has to be in place before exec. PoCL 3.x and >= 4.0 spellings; Mesa
     * llvmpipe (rusticl) threads. */
    setenv("POCL_MAX_PTHREAD_COUNT", n, 1);
    setenv("POCL_CPU_MAX_CU_COUNT", n, 1);
    setenv("LP_NUM_THREADS", n, 1);
    if (o->platform && strstr(o->platform, "rusticl") && !getenv("RUSTICL_ENABLE"))
        setenv("RUSTICL_ENABLE", "llvmpipe", 1);
    /* The ICD loader reads OPENCL_LAYERS at the process's first OpenCL call. */
    model_setenv(&c->model, model_layer_path());
    if (sched_setaffinity(0, sizeof c->set, &c->set) != 0) {
        fprintf(stderr, "%s: sched_setaffinity(%s): %s\n", prog, c->cpu_list, strerror(errno));
        _exit(127);
    }
    execv("/proc/self/exe", args);
    fprintf(stderr, "%s: exec /proc/self/exe: %s\n", prog, strerror(errno));
    _exit(127);
}

static void read_records(FILE *in, int cfg, const config *c, results *r, calibration *cal,
                         progress *pg) {
    char *line = NULL, copy[1024];
    size_t cap = 0;
    while (getline(&line, &cap, in) > 0) {
        snprintf(copy, sizeof copy, "%s", line);
        char type = proto_read(line, cfg, r, cal);
        if (type == 'P' && pg)
            print_progress(r, c, pg);
        else if (type == 0)
            fprintf(stderr, "%s: unexpected line from child: %s", prog, copy);
    }
    free(line);
}

int run_child(char *const *argv, int argc, const options *o, const config *c,
              const char *const *extra, int cfg, results *r, calibration *cal, progress *pg) {
    int fds[2];
    if (pipe(fds) != 0)
        die("pipe: %s", strerror(errno));
    char fdbuf[16];
    snprintf(fdbuf, sizeof fdbuf, "%d", fds[1]);
    int nextra = 0;
    while (extra[nextra])
        ++nextra;
    char **args = calloc((size_t)argc + (size_t)nextra + 3, sizeof *args);
    if (!args)
        die("out of memory");
    int na = 0;
    for (int i = 0; i < argc; ++i)
        args[na++] = argv[i];
    for (int i = 0; i < nextra; ++i)
        args[na++] = (char *)extra[i];
    args[na++] = "--result-fd";
    args[na++] = fdbuf;
    args[na] = NULL;

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        exec_child(o, c, args);
    }
    free(args);
    close(fds[1]);
    int errors_before = r->nerr;
    FILE *in = fdopen(fds[0], "r");
    if (!in)
        die("fdopen: %s", strerror(errno));
    read_records(in, cfg, c, r, cal, pg);
    fclose(in);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            die("waitpid: %s", strerror(errno));
    int rc = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    if (rc != 0 && r->nerr < 32) {
        /* A crash or a silent failure must show in the table and the JSON. */
        if (WIFSIGNALED(status))
            snprintf(r->errors[r->nerr++], 512, "%s, config %s: child died of signal %d (%s)",
                     c->model.spec, c->spec, WTERMSIG(status), strsignal(WTERMSIG(status)));
        else if (r->nerr == errors_before)
            snprintf(r->errors[r->nerr++], 512, "%s, config %s: child exited with status %d",
                     c->model.spec, c->spec, rc);
    }
    if (WIFSIGNALED(status))
        fprintf(stderr, "%s: child for %s, config %s died of signal %d (%s)\n", prog, c->model.spec,
                c->spec, WTERMSIG(status), strsignal(WTERMSIG(status)));
    return rc;
}
