#include <stdio.h>

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
