/* SPDX-License-Identifier: MIT */
/*
 * cw-run --compare: the program run natively and under each strategy,
 * interleaved, and their costs set side by side (docs/cw-run.md,
 * "Comparing strategies"). Part of the cw-run launcher, not of the preload.
 */
#ifndef CWR_COMPARE_H
#define CWR_COMPARE_H

struct cwr_compare {
    const char *list; /* strategies, comma-separated */
    unsigned runs;    /* of each, native included */
    const char *json; /* the JSON file (absolute), or NULL */
};

/* Check the list: 0, or 2 after saying what is wrong on stderr. */
int cwr_compare_check(const struct cwr_compare *c);

/* Run argv (argv[0] found on PATH) as c says, each run reaching the
 * preload as cw-run's own environment says (cwr_reach) and print the comparison on
 * stdout, progress on stderr. Returns cw-run's exit status: 0, 1 when the
 * output or the exit status of the program differed between runs, 2 when
 * the comparison could not run. */
int cwr_compare_run(const struct cwr_compare *c, char **argv);

#endif
