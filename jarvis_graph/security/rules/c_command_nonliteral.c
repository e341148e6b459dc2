#include <stdio.h>
#include <stdlib.h>

void run_built_command(const char *target)
{
    system(build_command(target)); // fire
}

void open_pipe_from_table(int i)
{
    FILE *p = popen(COMMAND_TABLE[i], "r"); // fire
    pclose(p);
}

void run_literal(void)
{
    system("make all"); // no-fire
}

void run_local(void)
{
    const char *cmd = "date";
    system(cmd); // no-fire
}
