# svmtrace-dump report: one self-contained HTML page, opened in a real
# headless browser (Debian's chromium): every figure is drawn (the page's
# script marks <body data-figures="4"> only after drawing all four), no
# script error is logged, the page fetches nothing, and the screenshot
# shows the timeline's two module colours.  A copy of the page whose
# script throws must be caught by the same checks.
set -eu
. tests/lib/need.sh
need_cmd python3 "the sample program and the PNG check"
need_cmd chromium "rendering the report in a real browser (Debian's chromium)"

D="$BIN/svmtrace-dump"
S=$WORK/s
mkdir -p "$S"
python3 tests/cli/analysis/sample.py "$S"
"$D" pack "$S/raw" "$S/svmtrace_trace_cpu0.bin"
"$D" report --out "$WORK/r.html" "$S/svmtrace_trace_cpu0.bin"

# Self-contained: no URL it could fetch (the SVG namespace is a name, not a fetch).
if grep -Eo '(src|href)=|https?://[^"'"'"' ]*' "$WORK/r.html" | grep -v '^http://www.w3.org/2000/svg$'; then
	echo "the report refers to outside resources"; exit 1
fi
grep -q "default-src 'none'" "$WORK/r.html"

browse() {	# browse HTML OUT-PREFIX: DOM and console log, then a screenshot
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$WORK/profile" --enable-logging=stderr --v=0 \
		--dump-dom "file://$1" >"$2.dom" 2>"$2.log" || true
	timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$WORK/profile" --window-size=1200,1500 \
		--screenshot="$2.png" "file://$1" >/dev/null 2>&1 || true
}
browse "$WORK/r.html" "$WORK/good"
grep -q 'data-figures="4"' "$WORK/good.dom" || { echo "not every figure was drawn"; cat "$WORK/good.log"; exit 1; }
if grep -E 'CONSOLE.*(Uncaught|Error)' "$WORK/good.log"; then echo "script errors"; exit 1; fi
bars=$(grep -o 'class="bar"' "$WORK/good.dom" | wc -l)
[ "$bars" -ge 120 ] || { echo "only $bars bars drawn"; exit 1; }
grep -q 'hidden.exe!helper' "$WORK/good.dom"
grep -q 'ntdll.dll!NtYield' "$WORK/good.dom"
[ -s "$WORK/good.png" ] || { echo "no screenshot"; exit 1; }
colors=$(python3 tests/cli/analysis/png_colors.py "$WORK/good.png" 4e79a7 f28e2b)
echo "screenshot: $colors"
blue=$(echo "$colors" | sed 's/.*4e79a7=\([0-9]*\).*/\1/')
orange=$(echo "$colors" | sed 's/.*f28e2b=\([0-9]*\).*/\1/')
[ "$blue" -gt 20000 ] && [ "$orange" -gt 2000 ] || { echo "the screenshot lacks the figures: $colors"; exit 1; }

# The checks catch a page whose script fails.
sed 's/figures++; }$/figures++; null.x; }/' "$WORK/r.html" >"$WORK/bad.html"
! cmp -s "$WORK/r.html" "$WORK/bad.html"
browse "$WORK/bad.html" "$WORK/bad"
if grep -q 'data-figures="4"' "$WORK/bad.dom"; then echo "a failing script went unnoticed"; exit 1; fi
grep -q 'CONSOLE.*Uncaught' "$WORK/bad.log" || { echo "the script error was not logged"; exit 1; }
echo "report: ok"
