#!/usr/bin/env python3
"""l1-watchdog.py: find and end L1's lost interrupts (QEMU 7.2 TCG).

  l1-watchdog.py QMP-SOCKET CPUS LOG

Run by run-l1.sh next to the L1 QEMU until that QEMU goes away.

Under QEMU 7.2's TCG with nested SVM, L1 sometimes stops taking an
interrupt its local APIC holds: the vector stays in the IRR, deliverable
(above the PPR), while L1 runs on with interrupts enabled -- in its own
user mode too -- for as long as no other interrupt reaches that APIC.  When
the vector is the local timer's, L1 never programs its timer again: no
tick, no preemption, no sleep ever ends, and the lab stalls until its
timeout (seen in the libvirt lab at random scenarios, with the busy L2
polling its serial port; docs/lab-internals.md, "Limits of QEMU 7.2's TCG").  Any
new interrupt makes QEMU look at the APIC again, and L1 then takes the
stuck vector at once.

So twice a second this reads each vCPU's APIC through QMP.  A deliverable
vector that stays pending, unchanged, for STUCK_SECONDS is the defect (a
healthy L1 takes its interrupts within microseconds of its time); the
watchdog then presses and releases Shift on the emulated PS/2 keyboard
(IRQ 1, routed to vCPU 0; no character reaches any tty) and writes one line
per kick to LOG.  A vCPU other than 0 is written down but not kicked: L1's
own IPIs reach it.
"""
import json
import re
import socket
import sys
import time

STUCK_SECONDS = 1.5
POLL_SECONDS = 0.5


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.buf = b""
        self.read()  # the greeting
        self.call("qmp_capabilities")

    def read(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, cmd, **args):
        self.sock.sendall(json.dumps({"execute": cmd, "arguments": args}).encode())
        while True:
            msg = self.read()
            if "return" in msg:
                return msg["return"]
            if "error" in msg:
                raise RuntimeError(msg["error"]["desc"])

    def hmp(self, line):
        return self.call("human-monitor-command", **{"command-line": line})


def pending(lapic):
    """(IRR vectors, PPR) of one `info lapic` text."""
    irr = re.search(r"^IRR\s+(.*)$", lapic, re.M)
    ppr = re.search(r"PPR 0x([0-9a-f]+)", lapic)
    if not irr or not ppr:
        return (), 0
    vectors = tuple(int(v) for v in irr.group(1).split() if v.isdigit())
    return vectors, int(ppr.group(1), 16)


def connect(path):
    for _ in range(600):
        try:
            return Qmp(path)
        except (FileNotFoundError, ConnectionRefusedError, EOFError):
            time.sleep(0.1)
    return None


def main():
    path, cpus, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    qmp = connect(path)
    if qmp is None:
        return 0
    start = time.monotonic()
    seen = {}  # cpu -> (IRR vectors, first seen)
    with open(log, "a", buffering=1) as out:
        try:
            while True:
                time.sleep(POLL_SECONDS)
                now = time.monotonic()
                for cpu in range(cpus):
                    vectors, ppr = pending(qmp.hmp(f"info lapic {cpu}"))
                    deliverable = vectors and (max(vectors) >> 4) > (ppr >> 4)
                    if not deliverable:
                        seen.pop(cpu, None)
                        continue
                    if seen.get(cpu, ((), 0))[0] != vectors:
                        seen[cpu] = (vectors, now)
                        continue
                    held = now - seen[cpu][1]
                    if held < STUCK_SECONDS:
                        continue
                    what = (f"{now - start:.0f} s: vCPU {cpu}: vector {max(vectors)} pending in "
                            f"the IRR for {held:.1f} s (PPR {ppr:#x})")
                    if cpu == 0:
                        qmp.hmp("sendkey shift")
                        what += ": kicked with a keyboard interrupt"
                    out.write(f"l1-watchdog: {what}\n")
                    seen.pop(cpu)
        except (EOFError, ConnectionError, OSError):
            return 0  # QEMU is gone


if __name__ == "__main__":
    sys.exit(main())
