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

void input_in_one_arm(int from_user)
{
    char cmd[128] = "ls ";
    if (from_user) {
        if (fgets(cmd + 3, 100, stdin) == NULL) return;
    } else {
        strcat(cmd, "-l");
    }
    system(cmd); // fire
}

void fixed_in_every_arm(int wide)
{
    char cmd[128] = "ls ";
    if (wide) {
        strcat(cmd, "-l");
    } else {
        strcat(cmd, "-1");
    }
    system(cmd); // no-fire
}
