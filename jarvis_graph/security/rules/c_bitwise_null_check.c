#include <stddef.h>

int first_bitwise(struct node *n)
{
    if ((n != NULL) & (n->value > 0)) return 1; // fire
    return 0;
}

int second_bitwise(struct node *n)
{
    while ((n->next != NULL) & n->next->ok) n = n->next; // fire
    return 0;
}

int logical_and(struct node *n)
{
    if ((n != NULL) && (n->value > 0)) return 1; // no-fire
    return 0;
}

int mask_test(int flags)
{
    if ((flags & 4) != 0) return 1; // no-fire
    return 0;
}
