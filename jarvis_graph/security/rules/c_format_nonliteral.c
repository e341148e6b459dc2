#include <stdio.h>
#include <stdlib.h>

void print_environment(void)
{
    char *fmt = getenv("FMT");
    printf(fmt); // fire
}

void log_read_line(FILE *log)
{
    char line[64];
    if (fgets(line, sizeof line, stdin) == NULL) return;
    fprintf(log, line); // fire
}

void print_environment_as_argument(void)
{
    char *text = getenv("TEXT");
    printf("%s", text); // no-fire
}

void print_literal(const char *name)
{
    printf("hello %s\n", name); // no-fire
}
