# Every command a doc shows in a code block exists: the make target, the
# program (build/bin or a script of the tree) and each long option given
# to it (in its --help, or the script's text); every `make X` quoted in
# the text too (check_docs.py).
set -eu
cd "${TOP:-.}"
python3 tests/docs/check_docs.py commands "$BIN"
