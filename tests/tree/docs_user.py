# SPDX-License-Identifier: MIT
"""What the user-facing docs state, checked against the code and each other.

Usage: docs_user.py ROOT

  links     every relative link of every tracked .md file names a file that
            exists and, with #anchor, a heading of it (GitHub's anchors)
  cw-run    docs/cw-run.md is the user's page: at most 200 lines; its
            example profile matches, line by line, the formats that
            tools/cw-run/profile.c prints, and shows every kind of line
            but the optional ones
  auto      cw_wait(3)'s entry for CW_STRATEGY_AUTO is short (at most 240
            words of text) and points at docs/design.md for the rules
  terms     docs/design.md defines "trials" and "tickets" once, in bold,
            and uses no name for a wait it does not define
  stats     cw_stats_get(3) says one thing of cw_stats_reset: it leaves the
            platform fields alone, as src/stats.c does
  waitall   cw_wait_all(3) says, in its DESCRIPTION's opening, that the
            strategy and spin_us are ignored and what cw_wait_any reports
            on a timeout

Prints one line per check and exits 1 when any failed.
"""
import os
import re
import subprocess
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
failures = []


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def fail(check, what):
    failures.append(f"{check}: {what}")


def tracked_md():
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "*.md"], capture_output=True,
                             text=True, check=True).stdout.split()
        if out:
            return out
    except (OSError, subprocess.CalledProcessError):
        pass
    found = []
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = [x for x in dirs if not x.startswith(("build", ".git"))]
        found += [os.path.relpath(os.path.join(d, f), ROOT) for f in files if f.endswith(".md")]
    return found


def anchors(text):
    """GitHub's anchors of a markdown page's headings."""
    seen = {}
    out = set()
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def check_links():
    n = 0
    for md in tracked_md():
        text = read(md)
        text_nocode = re.sub(r"```.*?```", "", text, flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text_nocode):
            if re.match(r"[a-z]+:", target):
                continue
            n += 1
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
            if not os.path.exists(os.path.join(ROOT, dest)):
                fail("links", f"{md}: ({target}): no {dest}")
                continue
            if anchor and dest.endswith(".md") and anchor not in anchors(read(dest)):
                fail("links", f"{md}: ({target}): no heading #{anchor} in {dest}")
    return f"links: {n} relative links"


def c_format_regex(fmt):
    """A printf format string as a regex of what it prints."""
    out = ""
    i = 0
    while i < len(fmt):
        m = re.match(r"%([-+ 0#]*)(\d+)?(\.\d+)?(ll|l|z)?([sdufx%])", fmt[i:])
        if m:
            conv = {"s": r"\S.*?", "d": r"-?\d+", "u": r"\d+", "x": r"[0-9a-f]+",
                    "f": r"-?\d+(\.\d+)?", "%": "%"}[m.group(5)]
            # A width pads with blanks: before the value, after it with '-'.
            if m.group(2):
                conv = conv + " *" if "-" in m.group(1) else " *" + conv
            out += conv
            i += m.end()
        else:
            out += re.escape(fmt[i])
            i += 1
    return out


def profile_formats():
    """The formats of the lines print_table and print_table_auto write."""
    src = read("tools/cw-run/profile.c")
    body = src[src.index("static void print_table_auto"):src.index("/* Every interposed call")]
    body = re.sub(r'"\s*PRIu64\s*"', "llu", body)
    body = re.sub(r'"\s*PRIu64\s*,', 'llu",', body)
    formats = []
    for call in re.finditer(r"fprintf\(f,((?:\s*\"(?:[^\"\\]|\\.)*\")+)", body):
        lits = re.findall(r"\"((?:[^\"\\]|\\.)*)\"", call.group(1))
        fmt = "".join(lits).encode().decode("unicode_escape")
        # " %s:%llu" is a piece of the latency line, written in a loop.
        if not fmt.startswith(" "):
            formats.append(fmt)
    return formats


def check_cwrun():
    page = read("docs/cw-run.md")
    lines = page.count("\n")
    if lines > 200:
        fail("cw-run", f"docs/cw-run.md has {lines} lines, more than 200")
    m = re.search(r"```\n(cw-run: wait profile of pid .*?)```", page, re.S)
    if not m:
        fail("cw-run", "docs/cw-run.md has no example profile")
        return "cw-run: no example"
    example = m.group(1).splitlines()
    regexes = []
    for fmt in profile_formats():
        for part in fmt.split("\n"):
            if part:
                regexes.append((part, c_format_regex(part)))
    # The latency line is written in pieces: its head, then " label:count".
    kinds_seen = set()
    for line in example:
        # The most specific format that prints it: the one with the most
        # literal text (the table's header, all %s, prints anything).
        hit = None
        for part, rx in regexes:
            tail = r"( \S+:\d+)*" if part.startswith("cw wake-up latency") else ""
            literal = len(re.sub(r"%[-+ 0#]*\d*(\.\d+)?(ll|l|z)?[sdufx%]", "", part)) + len(
                re.findall(r"%[-+ 0#]*\d*(\.\d+)?(ll|l|z)?[dufx]", part))
            if re.fullmatch(rx + tail, line) and (hit is None or literal > hit[1]):
                hit = (part, literal)
        hit = hit and hit[0]
        if hit is None:
            fail("cw-run", f"docs/cw-run.md's example line is not one profile.c prints: {line!r}")
        else:
            kinds_seen.add(hit)
    # Every kind of line, but the optional one (a file of what auto
    # learned) and the call table's (the same format for every row).
    for part, _ in regexes:
        optional = part.startswith("auto started from")
        if not optional and part not in kinds_seen:
            fail("cw-run", f"docs/cw-run.md's example lacks the line profile.c prints as {part!r}")
    return f"cw-run: {lines} lines, example of {len(example)} lines against {len(regexes)} formats"


def man_text(roff):
    """The words of a roff fragment, requests and escapes left out."""
    text = re.sub(r"^\.(B|BR|I|IR|RB|BI|IB|RI)\s+", "", roff, flags=re.M)
    text = re.sub(r"^\.\S+.*$", "", text, flags=re.M)
    text = re.sub(r"\\\(\w\w|\\[&-]|\\ ", " ", text)
    return text.split()


def check_auto():
    page = read("docs/man/cw_wait.3")
    m = re.search(r"\.BR CW_STRATEGY_AUTO \" \(\\\(dqauto\\\(dq\)\"\n(.*?)\n\.(PP|TP|SS|SH)\b",
                  page, re.S)
    if not m:
        fail("auto", "cw_wait(3) has no entry for CW_STRATEGY_AUTO")
        return "auto: no entry"
    words = man_text(m.group(1))
    if len(words) > 240:
        fail("auto", f"cw_wait(3)'s auto entry has {len(words)} words, more than 240: "
             "the rules belong in docs/design.md")
    if "docs/design.md" not in m.group(1):
        fail("auto", "cw_wait(3)'s auto entry does not point at docs/design.md")
    for internal in ("ticket", "Thue", "settled"):
        if internal in m.group(1):
            fail("auto", f"cw_wait(3)'s auto entry speaks of {internal!r}, an internal term")
    return f"auto: {len(words)} words"


def check_terms():
    text = read("docs/design.md")
    for term in ("trials", "tickets"):
        n = text.count(f"**{term}**")
        if n != 1:
            fail("terms", f"docs/design.md defines **{term}** {n} times, not once")
    for undefined in ("settled own wait", "the row's way", "ticket word"):
        if undefined in text:
            fail("terms", f"docs/design.md uses {undefined!r}, which it does not define")
    if "**tickets**" in text and text.find("tickets") < text.find("**tickets**"):
        fail("terms", "docs/design.md speaks of tickets before it defines them")
    return "terms: trials, tickets"


def check_stats():
    page = read("docs/man/cw_stats_get.3")
    code = read("src/stats.c")
    reset = code[code.index("void cw_stats_reset"):code.index("int cw_stats_auto_get")]
    if "cw__driver" in reset:
        fail("stats", "src/stats.c's reset now touches the platform fields: change the page")
    if re.search(r"sets every counter to zero, those of\s+\.B cw_stats_auto\s+included", page):
        fail("stats", "cw_stats_get(3) says a reset zeroes cw_stats_auto's fields too")
    desc = page[page.index(".SH DESCRIPTION"):page.index(".SS")]
    if "leaves alone" not in " ".join(desc.split()):
        fail("stats", "cw_stats_get(3)'s DESCRIPTION does not say what a reset leaves alone")
    return "stats: the reset"


def check_waitall():
    page = read("docs/man/cw_wait_all.3")
    desc = page[page.index(".SH DESCRIPTION"):]
    opening = " ".join(desc[:desc.index(".PP\nBoth wait on one thread")].split())
    for said in ("and then ignored", "CW_ERR_TIMEOUT", "events [0]"):
        if said not in opening:
            fail("waitall", f"cw_wait_all(3)'s opening does not say {said!r}")
    return "waitall: strategy, spin_us, the timeout"


for check in (check_links, check_cwrun, check_auto, check_terms, check_stats, check_waitall):
    print(check())
for f in failures:
    print("FAIL " + f, file=sys.stderr)
print(f"docs_user: {len(failures)} failures")
sys.exit(1 if failures else 0)
