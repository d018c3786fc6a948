#!/bin/sh
# tests/lib/exports.sh LIBSVMTRACE.so INCLUDEDIR: the shared library exports
# exactly the functions and objects its installed headers declare (every
# svmtrace_* name of INCLUDEDIR/svmtrace/*.h that is called or indexed
# there), each under the version node LIBSVMTRACE_0; and a program built
# from the headers alone links against it and runs.
set -eu
so=$1 inc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: libsvmtrace exports: $*" >&2; exit 1; }

# Declared: identifiers before '(' or '[' in the preprocessed headers, less
# the static inline functions the headers define (compiled in, they are
# the object's local symbols).
for h in "$inc"/*.h; do echo "#include <svmtrace/${h##*/}>"; done >"$tmp/all.c"
cc -E -P -I"$(dirname "$inc")" "$tmp/all.c" | grep -oE '\bsvmtrace_[a-z0-9_]+ *[[(]' |
	sed 's/ *[[(]$//' | sort -u >"$tmp/named"
cc -c -fkeep-inline-functions -I"$(dirname "$inc")" -o "$tmp/all.o" "$tmp/all.c"
nm "$tmp/all.o" | awk '$2 == "t" { print $3 }' | sort -u >"$tmp/inline"
comm -23 "$tmp/named" "$tmp/inline" >"$tmp/declared"
# Exported: the dynamic symbols the library defines.
nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' | sed 's/@@*.*//' | sort -u >"$tmp/exported"
if ! diff -u "$tmp/declared" "$tmp/exported" >"$tmp/diff"; then
	cat "$tmp/diff" >&2
	fail "$so and $inc disagree ('-' declared, not exported; '+' exported, not declared)"
fi
bad=$(objdump -T "$so" | awk '$NF ~ /^svmtrace_/ && $(NF-1) != "LIBSVMTRACE_0"' | head -n 3)
[ -z "$bad" ] || fail "symbols outside version LIBSVMTRACE_0: $bad"

# A user's program: the headers, -lsvmtrace, nothing of the tree.
cat >"$tmp/use.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <svmtrace/trace.h>
int main(void)
{
	return strcmp(svmtrace_gpr_names[0], "rax") != 0;
}
C
cc -I"$(dirname "$inc")" -o "$tmp/use" "$tmp/use.c" -L"$(dirname "$so")" -lsvmtrace ||
	fail "a program using only the headers does not link against $so"
LD_LIBRARY_PATH=$(dirname "$so") "$tmp/use" || fail "svmtrace_gpr_names[0] is not \"rax\" through $so"
echo "libsvmtrace exports: $(wc -l <"$tmp/declared") names, as the headers declare them"
