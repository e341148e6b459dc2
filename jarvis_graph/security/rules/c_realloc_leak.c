#include <stdlib.h>

char *grow_owned(void)
{
    char *buf = malloc(16);
    if (buf == NULL) return NULL;
    buf = realloc(buf, 64); // fire
    return buf;
}

void grow_member(struct vec *v, size_t n)
{
    v->data = realloc(v->data, n); // fire
}

char *grow_through_temporary(char *buf)
{
    char *bigger = realloc(buf, 64); // no-fire
    if (bigger == NULL) return buf;
    return bigger;
}

char *grow_from_null(void)
{
    char *buf = NULL;
    buf = realloc(buf, 64); // no-fire
    return buf;
}
