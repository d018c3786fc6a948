# l1-gdbstep.py: gdb's side of l1-gdbstep.sh (gdb -batch -nx -x), in L1.
# Connects to QEMU's gdbstub at $GDBSTEP_SOCKET, runs `stepi
# $GDBSTEP_STEPS` between two snapshots of L1's clocks and prints, one per
# line: "steps N", "ns NS" (CLOCK_MONOTONIC: instructions under -icount),
# then CPU time in USER_HZ ticks: "all_ticks" (L1's /proc/stat, all but
# idle and iowait), "idle_ticks" (idle and iowait: under -icount an idle L1
# jumps its clock to the next timer, time that is no instructions),
# "user_ticks" (user and nice), "gdb_ticks" (this gdb process),
# "qemu_ticks" (QEMU's process, $GDBSTEP_QEMU_PID: all its threads,
# KVM_RUN included); last "ecx 0x..." (steploop's counter).
import os
import time

import gdb


def process_ticks(pid):
    with open("/proc/%s/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def snapshot():
    with open("/proc/stat") as f:
        cpu = [int(x) for x in f.readline().split()[1:8]]
    return {
        "ns": time.clock_gettime_ns(time.CLOCK_MONOTONIC),
        "all_ticks": sum(cpu) - cpu[3] - cpu[4],
        "idle_ticks": cpu[3] + cpu[4],
        "user_ticks": cpu[0] + cpu[1],
        "gdb_ticks": process_ticks("self"),
        "qemu_ticks": process_ticks(os.environ["GDBSTEP_QEMU_PID"]),
    }


steps = int(os.environ["GDBSTEP_STEPS"])
gdb.execute("target remote " + os.environ["GDBSTEP_SOCKET"])
before = snapshot()
gdb.execute("stepi %d" % steps)
after = snapshot()
print("steps %d" % steps)
for key in before:
    print("%s %d" % (key, after[key] - before[key]))
print("ecx 0x%x" % (int(gdb.parse_and_eval("$ecx")) & 0xFFFFFFFF))
