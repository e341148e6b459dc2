#include <string.h>

void memcpy_reads_past_source(void)
{
    char src[8] = "abcdefg";
    char dst[64];
    memcpy(dst, src, 32); // fire
}

int read_past_end(void)
{
    int table[4] = {1, 2, 3, 4};
    return table[4]; // fire
}

void memcpy_within_source(void)
{
    char src[8] = "abcdefg";
    char dst[64];
    memcpy(dst, src, 8); // no-fire
}

int read_last(void)
{
    int table[4] = {1, 2, 3, 4};
    return table[3]; // no-fire
}
