#!/usr/bin/env python3
"""Helpers for tests/vmi/qemu_core.sh: the guest's parameters, QMP, ELF facts.

  core.py params ELF RAW STUB TABLES  patch the stub's parameter block with
                                      vCPU 0 of the generator's ELF core
                                      (CR3, GS bases, IDTR, CR4.LA57) and
                                      TABLES
  core.py split RAW LOW HIGH          RAW without 0xa0000..0xfffff (ROM and
                                      VGA hole, where a loader cannot write)
  core.py qmp SOCKET CORE WAIT        QMP: wait until vCPU 0 halts in long
                                      mode (WAIT=run) or not (WAIT=none),
                                      stop, dump-guest-memory to CORE, quit
  core.py elf CORE                    "CLASS MACHINE VCPUS" of an ELF core
"""
import json
import socket
import struct
import sys
import time

PARAMS = 0xFF00  # the stub's parameter block (stub.S)


def elf_notes(data):
    """(name, type, desc) of every note of an ELF32 or ELF64 core."""
    is64 = data[4] == 2
    if is64:
        phoff, = struct.unpack_from("<Q", data, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    else:
        phoff, = struct.unpack_from("<I", data, 0x1C)
        phentsize, phnum = struct.unpack_from("<HH", data, 0x2A)
    for i in range(phnum):
        at = phoff + i * phentsize
        if is64:
            ptype, _, off, _, _, size = struct.unpack_from("<IIQQQQ", data, at)
        else:
            ptype, off, _, _, size = struct.unpack_from("<IIIII", data, at)
        if ptype != 4:
            continue
        p = off
        while p + 12 <= off + size:
            namesz, descsz, ntype = struct.unpack_from("<III", data, p)
            d = p + 12 + ((namesz + 3) & ~3)
            yield data[p + 12:p + 12 + namesz].rstrip(b"\0"), ntype, data[d:d + descsz]
            p = d + ((descsz + 3) & ~3)


def params(elf, raw, stub, tables):
    qemu = [d for n, t, d in elf_notes(open(elf, "rb").read()) if n == b"QEMU"][0]
    cr3, cr4 = struct.unpack_from("<QQ", qemu, 392 + 3 * 8)
    gs, = struct.unpack_from("<Q", qemu, 152 + 24 * 4 + 16)
    idt, = struct.unpack_from("<Q", qemu, 152 + 24 * 9 + 16)
    kgs, = struct.unpack_from("<Q", qemu, 432) if len(qemu) >= 440 else (0,)
    with open(raw, "rb") as f:
        f.seek(cr3 & ~0xFFF)
        if f.read(8) != bytes(8):
            sys.exit("the kernel DTB's entry 0 is in use: the stub needs it")
    b = bytearray(open(stub, "rb").read())
    # dtb, gs_base, kernel_gs_base, lstar (unused: QEMU's notes have none),
    # IDTR (limit, base), tables, LA57: stub.S's layout
    la57 = cr4 >> 12 & 1
    struct.pack_into("<QQQQ", b, PARAMS, cr3, gs, kgs, 0)
    struct.pack_into("<HQ", b, PARAMS + 32, 0xFFF, idt)
    struct.pack_into("<QQ", b, PARAMS + 48, int(tables, 0), la57)
    open(stub, "wb").write(b)
    print("cr3=%#x gs=%#x kernel_gs=%#x idt=%#x la57=%d" % (cr3, gs, kgs, idt, la57))


def split(raw, low, high):
    with open(raw, "rb") as f:
        open(low, "wb").write(f.read(0xA0000))
        f.seek(0x100000)
        with open(high, "wb") as h:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                h.write(chunk)


class Qmp:
    def __init__(self, path):
        for _ in range(300):
            try:
                self.s = socket.socket(socket.AF_UNIX)
                self.s.connect(path)
                break
            except OSError:
                time.sleep(0.1)
        else:
            sys.exit("QMP socket %s never appeared" % path)
        self.f = self.s.makefile("rw")
        self.read()
        self.cmd("qmp_capabilities")

    def read(self):
        while True:
            line = self.f.readline()
            if not line:
                sys.exit("QMP closed")
            msg = json.loads(line)
            if "event" not in msg:
                return msg

    def cmd(self, name, **args):
        self.f.write(json.dumps({"execute": name, "arguments": args}) + "\n")
        self.f.flush()
        reply = self.read()
        if "error" in reply:
            sys.exit("QMP %s: %s" % (name, reply["error"]))
        return reply["return"]


def long_mode(regs):
    """EFER.LMA (bit 10) in `info registers` output."""
    for word in regs.split():
        if word.startswith("EFER="):
            return int(word[5:], 16) & 0x400 != 0
    return False


def qmp(path, core, wait):
    q = Qmp(path)
    regs = ""
    for _ in range(300):
        regs = q.cmd("human-monitor-command", **{"command-line": "info registers"})
        if wait == "none" or ("HLT=1" in regs and long_mode(regs)):
            break
        time.sleep(0.1)
    else:
        sys.exit("vCPU 0 never halted in long mode:\n" + regs)
    q.cmd("stop")
    q.cmd("dump-guest-memory", paging=False, protocol="file:" + core)
    try:
        q.cmd("quit")
    except SystemExit:
        pass


def elf(core):
    data = open(core, "rb").read()
    machine, = struct.unpack_from("<H", data, 18)
    vcpus = sum(1 for n, t, d in elf_notes(data) if n == b"QEMU")
    print({1: "ELF32", 2: "ELF64"}[data[4]], {3: "EM_386", 62: "EM_X86_64"}.get(machine, machine),
          vcpus)


cmd = sys.argv[1]
if cmd == "params":
    params(*sys.argv[2:6])
elif cmd == "split":
    split(*sys.argv[2:5])
elif cmd == "qmp":
    qmp(*sys.argv[2:5])
elif cmd == "elf":
    elf(sys.argv[2])
else:
    sys.exit(__doc__)
