#include <stdlib.h>
#include <unistd.h>

void run_environment(void)
{
    char *cmd = getenv("CMD");
    system(cmd); // fire
}

void exec_input(void)
{
    char arg[64];
    if (fgets(arg, sizeof arg, stdin) == NULL) return;
    execlp("ls", "ls", arg, NULL); // fire
}

void run_fixed(void)
{
    system("ls -l"); // no-fire
}

void run_environment_not_as_command(void)
{
    char *dir = getenv("HOME");
    system("ls"); // no-fire
    puts(dir);
}
