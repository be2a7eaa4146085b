/* cmd/cmd.h - the subcommands of the tessera binary. Each takes argc/argv after the
 * subcommand name and returns the process exit status. */
#ifndef CMD_H
#define CMD_H

int cmd_replay(int argc, char **argv);
int cmd_check(int argc, char **argv);

#endif
