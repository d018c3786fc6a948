# svmtraced refuses, with one line naming what to do, every VM and host it
# cannot trace: through libvirt's real built-in test driver (a running
# domain whose type is "test"; a node file with a shut-off KVM domain and a
# running one without QEMU), an unknown domain, a --vmm-pid without a KVM
# VM, a host without SVM, a missing /dev/svmtrace; and bad arguments.
set -eu
. tests/lib/need.sh
D="$BIN/svmtraced"

expect_fail() {	# expect_fail MESSAGE ARGS...: exits 1, stderr has MESSAGE on one line
	msg=$1
	shift
	rc=0
	"$D" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	[ "$rc" = 1 ] || { echo "expected exit 1, got $rc: $*"; cat "$WORK/err"; exit 1; }
	grep -qF -- "$msg" "$WORK/err" || { echo "stderr lacks '$msg':"; cat "$WORK/err"; exit 1; }
	[ "$(wc -l <"$WORK/err")" = 1 ] || { echo "more than one line:"; cat "$WORK/err"; exit 1; }
}

# libvirt: the test driver's domain "test" runs, but is not KVM.
expect_fail "domain 'test' is of type 'test', not KVM" --connect test:///default --domain test --pid 4
expect_fail "domain 'nosuch' not found on test:///default" \
	--connect test:///default --domain nosuch --pid 4
LIBVIRT_DEFAULT_URI=test:///default expect_fail "domain 'test' is of type 'test', not KVM" \
	--domain test --pid 4
expect_fail "names another host" --connect qemu+ssh://elsewhere/system --domain x --pid 4

# The test driver with a node of our own: KVM domains, one running, one shut
# off, found by name, UUID and ID.  The running one has no QEMU behind it.
cat >"$WORK/node.xml" <<'XML'
<node>
  <domain type='kvm'>
    <name>svmtrace-test-run</name>
    <uuid>5d6e0a52-7d31-4c4e-9a59-3c0b0d6f0001</uuid>
    <memory>1048576</memory>
    <vcpu>2</vcpu>
    <os><type arch='x86_64'>hvm</type></os>
  </domain>
  <domain type='kvm'>
    <name>svmtrace-test-off</name>
    <uuid>5d6e0a52-7d31-4c4e-9a59-3c0b0d6f0002</uuid>
    <memory>1048576</memory>
    <vcpu>1</vcpu>
    <os><type arch='x86_64'>hvm</type></os>
    <test:runstate xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>5</test:runstate>
  </domain>
</node>
XML
node="test://$WORK/node.xml"
for d in svmtrace-test-off 5d6e0a52-7d31-4c4e-9a59-3c0b0d6f0002; do
	expect_fail "domain 'svmtrace-test-off' is not running (shut off): start it first" \
		--connect "$node" --domain $d --pid 4
done
for d in svmtrace-test-run 5d6e0a52-7d31-4c4e-9a59-3c0b0d6f0001 1; do
	expect_fail "domain 'svmtrace-test-run': libvirt did not tell QEMU's PID" \
		--connect "$node" --domain $d --pid 4
done
expect_fail "domain '7' not found on $node" --connect "$node" --domain 7 --pid 4

# --vmm-pid of a process without a KVM VM.
expect_fail "--vmm-pid $$: the process holds no KVM VM" --vmm-pid $$ --pid 4

# A real process holding a real KVM VM, for the host checks behind it.
need_file /dev/kvm "a KVM VM to point --vmm-pid at"
mkfifo "$WORK/hold"
"$BIN/svmtrace-kvm-hold-vm" <"$WORK/hold" >"$WORK/ready" &
holder=$!
exec 3>"$WORK/hold"
i=0
while ! grep -q ready "$WORK/ready" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "svmtrace-kvm-hold-vm did not start"; exit 1; }
	sleep 0.05
done
printf 'processor\t: 0\nflags\t\t: fpu lm\n' >"$WORK/cpuinfo-nosvm"
printf 'processor\t: 0\nflags\t\t: fpu lm svm npt\n' >"$WORK/cpuinfo-svm"
SVMTRACED_CPUINFO="$WORK/cpuinfo-nosvm" expect_fail \
	"not an AMD SVM host: $WORK/cpuinfo-nosvm has no svm flag" --vmm-pid $holder --pid 4
if [ ! -e /dev/svmtrace ]; then
	SVMTRACED_CPUINFO="$WORK/cpuinfo-svm" expect_fail "/dev/svmtrace is missing" \
		--vmm-pid $holder --pid 4
fi
exec 3>&-
wait $holder

# Arguments.
expect_fail "exactly one of --domain or --vmm-pid" --pid 4
expect_fail "exactly one of --domain or --vmm-pid" --domain a --vmm-pid 1 --pid 4
expect_fail "exactly one of --pid, --name or --wait-name" --vmm-pid 1
expect_fail "exactly one of --pid, --name or --wait-name" --vmm-pid 1 --pid 4 --name a.exe
expect_fail "--newest is for --name" --vmm-pid 1 --pid 4 --newest
expect_fail "--connect is for --domain" --vmm-pid 1 --pid 4 --connect test:///default
expect_fail "--from next is for a running process" --vmm-pid 1 --wait-name b.exe \
	--from next
expect_fail "--from: expected entry, next or first" --vmm-pid 1 --pid 4 --from start
expect_fail "--follow traces the processes the target creates from their first instruction: it needs --from first" \
	--vmm-pid 1 --pid 4 --follow
expect_fail "--max-processes is for --follow" --vmm-pid 1 --pid 4 --from first --max-processes 2
expect_fail "--max-processes 129: expected 1..128" --vmm-pid 1 --pid 4 --from first --follow \
	--max-processes 129
expect_fail "--max-bytes: expected an unsigned number" --vmm-pid 1 --pid 4 --max-bytes 10X
expect_fail "--wait-name 'C:\\x.exe': expected an image file name" --vmm-pid 1 \
	--wait-name 'C:\x.exe'
expect_fail "--pid 0: expected a Windows process ID" --vmm-pid 1 --pid 0
expect_fail "--resolve-timeout: expected seconds > 0" --vmm-pid 1 --pid 4 --resolve-timeout 0

# status / stop without a daemon.
"$D" status --socket "$WORK/none.sock" >"$WORK/out" 2>"$WORK/err" && exit 1
grep -qF "$WORK/none.sock: No such file or directory" "$WORK/err"
echo "svmtraced refusals: ok"
