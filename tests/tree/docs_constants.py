#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
r"""What cw's documentation says about the check schedule (the status reads
that catch failed commands), the limits and the defaults, compared with the
values the code has.

Usage: docs_constants.py ROOT PROGRAM
       docs_constants.py --write-tunables ROOT   (rewrite docs/tunables.md's table)
  ROOT     the source tree
  PROGRAM  docs_constants (tests/tree/docs_constants.c), built against cw's
           headers and src/: it prints "NAME VALUE" lines, the public
           constants, internal ones and what the code computes from them

A few values live in one source file only and are read from its #define
lines (FROM_SOURCE); DERIVED values are computed from the others. A name
ending in _ns/_NS is in nanoseconds, one with _us/_US in microseconds; any
other value has no unit.

The statements are the tables below, README first (top-level README.md),
then the man pages, the headers and the other documents: (file, pattern,
keys). A pattern is literal text, in which
  {n}   is a number, optionally followed by a unit: 16000, 1,000,000, 2^20,
        16.4, "twice"; 16 ms, 16\ ms (groff), 10 µs, 200\ \(mcs, 1 s,
        1000000 microseconds
  {w}   is a strategy name: auto, `auto`, CW_STRATEGY_AUTO
  {..}  is any text of up to 200 characters, line breaks included
  a run of spaces is any white space, line breaks included (and, in a
        header, the " * " that starts a comment's line)
and `keys` names the value of each {n} or {w} in turn ("A=B": both A and B).
Every pattern must match at least once in its file, so that a rewritten
document cannot drop a statement unnoticed, and every match must say what
the code has (a number with a decimal point is compared at its precision).
On top of the tables, every "CW_NAME (N)" and "#define CW_NAME N" in the
documents and headers is compared with the value of CW_NAME.

Prints each failure as file:line: what the document says, what the code
has; then a summary. Exits 1 on any failure.
"""
import fractions
import pathlib
import re
import subprocess
import sys

# --- The statements of the top-level README.md. Keep each pattern short:
# whoever rewrites the README keeps these sentences (or changes the pattern
# here together with the sentence). The README states few numbers: the
# reference (options, strategies, limits) is the man pages', checked below.
README = [
    ("README.md", "Leave it at the default (zero value, `{w}`)", "default_strategy"),
    ("README.md", "the status themselves, first after `check_interval_us` ({n} by default;",
     "check_first_ns"),
]

# --- The man pages.
MAN = [
    ("docs/man/cw_wait.3", '"/* 0: {n} */"', "CW_CHECK_INTERVAL_US_DEFAULT"),
    ("docs/man/cw_wait.3", "means no timeout: every value from {n}", "timeout_none_from_us"),
    ("docs/man/cw_wait.3", "/ 1000, about {n} years)", "timeout_none_years"),
    ("docs/man/cw_wait.3", "cw's recommendation, currently the same as .BR {w} .", "default_strategy"),
    ("docs/man/cw_wait.3", "The deadline is checked every {n} reads.", "POLL_CLOCK_EVERY"),
    ("docs/man/cw_wait.3", "(rounds of 1, 2, 4 ... {n} CPU pauses, then {n} each",
     "backoff_longest_round backoff_longest_round"),
    ("docs/man/cw_wait.3", "the time waited so far (at least {n}) nor than", "BACKOFF_FLOOR_NS"),
    ("docs/man/cw_wait.3", "Delays up to {n} are spun, longer ones slept.", "CW__MICRODELAY_SPIN_NS"),
    ("docs/man/cw_wait.3", "the thread's timer slack is lowered to {n}", "BACKOFF_TIMERSLACK_NS"),
    ("docs/man/cw_wait.3", "last at most .I spin_us ({n} by default), with a CPU", "CW_AUTO_SPIN_US_CAP"),
    ("docs/man/cw_wait.3", ".I check_interval_us ({n} by default), then every .B CW_CHECK_INTERVAL_GROWTH"
     " ({n}) times that ({n} by default)",
     "check_first_ns CW_CHECK_INTERVAL_GROWTH check_then_ns"),
    ("docs/man/cw_wait.3", "a failure is reported within {n} the interval", "check_bound_factor"),
    ("docs/man/cw_wait.3", ".I spin_us above {n}, a negative",
     "CW_CHECK_INTERVAL_US_MAX=CW_SPIN_US_MAX"),
    ("docs/man/cw_wait.3", "cw's completion pool is full ({n}, that is {n}, completions",
     "pool_completions pool_completions"),
    ("docs/man/cw_wait.3", "it comes after the interval or {n} the expected wait",
     "CW__CHECK_EXPECTED_FACTOR"),
    ("docs/man/cw_wait.3", "longer, but no later than {n}, so that", "CW__CHECK_EXPECTED_MAX_NS"),
    ("docs/man/cw_wait.3", "when they come at least {n} and at least E/{n} after the command",
     "CW__LATE_FLOOR_NS late_share"),
    ("docs/man/cw_wait.3", "up to {n} of spinning on a status", "CW__PROBE_SPIN_NS"),
    ("docs/man/cw_stats_get.3", "come late, {n} or more after their command", "CW__LATE_FLOOR_NS"),
    ("docs/man/cw_stats_get.3", "expected to last less than {n} times that", "late_share"),
    ("docs/man/cw_notifier_create.3", "after {n} the expected wait of the event's queue when that is"
     " longer (at most {n})", "CW__CHECK_EXPECTED_FACTOR CW__CHECK_EXPECTED_MAX_NS"),
    ("docs/man/cw_wait_all.3", ".B #define CW_WAIT_MANY_MAX {n}", "CW_WAIT_MANY_MAX"),
    ("docs/man/cw_notifier_create.3", "/* first check after {n} */", "check_first_ns"),
    ("docs/man/cw_stats_get.3", ".B #define CW_STATS_LATENCY_BUCKETS {n}", "CW_STATS_LATENCY_BUCKETS"),
    ("docs/man/cw_stats_get.3", "short enough to be spun (up to {n}).", "CW__MICRODELAY_SPIN_NS"),
    ("docs/man/cw_stats_get.3", "longer than {n}, which it sleeps.", "CW__MICRODELAY_SPIN_NS"),
    ("docs/man/cw_stats_get.3", "the last bucket, {n}, counts everything from {n} ({n}) on.",
     "stats_last_bucket stats_last_bucket_from_us stats_last_bucket_from_us"),
    ("docs/man/cw-run.1", "The default is .BR default , i.e.\\& .BR {w} .", "default_strategy"),
    ("docs/man/cw-run.1", "each at the time a command has recently taken there), between {n} and {n}.",
     "CW_CHECK_INTERVAL_US_DEFAULT CW_CHECK_INTERVAL_US_MAX"),
    ("docs/man/cw-run.1", "spins for, 1 to {n}.", "CW_SPIN_US_MAX"),
    ("docs/man/cw-bench.1", "spin-park's spin budget and auto's cap, 1 to {n} (default: cw's own).",
     "CW_SPIN_US_MAX"),
]

# --- The public headers (their #defines are the values themselves).
HEADERS = [
    ("include/cw/wait.h", "cw's recommended strategy, {w} in this release.", "default_strategy"),
    ("include/cw/wait.h", "spin delays up to {n}; lower the thread's timer slack to {n} for the wait",
     "CW__MICRODELAY_SPIN_NS BACKOFF_TIMERSLACK_NS"),
    ("include/cw/wait.h", "Default and bound of cw_wait_options.spin_us. {n} (about", "CW_SPIN_US_DEFAULT"),
    ("include/cw/wait.h", "never longer than the time waited so far (or {n})", "BACKOFF_FLOOR_NS"),
    ("include/cw/wait.h", "times it ({n}, then every {n} by default)", "check_first_ns check_then_ns"),
    ("include/cw/wait.h", "every strategy reports a failure within {n} the interval", "check_bound_factor"),
    ("include/cw/stats.h", "backoff-poll delays longer than {n}, which it sleeps", "CW__MICRODELAY_SPIN_NS"),
    ("include/cw/stats.h", "µs ({n}) on.", "stats_last_bucket_from_us"),
    ("include/cw/stats.h", "callbacks come late (at least {n} after the command", "CW__LATE_FLOOR_NS"),
    ("include/cw/wait.h", "the first read also waits for {n} the expected wait on the event's queue"
     " (at most {n})", "CW__CHECK_EXPECTED_FACTOR CW__CHECK_EXPECTED_MAX_NS"),
]

# --- Other documents of the tree that state the same facts.
OTHER = [
    ("docs/design.md", "first after `check_interval_us` ({n} by default), then every {n} that ({n}),"
     " so a failure is reported within {n} the interval",
     "check_first_ns CW_CHECK_INTERVAL_GROWTH check_then_ns check_bound_factor"),
    ("docs/design.md", "checking the clock every {n} reads", "POLL_CLOCK_EVERY"),
    ("docs/design.md", "then calls `sched_yield` {n} times", "CW_SPIN_PARK_YIELDS"),
    ("docs/design.md", "Delays up to {n} are spun", "CW__MICRODELAY_SPIN_NS"),
    ("docs/design.md", "timer slack is lowered to {n} for the wait", "BACKOFF_TIMERSLACK_NS"),
    ("docs/design.md", "is at most `spin_us` ({n} by default)", "CW_AUTO_SPIN_US_CAP"),
    ("docs/design.md", "sampled at most every {n} per thread", "CW__SPARE_SAMPLE_NS"),
    ("docs/design.md", "microdelay (spin ≤ {n}, else sleep", "CW__MICRODELAY_SPIN_NS"),
    ("docs/design.md", "`sleeps` (backoff-poll delays beyond {n})", "CW__MICRODELAY_SPIN_NS"),
    ("docs/design.md", "{n} log2-µs buckets (< 1, 1–2, 2–4 … µs, the last from {n} on)",
     "CW_STATS_LATENCY_BUCKETS stats_last_bucket_from_us"),
    ("docs/design.md", "it comes after `max(interval, {n} × expected)`, at most {n}, so",
     "CW__CHECK_EXPECTED_FACTOR CW__CHECK_EXPECTED_MAX_NS"),
    ("docs/design.md", "min({n} × expected, {n}))`", "CW__CHECK_EXPECTED_FACTOR CW__CHECK_EXPECTED_MAX_NS"),
    ("docs/design.md", "a lateness of at least {n} and at least E/{n}", "CW__LATE_FLOOR_NS late_share"),
    ("docs/design.md", "it reads the second marker's status for up to {n}, yielding", "CW__PROBE_SPIN_NS"),
    ("docs/design.md", "capped here at 1/{n} of the time waited so far", "hybrid_overshoot_share"),
    ("docs/design.md", "spun when shorter than {n}, parked", "BACKOFF_FLOOR_NS"),
    ("docs/design.md", "a parked auto wait expected to last at most {n} reads the status half way",
     "CW__PEEK_MAX_NS"),
    ("docs/design.md", "then on one wait in {n} per thread", "CW__PEEK_EVERY"),
    ("docs/design.md", "`platforms_late` (lateness of at least {n})", "CW__LATE_FLOOR_NS"),
    ("docs/design.md", "timed, until {n} of them have counted", "CW__VOTE_TRIALS"),
    ("docs/design.md", "(half of the {n} slept, or more", "CW__VOTE_TRIALS"),
    ("docs/design.md", "Only a wait expected  to last at most {n}, by its", "CW__VOTE_TRIAL_MAX_NS"),
    ("docs/design.md", "(above) that returned within {n}: it too", "CW__MICRODELAY_SPIN_NS"),
    ("docs/design.md", "a trial of {n} or more that took {n}/{n} of its wall time",
     "CW__VOTE_MIN_NS CW__VOTE_THROUGH CW__VOTE_THROUGH_OF"),
    ("docs/design.md", "One lasting {n} to", "CW__VOTE_SPUN_MIN_NS"),
    ("docs/design.md", "taking at least 1/{n} of its wall time in thread CPU", "CW__VOTE_SPUN_SHARE"),
    ("docs/design.md", "of those lasting at least {n} slept if", "CW__VOTE_MIN_NS"),
    ("docs/design.md", "until each counted {n} waits of at least {n}, or {n}  trials were handed out",
     "CW__CLASS_TRIALS CW__VOTE_MIN_NS CW__CLASS_TICKETS"),
    ("docs/design.md", "Waits expected  to last {n} or more are of no class", "CW__CLASS_NEAR_END_NS"),
    ("docs/design.md", "Waits expected to last under {n} decide  apart too ({n} waits each way,"
     " however short, {n} tickets)",
     "CW__VOTE_MIN_NS CW__CLASS_TRIALS CW__CLASS_TICKETS"),
    ("docs/design.md", "is at most {n}/8 of the callback wait's", "CW__CLASS_DRIVER_EDGE"),
    ("docs/design.md", "less {n} (a sleeping wait's fixed cost", "CW__VOTE_FIXED_NS"),
    ("docs/design.md", "is under 1/{n} of its wall time. One lasting", "CW__VOTE_CPU_SHARE"),
    ("docs/design.md", "it wakes 1/{n} of the expected wait before its end", "hybrid_early_share"),
    ("docs/design.md", "no further apart than\n  1/{n} of the expected wait (at least {n})",
     "late_fine_share CW__LATE_FINE_LEAST_NS"),
    ("docs/design.md", "longer of {n} L (from there on a poll", "late_poll_factor"),
    ("docs/design.md", "and one in {n} per thread,", "CW__LATE_SAMPLE_EVERY"),
    ("docs/design.md", "no shorter than the shortest that is slept ({n}: a command", "late_first_delay_ns"),
    ("docs/design.md", "keeps the delays of a wait's first {n} under it", "late_floor_reach_ns"),
    ("docs/design.md", "overshoot by 1/{n} of the", "hybrid_overshoot_share"),
    ("docs/design.md", "toward the expected end may last 1/{n} of the expected wait",
     "hybrid_least_share"),
    ("docs/design.md", "answered up to 1/{n} of the expected wait late", "hybrid_least_share"),
    ("docs/design.md", "its delays past that end capped at 1/{n} of the time waited", "hybrid_overshoot_share"),
    ("docs/cw-run-internals.md", "after its check interval ({n} by default) and then every {n} that",
     "check_first_ns CW_CHECK_INTERVAL_GROWTH"),
    ("docs/cw-run.md", "`auto` spins for (1 to {n})", "CW_SPIN_US_MAX"),
    ("docs/cw-run-internals.md", "check no sooner than {n} the wait it expects on the event's queue"
     " (up to {n})", "CW__CHECK_EXPECTED_FACTOR CW__CHECK_EXPECTED_MAX_NS"),
    ("docs/man/cw_advice_get.3", "A wait under {n} found its commands as good as done",
     "CW__MICRODELAY_SPIN_NS"),
    ("include/cw/advice.h", "done (under {n}, as cw_wait judges its own waits", "CW__MICRODELAY_SPIN_NS"),
    ("docs/cw-run-internals.md", "(after {n}, then every {n};", "check_first_ns check_then_ns"),
]

# Values that live in one source file: key -> (file, #define names multiplied).
FROM_SOURCE = {
    "BACKOFF_FLOOR_NS": ("src/strategy.h", ["CW__BACKOFF_FLOOR_NS"]),
    "BACKOFF_TIMERSLACK_NS": ("src/ways.h", ["CW__POLL_TIMERSLACK_NS"]),
    "POLL_CLOCK_EVERY": ("src/ways_poll.c", ["POLL_CLOCK_EVERY"]),
    "pool_completions": ("src/completion.c", ["CHUNK_SLOTS", "MAX_CHUNKS"]),
    "BACKOFF_OVERSHOOT_SHIFT": ("src/ways_poll.c", ["BACKOFF_OVERSHOOT_SHIFT"]),
}

# Every tunable of auto (src/tunables.h) is a value by its own name, and
# docs/tunables.md is that table for readers: check_tunables compares them.
TUNABLES = "src/tunables.h"

# Values computed from the others.
DERIVED = {
    # A failure is seen by the next check: at most this many first intervals later.
    "check_bound_factor": lambda v: v["check_then_ns"] // v["check_first_ns"],
    # spin_until and the spin lock: rounds of 1, 2, 4 ... pauses.
    "backoff_longest_round": lambda v: 2 ** (v["CW__BACKOFF_ROUNDS"] - 1),
    "stats_last_bucket": lambda v: v["CW_STATS_LATENCY_BUCKETS"] - 1,
    # Late: at least 1/2^shift of the expected wait; the hybrid's polls past it.
    "late_share": lambda v: 2 ** v["CW__LATE_SHARE_SHIFT"],
    "hybrid_overshoot_share": lambda v: 2 ** v["CW__LATE_POLL_SHIFT"],
    "hybrid_early_share": lambda v: 2 ** v["CW__LATE_EARLY_SHIFT"],
    # The late and hybrid waits' first sleep: this share of the expected wait.
    "hybrid_least_share": lambda v: 2 ** v["CW__LATE_LEAST_SHIFT"],
    # The late wait polls through this many times the lateness.
    "late_poll_factor": lambda v: 2 ** v["CW__LATE_POLL_SHIFT"],
    "backoff_overshoot_share": lambda v: 2 ** v["BACKOFF_OVERSHOOT_SHIFT"],
    # The late wait's first delay past the end: just past the spin bound.
    "late_first_delay_ns": lambda v: v["CW__MICRODELAY_SPIN_NS"] + 1000,
    "late_floor_reach_ns": lambda v: (v["CW__MICRODELAY_SPIN_NS"] + 1000) * 2 ** v["CW__LATE_POLL_SHIFT"],
    "stats_last_bucket_from_us": lambda v: 2 ** (v["CW_STATS_LATENCY_BUCKETS"] - 2),
    "late_fine_share": lambda v: 2 ** v["CW__LATE_FINE_SHIFT"],
    # Julian years of 365.25 days, rounded down.
    "timeout_none_years": lambda v: v["timeout_none_from_us"] // (31557600 * 10**6),
}

# What the code must hold for the documents' description of the schedule to
# be true at all: "first after the interval, then every GROWTH times it".
CODE = [
    ("check_first_ns", lambda v: v["CW_CHECK_INTERVAL_US_DEFAULT"] * 1000),
    ("check_then_ns", lambda v: v["check_first_ns"] * v["CW_CHECK_INTERVAL_GROWTH"]),
    ("check_settled_ns", lambda v: v["check_then_ns"]),
    # "after max(interval, FACTOR x expected), at most MAX"
    ("check_expected_100ms_ns", lambda v: max(v["check_first_ns"],
                                              v["CW__CHECK_EXPECTED_FACTOR"] * 100000000)),
    ("check_expected_cap_ns", lambda v: v["CW__CHECK_EXPECTED_MAX_NS"]),
]

NS_PER = {"ns": 1, "us": 1000, "ms": 10**6, "s": 10**9}
UNIT_WORDS = {
    "ns": "ns", "nanosecond": "ns", "nanoseconds": "ns",
    "us": "us", "µs": "us", "\\(mcs": "us", "microsecond": "us", "microseconds": "us",
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "second": "s", "seconds": "s",
}
NUMBER = r"twice|\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?(?:\^\d+)?"
UNIT = (r"(?:(?:[ \u00a0]|\\ |\\~)?(?P<%s>nanoseconds?|microseconds?|milliseconds?|seconds?"
        r"|ns|us|µs|\\\(mcs|ms|s)(?![A-Za-z]))?")
STRATEGY = r"CW_STRATEGY_[A-Z_]+|[a-z](?:[a-z]|\\?-)*[a-z]"
SPACE = r"(?:\s|\\ |\\~)+"


def unit_of(key):
    if re.search(r"_ns(_|$)", key, re.I):
        return "ns"
    if re.search(r"_us(_|$)", key, re.I):
        return "us"
    return None


def number(text):
    text = text.replace(",", "")
    if text == "twice":
        return fractions.Fraction(2)
    if "^" in text:
        base, exp = text.split("^")
        return fractions.Fraction(int(base) ** int(exp))
    return fractions.Fraction(text)


def show(value, unit):
    if not isinstance(value, int) or unit is None:
        return str(value)
    ns = value * NS_PER[unit]
    best = max((u for u in ("ns", "us", "ms", "s") if ns % NS_PER[u] == 0), key=NS_PER.get)
    extra = f" ({ns // NS_PER[best]} {best})" if best != unit else ""
    return f"{value} {unit}{extra}"


def compile_pattern(pattern):
    """The regex of a pattern, and the kind ('n' or 'w') of each of its groups in turn."""
    out, kinds = [], []
    for part in re.split(r"(\{n\}|\{w\}|\{\.\.\}| +)", pattern):
        if part == "{n}":
            i = len(kinds)
            out.append(f"(?P<n{i}>{NUMBER})(?:u(?![A-Za-z]))?" + UNIT % f"u{i}")
            kinds.append("n")
        elif part == "{w}":
            out.append(f"(?P<n{len(kinds)}>{STRATEGY})")
            kinds.append("w")
        elif part == "{..}":
            out.append(r"[\s\S]{0,200}?")
        elif part and part.strip() == "":
            out.append(SPACE)
        else:
            out.append(re.escape(part))
    return re.compile("".join(out)), kinds


def strategy_name(text):
    text = text.replace("\\", "")
    if text.startswith("CW_STRATEGY_"):
        return text[len("CW_STRATEGY_"):].lower().replace("_", "-")
    return text


def differs(said, unit, key, values):
    """None when the statement `said` (with `unit`) is the value of `key`, else what the code has."""
    value = values[key]
    if isinstance(value, str) or isinstance(said, str):
        return None if said == value else str(value)
    vunit = unit_of(key)
    want = fractions.Fraction(value)
    if unit is not None:
        if vunit is None:
            return f"{value} (no unit)"
        want = want * NS_PER[vunit] / NS_PER[unit]
    return None if round(want, said[1]) == said[0] else show(value, vunit)


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def read_values(root, program):
    values = {}
    out = subprocess.run([program], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        name, value = line.split(None, 1)
        values[name] = int(value) if re.fullmatch(r"-?\d+", value) else value
    for key, (path, names) in FROM_SOURCE.items():
        text = (root / path).read_text(encoding="utf-8")
        product = 1
        for name in names:
            m = re.search(rf"^#define\s+{name}\s+(\d+)u?\b", text, re.M)
            if not m:
                raise SystemExit(f"docs_constants: no '#define {name} N' in {path}")
            product *= int(m.group(1))
        values[key] = product
    for name, value, _ in read_tunables(root):
        values[name] = value
    for key, derive in DERIVED.items():
        values[key] = derive(values)
    return values


TUNABLE_LINE = re.compile(r"^#define\s+(CW__[A-Z0-9_]+)\s+(\d+)(?:u|ull)?\s*/\*\s*(.*?)\s*\*/\s*$")


def read_tunables(root):
    """(name, value, [unit, why, source]) of each line of src/tunables.h."""
    out = []
    for line in (root / TUNABLES).read_text(encoding="utf-8").splitlines():
        if line.startswith("#define CW__") and not line.startswith("#define CW_TUNABLES_H"):
            m = TUNABLE_LINE.match(line)
            if not m:
                raise SystemExit(f"docs_constants: {TUNABLES}: not 'name value /* unit | why | source */': {line}")
            parts = [p.strip() for p in m.group(3).split("|")]
            if len(parts) != 3 or not all(parts):
                raise SystemExit(f"docs_constants: {TUNABLES}: {m.group(1)}: want 'unit | why | source'")
            out.append((m.group(1), int(m.group(2)), parts))
    return out


def tunables_table(root):
    """docs/tunables.md's table, as tests/tree/tunables_md.py writes it."""
    rows = ["| Name | Value | Unit | Why | Source |", "| --- | --- | --- | --- | --- |"]
    for name, value, (unit, why, source) in read_tunables(root):
        rows.append(f"| `{name}` | {value} | {unit} | {why} | {source} |")
    return "\n".join(rows) + "\n"


def check_tunables(root, values, failures):
    """docs/tunables.md holds src/tunables.h's table as it is, and no other
    file of src/ defines a tunable's name."""
    doc = (root / "docs/tunables.md").read_text(encoding="utf-8")
    if tunables_table(root) not in doc:
        failures.append("docs/tunables.md: its table is not src/tunables.h's "
                        "(run tests/tree/docs_constants.py --write-tunables ROOT)")
    names = {name for name, _, _ in read_tunables(root)}
    for path in sorted((root / "src").glob("*.[ch]")):
        if path.name == "tunables.h":
            continue
        for m in re.finditer(r"^#define\s+(CW__[A-Z0-9_]+)\b", path.read_text(encoding="utf-8"), re.M):
            if m.group(1) in names:
                failures.append(f"src/{path.name}: defines {m.group(1)}, a tunable of src/tunables.h")
    return len(names)


def check_statements(root, values, tables, failures):
    checked = 0
    texts = {}
    for path, pattern, keys in tables:
        if path not in texts:
            texts[path] = (root / path).read_text(encoding="utf-8")
            if path.endswith(".h"):  # a comment's leading " * " is white space
                texts[path] = re.sub(r"(?m)^[ \t]*\*(?!/) ?", " ", texts[path])
        text = texts[path]
        regex, kinds = compile_pattern(pattern)
        keys = keys.split()
        if len(keys) != len(kinds):
            raise SystemExit(f"docs_constants: {len(kinds)} values in '{pattern}', {len(keys)} keys")
        found = 0
        for m in regex.finditer(text):
            found += 1
            for i, (kind, key) in enumerate(zip(kinds, keys)):
                raw = m.group(f"n{i}")
                if kind == "w":
                    said, unit = strategy_name(raw), None
                else:
                    unit = UNIT_WORDS[m.group(f"u{i}")] if m.group(f"u{i}") else None
                    decimals = len(raw.split(".")[1]) if "." in raw else 0
                    said = (number(raw), decimals)
                for one in key.split("="):
                    checked += 1
                    has = differs(said, unit, one, values)
                    if has is not None:
                        where = f"{path}:{line_of(text, m.start(f'n{i}'))}"
                        failures.append(f"{where}: says {raw}{' ' + unit if unit else ''}, "
                                        f"the code has {one} = {has}")
        if not found:
            failures.append(f"{path}: the statement '{pattern}' is not there any more "
                            f"(change the pattern in tests/tree/docs_constants.py with the text)")
    return checked


MACRO_PAREN = re.compile(r"\b(CW_[A-Z0-9_]+)\b[\s`\"*]*\((\\-|-)?(" + NUMBER + r")(?:u(?![A-Za-z]))?"
                         + UNIT % "unit" + r"(?=[),\s])")
MACRO_DEFINE = re.compile(r"#define\s+(CW_[A-Z0-9_]+)\s+(-?)(\d+)u?\b()")


def check_macros(root, values, failures):
    """Every "CW_NAME (N)" and "#define CW_NAME N" against CW_NAME's value."""
    checked = 0
    paths = sorted((root / "docs/man").glob("*.[13]")) + sorted((root / "include/cw").glob("*.h"))
    paths += [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    for path in paths:
        text = path.read_text(encoding="utf-8")
        for regex in (MACRO_PAREN, MACRO_DEFINE):
            for m in regex.finditer(text):
                name = m.group(1)
                if name not in values or name == "CW_VERSION_NUMBER":
                    continue
                checked += 1
                raw = ("-" if m.group(2) else "") + m.group(3)
                unit = UNIT_WORDS[m.group(4)] if m.group(4) else None
                said = (number(raw.lstrip("-")) * (-1 if raw.startswith("-") else 1), 0)
                has = differs(said, unit, name, values)
                if has is not None:
                    rel = path.relative_to(root)
                    failures.append(f"{rel}:{line_of(text, m.start(3))}: says {name} is {raw}"
                                    f"{' ' + unit if unit else ''}, the code has {has}")
    return checked


def write_tunables(root):
    """Rewrite the table of docs/tunables.md (between its markers) from src/tunables.h."""
    path = root / "docs/tunables.md"
    doc = path.read_text(encoding="utf-8")
    begin, end = "<!-- tunables: begin -->\n", "<!-- tunables: end -->"
    a, b = doc.index(begin) + len(begin), doc.index(end)
    path.write_text(doc[:a] + tunables_table(root) + doc[b:], encoding="utf-8")
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--write-tunables":
        return write_tunables(pathlib.Path(sys.argv[2]))
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    root, program = pathlib.Path(sys.argv[1]), sys.argv[2]
    values = read_values(root, program)
    failures = []
    for key, want in CODE:
        if values[key] != want(values):
            failures.append(f"code: {key} = {values[key]}, but the documents' schedule needs "
                            f"{want(values)} (first interval, then GROWTH times it, for good)")
    checked = check_statements(root, values, README + MAN + HEADERS + OTHER, failures)
    macros = check_macros(root, values, failures)
    tunables = check_tunables(root, values, failures)
    for line in failures:
        print(line)
    statements = len(README + MAN + HEADERS + OTHER)
    print(f"docs.constants: {statements} statements ({checked} values) and {macros} "
          f"CW_NAME (N) mentions and {tunables} tunables checked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
