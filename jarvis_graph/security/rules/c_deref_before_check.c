#include <stddef.h>

int read_then_check(int *p)
{
    int v = *p;
    if (p == NULL) return -1; // fire
    return v;
}

int member_then_check(struct node *n)
{
    int v = n->value;
    if (!n) return -1; // fire
    return v;
}

int check_then_read(int *p)
{
    if (p == NULL) return -1; // no-fire
    return *p;
}

int check_never_read(int *p)
{
    if (p == NULL) return -1; // no-fire
    return 0;
}
