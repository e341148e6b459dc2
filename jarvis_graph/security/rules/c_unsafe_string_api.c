#include <string.h>

void copy_parameter(char *dst, const char *src)
{
    strcpy(dst, src); // fire
}

void append_parameter(char *dst, const char *src)
{
    strcat(dst, src); // fire
}

void copy_literal(char *dst)
{
    strcpy(dst, "ok"); // no-fire
}

void copy_bounded(char *dst, const char *src, size_t n)
{
    strncpy(dst, src, n); // no-fire
}
