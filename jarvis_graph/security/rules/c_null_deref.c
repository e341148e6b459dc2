#include <stdio.h>
#include <stddef.h>

void read_null(void)
{
    int *p = NULL;
    printf("%d\n", *p); // fire
}

void write_null(void)
{
    char *s = NULL;
    s[0] = 'a'; // fire
}

void read_checked(void)
{
    int *p = NULL;
    if (p != NULL) {
        printf("%d\n", *p); // no-fire
    }
}

void write_after_set(char *buf)
{
    char *s = NULL;
    s = buf;
    s[0] = 'a'; // no-fire
}
