# svmtrace-steprec --mem on a real process whose every access is known: a
# static program (assembled here) that copies "svmtrace" with rep movsb,
# pushes and pops, calls a function that reads its return address, adds 1 to
# a quadword in memory, translates a byte with xlatb, stores with movnti and
# compares-and-exchanges in vain (forms whose operands Capstone 4 gets wrong
# or leaves out), and exits.  The accesses of every step, packed with
# `pack --mem` and printed by `dump --mem`, must be what the instructions
# define (addresses from the symbols and from RSP before each step, values
# from the program's data).
set -eu
. tests/lib/need.sh
need_cmd as "assembling the test program (binutils)"
need_cmd ld "linking the test program (binutils)"
need_cmd python3 "checking the accesses"

cat >"$WORK/prog.s" <<'EOF'
	.intel_syntax noprefix
	.data
src:	.ascii "svmtrace"
	.bss
dst:	.skip 16
	.text
	.globl _start
_start:
	lea rsi, [rip + src]
	lea rdi, [rip + dst]
	mov ecx, 8
	rep movsb
	mov rax, 0x1122334455667788
	push rax
	pop rbx
	call f
after_call:
	add qword ptr [rip + dst], 1
	lea rbx, [rip + src]
	mov eax, 2
	xlatb
	movnti qword ptr [rip + dst + 8], rbx
	lock cmpxchg qword ptr [rip + dst], rbx
	mov eax, 60
	xor edi, edi
	syscall
f:
	mov rdx, [rsp]
	ret
EOF
as -o "$WORK/prog.o" "$WORK/prog.s"
ld -static -o "$WORK/prog" "$WORK/prog.o"
nm "$WORK/prog" >"$WORK/syms"
"$BIN/svmtrace-steprec" --mem -o "$WORK/prog.raw" -- "$WORK/prog"
"$BIN/svmtrace-dump" pack --mem "$WORK/prog.raw.mem" "$WORK/prog.raw" "$WORK/prog.v5"
"$BIN/svmtrace-dump" dump --regs --format jsonl --mem "$WORK/prog.v5" >"$WORK/rows.jsonl"
python3 - "$WORK/rows.jsonl" "$WORK/syms" <<'PY'
import json, struct, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
sym = {l.split()[2]: int(l.split()[0], 16) for l in open(sys.argv[2]) if len(l.split()) == 3}
src, dst, after = sym["src"], sym["dst"], sym["after_call"]
ins = [r for r in rows if r["kind"] != "session_end"]
# record 0 is the state after `lea rsi` (the session start, no accesses); then:
want = [[]]                                  # lea rdi
want += [[]]                                 # mov ecx, 8
copy = []
for i in range(8):                           # rep movsb: one iteration per step
    c = b"svmtrace"[i:i + 1].hex()
    want.append([{"kind": "read", "addr": src + i, "size": 1, "read": c},
                 {"kind": "write", "addr": dst + i, "size": 1, "written": c}])
want += [[]]                                 # mov rax, imm64
n = len(want)
rsp0 = int(ins[n]["regs"]["rsp"], 16)       # the stack pointer before push
v = struct.pack("<Q", 0x1122334455667788).hex()
want.append([{"kind": "write", "addr": rsp0 - 8, "size": 8, "written": v}])        # push rax
want.append([{"kind": "read", "addr": rsp0 - 8, "size": 8, "read": v}])           # pop rbx
r = struct.pack("<Q", after).hex()
want.append([{"kind": "write", "addr": rsp0 - 8, "size": 8, "written": r}])        # call f
want.append([{"kind": "read", "addr": rsp0 - 8, "size": 8, "read": r}])           # mov rdx, [rsp]
want.append([{"kind": "read", "addr": rsp0 - 8, "size": 8, "read": r}])           # ret
old = b"svmtrace"
new = struct.pack("<Q", struct.unpack("<Q", old)[0] + 1)
want.append([{"kind": "rmw", "addr": dst, "size": 8, "read": old.hex(), "written": new.hex()}])
want += [[], []]                             # lea rbx, [rip + src]; mov eax, 2
want.append([{"kind": "read", "addr": src + 2, "size": 1, "read": "6d"}])         # xlatb: 'm'
want.append([{"kind": "write", "addr": dst + 8, "size": 8,                       # movnti
              "written": struct.pack("<Q", src).hex()}])
want.append([{"kind": "rmw", "addr": dst, "size": 8, "read": new.hex(), "written": new.hex()}])
want += [[], []]                             # mov eax, 60; xor edi, edi
got = [[dict(a, addr=int(a["addr"], 16)) for a in r["mem"]] for r in ins[1:]]
assert len(got) == len(want), "%d steps recorded, the program makes %d" % (len(got), len(want))
for i, w in enumerate(want):
    assert got[i] == w, "step %d (rip %s): %s, want %s" % (i + 1, ins[i + 1]["rip"], got[i], w)
assert int(ins[n + 2]["regs"]["rbx"], 16) == 0x1122334455667788
print("ok: %d steps, %d accesses as the instructions define" % (len(want), sum(len(w) for w in want)))
PY
