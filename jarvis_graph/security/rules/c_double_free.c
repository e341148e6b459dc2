#include <stdlib.h>

void twice(void)
{
    char *p = (char *)malloc(16);
    if (p == NULL) return;
    free(p);
    free(p); // fire
}

void twice_through_alias(void)
{
    char *p = (char *)malloc(16);
    char *q;
    if (p == NULL) return;
    free(p);
    q = p;
    free(q); // fire
}

void once_then_null(void)
{
    char *p = (char *)malloc(16);
    if (p == NULL) return;
    free(p);
    p = NULL;
    free(p); // no-fire
}

void once_each(void)
{
    char *p = (char *)malloc(16);
    char *q = (char *)malloc(16);
    free(p);
    free(q); // no-fire
}
