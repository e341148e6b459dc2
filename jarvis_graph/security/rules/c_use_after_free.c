#include <stdio.h>
#include <stdlib.h>

void read_after_free(void)
{
    int *p = (int *)malloc(4 * sizeof(int));
    if (p == NULL) return;
    p[0] = 1;
    free(p);
    printf("%d\n", p[0]); // fire
}

void write_after_free(void)
{
    char *s = (char *)malloc(8);
    if (s == NULL) return;
    free(s);
    *s = 'a'; // fire
}

void read_before_free(void)
{
    int *p = (int *)malloc(4 * sizeof(int));
    if (p == NULL) return;
    p[0] = 1;
    printf("%d\n", p[0]); // no-fire
    free(p);
}

void reallocated_after_free(void)
{
    char *s = (char *)malloc(8);
    if (s == NULL) return;
    free(s);
    s = (char *)malloc(8);
    if (s == NULL) return;
    *s = 'a'; // no-fire
    free(s);
}
