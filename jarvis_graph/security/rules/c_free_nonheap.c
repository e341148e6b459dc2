#include <stdlib.h>

void free_stack_array(void)
{
    char buf[32];
    char *p = buf;
    free(p); // fire
}

void free_static(void)
{
    static int counter[4];
    int *p = counter;
    free(p); // fire
}

void free_heap(void)
{
    char *p = (char *)malloc(32);
    free(p); // no-fire
}

void free_parameter(char *p)
{
    free(p); // no-fire
}
