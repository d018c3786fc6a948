# Every docs/NAME.md a file of the tree points to exists, and so does
# every section it names (`docs/NAME.md, "Section"`): the docs move, the
# pointers in code, scripts and other docs move with them (check_docs.py).
set -eu
cd "${TOP:-.}"
python3 tests/docs/check_docs.py references
