#include <stdlib.h>

int grow_from_environment(void)
{
    int n = atoi(getenv("COUNT"));
    int twice = n * 2; // fire
    return twice;
}

void add_past_limit(void)
{
    char c = 127;
    c = c + 1; // fire
}

int grow_checked(void)
{
    int n = atoi(getenv("COUNT"));
    if (n < 1000) {
        int twice = n * 2; // no-fire
        return twice;
    }
    return 0;
}

void add_within_limit(void)
{
    char c = 100;
    c = c + 1; // no-fire
}

void add_under_a_guard_that_excludes_the_limit(void)
{
    int data = 2147483647;
    if (data < 2147483647) {
        int result = data + 1; // no-fire
        printf("%d\n", result);
    }
}
