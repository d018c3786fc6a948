/* SPDX-License-Identifier: GPL-2.0 */
/* svmtrace-dump subcommands: one file each, argv[0] is the subcommand name. */
#ifndef SVMTRACE_DUMP_COMMANDS_H
#define SVMTRACE_DUMP_COMMANDS_H

#include <stdio.h>

int cmd_inspect(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_calltree(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* Print the one-line usage of every subcommand to @f. */
void usage_all(FILE *f);

#endif
