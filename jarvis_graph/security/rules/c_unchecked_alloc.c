#include <stdlib.h>

void write_unchecked(void)
{
    int *p = (int *)malloc(4 * sizeof(int));
    p[0] = 1; // fire
    free(p);
}

void write_unchecked_calloc(void)
{
    char *s = (char *)calloc(8, 1);
    *s = 'a'; // fire
    free(s);
}

void write_checked(void)
{
    int *p = (int *)malloc(4 * sizeof(int));
    if (p == NULL) return;
    p[0] = 1; // no-fire
    free(p);
}

void write_stack(void)
{
    int a[4];
    int *p = a;
    p[0] = 1; // no-fire
}
