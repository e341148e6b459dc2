#include <stdio.h>
#include <string.h>

void memcpy_too_much(void)
{
    char small[10];
    char big[100];
    memset(big, 'A', 99);
    memcpy(small, big, 50); // fire
}

void loop_past_end(void)
{
    int buf[10];
    int i;
    for (i = 0; i < 11; i++) {
        buf[i] = i; // fire
    }
}

void memcpy_fits(void)
{
    char small[10];
    char big[100];
    memset(big, 'A', 99);
    memcpy(small, big, sizeof(small) - 1); // no-fire
}

void loop_to_the_end(void)
{
    int buf[10];
    int i;
    for (i = 0; i < 10; i++) {
        buf[i] = i; // no-fire
    }
}
