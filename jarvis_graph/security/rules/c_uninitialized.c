#include <stdio.h>
#include <stdlib.h>

void print_unset(void)
{
    int value;
    printf("%d\n", value); // fire
}

int sum_unset_array(void)
{
    int a[4];
    a[0] = 1;
    return a[2]; // fire
}

void print_set(void)
{
    int value = 3;
    printf("%d\n", value); // no-fire
}

int read_set_element(void)
{
    int a[4];
    a[0] = 1;
    return a[0]; // no-fire
}

struct node { int x; struct node *next; };

struct node *allocate_its_own_size(void)
{
    struct node *p;
    struct node *q;
    p = malloc(sizeof(*p)); // no-fire
    q = calloc(1, sizeof *q); // no-fire
    if (p && q) p->next = q;
    return p;
}

int measure_a_member(void)
{
    struct node *r;
    return (int)sizeof(r->x); // no-fire
}

int read_unset_pointer(void)
{
    struct node *s;
    return s->x; // fire
}
