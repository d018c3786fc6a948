// SPDX-License-Identifier: GPL-2.0
/*
 * svmtrace-dump: offline analysis of v5 trace files.  One subcommand per
 * file (cmd_*.c); this file only dispatches.
 */
#include <stdio.h>
#include <string.h>

#include "common/cli.h"
#include "svmtrace-dump/commands.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis;
} commands[] = {
	{ "inspect", cmd_inspect, "inspect [--allow-truncated] FILE..." },
	{ "dump", cmd_dump,
	  "dump [--regs] [--format csv|jsonl] [--cr3 X] [--rip-range A-B] [--seq A-B]\n"
	  "       [--limit N] [--allow-truncated] [--symbols [DIR]] [--no-symbols]\n"
	  "       [--capture FILE] [--disasm] [--code FILE] FILE [LIMIT]\n"
	  "  dump --merge [options] FILE..." },
	{ "stats", cmd_stats,
	  "stats [--top N] [--allow-truncated] [--symbols [DIR]] [--no-symbols]\n"
	  "       [--capture FILE] FILE..." },
	{ "calltree", cmd_calltree,
	  "calltree [--depth N] [--min-insns N] [--symbols [DIR]] [--code FILE] FILE..." },
	{ "export", cmd_export,
	  "export --format drcov|tenet|x64dbg [--out FILE] [--capture FILE] [--code FILE]\n"
	  "       FILE..." },
	{ "report", cmd_report, "report [--out FILE] [--top N] [--capture FILE] FILE..." },
	{ "pack", cmd_pack, "pack [--cpu N] [--anchor-interval N] [--raw] [--lz4-level L] IN OUT" },
};

void usage_all(FILE *f)
{
	fputs("usage: svmtrace-dump COMMAND [ARGS]\n"
	      "Analyse svmtrace v5 trace files (svmtrace_trace_cpu{N}.bin).\n\n",
	      f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %s\n", commands[i].synopsis);
	fputs("\nsvmtrace-dump COMMAND --help describes one command; man svmtrace-dump(1).\n", f);
}

int main(int argc, char **argv)
{
	cli_progname = "svmtrace-dump";
	if (argc < 2) {
		usage_all(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage_all(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	warn("unknown command '%s'", argv[1]);
	usage_all(stderr);
	return 2;
}
