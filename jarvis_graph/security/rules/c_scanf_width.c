#include <stdio.h>

void scanf_string_no_width(void)
{
    char name[32];
    if (scanf("%s", name) != 1) return; // fire
}

void sscanf_set_no_width(const char *line)
{
    char word[8];
    if (sscanf(line, "%[a-z]", word) != 1) return; // fire
}

void scanf_with_width(void)
{
    char name[32];
    if (scanf("%31s", name) != 1) return; // no-fire
}

void scanf_number(void)
{
    int n;
    if (scanf("%d", &n) != 1) return; // no-fire
}
