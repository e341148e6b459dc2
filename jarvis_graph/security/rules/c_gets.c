#include <stdio.h>

void gets_into_array(void)
{
    char buf[16];
    gets(buf); // fire
}

void gets_into_parameter(char *out)
{
    gets(out); // fire
}

void fgets_is_bounded(void)
{
    char buf[16];
    fgets(buf, sizeof buf, stdin); // no-fire
}

void name_that_only_contains_gets(void)
{
    int fgets_calls = 0; // no-fire
    printf("%d\n", fgets_calls);
}
