/* SPDX-License-Identifier: MIT */
/*
 * cw-run: run a program with libcw_preload.so, so that its OpenCL waits
 * (clWaitForEvents, clFinish, blocking reads, writes, maps and copies) are
 * cw's. It checks its options and the files it is to write, puts them into
 * CW_RUN_* variables, names the preload in OPENCL_LAYERS or LD_PRELOAD
 * (reach.c) and executes the program in its own process: the exit status
 * is the program's. With --compare it runs the program several ways
 * instead (compare.c), each reached the same way.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare.h"
#include "cw.h"
#include "reach.h"

#ifndef CW_RUN_PRELOAD_REL
#define CW_RUN_PRELOAD_REL "../lib/cw/libcw_preload.so"
#endif

static void usage(FILE *f) {
    fprintf(f, "usage: cw-run [OPTIONS] [--] PROGRAM [ARGS...]\n"
               "       cw-run --compare LIST [--runs N] [--stats=FILE] [OPTIONS] [--] PROGRAM "
               "[ARGS...]\n"
               "Run PROGRAM with its OpenCL waits done by cw (libcw_preload.so).\n"
               "\n"
               "  --strategy NAME     cw strategy for the waits (default: auto); blocking\n"
               "                      makes the program's own calls, measured   [CW_RUN_STRATEGY]\n"
               "  --spin-us N         spin budget, 1..1000000 us, for spin-park and auto\n"
               "                                                                 [CW_RUN_SPIN_US]\n"
               "  --latency           ask auto to prefer a short added latency over a small\n"
               "                      CPU cost (CW_WAIT_LATENCY)                 [CW_RUN_LATENCY]\n"
               "  --stats[=FILE]      print a wait profile at exit: a table on stderr, or JSON\n"
               "                      to FILE (each %%p in FILE becomes the pid)  [CW_RUN_STATS]\n"
               "  --trace=FILE        write the waits as a timeline, Chrome trace-event JSON\n"
               "                      (Perfetto, chrome://tracing)               [CW_RUN_TRACE]\n"
               "  --stats-children    profile and trace the processes PROGRAM starts too\n"
               "                      (FILE.PID each, or FILE's %%p)    [CW_RUN_STATS_CHILDREN]\n"
               "  --hang-ms N         report a wait that lasts longer than N ms  [CW_RUN_HANG_MS]\n"
               "  --on-hang=report|abort\n"
               "                      after the report keep waiting (default) or abort\n"
               "                                                                 [CW_RUN_ON_HANG]\n"
               "  --compare LIST      run PROGRAM natively and under each strategy of LIST\n"
               "                      (comma-separated), interleaved; print the median wall\n"
               "                      time, CPU time and waiting threads' CPU of each, as\n"
               "                      ratios to native, and the cheapest at equal wall time\n"
               "                      (within 5%% of the best); --stats=FILE: also as JSON.\n"
               "                      PROGRAM's stdout is hashed, not shown; runs whose\n"
               "                      output or exit status differ are flagged (exit 1)\n"
               "  --runs N            runs of each way for --compare, 1..1000 (default 3)\n"
               "  --learned=FILE|none where auto keeps what it learned of the drivers across\n"
               "                      runs (default $XDG_CACHE_HOME/cw-run/learned); none:\n"
               "                      learn afresh each run                      [CW_RUN_LEARNED]\n"
               "  -h, --help          this text\n"
               "  --version           cw's version\n"
               "\n"
               "Strategies: default blocking cooperative poll cooperative-wake-locked\n"
               "cooperative-noyield pthread spin-park backoff-poll auto.\n"
               "CW_RUN_STATS: unset or 0 no profile; empty, 1 or - the table on stderr;\n"
               "otherwise the JSON file (./1 for a file named 1).\n"
               "The preload is found next to cw-run (build tree), then at\n"
               "<cw-run's directory>/" CW_RUN_PRELOAD_REL " (install);\n"
               "CW_RUN_PRELOAD names another one. It is loaded as an OpenCL layer where the\n"
               "loader supports layers, else preloaded (CW_RUN_MECHANISM=layer|preload|auto).\n"
               "See cw-run(1).\n");
}

static int fail(const char *what, const char *arg) {
    fprintf(stderr, "cw-run: %s '%s'\n", what, arg);
    usage(stderr);
    return 2;
}

static int unsigned_in(const char *s, unsigned long long lo, unsigned long long hi) {
    if (!*s || *s == '-' || *s == '+')
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    return !errno && !*end && v >= lo && v <= hi;
}

/* This process's machine, from its own executable's ELF header; 0 if
 * unknown (then any machine passes). */
static ElfW(Half) self_machine(void) {
    ElfW(Ehdr) eh;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, &eh, sizeof eh) : -1;
    if (fd >= 0)
        close(fd);
    return n == (ssize_t)sizeof eh ? eh.e_machine : 0;
}

/*
 * A position-independent executable (ET_DYN too): DF_1_PIE in its dynamic
 * section, which is what the dynamic linker refuses to preload. The file
 * is of this process's class (checked before).
 */
static bool is_pie(const unsigned char *map, size_t size) {
    const ElfW(Ehdr) *eh = (const void *)map;
    if (eh->e_phoff > size || eh->e_phnum > (size - eh->e_phoff) / sizeof(ElfW(Phdr)))
        return false;
    const ElfW(Phdr) *ph = (const void *)(map + eh->e_phoff);
    for (unsigned i = 0; i < eh->e_phnum; ++i) {
        if (ph[i].p_type != PT_DYNAMIC || ph[i].p_offset > size ||
            ph[i].p_filesz > size - ph[i].p_offset)
            continue;
        const ElfW(Dyn) *d = (const void *)(map + ph[i].p_offset);
        for (size_t j = 0; j < ph[i].p_filesz / sizeof *d && d[j].d_tag != DT_NULL; ++j)
            if (d[j].d_tag == DT_FLAGS_1 && (d[j].d_un.d_val & DF_1_PIE))
                return true;
    }
    return false;
}

/*
 * The preload must be a shared library this process's loader can load: an
 * ELF shared object, not an executable, of this machine and class. The
 * dynamic linker only warns about an LD_PRELOAD entry it cannot load and
 * runs the program without it, natively, which would pass for a run under
 * cw. (A library whose own dependencies are missing still passes here.)
 */
static bool is_library(const char *path) {
    const char *why = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "cw-run: the preload %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return false;
    }
    size_t size = S_ISREG(st.st_mode) ? (size_t)st.st_size : 0;
    unsigned char *map =
        size >= sizeof(ElfW(Ehdr)) ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    const ElfW(Ehdr) *eh = map != MAP_FAILED ? (const void *)map : NULL;
    if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG))
        why = "not an ELF file";
    else if (eh->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
             (self_machine() && eh->e_machine != self_machine()))
        why = "built for another machine";
    else if (eh->e_type != ET_DYN || is_pie(map, size))
        why = "not a shared library";
    if (map != MAP_FAILED)
        munmap(map, size);
    if (why) {
        fprintf(stderr, "cw-run: the preload %s is %s\n", path, why);
        return false;
    }
    return true;
}

/*
 * The preload: $CW_RUN_PRELOAD, else next to this executable, else at the
 * install's relative place, so a build tree and any install prefix work.
 * Says why on stderr when there is none.
 */
static bool find_preload(char *out, size_t len) {
    const char *env = getenv("CW_RUN_PRELOAD");
    if (env && *env) {
        if (strlen(env) >= len) {
            fprintf(stderr, "cw-run: CW_RUN_PRELOAD is too long\n");
            return false;
        }
        snprintf(out, len, "%s", env);
        if (access(out, R_OK) != 0) {
            fprintf(stderr, "cw-run: CW_RUN_PRELOAD=%s: %s\n", out, strerror(errno));
            return false;
        }
        return is_library(out);
    }
    char self[PATH_MAX - 64]; /* room for the file name in `out` */
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char *slash = NULL;
    if (n > 0) {
        self[n] = '\0';
        slash = strrchr(self, '/');
    }
    if (!slash) {
        fprintf(stderr, "cw-run: cannot tell where cw-run is, to find libcw_preload.so: "
                        "set CW_RUN_PRELOAD\n");
        return false;
    }
    *slash = '\0';
    snprintf(out, len, "%s/libcw_preload.so", self);
    if (access(out, R_OK) == 0)
        return is_library(out);
    char joined[PATH_MAX + 64];
    snprintf(joined, sizeof joined, "%s/%s", self, CW_RUN_PRELOAD_REL);
    if (realpath(joined, out) && access(out, R_OK) == 0)
        return is_library(out);
    fprintf(stderr,
            "cw-run: libcw_preload.so is neither in %s nor at %s: set CW_RUN_PRELOAD to "
            "the preload\n",
            self, joined);
    return false;
}

static int set(const char *name, const char *value) {
    if (setenv(name, value, 1) != 0) {
        perror("cw-run: setenv");
        return 0;
    }
    return 1;
}

/*
 * An output file of the preload's (--stats=FILE, --trace=FILE, or their
 * variables): made absolute here, since the program may change directory
 * before it is written at exit, and checked now, so that a file that
 * cannot be written stops cw-run before the program runs rather than
 * after. The check opens the file as the program will name it (%p is this
 * pid, which the program keeps: it is executed in this process), does not
 * truncate an existing file, and removes one it made. The name, absolute,
 * goes back into the variable `var`.
 */
static bool check_output(const char *var, const char *what, char *path, size_t len) {
    const char *name = getenv(var);
    char abs[PATH_MAX];
    if (name[0] == '/') {
        snprintf(abs, sizeof abs, "%s", name);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) {
            fprintf(stderr, "cw-run: %s %s: no current directory: %s\n", what, name,
                    strerror(errno));
            return false;
        }
        if (snprintf(abs, sizeof abs, "%s/%s", cwd, name) >= (int)sizeof abs) {
            fprintf(stderr, "cw-run: %s %s: the name is too long\n", what, name);
            return false;
        }
    }
    size_t used = 0;
    for (const char *c = abs; *c && used + 24 < len; ++c) {
        if (c[0] == '%' && c[1] == 'p') {
            used += (size_t)snprintf(path + used, len - used, "%ld", (long)getpid());
            ++c;
        } else {
            path[used++] = *c;
        }
    }
    path[used] = '\0';
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    bool made = false;
    if (fd < 0 && errno == ENOENT) {
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        made = fd >= 0;
    }
    if (fd < 0) {
        fprintf(stderr, "cw-run: %s %s: cannot write it: %s\n", what, path, strerror(errno));
        return false;
    }
    close(fd);
    if (made)
        unlink(path);
    return set(var, abs);
}

/* The CW_RUN_STATS value that names a file (not the table's 0, 1, -). */
static bool stats_names_file(void) {
    const char *s = getenv("CW_RUN_STATS");
    return s && *s && strcmp(s, "0") && strcmp(s, "1") && strcmp(s, "-");
}

int main(int argc, char **argv) {
    const char *compare = NULL;
    unsigned runs = 3;
    bool runs_given = false;
    int i = 1;
    for (; i < argc; ++i) {
        const char *a = argv[i];
        const char *v = NULL;
        if (!strcmp(a, "--")) {
            ++i;
            break;
        }
        if (a[0] != '-')
            break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--version")) {
            printf("cw-run (cw %s)\n", cw_version_string());
            return 0;
        }
        if (!strcmp(a, "--stats")) {
            if (!set("CW_RUN_STATS", "1"))
                return 2;
            continue;
        }
        if (!strncmp(a, "--stats=", 8)) {
            if (!a[8])
                return fail("empty file name in", a);
            /* A file named like the variable's table values is still a file. */
            char name[PATH_MAX];
            bool special = !strcmp(a + 8, "0") || !strcmp(a + 8, "1") || !strcmp(a + 8, "-");
            snprintf(name, sizeof name, "%s%s", special ? "./" : "", a + 8);
            if (!set("CW_RUN_STATS", name))
                return 2;
            continue;
        }
        if (!strcmp(a, "--latency")) {
            if (!set("CW_RUN_LATENCY", "1"))
                return 2;
            continue;
        }
        if (!strcmp(a, "--stats-children")) {
            if (!set("CW_RUN_STATS_CHILDREN", "1"))
                return 2;
            continue;
        }
        /* The options with a value: --opt VALUE or --opt=VALUE. */
        static const char *const with_value[] = {"--strategy", "--spin-us", "--hang-ms",
                                                 "--on-hang",  "--trace",   "--compare",
                                                 "--runs",     "--learned"};
        enum { N_WITH_VALUE = sizeof with_value / sizeof with_value[0] };
        size_t which = N_WITH_VALUE;
        for (size_t k = 0; k < N_WITH_VALUE; ++k) {
            size_t l = strlen(with_value[k]);
            if (!strncmp(a, with_value[k], l) && (a[l] == '\0' || a[l] == '=')) {
                which = k;
                v = a[l] == '=' ? a + l + 1 : NULL;
                break;
            }
        }
        if (which == N_WITH_VALUE)
            return fail("unknown option", a);
        if (!v) {
            if (i + 1 >= argc)
                return fail("missing value after", a);
            v = argv[++i];
        }
        cw_strategy st;
        switch (which) {
        case 0:
            if (cw_strategy_from_name(v, &st) != CW_OK)
                return fail("unknown strategy", v);
            if (!set("CW_RUN_STRATEGY", v))
                return 2;
            break;
        case 1:
            if (!unsigned_in(v, 1, CW_SPIN_US_MAX))
                return fail("--spin-us takes 1 to 1000000, not", v);
            if (!set("CW_RUN_SPIN_US", v))
                return 2;
            break;
        case 2:
            if (!unsigned_in(v, 1, 1000000000ull))
                return fail("--hang-ms takes 1 to 1000000000, not", v);
            if (!set("CW_RUN_HANG_MS", v))
                return 2;
            break;
        case 3:
            if (strcmp(v, "report") && strcmp(v, "abort"))
                return fail("--on-hang takes report or abort, not", v);
            if (!set("CW_RUN_ON_HANG", v))
                return 2;
            break;
        case 4:
            if (!*v)
                return fail("empty file name in", a);
            if (!set("CW_RUN_TRACE", v))
                return 2;
            break;
        case 5:
            compare = v;
            break;
        case 7:
            if (!*v)
                return fail("empty file name in", a);
            if (!set("CW_RUN_LEARNED", v))
                return 2;
            break;
        default:
            if (!unsigned_in(v, 1, 1000))
                return fail("--runs takes 1 to 1000, not", v);
            runs = (unsigned)strtoul(v, NULL, 10);
            runs_given = true;
            break;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "cw-run: no program to run\n");
        usage(stderr);
        return 2;
    }
    const char *on_hang = getenv("CW_RUN_ON_HANG");
    const char *hang = getenv("CW_RUN_HANG_MS");
    if (on_hang && *on_hang && !(hang && *hang)) {
        fprintf(stderr, "cw-run: --on-hang needs --hang-ms\n");
        return 2;
    }
    if (runs_given && !compare) {
        fprintf(stderr, "cw-run: --runs needs --compare\n");
        return 2;
    }
    const char *trace = getenv("CW_RUN_TRACE");
    if (compare) {
        const char *strategy = getenv("CW_RUN_STRATEGY");
        if ((strategy && *strategy) || (trace && *trace)) {
            fprintf(stderr, "cw-run: --compare chooses the strategies itself and takes no "
                            "--strategy or --trace\n");
            return 2;
        }
        struct cwr_compare c = {.list = compare, .runs = runs};
        if (cwr_compare_check(&c))
            return 2;
    }
    /* The files, before anything runs. */
    char stats_path[PATH_MAX], trace_path[PATH_MAX];
    if (stats_names_file() &&
        !check_output("CW_RUN_STATS", "--stats", stats_path, sizeof stats_path))
        return 2;
    if (trace && *trace && !check_output("CW_RUN_TRACE", "--trace", trace_path, sizeof trace_path))
        return 2;

    char preload[PATH_MAX];
    if (!find_preload(preload, sizeof preload))
        return 127;
    int reached = cwr_reach(preload);
    if (reached != 0)
        return reached;
    if (compare) {
        struct cwr_compare c = {
            .list = compare, .runs = runs, .json = stats_names_file() ? stats_path : NULL};
        return cwr_compare_run(&c, argv + i);
    }
    /* The program runs in this process, so with this pid: the preload
     * measures that process only, not the ones it starts, unless asked
     * (CW_RUN_STATS_CHILDREN). */
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    if (!set("CW_RUN_PID", pid))
        return 127;
    execvp(argv[i], argv + i);
    fprintf(stderr, "cw-run: cannot run %s: %s\n", argv[i], strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
