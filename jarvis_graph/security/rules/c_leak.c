#include <stdlib.h>

int early_return_leak(int flag)
{
    char *p = (char *)malloc(32);
    if (p == NULL) return -1;
    if (flag) {
        return -2; // fire
    }
    free(p);
    return 0;
}

void never_freed(void)
{
    char *p = (char *)malloc(32); // fire
    if (p == NULL) return;
    p[0] = 'a';
}

int freed_on_every_path(int flag)
{
    char *p = (char *)malloc(32); // no-fire
    if (p == NULL) return -1;
    if (flag) {
        free(p);
        return -2; // no-fire
    }
    free(p);
    return 0;
}

char *returned_to_caller(void)
{
    char *p = (char *)malloc(32); // no-fire
    return p;
}
