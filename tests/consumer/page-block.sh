# SPDX-License-Identifier: MIT
# Sourced by the scripts that run a page's commands as written
# (readme.sh, first-program-prefix.sh): page_block PAGE NAME prints the
# fenced block that follows the line "<!-- readme-test: NAME -->" in PAGE.
page_block() {
    awk -v want="<!-- readme-test: $2 -->" '
        $0 == want { found = 1; next }
        found == 1 && /^```/ { found = 2; next }
        found == 2 && /^```/ { exit }
        found == 2 { print }' "$1"
}
