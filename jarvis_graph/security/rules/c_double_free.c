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

struct allocator { void (*free)(struct allocator *, void *); };

void member_release_then_free(struct allocator *m, void *r)
{
    /* an allocator's own release function shares libc's name: it is not free() */
    m->free(m, r);
    free(r); // no-fire
}

void struct_member_release_then_free(void *x)
{
    struct { void (*free)(void *); } ops;
    ops.free(x);
    free(x); // no-fire
}

void std_free_twice(void)
{
    char *p = (char *)malloc(16);
    if (p == NULL) return;
    std::free(p);
    free(p); // fire
}

void freed_in_each_arm(int c)
{
    char *p = (char *)malloc(16);
    if (p == NULL) return;
    if (c) {
        free(p);
    } else {
        free(p); // no-fire
    }
}

void freed_in_each_arm_unbraced(int c, int d)
{
    char *p = (char *)malloc(16);
    if (p == NULL) return;
    if (c)
        free(p);
    else if (d)
        free(p); // no-fire
    else
        free(p); // no-fire
}

void freed_in_one_arm_then_again(int c)
{
    char *p = (char *)malloc(16);
    if (p == NULL) return;
    if (c) {
        free(p);
    } else {
        p[0] = 'x';
    }
    free(p); // fire
}
