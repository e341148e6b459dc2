#include <stdio.h>

void print_parameter(const char *fmt)
{
    printf(fmt); // fire
}

void log_member(FILE *out, struct msg *m)
{
    fprintf(out, m->text); // fire
}

void print_parameter_as_argument(const char *text)
{
    printf("%s", text); // no-fire
}

void print_local_literal(void)
{
    const char *fmt = "%d\n";
    printf(fmt, 3); // no-fire
}
